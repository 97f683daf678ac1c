// The post-hoc Laplace of a regression network (blr/torch/posterior/laplace_fit.hpp with the Gaussian
// likelihood, the linearised Gaussian predictive of laplace_predictive.hpp, the regression grid
// search of laplace_prior_search.hpp), against closed forms:
//  - a bias-free linear model y = Xw + ε, ε ~ N(0, σ² I): the GGN is the exact Hessian, so the
//    Kronecker posterior of w is the exact Bayesian linear regression posterior
//    Σ = (XᵀX/σ² + δI)⁻¹; at the MAP w = (XᵀX + σ²δI)⁻¹Xᵀy the Laplace log Z(δ) is the exact log
//    evidence log N(y; 0, σ²I + XXᵀ/δ); the linearised predictive of a new x is N(xᵀw, xᵀΣx + σ²);
//  - the diagonal GGN = diag(XᵀX)/(Nσ²) and the empirical Fisher = mean((y − f)² x²)/σ⁴, with two
//    outputs (D = 2) for the GGN;
//  - a fit at one σ rescaled to another (laplace_with_noise_std) = the fit made at that σ;
//  - σ chosen by the marginal likelihood (alone, and jointly with δ) is a stationary point of
//    log Z: the central difference of log Z in log σ vanishes there, and log Z is lower on each
//    side;
//  - gaussian_regression_metrics against the Gaussian NLL and coverage written out;
//  - bad targets and a regression-only call on a classification fit are one sentence.
//
// Tolerances (float64): Σ from the Kronecker eigenbasis against a 4×4 LU inverse of a matrix with
// condition ≲ 1e2: ≤ 1e-12 relative to its entries (≲ 1e-2), so 1e-13 absolute. log Z and the
// exact evidence sum ≤ 4 logs and an N = 40 quadratic form of O(10²): 1e-9. Curvatures average 40
// products of O(1): 1e-12. The rescaled fit multiplies by one factor: 1e-12 relative. The
// stationarity check: Brent's method to 40 bits in log σ leaves |∂ log Z/∂ log σ| ≲ |log Z''|·2⁻²⁰
// ≈ 1e-4 for |log Z''| ≈ 2N = 80; the central difference at h = 1e-4 adds O(h²·log Z''') ≈ 1e-6.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <tuple>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/posterior/laplace_prior_search.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "blr/torch/posterior/posthoc_laplace.hpp"
#include "blr/torch/metrics/regression.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace laplace_regression_test {

using blr::torch::LaplaceCurvature;
using blr::torch::LaplaceCurvatureOptions;
using blr::torch::LaplaceCurvatureResult;
using blr::torch::LaplaceLikelihood;
using blr::torch::LaplacePosterior;
using blr::torch::LaplacePosteriorOptions;
using blr::torch::LaplaceStructure;
using ::blr::torch::testing::kF64;
using ::blr::torch::testing::max_abs_diff;

constexpr int64_t kN = 40, kD = 4;
constexpr double kSigma = 0.3, kDelta = 2.0;

struct Data {
  ::at::Tensor x, y;
};

/// X (N×4) standard normal, y = X w_true + N(0, 0.3²).
Data linear_data() {
  ::torch::manual_seed(21);
  const auto x = ::torch::randn({kN, kD}, kF64);
  const auto w = ::torch::tensor({1.0, -2.0, 0.5, 0.0}, kF64);
  return {x, x.mv(w) + kSigma * ::torch::randn({kN}, kF64)};
}

/// Linear(4 → out) without bias, float64, weights set to `w` (out×4).
::torch::nn::Linear linear(const ::at::Tensor& w) {
  ::torch::nn::Linear net(::torch::nn::LinearOptions(kD, w.size(0)).bias(false));
  net->to(::torch::kFloat64);
  ::torch::NoGradGuard no_grad;
  net->weight.copy_(w);
  return net;
}

/// The MAP weights of the linear model at noise σ and prior precision δ.
::at::Tensor map_weights(const Data& d, double sigma, double delta) {
  const auto a = d.x.t().mm(d.x) + sigma * sigma * delta * ::torch::eye(kD, kF64);
  return ::at::linalg_solve(a, d.x.t().mv(d.y)).unsqueeze(0);  // 1×4
}

