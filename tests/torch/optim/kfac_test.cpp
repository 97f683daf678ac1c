// The Kronecker-factored BLR optimizer (kfac.hpp) and its factors (kronecker_factors.hpp):
// the factors against brute-force per-example Jacobians (float64), sampling moments against the
// stated covariance, the reduction to VOGN, bad options and misuse.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "blr/core/error.hpp"
#include "blr/torch/optim/kfac.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "blr/torch/optim/vogn.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

namespace F = ::torch::nn::functional;
using ::blr::torch::testing::kF64;

using ::blr::torch::testing::max_abs;

/// |got − expected| ≤ relative·max|expected| entrywise. Float64: each factor entry is a sum of at
/// most a few hundred products formed in another order than the reference's, so its relative
/// rounding error is below ~1e-13; 1e-10 leaves room for cancellation.
void expect_close(const ::at::Tensor& got, const ::at::Tensor& expected, const std::string& what,
                  double relative = 1e-10) {
  ASSERT_EQ(got.sizes(), expected.sizes()) << what;
  EXPECT_LE(max_abs(got - expected), relative * max_abs(expected)) << what;
}

/// A tiny network with every layer kind the factors cover: Conv2d (3×3, padding 1: 25 output
/// positions), Conv2d whose kernel covers its input (one output position), Linear.
struct TinyNet : ::torch::nn::Module {
  TinyNet() {
    ::torch::manual_seed(3);
    conv1 = register_module("conv1", ::torch::nn::Conv2d(::torch::nn::Conv2dOptions(2, 3, 3).padding(1)));
    conv2 = register_module("conv2", ::torch::nn::Conv2d(::torch::nn::Conv2dOptions(3, 4, 5)));
    fc = register_module("fc", ::torch::nn::Linear(4, 3));
    to(::torch::kFloat64);
  }
  /// Logits, keeping each layer's input and output for the brute force.
  ::at::Tensor forward(const ::at::Tensor& x) {
    inputs = {x};
    outputs = {conv1->forward(x)};
    inputs.push_back(outputs[0].tanh());
    outputs.push_back(conv2->forward(inputs[1]));
    inputs.push_back(outputs[1].flatten(1).tanh());
    outputs.push_back(fc->forward(inputs[2]));
    return outputs[2];
  }
  /// The weights in layer order and their names.
  NamedParameters weights() {
    return {{"conv1.weight", conv1->weight}, {"conv2.weight", conv2->weight}, {"fc.weight", fc->weight}};
  }
  NamedParameters all() { return named_parameters().pairs(); }
  ::torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  ::torch::nn::Linear fc{nullptr};
  std::vector<::at::Tensor> inputs, outputs;
};

/// The factors the engine reads for every parameter of `net` from a mean loss built by `loss`.
std::vector<ParameterCurvature> engine_factors(TinyNet& net, const ::at::Tensor& x,
                                               const std::function<::at::Tensor(const ::at::Tensor&)>& loss) {
  net.zero_grad();
  return backward_with_kronecker_factors(loss(net.forward(x)), net.all(), x.size(0));
}

/// Index of a named parameter in net.all().
size_t index_of(TinyNet& net, const std::string& name) {
  const auto all = net.all();
  for (size_t k = 0; k < all.size(); ++k) {
    if (all[k].first == name) return k;
  }
  throw Error("no parameter " + name);
}

