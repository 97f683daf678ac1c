// Option tables (include/blr/core/option_table.hpp): ranges, parsing, conversion and lookup.
#include "blr/core/option_table.hpp"

#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <system_error>

namespace blr {

std::string_view type_name(OptionType type) {
  switch (type) {
    case OptionType::kNumber: return "number";
    case OptionType::kInteger: return "integer";
    case OptionType::kSwitch: return "switch";
    case OptionType::kChoice: return "choice";
  }
  return "?";
}

namespace {

// "a number", "an integer": the type with its article, for sentences.
std::string a_type(OptionType type) {
  return std::string(type == OptionType::kInteger ? "an " : "a ") + std::string(type_name(type));
}

}  // namespace

bool Range::contains(double v) const {
  if (std::isnan(v)) return false;
  if (std::isinf(v) && !infinite_ok) return false;
  const bool low = lo_open ? v > lo : v >= lo;
  const bool high = hi_open ? v < hi : v <= hi;
  return low && high;
}

std::string Range::describe() const {
  const bool lo_inf = std::isinf(lo), hi_inf = std::isinf(hi);
  if (lo_inf && hi_inf) return "any finite number";
  if (hi_inf && !infinite_ok) return fmt::format("{} {}", lo_open ? ">" : "≥", lo);
  if (lo_inf) return fmt::format("{} {}", hi_open ? "<" : "≤", hi);
  return fmt::format("in {}{}, {}{}", lo_open ? "(" : "[", lo, hi_inf ? "+inf" : fmt::format("{}", hi),
                     hi_open ? ")" : "]");
}

std::string OptionInfo::format(const OptionValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<V, std::string>) {
          return v;
        } else {
          return fmt::format("{}", v);
        }
      },
      value);
}

namespace {
thread_local OptionSpelling current_spelling = OptionSpelling::kKey;
}  // namespace

OptionSpellingScope::OptionSpellingScope(OptionSpelling spelling) : previous_(current_spelling) {
  current_spelling = spelling;
}
OptionSpellingScope::~OptionSpellingScope() { current_spelling = previous_; }

std::string spelled(std::string_view key) {
  std::string out(key);
  if (current_spelling == OptionSpelling::kKey) return out;
  std::replace(out.begin(), out.end(), '_', '-');
  return "--" + out;
}

OptionValue OptionInfo::coerce(const OptionValue& value) const {
  auto fail = [&] {
    // Text where a number or switch belongs is named as text: "got 0.1" would hide the quotes
    // (Python's lr="0.1", a JSON "0.1").
    const auto* text = std::get_if<std::string>(&value);
    return Error(fmt::format("Option '{}' takes {}{}; got {}.", spelled(key), a_type(type),
                             type == OptionType::kChoice
                                 ? fmt::format(" (one of {})", fmt::join(choices, ", "))
                                 : std::string(),
                             text != nullptr && type != OptionType::kChoice
                                 ? fmt::format("the text '{}'", *text)
                                 : format(value)));
  };
  switch (type) {
    case OptionType::kNumber:
      if (const auto* d = std::get_if<double>(&value)) return *d;
      if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
      throw fail();
    case OptionType::kInteger:
      if (const auto* i = std::get_if<int64_t>(&value)) return *i;
      if (const auto* d = std::get_if<double>(&value)) {
        // A number without fraction that an int64 holds exactly (JSON writes 5 as 5.0 at times).
        if (std::isfinite(*d) && std::floor(*d) == *d && std::abs(*d) <= 9007199254740992.0) {
          return static_cast<int64_t>(*d);
        }
      }
      throw fail();
    case OptionType::kSwitch:
      if (const auto* b = std::get_if<bool>(&value)) return *b;
      if (const auto* i = std::get_if<int64_t>(&value); i && (*i == 0 || *i == 1)) return *i == 1;
      if (const auto* d = std::get_if<double>(&value); d && (*d == 0.0 || *d == 1.0)) {
        return *d == 1.0;
      }
      throw fail();
    case OptionType::kChoice:
      if (const auto* s = std::get_if<std::string>(&value)) {
        if (std::find(choices.begin(), choices.end(), *s) != choices.end()) return *s;
        for (const auto& [old, current] : former_choices)
          if (*s == old) return current;
      }
      // Configurations of format 1 wrote a choice as its index (0 = the first name).
      if (const auto* d = std::get_if<double>(&value);
          d && *d >= 0 && std::floor(*d) == *d && *d < static_cast<double>(choices.size())) {
        return choices[static_cast<std::size_t>(*d)];
      }
      throw fail();
  }
  throw fail();
}

