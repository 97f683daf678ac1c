// AdaBayes and AdaBayes-FP (blr/torch/optim/adabayes.hpp): first-step oracles, equality with the
// reference equations written plainly (with a constant rate and under a schedule), and the limits the paper states — AdaBayes-FP without a
// prior is Adam (AdamW with the decay after the step), small gradients give SGD with rate lr_sgd,
// stationary gradients of magnitude γ give AdaBayes the variance η/γ of RMSprop and Adam.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/optim/adabayes.hpp"
#include "blr/torch/optim/registry.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using ::blr::torch::testing::f64;

/// One step of `opt` with the gradient `g` written into the parameter (gradients at μ).
void step_with_gradient(MeanFieldOptimizer& opt, ::at::Tensor& p, const ::at::Tensor& g) {
  {
    SampledParameters sample(opt, /*train=*/true);
    p.mutable_grad() = g.clone();
  }
  opt.step();
}

class AdaBayesPaths : public ::testing::TestWithParam<bool> {};  // fused kernels or tensor ops

// research/algorithms.md §6 (the reference code's first step): θ₀ = 1, mean gradient 1, B = 1,
// defaults. AdaBayes: s² = 1/(1/σ² + 1) = 1/11, θ₁ = (1 − 1/11)(1 − 5e-5) = 0.9090454545454545.
// AdaBayes-FP: L = √((1 + 1e-8)/1e-6 + 25) + 5 = 1005.0125049218, θ₁ = (1 − 1/L)(1 − 5e-5).
TEST_P(AdaBayesPaths, FirstStepOracles) {
  ::at::Tensor mu = f64({1.0}).requires_grad_();
  AdaBayes opt({mu}, AdaBayesOptions{});
  opt.set_fused_kernels(GetParam());
  step_with_gradient(opt, mu, f64({1.0}));
  EXPECT_NEAR(opt.posterior_variance()[0].item<double>(), 1.0 / 11.0, 1e-16);
  EXPECT_NEAR(mu.item<double>(), (1.0 - 1.0 / 11.0) * (1.0 - 5e-5), 1e-15);
  EXPECT_NEAR(mu.item<double>(), 0.9090454545454545, 1e-15);

  ::at::Tensor w = f64({1.0}).requires_grad_();
  AdaBayesFp fp({w}, AdaBayesFpOptions{});
  fp.set_fused_kernels(GetParam());
  step_with_gradient(fp, w, f64({1.0}));
  const double l = std::sqrt((1.0 + 1e-8) / 1e-6 + 25.0) + 5.0;
  EXPECT_NEAR(l, 1005.0125049218, 1e-9);
  EXPECT_NEAR(w.item<double>(), (1.0 - 1.0 / l) * (1.0 - 5e-5), 1e-15);
  EXPECT_NEAR(w.item<double>(), 0.998955037255653, 1e-15);
  EXPECT_NEAR(fp.posterior_variance()[0].item<double>(), 1.0 / l, 1e-15);
}

/// A 4–6–2 tanh MLP in float64 with fixed weights, and minibatches of 16 from fixed data.
struct NetProblem {
  ::torch::nn::Sequential model;
  ::at::Tensor x, y;
  explicit NetProblem(double loss_scale = 1.0) : scale(loss_scale) {
    ::torch::manual_seed(3);
    model = ::torch::nn::Sequential(::torch::nn::Linear(4, 6), ::torch::nn::Functional(::torch::tanh),
                                    ::torch::nn::Linear(6, 2));
    model->to(::torch::kFloat64);
    ::torch::manual_seed(4);
    x = ::torch::randn({128, 4}, ::torch::kFloat64);
    y = ::torch::randint(0, 2, {128}, ::torch::kLong);
  }
  double scale;
  /// The mean cross-entropy of minibatch t (16 rows), scaled.
  ::at::Tensor loss(int t) {
    const ::at::Tensor rows = ::torch::arange(16 * (t % 8), 16 * (t % 8) + 16);
    return scale * ::torch::nn::functional::cross_entropy(model->forward(x.index_select(0, rows)), y.index_select(0, rows));
  }
};