LaplaceCurvatureResult fit(const ::torch::nn::Linear& net, const Data& d, LaplaceStructure structure,
                           double sigma, LaplaceCurvature curvature = LaplaceCurvature::kGaussNewton) {
  LaplaceCurvatureOptions options;
  options.likelihood = LaplaceLikelihood::kRegression;
  options.noise_std = sigma;
  options.structure = structure;
  options.curvature = curvature;
  options.batch_size = 7;  // several batches are summed
  return blr::torch::laplace_curvature(blr::torch::Model(net), d.x, d.y, options);
}

std::unique_ptr<LaplacePosterior> posterior(const ::torch::nn::Linear& net,
                                            const LaplaceCurvatureResult& f, double delta,
                                            const std::string& predictive = "probit") {
  auto post = std::make_unique<LaplacePosterior>(
      net->parameters(), blr::torch::make_options<LaplacePosteriorOptions>(
                             {{"prior_precision", delta},
                              {"ess", static_cast<double>(f.examples)},
                              {"structure", std::string(f.factors[0].defined() ? "kron" : "diag")},
                              {"predictive", predictive}}));
  post->set_curvature(f.curvature, f.factors);
  return post;
}

TEST(LaplaceRegression, KroneckerPosteriorOfALinearModelIsTheExactBayesianPosterior) {
  const Data d = linear_data();
  const auto net = linear(map_weights(d, kSigma, kDelta));
  const auto f = fit(net, d, LaplaceStructure::kKronecker, kSigma);
  ASSERT_TRUE(f.factors[0].defined());
  auto post = posterior(net, f, kDelta);
  const auto exact = ::at::linalg_inv(d.x.t().mm(d.x) / (kSigma * kSigma) +
                                      kDelta * ::torch::eye(kD, kF64));
  EXPECT_LT(max_abs_diff(post->posterior_covariance(0), exact), 1e-13);

  // The evidence: log N(y; 0, σ²I + XXᵀ/δ), at the MAP.
  const auto c = kSigma * kSigma * ::torch::eye(kN, kF64) + d.x.mm(d.x.t()) / kDelta;
  const double log_evidence =
      -0.5 * (d.y.dot(::at::linalg_solve(c, d.y)).item<double>() +
              std::get<1>(::at::linalg_slogdet(c)).item<double>() +
              static_cast<double>(kN) * std::log(2 * std::numbers::pi));
  EXPECT_NEAR(blr::torch::laplace_log_marginal_likelihood(f, kDelta), log_evidence, 1e-9);

  // The linearised predictive of new inputs: mean xᵀw, variance xᵀΣx (+ σ² by the caller).
  const auto x_new = ::torch::randn({5, kD}, kF64);
  const auto [mean, variance] =
      blr::torch::linearised_outputs(blr::torch::Model(net), *post, x_new);
  ASSERT_EQ(mean.sizes(), (std::vector<int64_t>{5, 1}));
  EXPECT_LT(max_abs_diff(mean.squeeze(1), x_new.mv(net->weight.squeeze(0).detach())), 1e-13);
  EXPECT_LT(max_abs_diff(variance.squeeze(1), (x_new.mm(exact) * x_new).sum(1)), 1e-13);
}

