// The Kronecker-factored Laplace posterior and the linearised probit predictive
// (blr/torch/posterior/laplace_fit.hpp, blr/torch/optim/laplace.hpp, blr/torch/posterior/laplace_predictive.hpp):
//  - the fitted factors against their definitions from per-example quantities written plainly
//    (layer inputs a_i and output Jacobians by autograd): A = (1/N) Σ a_i a_iᵀ,
//    G = (1/N) Σ J_s,iᵀ Λ_i J_s,i (ggn) or (1/N) Σ g_i g_iᵀ (ef); the biases keep the diagonal fit;
//  - one example: A ⊗ G is the exact GGN block (Jᵀ Λ J by brute force);
//  - the posterior's covariance (through the sampling path and posterior_covariance) and marginal
//    variances against the dense inverse of N(G ⊗ A) + δI (row-major vec); log Z(δ) against the
//    dense determinant formula; sample moments of 4000 draws within 5 standard errors;
//  - a linear logistic model with one example: the Kronecker Laplace is the core's full Laplace
//    (precision and evidence);
//  - the probit predictive against softmax(f/√(1 + π v/8)) with v = diag(J Σ Jᵀ) from dense
//    Jacobians and the dense Σ, for diag and kron, all weights and the last layer, on a net with a
//    convolution;
//  - save/load bitwise, the diagonal format 1 still loads, an unknown format is refused; bad uses.
//
// Tolerances (float64): the factors and GGN blocks sum ≤ 7 examples × 3 classes of O(1) products
// in different orders: 1e-12. Covariances: the dense inverse (LU of a ≤ 16×16 matrix with
// condition ≤ N·max(g a)/δ ≲ 100) and the eigenbasis formula differ by ≲ κ·16·1.1e-16 ≈ 1e-13
// relative on entries ≤ 1/δ = 2: 1e-10 as the brief asks. log Z sums ≤ 40 logs of O(10): 1e-10.
// The predictive: v sums ≤ 40 products of O(1) in two orders and goes through √ and softmax:
// 1e-12.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <string>

#include "blr/inference/glm.hpp"
#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "option_helpers.hpp"
#include "logistic_as_softmax.hpp"
#include "tensor_helpers.hpp"

