// IVON: the reference worked example, reductions, positivity, per-group options, state round
// trips, the sampling guard and the noise generator.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <sstream>

#include "blr/core/error.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

using ::torch::optim::OptimizerParamGroup;

using ::blr::torch::testing::f64;

/// One IVON step on loss(θ) (the mean loss) with the given standard-normal draws.
void step_with_noise(Ivon& opt, const std::vector<::at::Tensor>& eps,
                     const std::function<::at::Tensor()>& loss) {
  opt.sample_parameters(true, eps);
  opt.zero_grad();
  loss().backward();
  opt.restore_parameters();
  opt.step();
}

class IvonPaths : public ::testing::TestWithParam<bool> {};  // fused kernels or tensor ops

// algorithms.md §1.7: μ=1, h=1, δ=1e-4, λ=100, α=0.1, β1=.9, β2=.99999, 'price', loss ½·2·θ²,
// ε = 0.5.
TEST_P(IvonPaths, ReproducesTheScalarWorkedExample) {
  ::at::Tensor mu = f64({1.0}).requires_grad_();
  Ivon opt({mu},
           make_options<IvonOptions>({{"lr", 0.1}, {"ess", 100.0}, {"hess_init", 1.0}, {"weight_decay", 1e-4}, {"beta1", 0.9}, {"beta2", 0.99999}}));
  opt.set_fused_kernels(GetParam());
  step_with_noise(opt, {f64({0.5})}, [&] { return 0.5 * 2.0 * mu.square().sum(); });
  EXPECT_NEAR(opt.curvature()[0].item<double>(), 1.0000950095124, 1e-12);
  EXPECT_NEAR(mu.item<double>(), 0.790010448972454, 1e-12);
  EXPECT_EQ(opt.step_count(), 1);
}

// With β2 = 1 the Hessian stays h0 and the first step is SGD: μ1 = μ0 − α(ḡ + δμ0).
TEST_P(IvonPaths, FirstStepIsAnSgdStepWhenBeta2IsOne) {
  ::torch::manual_seed(3);
  const auto mu0 = ::torch::randn({1000}, ::torch::kFloat64);
  const auto c = ::torch::randn({1000}, ::torch::kFloat64);
  ::at::Tensor mu = mu0.clone().requires_grad_();
  const double alpha = 0.05, delta = 1e-3;
  Ivon opt({mu}, make_options<IvonOptions>({{"lr", alpha}, {"ess", 50.0}, {"hess_init", 0.5}, {"weight_decay", delta}, {"beta2", 1.0}}));
  opt.set_fused_kernels(GetParam());
  opt.sample_parameters(true);
  (c * mu).sum().backward();  // ḡ = c whatever θ is
  opt.restore_parameters();
  opt.step();
  EXPECT_LT((mu.detach() - (mu0 - alpha * (c + delta * mu0))).abs().max().item<double>(), 1e-12);
  // The state is P = h + δ; h = P − δ comes back to within one rounding.
  EXPECT_LT((opt.curvature()[0] - 0.5).abs().max().item<double>(), 1e-15);
}