// For one example, the Gauss–Newton block of a Linear weight, and of a convolution with one output
// position, is exactly (aaᵀ) ⊗ (J_sᵀ Λ J_s): Λ = diag(p) − ppᵀ the softmax cross-entropy's
// Hessian in the logits. Brute force: the Jacobian of the logits w.r.t. the weight, one autograd
// pass per logit, GGN = Jᵀ Λ J. Engine: Λ = Σ_c λ_c λ_cᵀ with λ_c = √p_c (e_c − p); the engine run
// on the pseudo-loss λ_cᵀ z captures g_c = J_sᵀ λ_c, so Σ_c of its factors is (aaᵀ, J_sᵀ Λ J_s).
// Row-major vec(g aᵀ) = g ⊗ a, hence the comparison with kron(G, A).
TEST(KroneckerFactors, OneExampleGivesTheExactGaussNewtonBlock) {
  TinyNet net;
  const auto x = ::torch::randn({1, 2, 5, 5}, kF64);
  const auto p = ::torch::softmax(net.forward(x), 1).detach();  // 1×3
  const int64_t classes = p.size(1);
  const auto lambda = ::torch::diag(p[0]) - ::torch::outer(p[0], p[0]);
  for (const std::string name : {"conv2.weight", "fc.weight"}) {
    const size_t k = index_of(net, name);
    ::at::Tensor w = net.all()[k].second;
    // Brute force.
    const auto z = net.forward(x);
    std::vector<::at::Tensor> rows;
    for (int64_t c = 0; c < classes; ++c) {
      rows.push_back(::torch::autograd::grad({z[0][c]}, {w}, {}, true)[0].flatten());
    }
    const auto jacobian = ::torch::stack(rows);  // C × |W|
    const auto ggn = jacobian.t().mm(lambda).mm(jacobian);
    // Engine.
    ::at::Tensor a, g;
    for (int64_t c = 0; c < classes; ++c) {
      const auto direction =
          (::torch::one_hot(::torch::tensor({c}), classes).to(::torch::kFloat64) - p) *
          p[0][c].sqrt();
      const auto f = engine_factors(net, x, [&](const ::at::Tensor& logits) {
        return (direction * logits).sum();
      })[k];
      ASSERT_TRUE(f.kronecker()) << name;
      a = f.factors.input;
      g = g.defined() ? g + f.factors.output : f.factors.output;
    }
    expect_close(::torch::kron(g, a), ggn, name + ": A ⊗ G against Jᵀ Λ J");
  }
}

// With the true label the engine's factors are the empirical Fisher: for one example
// (aaᵀ) ⊗ (ggᵀ) = vec(∇_W ℓ) vec(∇_W ℓ)ᵀ, for every Linear weight and a one-position convolution.
TEST(KroneckerFactors, OneExampleGivesTheGradientOuterProduct) {
  TinyNet net;
  const auto x = ::torch::randn({1, 2, 5, 5}, kF64);
  const auto y = ::torch::tensor({2});
  const auto loss = [&](const ::at::Tensor& logits) { return F::cross_entropy(logits, y); };
  const auto factors = engine_factors(net, x, loss);
  for (const std::string name : {"conv2.weight", "fc.weight"}) {
    const size_t k = index_of(net, name);
    const auto grad = net.all()[k].second.grad().flatten();
    ASSERT_TRUE(factors[k].kronecker());
    expect_close(::torch::kron(factors[k].factors.output, factors[k].factors.input),
                 ::torch::outer(grad, grad), name);
  }
  // Biases take the diagonal: (∇_b ℓ)².
  const size_t b = index_of(net, "fc.bias");
  ASSERT_FALSE(factors[b].kronecker());
  expect_close(factors[b].diagonal, net.fc->bias.grad().square(), "fc.bias");
}

