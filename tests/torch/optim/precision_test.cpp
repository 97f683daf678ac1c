// Precision, placement and accumulation of the mean-field driver (mean_field.hpp):
//  * half/bfloat16 parameters train on float32 master weights: every step equals a float32 run
//    whose gradients are taken at the rounded sample, bit for bit, and updates below the
//    parameter's resolution accumulate;
//  * one optimizer over parameters of several dtypes (and devices, when a GPU is present) does
//    to each what an optimizer of that parameter alone does;
//  * k micro-batches accumulated inside one sample give the step of the whole batch (IVON, and
//    VOGN with its per-example squared gradients added per micro-batch);
//  * misuse (step() without a sample) is one sentence.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "blr/torch/optim/vogn.hpp"
#include "option_helpers.hpp"

namespace blr::torch {
namespace {

IvonOptions ivon_options() {
  return make_options<IvonOptions>({{"lr", 0.05},
                                    {"ess", 200.0},
                                    {"hess_init", 0.5},
                                    {"weight_decay", 1e-3},
                                    {"beta1", 0.9},
                                    {"beta2", 0.999},
                                    {"seed", 5.0}});
}

/// The gradient a half/bfloat16 parameter gets from ½‖θ − c‖² when θ and c live in `dtype`:
/// (round(θ) − round(c)) rounded, as LibTorch computes it in that dtype.
::at::Tensor rounded_gradient(const ::at::Tensor& theta, const ::at::Tensor& c,
                              ::at::ScalarType dtype) {
  return (theta.to(dtype) - c.to(dtype)).to(::at::kFloat);
}

class MasterWeights : public ::testing::TestWithParam<::at::ScalarType> {};

// A reduced-precision parameter p and a float32 reference q (tensor-operation path, as the
// reduced one runs) see the same draws; q's gradient is set by hand to what p's is. The float32
// means must agree bit for bit, and p must hold the mean rounded to its dtype.
TEST_P(MasterWeights, StepsEqualAFloat32RunOnTheRoundedGradient) {
  const ::at::ScalarType dtype = GetParam();
  ::torch::manual_seed(11);
  const ::at::Tensor mu0 = ::torch::randn({257});
  const ::at::Tensor c = ::torch::randn({257});
  ::at::Tensor p = mu0.to(dtype).requires_grad_();
  ::at::Tensor q = mu0.to(dtype).to(::at::kFloat).requires_grad_();  // same starting mean
  Ivon reduced({p}, ivon_options());
  Ivon reference({q}, ivon_options());
  reference.set_fused_kernels(false);
  for (int t = 0; t < 30; ++t) {
    const std::vector<::at::Tensor> eps{::torch::randn({257})};
    reduced.sample_parameters(true, eps);
    reduced.zero_grad();
    (0.5 * (p - c.to(dtype)).square().sum()).backward();
    reduced.restore_parameters();
    reduced.step();

    reference.sample_parameters(true, eps);
    {
      ::at::NoGradGuard no_grad;
      q.mutable_grad() = rounded_gradient(q.detach(), c, dtype);
    }
    reference.restore_parameters();
    reference.step();
  }
  EXPECT_EQ(p.scalar_type(), dtype);
  const ::at::Tensor master = reduced.posterior_mean()[0];
  EXPECT_EQ(master.scalar_type(), ::at::kFloat);
  EXPECT_TRUE(::torch::equal(master, q.detach())) << "max |Δ| "
                                                  << (master - q).abs().max().item<double>();
  EXPECT_TRUE(::torch::equal(p.detach(), q.detach().to(dtype)));
  EXPECT_TRUE(::torch::equal(reduced.curvature()[0], reference.curvature()[0]));
  EXPECT_EQ(reduced.curvature()[0].scalar_type(), ::at::kFloat);
}

// Steps of 1e-4 on a parameter at 1 (bfloat16's spacing there is 2⁻⁷ ≈ 7.8e-3; half's 2⁻¹⁰):
// rounded state would never move; the master mean moves by every step and the parameter follows.
TEST_P(MasterWeights, UpdatesBelowTheResolutionAccumulate) {
  const ::at::ScalarType dtype = GetParam();
  ::at::Tensor p = ::torch::ones({16}, ::torch::dtype(dtype)).requires_grad_();
  // β2 = 1 keeps h = h0 and SGD-like steps of size lr·ḡ/(h0 + δ) with no noise effect on ḡ.
  Ivon opt({p}, make_options<IvonOptions>(
                    {{"lr", 1e-4}, {"ess", 1e6}, {"hess_init", 1.0}, {"weight_decay", 0.0},
                     {"beta1", 0.0}, {"beta2", 1.0}, {"seed", 1.0}}));
  for (int t = 0; t < 200; ++t) {
    opt.sample_parameters(true);
    opt.zero_grad();
    p.sum().backward();  // ḡ = 1 everywhere
    opt.restore_parameters();
    opt.step();
  }
  // μ = 1 − 200 · 1e-4 · 1/(1 + 0) = 0.98 in float32; the parameter is its rounding.
  const double expected = 1.0 - 200 * 1e-4;
  const double mean = p.detach().to(::at::kDouble).mean().item<double>();
  const double spacing = dtype == ::at::kBFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  EXPECT_NEAR(mean, expected, spacing + 1e-5);  // half a spacing below 1, plus float32 sums
  EXPECT_LT(mean, 1.0);
}

TEST_P(MasterWeights, SaveAndLoadResumeBitForBit) {
  const ::at::ScalarType dtype = GetParam();
  ::torch::manual_seed(2);
  const ::at::Tensor c = ::torch::randn({100});
  auto run = [&](Ivon& opt, ::at::Tensor& w, int steps) {
    for (int t = 0; t < steps; ++t) {
      opt.sample_parameters(true);
      opt.zero_grad();
      (0.5 * (w - c.to(dtype)).square().sum()).backward();
      opt.restore_parameters();
      opt.step();
    }
  };
  ::at::Tensor a = ::torch::zeros({100}, ::torch::dtype(dtype)).requires_grad_();
  Ivon first({a}, ivon_options());
  run(first, a, 4);
  ::torch::serialize::OutputArchive out;
  first.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  ::at::Tensor b = a.detach().clone().requires_grad_();
  Ivon second({b}, ivon_options());
  ::torch::serialize::InputArchive in;
  std::istringstream stream(bytes.str());
  in.load_from(stream);
  second.load(in);
  // The tensor-operation path draws from LibTorch's generator, which checkpoints save with the
  // run (checkpoint.hpp): both continuations start from the same generator state.
  ::torch::manual_seed(77);
  run(first, a, 4);
  ::torch::manual_seed(77);
  run(second, b, 4);
  EXPECT_TRUE(::torch::equal(a, b));
  EXPECT_TRUE(::torch::equal(first.curvature()[0], second.curvature()[0]));
  EXPECT_TRUE(::torch::equal(first.momentum()[0], second.momentum()[0]));
}

INSTANTIATE_TEST_SUITE_P(HalfAndBfloat16, MasterWeights,
                         ::testing::Values(::at::kBFloat16, ::at::kHalf),
                         [](const auto& info) {
                           return std::string(info.param == ::at::kHalf ? "Half" : "BFloat16");
                         });

/// Steps `opt` over its parameters `params` on ½‖θ − c_k‖² with given draws; returns the means.
void run_quadratic(Ivon& opt, std::vector<::at::Tensor>& params,
                   const std::vector<::at::Tensor>& targets,
                   const std::vector<std::vector<::at::Tensor>>& draws) {
  for (const auto& eps : draws) {
    opt.sample_parameters(true, eps);
    opt.zero_grad();
    ::at::Tensor loss = ::torch::zeros({}, ::at::kDouble);
    for (size_t k = 0; k < params.size(); ++k) {
      loss = loss + 0.5 * (params[k] - targets[k].to(params[k].scalar_type()))
                              .square()
                              .sum()
                              .to(::at::kDouble);
    }
    loss.backward();
    opt.restore_parameters();
    opt.step();
  }
}

// One IVON over a float32, a float64 and a bfloat16 parameter (and a CUDA one when there is a
// GPU) = one IVON per parameter with the same options and draws, bit for bit.
TEST(MixedParameters, EachParameterIsStepppedAsIfAlone) {
  std::vector<::at::TensorOptions> kinds{::torch::dtype(::at::kFloat),
                                         ::torch::dtype(::at::kDouble),
                                         ::torch::dtype(::at::kBFloat16)};
  if (::torch::cuda::is_available()) {
    kinds.push_back(::torch::dtype(::at::kFloat).device(::at::Device("cuda:0")));
  }
  ::torch::manual_seed(4);
  std::vector<::at::Tensor> targets, together, inits;
  for (size_t k = 0; k < kinds.size(); ++k) {
    inits.push_back(::torch::randn({33 + static_cast<int64_t>(k)}, kinds[k]));
    targets.push_back(::torch::randn({33 + static_cast<int64_t>(k)}).to(kinds[k].device()));
    together.push_back(inits.back().clone().requires_grad_());
  }
  std::vector<std::vector<::at::Tensor>> draws(6);
  for (auto& eps : draws) {
    for (const auto& p : together) eps.push_back(::torch::randn(p.sizes(), ::at::kDouble));
  }
  Ivon all(together, ivon_options());
  run_quadratic(all, together, targets, draws);
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::vector<::at::Tensor> alone{inits[k].clone().requires_grad_()};
    Ivon one(alone, ivon_options());
    std::vector<std::vector<::at::Tensor>> own(draws.size());
    for (size_t t = 0; t < draws.size(); ++t) own[t] = {draws[t][k]};
    run_quadratic(one, alone, {targets[k]}, own);
    EXPECT_TRUE(::torch::equal(alone[0], together[k])) << "parameter " << k;
    EXPECT_TRUE(::torch::equal(one.curvature()[0], all.curvature()[k])) << "parameter " << k;
    EXPECT_EQ(together[k].device(), kinds[k].device());
  }
}

// Linear regression y ≈ Xw on a batch of M = 8 rows in float64. Micro-batches of 3 and 5 rows,
// each loss scaled by its share M_j/M, accumulated in one sample, against the whole batch.
struct PrecisionRegression {
  ::at::Tensor x, y;
  PrecisionRegression() {
    ::torch::manual_seed(8);
    x = ::torch::randn({8, 6}, ::at::kDouble);
    y = ::torch::randn({8}, ::at::kDouble);
  }
  ::at::Tensor loss(::torch::nn::Linear model, int64_t begin, int64_t end) const {
    const auto xb = x.slice(0, begin, end), yb = y.slice(0, begin, end);
    return 0.5 * (model->forward(xb).squeeze(1) - yb).square().mean();
  }
};

// Round-off bound of the comparison: the batch gradient (1/M)Σg_i and its two-part sum differ by
// at most 2·M·u·(1/M)Σ|g_i| (two orderings of M float64 additions, u = 2⁻⁵³); each of T steps
// moves μ by at most lr·|Δĝ|/(h0 + δ) more, and IVON's averages do not amplify it (β1 < 1,
// P ≥ h0). With |g_i| ≤ 50 here, T = 10, lr = 0.05, h0 = 0.5: ≤ 10·0.05·2·8·u·50/0.5 ≈ 9e-14.
constexpr double kAccumulationBound = 1e-12;

void expect_within_bound(const ::torch::nn::Linear& a, const ::torch::nn::Linear& b) {
  for (size_t k = 0; k < a->parameters().size(); ++k) {
    const double diff = (a->parameters()[k] - b->parameters()[k]).abs().max().item<double>();
    EXPECT_LE(diff, kAccumulationBound) << "parameter " << k;
  }
}

/// Two float64 Linear(6, 1) models with the same (seeded) parameters.
std::pair<::torch::nn::Linear, ::torch::nn::Linear> two_equal_models() {
  ::torch::manual_seed(1);
  ::torch::nn::Linear a(::torch::nn::LinearOptions(6, 1)), b(::torch::nn::LinearOptions(6, 1));
  a->to(::at::kDouble);
  b->to(::at::kDouble);
  ::at::NoGradGuard no_grad;
  for (size_t k = 0; k < a->parameters().size(); ++k) b->parameters()[k].copy_(a->parameters()[k]);
  return {a, b};
}

TEST(Accumulation, MicroBatchesInOneSampleGiveTheWholeBatchStepIvon) {
  const PrecisionRegression data;
  auto [whole_model, micro_model] = two_equal_models();
  Ivon whole(whole_model->parameters(), ivon_options());
  Ivon micro(micro_model->parameters(), ivon_options());
  for (int t = 0; t < 10; ++t) {
    {
      SampledParameters s(whole, true);
      whole.zero_grad();
      data.loss(whole_model, 0, 8).backward();
    }
    whole.step();
    {
      SampledParameters s(micro, true);
      micro.zero_grad();
      (data.loss(micro_model, 0, 3) * (3.0 / 8.0)).backward();
      (data.loss(micro_model, 3, 8) * (5.0 / 8.0)).backward();
    }
    micro.step();
  }
  expect_within_bound(whole_model, micro_model);
}

TEST(Accumulation, MicroBatchesInOneSampleGiveTheWholeBatchStepVogn) {
  const PrecisionRegression data;
  auto [whole_model, micro_model] = two_equal_models();
  const auto options =
      make_options<VognOptions>({{"lr", 0.05}, {"ess", 100.0}, {"seed", 3.0}});
  Vogn whole(whole_model->parameters(), options);
  Vogn micro(micro_model->parameters(), options);
  const NamedParameters whole_named = whole_model->named_parameters().pairs();
  const NamedParameters micro_named = micro_model->named_parameters().pairs();
  for (int t = 0; t < 10; ++t) {
    {
      SampledParameters s(whole, true);
      whole.zero_grad();
      whole.add_squared_gradients(
          backward_with_squared_gradients(data.loss(whole_model, 0, 8), whole_named, 8));
    }
    whole.step();
    {
      SampledParameters s(micro, true);
      micro.zero_grad();
      // Micro-batch j: its mean loss scaled by its share c_j = M_j/M, so that p.grad sums to the
      // batch gradient. The engine reads that loss as the mean of c_j·ℓ_i and returns
      // c_j²·(1/M_j)Σ_j(∇ℓ_i)²; the batch's (1/M)Σ(∇ℓ_i)² is the sum over j of that over c_j.
      for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 3}, {3, 8}}) {
        const double share = static_cast<double>(end - begin) / 8.0;
        auto squared = backward_with_squared_gradients(
            data.loss(micro_model, begin, end) * share, micro_named, end - begin);
        for (auto& q : squared) q = q / share;
        micro.add_squared_gradients(squared);
      }
    }
    micro.step();
  }
  expect_within_bound(whole_model, micro_model);
}

TEST(Misuse, StepWithoutASampleIsOneSentence) {
  ::at::Tensor w = ::torch::zeros({3}).requires_grad_();
  Ivon opt({w}, ivon_options());
  w.sum().backward();  // a gradient, but no sample
  try {
    opt.step();
    FAIL() << "step() without a sample was accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step() needs at least one training sample"), std::string::npos)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace blr::torch