namespace {

using blr::torch::KroneckerFactors;
using blr::torch::LaplaceCurvature;
using blr::torch::LaplaceCurvatureOptions;
using blr::torch::LaplaceCurvatureResult;
using blr::torch::LaplacePosterior;
using blr::torch::LaplacePosteriorOptions;
using blr::torch::LaplaceStructure;
using blr::torch::LaplaceSubset;
using ::blr::torch::testing::kF64;

using ::blr::torch::testing::max_abs_diff;

/// Linear(3→4) → tanh → Linear(4→3), keeping each layer's input and output.
struct Mlp : ::torch::nn::Module {
  Mlp() {
    ::torch::manual_seed(5);
    fc1 = register_module("fc1", ::torch::nn::Linear(3, 4));
    fc2 = register_module("fc2", ::torch::nn::Linear(4, 3));
    to(::torch::kFloat64);
  }
  ::at::Tensor forward(const ::at::Tensor& x) {
    inputs = {x};
    outputs = {fc1->forward(x)};
    inputs.push_back(outputs[0].tanh());
    outputs.push_back(fc2->forward(inputs[1]));
    return outputs[1];
  }
  ::torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  std::vector<::at::Tensor> inputs, outputs;
};

/// Conv2d(1→2, 3×3) on 1×4×4 → tanh → flatten (8) → Linear(8→3).
struct ConvNet : ::torch::nn::Module {
  ConvNet() {
    ::torch::manual_seed(6);
    conv = register_module("conv", ::torch::nn::Conv2d(::torch::nn::Conv2dOptions(1, 2, 3)));
    fc = register_module("fc", ::torch::nn::Linear(8, 3));
    to(::torch::kFloat64);
  }
  ::at::Tensor forward(const ::at::Tensor& x) { return fc->forward(conv->forward(x).tanh().flatten(1)); }
  ::torch::nn::Conv2d conv{nullptr};
  ::torch::nn::Linear fc{nullptr};
};

struct Data {
  ::at::Tensor x, y;
};

Data mlp_data(int64_t n = 7) {
  ::torch::manual_seed(4);
  return {::torch::randn({n, 3}, kF64), ::torch::randint(0, 3, {n}, ::torch::kLong)};
}

Data conv_data(int64_t n = 6) {
  ::torch::manual_seed(8);
  return {::torch::randn({n, 1, 4, 4}, kF64), ::torch::randint(0, 3, {n}, ::torch::kLong)};
}

template <class Net>
LaplaceCurvatureResult fit(std::shared_ptr<Net> net, const Data& d, LaplaceStructure structure,
                           LaplaceSubset subset = LaplaceSubset::kAll,
                           LaplaceCurvature curvature = LaplaceCurvature::kGaussNewton) {
  LaplaceCurvatureOptions options;
  options.structure = structure;
  options.subset = subset;
  options.curvature = curvature;
  options.batch_size = 3;  // several batches are summed
  return blr::torch::laplace_curvature(blr::torch::Model(net), d.x, d.y, options);
}

template <class Net>
std::unique_ptr<LaplacePosterior> posterior(std::shared_ptr<Net> net, const LaplaceCurvatureResult& f,
                                            double delta, LaplaceStructure structure) {
  auto post = std::make_unique<LaplacePosterior>(
      net->parameters(),
      blr::torch::make_options<LaplacePosteriorOptions>(
          {{"prior_precision", delta},
           {"ess", static_cast<double>(f.examples)},
           {"seed", int64_t{3}},
           {"structure", std::string(structure == LaplaceStructure::kKronecker ? "kron" : "diag")}}));
  post->set_curvature(f.curvature, f.factors);
  return post;
}

/// The dense precision of parameter j: N·(G ⊗ A) + δI (row-major vec) or diag(N Ĝ + δ).
::at::Tensor dense_precision(const LaplaceCurvatureResult& f, size_t j, double delta) {
  const double n = static_cast<double>(f.examples);
  if (f.factors[j].defined()) {
    const auto k = ::torch::kron(f.factors[j].output, f.factors[j].input) * n;
    return k + delta * ::torch::eye(k.size(0), kF64);
  }
  return ::torch::diag(f.curvature[j].flatten() * n + delta);
}

// A = (1/N) Σ a_i a_iᵀ and G = (1/N) Σ_i J_iᵀ Λ_i J_i (ggn) or (1/N) Σ g_i g_iᵀ (ef), J_i = ∂f_i/∂s_i
// and g_i = ∂ℓ_i/∂s_i by autograd, per example and layer; biases: the diagonal fit.
TEST(KroneckerLaplaceFit, FactorsEqualTheirDefinitions) {
  const auto d = mlp_data();
  for (auto kind : {LaplaceCurvature::kGaussNewton, LaplaceCurvature::kEmpiricalFisher}) {
    auto net = std::make_shared<Mlp>();
    const auto kron = fit(net, d, LaplaceStructure::kKronecker, LaplaceSubset::kAll, kind);
    const auto diag = fit(net, d, LaplaceStructure::kDiagonal, LaplaceSubset::kAll, kind);
    ASSERT_EQ(kron.names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
    const int64_t n = d.x.size(0);
    std::vector<::at::Tensor> a_ref(2), g_ref(2);
    for (int layer = 0; layer < 2; ++layer) {
      const int64_t in = layer == 0 ? 3 : 4, out = layer == 0 ? 4 : 3;
      a_ref[layer] = ::torch::zeros({in, in}, kF64);
      g_ref[layer] = ::torch::zeros({out, out}, kF64);
    }
    for (int64_t i = 0; i < n; ++i) {
      const auto f = net->forward(d.x.slice(0, i, i + 1));  // 1×3
      const auto p = ::torch::softmax(f, 1).detach()[0];
      const auto lambda = ::torch::diag(p) - ::torch::outer(p, p);
      const auto loss = -::torch::log_softmax(f, 1)[0][d.y[i].item<int64_t>()];
      for (int layer = 0; layer < 2; ++layer) {
        const auto a = net->inputs[layer].detach()[0];
        a_ref[layer] += ::torch::outer(a, a);
        const auto& s = net->outputs[layer];
        if (kind == LaplaceCurvature::kEmpiricalFisher) {
          const auto g = ::torch::autograd::grad({loss}, {s}, {}, true)[0][0];
          g_ref[layer] += ::torch::outer(g, g);
        } else {
          std::vector<::at::Tensor> rows;
          for (int64_t k = 0; k < 3; ++k) {
            rows.push_back(::torch::autograd::grad({f[0][k]}, {s}, {}, true)[0][0]);
          }
          const auto jac = ::torch::stack(rows);  // 3 × out
          g_ref[layer] += jac.t().mm(lambda).mm(jac);
        }
      }
    }
    for (int layer = 0; layer < 2; ++layer) {
      const size_t w = 2 * layer, b = w + 1;
      ASSERT_TRUE(kron.factors[w].defined());
      EXPECT_FALSE(kron.curvature[w].defined());
      EXPECT_LT(max_abs_diff(kron.factors[w].input, a_ref[layer] / n), 1e-12) << layer;
      EXPECT_LT(max_abs_diff(kron.factors[w].output, g_ref[layer] / n), 1e-12) << layer;
      EXPECT_FALSE(kron.factors[b].defined());
      EXPECT_LT(max_abs_diff(kron.curvature[b], diag.curvature[b]), 1e-12) << layer;
    }
    EXPECT_NEAR(kron.nll_sum, diag.nll_sum, 1e-12);
    EXPECT_EQ(kron.subset_size, diag.subset_size);
  }
}

// One example: the Gauss–Newton block of a Linear weight is exactly (aaᵀ) ⊗ (J_sᵀ Λ J_s), so the
// fit's N·(G ⊗ A) (N = 1) equals Jᵀ Λ J with J = ∂f/∂vec(W) row by row (the kfac test's brute force).
TEST(KroneckerLaplaceFit, OneExampleGivesTheExactGaussNewtonBlock) {
  const auto d = mlp_data(1);
  auto net = std::make_shared<Mlp>();
  const auto kron = fit(net, d, LaplaceStructure::kKronecker);
  const auto f = net->forward(d.x);
  const auto p = ::torch::softmax(f, 1).detach()[0];
  const auto lambda = ::torch::diag(p) - ::torch::outer(p, p);
  for (size_t j : {size_t{0}, size_t{2}}) {
    const auto w = net->parameters()[j];
    std::vector<::at::Tensor> rows;
    for (int64_t k = 0; k < 3; ++k) {
      rows.push_back(::torch::autograd::grad({f[0][k]}, {w}, {}, true)[0].flatten());
    }
    const auto jac = ::torch::stack(rows);
    const auto ggn = jac.t().mm(lambda).mm(jac);
    EXPECT_LT(max_abs_diff(::torch::kron(kron.factors[j].output, kron.factors[j].input), ggn), 1e-12)
        << j;
  }
}

// The posterior's covariance of each parameter — read off the sampling path (θ − θ* = L ε, so
// feeding unit vectors gives L's columns and Σ = L Lᵀ), from posterior_covariance() and its
// diagonal from posterior_variance() — equals the dense inverse of N(G ⊗ A) + δI; log Z(δ) equals
// the dense determinant formula.
TEST(KroneckerLaplacePosterior, CovarianceAndEvidenceEqualTheDenseFormulas) {
  const double delta = 0.5;
  const auto d = conv_data();
  auto net = std::make_shared<ConvNet>();
  const auto f = fit(net, d, LaplaceStructure::kKronecker);
  ASSERT_TRUE(f.factors[0].defined());  // conv.weight
  ASSERT_TRUE(f.factors[2].defined());  // fc.weight
  auto post = posterior(net, f, delta, LaplaceStructure::kKronecker);
  const auto params = net->parameters();
  const auto variance = post->posterior_variance();
  double log_det = 0.0;
  for (size_t j = 0; j < params.size(); ++j) {
    const auto precision = dense_precision(f, j, delta);
    log_det += ::torch::logdet(precision).item<double>();
    const auto covariance = ::torch::inverse(precision);
    EXPECT_LT(max_abs_diff(post->posterior_covariance(j), covariance), 1e-10) << j;
    EXPECT_LT(max_abs_diff(variance[j].flatten(), covariance.diagonal()), 1e-10) << j;
    // Through the sampling path.
    const int64_t size = params[j].numel();
    std::vector<::at::Tensor> columns;
    const auto mode = params[j].detach().clone();
    for (int64_t c = 0; c < size; ++c) {
      std::vector<::at::Tensor> noise;
      for (const auto& p : params) noise.push_back(::torch::zeros_like(p));
      noise[j].view(-1)[c] = 1.0;
      post->sample_parameters(false, noise);
      columns.push_back((params[j].detach() - mode).flatten());
      post->restore_parameters();
    }
    const auto root = ::torch::stack(columns, 1);
    EXPECT_LT(max_abs_diff(root.mm(root.t()), covariance), 1e-10) << j;
  }
  const double plain = -f.nll_sum - 0.5 * delta * f.subset_norm_squared +
                       0.5 * static_cast<double>(f.subset_size) * std::log(delta) - 0.5 * log_det;
  EXPECT_NEAR(blr::torch::laplace_log_marginal_likelihood(f, delta), plain, 1e-10);
  const double best = blr::torch::laplace_optimal_prior_precision(f);
  const double at_best = blr::torch::laplace_log_marginal_likelihood(f, best);
  for (double factor : {0.5, 0.99, 1.01, 2.0}) {
    EXPECT_LT(blr::torch::laplace_log_marginal_likelihood(f, best * factor), at_best) << factor;
  }
}

// 4000 draws of the last layer's weight (12 entries): every entry of the sample covariance is
// within 5 standard errors √((Σ_ab² + Σ_aa Σ_bb)/n) of Σ (the mean is known: θ*).
TEST(KroneckerLaplacePosterior, SampleMomentsMatchTheCovariance) {
  const auto d = mlp_data();
  auto net = std::make_shared<Mlp>();
  const auto f = fit(net, d, LaplaceStructure::kKronecker, LaplaceSubset::kLastLayer);
  EXPECT_FALSE(f.factors[0].defined());
  EXPECT_FALSE(f.curvature[0].defined());
  auto post = posterior(net, f, 0.5, LaplaceStructure::kKronecker);
  const auto w = net->fc2->weight;
  const auto mode = w.detach().clone();
  const auto first = net->fc1->weight.detach().clone();
  const int draws = 4000;
  auto sum = ::torch::zeros({12, 12}, kF64);
  for (int s = 0; s < draws; ++s) {
    blr::torch::SampledParameters sample(*post, false);
    const auto e = (w.detach() - mode).flatten();
    sum += ::torch::outer(e, e);
    ASSERT_TRUE(net->fc1->weight.detach().equal(first));  // outside the subset: θ*
  }
  EXPECT_TRUE(w.detach().equal(mode));
  const auto cov = post->posterior_covariance(2);
  const auto se = ((cov.square() + ::torch::outer(cov.diagonal(), cov.diagonal())) / draws).sqrt();
  EXPECT_LT(((sum / draws - cov).abs() / se).max().item<double>(), 5.0);
}

// A logistic model as two logits [0, xᵀw] with ONE example: the K-FAC factors are exact
// (A = xxᵀ, G = σ(1−σ)), so N·(G ⊗ A) + δI is the core's Hessian of −log p(w|D) and log Z(δ) its
// Laplace evidence.
using ::blr::torch::testing::LogisticAsSoftmax;

TEST(KroneckerLaplacePosterior, OneExampleLinearModelIsTheCoresFullLaplace) {
  const double delta = 0.7;
  ::torch::manual_seed(12);
  const auto x = ::torch::randn({1, 3}, kF64);
  const auto y = ::torch::ones({1}, ::torch::kLong);
  blr::Matrix xm(1, 3);
  blr::Vector ym(1);
  for (int j = 0; j < 3; ++j) xm(0, j) = x[0][j].item<double>();
  ym(0) = 1.0;
  const auto glm = blr::inference::Glm::with_isotropic_prior(xm, ym, blr::inference::Likelihood::logistic, delta);
  const auto core = blr::inference::laplace(glm);
  ASSERT_TRUE(core.converged);
  LogisticAsSoftmax model(3);
  model->to(::torch::kFloat64);
  {
    ::torch::NoGradGuard no_grad;
    for (int j = 0; j < 3; ++j) model->linear->weight[0][j] = core.mean(j);
  }
  LaplaceCurvatureOptions options;
  options.structure = LaplaceStructure::kKronecker;
  const auto f = blr::torch::laplace_curvature(blr::torch::Model(model), x, y, options);
  auto post = std::make_unique<LaplacePosterior>(
      model->parameters(), blr::torch::make_options<LaplacePosteriorOptions>(
                               {{"prior_precision", delta}, {"ess", 1.0}, {"structure", std::string("kron")}}));
  post->set_curvature(f.curvature, f.factors);
  const auto cov = post->posterior_covariance(0);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      EXPECT_NEAR(cov[a][b].item<double>(), core.covariance(a, b), 1e-12) << a << b;
    }
  }
  EXPECT_NEAR(blr::torch::laplace_log_marginal_likelihood(f, delta), core.log_evidence, 1e-10);
}