// For a batch, A = (1/M) Σ_i Σ_l a_il a_ilᵀ and G = (1/(M·L)) Σ_i Σ_l g_il g_ilᵀ (L = 1 for Linear):
// the brute force takes the patches a_il by explicit loops over positions (not im2col) and the
// per-example output gradients g_il = ∂ℓ_i/∂s_il by one autograd pass per example.
TEST(KroneckerFactors, BatchFactorsEqualTheirDefinition) {
  TinyNet net;
  const int64_t m = 4;
  const auto x = ::torch::randn({m, 2, 5, 5}, kF64);
  const auto y = ::torch::tensor({0, 2, 1, 2});
  const auto factors = engine_factors(net, x, [&](const ::at::Tensor& logits) {
    return F::cross_entropy(logits, y);
  });
  // Brute force: per-example losses and output gradients of each layer.
  const auto losses = F::cross_entropy(net.forward(x), y, F::CrossEntropyFuncOptions().reduction(::torch::kNone));
  std::vector<std::vector<::at::Tensor>> grads(m);  // [example][layer]: ∂ℓ_i/∂s (all examples' rows)
  for (int64_t i = 0; i < m; ++i) {
    grads[i] = ::torch::autograd::grad({losses[i]}, net.outputs, {}, true, false, true);
  }
  const std::vector<std::string> names = {"conv1.weight", "conv2.weight", "fc.weight"};
  for (size_t layer = 0; layer < 3; ++layer) {
    ::at::Tensor a_sum, g_sum;
    int64_t positions = 1;
    for (int64_t i = 0; i < m; ++i) {
      const auto& in = net.inputs[layer];
      const auto& go = grads[i][layer][i];  // example i's output gradient
      std::vector<::at::Tensor> patches, gradients;
      if (layer == 2) {
        patches.push_back(in[i].detach());
        gradients.push_back(go);
      } else {
        const auto& w = layer == 0 ? net.conv1->weight : net.conv2->weight;
        const int64_t k = w.size(2), pad = layer == 0 ? 1 : 0;
        const int64_t channels = in.size(1), h = in.size(2), wd = in.size(3);
        const int64_t oh = go.size(1), ow = go.size(2);
        positions = oh * ow;
        for (int64_t r = 0; r < oh; ++r) {
          for (int64_t c = 0; c < ow; ++c) {
            auto patch = ::torch::zeros({channels, k, k}, kF64);
            for (int64_t ch = 0; ch < channels; ++ch) {
              for (int64_t u = 0; u < k; ++u) {
                for (int64_t v = 0; v < k; ++v) {
                  const int64_t rr = r + u - pad, cc = c + v - pad;
                  if (rr >= 0 && rr < h && cc >= 0 && cc < wd) patch[ch][u][v] = in[i][ch][rr][cc].item<double>();
                }
              }
            }
            patches.push_back(patch.flatten());
            gradients.push_back(go.index({::torch::indexing::Slice(), r, c}));
          }
        }
      }
      for (size_t l = 0; l < patches.size(); ++l) {
        const auto aa = ::torch::outer(patches[l], patches[l]);
        const auto gg = ::torch::outer(gradients[l], gradients[l]);
        a_sum = a_sum.defined() ? a_sum + aa : aa;
        g_sum = g_sum.defined() ? g_sum + gg : gg;
      }
    }
    const size_t k = index_of(net, names[layer]);
    ASSERT_TRUE(factors[k].kronecker()) << names[layer];
    expect_close(factors[k].factors.input, a_sum / m, names[layer] + ": A");
    expect_close(factors[k].factors.output, g_sum / (m * positions), names[layer] + ": G");
  }
}

/// One K-FAC step on a bias-free Linear weight (out × in) with the factors given directly.
struct FactorStep {
  ::at::Tensor w;
  ::at::Tensor a, g;  // the factors given (SPD)
  std::unique_ptr<Kfac> opt;
  FactorStep(int64_t out, int64_t in, KfacOptions o) {
    ::torch::manual_seed(11);
    w = ::torch::randn({out, in}, kF64).requires_grad_();
    const auto ra = ::torch::randn({in, in}, kF64), rg = ::torch::randn({out, out}, kF64);
    a = ra.mm(ra.t()) + 0.1 * ::torch::eye(in, kF64);
    g = rg.mm(rg.t()) + 0.2 * ::torch::eye(out, kF64);
    opt = std::make_unique<Kfac>(std::vector<::at::Tensor>{w}, o);
    {
      SampledParameters sampled(*opt, true);
      w.sum().backward();
      opt->add_curvature({ParameterCurvature{{a, g}, {}}});
    }
    opt->step();
  }
};

