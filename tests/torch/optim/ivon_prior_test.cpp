// A general prior N(m₀, diag(1/(λp₀))) in IVON (MeanFieldOptimizer::set_prior): the options' prior
// given per coordinate leaves every step bitwise as it was; one step with a nonzero prior mean
// against IVON written out by hand; the state round trip with a prior; the posterior as the next
// prior; misuse.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/optim/vadam.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

using ::blr::torch::testing::f64;

using ::blr::torch::testing::quadratic;

/// `steps` steps of `opt.training_samples()` samples each with the given draws (one per sample).
void train(Ivon& opt, ::at::Tensor& theta, const std::vector<::at::Tensor>& noise, int steps,
           size_t& next) {
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < opt.training_samples(); ++k) {
      opt.sample_parameters(true, {noise.at(next++ % noise.size()).to(theta.options())});
      opt.zero_grad();
      quadratic(theta).backward();
      opt.restore_parameters();
    }
    opt.step();
  }
}

std::vector<::at::Tensor> draws(int64_t n, int count) {
  ::torch::manual_seed(17);
  std::vector<::at::Tensor> out;
  for (int k = 0; k < count; ++k) out.push_back(::torch::randn({n}, ::torch::kFloat64));
  return out;
}

struct Path {
  bool fused;
  ::at::ScalarType dtype;
  int64_t samples;
};

class IvonPriorPaths : public ::testing::TestWithParam<Path> {};

// The options' prior N(0, 1/(λδ)) given per coordinate (m₀ = 0, p₀ = δ) runs through the
// per-coordinate code and must give bitwise the same μ, P and u as the default, step after step.
TEST_P(IvonPriorPaths, OptionsPriorPerCoordinateIsBitwiseTheDefault) {
  const Path path = GetParam();
  const int64_t n = 40000;  // several chunks of the fused loop
  const double delta = 3e-3;
  const auto options = make_options<IvonOptions>(
      {{"lr", 0.05}, {"ess", 500.0}, {"hess_init", 0.7}, {"weight_decay", delta},
       {"beta2", 0.9}, {"mc_samples", static_cast<double>(path.samples)}});
  const auto t = ::torch::dtype(path.dtype);
  ::at::Tensor x = ::torch::zeros({n}, t).requires_grad_();
  ::at::Tensor y = ::torch::zeros({n}, t).requires_grad_();
  Ivon plain({x}, options), with_prior({y}, options);
  plain.set_fused_kernels(path.fused);
  with_prior.set_fused_kernels(path.fused);
  const auto noise = draws(n, 8);
  size_t nx = 0, ny = 0;
  train(plain, x, noise, 2, nx);
  train(with_prior, y, noise, 2, ny);
  with_prior.set_prior({::torch::zeros({n}, t)}, {::torch::full({n}, delta, t)});
  ASSERT_TRUE(with_prior.has_prior());
  train(plain, x, noise, 4, nx);
  train(with_prior, y, noise, 4, ny);
  EXPECT_TRUE(::torch::equal(x, y));
  EXPECT_TRUE(::torch::equal(plain.posterior_precision()[0], with_prior.posterior_precision()[0]));
  EXPECT_TRUE(::torch::equal(plain.momentum()[0], with_prior.momentum()[0]));
  // And the prior changed something the moment it differs from the options' one.
  with_prior.set_prior({::torch::full({n}, 0.5, t)}, {::torch::full({n}, delta, t)});
  train(plain, x, noise, 1, nx);
  train(with_prior, y, noise, 1, ny);
  EXPECT_FALSE(::torch::equal(x, y));
}

// IVON written out for one coordinate, one step, prior N(m₀, 1/(λp₀)) set before the first step
// (so P₀ = h₀ + p₀): loss ½·2·θ², ε = 0.5, 'price' estimator, debias, rescale_lr.
class IvonPriorStep : public ::testing::TestWithParam<bool> {};  // fused kernels or tensor ops