/// The probit predictive by hand: per example the Jacobian rows ∂f_k/∂θ (autograd, one per class)
/// of the subset's parameters, v_k = J_k Σ J_kᵀ with the dense block-diagonal Σ.
::at::Tensor probit_by_hand(::torch::nn::Module& net, LaplacePosterior& post,
                            const std::function<::at::Tensor(const ::at::Tensor&)>& forward,
                            const ::at::Tensor& x) {
  const auto params = net.parameters();
  std::vector<size_t> in;
  for (size_t j = 0; j < params.size(); ++j) {
    if (post.curvature()[j].defined() || post.factors()[j].defined()) in.push_back(j);
  }
  std::vector<::at::Tensor> rows;
  for (int64_t i = 0; i < x.size(0); ++i) {
    const auto f = forward(x.slice(0, i, i + 1))[0];
    std::vector<double> v;
    for (int64_t k = 0; k < f.size(0); ++k) {
      double total = 0.0;
      for (size_t j : in) {
        const auto g = ::torch::autograd::grad({f[k]}, {params[j]}, {}, true)[0].flatten();
        total += g.dot(post.posterior_covariance(j).mv(g)).item<double>();
      }
      v.push_back(total);
    }
    const auto scaled = f.detach() / (::torch::tensor(v, kF64) * (std::numbers::pi / 8) + 1).sqrt();
    rows.push_back(::torch::log_softmax(scaled, 0));
  }
  return ::torch::stack(rows);
}