// 10⁴ draws of very negative Hessian estimates: h + δ stays positive, at least half its old value.
TEST_P(IvonPaths, PrecisionStaysPositiveUnderNegativeHessianEstimates) {
  const int64_t n = 10000;
  const double lambda = 10, delta = 1e-3;
  ::torch::manual_seed(11);
  ::at::Tensor mu = ::torch::zeros({n}, ::torch::kFloat64).requires_grad_();
  Ivon opt({mu}, make_options<IvonOptions>({{"lr", 1e-3}, {"ess", lambda}, {"hess_init", 1.0}, {"weight_decay", delta}, {"beta2", 0.5}}));
  opt.set_fused_kernels(GetParam());
  const auto ones = ::torch::ones({n}, ::torch::kFloat64);
  for (int step = 0; step < 4; ++step) {
    const ::at::Tensor h = opt.curvature()[0].clone();
    // ĥ = λ(h + δ)·σ·ε·g with ε = 1; target ĥ = −10^U(0, 6) per coordinate.
    const ::at::Tensor hhat = -::torch::pow(10.0, 6.0 * ::torch::rand({n}, ::torch::kFloat64));
    const ::at::Tensor sigma = (lambda * (h + delta)).rsqrt();
    const ::at::Tensor g = hhat / (lambda * (h + delta) * sigma);
    step_with_noise(opt, {ones}, [&] { return (g * mu).sum(); });
    const ::at::Tensor h_new = opt.curvature()[0];
    EXPECT_GT((h_new + delta).min().item<double>(), 0.0);
    EXPECT_TRUE(((h_new + delta) >= 0.5 * (h + delta) * (1 - 1e-12)).all().item<bool>());
    EXPECT_TRUE((opt.posterior_variance()[0] > 0).all().item<bool>());
  }
  // The worst case ĥ = h − (h + δ)/ρ gives h_new = (h − δ)/2 exactly.
  ::at::Tensor m1 = f64({0.0}).requires_grad_();
  Ivon worst({m1}, make_options<IvonOptions>({{"lr", 0.0}, {"ess", 1.0}, {"hess_init", 2.0}, {"weight_decay", delta}, {"beta2", 0.5}}));
  worst.set_fused_kernels(GetParam());
  const double h = 2.0, rho = 0.5, target = h - (h + delta) / rho;
  const double g = target / std::sqrt(h + delta);
  step_with_noise(worst, {f64({1.0})}, [&] { return g * m1.sum(); });
  EXPECT_NEAR(worst.curvature()[0].item<double>(), (h - delta) / 2, 1e-12);
}

// Per-group values are used; options a group leaves unset take the optimizer's defaults (the
// per-group merge of Ivon::group).
TEST_P(IvonPaths, HonoursPerGroupOptions) {
  ::at::Tensor a = f64({1.0, -2.0}).requires_grad_();
  ::at::Tensor b = f64({3.0}).requires_grad_();
  ::at::Tensor c = f64({-1.0}).requires_grad_();
  const IvonOptions defaults = make_options<IvonOptions>(
      {{"lr", 0.1}, {"ess", 100.0}, {"hess_init", 0.3}, {"weight_decay", 1e-2}, {"beta2", 1.0}});
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<::at::Tensor>{a});
  groups.push_back(Ivon::group(
      {b}, defaults, {{"lr", 0.5}, {"ess", 10.0}, {"hess_init", 2.0}, {"weight_decay", 0.0}}));
  groups.push_back(Ivon::group({c}, defaults, {{"lr", 0.2}}));  // only lr set
  Ivon opt(std::move(groups), defaults);
  opt.set_fused_kernels(GetParam());

  const IvonOptions &g1 = opt.options(1), &g2 = opt.options(2);
  EXPECT_EQ(g1.lr, 0.5);
  EXPECT_EQ(g1.ess, 10);
  EXPECT_EQ(g1.hess_init, 2.0);
  EXPECT_EQ(g1.weight_decay, 0.0);
  EXPECT_EQ(g1.beta2, 1.0);  // from the defaults
  EXPECT_EQ(g2.lr, 0.2);
  EXPECT_EQ(g2.ess, 100);
  EXPECT_EQ(g2.hess_init, 0.3);
  EXPECT_EQ(g2.weight_decay, 1e-2);
  EXPECT_EQ(g2.beta1, 0.9);  // built in

  // A group added later keeps its own options too.
  ::at::Tensor d = f64({0.0}).requires_grad_();
  opt.add_param_group(Ivon::group({d}, defaults, {{"lr", 0.3}, {"ess", 5.0}, {"beta2", 0.5}}));
  EXPECT_EQ(opt.options(3).lr, 0.3);
  EXPECT_EQ(opt.options(3).ess, 5);
  EXPECT_EQ(opt.options(3).beta2, 0.5);
  EXPECT_EQ(opt.options(3).hess_init, 0.3);  // from the defaults

  // An option of the whole optimizer cannot differ in a group.
  ::at::Tensor e = f64({0.0}).requires_grad_();
  EXPECT_THROW(opt.add_param_group(Ivon::group({e}, defaults, {{"mc_samples", int64_t{2}}})), Error);

  // σ² = 1/(λ(h0 + δ)) with each group's values.
  const auto var = opt.posterior_variance();
  EXPECT_NEAR(var[0][0].item<double>(), 1.0 / (100 * (0.3 + 1e-2)), 1e-15);
  EXPECT_NEAR(var[1][0].item<double>(), 1.0 / (10 * 2.0), 1e-15);
  EXPECT_NEAR(var[2][0].item<double>(), 1.0 / (100 * (0.3 + 1e-2)), 1e-15);

  // β2 = 1: each group takes an SGD step with its own α and δ.
  const auto a0 = a.detach().clone(), b0 = b.detach().clone(), c0 = c.detach().clone();
  opt.sample_parameters(true);
  (a.sum() + b.sum() + c.sum() + d.sum()).backward();  // ḡ = 1
  opt.restore_parameters();
  opt.step();
  EXPECT_LT((a.detach() - (a0 - 0.1 * (1 + 1e-2 * a0))).abs().max().item<double>(), 1e-14);
  EXPECT_LT((b.detach() - (b0 - 0.5 * 1.0)).abs().max().item<double>(), 1e-14);
  EXPECT_LT((c.detach() - (c0 - 0.2 * (1 + 1e-2 * c0))).abs().max().item<double>(), 1e-14);
}