OptionValue OptionInfo::parse(const std::string& text) const {
  auto fail = [&] {
    return Error(fmt::format("Option '{}' takes {}{}; got '{}'.", spelled(key), a_type(type),
                             type == OptionType::kChoice
                                 ? fmt::format(" (one of {})", fmt::join(choices, ", "))
                                 : std::string(),
                             text));
  };
  switch (type) {
    case OptionType::kNumber: {
      if (text == "inf" || text == "+inf") return std::numeric_limits<double>::infinity();
      double v = 0.0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v,
                                             std::chars_format::general);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) throw fail();
      return v;
    }
    case OptionType::kInteger: {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) throw fail();
      return v;
    }
    case OptionType::kSwitch:
      if (text == "true" || text == "1" || text == "on" || text == "yes") return true;
      if (text == "false" || text == "0" || text == "off" || text == "no") return false;
      throw fail();
    case OptionType::kChoice:
      return coerce(text);
  }
  throw fail();
}

void OptionInfo::check(const OptionValue& value) const {
  double v = 0.0;
  if (const auto* d = std::get_if<double>(&value)) {
    v = *d;
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    v = static_cast<double>(*i);
  } else {
    return;  // switches and (already coerced) choices have no range
  }
  if (!range.contains(v)) {
    throw Error(
        fmt::format("Option '{}' must be {}; got {}.", spelled(key), range.describe(), format(value)));
  }
}

const OptionInfo* OptionSchema::find(std::string_view key) const {
  for (const auto& o : options()) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

std::vector<std::string> OptionSchema::keys() const {
  std::vector<std::string> out;
  for (const auto& o : options()) out.push_back(o.key);
  return out;
}

const OptionInfo& OptionSchema::at(std::string_view key, std::string_view owner) const {
  if (const OptionInfo* o = find(key)) return *o;
  const std::string suggestion = closest_match(key, keys());
  throw Error(fmt::format("{} has no option '{}'{}; its options are {}.", owner, key,
                          suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion),
                          fmt::join(keys(), ", ")));
}

namespace {

// Edits that turn `a` into `b`: insertions, deletions, substitutions and swaps of two neighbouring
// letters ("trian" → "train" is one slip, as people type), each counting one (optimal string
// alignment distance).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1,
                         previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(row);
  }
  return previous[b.size()];
}

}  // namespace

std::string closest_match(std::string_view key, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // Close enough to be a slip: at most a third of the longer word, and at least one letter.
  const std::size_t limit = std::max<std::size_t>(1, std::max(key.size(), best.size()) / 3);
  return best_distance <= limit ? best : std::string();
}

nlohmann::json options_to_json(const OptionValues& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : values) {
    std::visit(
        [&, k = key](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, double>) {
            if (std::isfinite(v)) {
              out[k] = v;
            } else {
              out[k] = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
            }
          } else {
            out[k] = v;
          }
        },
        value);
  }
  return out;
}

OptionValues options_from_json(const nlohmann::json& object) {
  check(object.is_object(), "The options must be a JSON object of key → value.");
  OptionValues out;
  for (const auto& [key, v] : object.items()) {
    if (v.is_boolean()) {
      out.emplace_back(key, v.get<bool>());
    } else if (v.is_number_integer()) {
      out.emplace_back(key, v.get<int64_t>());
    } else if (v.is_number()) {
      out.emplace_back(key, v.get<double>());
    } else if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "inf" || s == "-inf" || s == "nan") {
        out.emplace_back(key, s == "nan" ? std::nan("") : (s == "inf" ? 1.0 : -1.0) *
                                                             std::numeric_limits<double>::infinity());
      } else {
        out.emplace_back(key, s);
      }
    } else {
      throw Error(fmt::format("Option '{}' has a value of an unsupported JSON type ({}).", key,
                              v.type_name()));
    }
  }
  return out;
}

std::string OptionInfo::default_text(const OptionValue& value) const {
  return unset_by_default && value == default_value ? "not set" : format(value);
}

OptionValue preset_value(const OptionValues& preset, const OptionInfo& o) {
  for (const auto& [key, value] : preset)
    if (key == o.key) return value;
  return o.default_value;
}

void GivenOptions::require_taken(
    std::string_view run, const std::function<std::string(const std::string&)>& where) const {
  for (const auto& [key, value] : values_) {
    if (std::find(taken_.begin(), taken_.end(), key) != taken_.end()) continue;
    const std::string places = where ? where(key) : std::string();
    if (!places.empty()) {
      throw Error(fmt::format("Option '{}' does not apply to {}; it is an option of {}.",
                              spelled(key), run, places));
    }
    const std::string close = closest_match(key, known_);
    throw Error(fmt::format("Unknown option '{}' for {}{}.", spelled(key), run,
                            close.empty() ? "" : fmt::format(" (did you mean '{}'?)", spelled(close))));
  }
}

}  // namespace blr
