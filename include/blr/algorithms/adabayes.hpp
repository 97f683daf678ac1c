// AdaBayes and AdaBayes-FP (Aitchison, NeurIPS 2020, "Bayesian filtering unifies adaptive and
// non-adaptive neural network optimization methods", arXiv 1807.07540) as BLR policies.
//
// Each weight z is inferred by a Kalman filter whose prior dynamics are an Ornstein–Uhlenbeck
// process (eq. 8) with stationary variance σ² = lr_sgd/B; the data of a minibatch enter through
// the gradient g = B·∇ℓ̄ of its summed loss (B the batch size, ℓ̄ the mean loss) and the Fisher
// estimate g² of its curvature (eq. 7 with e = g). With η the learning rate and m an average of g
// (the paper's momentum, Adam's first moment), step t does, per coordinate:
//
//   AdaBayes (the filter, eqs. 10–12, in the reference code's form):
//     m  ← β₁m + (1 − β₁)g
//     s² ← d·s² + σ²(1 − d),  d = exp(−η²/σ²)       predict (variance stays σ² without data)
//     s² ← 1/(1/s² + g²)                              correct (eq. 4a)
//     μ  ← μ − s²·m/(1 − β₁ᵗ)                         (eq. 6: the gradient preconditioned by s²)
//     μ  ← (1 − c)·μ                                   weight drift c (the mean's prior dynamics)
//   AdaBayes-FP (s² at the fixed point of the first-order variance recursion, with Adam's v):
//     v  ← β₂v + (1 − β₂)g²,  v̂ = v/(1 − β₂ᵗ) + ε,  a = 1/(2σ²)
//     L  = √(v̂/η² + a²) + a,    μ ← μ − (m/(1 − β₁ᵗ))/L,   μ ← (1 − c)·μ
//
// As compositions of the BLR step (rule/policy.hpp), in precision S = 1/s² for AdaBayes:
//   AdaBayes    = Policy<GradientAverage, StatePrediction, DecoupledDecay> with ρ = 1, keep 0,
//                 Ĥ = g², α = 1: S' = g² + S/(d + σ²(1 − d)S), μ' = (1 − c)(μ − m̂/S');
//   AdaBayes-FP = Adam's policy (GradientAverage, PrecisionDebias, SqrtScaling) with the offsets
//                 c_in = ε + (ηa)², c_out = ηa, rate α = η, and DecoupledDecay:
//                 η·m̂/(√(v̂ + ε + (ηa)²) + ηa) = m̂/L exactly.
// Limits (tests/torch/optim/adabayes_test.cpp): σ² → ∞ (lr_sgd = inf) and ε = 0 make AdaBayes-FP
// Adam (and, with c > 0, AdamW with the decay after the step); small gradients (g²σ² → 0) make
// both SGD with learning rate lr_sgd; with stationary |g| AdaBayes' s² tends to η/|g| (RMSprop's
// and Adam's preconditioner, eq. after 12) as η → 0.
//
// Where this differs from the reference code (github.com/LaurenceA/adabayes): here lr_sgd and
// the weight drift c are constants per step, since the core layer has no learning-rate schedule
// (the LibTorch optimizers, blr/torch/optim/adabayes.hpp, scale σ² and AdaBayes' drift with
// lr_t/lr_0 under a schedule, as the reference does); AdaBayes does not keep the reference's unused
// second-moment average; σ²(1 − d) is computed as −σ²·expm1(−η²/σ²). Where the paper and the code
// differ, the code is followed: the variance predict uses d and σ²(1 − d) (paper: (1 − η²/2σ²)² and
// η², equal to first order in η²), and the weight drift c is its own option (paper: A = η²/2σ²).
#pragma once

#include <cstdint>

#include "blr/core/option_table.hpp"
#include "blr/rule/policy.hpp"
#include "blr/stage/decoupled_decay.hpp"
#include "blr/stage/state_prediction.hpp"

namespace blr {

struct AdaBayesOptions {
  double lr = 1e-3;             ///< η: Adam's learning rate in the high-data limit
  double lr_sgd = 0.1;          ///< SGD's learning rate in the low-data limit (σ² = lr_sgd/B); inf allowed
  double beta1 = 0.9;           ///< β₁: gradient average factor
  double weight_drift = 5e-5;   ///< c: decoupled weight decay per step
  int64_t batch_size = 1;       ///< B: the minibatch size (g = B·∇ℓ̄)

  static const OptionTable<AdaBayesOptions>& table();
  void validate() const { validate_options(*this); }
};

struct AdaBayesFpOptions : AdaBayesOptions {
  double beta2 = 0.999;  ///< β₂: squared-gradient average factor
  double eps = 1e-8;     ///< ε: added to v̂ (inside the square root)

  static const OptionTable<AdaBayesFpOptions>& table();
  void validate() const { validate_options(*this); }
};

using AdaBayesPolicy = Policy<stage::GradientAverage, stage::StatePrediction, stage::DecoupledDecay>;
using AdaBayesFpPolicy = Policy<stage::GradientAverage, stage::PrecisionDebias, stage::SqrtScaling,
                                stage::DecoupledDecay>;

/// σ² = lr_sgd/B, the stationary variance of the prior dynamics (+∞ when lr_sgd is).
double adabayes_prior_variance(const AdaBayesOptions& o);
/// AdaBayes' policy: precision rate 1 with keep 0 (the filter's correction), mean rate 1.
AdaBayesPolicy adabayes_policy(const AdaBayesOptions& o);
/// AdaBayes-FP's policy: Adam's with c_in = ε + (ηa)², c_out = ηa, a = 1/(2σ²); keep = β₂.
AdaBayesFpPolicy adabayes_fp_policy(const AdaBayesFpOptions& o);

}  // namespace blr