// With one sample per step the update reads p.grad at step() (mean_field.hpp): a gradient
// modified between restore and step (here: zeroed, as clipping to norm 0 would) is the one used.
TEST_P(IvonPaths, OneSampleUsesTheGradientHeldAtStep) {
  ::at::Tensor x = ::torch::linspace(-1.0, 1.0, 50000, ::torch::kFloat64).requires_grad_();
  Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 100.0}, {"hess_init", 1.0}, {"seed", 4.0}}));
  opt.set_fused_kernels(GetParam());
  opt.sample_parameters(true);
  opt.zero_grad();
  (x.square().sum() + x.sum()).backward();
  opt.restore_parameters();
  x.mutable_grad().zero_();
  opt.step();
  EXPECT_EQ(opt.momentum()[0].abs().max().item<double>(), 0.0);
}

// More samples than mc_samples: the first sample's gradient is summed when the second is drawn;
// the result equals an optimizer that asked for two samples (same draws), bit for bit. So it does
// when the gradient is set to none before each sample (zero_grad() of LibTorch 2.x).
TEST_P(IvonPaths, ExtraSamplesAreSummedLikeMcSamples) {
  auto run = [&](int mc, bool none_before_sampling = false) {
    ::torch::manual_seed(11);  // the tensor-operation path draws from LibTorch's generator
    ::at::Tensor x = ::torch::linspace(-1.0, 1.0, 50000, ::torch::kFloat64).requires_grad_();
    Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 100.0}, {"hess_init", 1.0}, {"mc_samples", static_cast<double>(mc)}, {"seed", 4.0}}));
    opt.set_fused_kernels(GetParam());
    for (int step = 0; step < 3; ++step) {
      for (int k = 0; k < 2; ++k) {
        if (none_before_sampling) x.mutable_grad() = ::at::Tensor();
        SampledParameters sampled(opt, true);
        if (!none_before_sampling) opt.zero_grad();
        (x.pow(4).sum() + x.sum()).backward();
      }
      opt.step();
    }
    return std::make_pair(x.detach().clone(), opt.curvature()[0].clone());
  };
  const auto [x1, h1] = run(1);
  const auto [x2, h2] = run(2);
  EXPECT_TRUE(::torch::equal(x1, x2));
  EXPECT_TRUE(::torch::equal(h1, h2));
  const auto [x3, h3] = run(1, true);
  EXPECT_TRUE(::torch::equal(x3, x2));
  EXPECT_TRUE(::torch::equal(h3, h2));
}