KfacOptions moment_options(bool split) {
  return make_options<KfacOptions>({{"lr", 0.0}, {"ess", 7.0}, {"prior_precision", 2.0},
                                    {"damping", 0.3}, {"curvature_rate", 1.0}, {"refresh", int64_t{1}},
                                    {"damping_split", split}, {"seed", int64_t{5}}});
}

// The stated covariance, written from the definitions: (N·P)⁻¹ with P = (G + √γ'/π I) ⊗
// (A + π√γ' I) (split; row-major vec) or P = G ⊗ A + γ' I (exact), γ' = δ/N + γ,
// π = √((tr A/in)/(tr G/out)).
::at::Tensor stated_covariance(const FactorStep& s, bool split) {
  const double n = 7.0, gamma = 2.0 / 7.0 + 0.3;
  const int64_t in = s.a.size(0), out = s.g.size(0);
  ::at::Tensor precision;
  if (split) {
    const double pi = std::sqrt((s.a.trace().item<double>() / in) / (s.g.trace().item<double>() / out));
    precision = ::torch::kron(s.g + std::sqrt(gamma) / pi * ::torch::eye(out, kF64),
                              s.a + pi * std::sqrt(gamma) * ::torch::eye(in, kF64));
  } else {
    precision = ::torch::kron(s.g, s.a) + gamma * ::torch::eye(in * out, kF64);
  }
  return ::torch::inverse(n * precision);
}

class KfacDamping : public ::testing::TestWithParam<bool> {};

TEST_P(KfacDamping, PosteriorCovarianceIsTheStatedOne) {
  FactorStep s(3, 2, moment_options(GetParam()));
  ASSERT_TRUE(s.opt->kronecker(0));
  expect_close(s.opt->posterior_covariance(0), stated_covariance(s, GetParam()), "covariance", 1e-9);
  expect_close(s.opt->posterior_variance()[0].flatten(), stated_covariance(s, GetParam()).diagonal(),
               "variance", 1e-9);
}

// Sample moments of vec(W) over K draws: each sample mean is off by at most 5 standard errors
// √(Σ_jj/K), each sample covariance by 5·√((Σ_jj Σ_kk + Σ_jk²)/K) (the standard error of a
// Gaussian sample covariance; 42 checks at 5σ fail by chance with probability < 3e-5).
TEST_P(KfacDamping, SampleMomentsMatchTheStatedCovariance) {
  FactorStep s(3, 2, moment_options(GetParam()));
  const auto mean = s.w.detach().flatten().clone();
  const int64_t draws = 20000;
  auto samples = ::torch::empty({draws, 6}, kF64);
  for (int64_t k = 0; k < draws; ++k) {
    SampledParameters sampled(*s.opt, false);
    samples[k] = s.w.detach().flatten();
  }
  EXPECT_TRUE(::torch::equal(s.w.detach().flatten(), mean));  // restored
  const auto sigma = stated_covariance(s, GetParam());
  const auto sample_mean = samples.mean(0);
  const auto centred = samples - mean;
  const auto sample_cov = centred.t().mm(centred) / draws;
  const auto var = sigma.diagonal();
  EXPECT_TRUE(((sample_mean - mean).abs() <= 5 * (var / draws).sqrt()).all().item<bool>())
      << sample_mean - mean;
  const auto se = ((::torch::outer(var, var) + sigma.square()) / draws).sqrt();
  EXPECT_TRUE(((sample_cov - sigma).abs() <= 5 * se).all().item<bool>()) << (sample_cov - sigma) / se;
}

