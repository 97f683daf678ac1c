// The prior precision of a Laplace posterior chosen by validation NLL (laplace_prior_search.hpp):
//  - the grid is log-spaced from min to max, its ends exact, and bad grids are sentences;
//  - set_prior_precision gives σ² = 1/(N Ĝ + δ) and restarts the draws at the seed;
//  - the search's NLL at each δ equals −mean log p(y | x) of the predictive written out here (the
//    probit on the diagonal posterior: softmax(f/√(1 + πv/8)), v_k = Σ_j σ_j² (∂f_k/∂θ_j)², from
//    per-example Jacobians by autograd::grad), the chosen δ is the grid's argmin, and the
//    posterior is left at it.
//
// Tolerances: float64 throughout. The engine and the reference sum ≤ 20 Jacobian products per
// logit variance in different orders (≲ 50 roundings of 1.1e-16 relative on O(1) values), and
// the NLL averages 9 terms of O(1): 1e-12 absolute.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/posterior/laplace_prior_search.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace {

using ::blr::torch::testing::kF64;

TEST(PriorPrecisionGrid, IsLogSpacedWithExactEndsAndRefusesBadGrids) {
  blr::torch::PriorPrecisionGrid grid{1e-2, 1e2, 5};
  const auto v = grid.values();
  ASSERT_EQ(v.size(), 5u);
  const double expected[] = {1e-2, 1e-1, 1.0, 10.0, 100.0};
  for (size_t k = 0; k < 5; ++k) EXPECT_NEAR(v[k] / expected[k], 1.0, 1e-14) << k;
  EXPECT_EQ(v.front(), 1e-2);
  EXPECT_EQ(v.back(), 1e2);
  EXPECT_EQ((blr::torch::PriorPrecisionGrid{3.0, 3.0, 1}.values()), std::vector<double>{3.0});
  EXPECT_THROW((blr::torch::PriorPrecisionGrid{0.0, 1.0, 3}.validate()), blr::Error);
  EXPECT_THROW((blr::torch::PriorPrecisionGrid{2.0, 1.0, 3}.validate()), blr::Error);
  EXPECT_THROW((blr::torch::PriorPrecisionGrid{1.0, 2.0, 1}.validate()), blr::Error);
  EXPECT_THROW((blr::torch::PriorPrecisionGrid{1.0, 2.0, 0}.validate()), blr::Error);
}

struct Problem {
  ::torch::nn::Sequential net;
  ::at::Tensor x, y, vx, vy;
};

Problem problem() {
  ::torch::manual_seed(11);
  Problem p{::torch::nn::Sequential(::torch::nn::Linear(3, 4), ::torch::nn::Tanh(),
                                    ::torch::nn::Linear(4, 3)),
            ::torch::randn({12, 3}, kF64), ::torch::randint(0, 3, {12}, ::torch::kLong),
            ::torch::randn({9, 3}, kF64), ::torch::randint(0, 3, {9}, ::torch::kLong)};
  p.net->to(::torch::kFloat64);
  return p;
}

/// −mean log p(y | x) of the probit predictive, from per-example Jacobians.
double reference_probit_nll(::torch::nn::Sequential& net, const std::vector<::at::Tensor>& var,
                            const ::at::Tensor& x, const ::at::Tensor& y) {
  const auto params = net->parameters();
  double total = 0.0;
  for (int64_t i = 0; i < x.size(0); ++i) {
    const auto f = net->forward(x.slice(0, i, i + 1)).squeeze(0);
    const int64_t c = f.size(0);
    auto scaled = ::torch::empty({c}, kF64);
    for (int64_t k = 0; k < c; ++k) {
      const auto g = ::torch::autograd::grad({f[k]}, params, {}, true);
      double v = 0.0;
      for (size_t j = 0; j < params.size(); ++j) v += (var[j] * g[j].square()).sum().item<double>();
      scaled[k] = f[k].item<double>() / std::sqrt(1.0 + std::numbers::pi / 8.0 * v);
    }
    total -= ::torch::log_softmax(scaled, 0)[y[i].item<int64_t>()].item<double>();
  }
  return total / static_cast<double>(x.size(0));
}

