// The post-hoc Laplace posterior (blr/torch/posterior/laplace_fit.hpp, blr/torch/optim/laplace.hpp):
//  - the diagonal Gauss–Newton against Σ_i diag(J_iᵀ Λ_i J_i) from per-example Jacobians written
//    plainly here (one autograd::grad per example and class), all weights and the last layer;
//  - the empirical Fisher against per-example gradients;
//  - on a binary logistic model written as two logits [0, xᵀw], N Ĝ + δ equals the diagonal of the
//    core's Bayesian logistic Laplace precision ∇²(−log p(w|D)) at the core's mode, and with one
//    weight the marginal likelihood equals the core's Laplace evidence;
//  - the prior precision maximises the marginal likelihood;
//  - the posterior: samples θ* + σ⊙ε with σ² = 1/(N Ĝ + δ), restores θ*, refuses to step, round
//    trip, bad curvature, and the registry keeps it out of the optimizers that train.
//
// Tolerances: everything is float64. The engine and the Jacobian reference sum the same O(1)
// products (≤ 3 classes × 7 examples) in different orders, ≲ 50 roundings of 1.1e-16 relative, so
// 1e-12 absolute on values ≤ 10. The logistic comparison sums N = 40 terms x²σ(1−σ) ≤ 10 in two
// orders: 1e-12 relative. The evidence adds O(10) terms: 1e-10 absolute.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "blr/inference/glm.hpp"
#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/train/config.hpp"
#include "option_helpers.hpp"
#include "logistic_as_softmax.hpp"
#include "tensor_helpers.hpp"