// The first step, β₁ = 0: u = ĝ + (δ/N)μ₀ with ĝ = 1 (the gradient of ΣW), and μ₁ = μ₀ − α P⁻¹u
// with P⁻¹ = N·(N·P)⁻¹ the stated covariance times N (row-major vec).
TEST_P(KfacDamping, FirstStepIsTheNaturalGradientStep) {
  KfacOptions o = moment_options(GetParam());
  KfacOptions::table().apply(o, {{"lr", 0.5}, {"beta1", 0.0}});
  ::torch::manual_seed(11);
  const auto mu0 = ::torch::randn({3, 2}, kF64);  // FactorStep's first draw
  FactorStep s(3, 2, o);
  const auto u = (::torch::ones({3, 2}, kF64) + (2.0 / 7.0) * mu0).flatten();
  const auto expected = mu0.flatten() - 0.5 * 7.0 * stated_covariance(s, GetParam()).mv(u);
  expect_close(s.w.detach().flatten(), expected, "μ₁", 1e-9);
}

INSTANTIATE_TEST_SUITE_P(SplitAndExact, KfacDamping, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Split" : "Exact"; });

// Reduction: on a bias-free 1×1 Linear layer with one example per batch, exact damping, w = 1 and
// T = 1, A·G = (a·g)² = VOGN's D, and the heavy-ball step and the sampling are VOGN's: the two
// optimizers, given the same draws ε, agree step by step (float64). Loss: logistic, label ±1.
TEST(Kfac, ReducesToVognOnAOneByOneLayer) {
  const double n = 40, lr = 0.2;
  const OptionValues common = {{"lr", lr}, {"ess", n}, {"prior_precision", 3.0}, {"damping", 0.05},
                               {"beta1", 0.7}, {"curvature_rate", 1.0}, {"hess_init", 0.4}};
  auto w_kfac = ::torch::full({1, 1}, 0.3, kF64).requires_grad_();
  auto w_vogn = ::torch::full({1, 1}, 0.3, kF64).requires_grad_();
  KfacOptions ko;
  KfacOptions::table().apply(ko, common);
  KfacOptions::table().apply(ko, {{"damping_split", false}, {"refresh", int64_t{1}}});
  VognOptions vo;
  VognOptions::table().apply(vo, common);
  Kfac kfac({w_kfac}, ko);
  Vogn vogn({w_vogn}, vo);
  const auto loss_of = [](const ::at::Tensor& w, double a, double y) {
    const auto x = ::torch::full({1, 1}, a, kF64);
    return F::softplus(-y * ::torch::matmul(x, w.t())).mean();
  };
  for (int t = 0; t < 8; ++t) {
    const double a = 0.5 + 0.3 * t, y = t % 3 == 0 ? 1.0 : -1.0;
    const auto eps = ::torch::full({1, 1}, std::sin(1.0 + t), kF64);
    kfac.sample_parameters(true, {eps});
    kfac.zero_grad();
    kfac.add_curvature(backward_with_kronecker_factors(loss_of(w_kfac, a, y), {{"w", w_kfac}}, 1));
    kfac.restore_parameters();
    kfac.step();
    vogn.sample_parameters(true, {eps});
    vogn.zero_grad();
    vogn.add_squared_gradients(backward_with_squared_gradients(loss_of(w_vogn, a, y), {{"w", w_vogn}}, 1));
    vogn.restore_parameters();
    vogn.step();
    ASSERT_TRUE(kfac.kronecker(0));
    EXPECT_NEAR(w_kfac.item<double>(), w_vogn.item<double>(), 1e-13 * (1 + std::abs(w_vogn.item<double>())))
        << "step " << t + 1;
    EXPECT_NEAR(kfac.posterior_variance()[0].item<double>(), vogn.posterior_variance()[0].item<double>(),
                1e-13 * vogn.posterior_variance()[0].item<double>())
        << "step " << t + 1;
  }
}

// Parameters without factors take VOGN's diagonal step exactly (any shape, any batch).
TEST(Kfac, DiagonalFallbackIsVogn) {
  const OptionValues common = {{"lr", 0.1}, {"ess", 30.0}, {"damping", 0.02}, {"curvature_rate", 0.3}};
  auto b_kfac = ::torch::tensor({0.1, -0.2, 0.3}, kF64).requires_grad_();
  auto b_vogn = b_kfac.detach().clone().requires_grad_();
  KfacOptions ko;
  KfacOptions::table().apply(ko, common);
  VognOptions vo;
  VognOptions::table().apply(vo, common);
  Kfac kfac({b_kfac}, ko);
  Vogn vogn({b_vogn}, vo);
  const auto x = ::torch::randn({5, 3}, kF64);
  for (int t = 0; t < 4; ++t) {
    const auto eps = ::torch::randn({3}, kF64);
    kfac.sample_parameters(true, {eps});
    kfac.zero_grad();
    kfac.add_curvature(backward_with_kronecker_factors((x + b_kfac).tanh().sum(1).square().mean(), {{"b", b_kfac}}, 5));
    kfac.restore_parameters();
    kfac.step();
    vogn.sample_parameters(true, {eps});
    vogn.zero_grad();
    vogn.add_squared_gradients(backward_with_squared_gradients((x + b_vogn).tanh().sum(1).square().mean(), {{"b", b_vogn}}, 5));
    vogn.restore_parameters();
    vogn.step();
    EXPECT_FALSE(kfac.kronecker(0));
    EXPECT_LT(max_abs(b_kfac - b_vogn), 1e-14) << "step " << t + 1;
  }
}

// The registry knows it; bad options and misuse are sentences naming the problem.
TEST(Kfac, RegistryOptionsAndMisuse) {
  const auto names = optimizer_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "kfac"), names.end());
  auto w = ::torch::zeros({2, 3}, kF64).requires_grad_();
  const OptimizerContext context{100, 1, 10};
  EXPECT_NO_THROW(make_optimizer("kfac", {w}, {}, context));
  for (const OptionValues& bad : std::vector<OptionValues>{{{"refresh", int64_t{0}}}, {{"curvature_rate", 0.0}},
                                                           {{"damping", -1.0}}, {{"mc_samples", int64_t{0}}},
                                                           {{"curvature_interval", int64_t{0}}},
                                                           {{"refresh_every", int64_t{3}}}}) {
    try {
      make_optimizer("kfac", {w}, bad, context);
      ADD_FAILURE() << "accepted " << bad[0].first;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad[0].first.substr(0, 7)), std::string::npos) << e.what();
    }
  }
  Kfac opt({w}, make_options<KfacOptions>({{"ess", 10.0}}));
  {
    SampledParameters sampled(opt, true);
    w.sum().backward();
  }
  EXPECT_THROW(opt.step(), Error);  // no curvature given
  opt.sample_parameters(true);
  EXPECT_THROW(opt.add_curvature({ParameterCurvature{{::torch::eye(2, kF64), ::torch::eye(2, kF64)}, {}}}),
               Error);  // factors of the wrong size (A must be 3×3)
  EXPECT_THROW(opt.add_curvature({}), Error);
  opt.restore_parameters();
}

