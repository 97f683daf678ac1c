// The registry of inference methods (methods.hpp).
#include "blr/inference/methods.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "blr/core/error.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/gp_laplace.hpp"
#include "blr/inference/lbfgs.hpp"
#include "blr/inference/mixture_vi.hpp"
#include "blr/inference/nelder_mead.hpp"
#include "blr/inference/sensitivity.hpp"
#include "blr/inference/vmp.hpp"

namespace blr::inference {
namespace {

/// The options of `preset` that differ from the table's initialisers.
template <class O>
OptionValues preset_of(const OptionTable<O>& table, const O& preset) {
  OptionValues out;
  for (const auto& [key, value] : table.values(preset))
    if (!(value == table.find(key)->default_value)) out.emplace_back(key, value);
  return out;
}

std::vector<InferenceMethod> make_registry() {
  return {
      {"glm", "exact",
       "linear regression's exact posterior: Gaussian with the noise precision β known, "
       "Normal–Gamma (Student-t coefficients) with it unknown, or β and δ by evidence maximisation",
       "one BLR step with ρ = 1 on the conjugate natural parameter (Khan & Rue 2023 §1.3.3, "
       "eq. 14, and §5.1); MacKay's fixed point (PRML 3.91–3.95)",
       "fit_glm (glm_fit.hpp), maximize_evidence (conjugate.hpp)",
       "blr infer linreg [--method exact] [--noise-precision B | --noise-prior A,B | "
       "--optimize-evidence]",
       "blr.infer.glm(x, y, \"gaussian\", method=\"exact\")", &EvidenceOptions::table()},
      {"glm", "laplace",
       "the Laplace approximation at the mode of a logistic, Poisson or Gaussian GLM, with the "
       "Laplace evidence",
       "the Gaussian BLR with the delta method and ρ = 1, i.e. Newton's method (§1.3.2, §4.4)",
       "fit_glm (glm_fit.hpp) over laplace (glm.hpp)",
       "blr infer logistic|poisson|linreg --method laplace",
       "blr.infer.glm(x, y, likelihood, method=\"laplace\")", &LaplaceOptions::table()},
      {"glm", "cvi",
       "the ELBO-optimal Gaussian (full or mean field) of a logistic, Poisson or Gaussian GLM",
       "conjugate-computation VI (Khan & Lin 2017): the BLR with exact expectations by "
       "Gauss–Hermite quadrature (§5.3, §5.4, eq. 58)",
       "fit_glm (glm_fit.hpp) over cvi (cvi.hpp)",
       "blr infer logistic|poisson|linreg --method cvi --family gaussian-full|gaussian-diag",
       "blr.infer.glm(x, y, likelihood, method=\"cvi\", family=\"gaussian-full\")",
       &CviOptions::table()},
      {"glm", "mixture-vi",
       "a mixture of K Gaussians with equal weights, started around the Laplace mode",
       "the BLR for a mixture family (§3.2, eqs. 29–30; App. E, eqs. 69–71)",
       "fit_glm_mixture (glm_fit.hpp) over mixture_vi (mixture_vi.hpp)",
       "blr infer logistic|poisson|linreg --method cvi --family mixture:K",
       "blr.infer.glm(x, y, likelihood, method=\"cvi\", family=\"mixture:K\")",
       &MixtureViOptions::table()},
      {"gpc", "laplace",
       "GP classification: the Laplace approximation of the latent values and its evidence",
       "Newton's method on the latent values (GPML Algs. 3.1, 3.2; hyperparameters Alg. 5.1 "
       "with L-BFGS)",
       "fit_gp_classification (gp_fit.hpp)", "blr infer gpc --method laplace",
       "blr.infer.gp_classification(x, y, method=\"laplace\")", &GpLaplaceOptions::table(),
       preset_of(GpLaplaceOptions::table(), tight_laplace())},
      {"gpc", "cvi", "GP classification: the ELBO-optimal Gaussian of the latent values",
       "CVI for a GP prior (Khan & Rue 2023, eq. 60)", "fit_gp_classification (gp_fit.hpp)",
       "blr infer gpc --method cvi", "blr.infer.gp_classification(x, y, method=\"cvi\")",
       &CviOptions::table(), preset_of(CviOptions::table(), learning_cvi())},
      {"gpr", "exact",
       "GP regression: the exact posterior and evidence; kernel hyperparameters by L-BFGS on the "
       "evidence",
       "GPML Alg. 2.1 and eq. 5.9", "fit_gp_regression (gp_fit.hpp)", "blr infer gpr",
       "blr.infer.gp_regression(x, y)"},
      {"gmm", "em", "a Gaussian mixture's maximum-likelihood weights, means and covariances",
       "EM as the BLR with a mixture family and ρ = 1 (§5.2)",
       "fit_mixture (mixture_summary.hpp) over em (gmm.hpp)", "blr infer gmm --method em",
       "blr.infer.gmm(x, components)", &EmOptions::table()},
      {"gmm", "vmp", "a Bayesian Gaussian mixture's mean-field posterior",
       "variational message passing as the BLR with ρ = 1 per node (§5.3; Winn & Bishop 2005)",
       "fit_mixture (mixture_summary.hpp) over bayes_gmm_vmp (vmp.hpp)",
       "blr infer gmm --method vmp", "blr.infer.gmm(x, components, method=\"vmp\")",
       &VmpOptions::table()},
      {"gmm", "svi", "a Bayesian Gaussian mixture's mean-field posterior from minibatches",
       "stochastic VI (Hoffman et al. 2013): the BLR with ρ_t = (t + τ)^(−κ) (§5.3)",
       "fit_mixture (mixture_summary.hpp) over bayes_gmm_svi (vmp.hpp)",
       "blr infer gmm --method svi", "blr.infer.gmm(x, components, method=\"svi\")",
       &SviOptions::table()},
      {"kalman", "exact",
       "a linear-Gaussian state-space model's filtered and smoothed states and log-likelihood",
       "the Kalman filter and RTS smoother as conjugate BLR updates (§5.1)",
       "KalmanSummary, structural_model (kalman_summary.hpp) over kalman_filter, kalman_smooth "
       "(kalman.hpp)",
       "blr infer kalman [--fit] [--forecast H]",
       "blr.infer.kalman(y, transition, observation, state_noise, obs_noise, init_mean, "
       "init_cov), blr.infer.structural(y, model, obs_var, state_var, fit)",
       &NelderMeadOptions::table()},
      {"conjugate", "exact",
       "a conjugate exponential-family posterior (Beta–Bernoulli, Gamma–Poisson, "
       "Dirichlet–categorical, Normal–Gamma) and its evidence",
       "one BLR step with ρ = 1 (§5.1, eq. 54)", "fit_conjugate (conjugate_summary.hpp)",
       "blr infer conjugate --likelihood L --prior P", "blr.infer.conjugate(y, likelihood, prior)",
       nullptr},
      {"conjugate", "vmp", "the Normal–Gamma model's mean-field posterior q(μ)q(τ) and its ELBO",
       "variational message passing as the BLR with ρ = 1 per node (§5.3; Winn & Bishop 2005)",
       "fit_conjugate (conjugate_summary.hpp)",
       "blr infer conjugate --likelihood normal --method vmp",
       "blr.infer.conjugate(y, \"normal\", method=\"vmp\")", &VmpOptions::table()},
      {"conjugate", "svi", "the Normal–Gamma model's mean-field posterior from minibatches",
       "stochastic VI (Hoffman et al. 2013): the BLR with ρ_t = (t + τ)^(−κ) (§5.3)",
       "fit_conjugate (conjugate_summary.hpp)",
       "blr infer conjugate --likelihood normal --method svi",
       "blr.infer.conjugate(y, \"normal\", method=\"svi\")", &SviOptions::table()},
  };
}

std::string describe_allowed(const OptionInfo& o) {
  switch (o.type) {
    case OptionType::kSwitch:
      return "true, false";
    case OptionType::kChoice:
      return fmt::format("{}", fmt::join(o.choices, ", "));
    default:
      return o.range.describe();
  }
}

/// Text for a Markdown table cell: '|' escaped.
std::string cell(std::string text) {
  for (std::size_t i = text.find('|'); i != std::string::npos; i = text.find('|', i + 2))
    text.replace(i, 1, "\\|");
  return text;
}

}  // namespace

OptionValue InferenceMethod::default_of(const OptionInfo& o) const {
  return preset_value(preset, o);
}

std::string SharedOptions::default_text(const OptionInfo& o) const {
  std::vector<std::string> texts;
  for (const auto& p : presets) texts.push_back(o.default_text(preset_value(p.values, o)));
  if (texts.empty() || std::all_of(texts.begin(), texts.end(),
                                   [&](const std::string& t) { return t == texts.front(); }))
    return texts.empty() ? o.default_text(o.default_value) : texts.front();
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < texts.size(); ++i)
    parts.push_back(fmt::format("{} after {}", texts[i], presets[i].after));
  return fmt::format("{}", fmt::join(parts, ", "));
}

