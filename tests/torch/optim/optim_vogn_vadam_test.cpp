// VOGN/OGN and Vadam oracles, exact per-example squared gradients, and the optimizer factory.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/curvature/per_example.hpp"
#include "blr/torch/optim/vadam.hpp"
#include "blr/torch/optim/vogn.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

namespace F = ::torch::nn::functional;

using ::blr::torch::testing::f64;

using ::blr::torch::testing::max_abs;

class VognVadamPaths : public ::testing::TestWithParam<bool> {};  // fused kernels or tensor ops

// algorithms.md §5: N = 100, λp = 1, μ0 = 1, loss ½·2θ², ε = 0.5 ⇒ θ = 1.5, ĝ = 3, μ1 = 0.999,
// precision N·s + λp = 1.9.
TEST_P(VognVadamPaths, VadamFirstStepOracle) {
  ::at::Tensor mu = f64({1.0}).requires_grad_();
  Vadam opt({mu}, make_options<VadamOptions>({{"lr", 1e-3}, {"ess", 100.0}, {"prior_precision", 1.0}, {"prec_init", 1.0}}));
  opt.set_fused_kernels(GetParam());
  opt.sample_parameters(true, {f64({0.5})});
  EXPECT_NEAR(mu.item<double>(), 1.5, 1e-15);
  (0.5 * 2.0 * mu.square()).sum().backward();
  EXPECT_NEAR(mu.grad().item<double>(), 3.0, 1e-15);
  opt.restore_parameters();
  opt.step();
  EXPECT_NEAR(mu.item<double>(), 0.999, 1e-12);
  EXPECT_NEAR(1.0 / opt.posterior_variance()[0].item<double>(), 1.9, 1e-12);
}

/// One VOGN/OGN step on a bias-free Linear layer with one example, loss ½‖θa − y‖².
struct LinearOracle {
  ::at::Tensor a = f64({0.5, -1.0, 2.0}).reshape({1, 3});
  ::at::Tensor y = f64({0.3, -0.7}).reshape({1, 2});
  ::at::Tensor theta;  ///< the weights the gradient was taken at
  ::at::Tensor g;      ///< the gradient there

  void sample_and_collect(MeanFieldOptimizer& opt, ::at::Tensor& w) {
    opt.sample_parameters(true);
    theta = w.detach().clone();
    opt.zero_grad();
    ::at::Tensor z = ::torch::matmul(a, w.t());
    z.retain_grad();
    (0.5 * (z - y).square().sum(1)).mean().backward();
    g = w.grad().detach().clone();
    opt.add_squared_gradients({linear_squared_gradients(a, z.grad(), false).weight});
    opt.restore_parameters();
  }
};

// algorithms.md §3: w = 1, damping 0, K = 1, M = 1: s = (e·a)², σ² = 1/(N s + 1/prior variance).
TEST_P(VognVadamPaths, VognOracleOnABiasFreeLinearLayer) {
  const double n = 50, prior_precision = 4, lr = 0.1, beta1 = 0.9;
  ::at::Tensor w = f64({0.1, 0.2, -0.3, 0.4, -0.5, 0.6}).reshape({2, 3}).requires_grad_();
  const ::at::Tensor mu0 = w.detach().clone();
  Vogn opt({w}, make_options<VognOptions>({{"lr", lr}, {"ess", n}, {"prior_precision", static_cast<double>(prior_precision)}, {"curvature_rate", 1.0}, {"beta1", static_cast<double>(beta1)}, {"seed", 4.0}}));
  opt.set_fused_kernels(GetParam());
  LinearOracle oracle;
  oracle.sample_and_collect(opt, w);
  EXPECT_GT(max_abs(oracle.theta - mu0), 0.0);  // VOGN perturbs
  opt.step();
  const ::at::Tensor e = ::torch::matmul(oracle.a, oracle.theta.t()) - oracle.y;  // 1×2
  const ::at::Tensor s = ::torch::matmul(e.t(), oracle.a).square();
  EXPECT_LT(max_abs(oracle.g - ::torch::matmul(e.t(), oracle.a)), 1e-14);
  EXPECT_LT(max_abs(opt.curvature()[0] - s), 1e-14);
  EXPECT_LT(max_abs(opt.posterior_variance()[0] - 1.0 / (n * s + prior_precision)), 1e-14);
  // m1 = ĝ + δ̃μ0,  μ1 = μ0 − α m1/(s + δ̃).
  const double prior = prior_precision / n;
  const ::at::Tensor m1 = oracle.g + prior * mu0;
  EXPECT_LT(max_abs(w.detach() - (mu0 - lr * m1 / (s + prior))), 1e-14);
}

