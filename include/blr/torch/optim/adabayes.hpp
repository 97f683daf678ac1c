// AdaBayes and AdaBayes-FP (Aitchison, NeurIPS 2020, "Bayesian filtering unifies adaptive and
// non-adaptive neural network optimization methods", arXiv 1807.07540), as in the author's
// reference optimizers (github.com/LaurenceA/adabayes), computed by the core's policies
// (blr/algorithms/adabayes.hpp, where the equations, the limits and the differences from the
// reference are written) on the mean-field driver.
//
// Both expect the gradient of the MEAN minibatch loss ℓ̄ in p.grad and the batch size B as an
// option (batch_size), and work with the summed-loss gradient g = B·∇ℓ̄ (without modifying
// p.grad, which the reference does). Per coordinate, step t:
//
//   AdaBayes     m ← β₁m + (1 − β₁)g;  s² ← d·s² + σ²(1 − d);  s² ← 1/(1/s² + g²);
//                μ ← (1 − c)(μ − s²·m/(1 − β₁ᵗ))             σ² = lr_sgd/B, d = exp(−η²/σ²)
//   AdaBayes-FP  m, v as Adam;  L = √((v/(1 − β₂ᵗ) + ε)/η² + 1/(4σ⁴)) + 1/(2σ²);
//                μ ← (1 − c)(μ − (m/(1 − β₁ᵗ))/L)
//
// Under a learning-rate schedule, as in the reference: lr_sgd and (AdaBayes only) the weight
// drift c are given at the group's initial rate η₀ and follow the rate in force, lr_sgd·η/η₀ and
// c·η/η₀ (at_learning_rate); AdaBayes' starting variance is lr_sgd/B at η₀.
//
// Posterior: AdaBayes is a filter that tracks the posterior N(μ, s²) of every weight given the
// minibatches so far, so it is a VariationalOptimizer with a posterior (has_posterior): as in the
// paper the gradients are taken at the mean (no weight noise while training, like OGN), and the
// posterior predictive samples θ = μ + s·ε. Its state is the posterior precision P = 1/s²
// (curvature() and posterior_precision() return it). AdaBayes-FP keeps Adam's m and v, not a
// variance; its 1/L is the filter's variance only at a fixed point of stationary gradients, so it
// is offered as a point estimate (has_posterior() false, registered as such; posterior_variance()
// returns 1/L for inspection, and a prediction sample is refused).
#pragma once

#include <cstdint>
#include <vector>

#include "blr/algorithms/adabayes.hpp"
#include "blr/torch/optim/gaussian.hpp"

namespace blr::torch {

/// AdaBayes' options: the core preset's (lr, lr_sgd, beta1, weight_drift, batch_size) and the seed
/// of the posterior predictive's samples.
struct AdaBayesOptions : OptimizerOptionsFor<AdaBayesOptions>, ::blr::AdaBayesOptions {
  uint64_t seed = 0;  ///< seed of the weight noise (prediction samples only)
  static constexpr int64_t mc_samples = 1;  ///< gradients at μ: one per step

  static const OptionTable<AdaBayesOptions>& table();
  void validate() const { validate_options(*this); }
};

/// AdaBayes-FP's options: the core preset's (AdaBayes' and beta2, eps).
struct AdaBayesFpOptions : OptimizerOptionsFor<AdaBayesFpOptions>, ::blr::AdaBayesFpOptions {
  static constexpr int64_t mc_samples = 1;  ///< gradients at μ: one per step
  static const OptionTable<AdaBayesFpOptions>& table();
  void validate() const { validate_options(*this); }
};

/// The estimate both use: the summed-loss gradient B·ĝ and its square (nothing is collected but
/// the gradient, at μ).
struct SummedGradientEstimate {
  static constexpr int kVariants = 1;
  static constexpr Statistic kStatistics[kVariants] = {Statistic::kNone};
  template <class O>
  static int variant(const O&) {
    return 0;
  }
  template <class O>
  static Statistic statistic(const O&) {
    return Statistic::kNone;
  }
  template <class T>
  struct Estimate {
    T batch;  ///< B
  };
  template <class T, class O>
  static Estimate<T> estimate_coefficients(const O& o) {
    return {static_cast<T>(o.batch_size)};
  }
  template <int kVariant, class V, class T>
  static void estimate(const Estimate<T>& e, const V& g, const V&, stage::Coordinate<V>& c) {
    c.gradient = e.batch * g;
    c.curvature = c.gradient * c.gradient;
  }
};

struct AdaBayesRule : SummedGradientEstimate {
  using Options = AdaBayesOptions;
  using Policy = ::blr::AdaBayesPolicy;
  static constexpr const char* kName = "AdaBayes";
  static constexpr bool kPerturbs = false;
  static Policy policy(const Options& o) { return ::blr::adabayes_policy(o); }
  static double precision_keep(const Options&) { return 0.0; }  ///< S' = g² + predicted S
  static Affine posterior(const Options&) { return {1.0, 0.0}; }
  static double initial_precision(const Options& o) { return 1.0 / ::blr::adabayes_prior_variance(o); }
  static double curvature_offset(const Options&) { return 0.0; }
  /// lr_sgd·η/η₀ and c·η/η₀ at the rate η in force (η₀ = initial_lr).
  static Options at_learning_rate(const Options& o, double initial_lr);
};

struct AdaBayesFpRule : SummedGradientEstimate {
  using Options = AdaBayesFpOptions;
  using Policy = ::blr::AdaBayesFpPolicy;
  static constexpr const char* kName = "AdaBayes-FP";
  static constexpr bool kPerturbs = false;
  static Policy policy(const Options& o) { return ::blr::adabayes_fp_policy(o); }
  static double precision_keep(const Options& o) { return o.beta2; }  ///< β₂ exactly
  /// Unused for sampling (prediction samples are refused); P is v, Adam's second moment.
  static Affine posterior(const Options&) { return {1.0, 0.0}; }
  static double initial_precision(const Options&) { return 0.0; }
  static double curvature_offset(const Options&) { return 0.0; }
  /// lr_sgd·η/η₀ at the rate η in force (η₀ = initial_lr); the drift stays per step.
  static Options at_learning_rate(const Options& o, double initial_lr);
};

class AdaBayes : public GaussianOptimizer<AdaBayesRule> {
 public:
  using GaussianOptimizer::GaussianOptimizer;
};

class AdaBayesFp : public GaussianOptimizer<AdaBayesFpRule> {
 public:
  using GaussianOptimizer::GaussianOptimizer;
  using GaussianOptimizer::sample_parameters;
  bool has_posterior() const override { return false; }
  /// Training samples only (they leave μ in place); a prediction sample is an error.
  void sample_parameters(bool train) override;
  /// 1/L per coordinate: the fixed point of AdaBayes' variance that the step uses. (curvature()
  /// returns v, the squared-gradient average.)
  std::vector<::at::Tensor> posterior_variance() override;
};

}  // namespace blr::torch