/// Runs `opt` on problem a and a plain update (given parameters and mean-loss gradients) on an
/// identical problem b for `steps` steps; the largest parameter difference.
double side_by_side(MeanFieldOptimizer& opt, NetProblem& a, NetProblem& b, int steps,
                    const std::function<void(std::vector<::at::Tensor>&, int)>& plain_step) {
  auto pa = a.model->parameters();
  auto pb = b.model->parameters();
  double deviation = 0.0;
  for (int t = 1; t <= steps; ++t) {
    {
      SampledParameters sample(opt, /*train=*/true);
      opt.zero_grad();
      a.loss(t).backward();
    }
    opt.step();
    for (auto& p : pb) p.mutable_grad() = ::at::Tensor();
    b.loss(t).backward();
    {
      ::torch::NoGradGuard no_grad;
      plain_step(pb, t);
    }
    for (size_t i = 0; i < pa.size(); ++i) {
      deviation = std::max(deviation, (pa[i] - pb[i]).abs().max().item<double>());
    }
  }
  return deviation;
}

/// The rate of step t (from 1) as a fraction of η₀: a warm-up from 0.3 over four steps, then a
/// linear decay to 0.1 at step 40.
double schedule_fraction(int t) {
  return t <= 5 ? 0.3 + 0.7 * (t - 1) / 4.0 : 1.0 - 0.9 * (t - 5) / 35.0;
}

double constant_rate(int) { return 1.0; }

// The reference code's AdaBayes, written plainly (summed-loss gradient g = B·∇ℓ̄), side by side
// with AdaBayes for 40 steps whose rate is η = η₀·fraction(t). Under a schedule the reference
// scales σ² and the drift with the rate in force (σ² = η·(lr_sgd/η₀)/B, μ ← (1 − (c/η₀)·η)μ) and
// starts s² at lr_sgd/B; without that scaling the scheduled run's first step (η = 0.3η₀) already
// differs by far more than rounding.
void expect_adabayes_equals_the_reference(bool fused, double (*fraction)(int)) {
  NetProblem a, b;
  const double eta0 = 0.01, lr_sgd = 0.2, drift = 1e-3;
  const auto o = make_options<AdaBayesOptions>({{"lr", eta0}, {"lr_sgd", lr_sgd}, {"beta1", 0.8},
                                                {"weight_drift", drift}, {"batch_size", int64_t{16}}});
  AdaBayes opt(a.model->parameters(), o);
  opt.set_fused_kernels(fused);
  set_learning_rate(opt, eta0 * fraction(1));
  std::vector<::at::Tensor> m, s2;
  double sigma2 = 0.0;
  const double deviation = side_by_side(opt, a, b, 40, [&](std::vector<::at::Tensor>& ps, int t) {
    const double eta = eta0 * fraction(t);
    sigma2 = eta * (lr_sgd / eta0) / 16.0;
    for (size_t i = 0; i < ps.size(); ++i) {
      if (m.size() <= i) {
        m.push_back(::torch::zeros_like(ps[i]));
        s2.push_back(::torch::full_like(ps[i], lr_sgd / 16.0));
      }
      const ::at::Tensor g = 16.0 * ps[i].grad();
      m[i] = 0.8 * m[i] + 0.2 * g;
      const double d = std::exp(-eta * eta / sigma2);
      s2[i] = s2[i] * d + sigma2 * (1.0 - d);
      s2[i] = 1.0 / (1.0 / s2[i] + g * g);
      ps[i].sub_(s2[i] * m[i] / (1.0 - std::pow(0.8, t)));
      ps[i].mul_(1.0 - (drift / eta0) * eta);
    }
    set_learning_rate(opt, eta0 * fraction(t + 1));
  });
  EXPECT_LE(deviation, 1e-12);
  const auto variance = opt.posterior_variance();
  for (size_t i = 0; i < s2.size(); ++i) {
    EXPECT_LE((variance[i] - s2[i]).abs().max().item<double>() / sigma2, 1e-12);
  }
}

