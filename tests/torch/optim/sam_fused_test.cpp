// SAM and bSAM's fused CPU passes (sam.cpp, two_point_step.hpp): the fused update against the
// same equations as tensor operations, bSAM's counter-based draws (their moments, their
// independence of the thread count, a bitwise resume), and the buffer swap that keeps μ while a
// point is sampled.
//
// Tolerance: both paths evaluate the same float64 expressions (two_point_step.hpp) in the same
// order on the same gradients and noise; they differ only where ATen rounds a scalar operand or
// computes ε·rsqrt(N·s) for the tensor path's draw against ε/√(N·s) in the fused one (within
// 2 ulp). Over 10 steps of O(1) values that is ≲ 1e-15 per step: 1e-12 is required.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "blr/torch/optim/sam.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace sam_fused_test {

using ::blr::torch::testing::kF64;
using ::blr::torch::testing::max_abs_diff;

/// A least-squares problem on two parameter tensors.
struct Problem {
  ::at::Tensor x, y;
  Problem() {
    auto gen = ::at::detail::createCPUGenerator(5);
    x = ::at::randn({64, 7}, gen, kF64);
    y = ::at::randn({64}, gen, kF64);
  }
  template <class Opt>
  void step(Opt& opt, ::at::Tensor& w, ::at::Tensor& b) const {
    opt.step([&] {
      opt.zero_grad();
      ::at::Tensor loss = (x.matmul(w) + b - y).square().mean();
      loss.backward();
      return loss;
    });
  }
};

template <class Opt>
double fused_against_tensor(const typename Opt::Options& options, bool given_noise) {
  const Problem problem;
  ::at::Tensor wf = ::torch::zeros({7}, kF64).requires_grad_(),
               bf = ::torch::zeros({1}, kF64).requires_grad_();
  ::at::Tensor wt = ::torch::zeros({7}, kF64).requires_grad_(),
               bt = ::torch::zeros({1}, kF64).requires_grad_();
  Opt fused({wf, bf}, options), tensor({wt, bt}, options);
  tensor.set_fused_kernels(false);
  auto gen = ::at::detail::createCPUGenerator(9);
  double deviation = 0.0;
  for (int t = 0; t < 10; ++t) {
    if constexpr (std::is_same_v<Opt, blr::torch::Bsam>) {
      if (given_noise) {
        const std::vector<::at::Tensor> eps{::at::randn({7}, gen, kF64),
                                            ::at::randn({1}, gen, kF64)};
        fused.set_next_noise(eps);
        tensor.set_next_noise(eps);
      }
    }
    problem.step(fused, wf, bf);
    problem.step(tensor, wt, bt);
    deviation = std::max({deviation, max_abs_diff(wf, wt), max_abs_diff(bf, bt)});
  }
  return deviation;
}

TEST(TwoPointFused, UpdatesEqualTheTensorPath) {
  const double sam = fused_against_tensor<blr::torch::Sam>(
      blr::torch::make_options<blr::torch::SamOptions>({{"lr", 0.1}, {"rho", 0.05}}), false);
  const double bsam = fused_against_tensor<blr::torch::Bsam>(
      blr::torch::make_options<blr::torch::BsamOptions>(
          {{"lr", 0.1}, {"ess", 64.0}, {"rho", 0.02}, {"prior_precision", 2.0}}),
      true);
  std::printf("[ fused    ] SAM %.1e, bSAM %.1e from tensor operations over 10 steps\n", sam, bsam);
  EXPECT_LT(sam, 1e-12);
  EXPECT_LT(bsam, 1e-12);
  EXPECT_GT(bsam, 0.0) << "the two paths were not both run";
}

/// Draws of bSAM's first point for one flat parameter (μ = 0, s = s₀), in float or double.
::at::Tensor first_points(::at::ScalarType dtype, int64_t n, int draws, int threads) {
  const int before = ::at::get_num_threads();
  ::at::set_num_threads(threads);
  ::at::Tensor w = ::torch::zeros({n}, ::torch::TensorOptions().dtype(dtype)).requires_grad_();
  blr::torch::Bsam opt({w}, blr::torch::make_options<blr::torch::BsamOptions>(
                                {{"ess", 4.0}, {"hess_init", 0.25}, {"seed", 13}}));
  std::vector<::at::Tensor> out;
  for (int k = 0; k < draws; ++k) {
    opt.sample_parameters(false);  // a predictive draw: θ = μ + ε/√(N·s), no gradient needed
    out.push_back(w.detach().to(::at::kDouble).clone());
    opt.discard_sample();
    EXPECT_TRUE(w.eq(0).all().item<bool>()) << "μ was not restored exactly";
  }
  ::at::set_num_threads(before);
  return ::torch::stack(out);
}

TEST(TwoPointFused, BsamDrawsHaveThePosteriorMomentsAndIgnoreTheThreadCount) {
  constexpr int64_t kN = 40000;  // 3 chunks
  for (const auto dtype : {::at::kFloat, ::at::kDouble}) {
    const auto one = first_points(dtype, kN, 2, 1), two = first_points(dtype, kN, 2, 2);
    EXPECT_TRUE(one.equal(two)) << "the noise depends on the number of threads";
    EXPECT_FALSE(one[0].equal(one[1])) << "two draws gave the same noise";
    // N·s = 1: the draws are standard normal (5 standard errors on mean and variance).
    const auto x = one.flatten();
    const double n = static_cast<double>(x.numel());
    EXPECT_NEAR(x.mean().item<double>(), 0.0, 5.0 / std::sqrt(n));
    EXPECT_NEAR(x.square().mean().item<double>(), 1.0, 5.0 * std::sqrt(2.0 / n));
    EXPECT_NEAR((one[0] * one[1]).mean().item<double>(), 0.0, 5.0 / std::sqrt(kN));
  }
}

TEST(TwoPointFused, BsamResumesBitwiseFromTheDrawCount) {
  const Problem problem;
  const auto options =
      blr::torch::make_options<blr::torch::BsamOptions>({{"lr", 0.05}, {"ess", 64.0}, {"seed", 3}});
  ::at::Tensor w = ::torch::zeros({7}, kF64).requires_grad_(),
               b = ::torch::zeros({1}, kF64).requires_grad_();
  blr::torch::Bsam straight({w, b}, options);
  for (int t = 0; t < 3; ++t) problem.step(straight, w, b);
  // The optimizer's state (m, s, the step and draw counts) and the model's μ, as a checkpoint.
  std::stringstream buffer;
  {
    ::torch::serialize::OutputArchive out;
    straight.save(out);
    out.save_to(buffer);
  }
  ::at::Tensor v = w.detach().clone().requires_grad_(), c = b.detach().clone().requires_grad_();
  for (int t = 0; t < 4; ++t) problem.step(straight, w, b);
  blr::torch::Bsam resumed({v, c}, options);
  ::torch::serialize::InputArchive in;
  in.load_from(buffer);
  resumed.load(in);
  for (int t = 0; t < 4; ++t) problem.step(resumed, v, c);
  EXPECT_TRUE(v.equal(w));
  EXPECT_TRUE(c.equal(b));
  EXPECT_TRUE(resumed.precision()[0].equal(straight.precision()[0]));
  EXPECT_FALSE(w.eq(0).all().item<bool>()) << "the run did not move";
}

}  // namespace sam_fused_test
