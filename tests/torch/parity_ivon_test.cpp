// Parity of the two IVON implementations (DESIGN §4.1): the LibTorch optimizer
// (include/blr/torch/optim/ivon.hpp, fused CPU kernels and the tensor-op path) and the core preset
// (include/blr/algorithms/ivon.hpp: diagonal Gaussian × reparameterisation Hessian × iBLR) run on
// one logistic regression with the same noise stream, in float64. They must agree to ~1e-10.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "blr/algorithms/ivon.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/torch/optim/ivon.hpp"

namespace {

class IvonParity : public ::testing::TestWithParam<bool> {};  // fused kernels or tensor ops

TEST_P(IvonParity, CorePresetAndTorchOptimizerAgree) {
  const blr::Index n = 300, d = 6;
  blr::Rng data(5);
  blr::Matrix x(n, d);
  blr::Vector y(n);
  for (blr::Index i = 0; i < n; ++i) {
    x(i, 0) = 1.0;
    for (blr::Index j = 1; j < d; ++j) x(i, j) = data.normal();
    y[i] = data.uniform() < 1.0 / (1.0 + std::exp(-(x(i, 1) - 0.5 * x(i, 2)))) ? 1.0 : 0.0;
  }
  const blr::LogisticRegression sum_loss(x, y);  // Σ_i ℓ_i = λ·(mean loss) with λ = n

  blr::IvonOptions core;
  core.lr = 0.05;
  core.ess = static_cast<double>(n);
  core.hess_init = 0.3;
  core.beta2 = 0.99;
  core.weight_decay = 1e-2;
  core.clip_radius = 3.0;
  const blr::Ivon preset = blr::make_ivon(core);
  auto state = blr::init(blr::ivon_initial(blr::Vector::Zero(d), core));

  const auto f64 = ::torch::dtype(::torch::kFloat64);
  const ::at::Tensor inputs = ::torch::from_blob(blr::Matrix(x.transpose()).data(), {n, d}, f64).clone();
  const ::at::Tensor targets = ::torch::from_blob(blr::Vector(y).data(), {n}, f64).clone();
  ::at::Tensor theta = ::torch::zeros({d}, f64).requires_grad_();
  blr::torch::Ivon optimizer({theta}, blr::torch::IvonOptions(core.lr)
                                          .ess(core.ess)
                                          .hess_init(core.hess_init)
                                          .beta2(core.beta2)
                                          .weight_decay(core.weight_decay)
                                          .clip_radius(core.clip_radius));
  optimizer.set_fused_kernels(GetParam());

  blr::Rng noise(7);
  double deviation = 0.0;
  for (int t = 0; t < 40; ++t) {
    const blr::Vector eps = noise.normal_vector(d);
    blr::step(state, preset.estimator.estimate_with_noise(state.q, sum_loss, {eps}), preset.policy);

    const ::at::Tensor eps_t = ::torch::from_blob(blr::Vector(eps).data(), {d}, f64).clone();
    optimizer.sample_parameters(true, {eps_t});
    optimizer.zero_grad();
    ::torch::binary_cross_entropy_with_logits(::torch::mv(inputs, theta), targets).backward();
    optimizer.restore_parameters();
    optimizer.step();

    const ::at::Tensor mu = theta.detach();
    const ::at::Tensor h = optimizer.curvature()[0];
    const blr::Vector h_core = blr::ivon_hessian(state.q, core);
    for (blr::Index j = 0; j < d; ++j) {
      deviation = std::max(deviation, std::abs(mu[j].item<double>() - state.q.mean[j]));
      deviation = std::max(deviation, std::abs(h[j].item<double>() - h_core[j]));
    }
  }
  // Both are the same float64 arithmetic in a different order: ~40 steps × 1e-16 × condition.
  EXPECT_LT(deviation, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Paths, IvonParity, ::testing::Values(true, false));

}  // namespace