// The reference code's AdaBayes-FP, written plainly, in the same way: σ² scaled (a = 1/(2σ²)
// follows the rate), the drift per step; its 1/L view uses the scaled σ² too.
void expect_adabayes_fp_equals_the_reference(bool fused, double (*fraction)(int)) {
  NetProblem a, b;
  const double eta0 = 0.01, lr_sgd = 0.2;
  const auto o = make_options<AdaBayesFpOptions>({{"lr", eta0}, {"lr_sgd", lr_sgd}, {"beta1", 0.8},
                                                  {"beta2", 0.99}, {"eps", 1e-6},
                                                  {"weight_drift", 1e-3}, {"batch_size", int64_t{16}}});
  AdaBayesFp opt(a.model->parameters(), o);
  opt.set_fused_kernels(fused);
  set_learning_rate(opt, eta0 * fraction(1));
  std::vector<::at::Tensor> m, v, inverse_l;
  const double deviation = side_by_side(opt, a, b, 40, [&](std::vector<::at::Tensor>& ps, int t) {
    const double eta = eta0 * fraction(t);
    const double a_half = 0.5 / (eta * (lr_sgd / eta0) / 16.0);  // a = 1/(2σ²)
    inverse_l.assign(ps.size(), ::at::Tensor());
    for (size_t i = 0; i < ps.size(); ++i) {
      if (m.size() <= i) {
        m.push_back(::torch::zeros_like(ps[i]));
        v.push_back(::torch::zeros_like(ps[i]));
      }
      const ::at::Tensor g = 16.0 * ps[i].grad();
      m[i] = 0.8 * m[i] + 0.2 * g;
      v[i] = 0.99 * v[i] + 0.01 * g * g;
      const ::at::Tensor v_hat = v[i] / (1.0 - std::pow(0.99, t)) + 1e-6;
      const ::at::Tensor l = (v_hat / (eta * eta) + a_half * a_half).sqrt() + a_half;
      inverse_l[i] = 1.0 / l;
      ps[i].sub_(m[i] / (1.0 - std::pow(0.8, t)) / l);
      ps[i].mul_(1.0 - 1e-3);
    }
    set_learning_rate(opt, eta0 * fraction(t + 1));
  });
  EXPECT_LE(deviation, 1e-12);
  set_learning_rate(opt, eta0 * fraction(40));  // the rate of the last step
  const auto variance = opt.posterior_variance();
  for (size_t i = 0; i < inverse_l.size(); ++i) {
    EXPECT_LE(((variance[i] - inverse_l[i]) / inverse_l[i]).abs().max().item<double>(), 1e-12);
  }
}

TEST_P(AdaBayesPaths, EqualsTheFilterWrittenPlainly) {
  expect_adabayes_equals_the_reference(GetParam(), constant_rate);
}

TEST_P(AdaBayesPaths, FixedPointEqualsItsEquationsWrittenPlainly) {
  expect_adabayes_fp_equals_the_reference(GetParam(), constant_rate);
}

TEST_P(AdaBayesPaths, UnderAScheduleEqualsTheReference) {
  expect_adabayes_equals_the_reference(GetParam(), schedule_fraction);
}

TEST_P(AdaBayesPaths, FixedPointUnderAScheduleEqualsTheReference) {
  expect_adabayes_fp_equals_the_reference(GetParam(), schedule_fraction);
}