// With curvature_interval T_c the factors and the diagonal P change only at t = 1, 1 + T_c, ...:
// the steps between take a plain backward (no add_curvature), keep A, G and P, and still step
// the mean with them; a curvature step without curvature is refused.
TEST(Kfac, CurvatureIntervalKeepsTheFactorsBetweenUpdates) {
  ::torch::manual_seed(4);
  auto w = ::torch::randn({3, 4}, kF64).requires_grad_();
  auto b = ::torch::zeros({3}, kF64).requires_grad_();
  Kfac opt({w, b}, make_options<KfacOptions>({{"ess", 50.0}, {"lr", 0.05}, {"curvature_rate", 0.5},
                                              {"curvature_interval", int64_t{3}}}));
  const auto x = ::torch::randn({8, 4}, kF64);
  auto step = [&](bool curvature) {
    {
      SampledParameters sampled(opt, true);
      opt.zero_grad();
      const auto loss = (x.mm(w.t()) + b).square().mean();
      if (curvature) {
        opt.add_curvature(backward_with_kronecker_factors(loss, {{"w", w}, {"b", b}}, 8));
      } else {
        loss.backward();
      }
    }
    opt.step();
  };
  std::vector<bool> wanted;
  ::at::Tensor a_before, p_before, w_before;
  for (int t = 1; t <= 7; ++t) {
    wanted.push_back(opt.wants_curvature());
    if (t > 1) {
      a_before = opt.factors(0).input.clone();
      p_before = opt.posterior_variance()[1].clone();
    }
    w_before = w.detach().clone();
    step(opt.wants_curvature());
    EXPECT_FALSE(w.equal(w_before)) << "step " << t << " did not move the mean";
    if (t > 1) {
      const bool updated = wanted.back();
      EXPECT_EQ(!opt.factors(0).input.equal(a_before), updated) << "A at step " << t;
      EXPECT_EQ(!opt.posterior_variance()[1].equal(p_before), updated) << "P at step " << t;
    }
  }
  EXPECT_EQ(wanted, (std::vector<bool>{true, false, false, true, false, false, true}));
  // Step 8 takes no curvature; step 10 must, and is refused without it.
  step(false);
  step(false);
  ASSERT_TRUE(opt.wants_curvature());
  {
    SampledParameters sampled(opt, true);
    opt.zero_grad();
    (x.mm(w.t()) + b).square().mean().backward();
  }
  try {
    opt.step();
    ADD_FAILURE() << "a curvature step without curvature was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("add_curvature() must be called"), std::string::npos) << e.what();
  }
}