// …but a gradient zeroed in place before the extra sample is refused rather than summed as zero
// (zero_grad() of LibTorch 1.x zeroes in place; that of 2.x sets the gradient to none, which
// leaves the kept gradient intact, and the extra sample is then summed correctly).
TEST_P(IvonPaths, ExtraSampleAfterZeroingTheGradientIsRefused) {
  ::at::Tensor x = ::torch::ones({1000}, ::torch::kFloat64).requires_grad_();
  Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 100.0}}));
  opt.set_fused_kernels(GetParam());
  opt.sample_parameters(true);
  x.square().sum().backward();
  opt.restore_parameters();
  x.mutable_grad().zero_();
  try {
    opt.sample_parameters(true);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was modified before the next sample"), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndTensorOps, IvonPaths, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "TensorOps"; });

/// A small quadratic problem: loss = mean_i ½ a_i (θ_i − 1)².
struct Quadratic {
  ::at::Tensor a = ::torch::linspace(0.5, 3.0, 40000, ::torch::kFloat32);
  ::at::Tensor operator()(const ::at::Tensor& theta) const {
    return (0.5 * a * (theta - 1).square()).mean() * a.numel();
  }
};

void train(Ivon& opt, ::at::Tensor& theta, int steps) {
  const Quadratic loss;
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < opt.training_samples(); ++k) {
      SampledParameters sampled(opt, true);
      opt.zero_grad();
      loss(theta).backward();
    }
    opt.step();
  }
}

TEST(Ivon, SaveAndLoadResumeBitForBit) {
  const IvonOptions options = make_options<IvonOptions>({{"lr", 0.05}, {"ess", 1000.0}, {"hess_init", 0.5}, {"mc_samples", 2.0}, {"seed", 9.0}});
  ::at::Tensor x = ::torch::zeros({40000}).requires_grad_();
  Ivon a({x}, options);
  train(a, x, 3);
  ::torch::serialize::OutputArchive out;
  a.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);

  ::at::Tensor y = x.detach().clone().requires_grad_();
  Ivon b({y}, options);
  ::torch::serialize::InputArchive in;
  std::istringstream stream(bytes.str());
  in.load_from(stream);
  b.load(in);
  EXPECT_EQ(b.step_count(), 3);

  train(a, x, 3);
  train(b, y, 3);
  EXPECT_TRUE(::torch::equal(x, y));
  EXPECT_TRUE(::torch::equal(a.curvature()[0], b.curvature()[0]));
  EXPECT_TRUE(::torch::equal(a.momentum()[0], b.momentum()[0]));
  EXPECT_EQ(b.step_count(), 6);
}

TEST(Ivon, LoadRejectsAnotherShape) {
  ::at::Tensor x = ::torch::zeros({40000}).requires_grad_();
  Ivon a({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  train(a, x, 1);
  ::torch::serialize::OutputArchive out;
  a.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  ::at::Tensor y = ::torch::zeros({39999}).requires_grad_();
  Ivon b({y}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  ::torch::serialize::InputArchive in;
  std::istringstream stream(bytes.str());
  in.load_from(stream);
  EXPECT_THROW(b.load(in), Error);
  EXPECT_EQ(b.step_count(), 0);
}

TEST(Ivon, GuardRestoresTheMeanWhenAnExceptionEscapes) {
  ::at::Tensor x = ::torch::randn({100}).requires_grad_();
  const ::at::Tensor mean = x.detach().clone();
  Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  try {
    SampledParameters sampled(opt, true);
    EXPECT_FALSE(::torch::equal(x, mean));
    x.sum().backward();
    throw std::runtime_error("forward failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(::torch::equal(x, mean));
  EXPECT_FALSE(opt.sampled());
  EXPECT_THROW(opt.step(), Error);  // the failed sample was not collected
}

TEST(Ivon, MisuseIsASentenceError) {
  ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
  Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  EXPECT_THROW(opt.step(), Error);  // no sample
  EXPECT_THROW(opt.restore_parameters(), Error);
  opt.sample_parameters(true);
  EXPECT_THROW(opt.sample_parameters(true), Error);
  EXPECT_THROW(opt.step(), Error);  // parameters hold a sample
  opt.restore_parameters();
  EXPECT_THROW(opt.sample_parameters(true, {::torch::zeros({4})}), Error);
}

TEST(Ivon, RejectsBadOptions) {
  // Each bad value set directly on the struct is refused by the optimizer with a sentence that
  // names the option.
  auto error_of = [](const std::function<void(IvonOptions&)>& change) -> std::string {
    IvonOptions o;
    o.lr = 0.1;
    o.ess = 10;
    change(o);
    ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
    try {
      Ivon opt({x}, o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of([](IvonOptions&) {}), "");
  EXPECT_NE(error_of([](IvonOptions& o) { o.ess = 0; }).find("'ess'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.lr = -0.1; }).find("'lr'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.ess = -1; }).find("'ess'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.hess_init = 0; }).find("'hess_init'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.beta1 = 1.0; }).find("'beta1'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.beta2 = -0.1; }).find("'beta2'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.weight_decay = -1; }).find("'weight_decay'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.clip_radius = 0; }).find("'clip_radius'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.mc_samples = 0; }).find("'mc_samples'"), std::string::npos);
  EXPECT_NE(error_of([](IvonOptions& o) { o.lr = std::nan(""); }).find("'lr'"), std::string::npos);
  // The table refuses them at the door as well (the CLI's and Python's path).
  EXPECT_THROW(make_options<IvonOptions>({{"beta1", 1.0}}), Error);
  EXPECT_THROW(make_options<IvonOptions>({{"mc_samples", 1.5}}), Error);
  EXPECT_THROW(make_options<IvonOptions>({{"hess_approx", std::string("exact")}}), Error);
  EXPECT_THROW(make_options<IvonOptions>({{"hess_inti", 1.0}}), Error);
  // A bad value in a param group is caught as well.
  ::at::Tensor x = ::torch::zeros({3}).requires_grad_();
  std::vector<OptimizerParamGroup> groups;
  IvonOptions bad = make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}});
  bad.beta1 = 2.0;
  groups.emplace_back(std::vector<::at::Tensor>{x}, std::make_unique<IvonOptions>(bad));
  EXPECT_THROW(Ivon(std::move(groups), make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}})), Error);
}