TEST(LaplaceRegression, DiagonalCurvaturesAreTheirDefinitions) {
  const Data d = linear_data();
  // Two outputs: the GGN sums each output's (x/σ)², so diag(XᵀX)/(Nσ²) per row of W.
  const auto w2 = ::torch::tensor({{1.0, 0.0, 0.5, -1.0}, {0.2, 0.3, 0.0, 0.1}}, kF64);
  const auto net2 = linear(w2);
  const Data d2{d.x, ::torch::stack({d.y, -d.y}, 1)};
  const auto ggn = fit(net2, d2, LaplaceStructure::kDiagonal, kSigma);
  const auto expected_row = (d.x * d.x).mean(0) / (kSigma * kSigma);
  EXPECT_LT(max_abs_diff(ggn.curvature[0], ::torch::stack({expected_row, expected_row})), 1e-12);
  EXPECT_EQ(ggn.target_values, 2 * kN);
  const double rss = (d2.y - d.x.mm(w2.t())).square().sum().item<double>();
  EXPECT_NEAR(ggn.residual_sum_squares, rss, 1e-10 * rss);
  EXPECT_NEAR(ggn.nll_sum,
              rss / (2 * kSigma * kSigma) +
                  2.0 * kN * (std::log(kSigma) + 0.5 * std::log(2 * std::numbers::pi)),
              1e-9);

  // The empirical Fisher: ((y − f)/σ²)² x² per example, averaged.
  const auto net = linear(map_weights(d, kSigma, kDelta));
  const auto ef = fit(net, d, LaplaceStructure::kDiagonal, kSigma, LaplaceCurvature::kEmpiricalFisher);
  const auto residual = d.y - d.x.mv(net->weight.squeeze(0).detach());
  const auto expected =
      ((residual * residual).unsqueeze(1) * d.x * d.x).mean(0) / std::pow(kSigma, 4);
  EXPECT_LT(max_abs_diff(ef.curvature[0].squeeze(0), expected), 1e-12 * expected.max().item<double>());
}

TEST(LaplaceRegression, AFitRescaledToAnotherNoiseIsTheFitAtThatNoise) {
  const Data d = linear_data();
  const auto net = linear(map_weights(d, kSigma, kDelta));
  for (const auto curvature : {LaplaceCurvature::kGaussNewton, LaplaceCurvature::kEmpiricalFisher}) {
    for (const auto structure : {LaplaceStructure::kDiagonal, LaplaceStructure::kKronecker}) {
      const auto at_one = fit(net, d, structure, 1.0, curvature);
      const auto direct = fit(net, d, structure, 0.45, curvature);
      const auto rescaled = blr::torch::laplace_with_noise_std(at_one, 0.45);
      const double scale = direct.eigenvalues[0].abs().max().item<double>();
      EXPECT_LT(max_abs_diff(rescaled.eigenvalues[0], direct.eigenvalues[0]), 1e-12 * scale);
      EXPECT_NEAR(rescaled.nll_sum, direct.nll_sum, 1e-10 * std::abs(direct.nll_sum));
      EXPECT_NEAR(blr::torch::laplace_log_marginal_likelihood(rescaled, kDelta),
                  blr::torch::laplace_log_marginal_likelihood(direct, kDelta), 1e-9);
      EXPECT_EQ(rescaled.noise_std, 0.45);
    }
  }
}

TEST(LaplaceRegression, NoiseChosenByTheMarginalLikelihoodIsItsMaximum) {
  const Data d = linear_data();
  const auto net = linear(map_weights(d, kSigma, kDelta));
  const auto f = fit(net, d, LaplaceStructure::kKronecker, 1.0);
  auto log_z = [&](double log_sigma, double delta) {
    const auto at = blr::torch::laplace_with_noise_std(f, std::exp(log_sigma));
    return blr::torch::laplace_log_marginal_likelihood(
        at, delta > 0 ? delta : blr::torch::laplace_optimal_prior_precision(at));
  };
  for (const double delta : {kDelta, 0.0}) {  // δ given, then δ chosen with σ
    const double sigma = blr::torch::laplace_optimal_noise_std(f, delta);
    const double h = 1e-4, s = std::log(sigma);
    EXPECT_NEAR((log_z(s + h, delta) - log_z(s - h, delta)) / (2 * h), 0.0, 2e-3) << delta;
    EXPECT_LT(log_z(s + 0.05, delta), log_z(s, delta)) << delta;
    EXPECT_LT(log_z(s - 0.05, delta), log_z(s, delta)) << delta;
    // The data's noise is 0.3; the residuals of 40 points with 4 weights put σ near it.
    EXPECT_GT(sigma, 0.2) << delta;
    EXPECT_LT(sigma, 0.45) << delta;
  }
}