const std::vector<InferenceMethod>& inference_methods() {
  static const std::vector<InferenceMethod> registry = make_registry();
  return registry;
}

const InferenceMethod& find_inference_method(std::string_view model, std::string_view method) {
  std::vector<std::string> models, methods;
  for (const auto& m : inference_methods()) {
    if (std::find(models.begin(), models.end(), m.model) == models.end()) models.push_back(m.model);
    if (m.model == model) {
      if (m.method == method) return m;
      methods.push_back(m.method);
    }
  }
  if (methods.empty()) {
    const std::string close = closest_match(model, models);
    throw Error(fmt::format("Unknown inference model '{}'{}; the models are {}.", model,
                            close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close),
                            fmt::join(models, ", ")));
  }
  const std::string close = closest_match(method, methods);
  throw Error(fmt::format("Model '{}' has no method '{}'{}; its methods are {}.", model, method,
                          close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close),
                          fmt::join(methods, ", ")));
}

const std::vector<SharedOptions>& inference_shared_options() {
  static const std::vector<SharedOptions> shared{
      {"predictive",
       "the predictive of new or test rows of every glm method and of gpc (`--predictive`, "
       "`--samples`, `--seed`, `--quadrature-nodes`; `GlmResult.predict(predictive=...)`)",
       &PredictiveOptions::table()},
      {"sensitivity",
       "the per-example sensitivities of a GLM posterior (`blr sensitivity`; "
       "`blr.infer.glm(sensitivities=True)`)",
       &SensitivityOptions::table(),
       {{"glm laplace or exact",
         preset_of(SensitivityOptions::table(), SensitivityOptions::after("laplace"))},
        {"glm cvi", preset_of(SensitivityOptions::table(), SensitivityOptions::after("cvi"))}}},
      {"hyperparameters",
       "the L-BFGS of the GP kernel's hyperparameters (and gpr's noise) when they are learned "
       "(`blr infer gpr|gpc --learn-hyperparameters`, `learn=True`; gpc's `max_iterations` is its "
       "method's, the search's is capped by `max_evaluations` there)",
       &LbfgsOptions::table(),
       {{"gpr, gpc", preset_of(LbfgsOptions::table(), default_lbfgs())}}}};
  return shared;
}