// A rate raised far above η₀ would make AdaBayes' scaled drift c·η/η₀ reach 1 (μ ← 0 or worse):
// refused with a sentence.
TEST(AdaBayes, ADriftScaledToOneIsRefused) {
  ::at::Tensor mu = f64({1.0}).requires_grad_();
  AdaBayes opt({mu}, make_options<AdaBayesOptions>({{"lr", 1e-3}, {"weight_drift", 0.5}}));
  set_learning_rate(opt, 2e-3);
  try {
    step_with_gradient(opt, mu, f64({1.0}));
    FAIL() << "a drift of 1 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must stay below 1"), std::string::npos) << e.what();
  }
}

// AdaBayes-FP with no prior (lr_sgd = inf: a = 0), ε = 0 and no drift is Adam with ε = 0: L =
// √v̂/η, and Adam is unchanged by the gradient's scale B = 16 (a power of two: exact).
TEST_P(AdaBayesPaths, FixedPointWithoutPriorIsAdam) {
  NetProblem a, b;
  const auto o = make_options<AdaBayesFpOptions>({{"lr", 0.01}, {"lr_sgd", kInf}, {"eps", 0.0},
                                                  {"weight_drift", 0.0}, {"batch_size", int64_t{16}}});
  AdaBayesFp opt(a.model->parameters(), o);
  opt.set_fused_kernels(GetParam());
  ::torch::optim::Adam adam(b.model->parameters(), ::torch::optim::AdamOptions(0.01).eps(0.0));
  const double deviation = side_by_side(opt, a, b, 40, [&](std::vector<::at::Tensor>&, int) {
    adam.step();
  });
  EXPECT_LE(deviation, 1e-12);
}

// With drift c, it is AdamW with the decay applied after the step (the paper's prior dynamics,
// eq. 9): θ ← (1 − c)(θ − ηΔ). LibTorch's AdamW decays first, θ(1 − ηλ) − ηΔ: with ηλ = c the
// two differ by c·ηΔ, at the first step c·η·sign(g) (Δ = g/|g| when ε = 0).
TEST_P(AdaBayesPaths, FixedPointWithoutPriorIsAdamWWithTheDecayAfterTheStep) {
  const double eta = 0.01, c = 1e-3;
  NetProblem a, b;
  const auto o = make_options<AdaBayesFpOptions>({{"lr", eta}, {"lr_sgd", kInf}, {"eps", 0.0},
                                                  {"weight_drift", c}, {"batch_size", int64_t{16}}});
  AdaBayesFp opt(a.model->parameters(), o);
  opt.set_fused_kernels(GetParam());
  std::vector<::at::Tensor> m, v;
  const double deviation = side_by_side(opt, a, b, 40, [&](std::vector<::at::Tensor>& ps, int t) {
    for (size_t i = 0; i < ps.size(); ++i) {  // AdamW (Loshchilov & Hutter), decay after the step
      if (m.size() <= i) {
        m.push_back(::torch::zeros_like(ps[i]));
        v.push_back(::torch::zeros_like(ps[i]));
      }
      const ::at::Tensor g = ps[i].grad();
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      ps[i].sub_(eta * (m[i] / (1.0 - std::pow(0.9, t))) / (v[i] / (1.0 - std::pow(0.999, t))).sqrt());
      ps[i].mul_(1.0 - c);
    }
  });
  EXPECT_LE(deviation, 1e-12);

  // One step from the same point against LibTorch's AdamW.
  ::at::Tensor w = f64({0.5, -2.0, 3.0}).requires_grad_();
  ::at::Tensor u = w.detach().clone().requires_grad_();
  AdaBayesFp fp({w}, o);
  fp.set_fused_kernels(GetParam());
  const ::at::Tensor g = f64({0.3, -1.5, 2e-3});
  step_with_gradient(fp, w, g);
  ::torch::optim::AdamW adamw({u}, ::torch::optim::AdamWOptions(eta).eps(0.0).weight_decay(c / eta));
  u.mutable_grad() = g.clone();
  adamw.step();
  EXPECT_LE((w - u - c * eta * g.sign()).abs().max().item<double>(), 1e-15);
}