TEST(LaplaceProbitPredictive, EqualsTheFormulaFromDenseJacobiansAndCovariance) {
  const auto d = conv_data();
  ::torch::manual_seed(9);
  const auto test_x = ::torch::randn({5, 1, 4, 4}, kF64);
  for (auto structure : {LaplaceStructure::kDiagonal, LaplaceStructure::kKronecker}) {
    for (auto subset : {LaplaceSubset::kAll, LaplaceSubset::kLastLayer}) {
      auto net = std::make_shared<ConvNet>();
      const auto f = fit(net, d, structure, subset);
      auto post = posterior(net, f, 0.3, structure);
      const auto got = blr::torch::linearised_probit_log_probs(blr::torch::Model(net), *post, test_x, 2);
      const auto expected = probit_by_hand(
          *net, *post, [&](const ::at::Tensor& x) { return net->forward(x); }, test_x);
      EXPECT_LT(max_abs_diff(got, expected), 1e-12)
          << static_cast<int>(structure) << static_cast<int>(subset);
      // No variance: the plain softmax.
      EXPECT_LT(max_abs_diff(blr::torch::probit_log_probs(net->forward(test_x), ::torch::zeros({5, 3}, kF64)),
                             ::torch::log_softmax(net->forward(test_x), 1)),
                1e-15);
    }
  }
}