TEST(LaplacePriorPrecisionSearch, NllIsTheProbitPredictivesAndTheArgminIsKept) {
  auto p = problem();
  const blr::torch::Model model(p.net);
  const auto fit = blr::torch::laplace_curvature(model, p.x, p.y);
  blr::torch::LaplacePosterior post(
      p.net->parameters(),
      blr::torch::make_options<blr::torch::LaplacePosteriorOptions>(
          {{"prior_precision", 1.0}, {"ess", 12.0}, {"predictive", std::string("probit")}}));
  post.set_curvature(fit.curvature);
  const blr::torch::PriorPrecisionGrid grid{1e-2, 1e2, 5};
  const auto search = blr::torch::laplace_prior_precision_search(model, post, p.vx, p.vy, 1, grid);
  ASSERT_EQ(search.nll.size(), 5u);
  size_t argmin = 0;
  for (size_t k = 0; k < 5; ++k) {
    std::vector<::at::Tensor> var;
    for (const auto& c : fit.curvature) var.push_back((c * 12.0 + search.grid[k]).reciprocal());
    EXPECT_NEAR(search.nll[k], reference_probit_nll(p.net, var, p.vx, p.vy), 1e-12) << k;
    if (search.nll[k] < search.nll[argmin]) argmin = k;
  }
  EXPECT_EQ(search.best, search.grid[argmin]);
  EXPECT_EQ(search.best_nll, search.nll[argmin]);
  EXPECT_EQ(post.options().prior_precision, search.best);
  // The NLL changes across the grid: the search chooses something.
  EXPECT_GT(*std::max_element(search.nll.begin(), search.nll.end()) - search.best_nll, 1e-6);
  EXPECT_THROW(blr::torch::laplace_prior_precision_search(model, post, p.vx, p.vy.slice(0, 0, 4),
                                                          1, grid),
               blr::Error);
}

TEST(LaplacePosterior, SetPriorPrecisionChangesSigmaAndRestartsTheDraws) {
  auto p = problem();
  const blr::torch::Model model(p.net);
  const auto fit = blr::torch::laplace_curvature(model, p.x, p.y);
  blr::torch::LaplacePosterior post(
      p.net->parameters(), blr::torch::make_options<blr::torch::LaplacePosteriorOptions>(
                               {{"prior_precision", 1.0}, {"ess", 12.0}, {"seed", int64_t{3}}}));
  post.set_curvature(fit.curvature);
  const auto params = p.net->parameters();
  const auto mode = params[0].detach().clone();
  post.sample_parameters(false);
  const auto first = (params[0].detach() - mode).clone();
  EXPECT_THROW(post.set_prior_precision(2.0), blr::Error);  // while sampled
  post.restore_parameters();
  post.set_prior_precision(4.0);
  const auto variance = post.posterior_variance();
  EXPECT_LT(::blr::torch::testing::max_abs_diff(variance[0], (fit.curvature[0] * 12.0 + 4.0).reciprocal()),
            1e-15);
  post.sample_parameters(false);
  const auto second = (params[0].detach() - mode).clone();
  post.restore_parameters();
  // Same ε, rescaled: θ − θ* = ε/√(N Ĝ + δ) for δ = 1 and then δ = 4.
  const auto ratio = (fit.curvature[0] * 12.0 + 1.0).sqrt() / (fit.curvature[0] * 12.0 + 4.0).sqrt();
  EXPECT_LT(::blr::torch::testing::max_abs_diff(second, first * ratio), 1e-14);
  EXPECT_THROW(post.set_prior_precision(0.0), blr::Error);
  EXPECT_THROW(post.set_prior_precision(std::nan("")), blr::Error);
}

}  // namespace