namespace {

using blr::torch::LaplaceCurvature;
using blr::torch::LaplaceSubset;
using ::blr::torch::testing::kF64;

struct TinyData {
  ::at::Tensor x, y;
};

TinyData tiny_data() {
  ::torch::manual_seed(4);
  return {::torch::randn({7, 3}, kF64), ::torch::randint(0, 3, {7}, ::torch::kLong)};
}

::torch::nn::Sequential tiny_net() {
  ::torch::manual_seed(5);
  ::torch::nn::Sequential net(::torch::nn::Linear(3, 4), ::torch::nn::Tanh(),
                              ::torch::nn::Linear(4, 3));
  net->to(::torch::kFloat64);
  return net;
}

/// Σ_i diag(J_iᵀ Λ_i J_i) / N (ggn) or Σ_i (∇ℓ_i)² / N (ef), plainly: per example, the Jacobian row
/// by row with autograd::grad.
std::vector<::at::Tensor> reference_curvature(::torch::nn::Sequential& net, const TinyData& d,
                                              LaplaceCurvature kind) {
  const auto params = net->parameters();
  std::vector<::at::Tensor> sum;
  for (const auto& p : params) sum.push_back(::torch::zeros_like(p));
  const int64_t n = d.x.size(0);
  for (int64_t i = 0; i < n; ++i) {
    const auto f = net->forward(d.x.slice(0, i, i + 1)).squeeze(0);  // C logits
    const int64_t c = f.size(0);
    if (kind == LaplaceCurvature::kEmpiricalFisher) {
      const auto loss = -::torch::log_softmax(f, 0)[d.y[i].item<int64_t>()];
      const auto g = ::torch::autograd::grad({loss}, params);
      for (size_t j = 0; j < params.size(); ++j) sum[j] += g[j].square();
      continue;
    }
    std::vector<std::vector<::at::Tensor>> jac;  // jac[k][j] = ∂f_k/∂θ_j
    for (int64_t k = 0; k < c; ++k) jac.push_back(::torch::autograd::grad({f[k]}, params, {}, true));
    const auto p = ::torch::softmax(f, 0).detach();
    for (int64_t a = 0; a < c; ++a) {
      for (int64_t b = 0; b < c; ++b) {
        const double lambda = (a == b ? p[a].item<double>() : 0.0) - p[a].item<double>() * p[b].item<double>();
        for (size_t j = 0; j < params.size(); ++j) sum[j] += lambda * jac[a][j] * jac[b][j];
      }
    }
  }
  for (auto& s : sum) s /= static_cast<double>(n);
  return sum;
}

using ::blr::torch::testing::max_abs_diff;

TEST(LaplaceFit, GaussNewtonAndEmpiricalFisherMatchPerExampleJacobians) {
  const auto data = tiny_data();
  auto net = tiny_net();
  const blr::torch::Model model(net);
  for (auto kind : {LaplaceCurvature::kGaussNewton, LaplaceCurvature::kEmpiricalFisher}) {
    blr::torch::LaplaceCurvatureOptions options;
    options.curvature = kind;
    options.batch_size = 3;  // 3 + 3 + 1 examples: the batches are summed
    const auto fit = blr::torch::laplace_curvature(model, data.x, data.y, options);
    const auto reference = reference_curvature(net, data, kind);
    ASSERT_EQ(fit.curvature.size(), reference.size());
    for (size_t j = 0; j < reference.size(); ++j) {
      ASSERT_TRUE(fit.curvature[j].defined());
      EXPECT_LT(max_abs_diff(fit.curvature[j], reference[j]), 1e-12) << fit.names[j];
    }
    EXPECT_EQ(fit.examples, 7);
    EXPECT_EQ(fit.subset_size, 4 * 3 + 4 + 3 * 4 + 3);
    const double nll = ::torch::nll_loss(::torch::log_softmax(net->forward(data.x), 1), data.y,
                                         {}, at::Reduction::Sum)
                           .item<double>();
    EXPECT_NEAR(fit.nll_sum, nll, 1e-12);
  }
}

TEST(LaplaceFit, LastLayerIsTheLastModulesWeightsAndMatchesTheReference) {
  const auto data = tiny_data();
  auto net = tiny_net();
  const blr::torch::Model model(net);
  blr::torch::LaplaceCurvatureOptions options;
  options.subset = LaplaceSubset::kLastLayer;
  const auto fit = blr::torch::laplace_curvature(model, data.x, data.y, options);
  const auto reference = reference_curvature(net, data, LaplaceCurvature::kGaussNewton);
  ASSERT_EQ(fit.names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_FALSE(fit.curvature[0].defined());
  EXPECT_FALSE(fit.curvature[1].defined());
  EXPECT_LT(max_abs_diff(fit.curvature[2], reference[2]), 1e-12);
  EXPECT_LT(max_abs_diff(fit.curvature[3], reference[3]), 1e-12);
  EXPECT_EQ(fit.subset_size, 3 * 4 + 3);
  // The gradients flags are as they were, and no gradient is left behind.
  for (const auto& p : net->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_FALSE(p.grad().defined());
  }
}

using ::blr::torch::testing::LogisticAsSoftmax;

struct LogisticProblem {
  blr::Matrix x;
  blr::Vector y;
};

LogisticProblem logistic_problem(int d) {
  ::torch::manual_seed(11);
  const int n = 40;
  const auto x = ::torch::randn({n, d}, kF64);
  const auto w = ::torch::randn({d}, kF64);
  const auto y = ::torch::bernoulli(::torch::sigmoid(x.matmul(w)));
  LogisticProblem p{blr::Matrix(n, d), blr::Vector(n)};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) p.x(i, j) = x[i][j].item<double>();
    p.y(i) = y[i].item<double>();
  }
  return p;
}

blr::torch::LaplaceCurvatureResult torch_fit_at(const LogisticProblem& p, const blr::Vector& w) {
  const int64_t n = p.x.rows(), d = p.x.cols();
  LogisticAsSoftmax model(d);
  model->to(::torch::kFloat64);
  ::at::Tensor x = ::torch::empty({n, d}, kF64), y = ::torch::empty({n}, ::torch::kLong);
  {
    ::torch::NoGradGuard no_grad;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) x[i][j] = p.x(i, j);
      y[i] = static_cast<int64_t>(p.y(i));
    }
    for (int64_t j = 0; j < d; ++j) model->linear->weight[0][j] = w(j);
  }
  return blr::torch::laplace_curvature(blr::torch::Model(model), x, y);
}

