// The inference methods of blr as one registry (issue 31, item 1), in the shape of the optimizer
// registry (torch/optim/registry.hpp): each entry names a model and a method, says in one line
// what it computes and from which equations, names the library function that fits it (their
// signatures differ by model: a design and responses, a series, a matrix), and points at the
// option table of its iterative part (core/option_table.hpp: ranges declared once, validation
// with one sentence, typed JSON). `blr methods` prints the registry (also as Markdown, the
// generated section of docs/inference.md, and as JSON), and `blr.infer.methods()` returns it.
//
//   glm       exact | laplace | cvi | mixture-vi    linreg, logistic, poisson (glm_fit.hpp)
//   gpc       laplace | cvi                         GP classification (gp_fit.hpp)
//   gpr       exact                                 GP regression (gp_fit.hpp)
//   gmm       em | vmp | svi                        Gaussian mixtures (gmm.hpp, vmp.hpp)
//   kalman    exact                                 linear-Gaussian state space (kalman.hpp)
//   conjugate exact                                 conjugate exponential families (conjugate.hpp)
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "blr/core/option_table.hpp"

namespace blr::inference {

struct InferenceMethod {
  std::string model;      ///< glm, gpc, gpr, gmm, kalman, conjugate
  std::string method;     ///< exact, laplace, cvi, mixture-vi, em, vmp, svi
  std::string summary;    ///< one line: what it computes
  std::string reference;  ///< the equations it implements
  std::string fit;        ///< the library function that fits it (and its header)
  std::string command;    ///< the CLI door
  std::string python;     ///< the Python door
  /// The option table of its iterative part; nullptr for a closed-form method (kalman: the
  /// Nelder–Mead search of --fit).
  const OptionSchema* options = nullptr;
  /// The values the method starts from where they differ from the table's initialisers (a
  /// preset: GP classification's Laplace mode to 1e-12, the GP hyperparameters' L-BFGS); the
  /// documentation, the CLI's flags and Python show these.
  OptionValues preset = {};
  /// The default of option `o` of this method: its preset's value, else the table's.
  OptionValue default_of(const OptionInfo& o) const;
};

/// Every entry, in the order of the header.
const std::vector<InferenceMethod>& inference_methods();
/// Option tables several methods share: the predictive of new rows (glm, gpc) and the
/// per-example sensitivities (`blr sensitivity`), each with where it applies. A shared table whose
/// defaults depend on the method it follows lists them as presets (the sensitivities' sites: at
/// the mean after laplace or exact, expected after cvi), each with the methods it follows.
struct SharedPreset {
  std::string after;    ///< "glm cvi"
  OptionValues values;  ///< where they differ from the table's initialisers
};
struct SharedOptions {
  std::string name, applies_to;
  const OptionSchema* options = nullptr;
  std::vector<SharedPreset> presets = {};  ///< empty: the table's initialisers everywhere
  /// Option `o`'s default as text: "32", or where the presets differ "at-mean after glm laplace
  /// or exact, expected after glm cvi".
  std::string default_text(const OptionInfo& o) const;
};
const std::vector<SharedOptions>& inference_shared_options();
/// The entry of (model, method); an unknown pair is a sentence listing the methods of the model
/// (or the models), with a "did you mean" suggestion.
const InferenceMethod& find_inference_method(std::string_view model, std::string_view method);
/// Where option `key` applies: the methods whose tables have it and the shared tables that do,
/// as "glm laplace, glm cvi, predictive" (empty when none does). The "does not apply" sentences
/// of the CLI and Python name these (GivenOptions::require_taken).
std::string inference_methods_with(std::string_view key);
/// The registry as Markdown (docs/inference.md's generated reference) and as JSON (options with
/// typed defaults, types, allowed values and help).
std::string inference_methods_markdown();
nlohmann::json inference_methods_json();
/// The shared tables as JSON: {name: {applies_to, options: [{key, type, default, allowed, help,
/// default_text, defaults_after: [{after, default}, ...]}]}} (Python's keyword checks and
/// docstrings, blr.infer.shared_options()).
nlohmann::json inference_shared_options_json();

}  // namespace blr::inference
