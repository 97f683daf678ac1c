// Options declared once: a table of key, member, allowed range and help text per option, the
// default being the member's initialiser.
//
//   struct IvonOptions {
//     double lr = 0.1;
//     ...
//     static const OptionTable<IvonOptions>& table();
//   };
//   ... OptionTable<IvonOptions>("IVON").number("lr", &IvonOptions::lr, Range::at_least(0), "learning rate α")
//
// From the table come: validation with one-sentence errors naming the option and its range;
// typed reading and writing by key (the CLI's --<optimizer>-<option> flags, the JSON of runs and
// checkpoints, Python keyword arguments); and the documentation of every option. A table can
// extend the table of a base struct (the LibTorch optimizers extend the core presets' options).
//
// Keys are snake_case (the Python ivon package's names: ess, hess_init, mc_samples, beta1, beta2,
// weight_decay); the CLI spells them with dashes (--ivon-hess-init).
#pragma once

#include <fmt/format.h>
#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "blr/core/error.hpp"

namespace blr {

/// The value of one option: a number, a whole number, a switch or a name from a fixed list.
using OptionValue = std::variant<double, int64_t, bool, std::string>;

enum class OptionType { kNumber, kInteger, kSwitch, kChoice };

/// "number", "integer", "switch" or "choice".
std::string_view type_name(OptionType type);

/// Allowed values of a number or an integer: an interval, closed or open at each end. Infinite
/// values are refused unless the interval reaches them and `infinite_ok` is set.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;
  bool infinite_ok = false;

  static Range any() { return {}; }
  static Range at_least(double lo) { return {lo, std::numeric_limits<double>::infinity()}; }
  static Range positive() { return {0.0, std::numeric_limits<double>::infinity(), true}; }
  /// (0, +∞], +∞ allowed (e.g. a clip radius where +∞ means none).
  static Range positive_or_infinite() {
    return {0.0, std::numeric_limits<double>::infinity(), true, false, true};
  }
  static Range between(double lo, double hi, bool lo_open = false, bool hi_open = false) {
    return {lo, hi, lo_open, hi_open};
  }
  bool contains(double v) const;
  /// "in [0, 1)", "≥ 0", "> 0", "in (0, +inf]", "any finite number".
  std::string describe() const;
};

/// Whether a per-parameter-group setting makes sense (LibTorch optimizers).
enum class OptionScope { kGroup, kOptimizer };

/// Where a value comes from when the user gives none and the member's initialiser is a
/// placeholder: the training-set size (ess), the run's seed or the run's minibatch size (AdaBayes'
/// B). Only the CLI and the registry use it.
enum class DefaultFrom { kInitialiser, kTrainingSetSize, kRunSeed, kBatchSize };

/// How messages spell an option's key: as the table does (snake_case, Python's keywords and the
/// JSON's), or as a command-line flag ("--max-iterations") where a command maps every key of a
/// table to a flag of that name (`blr infer`). Set for the current thread by a scope.
enum class OptionSpelling { kKey, kFlag };
class OptionSpellingScope {
 public:
  explicit OptionSpellingScope(OptionSpelling spelling);
  ~OptionSpellingScope();
  OptionSpellingScope(const OptionSpellingScope&) = delete;
  OptionSpellingScope& operator=(const OptionSpellingScope&) = delete;

 private:
  OptionSpelling previous_;
};
/// `key` as the current scope spells it in messages.
std::string spelled(std::string_view key);

/// The description of one option, independent of the struct it lives in.
struct OptionInfo {
  std::string key;
  OptionType type = OptionType::kNumber;
  OptionValue default_value;
  Range range;                       ///< numbers and integers
  std::vector<std::string> choices;  ///< choices
  std::string help;
  OptionScope scope = OptionScope::kGroup;
  DefaultFrom default_from = DefaultFrom::kInitialiser;
  bool required = false;  ///< the initialiser is a placeholder: the value must be given
  /// The initialiser means "not set" and lies outside the range (EM's fixed_iterations: 0, no
  /// fixed count): validation accepts it, a value given must lie in the range (so no in-range
  /// value doubles as "off", the reliability audit's D12).
  bool unset_by_default = false;
  /// Earlier spellings of choices, (old, current): read as the current one (checkpoints and
  /// scripts written before a choice was renamed to the house spelling), never written or listed.
  std::vector<std::pair<std::string, std::string>> former_choices = {};

