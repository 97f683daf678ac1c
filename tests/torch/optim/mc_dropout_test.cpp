// MC dropout as the BLR on LibTorch (blr/torch/optim/mc_dropout.hpp): with nothing dropped it is
// Adam (torch::optim::Adam step by step); with given masks every step is eqs. 42–43's slab estimate
// fed to Adam's equations written plainly here; the predictive samples have the spike-and-slab
// moments; it learns a small network; state round trip; bad options.
//
// Tolerance: both sides evaluate Adam in float64 on the same gradients; they differ in the order of
// operations (√(s/(1−β₂ᵗ)) against √s/√(1−β₂ᵗ), one rounding each), ≲ 1e-15 relative per step on
// O(1) values, so 1e-12 over 10 steps.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>

#include "blr/torch/nn/mlp.hpp"
#include "blr/torch/optim/mc_dropout.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "option_helpers.hpp"
#include "synthetic_data.hpp"
#include "tensor_helpers.hpp"

namespace {

using ::blr::torch::testing::kF64;

/// A two-layer network's loss on fixed data, weights W1 [4, 3], b1 [4], W2 [2, 4].
struct Net {
  ::at::Tensor x = ::torch::randn({30, 3}, kF64), y = ::torch::randint(0, 2, {30}, ::torch::kLong);
  ::at::Tensor loss(const ::at::Tensor& w1, const ::at::Tensor& b1, const ::at::Tensor& w2) const {
    return ::torch::cross_entropy_loss(::torch::tanh(x.matmul(w1.t()) + b1).matmul(w2.t()), y);
  }
};

using P = std::vector<::at::Tensor>;

P make_params() {
  ::torch::manual_seed(2);
  return {::torch::randn({4, 3}, kF64).requires_grad_(), ::torch::randn({4}, kF64).requires_grad_(),
          ::torch::randn({2, 4}, kF64).requires_grad_()};
}

double max_diff(const P& a, const P& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i].detach() - b[i].detach()).abs().max().item<double>());
  return d;
}

TEST(McDropout, NothingDroppedIsAdam) {
  ::torch::manual_seed(1);
  const Net net;
  P mine = make_params(), theirs = make_params();
  blr::torch::McDropout opt(mine, blr::torch::make_options<blr::torch::McDropoutOptions>(
                                      {{"lr", 0.05}, {"keep_probability", 1.0}}));
  ::torch::optim::Adam adam(theirs, ::torch::optim::AdamOptions(0.05));
  double deviation = 0.0;
  for (int t = 0; t < 10; ++t) {
    {
      blr::torch::SampledParameters sample(opt, true);
      opt.zero_grad();
      net.loss(mine[0], mine[1], mine[2]).backward();
    }
    opt.step();
    adam.zero_grad();
    net.loss(theirs[0], theirs[1], theirs[2]).backward();
    adam.step();
    deviation = std::max(deviation, max_diff(mine, theirs));
  }
  std::printf("[ dropout  ] keep 1 vs torch::optim::Adam over 10 steps: %.1e\n", deviation);
  EXPECT_LT(deviation, 1e-12);
}

TEST(McDropout, EveryStepIsTheSlabEstimateThroughAdam) {
  ::torch::manual_seed(1);
  const Net net;
  P params = make_params();
  const double keep = 0.6, lr = 0.05, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  blr::torch::McDropout opt(params, blr::torch::make_options<blr::torch::McDropoutOptions>(
                                        {{"lr", lr}, {"keep_probability", keep},
                                         {"input_keep_probability", keep}}));
  // Plain: slab means m, Adam's u and s.
  P m, u, s;
  for (const auto& p : make_params()) {
    m.push_back(p.detach().clone());
    u.push_back(::torch::zeros_like(p));
    s.push_back(::torch::zeros_like(p));
  }
  // At rest the weights with units hold π₁·m; the bias (no units) holds m.
  EXPECT_LT((params[0].detach() - keep * m[0]).abs().max().item<double>(), 1e-15);
  EXPECT_TRUE(params[1].detach().equal(m[1]));
  double deviation = 0.0;
  for (int t = 1; t <= 10; ++t) {
    const ::at::Tensor z1 = ::torch::bernoulli(::torch::full({3}, keep, kF64));
    const ::at::Tensor z2 = ::torch::bernoulli(::torch::full({4}, keep, kF64));
    // The plain step: gradients at θ̃ = m⊙z, ĝ = z⊙g/π₁, Ĥ = z⊙g²/π₁, then Adam.
    P theta{(m[0] * z1.view({1, 3})).requires_grad_(), m[1].clone().requires_grad_(),
            (m[2] * z2.view({1, 4})).requires_grad_()};
    net.loss(theta[0], theta[1], theta[2]).backward();
    const P zs{z1.view({1, 3}), ::torch::ones({4}, kF64), z2.view({1, 4})};
    for (int i = 0; i < 3; ++i) {
      const bool units = i != 1;
      const auto g = theta[i].grad();
      const auto g_hat = units ? zs[i] * g / keep : g;
      const auto h_hat = units ? zs[i] * g.square() / keep : g.square();
      u[i] = b1 * u[i] + (1 - b1) * g_hat;
      s[i] = b2 * s[i] + (1 - b2) * h_hat;
      m[i] = m[i] - lr * (u[i] / (1 - std::pow(b1, t))) / ((s[i] / (1 - std::pow(b2, t))).sqrt() + eps);
    }
    opt.sample_parameters(true, {z1, ::at::Tensor(), z2});
    EXPECT_TRUE(params[0].detach().equal(opt.slab_mean()[0] * z1.view({1, 3})));  // W = m⊙z
    opt.zero_grad();
    net.loss(params[0], params[1], params[2]).backward();
    opt.restore_parameters();
    opt.step();
    deviation = std::max(deviation, max_diff(opt.slab_mean(), m));
  }
  std::printf("[ dropout  ] slab estimate + Adam vs plain equations over 10 steps: %.1e\n", deviation);
  EXPECT_LT(deviation, 1e-12);
}