TEST_P(VognVadamPaths, OgnTakesGradientsAtTheMean) {
  const double n = 20, prior_precision = 1, lr = 0.05, rate = 0.3, s0 = 0.2;
  ::at::Tensor w = f64({0.1, 0.2, -0.3, 0.4, -0.5, 0.6}).reshape({2, 3}).requires_grad_();
  const ::at::Tensor mu0 = w.detach().clone();
  Ogn opt({w}, make_options<OgnOptions>({{"lr", lr}, {"ess", n}, {"prior_precision", prior_precision}, {"curvature_rate", rate}, {"hess_init", s0}}));
  EXPECT_THROW(make_options<OgnOptions>({{"mc_samples", 5.0}}), Error);  // OGN draws no samples
  opt.set_fused_kernels(GetParam());
  EXPECT_EQ(opt.training_samples(), 1);
  LinearOracle oracle;
  oracle.sample_and_collect(opt, w);
  EXPECT_TRUE(::torch::equal(oracle.theta, mu0));
  opt.step();
  const ::at::Tensor e = ::torch::matmul(oracle.a, mu0.t()) - oracle.y;
  const ::at::Tensor g = ::torch::matmul(e.t(), oracle.a);
  const ::at::Tensor s1 = (1 - rate) * s0 + rate * g.square();
  const double prior = prior_precision / n;
  EXPECT_LT(max_abs(opt.curvature()[0] - s1), 1e-14);
  EXPECT_LT(max_abs(w.detach() - (mu0 - lr * (g + prior * mu0) / (s1 + prior))), 1e-14);
}

INSTANTIATE_TEST_SUITE_P(FusedAndTensorOps, VognVadamPaths, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "TensorOps"; });