// Save and load give back a state that steps bit for bit as the original.
TEST(Kfac, SaveLoadIsBitwise) {
  TinyNet net;
  const auto x = ::torch::randn({6, 2, 5, 5}, kF64);
  const auto y = ::torch::tensor({0, 1, 2, 0, 1, 2});
  const auto options = make_options<KfacOptions>({{"lr", 0.05}, {"ess", 60.0}, {"refresh", int64_t{3}}, {"seed", int64_t{9}}});
  const auto params = [](TinyNet& n) {
    std::vector<::at::Tensor> out;
    for (auto& [name, p] : n.all()) out.push_back(p);
    return out;
  };
  auto step = [&](TinyNet& n, Kfac& opt) {
    {
      SampledParameters sampled(opt, true);
      opt.zero_grad();
      opt.add_curvature(backward_with_kronecker_factors(F::cross_entropy(n.forward(x), y), n.all(), 6));
    }
    opt.step();
  };
  Kfac a(params(net), options);
  for (int t = 0; t < 4; ++t) step(net, a);
  std::stringstream model_bytes, opt_bytes;
  {
    ::torch::serialize::OutputArchive archive;
    a.save(archive);
    archive.save_to(opt_bytes);
    ::torch::serialize::OutputArchive m;
    net.save(m);
    m.save_to(model_bytes);
  }
  TinyNet other;
  ::torch::serialize::InputArchive m;
  m.load_from(model_bytes);
  other.load(m);
  Kfac b(params(other), options);
  ::torch::serialize::InputArchive archive;
  archive.load_from(opt_bytes);
  b.load(archive);
  for (int t = 0; t < 3; ++t) {  // crosses a refresh (t = 7)
    step(net, a);
    step(other, b);
  }
  const auto pa = params(net), pb = params(other);
  for (size_t k = 0; k < pa.size(); ++k) EXPECT_TRUE(::torch::equal(pa[k], pb[k])) << k;
  const auto va = a.posterior_variance(), vb = b.posterior_variance();
  for (size_t k = 0; k < va.size(); ++k) EXPECT_TRUE(::torch::equal(va[k], vb[k])) << k;
}

}  // namespace
}  // namespace blr::torch