TEST(KroneckerLaplacePosterior, SaveLoadIsBitwiseAndTheDiagonalFormatStillLoads) {
  const auto d = conv_data();
  auto net = std::make_shared<ConvNet>();
  const auto f = fit(net, d, LaplaceStructure::kKronecker);
  auto post = posterior(net, f, 0.5, LaplaceStructure::kKronecker);
  const std::string path = ::testing::TempDir() + "laplace_kron_roundtrip.pt";
  {
    ::torch::serialize::OutputArchive archive;
    post->save(archive);
    archive.save_to(path);
  }
  auto other = std::make_shared<ConvNet>();
  auto loaded = std::make_unique<LaplacePosterior>(
      other->parameters(), blr::torch::make_options<LaplacePosteriorOptions>(
                               {{"prior_precision", 0.5}, {"ess", 6.0}, {"structure", std::string("kron")}}));
  {
    ::torch::serialize::InputArchive archive;
    archive.load_from(path);
    loaded->load(archive);
  }
  std::remove(path.c_str());
  const auto a = post->posterior_variance(), b = loaded->posterior_variance();
  for (size_t j = 0; j < a.size(); ++j) {
    EXPECT_TRUE(a[j].equal(b[j])) << j;
    if (f.factors[j].defined()) {
      EXPECT_TRUE(post->factors()[j].input.equal(loaded->factors()[j].input)) << j;
      EXPECT_TRUE(post->factors()[j].output.equal(loaded->factors()[j].output)) << j;
    }
  }
  // The same noise gives the same sample.
  std::vector<::at::Tensor> noise;
  for (const auto& p : net->parameters()) noise.push_back(::torch::randn_like(p));
  post->sample_parameters(false, noise);
  loaded->sample_parameters(false, noise);
  for (size_t j = 0; j < noise.size(); ++j) {
    EXPECT_TRUE(net->parameters()[j].equal(other->parameters()[j])) << j;
  }
  post->restore_parameters();
  loaded->restore_parameters();

  // Format 1 (before the Kronecker structure): no format key, diagonal curvature only.
  const auto diag = fit(net, d, LaplaceStructure::kDiagonal);
  {
    ::torch::serialize::OutputArchive archive;
    archive.write("blr/optimizer", c10::IValue(std::string("Laplace")));
    for (size_t j = 0; j < diag.curvature.size(); ++j) {
      archive.write("param" + std::to_string(j) + "/curvature", diag.curvature[j]);
    }
    archive.save_to(path);
  }
  auto old = posterior(net, diag, 0.5, LaplaceStructure::kDiagonal);
  LaplacePosterior reloaded(other->parameters(), blr::torch::make_options<LaplacePosteriorOptions>(
                                                     {{"prior_precision", 0.5}, {"ess", 6.0}}));
  {
    ::torch::serialize::InputArchive archive;
    archive.load_from(path);
    reloaded.load(archive);
  }
  const auto c = old->posterior_variance(), e = reloaded.posterior_variance();
  for (size_t j = 0; j < c.size(); ++j) EXPECT_TRUE(c[j].equal(e[j])) << j;
  // An unknown format is refused with a sentence.
  {
    ::torch::serialize::OutputArchive archive;
    archive.write("blr/optimizer", c10::IValue(std::string("Laplace")));
    archive.write("blr/laplace_format", c10::IValue(int64_t{3}));
    archive.save_to(path);
  }
  {
    ::torch::serialize::InputArchive archive;
    archive.load_from(path);
    EXPECT_THROW(reloaded.load(archive), blr::Error);
  }
  std::remove(path.c_str());
}

