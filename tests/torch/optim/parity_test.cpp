// Parity of the two layers (DESIGN §4.1): each LibTorch optimizer (blr/torch/optim/*.hpp, fused
// CPU kernels and the tensor-op path) against its core preset (blr/algorithms/*.hpp) on one
// logistic regression with the same draws, in float64. Both run the same per-coordinate step
// (blr/rule/policy.hpp) in different units — the core on the sum loss with the posterior
// precision S as its state, the optimizer on the mean loss with the precision per example P —
// so they agree up to rounding: over 40 steps of O(1) values with condition numbers ≲ 10³, a
// few hundred roundings of 1e-16 each, far below the 1e-10 required.
#include <gtest/gtest.h>
#include <cstdio>
#include <torch/torch.h>

#include "blr/algorithms/ivon.hpp"
#include "blr/algorithms/ogn_vogn.hpp"
#include "blr/algorithms/vadam.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/curvature/per_example.hpp"
#include "blr/torch/optim/vadam.hpp"
#include "blr/torch/optim/vogn.hpp"
#include "tensor_helpers.hpp"

namespace {

constexpr blr::Index kN = 300, kD = 6;
constexpr int kSteps = 40;
using ::blr::torch::testing::kF64;

/// A logistic-regression problem in both layers: Σ_i ℓ_i for the core, mean BCE for LibTorch.
struct ParityProblem {
  blr::Matrix x;
  blr::Vector y;
  ::at::Tensor inputs, targets;
  ParityProblem() : x(kN, kD), y(kN) {
    blr::Rng data(5);
    for (blr::Index i = 0; i < kN; ++i) {
      x(i, 0) = 1.0;
      for (blr::Index j = 1; j < kD; ++j) x(i, j) = data.normal();
      y[i] = data.uniform() < 1.0 / (1.0 + std::exp(-(x(i, 1) - 0.5 * x(i, 2)))) ? 1.0 : 0.0;
    }
    inputs = ::torch::from_blob(blr::Matrix(x.transpose()).data(), {kN, kD}, kF64).clone();
    targets = ::torch::from_blob(blr::Vector(y).data(), {kN}, kF64).clone();
  }
  blr::LogisticRegression sum_loss() const { return blr::LogisticRegression(x, y); }

