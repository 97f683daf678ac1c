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
//
// A fit that stops at its iteration cap is refused (core/convergence.hpp), never returned as if
// it had converged. `assumptions` lists, in words, each default taken.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/sensitivity.hpp"

namespace blr::inference {

struct GlmFitRequest {
  std::string likelihood = "logistic";  ///< logistic | poisson | gaussian
  std::string method = "laplace";       ///< laplace | cvi
  /// p₀: one per column of X, or one value for every column.
  Vector prior_precision = Vector::Ones(1);
  std::optional<Vector> prior_mean;                        ///< m₀ (default 0)
  std::optional<double> noise_precision;                   ///< a known β (Gaussian only)
  std::optional<std::pair<double, double>> noise_prior;    ///< Gamma(a₀, b₀) on τ (Gaussian only)
  std::string family = "full";                             ///< CVI: full | diagonal
  std::optional<int> max_iterations;
  std::optional<double> tolerance;
  bool sensitivities = false;  ///< add the MPE quantities and the LOO estimates
};

struct GlmFit {
  Likelihood likelihood = Likelihood::logistic;
  Vector mean;
  /// The posterior covariance (τ unknown: the Student t's ν/(ν − 2)·S).
  Matrix covariance;
  int iterations = 0;
  bool converged = false;
  std::vector<std::string> assumptions;
  std::optional<double> log_joint, log_evidence, elbo;
  /// Gaussian with τ unknown: β = E[τ | y]; with method laplace also the Normal–Gamma posterior.
  std::optional<double> noise_precision, dof, noise_shape, noise_rate;
  std::optional<Matrix> scale;
  std::optional<Sensitivity> sensitivity;
  std::optional<TestMetrics> loo;
};

/// Fits the request's GLM to (X, y); every refusal is one blr::Error sentence.
GlmFit fit_glm(const Matrix& x, const Vector& y, const GlmFitRequest& request);

}  // namespace blr::inference