  /// The value as text ("0.1", "1", "true", "price").
  static std::string format(const OptionValue& value);
  /// `value` converted to this option's type (an integer for a number, 0/1 for a switch, a
  /// number without fraction for an integer); throws blr::Error naming the option otherwise.
  OptionValue coerce(const OptionValue& value) const;
  /// Parses text for this option ("1e-3", "5", "true"/"false"/"1"/"0", a choice name).
  OptionValue parse(const std::string& text) const;
  /// Throws blr::Error unless `value` (of this option's type) is allowed.
  void check(const OptionValue& value) const;
  /// A default as documentation and help show it: format(value), or "not set" for the
  /// initialiser of an option unset by default.
  std::string default_text(const OptionValue& value) const;
};


/// Options as key → value (only the ones given; the rest take their defaults).
using OptionValues = std::vector<std::pair<std::string, OptionValue>>;

/// The value `preset` gives option `o`, else the option's default (a method that starts from
/// other values than its table's initialisers: inference/methods.hpp).
OptionValue preset_value(const OptionValues& preset, const OptionInfo& o);

/// Options as a JSON object with typed values (numbers, integers, booleans, names); a number
/// that is not finite is written as the string "inf", "-inf" or "nan" (JSON has none).
nlohmann::json options_to_json(const OptionValues& values);
/// The inverse of options_to_json (types are checked against a table when the values are used).
OptionValues options_from_json(const nlohmann::json& object);

/// The type-erased view of a table: enough for the CLI, JSON, docs and bindings.
class OptionSchema {
 public:
  virtual ~OptionSchema() = default;
  virtual const std::vector<OptionInfo>& options() const = 0;
  /// Who the options belong to, as messages name it ("IVON").
  virtual const std::string& owner() const = 0;
  /// The option with this key, or nullptr.
  const OptionInfo* find(std::string_view key) const;
  /// Throws blr::Error naming `owner` and listing the keys (with a "did you mean" suggestion).
  const OptionInfo& at(std::string_view key, std::string_view owner) const;
  std::vector<std::string> keys() const;
};

/// The key among `candidates` closest to `key` by edit distance, if it is close enough to be a
/// likely misspelling (empty otherwise).
std::string closest_match(std::string_view key, const std::vector<std::string>& candidates);

template <class O>
class OptionTable final : public OptionSchema {
 public:
  /// `owner` names the options in messages ("IVON").
  explicit OptionTable(std::string owner) : owner_(std::move(owner)) {}
  const std::string& owner() const override { return owner_; }

  using Getter = std::function<OptionValue(const O&)>;
  using Setter = std::function<void(O&, const OptionValue&)>;

  /// A real-valued option.
  OptionTable& number(std::string key, double O::*member, Range range, std::string help,
                      OptionScope scope = OptionScope::kGroup) {
    return add({std::move(key), OptionType::kNumber, {}, range, {}, std::move(help), scope},
               [member](const O& o) { return OptionValue(o.*member); },
               [member](O& o, const OptionValue& v) { o.*member = std::get<double>(v); });
  }

  /// A whole-number option (any integral member type).
  template <class I>
    requires std::is_integral_v<I> && (!std::is_same_v<I, bool>)
  OptionTable& integer(std::string key, I O::*member, Range range, std::string help,
                       OptionScope scope = OptionScope::kGroup) {
    return add({std::move(key), OptionType::kInteger, {}, range, {}, std::move(help), scope},
               [member](const O& o) { return OptionValue(static_cast<int64_t>(o.*member)); },
               [member](O& o, const OptionValue& v) {
                 o.*member = static_cast<I>(std::get<int64_t>(v));
               });
  }

  /// An on/off option.
  OptionTable& flag(std::string key, bool O::*member, std::string help,
                    OptionScope scope = OptionScope::kOptimizer) {
    return add({std::move(key), OptionType::kSwitch, {}, {}, {}, std::move(help), scope},
               [member](const O& o) { return OptionValue(o.*member); },
               [member](O& o, const OptionValue& v) { o.*member = std::get<bool>(v); });
  }