std::string inference_methods_with(std::string_view key) {
  std::vector<std::string> out;
  for (const auto& m : inference_methods())
    if (m.options != nullptr && m.options->find(key) != nullptr)
      out.push_back(m.model + " " + m.method);
  for (const auto& shared : inference_shared_options())
    if (shared.options->find(key) != nullptr) out.push_back(shared.name);
  return fmt::format("{}", fmt::join(out, ", "));
}

namespace {

nlohmann::json option_json(const OptionInfo& o, const OptionValue& value) {
  nlohmann::json info{{"key", o.key},
                      {"type", std::string(type_name(o.type))},
                      {"default", options_to_json({{o.key, value}}).at(o.key)},
                      {"allowed", describe_allowed(o)},
                      {"help", o.help}};
  if (o.type == OptionType::kChoice) info["choices"] = o.choices;
  if (o.unset_by_default) info["unset_by_default"] = true;
  return info;
}

}  // namespace

std::string inference_methods_markdown() {
  std::string out =
      "| model | method | what it computes | equations | CLI | Python |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& m : inference_methods())
    out += fmt::format("| `{}` | `{}` | {} | {} | `{}` | {} |\n", m.model, m.method,
                       cell(m.summary), cell(m.reference), cell(m.command),
                       m.python.empty() ? "—" : "`" + cell(m.python) + "`");
  for (const auto& m : inference_methods()) {
    if (!m.options) continue;
    out += fmt::format("\n### `{} {}`: options ({}; {})\n\n", m.model, m.method, m.options->owner(),
                       m.fit);
    out += "| option | default | allowed | meaning |\n|---|---|---|---|\n";
    for (const auto& o : m.options->options())
      out += fmt::format("| `{}` | {} | {} | {} |\n", o.key, o.default_text(m.default_of(o)),
                         cell(describe_allowed(o)), cell(o.help));
  }
  for (const auto& shared : inference_shared_options()) {
    out += fmt::format("\n### Shared: `{}` ({})\n\n", shared.name, cell(shared.applies_to));
    out += "| option | default | allowed | meaning |\n|---|---|---|---|\n";
    for (const auto& o : shared.options->options())
      out += fmt::format("| `{}` | {} | {} | {} |\n", o.key, shared.default_text(o),
                         cell(describe_allowed(o)), cell(o.help));
  }
  return out;
}

nlohmann::json inference_methods_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : inference_methods()) {
    nlohmann::json options = nlohmann::json::array();
    if (m.options)
      for (const auto& o : m.options->options()) options.push_back(option_json(o, m.default_of(o)));
    out.push_back({{"model", m.model},
                   {"method", m.method},
                   {"summary", m.summary},
                   {"reference", m.reference},
                   {"fit", m.fit},
                   {"command", m.command},
                   {"python", m.python},
                   {"options_owner", m.options ? m.options->owner() : std::string()},
                   {"options", options}});
  }
  return out;
}

nlohmann::json inference_shared_options_json() {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& shared : inference_shared_options()) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : shared.options->options()) {
      nlohmann::json info = option_json(o, o.default_value);
      nlohmann::json after = nlohmann::json::array();
      for (const auto& p : shared.presets)
        after.push_back({{"after", p.after},
                         {"default", options_to_json({{o.key, preset_value(p.values, o)}}).at(o.key)}});
      if (!shared.presets.empty()) info["defaults_after"] = after;
      info["default_text"] = shared.default_text(o);
      options.push_back(info);
    }
    out[shared.name] = {{"applies_to", shared.applies_to}, {"options", options}};
  }
  return out;
}

}  // namespace blr::inference