TEST(Vogn, NeedsSquaredGradientsInEverySample) {
  ::at::Tensor w = ::torch::zeros({2, 3}, ::torch::kFloat64).requires_grad_();
  Vogn opt({w}, make_options<VognOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  EXPECT_TRUE(opt.needs_squared_gradients());
  {
    SampledParameters sampled(opt, true);
    w.sum().backward();
  }
  EXPECT_THROW(opt.step(), Error);
  EXPECT_THROW(opt.add_squared_gradients({::torch::ones({2, 3})}), Error);  // outside a sample
}

/// The error an optimizer of type Opt gives for options changed by `change` from a valid set
/// (empty when there is none).
template <class Opt>
std::string error_of(const std::function<void(typename Opt::Options&)>& change) {
  typename Opt::Options o;
  o.ess = 10;
  change(o);
  ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
  try {
    Opt opt({x}, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Vogn, RejectsBadOptions) {
  using O = VognOptions;
  EXPECT_EQ(error_of<Vogn>([](O&) {}), "");
  EXPECT_NE(error_of<Vogn>([](O& o) { o.ess = 0; }).find("'ess'"), std::string::npos);
  EXPECT_NE(error_of<Vogn>([](O& o) { o.curvature_rate = 0; }).find("'curvature_rate'"), std::string::npos);
  EXPECT_NE(error_of<Vogn>([](O& o) { o.prior_precision = 0; }).find("'prior_precision'"), std::string::npos);
  EXPECT_NE(error_of<Vogn>([](O& o) { o.damping = -1; }).find("'damping'"), std::string::npos);
  EXPECT_NE(error_of<Vogn>([](O& o) { o.beta1 = 1; }).find("'beta1'"), std::string::npos);
}

TEST(Vadam, RejectsBadOptions) {
  using O = VadamOptions;
  EXPECT_EQ(error_of<Vadam>([](O&) {}), "");
  EXPECT_NE(error_of<Vadam>([](O& o) { o.ess = 0; }).find("'ess'"), std::string::npos);
  EXPECT_NE(error_of<Vadam>([](O& o) { o.prec_init = 0.5; }).find("'prec_init'"), std::string::npos);
  EXPECT_NE(error_of<Vadam>([](O& o) { o.beta2 = 1; }).find("'beta2'"), std::string::npos);
}

// ---- exact per-example squared gradients against autograd on single examples ----------------

/// A non-quadratic per-example loss of a layer output z_i.
::at::Tensor example_loss(const ::at::Tensor& z) {
  return (z.tanh() + 0.3 * z.square()).sum();
}

TEST(PerExample, LinearMatchesSingleExampleAutograd) {
  ::torch::manual_seed(7);
  const int64_t m = 5;
  const ::at::Tensor x = ::torch::randn({m, 4}, ::torch::kFloat64);
  ::at::Tensor w = ::torch::randn({3, 4}, ::torch::kFloat64).requires_grad_();
  ::at::Tensor b = ::torch::randn({3}, ::torch::kFloat64).requires_grad_();
  ::at::Tensor z = F::linear(x, w, b);
  z.retain_grad();
  (example_loss(z) / m).backward();  // the mean minibatch loss
  const SquaredGradients sq = linear_squared_gradients(x, z.grad(), true);

  ::at::Tensor ew = ::torch::zeros_like(w), eb = ::torch::zeros_like(b);
  for (int64_t i = 0; i < m; ++i) {
    w.mutable_grad().reset();
    b.mutable_grad().reset();
    example_loss(F::linear(x.slice(0, i, i + 1), w, b)).backward();
    ew += w.grad().square() / m;
    eb += b.grad().square() / m;
  }
  EXPECT_LT(max_abs(sq.weight - ew), 1e-12);
  EXPECT_LT(max_abs(sq.bias - eb), 1e-12);
  EXPECT_FALSE(linear_squared_gradients(x, z.grad(), false).bias.defined());
}

TEST(PerExample, Conv2dMatchesSingleExampleAutograd) {
  ::torch::manual_seed(8);
  const int64_t m = 3;
  const ::at::Tensor x = ::torch::randn({m, 2, 7, 8}, ::torch::kFloat64);
  ::at::Tensor w = ::torch::randn({4, 2, 3, 2}, ::torch::kFloat64).requires_grad_();
  ::at::Tensor b = ::torch::randn({4}, ::torch::kFloat64).requires_grad_();
  auto options = F::Conv2dFuncOptions().stride({2, 1}).padding({1, 0}).dilation({1, 2});
  ::at::Tensor z = F::conv2d(x, w, options.bias(b));
  z.retain_grad();
  (example_loss(z) / m).backward();
  const SquaredGradients sq =
      conv2d_squared_gradients(x, z.grad(), {3, 2}, {2, 1}, {1, 0}, {1, 2}, true);

  ::at::Tensor ew = ::torch::zeros_like(w), eb = ::torch::zeros_like(b);
  for (int64_t i = 0; i < m; ++i) {
    w.mutable_grad().reset();
    b.mutable_grad().reset();
    example_loss(F::conv2d(x.slice(0, i, i + 1), w, options.bias(b))).backward();
    ew += w.grad().square() / m;
    eb += b.grad().square() / m;
  }
  EXPECT_LT(max_abs(sq.weight - ew), 1e-12);
  EXPECT_LT(max_abs(sq.bias - eb), 1e-12);
}

TEST(PerExample, RejectsMismatchedShapes) {
  EXPECT_THROW(linear_squared_gradients(::torch::zeros({4, 3}), ::torch::zeros({5, 2}), true),
               Error);
  EXPECT_THROW(conv2d_squared_gradients(::torch::zeros({2, 3}), ::torch::zeros({2, 3}), {1, 1},
                                        {1, 1}, {0, 0}, {1, 1}, false),
               Error);
}

// ---- registry -----------------------------------------------------------------------------

TEST(OptimizerRegistry, BuildsEveryOptimizerWithDefaults) {
  for (const auto& entry : optimizers()) {
    ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
    auto opt = make_optimizer(entry.name, {x}, {}, OptimizerContext{1000, 0});
    ASSERT_TRUE(opt) << entry.name;
    // SAM and bSAM take their two gradients (point, ascent point) as two training samples.
    const bool two_point = entry.name == "sam" || entry.name == "bsam";
    EXPECT_EQ(training_samples(*opt), two_point ? 2 : 1) << entry.name;
    if (entry.trains) {  // a post-hoc posterior (laplace) has no learning rate
      set_learning_rate(*opt, 0.25);
      EXPECT_EQ(learning_rate(*opt), 0.25) << entry.name;
    }
    // The registry's "variational" is "has a posterior" (SAM samples, but has none).
    const auto* v = dynamic_cast<VariationalOptimizer*>(opt.get());
    EXPECT_EQ(v != nullptr && v->has_posterior(), entry.variational) << entry.name;
  }
  const auto names = optimizer_names();
  for (const char* name : {"ivon", "vogn", "ogn", "vadam", "adabayes", "adabayes-fp", "adamw", "sgd"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(OptimizerRegistry, PassesTypedOptionsThrough) {
  ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
  auto opt = make_optimizer(
      "ivon", {x},
      {{"mc_samples", int64_t{3}}, {"hess_init", 0.5}, {"debias", false},
       {"hess_approx", std::string("gradsq")}},
      OptimizerContext{1000, 7});
  EXPECT_EQ(training_samples(*opt), 3);
  const IvonOptions& o = dynamic_cast<Ivon&>(*opt).options();
  EXPECT_EQ(o.hess_init, 0.5);
  EXPECT_EQ(o.ess, 1000);  // the training-set size
  EXPECT_EQ(o.seed, 7u);   // the run's seed
  EXPECT_FALSE(o.debias);
  EXPECT_EQ(o.hess_approx, IvonHessian::kGradSquared);
  auto explicit_ess = make_optimizer("ivon", {x}, {{"ess", 77.0}}, OptimizerContext{1000, 0});
  EXPECT_EQ(dynamic_cast<Ivon&>(*explicit_ess).options().ess, 77);
  // The effective options list every key with the value in force.
  const OptionValues effective = effective_options("ivon", {{"lr", 0.5}}, OptimizerContext{60, 3});
  EXPECT_EQ(effective.size(), IvonOptions::table().options().size());
  for (const auto& [key, value] : effective) {
    if (key == "lr") { EXPECT_EQ(std::get<double>(value), 0.5); }
    if (key == "ess") { EXPECT_EQ(std::get<double>(value), 60.0); }
    if (key == "seed") { EXPECT_EQ(std::get<int64_t>(value), 3); }
    if (key == "hess_approx") { EXPECT_EQ(std::get<std::string>(value), "price"); }
  }
}

TEST(OptimizerRegistry, RejectsBadNamesKeysAndValues) {
  auto make = [](const std::string& name, OptionValues options) {
    ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
    return make_optimizer(name, {x}, options, OptimizerContext{100, 0});
  };
  try {
    make("ivn", {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'ivon'"), std::string::npos) << e.what();
  }
  try {
    make("ivon", {{"learning_rate", 0.1}});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("learning_rate"), std::string::npos) << what;
    EXPECT_NE(what.find("hess_init"), std::string::npos) << what;  // lists the valid keys
  }
  try {
    make("ivon", {{"hess_inti", 0.1}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'hess_init'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make("ivon", {{"lr", -1.0}}), Error);
  EXPECT_THROW(make("ivon", {{"hess_init", 0.0}}), Error);
  EXPECT_THROW(make("ivon", {{"beta1", 1.0}}), Error);  // β1 ∈ [0, 1)
  EXPECT_THROW(make("ivon", {{"beta2", -0.5}}), Error);
  EXPECT_THROW(make("ivon", {{"mc_samples", 1.5}}), Error);
  EXPECT_THROW(make("ivon", {{"debias", 2.0}}), Error);
  EXPECT_THROW(make("ivon", {{"hess_approx", std::string("exact")}}), Error);
  EXPECT_THROW(make("ivon", {{"ess", -3.0}}), Error);
  EXPECT_THROW(make("ivon", {{"seed", -1.0}}), Error);
  EXPECT_THROW(make("ogn", {{"mc_samples", 2.0}}), Error);
  EXPECT_THROW(make("vadam", {{"prec_init", 0.5}}), Error);
  EXPECT_THROW(make("adamw", {{"beta1", 1.0}}), Error);
  EXPECT_THROW(make("adamw", {{"eps", 0.0}}), Error);
  EXPECT_THROW(make("sgd", {{"momentum", 0.0}, {"nesterov", true}}), Error);
  ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
  EXPECT_THROW(make_optimizer("ivon", {x}, {}, OptimizerContext{0, 0}), Error);  // no ess
}

}  // namespace
}  // namespace blr::torch