  /// An option that names one of a fixed list of values of an enumeration.
  template <class E>
  OptionTable& choice(std::string key, E O::*member, std::vector<std::pair<std::string, E>> names,
                      std::string help, OptionScope scope = OptionScope::kOptimizer) {
    OptionInfo info{std::move(key), OptionType::kChoice, {}, {}, {}, std::move(help), scope};
    for (const auto& [name, value] : names) info.choices.push_back(name);
    return add(
        std::move(info),
        [member, names](const O& o) {
          for (const auto& [name, value] : names) {
            if (o.*member == value) return OptionValue(name);
          }
          throw Error("Internal: an enumeration value has no name in its option table.");
        },
        [member, names](O& o, const OptionValue& v) {
          for (const auto& [name, value] : names) {
            if (std::get<std::string>(v) == name) o.*member = value;
          }
        });
  }

  /// The last option (a choice) was spelled `old` where it now says `current`: `old` is still
  /// read, as `current` (OptionInfo::former_choices).
  OptionTable& formerly(std::string old, std::string current) {
    auto& info = rows_.back().info;
    if (std::find(info.choices.begin(), info.choices.end(), current) == info.choices.end())
      throw Error(fmt::format("Internal: '{}' is no choice of option '{}'.", current, info.key));
    info.former_choices.emplace_back(std::move(old), std::move(current));
    infos_.back() = info;
    return *this;
  }

  /// Marks the last option added: its value must be given (the initialiser is a placeholder), or
  /// comes from the training-set size or the run seed when the CLI/registry supplies one.
  OptionTable& required(DefaultFrom from = DefaultFrom::kInitialiser) {
    rows_.back().info.required = true;
    rows_.back().info.default_from = from;
    infos_.back() = rows_.back().info;
    return *this;
  }
  /// Marks the last option added as taking its default from `from` (e.g. the run seed).
  /// The last option's initialiser means "not set" (OptionInfo::unset_by_default).
  OptionTable& unset_by_default() {
    rows_.back().info.unset_by_default = true;
    infos_.back() = rows_.back().info;
    return *this;
  }
  OptionTable& default_from(DefaultFrom from) {
    rows_.back().info.default_from = from;
    infos_.back() = rows_.back().info;
    return *this;
  }

  /// Every row of a base struct's table but those in `except`, in front of this table's own.
  template <class Base>
    requires std::is_base_of_v<Base, O>
  OptionTable& inherit(const OptionTable<Base>& base, std::vector<std::string> except = {}) {
    for (const auto& row : base.rows()) {
      if (std::find(except.begin(), except.end(), row.info.key) != except.end()) continue;
      auto get = row.get;
      auto set = row.set;
      add(row.info, [get](const O& o) { return get(static_cast<const Base&>(o)); },
          [set](O& o, const OptionValue& v) { set(static_cast<Base&>(o), v); });
    }
    return *this;
  }

  const std::vector<OptionInfo>& options() const override { return infos_; }

  OptionValue get(const O& o, std::string_view key) const { return row(key).get(o); }

  /// Sets one option, converting the value to the option's type and checking its range.
  void set(O& o, std::string_view key, const OptionValue& value) const {
    const Row& r = row(key);
    const OptionValue v = r.info.coerce(value);
    r.info.check(v);
    r.set(o, v);
  }

  /// Sets every given option (unknown keys are refused, with a suggestion).
  void apply(O& o, const OptionValues& values) const {
    for (const auto& [key, value] : values) set(o, key, value);
  }

  /// Option `key`'s value in `o` (a choice as its name); an unknown key is refused in a sentence.
  OptionValue value(const O& o, std::string_view key) const { return row(key).get(o); }

  /// Every option's value.
  OptionValues values(const O& o) const {
    OptionValues out;
    for (const auto& r : rows_) out.emplace_back(r.info.key, r.get(o));
    return out;
  }

  /// Checks every option of `o`; throws blr::Error with a sentence naming the first bad one.
  void validate(const O& o) const {
    for (const auto& r : rows_) {
      const OptionValue v = r.get(o);
      if (r.info.required && v == r.info.default_value) {
        throw Error(fmt::format("{} needs the option '{}' ({}).", owner_, r.info.key, r.info.help));
      }
      if (r.info.unset_by_default && v == r.info.default_value) continue;
      r.info.check(v);
    }
  }