TEST_P(IvonPriorStep, OneStepWithAPriorMeanMatchesTheHandComputedStep) {
  const Path path{GetParam(), ::at::kDouble, 1};
  const double mu0 = 1.0, lambda = 100, h0 = 1.0, delta = 1e-4, alpha = 0.1, beta1 = 0.9,
               beta2 = 0.9, m0 = 0.3, p0 = 0.2, eps = 0.5;
  ::at::Tensor mu = f64({mu0}).requires_grad_();
  Ivon opt({mu}, make_options<IvonOptions>({{"lr", alpha}, {"ess", lambda}, {"hess_init", h0},
                                            {"weight_decay", delta}, {"beta1", beta1},
                                            {"beta2", beta2}}));
  opt.set_fused_kernels(path.fused);
  opt.set_prior({f64({m0})}, {f64({p0})});
  opt.sample_parameters(true, {f64({eps})});
  opt.zero_grad();
  (0.5 * 2.0 * mu.square()).sum().backward();
  opt.restore_parameters();
  opt.step();

  const double P0 = (h0 + delta) - delta + p0;           // h₀ + p₀
  const double sigma = 1.0 / std::sqrt(lambda * P0);
  const double theta = mu0 + sigma * eps;
  const double g = 2.0 * theta;
  const double hhat = lambda * P0 * (sigma * eps) * g;   // Price: λ·P·(θ − μ)·ĝ
  const double m_hat = ((1 - beta1) * g) / (1 - beta1);  // debiased momentum at t = 1
  const double H = hhat + p0;
  const double rho = 1 - beta2;
  const double P1 = beta2 * P0 + rho * H + 0.5 * rho * rho * (P0 - H) * (P0 - H) / P0;
  const double mu1 = mu0 - alpha * (h0 + delta) * (m_hat + p0 * (mu0 - m0)) / P1;
  EXPECT_NEAR(mu.item<double>(), mu1, 1e-14);
  EXPECT_NEAR(opt.posterior_precision()[0].item<double>(), lambda * P1, 1e-11);
  EXPECT_NEAR(opt.curvature()[0].item<double>(), P1 - p0, 1e-14);
  // Without the prior the step differs (the prior mean pulls μ towards m₀ = 0.3, not 0).
  EXPECT_GT(std::abs(mu1 - (mu0 - alpha * (h0 + delta) * (g + p0 * mu0) / P1)), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, IvonPriorPaths,
    ::testing::Values(Path{true, ::at::kFloat, 1}, Path{true, ::at::kDouble, 1},
                      Path{true, ::at::kDouble, 2}, Path{false, ::at::kFloat, 1},
                      Path{false, ::at::kDouble, 1}, Path{false, ::at::kDouble, 2}),
    [](const auto& info) {
      return std::string(info.param.fused ? "Fused" : "TensorOps") +
             (info.param.dtype == ::at::kFloat ? "Float" : "Double") +
             std::to_string(info.param.samples) + "Samples";
    });

INSTANTIATE_TEST_SUITE_P(FusedAndTensorOps, IvonPriorStep, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "TensorOps"; });

std::string saved(const Ivon& opt) {
  ::torch::serialize::OutputArchive out;
  opt.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  return bytes.str();
}

int64_t format_version(const std::string& bytes) {
  ::torch::serialize::InputArchive in;
  std::istringstream stream(bytes);
  in.load_from(stream);
  c10::IValue v;
  in.read("blr/format_version", v);
  return v.toInt();
}

void load(Ivon& opt, const std::string& bytes) {
  ::torch::serialize::InputArchive in;
  std::istringstream stream(bytes);
  in.load_from(stream);
  opt.load(in);
}