TEST(LaplaceRegression, GridSearchScoresTheGaussianPredictive) {
  const Data d = linear_data();
  const auto net = linear(map_weights(d, kSigma, kDelta));
  const auto f = fit(net, d, LaplaceStructure::kKronecker, kSigma);
  auto post = posterior(net, f, 1.0);
  const auto x_val = ::torch::randn({20, kD}, kF64);
  const auto y_val = x_val.mv(::torch::tensor({1.0, -2.0, 0.5, 0.0}, kF64));
  const auto search = blr::torch::laplace_prior_precision_search(
      blr::torch::Model(net), *post, x_val, y_val, 1, {1e-2, 1e2, 5}, kSigma);
  ASSERT_EQ(search.nll.size(), 5u);
  for (size_t k = 0; k < search.grid.size(); ++k) {
    post->set_prior_precision(search.grid[k]);
    const auto [m, v] = blr::torch::linearised_outputs(blr::torch::Model(net), *post, x_val);
    const auto var = v.squeeze(1) + kSigma * kSigma;
    const double nll = (0.5 * (2 * std::numbers::pi * var).log() +
                        (y_val - m.squeeze(1)).square() / (2 * var))
                           .mean()
                           .item<double>();
    EXPECT_NEAR(search.nll[k], nll, 1e-12) << k;
  }
}

TEST(LaplaceRegression, GaussianRegressionMetricsAreTheirDefinitions) {
  const auto mean = ::torch::tensor({0.0, 1.0, 2.0, 3.0}, kF64);
  const auto sd = ::torch::tensor({1.0, 0.5, 2.0, 1.0}, kF64);
  const auto y = ::torch::tensor({0.1, 2.5, 2.0, -1.0}, kF64);
  const auto r = blr::torch::gaussian_regression_metrics(mean, sd, y);
  const auto z = (y - mean) / sd;
  const double nll =
      (0.5 * z.square() + sd.log() + 0.5 * std::log(2 * std::numbers::pi)).mean().item<double>();
  EXPECT_NEAR(r.nll, nll, 1e-15);
  EXPECT_NEAR(r.rmse, std::sqrt((y - mean).square().mean().item<double>()), 1e-15);
  EXPECT_NEAR(r.predictive_std, 1.125, 1e-15);
  // |z| = 0.1, 3, 0, 4: inside the central 50 % interval (|z| ≤ 0.674) twice, 95 % twice.
  EXPECT_EQ(r.coverage[0], 0.5);
  EXPECT_EQ(r.coverage[3], 0.5);
}

TEST(LaplaceRegression, BadInputIsOneSentence) {
  const Data d = linear_data();
  const auto net = linear(map_weights(d, kSigma, kDelta));
  LaplaceCurvatureOptions options;
  options.likelihood = LaplaceLikelihood::kRegression;
  EXPECT_THROW(blr::torch::laplace_curvature(blr::torch::Model(net), d.x,
                                             d.y.to(::torch::kLong), options),
               blr::Error);  // integer targets
  options.noise_std = 0.0;
  EXPECT_THROW(blr::torch::laplace_curvature(blr::torch::Model(net), d.x, d.y, options),
               blr::Error);  // σ = 0
  options.noise_std = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(blr::torch::laplace_curvature(blr::torch::Model(net), d.x, d.y, options),
               blr::Error);
  LaplaceCurvatureResult classification;
  EXPECT_THROW(blr::torch::laplace_with_noise_std(classification, 1.0), blr::Error);
  EXPECT_THROW(blr::torch::laplace_optimal_noise_std(classification), blr::Error);
  const auto f = fit(net, d, LaplaceStructure::kDiagonal, kSigma);
  EXPECT_THROW(blr::torch::laplace_with_noise_std(f, -1.0), blr::Error);
  EXPECT_THROW(blr::torch::laplace_optimal_noise_std(f, -1.0), blr::Error);
  // A perfect fit: (near-)zero residuals leave no maximum in σ inside the range searched.
  const Data exact{d.x, d.x.mm(net->weight.detach().t()).squeeze(1)};
  const auto perfect = fit(net, exact, LaplaceStructure::kDiagonal, kSigma);
  EXPECT_THROW(blr::torch::laplace_optimal_noise_std(perfect), blr::Error);
}

}  // namespace laplace_regression_test