  /// Forward and backward of the mean loss at θ (held by `theta`), and for VOGN/OGN the exact
  /// per-example squared gradients of the linear predictor z = Xθ.
  void backward(blr::torch::MeanFieldOptimizer& opt, ::at::Tensor& theta) const {
    opt.zero_grad();
    ::at::Tensor z = ::torch::mm(inputs, theta.view({kD, 1}));
    z.retain_grad();
    ::torch::binary_cross_entropy_with_logits(z.view({kN}), targets).backward();
    if (opt.needs_squared_gradients()) {
      opt.add_squared_gradients(
          {blr::torch::linear_squared_gradients(inputs, z.grad(), false).weight.view({kD})});
    }
  }
};

using ::blr::torch::testing::to_tensor;

double max_diff(const ::at::Tensor& t, const blr::Vector& v) {
  double d = 0.0;
  for (blr::Index j = 0; j < v.size(); ++j) d = std::max(d, std::abs(t[j].item<double>() - v[j]));
  return d;
}

/// The largest relative difference of the posterior precisions.
double max_relative_diff(const ::at::Tensor& t, const blr::Vector& v) {
  double d = 0.0;
  for (blr::Index j = 0; j < v.size(); ++j) {
    d = std::max(d, std::abs(t[j].item<double>() - v[j]) / std::abs(v[j]));
  }
  return d;
}

/// Runs both layers for kSteps steps on the same draws; `core_step(eps)` steps the core preset
/// and returns (mean, posterior precision); returns the worst deviation of either.
template <class CoreStep>
double run_parity(blr::torch::MeanFieldOptimizer& opt, ::at::Tensor& theta, bool fused,
                  bool perturbs, const CoreStep& core_step) {
  const ParityProblem problem;
  opt.set_fused_kernels(fused);
  blr::Rng noise(7);
  double deviation = 0.0;
  for (int t = 0; t < kSteps; ++t) {
    const blr::Vector eps = perturbs ? noise.normal_vector(kD) : blr::Vector::Zero(kD);
    const auto [mean, precision] = core_step(eps);
    opt.sample_parameters(true, {to_tensor(eps)});
    problem.backward(opt, theta);
    opt.restore_parameters();
    opt.step();
    deviation = std::max({deviation, max_diff(theta.detach(), mean),
                          max_relative_diff(opt.posterior_precision()[0], precision)});
  }
  ::testing::Test::RecordProperty("max_deviation", std::to_string(deviation));
  std::printf("[ parity   ] %s (%s): max deviation %.1e over %d steps\n", opt.name().c_str(),
              fused ? "fused" : "tensor ops", deviation, kSteps);
  return deviation;
}

class Parity : public ::testing::TestWithParam<bool> {};  // fused kernels or tensor ops

TEST_P(Parity, Ivon) {
  const ParityProblem problem;
  const blr::LogisticRegression sum_loss = problem.sum_loss();
  blr::IvonOptions core;
  core.lr = 0.05;
  core.ess = static_cast<double>(kN);
  core.hess_init = 0.3;
  core.beta2 = 0.99;
  core.weight_decay = 1e-2;
  core.clip_radius = 3.0;
  const blr::Ivon preset = blr::make_ivon(core);
  auto state = blr::init(blr::ivon_initial(blr::Vector::Zero(kD), core));
  blr::torch::IvonOptions options;
  static_cast<blr::IvonOptions&>(options) = core;  // the same options struct in both layers
  ::at::Tensor theta = ::torch::zeros({kD}, kF64).requires_grad_();
  blr::torch::Ivon opt({theta}, options);
  const double deviation = run_parity(opt, theta, GetParam(), true, [&](const blr::Vector& eps) {
    blr::step(state, preset.estimator.estimate_with_noise(state.q, sum_loss, {eps}), preset.policy);
    return std::make_pair(state.q.mean, state.q.precision);
  });
  EXPECT_LT(deviation, 1e-10);
  // IVON's own h agrees too.
  EXPECT_LT(max_diff(opt.curvature()[0], blr::ivon_hessian(state.q, core)), 1e-10);
}

template <class Optimizer, class TorchOptions>
void vogn_parity(bool sample, bool fused) {
  const ParityProblem problem;
  const blr::LogisticRegression sum_loss = problem.sum_loss();  // full batch: example_scale 1
  blr::VognOptions core;
  core.lr = 0.5;
  core.ess = static_cast<double>(kN);
  core.prior_precision = 2.0;
  core.damping = 1e-3;
  core.beta1 = 0.6;
  core.curvature_rate = 0.2;
  core.hess_init = 0.05;
  const blr::GaussNewtonMethod preset = sample ? blr::make_vogn(core) : blr::make_ogn(core);
  auto state = blr::init(blr::vogn_initial(blr::Vector::Zero(kD), core));
  TorchOptions options;
  static_cast<blr::VognOptions&>(options) = core;
  ::at::Tensor theta = ::torch::zeros({kD}, kF64).requires_grad_();
  Optimizer opt({theta}, options);
  const double deviation = run_parity(opt, theta, fused, sample, [&](const blr::Vector& eps) {
    blr::step(state, preset.estimator.estimate_with_noise(state.q, sum_loss, {eps}), preset.policy);
    return std::make_pair(state.q.mean, state.q.precision);
  });
  EXPECT_LT(deviation, 1e-10);
}

TEST_P(Parity, Vogn) { vogn_parity<blr::torch::Vogn, blr::torch::VognOptions>(true, GetParam()); }
TEST_P(Parity, Ogn) { vogn_parity<blr::torch::Ogn, blr::torch::OgnOptions>(false, GetParam()); }

TEST_P(Parity, Vadam) {
  const ParityProblem problem;
  const blr::LogisticRegression sum_loss = problem.sum_loss();
  struct MeanLoss {  // Vadam's core preset works on the mean loss, as the optimizer does
    const blr::LogisticRegression& sum;
    blr::Index dimension() const { return sum.dimension(); }
    double value(const blr::Vector& t) const { return sum.value(t) / kN; }
    blr::Vector gradient(const blr::Vector& t) const { return sum.gradient(t) / kN; }
  } mean_loss{sum_loss};
  blr::VadamOptions core;
  core.lr = 0.05;
  core.ess = static_cast<double>(kN);
  core.prec_init = 10.0;
  core.beta2 = 0.99;
  const blr::Vadam preset = blr::make_vadam(core);
  auto state = blr::init(blr::vadam_initial(blr::Vector::Zero(kD), core));
  blr::torch::VadamOptions options;
  static_cast<blr::VadamOptions&>(options) = core;
  ::at::Tensor theta = ::torch::zeros({kD}, kF64).requires_grad_();
  blr::torch::Vadam opt({theta}, options);
  const double deviation = run_parity(opt, theta, GetParam(), true, [&](const blr::Vector& eps) {
    blr::step(state, preset.estimator.estimate_with_noise(state.q, mean_loss, {eps}), preset.policy);
    return std::make_pair(state.q.mean, blr::vadam_posterior_precision(state.q, core));
  });
  EXPECT_LT(deviation, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Paths, Parity, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "TensorOps"; });

}  // namespace