// The posterior becomes the prior (m₀ = μ, p₀ = P), is saved and loaded with the state (format 3),
// and the resumed run is bitwise the uninterrupted one; without a prior the format stays 2.
TEST(IvonPrior, PosteriorAsPriorRoundTripsThroughTheState) {
  const int64_t n = 5000;
  const auto options = make_options<IvonOptions>(
      {{"lr", 0.05}, {"ess", 300.0}, {"hess_init", 0.5}, {"beta2", 0.95}, {"seed", 4.0}});
  ::at::Tensor x = ::torch::zeros({n}, ::torch::kFloat64).requires_grad_();
  Ivon a({x}, options);
  const auto noise = draws(n, 5);
  size_t na = 0;
  train(a, x, noise, 3, na);
  EXPECT_EQ(format_version(saved(a)), 2);
  a.set_prior_from_posterior();
  EXPECT_TRUE(::torch::equal(a.prior_means()[0], x.detach()));
  // p₀ = P exactly: the task's own curvature h = P − p₀ starts at 0; λp₀ is the posterior
  // precision λP (to one rounding of the division).
  EXPECT_TRUE(::torch::equal(a.curvature()[0], ::torch::zeros({n}, ::torch::kFloat64)));
  EXPECT_TRUE(::torch::allclose(a.prior_precisions()[0], a.posterior_precision()[0] / 300.0,
                                /*rtol=*/4e-16, /*atol=*/0.0));
  train(a, x, noise, 2, na);
  const std::string bytes = saved(a);
  EXPECT_EQ(format_version(bytes), 3);

  ::at::Tensor y = x.detach().clone().requires_grad_();
  Ivon b({y}, options);
  load(b, bytes);
  ASSERT_TRUE(b.has_prior());
  EXPECT_TRUE(::torch::equal(a.prior_means()[0], b.prior_means()[0]));
  EXPECT_TRUE(::torch::equal(a.prior_precisions()[0], b.prior_precisions()[0]));
  size_t nb = na;
  train(a, x, noise, 3, na);
  train(b, y, noise, 3, nb);
  EXPECT_TRUE(::torch::equal(x, y));
  EXPECT_TRUE(::torch::equal(a.posterior_precision()[0], b.posterior_precision()[0]));
  EXPECT_TRUE(::torch::equal(a.momentum()[0], b.momentum()[0]));

  // Loading a state without a prior removes it; clear_prior goes back to the options' prior.
  Ivon c({y}, options);
  train(c, y, noise, 1, nb);
  load(b, saved(c));
  EXPECT_FALSE(b.has_prior());
  a.clear_prior();
  EXPECT_FALSE(a.has_prior());
  EXPECT_TRUE(::torch::equal(a.prior_precisions()[0],
                             ::torch::full({n}, options.weight_decay, ::torch::kFloat64)));
}

TEST(IvonPrior, MisuseIsASentenceError) {
  ::at::Tensor x = ::torch::zeros({4}, ::torch::kFloat64).requires_grad_();
  Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  const auto zeros = ::torch::zeros({4}, ::torch::kFloat64);
  auto expect_error = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "expected an error containing '" << part << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error([&] { opt.set_prior({zeros}, {::torch::zeros({5}, ::torch::kFloat64)}); },
               "has shape [5]");
  expect_error([&] { opt.set_prior({zeros}, {}); }, "one prior mean and one prior precision");
  expect_error([&] { opt.set_prior({zeros}, {zeros - 1.0}); }, "must be finite and >= 0");
  expect_error([&] { opt.set_prior({zeros / 0.0}, {zeros}); }, "prior mean of parameter 0");
  EXPECT_FALSE(opt.has_prior());  // nothing changed by the refused calls
  opt.sample_parameters(true);
  expect_error([&] { opt.set_prior_from_posterior(); }, "hold a sample");
  opt.restore_parameters();

  ::at::Tensor v = ::torch::zeros({4}, ::torch::kFloat64).requires_grad_();
  Vadam vadam({v}, make_options<VadamOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  expect_error([&] { vadam.set_prior({zeros}, {zeros}); }, "takes no general prior");
}

}  // namespace
}  // namespace blr::torch