/// A learned per-class scale (a module of its own, holding no Linear or Conv2d weight).
struct ScaleImpl : ::torch::nn::Module {
  ScaleImpl() { scale = register_parameter("scale", ::torch::ones({3})); }
  ::at::Tensor forward(const ::at::Tensor& x) { return x * scale; }
  ::at::Tensor scale;
};
TORCH_MODULE(Scale);

/// Linear(3→3), then the scale: the last layer ("head") holds only the scale.
struct ScaledImpl : ::torch::nn::Module {
  ScaledImpl() {
    fc = register_module("fc", ::torch::nn::Linear(3, 3));
    head = register_module("head", Scale());
    to(::torch::kFloat64);
  }
  ::at::Tensor forward(const ::at::Tensor& x) { return head->forward(fc->forward(x)); }
  ::torch::nn::Linear fc{nullptr};
  Scale head{nullptr};
};
TORCH_MODULE(Scaled);

TEST(KroneckerLaplace, BadUsesAreRefusedWithASentence) {
  const auto d = mlp_data();
  Scaled scaled;
  LaplaceCurvatureOptions options;
  options.structure = LaplaceStructure::kKronecker;
  options.subset = LaplaceSubset::kLastLayer;
  try {
    (void)blr::torch::laplace_curvature(blr::torch::Model(scaled.ptr()), d.x, d.y, options);
    ADD_FAILURE() << "no error";
  } catch (const blr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a Linear or Conv2d weight"), std::string::npos) << e.what();
  }
  options.subset = LaplaceSubset::kAll;  // fc.weight is factored, fc.bias and scale diagonal
  const auto f = blr::torch::laplace_curvature(blr::torch::Model(scaled.ptr()), d.x, d.y, options);
  EXPECT_TRUE(f.factors[0].defined());
  EXPECT_TRUE(f.curvature[2].defined());

  auto net = std::make_shared<Mlp>();
  const auto kron = fit(net, d, LaplaceStructure::kKronecker);
  const auto diag = fit(net, d, LaplaceStructure::kDiagonal);
  LaplacePosterior diagonal(net->parameters(), blr::torch::make_options<LaplacePosteriorOptions>({{"ess", 7.0}}));
  EXPECT_THROW(diagonal.set_curvature(kron.curvature, kron.factors), blr::Error);  // factors, diag
  LaplacePosterior factored(net->parameters(), blr::torch::make_options<LaplacePosteriorOptions>(
                                                   {{"ess", 7.0}, {"structure", std::string("kron")}}));
  EXPECT_THROW(factored.set_curvature(diag.curvature), blr::Error);  // kron without factors
  auto wrong = kron.factors;
  wrong[0] = {wrong[2].input, wrong[2].output};  // 4×4 and 3×3 for a 4×3 weight
  EXPECT_THROW(factored.set_curvature(kron.curvature, wrong), blr::Error);
  wrong = kron.factors;
  wrong[0].input = wrong[0].input * std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(factored.set_curvature(kron.curvature, wrong), blr::Error);
  EXPECT_THROW(blr::torch::make_options<LaplacePosteriorOptions>({{"structure", std::string("full")}}),
               blr::Error);
}

}  // namespace