TEST(McDropout, PredictiveMasksHaveTheSpikeAndSlabMoments) {
  P params = make_params();
  blr::torch::McDropout opt(params, blr::torch::make_options<blr::torch::McDropoutOptions>(
                                        {{"keep_probability", 0.7}, {"input_keep_probability", 0.7},
                                         {"seed", 3}}));
  const auto m = opt.slab_mean();
  constexpr int kDraws = 4000;
  ::at::Tensor sum = ::torch::zeros_like(params[0]);
  for (int k = 0; k < kDraws; ++k) {
    blr::torch::SampledParameters sample(opt, false);
    sum += params[0].detach();
    // A whole input column is kept or dropped.
    const auto column_kept = params[0].detach().ne(0).all(0);
    const auto column_dropped = params[0].detach().eq(0).all(0);
    ASSERT_TRUE(column_kept.logical_or(column_dropped).all().item<bool>());
  }
  // E[W] = π₁ m, Var[W] = π₁(1 − π₁)m²: the sample mean within 5 standard errors; at rest π₁ m.
  const auto variance = opt.posterior_variance()[0];
  const auto se = (variance / kDraws).sqrt();
  EXPECT_TRUE(((sum / kDraws - 0.7 * m[0]).abs() <= 5 * se + 1e-12).all().item<bool>());
  EXPECT_LT((params[0].detach() - 0.7 * m[0]).abs().max().item<double>(), 1e-15);
  EXPECT_LT((variance - 0.21 * m[0].square()).abs().max().item<double>(), 1e-15);
  EXPECT_TRUE(opt.posterior_variance()[1].eq(0).all().item<bool>());  // the bias is not dropped
}

// The model's input (the first weight with units) keeps its units with input_keep_probability,
// 1 by default: a grey image's single channel into a first convolution is never blanked, while the
// next weight's units are dropped with π₁.
TEST(McDropout, TheModelsInputIsKeptWithItsOwnProbability) {
  P params{::torch::randn({6, 1, 5, 5}, kF64).requires_grad_(), ::torch::randn({6}, kF64).requires_grad_(),
           ::torch::randn({3, 6}, kF64).requires_grad_()};
  const double keep = 0.6;
  blr::torch::McDropout opt(params, blr::torch::make_options<blr::torch::McDropoutOptions>(
                                        {{"keep_probability", keep}, {"seed", 4}}));
  const auto m = opt.slab_mean();
  EXPECT_TRUE(params[0].detach().equal(m[0]));  // at rest π₁ = 1: the slab mean itself
  EXPECT_LT((params[2].detach() - keep * m[2]).abs().max().item<double>(), 1e-15);
  int hidden_dropped = 0;
  for (int k = 0; k < 200; ++k) {
    blr::torch::SampledParameters sample(opt, false);
    ASSERT_TRUE(params[0].detach().equal(m[0])) << "the input channel was dropped in draw " << k;
    hidden_dropped += params[2].detach().eq(0).all(0).sum().item<int>();
  }
  // 200 draws of 6 units kept with 0.6: about 480 drops, far from 0 (P(none) = 0.6^1200).
  EXPECT_GT(hidden_dropped, 300);
  EXPECT_TRUE(opt.posterior_variance()[0].eq(0).all().item<bool>());
  // With input_keep_probability 0.5 the input channel is dropped in about half of the draws.
  P other{params[0].detach().clone().requires_grad_(), params[1].detach().clone().requires_grad_(),
          params[2].detach().clone().requires_grad_()};
  blr::torch::McDropout input_dropped(
      other, blr::torch::make_options<blr::torch::McDropoutOptions>(
                 {{"keep_probability", keep}, {"input_keep_probability", 0.5}, {"seed", 4}}));
  int blanked = 0;
  for (int k = 0; k < 200; ++k) {
    blr::torch::SampledParameters sample(input_dropped, false);
    blanked += other[0].detach().eq(0).all().item<bool>() ? 1 : 0;
  }
  EXPECT_GT(blanked, 60);  // Binomial(200, 0.5): mean 100, sd 7.1
  EXPECT_LT(blanked, 140);
}