TEST(LaplaceFit, LinearModelEqualsTheCoresBayesianLogisticLaplace) {
  const double delta = 0.7;
  const auto p = logistic_problem(3);
  const auto glm = blr::inference::Glm::with_isotropic_prior(p.x, p.y, blr::inference::Likelihood::logistic, delta);
  const auto core = blr::inference::laplace(glm);
  ASSERT_TRUE(core.converged);
  const auto fit = torch_fit_at(p, core.mean);
  const blr::Vector precision = glm.hessian(core.mean).diagonal();  // the posterior precision
  const double n = static_cast<double>(fit.examples);
  for (int j = 0; j < 3; ++j) {
    const double mine = n * fit.curvature[0][0][j].item<double>() + delta;
    EXPECT_NEAR(mine, precision(j), 1e-12 * precision(j)) << j;
  }
  EXPECT_NEAR(fit.nll_sum, -glm.log_likelihood(core.mean), 1e-10);
}

TEST(LaplaceFit, OneWeightEvidenceIsTheCoresLaplaceEvidence) {
  // With one weight the diagonal Laplace is the full one.
  const double delta = 2.5;
  const auto p = logistic_problem(1);
  const auto glm = blr::inference::Glm::with_isotropic_prior(p.x, p.y, blr::inference::Likelihood::logistic, delta);
  const auto core = blr::inference::laplace(glm);
  ASSERT_TRUE(core.converged);
  const auto fit = torch_fit_at(p, core.mean);
  EXPECT_NEAR(blr::torch::laplace_log_marginal_likelihood(fit, delta), core.log_evidence, 1e-10);
}

TEST(LaplaceFit, ChosenPriorPrecisionMaximisesTheMarginalLikelihood) {
  const auto data = tiny_data();
  auto net = tiny_net();
  const auto fit = blr::torch::laplace_curvature(blr::torch::Model(net), data.x, data.y);
  const double best = blr::torch::laplace_optimal_prior_precision(fit);
  const double at_best = blr::torch::laplace_log_marginal_likelihood(fit, best);
  for (double factor : {0.5, 0.9, 0.999, 1.001, 1.1, 2.0}) {
    EXPECT_LT(blr::torch::laplace_log_marginal_likelihood(fit, best * factor), at_best) << factor;
  }
  // The formula of the header, written out.
  double log_det = 0.0;
  for (const auto& c : fit.curvature) log_det += (c * 7.0 + best).log().sum().item<double>();
  const double plain = -fit.nll_sum - 0.5 * best * fit.subset_norm_squared +
                       0.5 * static_cast<double>(fit.subset_size) * std::log(best) - 0.5 * log_det;
  EXPECT_NEAR(at_best, plain, 1e-10);
  EXPECT_THROW(blr::torch::laplace_log_marginal_likelihood(fit, -1.0), blr::Error);
}

std::unique_ptr<blr::torch::LaplacePosterior> make_posterior(
    ::torch::nn::Sequential& net, const blr::torch::LaplaceCurvatureResult& fit, double delta) {
  auto post = std::make_unique<blr::torch::LaplacePosterior>(
      net->parameters(), blr::torch::make_options<blr::torch::LaplacePosteriorOptions>(
                             {{"prior_precision", delta}, {"ess", 7.0}, {"seed", int64_t{3}}}));
  post->set_curvature(fit.curvature);
  return post;
}

