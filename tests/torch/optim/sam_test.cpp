// SAM and bSAM on LibTorch (blr/torch/optim/sam.hpp): every step against the equations written
// plainly here (Foret et al. 2021; Möllenhoff & Khan 2023, research/algorithms.md §8.2) on a
// logistic regression split into two parameter tensors (so SAM's norm is global), the lower
// bound of bSAM's precision, learning a small network, the protocol's errors and a state round trip.
//
// Tolerance: the optimizer and the plain loop evaluate the same float64 expressions on the same
// gradients, except that the optimizer's ascent and update run per parameter tensor; the results
// agree to rounding (≲ 1e-15 per step on O(1) values over 10 steps), so 1e-12 is required.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>

#include "blr/torch/nn/mlp.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/sam.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "option_helpers.hpp"
#include "synthetic_data.hpp"
#include "tensor_helpers.hpp"

namespace {

using ::blr::torch::testing::kF64;

/// Mean BCE of a logistic regression with weights w (5) and bias b (1).
struct SamProblem {
  ::at::Tensor x, y;
  SamProblem() {
    ::torch::manual_seed(3);
    x = ::torch::randn({200, 5}, kF64);
    y = (x.matmul(::torch::tensor({1.0, -2.0, 0.5, 0.0, 1.5}, kF64)) + 0.3 +
         0.5 * ::torch::randn({200}, kF64))
            .gt(0)
            .to(::torch::kFloat64);
  }
  ::at::Tensor loss(const ::at::Tensor& w, const ::at::Tensor& b) const {
    return ::torch::binary_cross_entropy_with_logits(x.matmul(w) + b, y);
  }
  /// (∇_w, ∇_b) at (w, b).
  std::pair<::at::Tensor, ::at::Tensor> grad(const ::at::Tensor& w, const ::at::Tensor& b) const {
    auto wv = w.detach().clone().requires_grad_(), bv = b.detach().clone().requires_grad_();
    loss(wv, bv).backward();
    return {wv.grad(), bv.grad()};
  }
  void backward(::torch::optim::Optimizer& opt, const ::at::Tensor& w, const ::at::Tensor& b) const {
    opt.zero_grad();
    loss(w, b).backward();
  }
};

using ::blr::torch::testing::max_abs_diff;

TEST(Sam, EveryStepIsTheAscentThenSgdWithMomentum) {
  const SamProblem problem;
  auto w = ::torch::zeros({5}, kF64).requires_grad_(), b = ::torch::zeros({1}, kF64).requires_grad_();
  auto options = blr::torch::make_options<blr::torch::SamOptions>(
      {{"lr", 0.3}, {"momentum", 0.8}, {"weight_decay", 0.01}, {"rho", 0.1}});
  blr::torch::Sam opt({w, b}, options);
  ::at::Tensor mw = ::torch::zeros({5}, kF64), mb = ::torch::zeros({1}, kF64);
  ::at::Tensor pw = w.detach().clone(), pb = b.detach().clone();
  double deviation = 0.0;
  for (int t = 0; t < 10; ++t) {
    // Plain SAM: ε = ρ g/‖g‖ over all parameters, g̃ at μ + ε, heavy ball with L2.
    const auto [gw, gb] = problem.grad(pw, pb);
    const double norm = std::sqrt(gw.square().sum().item<double>() + gb.square().sum().item<double>());
    const auto [hw, hb] = problem.grad(pw + 0.1 * gw / norm, pb + 0.1 * gb / norm);
    mw = 0.8 * mw + hw + 0.01 * pw;
    mb = 0.8 * mb + hb + 0.01 * pb;
    pw = pw - 0.3 * mw;
    pb = pb - 0.3 * mb;
    for (int k = 0; k < 2; ++k) {
      blr::torch::SampledParameters sample(opt, true);
      problem.backward(opt, w, b);
    }
    opt.step();
    deviation = std::max({deviation, max_abs_diff(w, pw), max_abs_diff(b, pb)});
  }
  std::printf("[ sam      ] max deviation from the plain equations over 10 steps: %.1e\n", deviation);
  EXPECT_LT(deviation, 1e-12);
  EXPECT_TRUE(blr::torch::posterior_variance(opt).empty());  // a point estimate
}

TEST(Bsam, EveryStepIsTheReferenceUpdateOnTheSameNoise) {
  const SamProblem problem;
  auto w = ::torch::zeros({5}, kF64).requires_grad_(), b = ::torch::zeros({1}, kF64).requires_grad_();
  auto options = blr::torch::make_options<blr::torch::BsamOptions>(
      {{"lr", 0.2}, {"ess", 200.0}, {"beta1", 0.8}, {"beta2", 0.9}, {"rho", 0.05},
       {"prior_precision", 4.0}, {"damping", 0.1}, {"hess_init", 0.5}});
  blr::torch::Bsam opt({w, b}, options);
  const double delta = 4.0 / 200.0;
  ::at::Tensor mw = ::torch::zeros({5}, kF64), mb = ::torch::zeros({1}, kF64);
  ::at::Tensor sw = ::torch::full({5}, 0.5, kF64), sb = ::torch::full({1}, 0.5, kF64);
  ::at::Tensor pw = w.detach().clone(), pb = b.detach().clone();
  double deviation = 0.0, bound_violation = 0.0;
  for (int t = 1; t <= 10; ++t) {
    const auto ew = ::torch::randn({5}, kF64), eb = ::torch::randn({1}, kF64);
    // Plain bSAM (research/algorithms.md §8.2, one sub-batch).
    const auto [gw, gb] = problem.grad(pw + ew / (200.0 * sw).sqrt(), pb + eb / (200.0 * sb).sqrt());
    const auto [hw, hb] = problem.grad(pw + 0.05 * gw / sw, pb + 0.05 * gb / sb);
    mw = 0.8 * mw + 0.2 * (hw + delta * pw);
    mb = 0.8 * mb + 0.2 * (hb + delta * pb);
    pw = pw - 0.2 * mw / sw;
    pb = pb - 0.2 * mb / sb;
    sw = 0.9 * sw + 0.1 * (sw.sqrt() * gw.abs() + 0.1 + delta);
    sb = 0.9 * sb + 0.1 * (sb.sqrt() * gb.abs() + 0.1 + delta);
    opt.set_next_noise({ew, eb});
    for (int k = 0; k < 2; ++k) {
      blr::torch::SampledParameters sample(opt, true);
      problem.backward(opt, w, b);
    }
    opt.step();
    const auto s = opt.precision();
    deviation = std::max({deviation, max_abs_diff(w, pw), max_abs_diff(b, pb), max_abs_diff(s[0], sw),
                          max_abs_diff(s[1], sb)});
    // s_t ≥ β₂ᵗ s₀ + (1 − β₂ᵗ)(damping + δ), since √s·|g| ≥ 0.
    const double floor = std::pow(0.9, t) * 0.5 + (1 - std::pow(0.9, t)) * (0.1 + delta);
    bound_violation = std::max(bound_violation, floor - s[0].min().item<double>());
  }
  std::printf("[ bsam     ] max deviation from the plain equations over 10 steps: %.1e\n", deviation);
  EXPECT_LT(deviation, 1e-12);
  EXPECT_LE(bound_violation, 1e-15);
  // The posterior: variance 1/(N s).
  EXPECT_LT(max_abs_diff(opt.posterior_variance()[0], (200.0 * sw).reciprocal()), 1e-15);
}

TEST(Sam, BothLearnASmallNetworkAndBsamPredicts) {
  const auto data = blr::torch::testing::synthetic_data(600, 300);
  for (const std::string name : {"sam", "bsam"}) {
    ::torch::manual_seed(1);
    auto model = std::make_shared<blr::torch::Mlp>(64, std::vector<int64_t>{32}, 3);
    auto opt = blr::torch::make_optimizer(name, model->parameters(), {{"lr", 0.05}}, {600, 7});
    auto* v = blr::torch::as_variational(*opt);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->training_samples(), 2);
    for (int e = 0; e < 8; ++e) {
      for (int64_t i = 0; i < 600; i += 50) {
        const auto x = data->train.x.slice(0, i, i + 50), y = data->train.y.slice(0, i, i + 50);
        for (int k = 0; k < 2; ++k) {
          blr::torch::SampledParameters sample(*v, true);
          opt->zero_grad();
          ::torch::cross_entropy_loss(model->forward(x), y).backward();
        }
        opt->step();
      }
    }
    const blr::torch::Model m(model);
    const auto lp = blr::torch::predict_log_probs(m, data->test.x);
    const double acc = lp.argmax(1).eq(data->test.y).to(::torch::kDouble).mean().item<double>();
    std::printf("[ %-8s ] synthetic test accuracy at the mean %.3f\n", name.c_str(), acc);
    EXPECT_GE(acc, 0.9) << name;
    EXPECT_EQ(v->has_posterior(), name == "bsam");
    if (name == "bsam") {
      const auto pred = blr::torch::predictive_log_probs(m, *v, data->test.x, 8);
      EXPECT_GE(pred.argmax(1).eq(data->test.y).to(::torch::kDouble).mean().item<double>(), 0.9);
    }
  }
}

