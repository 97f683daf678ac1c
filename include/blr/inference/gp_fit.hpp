// A Gaussian process fitted to data, as one library call (what `blr infer gpr|gpc` and Python's
// blr.infer.gp_regression / gp_classification run): the kernel (kernels.hpp, any sum of products,
// ARD) with its hyperparameters given or learned by L-BFGS on the evidence
// (gp_hyperparameters.hpp), the posterior over the latent values at the training inputs, and the
// latent predictive at new inputs.
//
//   regression      y − ȳ ~ GP(0, k) + N(0, σₙ²): exact (GPML Alg. 2.1, eq. 2.30), ȳ the training
//                   mean; f* | y ~ N(ȳ + k*ᵀα, k** − vᵀv), and y* adds σₙ².
//   classification  Bernoulli-logit likelihood, y ∈ {0, 1}: Laplace (GPML Algs. 3.1/3.2, evidence
//                   eq. 3.32) or CVI (gp_cvi, the ELBO); f* | y Gaussian, p(y* = 1) by the caller's
//                   predictive method (glm.hpp's predict_latent).
#pragma once

#include <optional>

#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/gp_laplace.hpp"
#include "blr/inference/gp_regression.hpp"
#include "blr/inference/kernels.hpp"

namespace blr::inference {

/// The latent predictive at new inputs: mean and variance of f* (n_new each).
struct GpLatentPrediction {
  Vector mean, variance;
};

struct GpRegressionFit {
  Kernel kernel;               ///< the hyperparameters used (learned, or given)
  double noise_variance = 0;   ///< σₙ²
  double y_mean = 0;           ///< ȳ, the GP's prior mean
  double log_marginal_likelihood = 0;
  Vector gradient;             ///< of the evidence in (the kernel's θ, log σₙ²)
  std::optional<GpLearned> search;  ///< the L-BFGS run, when learned
  Matrix x;                    ///< the training inputs
  GprResult posterior;
  /// f* at the training inputs.
  GpLatentPrediction fitted() const { return predict(x); }
  /// f* at new inputs (add noise_variance to the variance for y*).
  GpLatentPrediction predict(const Matrix& x_new) const;
};

/// The options of a GP fit from options given by name (`blr infer gpr|gpc`'s flags, Python's
/// keywords), each checked by its table: gpc's method table (GP Laplace from tight_laplace(), CVI
/// from learning_cvi()) and, with `learn`, the hyperparameters' L-BFGS from default_lbfgs() (for
/// gpc all its keys but max_iterations, which is the method's; the search is capped by
/// max_evaluations there). The keys taken are marked in `given`; the caller refuses the rest
/// (GivenOptions::require_taken).
GpLearnOptions gp_regression_options(bool learn, const GivenOptions& given);
GpLearnOptions gp_classification_options(GpcMethod method, bool learn, const GivenOptions& given);

/// Exact GP regression of y on x with `kernel` and noise σₙ²; `learn`: both first maximise the
/// evidence from there (a search that does not converge is reported in `search`, not refused).
GpRegressionFit fit_gp_regression(const Matrix& x, const Vector& y, const Kernel& kernel,
                                  double noise_variance, bool learn,
                                  const GpLearnOptions& options = {});

struct GpClassificationFit {
  Kernel kernel;
  GpcMethod method = GpcMethod::laplace;
  double objective = 0;  ///< the Laplace log marginal likelihood, or the CVI ELBO
  Vector gradient;       ///< of the objective in the kernel's θ
  std::optional<GpLearned> search;
  Matrix x, k;           ///< training inputs and K
  std::optional<GpLaplaceResult> laplace;
  std::optional<GpcResult> cvi;
  int iterations = 0;    ///< Newton steps (Laplace) or CVI iterations of the final fit
  bool converged = false;
  /// The latent marginals at the training inputs.
  GpLatentPrediction fitted() const;
  GpLatentPrediction predict(const Matrix& x_new) const;
};

/// GP classification of y ∈ {0, 1} on x by the Laplace approximation or CVI (`options.laplace`,
/// `options.cvi` for the final fit too); `learn`: the kernel's θ first maximises the evidence or
/// the ELBO.
GpClassificationFit fit_gp_classification(const Matrix& x, const Vector& y, const Kernel& kernel,
                                          GpcMethod method, bool learn,
                                          const GpLearnOptions& options = {});

}  // namespace blr::inference