/// Steps `opt` on a problem whose loss is scaled so that g²σ² is small, compares every step's
/// displacement Δ with SGD's lr_sgd·ĝ from the same point, and returns the largest ratio of
/// |Δ − lr_sgd·ĝ|/|lr_sgd·ĝ| (less the rounding of reading Δ off θ) to `bound(t, max g²)`.
double sgd_limit_ratio(MeanFieldOptimizer& opt, NetProblem& p, double lr_sgd, double batch,
                       const std::function<double(int, double)>& bound) {
  auto ps = p.model->parameters();
  double worst = 0.0, g2_max = 0.0;
  for (int t = 1; t <= 20; ++t) {
    std::vector<::at::Tensor> before, grads;
    {
      SampledParameters sample(opt, /*train=*/true);
      opt.zero_grad();
      p.loss(t).backward();
      for (auto& q : ps) {
        before.push_back(q.detach().clone());
        grads.push_back(q.grad().clone());
        g2_max = std::max(g2_max, (batch * q.grad()).square().max().item<double>());
      }
    }
    opt.step();
    for (size_t i = 0; i < ps.size(); ++i) {
      const ::at::Tensor sgd = lr_sgd * grads[i];
      const ::at::Tensor mask = sgd.abs() > 0;
      // Δ is read off the parameters: less the rounding of θ_t and θ_{t+1} (≤ 2⁻⁵²|θ| each).
      const ::at::Tensor rounding = 4.5e-16 * before[i].abs();
      const ::at::Tensor excess = (((before[i] - ps[i]) - sgd).abs() - rounding).clamp_min(0.0);
      const ::at::Tensor rel = excess / sgd.abs();
      worst = std::max(worst, rel.masked_select(mask).max().item<double>() / bound(t, g2_max));
    }
  }
  return worst;
}

// Small gradients (the low-data limit): with β₁ = 0 and no drift, AdaBayes' s² stays within a
// factor 1/(1 + tσ²G) of σ² (each step adds at most G = max g² to the precision, and the predict
// step never takes s² ≤ σ² above σ²), so Δ = s²·g = lr_sgd·ĝ·(1 − r), 0 ≤ r ≤ tσ²G. AdaBayes-FP:
// L ≤ 2a + v̂/(4η²a) (√(a² + x) ≤ a + x/2a) with v̂ ≤ G, so r ≤ G/(4η²a²).
TEST_P(AdaBayesPaths, SmallGradientsGiveSgdWithLearningRateLrSgd) {
  {
    NetProblem p(1e-3);
    const auto o = make_options<AdaBayesOptions>(
        {{"lr_sgd", 0.1}, {"beta1", 0.0}, {"weight_drift", 0.0}, {"batch_size", int64_t{4}}});
    AdaBayes opt(p.model->parameters(), o);
    opt.set_fused_kernels(GetParam());
    const double sigma2 = 0.1 / 4;
    EXPECT_LE(sgd_limit_ratio(opt, p, 0.1, 4.0, [&](int t, double g2) { return t * sigma2 * g2; }),
              1.0);
  }
  {
    NetProblem p(1e-5);
    const auto o = make_options<AdaBayesFpOptions>({{"lr_sgd", 0.1}, {"beta1", 0.0}, {"eps", 0.0},
                                                    {"weight_drift", 0.0}, {"batch_size", int64_t{4}}});
    AdaBayesFp opt(p.model->parameters(), o);
    opt.set_fused_kernels(GetParam());
    const double a = 0.5 / (0.1 / 4), eta = 1e-3;
    EXPECT_LE(sgd_limit_ratio(opt, p, 0.1, 4.0,
                              [&](int, double g2) { return g2 / (4 * eta * eta * a * a); }),
              1.0);
  }
}