TEST(Sam, TheProtocolIsTwoSamplesPerStep) {
  auto w = ::torch::zeros({3}, kF64).requires_grad_();
  blr::torch::Sam opt({w}, blr::torch::SamOptions{});
  auto one_sample = [&] {
    blr::torch::SampledParameters sample(opt, true);
    opt.zero_grad();
    w.sum().backward();
  };
  one_sample();
  try {
    opt.step();
    ADD_FAILURE() << "a step after one sample was taken";
  } catch (const blr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("two training samples"), std::string::npos) << e.what();
  }
  one_sample();
  EXPECT_THROW(opt.sample_parameters(true), blr::Error);  // a third sample before step()
  opt.step();
  EXPECT_EQ(opt.step_count(), 1);
  // Bad options are one sentence naming the option.
  try {
    blr::torch::Bsam({w}, blr::torch::make_options<blr::torch::BsamOptions>({{"ess", 10.0}, {"beta2", 1.0}}));
    ADD_FAILURE() << "beta2 = 1 accepted";
  } catch (const blr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'beta2'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(blr::torch::Bsam({w}, blr::torch::BsamOptions{}), blr::Error);  // ess missing
}

TEST(Bsam, StateRoundTripContinuesIdentically) {
  const SamProblem problem;
  auto options = blr::torch::make_options<blr::torch::BsamOptions>({{"ess", 200.0}, {"lr", 0.1}});
  auto run_step = [&](blr::torch::Bsam& o, ::at::Tensor& w, ::at::Tensor& b, const std::vector<::at::Tensor>& eps) {
    o.set_next_noise(eps);
    for (int k = 0; k < 2; ++k) {
      blr::torch::SampledParameters sample(o, true);
      problem.backward(o, w, b);
    }
    o.step();
  };
  auto w = ::torch::zeros({5}, kF64).requires_grad_(), b = ::torch::zeros({1}, kF64).requires_grad_();
  blr::torch::Bsam opt({w, b}, options);
  for (int t = 0; t < 3; ++t) run_step(opt, w, b, {::torch::randn({5}, kF64), ::torch::randn({1}, kF64)});
  ::torch::serialize::OutputArchive out;
  opt.save(out);
  std::stringstream buffer;
  out.save_to(buffer);
  auto w2 = w.detach().clone().requires_grad_(), b2 = b.detach().clone().requires_grad_();
  blr::torch::Bsam restored({w2, b2}, options);
  ::torch::serialize::InputArchive in;
  in.load_from(buffer);
  restored.load(in);
  EXPECT_EQ(restored.step_count(), 3);
  const std::vector<::at::Tensor> eps{::torch::randn({5}, kF64), ::torch::randn({1}, kF64)};
  run_step(opt, w, b, eps);
  run_step(restored, w2, b2, eps);
  EXPECT_TRUE(w2.equal(w));
  EXPECT_TRUE(restored.precision()[0].equal(opt.precision()[0]));
}

}  // namespace