namespace laplace_regression_test {

/// `f` throws a blr::Error whose sentence holds `words`.
template <class F>
void expect_error(F&& f, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one about " << words;
  } catch (const blr::Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

// The library pipeline (posthoc_laplace.hpp) that `blr laplace` runs, on the linear model: with δ
// by the marginal likelihood it is laplace_optimal_prior_precision of the same fit, and log Z is
// the exact evidence formula's at that δ (1e-9, as above); with σ by the marginal likelihood σ is
// laplace_optimal_noise_std's (the same batches, so bit for bit); the grid search leaves δ on the grid at its lowest NLL; the
// posterior it builds carries the curvature; misuse is one sentence before any pass.
TEST(LaplaceRegression, PosthocPipelineComposesTheSteps) {
  const Data d = linear_data();
  const auto net = linear(map_weights(d, kSigma, kDelta));
  const blr::torch::Model model(net);
  blr::torch::PosthocLaplaceRequest request;
  request.curvature.likelihood = LaplaceLikelihood::kRegression;
  request.curvature.noise_std = kSigma;
  request.curvature.structure = LaplaceStructure::kKronecker;
  request.curvature.batch_size = 7;  // as fit() sums its batches: the same curvature, bit for bit
  std::unique_ptr<LaplacePosterior> built;
  const auto make = [&](double delta, const LaplaceCurvatureResult& f) -> LaplacePosterior& {
    built = std::make_unique<LaplacePosterior>(
        net->parameters(), blr::torch::make_options<LaplacePosteriorOptions>(
                               {{"prior_precision", delta},
                                {"ess", static_cast<double>(f.examples)},
                                {"structure", std::string("kron")},
                                {"predictive", std::string("probit")}}));
    return *built;
  };
  const auto marglik = blr::torch::fit_posthoc_laplace(model, d.x, d.y, {}, {}, request, make);
  const auto f = fit(net, d, LaplaceStructure::kKronecker, kSigma);
  EXPECT_TRUE(marglik.prior_precision_chosen);
  EXPECT_NEAR(marglik.prior_precision, blr::torch::laplace_optimal_prior_precision(f),
              1e-12 * marglik.prior_precision);
  EXPECT_NEAR(marglik.log_marginal_likelihood,
              blr::torch::laplace_log_marginal_likelihood(f, marglik.prior_precision), 1e-9);
  ASSERT_TRUE(built);
  EXPECT_TRUE(built->posterior_ready());

  request.noise_std_by_marglik = true;
  const auto sigma = blr::torch::fit_posthoc_laplace(model, d.x, d.y, {}, {}, request, make);
  EXPECT_EQ(sigma.fit.noise_std, blr::torch::laplace_optimal_noise_std(f));
  EXPECT_EQ(sigma.run_noise_std, kSigma);

  request.noise_std_by_marglik = false;
  request.prior_precision_method = "gridsearch";
  request.grid = {0.1, 10.0, 5};
  const auto grid =
      blr::torch::fit_posthoc_laplace(model, d.x, d.y, d.x.slice(0, 0, 10), d.y.slice(0, 0, 10),
                                      request, make);
  ASSERT_TRUE(grid.search);
  EXPECT_EQ(grid.prior_precision, grid.search->best);
  const auto lowest = std::min_element(grid.search->nll.begin(), grid.search->nll.end());
  EXPECT_EQ(grid.search->grid[static_cast<std::size_t>(lowest - grid.search->nll.begin())],
            grid.prior_precision);

  expect_error([&] { blr::torch::fit_posthoc_laplace(model, d.x, d.y, {}, {}, request, make); },
               "validation split");
  request.noise_std_by_marglik = true;
  expect_error([&] { blr::torch::fit_posthoc_laplace(model, d.x, d.y, {}, {}, request, make); },
               "does not combine with the grid search");
}

}  // namespace laplace_regression_test