// Stationary gradients ±γ (random signs, G = γ²): AdaBayes' variance converges to the fixed point
// s* of s ↦ 1/(1/(d·s + σ²(1 − d)) + G), the root of G·d·s² + (1 − d)(1 + Gσ²)s − σ²(1 − d) = 0
// (eq. 12's steady state), and s*·γ/η = 1 − δ with 0 < δ ≤ δ₁ = η(1/σ² + G)/(2γ) (first order in
// η): the RMSprop/Adam preconditioner η/√G (§2.1.1). There Adam's v̂ is exactly G, so AdaBayes'
// step is Adam's (β₁ = 0.9) or RMSprop's (β₁ = 0) times s*·γ/η.
TEST_P(AdaBayesPaths, StationaryGradientsGiveRmspropAndAdam) {
  const double gamma = 2.0, g2 = gamma * gamma;
  for (const double lr_sgd : {0.5, kInf}) {
    for (const double eta : {0.02, 0.005}) {
      const int steps = static_cast<int>(30.0 / (eta * gamma));  // (1 − 2ηγ)^steps ≈ e^−60
      const double sigma2 = lr_sgd;                               // B = 1
      const double d = std::isinf(sigma2) ? 1.0 : std::exp(-eta * eta / sigma2);
      const double q = std::isinf(sigma2) ? eta * eta : -sigma2 * std::expm1(-eta * eta / sigma2);
      const double b = (1.0 - d) + g2 * q;  // (1 − d)(1 + Gσ²) = (1 − d) + Gq
      const double s_star = (-b + std::sqrt(b * b + 4.0 * g2 * d * q)) / (2.0 * g2 * d);
      const double delta = 1.0 - s_star * gamma / eta;
      const double delta1 = eta * ((std::isinf(sigma2) ? 0.0 : 1.0 / sigma2) + g2) / (2.0 * gamma);
      EXPECT_GT(delta, 0.0);
      EXPECT_LE(delta, delta1);

      for (const double beta1 : {0.0, 0.9}) {
        ::at::Tensor mu = ::torch::zeros({64}, ::torch::kFloat64).requires_grad_();
        ::at::Tensor ref = ::torch::zeros({64}, ::torch::kFloat64).requires_grad_();
        AdaBayes opt({mu}, make_options<AdaBayesOptions>({{"lr", eta}, {"lr_sgd", lr_sgd},
                                                          {"beta1", beta1}, {"weight_drift", 0.0}}));
        opt.set_fused_kernels(GetParam());
        std::unique_ptr<::torch::optim::Optimizer> classic;
        if (beta1 == 0.0) {
          classic = std::make_unique<::torch::optim::RMSprop>(
              std::vector<::at::Tensor>{ref}, ::torch::optim::RMSpropOptions(eta).alpha(0.9).eps(0.0));
        } else {
          classic = std::make_unique<::torch::optim::Adam>(
              std::vector<::at::Tensor>{ref}, ::torch::optim::AdamOptions(eta).eps(0.0));
        }
        ::torch::manual_seed(5);
        ::at::Tensor step_ab, step_classic;
        for (int t = 1; t <= steps; ++t) {
          const ::at::Tensor g = gamma * (2.0 * ::torch::randint(0, 2, {64}, ::torch::kFloat64) - 1.0);
          const ::at::Tensor mu0 = mu.detach().clone(), ref0 = ref.detach().clone();
          step_with_gradient(opt, mu, g);
          ref.mutable_grad() = g.clone();
          classic->step();
          step_ab = mu0 - mu.detach();
          step_classic = ref0 - ref.detach();
        }
        const ::at::Tensor s = opt.posterior_variance()[0];
        EXPECT_LE((s / s_star - 1.0).abs().max().item<double>(), 1e-12) << eta << " " << lr_sgd;
        // RMSprop's average is (1 − αᵗ)G with α = 0.9: αᵗ < 1e-30 here. Coordinates whose
        // momentum nearly cancelled (|Δ| < 1e-3·η) are left out: there the ratio measures rounding.
        const ::at::Tensor kept = step_classic.abs() > 1e-3 * eta;
        ASSERT_GT(kept.sum().item<int64_t>(), 32);
        const ::at::Tensor ratio = (step_ab / step_classic).masked_select(kept);
        EXPECT_LE((ratio - s_star * gamma / eta).abs().max().item<double>(), 1e-9)
            << "beta1 " << beta1 << " eta " << eta << " lr_sgd " << lr_sgd;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndTensorOps, AdaBayesPaths, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "fused" : "tensor"; });

// The posterior: AdaBayes' predictive samples θ = μ + s·ε; AdaBayes-FP has none.
TEST(AdaBayes, PredictiveSamplesThePosterior) {
  ::at::Tensor mu = f64({1.0, -1.0}).requires_grad_();
  AdaBayes opt({mu}, make_options<AdaBayesOptions>({{"weight_drift", 0.0}}));
  step_with_gradient(opt, mu, f64({1.0, 3.0}));
  EXPECT_TRUE(opt.has_posterior());
  const ::at::Tensor mean = mu.detach().clone();
  const ::at::Tensor s = opt.posterior_variance()[0].sqrt();
  opt.sample_parameters(false, {f64({0.5, -2.0})});
  EXPECT_LE((mu.detach() - (mean + s * f64({0.5, -2.0}))).abs().max().item<double>(), 1e-15);
  opt.restore_parameters();
  EXPECT_TRUE(mu.detach().equal(mean));

  ::at::Tensor w = f64({1.0}).requires_grad_();
  AdaBayesFp fp({w}, AdaBayesFpOptions{});
  EXPECT_FALSE(fp.has_posterior());
  EXPECT_THROW(fp.sample_parameters(false), Error);
}

TEST(AdaBayes, BatchSizeDefaultsToTheRunsMinibatchSize) {
  ::at::Tensor w = f64({1.0}).requires_grad_();
  for (const char* name : {"adabayes", "adabayes-fp"}) {
    const auto run = make_optimizer(name, {w}, {}, OptimizerContext{1000, 0, 128});
    const auto given = make_optimizer(name, {w}, {{"batch_size", int64_t{32}}}, OptimizerContext{1000, 0, 128});
    const auto unknown = make_optimizer(name, {w}, {}, OptimizerContext{1000, 0, 0});
    const auto batch = [](const ::torch::optim::Optimizer& o) {
      const auto* a = dynamic_cast<const AdaBayes*>(&o);
      return a != nullptr ? a->options().batch_size
                          : dynamic_cast<const AdaBayesFp&>(o).options().batch_size;
    };
    EXPECT_EQ(batch(*run), 128) << name;
    EXPECT_EQ(batch(*given), 32) << name;
    EXPECT_EQ(batch(*unknown), 1) << name;  // the reference's default when nothing is known
  }
  const auto effective = effective_options("adabayes", {}, OptimizerContext{1000, 0, 64});
  for (const auto& [key, value] : effective) {
    if (key == "batch_size") { EXPECT_EQ(std::get<int64_t>(value), 64); }
  }
}

TEST(AdaBayes, RejectsBadOptions) {
  EXPECT_THROW(make_options<AdaBayesOptions>({{"lr", 0.0}}), Error);
  EXPECT_THROW(make_options<AdaBayesOptions>({{"lr_sgd", -1.0}}), Error);
  EXPECT_THROW(make_options<AdaBayesOptions>({{"beta1", 1.0}}), Error);
  EXPECT_THROW(make_options<AdaBayesOptions>({{"weight_drift", 1.0}}), Error);
  EXPECT_THROW(make_options<AdaBayesOptions>({{"batch_size", int64_t{0}}}), Error);
  EXPECT_THROW(make_options<AdaBayesFpOptions>({{"beta2", 1.0}}), Error);
  EXPECT_THROW(make_options<AdaBayesFpOptions>({{"eps", -1e-8}}), Error);
  EXPECT_THROW(make_options<AdaBayesFpOptions>({{"mc_samples", int64_t{2}}}), Error);
}

}  // namespace
}  // namespace blr::torch