TEST(Ivon, DivergenceIsReportedWithTheStep) {
  ::at::Tensor x = ::torch::ones({3}).requires_grad_();
  Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 10.0}}));
  opt.sample_parameters(true);
  (x * std::numeric_limits<float>::infinity()).sum().backward();
  opt.restore_parameters();
  try {
    opt.step();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 1"), std::string::npos) << e.what();
  }
}

// The noise does not depend on the number of threads, and differs between draws.
TEST(Ivon, NoiseIsIndependentOfTheThreadCount) {
  const int threads = ::at::get_num_threads();
  auto sample = [](int n_threads) {
    ::at::set_num_threads(n_threads);
    ::at::Tensor x = ::torch::zeros({100000}).requires_grad_();
    Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 1.0}, {"seed", 5.0}}));
    opt.sample_parameters(false);
    const ::at::Tensor first = x.detach().clone();
    opt.restore_parameters();
    opt.sample_parameters(false);
    const ::at::Tensor second = x.detach().clone();
    opt.restore_parameters();
    EXPECT_TRUE(::torch::equal(x, ::torch::zeros({100000})));
    return std::make_pair(first, second);
  };
  const auto one = sample(1);
  const auto two = sample(2);
  ::at::set_num_threads(threads);
  EXPECT_TRUE(::torch::equal(one.first, two.first));
  EXPECT_TRUE(::torch::equal(one.second, two.second));
  EXPECT_FALSE(::torch::equal(one.first, one.second));
}

