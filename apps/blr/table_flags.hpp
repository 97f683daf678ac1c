// Flags generated from option tables (core/option_table.hpp), as `blr train`'s --<optimizer>-<key>
// are from the optimizers' tables (torch/cli.hpp): `blr infer` and `blr sensitivity` get one flag
// per distinct key of the inference methods' tables (inference/methods.hpp), spelled
// --key-with-dashes, so that the CLI, Python's keywords and the JSON share one name per option.
//
//   --max-iterations INT   ...; Newton steps at most; ... (default 100: glm laplace); iterations
//                          at most; ... (default 1000: glm cvi, gpc cvi); ...
//
// A key several methods share is one flag. Its value is parsed and range-checked by the table of
// the method that runs (`apply`), which the runner names; a flag that no table of the run takes is
// refused in one sentence naming where it applies (`require_taken`), never silently ignored.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "blr/core/option_table.hpp"

namespace CLI {
class App;
}
namespace blr::inference {
struct InferenceMethod;
}

namespace blr::cli {

/// A table whose keys become flags: a label for the help ("glm laplace"), the table, and the
/// values its method starts from where they differ from the table's initialisers.
struct FlagSource {
  std::string label;
  const OptionSchema* schema = nullptr;
  OptionValues preset = {};
  /// The defaults' text where one value does not say it (a shared table's per-method presets,
  /// inference::SharedOptions::default_text); empty: the preset's or the table's value.
  std::function<std::string(const OptionInfo&)> default_text = {};
};

/// The inference registry's tables as flag sources (inference/methods.hpp): every method that
/// `keep` accepts and has a table, labelled "glm laplace" with its preset, then the shared tables
/// named in `shared` ("predictive", "sensitivity", "hyperparameters"), each with its per-method
/// default text (SharedOptions::default_text).
std::vector<FlagSource> inference_flag_sources(
    const std::function<bool(const inference::InferenceMethod&)>& keep,
    const std::vector<std::string>& shared);

class TableFlags {
 public:
  /// Adds one flag per distinct key of `sources` to `cmd`, except `skip` (keys another flag of the
  /// command sets), in the help group `group`.
  void add_to(CLI::App* cmd, const std::vector<FlagSource>& sources,
              const std::vector<std::string>& skip, const std::string& group);
  /// The flags given, typed by their tables (for the library's apply_options).
  const GivenOptions& given() const { return given_; }
  /// Whether --key was given.
  bool given(std::string_view key) const { return given_.given(key); }
  /// Writes every flag given that `table` has (and `keys` selects) into `target`, each checked
  /// by this table, and marks it taken.
  template <class O>
  void apply(const OptionTable<O>& table, O& target, const KeySelection& keys = {}) const {
    given_.apply(table, target, keys);
  }
  /// Throws, naming the flag, `run` ("blr infer gmm --method em") and the methods whose tables
  /// have it, for the first flag given that no `apply` took.
  void require_taken(const std::string& run) const;

 private:
  GivenOptions given_;  ///< the flags given, typed by their tables
  std::map<std::string, std::vector<std::string>, std::less<>> where_;  ///< key → source labels
};

}  // namespace blr::cli