TEST(McDropout, LearnsASmallNetworkAndPredictsWithMasks) {
  const auto data = blr::torch::testing::synthetic_data(600, 300);
  ::torch::manual_seed(1);
  auto model = std::make_shared<blr::torch::Mlp>(64, std::vector<int64_t>{32}, 3);
  auto opt = blr::torch::make_optimizer("mc-dropout", model->parameters(), {{"lr", 0.01}}, {600, 4});
  auto* v = blr::torch::as_variational(*opt);
  ASSERT_NE(v, nullptr);
  for (int e = 0; e < 5; ++e) {
    for (int64_t i = 0; i < 600; i += 50) {
      {
        blr::torch::SampledParameters sample(*v, true);
        opt->zero_grad();
        ::torch::cross_entropy_loss(model->forward(data->train.x.slice(0, i, i + 50)),
                                    data->train.y.slice(0, i, i + 50))
            .backward();
      }
      opt->step();
    }
  }
  const blr::torch::Model m(model);
  auto accuracy = [&](const ::at::Tensor& lp) {
    return lp.argmax(1).eq(data->test.y).to(::torch::kDouble).mean().item<double>();
  };
  const double at_mean = accuracy(blr::torch::predict_log_probs(m, data->test.x));
  const double predictive = accuracy(blr::torch::predictive_log_probs(m, *v, data->test.x, 16));
  std::printf("[ dropout  ] synthetic test accuracy: π₁·m %.3f, 16 masks %.3f\n", at_mean, predictive);
  EXPECT_GE(at_mean, 0.9);
  EXPECT_GE(predictive, 0.9);
}

TEST(McDropout, StateRoundTripAndBadOptions) {
  ::torch::manual_seed(1);
  const Net net;
  auto options = blr::torch::make_options<blr::torch::McDropoutOptions>({{"lr", 0.05}, {"seed", 5}});
  P a = make_params();
  blr::torch::McDropout opt(a, options);
  // A step with the given masks, or (none given) masks drawn from the optimizer's generator.
  auto run = [&](blr::torch::McDropout& o, P& p, const std::vector<::at::Tensor>& masks) {
    if (masks.empty()) {
      o.sample_parameters(true);
    } else {
      o.sample_parameters(true, masks);
    }
    o.zero_grad();
    net.loss(p[0], p[1], p[2]).backward();
    o.restore_parameters();
    o.step();
  };
  const std::vector<::at::Tensor> masks{::torch::ones({3}, kF64), ::at::Tensor(),
                                        ::torch::tensor({1.0, 0.0, 1.0, 1.0}, kF64)};
  for (int t = 0; t < 3; ++t) run(opt, a, masks);
  for (int t = 0; t < 3; ++t) run(opt, a, {});  // masks drawn: the generator moves on
  ::torch::serialize::OutputArchive out;
  opt.save(out);
  std::stringstream buffer;
  out.save_to(buffer);
  P b = make_params();
  blr::torch::McDropout restored(b, options);
  ::torch::serialize::InputArchive in;
  in.load_from(buffer);
  restored.load(in);
  EXPECT_EQ(max_diff(a, b), 0.0);
  run(opt, a, masks);
  run(restored, b, masks);
  EXPECT_EQ(max_diff(restored.slab_mean(), opt.slab_mean()), 0.0);
  // The mask generator is part of the state: drawn masks continue as in the uninterrupted run
  // (before 2026-11-29 the restored optimizer drew from its seed's first masks again).
  for (int t = 0; t < 4; ++t) {
    run(opt, a, {});
    run(restored, b, {});
  }
  EXPECT_EQ(max_diff(restored.slab_mean(), opt.slab_mean()), 0.0);
  try {
    blr::torch::McDropout({::torch::zeros({2, 2}, kF64)},
                          blr::torch::make_options<blr::torch::McDropoutOptions>({{"keep_probability", 0.0}}));
    ADD_FAILURE() << "keep_probability 0 accepted";
  } catch (const blr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'keep_probability'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(opt.sample_parameters(true, {::torch::ones({2}, kF64), ::at::Tensor(), masks[2]}),
               blr::Error);  // a mask of the wrong length
}

}  // namespace