// θ − μ of a sample with σ = 1 is standard normal: moments within 5 standard errors.
template <class T>
void expect_standard_normal(::at::ScalarType dtype) {
  const int64_t n = 1 << 19;
  ::at::Tensor x = ::torch::zeros({n}, dtype).requires_grad_();
  Ivon opt({x}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", 1.0}, {"hess_init", 1.0}, {"weight_decay", 0.0}, {"seed", 1.0}}));
  opt.sample_parameters(false);
  const ::at::Tensor z = x.detach().to(::torch::kFloat64).clone();
  opt.restore_parameters();
  const double se = 1.0 / std::sqrt(static_cast<double>(n));
  EXPECT_NEAR(z.mean().item<double>(), 0.0, 5 * se);
  EXPECT_NEAR(z.square().mean().item<double>(), 1.0, 5 * std::sqrt(2.0) * se);
  EXPECT_NEAR(z.pow(3).mean().item<double>(), 0.0, 5 * std::sqrt(15.0) * se);
  EXPECT_NEAR(z.pow(4).mean().item<double>(), 3.0, 5 * std::sqrt(96.0) * se);
  const double tail = (z.abs() > 1.959964).to(::torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(tail, 0.05, 5 * std::sqrt(0.05 * 0.95) * se);
  const double central = (z.abs() < 0.6744898).to(::torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(central, 0.5, 5 * 0.5 * se);
  // Neighbours (within a block, across blocks and chunks) are uncorrelated.
  for (int64_t lag : {1, 128, 256, 16384}) {
    const double r = (z.slice(0, 0, n - lag) * z.slice(0, lag, n)).mean().item<double>();
    EXPECT_NEAR(r, 0.0, 5 * se) << "lag " << lag;
  }
}

TEST(Ivon, GeneratedNoiseIsStandardNormalInFloat) {
  expect_standard_normal<float>(::torch::kFloat32);
}
TEST(Ivon, GeneratedNoiseIsStandardNormalInDouble) {
  expect_standard_normal<double>(::torch::kFloat64);
}

// Fused kernels and tensor ops agree over several steps with two MC samples (gradsq and price).
TEST(Ivon, FusedKernelsMatchTensorOps) {
  for (IvonHessian approx : {IvonHessian::kPrice, IvonHessian::kGradSquared}) {
    const Quadratic loss;
    ::torch::manual_seed(2);
    std::vector<std::vector<::at::Tensor>> noise;
    for (int k = 0; k < 6; ++k) noise.push_back({::torch::randn({40000})});
    ::at::Tensor x = ::torch::zeros({40000}).requires_grad_();
    ::at::Tensor y = ::torch::zeros({40000}).requires_grad_();
    const auto options = make_options<IvonOptions>({{"lr", 0.1}, {"ess", 100.0}, {"hess_init", 0.5}, {"hess_approx", std::string(approx == IvonHessian::kPrice ? "price" : "gradsq")}});
    Ivon fused({x}, options), ops({y}, options);
    ops.set_fused_kernels(false);
    for (int k = 0; k < 6; ++k) {
      step_with_noise(fused, noise[k], [&] { return loss(x); });
      step_with_noise(ops, noise[k], [&] { return loss(y); });
    }
    EXPECT_LT((x - y).abs().max().item<double>(), 1e-5);
    EXPECT_LT((fused.curvature()[0] - ops.curvature()[0]).abs().max().item<double>(), 1e-4);
  }
}

TEST(Ivon, AveragesMonteCarloSamples) {
  // Two samples with ε = ±0.5 on loss θ²: the step uses the averages of ĝ_s and σε_s·ĝ_s.
  ::at::Tensor mu = f64({1.0}).requires_grad_();
  const double lambda = 100, delta = 1e-4, h0 = 1.0, beta2 = 0.9;
  Ivon opt({mu}, make_options<IvonOptions>({{"lr", 0.1}, {"ess", lambda}, {"hess_init", h0}, {"weight_decay", delta}, {"beta2", beta2}}));
  for (double e : {0.5, -0.5}) {
    opt.sample_parameters(true, {f64({e})});
    opt.zero_grad();
    mu.square().sum().backward();
    opt.restore_parameters();
  }
  opt.step();
  const double sigma = 1.0 / std::sqrt(lambda * (h0 + delta));
  // ĝ_s = 2(1 + σε_s): ḡ = 2, x̄ = mean σε_s·2(1 + σε_s) = 2σ²·0.25.
  const double xbar = 2 * sigma * sigma * 0.25;
  const double hhat = lambda * (h0 + delta) * xbar;  // = 0.5
  const double rho = 1 - beta2;
  const double h1 =
      beta2 * h0 + rho * hhat + 0.5 * rho * rho * (h0 - hhat) * (h0 - hhat) / (h0 + delta);
  EXPECT_NEAR(opt.curvature()[0].item<double>(), h1, 1e-14);
  const double mu1 = 1 - 0.1 * (h0 + delta) * (2.0 + delta) / (h1 + delta);
  EXPECT_NEAR(mu.item<double>(), mu1, 1e-14);
}

}  // namespace
}  // namespace blr::torch