  struct Row {
    OptionInfo info;
    Getter get;
    Setter set;
  };
  const std::vector<Row>& rows() const { return rows_; }

 private:
  OptionTable& add(OptionInfo info, Getter get, Setter set) {
    for (const auto& r : rows_) {
      check(r.info.key != info.key,
            fmt::format("Internal: option '{}' is declared twice in one table.", info.key));
    }
    info.default_value = get(O{});
    rows_.push_back({info, std::move(get), std::move(set)});
    infos_.push_back(std::move(info));
    return *this;
  }

  const Row& row(std::string_view key) const {
    at(key, owner_);  // throws the sentence with suggestions for an unknown key
    for (const auto& r : rows_) {
      if (r.info.key == key) return r;
    }
    throw Error("Internal: option lookup.");
  }

  std::string owner_;
  std::vector<Row> rows_;
  std::vector<OptionInfo> infos_;
};

/// Which of a table's keys a GivenOptions::apply takes: all of them (the default), only those
/// listed, or all but those listed (CVI's keys but `family`, which glm's request spells).
struct KeySelection {
  std::vector<std::string> only = {};    ///< empty: every key …
  std::vector<std::string> except = {};  ///< … but these
  static KeySelection only_these(std::vector<std::string> keys) { return {std::move(keys), {}}; }
  static KeySelection all_but(std::vector<std::string> keys) { return {{}, std::move(keys)}; }
  bool takes(std::string_view key) const {
    const auto listed = [&](const std::vector<std::string>& keys) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    return (only.empty() || listed(only)) && !listed(except);
  }
};

/// Options given by key for a run that uses several tables (a CLI command's flags, a Python
/// function's keywords): each table the run uses takes the keys it has, and a key that no table
/// took is refused in one sentence naming the run and where the key applies, never ignored.
///
///   GivenOptions given(values);
///   given.apply(LaplaceOptions::table(), laplace);            // rho, max_iterations, tolerance
///   given.apply(PredictiveOptions::table(), predictive);
///   given.require_taken("blr infer logistic --method laplace", where);
class GivenOptions {
 public:
  GivenOptions() = default;
  explicit GivenOptions(OptionValues values) : values_(std::move(values)) {}
  const OptionValues& values() const { return values_; }
  /// Gives `key` (again: the later value replaces the earlier).
  void give(const std::string& key, OptionValue value) {
    for (auto& [k, v] : values_)
      if (k == key) {
        v = std::move(value);
        return;
      }
    values_.emplace_back(key, std::move(value));
  }
  bool given(std::string_view key) const {
    return std::any_of(values_.begin(), values_.end(), [&](const auto& v) { return v.first == key; });
  }
  /// Sets every key given that `table` has (and `keys` selects) on `target`, converted and
  /// checked by this table, and marks it taken.
  template <class O>
  void apply(const OptionTable<O>& table, O& target, const KeySelection& keys = {}) const {
    for (const auto& [key, value] : values_) {
      if (table.find(key) == nullptr || !keys.takes(key)) continue;
      table.set(target, key, value);
      taken_.push_back(key);
    }
    for (auto& key : table.keys()) known_.push_back(std::move(key));
  }
  /// Throws for the first key given that no `apply` took: "Option 'x' does not apply to <run>;
  /// it is an option of <where(x)>." (`where` lists the methods whose tables have it, or is empty:
  /// then the closest key of the tables applied is suggested.)
  void require_taken(std::string_view run, const std::function<std::string(const std::string&)>& where) const;

 private:
  OptionValues values_;
  mutable std::vector<std::string> taken_;
  mutable std::vector<std::string> known_;  ///< the keys of the tables applied (suggestions)
};

/// Validates `o` with its table (O::table()), then with its own cross-option checks
/// (o.check_consistency(), where the struct has one).
template <class O>
void validate_options(const O& o) {
  O::table().validate(o);
  if constexpr (requires { o.check_consistency(); }) o.check_consistency();
}

}  // namespace blr