TEST(LaplacePosterior, SamplesThroughSigmaAndRestoresTheMode) {
  const auto data = tiny_data();
  auto net = tiny_net();
  blr::torch::LaplaceCurvatureOptions options;
  options.subset = LaplaceSubset::kLastLayer;
  const auto fit = blr::torch::laplace_curvature(blr::torch::Model(net), data.x, data.y, options);
  const auto owner = make_posterior(net, fit, 0.5);
  auto& post = *owner;
  const auto params = net->parameters();
  std::vector<::at::Tensor> mode, noise;
  for (const auto& p : params) {
    mode.push_back(p.detach().clone());
    noise.push_back(::torch::randn_like(p));
  }
  const auto variance = post.posterior_variance();
  post.sample_parameters(false, noise);
  for (size_t j = 0; j < params.size(); ++j) {
    const auto expected = j < 2 ? mode[j] : mode[j] + noise[j] * (fit.curvature[j] * 7.0 + 0.5).rsqrt();
    EXPECT_LT(max_abs_diff(params[j].detach(), expected), 1e-15) << j;
    if (j < 2) { EXPECT_EQ(variance[j].abs().max().item<double>(), 0.0); }
  }
  post.restore_parameters();
  for (size_t j = 0; j < params.size(); ++j) EXPECT_TRUE(params[j].detach().equal(mode[j]));
  // Moments of drawn samples: the sample variance of 4000 draws is within 5 standard errors
  // (√(2/4000) ≈ 2.2% relative) of σ².
  const int draws = 4000;
  auto sum = ::torch::zeros_like(mode[2]), sum_sq = ::torch::zeros_like(mode[2]);
  for (int s = 0; s < draws; ++s) {
    blr::torch::SampledParameters sample(post, false);
    const auto d = params[2].detach() - mode[2];
    sum += d;
    sum_sq += d.square();
  }
  const auto var = sum_sq / draws;
  EXPECT_LT(((var / variance[2]) - 1).abs().max().item<double>(), 5 * std::sqrt(2.0 / draws));
  EXPECT_THROW(post.step(), blr::Error);
}

TEST(LaplacePosterior, RoundTripAndBadCurvature) {
  const auto data = tiny_data();
  auto net = tiny_net();
  const auto fit = blr::torch::laplace_curvature(blr::torch::Model(net), data.x, data.y);
  auto owner = make_posterior(net, fit, 0.5);
  auto& post = *owner;
  const std::string path = ::testing::TempDir() + "laplace_roundtrip.pt";
  {
    ::torch::serialize::OutputArchive archive;
    post.save(archive);
    archive.save_to(path);
  }
  auto other_net = tiny_net();
  blr::torch::LaplacePosterior loaded(
      other_net->parameters(), blr::torch::make_options<blr::torch::LaplacePosteriorOptions>(
                                   {{"prior_precision", 0.5}, {"ess", 7.0}}));
  {
    ::torch::serialize::InputArchive archive;
    archive.load_from(path);
    loaded.load(archive);
  }
  std::remove(path.c_str());
  const auto a = post.posterior_variance(), b = loaded.posterior_variance();
  for (size_t j = 0; j < a.size(); ++j) EXPECT_TRUE(a[j].equal(b[j])) << j;

  auto bad = fit.curvature;
  bad[0] = -bad[0] - 1;
  EXPECT_THROW(post.set_curvature(bad), blr::Error);
  bad = fit.curvature;
  bad[1] = ::torch::zeros({5}, kF64);
  EXPECT_THROW(post.set_curvature(bad), blr::Error);
  EXPECT_THROW(post.set_curvature(std::vector<::at::Tensor>(4)), blr::Error);  // empty subset
  blr::torch::LaplacePosterior unfitted(
      net->parameters(),
      blr::torch::make_options<blr::torch::LaplacePosteriorOptions>({{"ess", 7.0}}));
  EXPECT_THROW(unfitted.posterior_variance(), blr::Error);
}

TEST(LaplacePosterior, IsRegisteredAsAPosteriorThatDoesNotTrain) {
  const auto& entry = blr::torch::find_optimizer("laplace");
  EXPECT_FALSE(entry.trains);
  EXPECT_TRUE(entry.variational);
  const auto names = blr::torch::optimizer_names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "laplace"), names.end());
  blr::torch::TrainConfig config;
  config.optimizer = "laplace";
  EXPECT_NO_THROW(config.validate());  // blr eval scores it
  EXPECT_THROW(config.validate_for_training(), blr::Error);
}

}  // namespace
