// One Bayesian GLM fit as a front door asks for it (`blr.infer.glm` in Python; the libFuzzer
// harness fuzz/harness/python_infer.cpp calls the same function): the likelihood and method by
// name, the defaults a statistician has to be told about, and the refusals, in the library rather
// than in a binding.
//
//   logistic / Poisson:  w ~ N(m₀, diag(1/p₀)), the Laplace posterior at the mode (laplace.hpp)
//                        or the Gaussian of CVI (cvi.hpp, full or diagonal family);
//   Gaussian, β known:   the same with y | w ~ N(Xw, 1/β);
//   Gaussian, τ unknown: w | τ ~ N(0, (τ p₀)⁻¹), τ ~ Gamma(a₀, b₀) (Jeffreys' 1/τ by default):
//                        method laplace gives the exact Normal–Gamma posterior (Student-t
//                        coefficients, conjugate.hpp); method cvi holds β = E[τ | y] of it fixed.
//   family mixture:K     (method cvi) a mixture of K Gaussians with weights 1/K by mixture VI
//                        (mixture_vi.hpp, eqs. 29–30), started around the Laplace mode m* with
//                        L Lᵀ its covariance: component c at m* + 1.5 L z_c (z_c ~ N(0, I) from
//                        the seed; K = 1 at m*), each with the Laplace precision; it runs
//                        max_iterations steps (default 2000) of ρ (default 0.1).
//
// A fit that stops at its iteration cap is refused (core/convergence.hpp), never returned as if
// it had converged. `assumptions` lists, in words, each default taken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/mixture_vi.hpp"
#include "blr/inference/sensitivity.hpp"

namespace blr::inference {

struct GlmFitRequest {
  std::string likelihood = "logistic";  ///< logistic | poisson | gaussian
  std::string method = "laplace";       ///< exact (Gaussian only) | laplace | cvi
  /// p₀: one per column of X, or one value for every column.
  Vector prior_precision = Vector::Ones(1);
  std::optional<Vector> prior_mean;                        ///< m₀ (default 0)
  std::optional<double> noise_precision;                   ///< a known β (Gaussian only)
  std::optional<std::pair<double, double>> noise_prior;    ///< Gamma(a₀, b₀) on τ (Gaussian only)
  std::string family = "gaussian-full";  ///< CVI: gaussian-full | gaussian-diag | mixture:K
  /// CVI's start: laplace (the Laplace posterior after a few Newton steps) or prior. Both lead to
  /// the same fixed point; from a weak prior (the intercept's sd 1000) the first steps' expected
  /// sites are taken under a variance of 10⁶, and on 10⁵ rows no step size keeps the ELBO from
  /// falling (logistic) or E[e^a] overflows (Poisson), so laplace is the default.
  std::string cvi_start = "laplace";
  /// The method's options by key, as its table in the registry (`blr methods`) names them
  /// (glm_method_options): laplace's, cvi's or mixture VI's (rho, max_iterations, tolerance,
  /// iterations, seed, ...); exact has none. A key the method's table lacks is refused in one
  /// sentence naming where it applies.
  GivenOptions options;
  bool sensitivities = false;  ///< add the MPE quantities and the LOO estimates
};

/// A mixture-of-Gaussians posterior Σ_c w_c N(means[c], covariances[c]).
struct GlmMixture {
  Vector weights;
  std::vector<Vector> means;
  std::vector<Matrix> covariances;
  double elbo_se = 0;  ///< the Monte Carlo standard error of the ELBO
};

struct GlmFit {
  Likelihood likelihood = Likelihood::logistic;
  std::string method = "laplace";  ///< laplace | cvi (with τ unknown and laplace: exact)
  Vector mean;
  /// The posterior covariance (τ unknown: the Student t's ν/(ν − 2)·S).
  Matrix covariance;
  int iterations = 0;
  bool converged = false;
  std::vector<std::string> assumptions;
  std::optional<double> log_joint, log_evidence, elbo;
  /// Gaussian: β (given, or E[τ | y] with τ unknown); with τ unknown and method laplace also the
  /// Normal–Gamma posterior: ν = 2a_N, a_N, b_N and the Student t's scale matrix S.
  std::optional<double> noise_precision, dof, noise_shape, noise_rate;
  std::optional<Matrix> scale;
  /// family mixture:K: the mixture; `mean` and `covariance` are then its moments.
  std::optional<GlmMixture> mixture;
  std::optional<Sensitivity> sensitivity;
  std::optional<TestMetrics> loo;
};

/// The options of a GLM method's iterative part.
struct GlmMethodOptions {
  EvidenceOptions evidence;  ///< exact with the evidence maximised (`--optimize-evidence`)
  LaplaceOptions laplace;    ///< laplace
  CviOptions cvi;            ///< cvi with a Gaussian family (whose family is the request's)
  MixtureViOptions mixture;  ///< cvi with a mixture of `mixture_components` Gaussians
};
/// The options of `method` (exact, laplace or cvi; cvi with `mixture_components` > 0: mixture VI)
/// from options given by name (`blr infer`'s flags, Python's keywords), each checked by the table
/// of the method in the registry; exact takes the evidence maximisation's only when
/// `evidence_maximised`, and CVI's `family` key is refused (the request's `family` spells it).
/// The keys taken are marked in `given`; the caller refuses the rest (require_taken). The CLI and
/// fit_glm both choose the table here.
GlmMethodOptions glm_method_options(std::string_view method, int mixture_components,
                                    bool evidence_maximised, const GivenOptions& given);

/// Fits the request's GLM to (X, y); every refusal is one blr::Error sentence.
GlmFit fit_glm(const Matrix& x, const Vector& y, const GlmFitRequest& request);

/// The mixture posterior of the header (family mixture:K) of a GLM built by the caller (`blr
/// infer` builds its own, with its standardisation and noise): method "cvi", the mixture, its
/// moments, the ELBO and the iterations run; the start's shifts and the draws come from
/// options.seed.
GlmFit fit_glm_mixture(const Glm& model, int components, const MixtureViOptions& options);

}  // namespace blr::inference
