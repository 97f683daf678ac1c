// The summary of a Gaussian-mixture fit (issue 31, item 2): what `blr infer gmm` prints and
// writes and what `blr.infer.gmm` returns, for the three methods of the registry:
//   em   the maximum-likelihood mixture by EM (gmm.hpp; the BLR with a mixture family, ρ = 1);
//   vmp  the mean-field posterior of a Bayesian mixture (Dirichlet weights, Normal–Wishart
//        components) by VMP, summarised by its posterior means E[π], m_k, E[Λ_k]⁻¹ (vmp.hpp);
//   svi  the same posterior from minibatches, a fixed number of steps.
// Beside the mixture it holds n, the free parameters k = (K − 1) + K·D + K·D(D + 1)/2 (full) or
// K·D (diagonal) covariances, the log-likelihood Σ_i log Σ_k π_k N(x_i | μ_k, Σ_k) of the mixture
// it reports, and for EM AIC = 2k − 2ℓ and BIC = k log n − 2ℓ (scikit-learn's GaussianMixture.aic
// and .bic); VMP and SVI report the ELBO. New rows get their responsibilities
// r_ik ∝ π_k N(x | μ_k, Σ_k), their most probable component and their log density.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/vmp.hpp"

namespace blr::inference {

struct MixtureRequest {
  std::string method = "em";  ///< em, vmp or svi
  /// EM's options; its components, covariance and seed are also VMP's and SVI's (SVI: svi.seed).
  EmOptions em;
  BayesGmmPrior prior;  ///< vmp, svi
  VmpOptions vmp;
  SviOptions svi;
};

class MixtureSummary {
 public:
  const std::string& method() const { return method_; }
  const GaussianMixture& mixture() const { return mixture_; }
  /// EM's k-means++ start (θ₀).
  const std::optional<GaussianMixture>& initial() const { return initial_; }
  Index observations() const { return observations_; }
  /// The free parameters of the mixture (weights, means, covariances).
  Index parameters() const;
  /// The log-likelihood of the training rows under the mixture reported.
  double log_likelihood() const { return log_likelihood_; }
  /// EM only (NaN otherwise): 2k − 2ℓ and k log n − 2ℓ.
  double aic() const;
  double bic() const;
  const std::optional<double>& elbo() const { return elbo_; }
  int iterations() const { return iterations_; }
  bool converged() const { return converged_; }
  /// The training rows' responsibilities at the end of the fit (N×K).
  const Matrix& responsibilities() const { return responsibilities_; }

  /// r_ik ∝ π_k N(x_i | μ_k, Σ_k) for new rows (N×K); throws unless x has D columns.
  Matrix predict_proba(const Matrix& x) const;
  /// The most probable component of each row (0-based).
  std::vector<int> predict(const Matrix& x) const;
  /// log Σ_k π_k N(x_i | μ_k, Σ_k) of each row.
  Vector log_density(const Matrix& x) const;
  /// Each component's weight and each column's mean (sd), one line per component; `columns`
  /// names the D columns (default x0, x1, ...).
  std::string components_table(const std::vector<std::string>& columns = {}) const;
  /// The fit's statistics, then components_table.
  std::string table(const std::vector<std::string>& columns = {}) const;
  /// method, components, covariance, observations, weights, means, covariances, iterations,
  /// converged, fit_statistics (observations, parameters, log_likelihood; EM: aic, bic); EM:
  /// log_likelihood, initial, stopping; VMP/SVI: elbo; SVI: note.
  nlohmann::json to_json() const;

 private:
  friend MixtureSummary fit_mixture(const Matrix& x, const MixtureRequest& request);
  std::string method_;
  GaussianMixture mixture_;
  std::optional<GaussianMixture> initial_;
  Index observations_ = 0;
  double log_likelihood_ = 0;
  std::optional<double> elbo_;
  int iterations_ = 0;
  bool converged_ = false;
  Matrix responsibilities_;
  EmOptions em_;  ///< the stopping rule EM ran with
};

/// Fits the mixture of `request` to the rows of x. Throws a sentence naming the option when the
/// request does not fit the data (components beyond the rows, vmp/svi with diagonal
/// covariances). Convergence is reported, not enforced: the caller names its own option to raise.
MixtureSummary fit_mixture(const Matrix& x, const MixtureRequest& request);

/// Sets the request's options from `given` by key, as the registry's tables name them: `gmm em`
/// EM's; `gmm vmp` VMP's and EM's components, covariance and seed (its start); `gmm svi` SVI's and
/// EM's components and covariance. Marks those keys taken (the caller then refuses the rest:
/// GivenOptions::require_taken).
void apply_options(MixtureRequest& request, const GivenOptions& given);

}  // namespace blr::inference
