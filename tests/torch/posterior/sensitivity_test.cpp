// Network sensitivities (blr/torch/posterior/sensitivity.hpp, sensitivity_validation.hpp): the prediction
// variance v_ik = Σ_j σ_j² (∂f_ik/∂θ_j)² against one autograd gradient per example and class
// (float64; an MLP for the Linear formula, a small CNN and a shared layer for the per-example
// path), e, deviation, score and LOO estimates against a hand computation, the GLM of the core
// (a two-logit linear model with one logit pinned is logistic regression, and its MPE quantities
// must equal blr::inference::glm_sensitivity's first-order ones under the same diagonal Σ), the
// σ² of AdamW, the retraining check on a problem where the MPE is nearly exact, and bad input.
#include "blr/torch/posterior/sensitivity.hpp"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/inference/sensitivity.hpp"
#include "blr/torch/optim/libtorch_state_key.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "blr/torch/posterior/sensitivity_validation.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

using ::blr::torch::testing::kEps;

// v_ik by brute force: one autograd gradient of f_ik per example and class.
at::Tensor brute_force_variance(const Model& model, const std::vector<at::Tensor>& sigma2,
                                const at::Tensor& x) {
  const auto params = model.parameters();
  const int64_t n = x.size(0);
  const auto probe = model.forward(x.narrow(0, 0, 1));
  const int64_t k_classes = probe.size(1);
  auto v = at::zeros({n, k_classes}, at::kDouble);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < k_classes; ++k) {
      const auto f = model.forward(x.narrow(0, i, 1));
      const auto g = ::torch::autograd::grad(std::vector<at::Tensor>{f[0][k]}, params);
      double sum = 0;
      for (size_t j = 0; j < params.size(); ++j) {
        sum += (g[j].square() * sigma2[j]).sum().item<double>();
      }
      v[i][k] = sum;
    }
  }
  return v;
}

std::vector<at::Tensor> random_variances(const Model& model) {
  std::vector<at::Tensor> out;
  for (const auto& p : model.parameters()) out.push_back(at::rand_like(p) + 0.1);
  return out;
}

// Relative agreement to a few ulps of the largest entry times the number of terms summed.
void expect_close(const at::Tensor& a, const at::Tensor& b, double terms) {
  const double scale = b.abs().max().item<double>();
  const double diff = (a - b).abs().max().item<double>();
  EXPECT_LE(diff, 16 * terms * kEps * scale) << "max |diff| " << diff << " of scale " << scale;
}

TEST(TorchSensitivity, VarianceOfAnMlpMatchesPerExampleJacobians) {
  ::torch::manual_seed(1);
  ::torch::nn::Sequential net(::torch::nn::Linear(5, 7), ::torch::nn::Tanh(), ::torch::nn::Linear(7, 4));
  net->to(at::kDouble);
  const Model model(net);
  const auto x = at::randn({9, 5}, at::kDouble);
  const auto y = at::randint(0, 4, {9}, at::kLong);
  const auto sigma2 = random_variances(model);
  NetworkSensitivityOptions o;
  o.batch_size = 4;  // three batches, the last one short
  const auto s = network_sensitivity(model, sigma2, x, y, o);
  expect_close(s.variance, brute_force_variance(model, sigma2, x), 7 * 5 + 7 * 4);
  // A bias-free first layer: its node runs only for its own weight (the engine's second pass).
  ::torch::nn::Sequential bare(::torch::nn::Linear(::torch::nn::LinearOptions(5, 7).bias(false)),
                             ::torch::nn::Tanh(), ::torch::nn::Linear(7, 4));
  bare->to(at::kDouble);
  const Model m2(bare);
  const auto sigma_bare = random_variances(m2);
  expect_close(network_sensitivity(m2, sigma_bare, x, y, o).variance,
               brute_force_variance(m2, sigma_bare, x), 7 * 5 + 7 * 4);
}

TEST(TorchSensitivity, VarianceOfACnnAndOfASharedLayerMatchesPerExampleJacobians) {
  ::torch::manual_seed(2);
  // A convolution goes through the engine's per-example path (several rows per example).
  ::torch::nn::Sequential cnn(::torch::nn::Conv2d(::torch::nn::Conv2dOptions(1, 2, 3).padding(1)),
                            ::torch::nn::ReLU(), ::torch::nn::Flatten(), ::torch::nn::Linear(2 * 5 * 5, 3));
  cnn->to(at::kDouble);
  const Model m1(cnn);
  const auto x1 = at::randn({6, 1, 5, 5}, at::kDouble);
  const auto y1 = at::randint(0, 3, {6}, at::kLong);
  const auto sigma1 = random_variances(m1);
  expect_close(network_sensitivity(m1, sigma1, x1, y1).variance,
               brute_force_variance(m1, sigma1, x1), 50 * 3 + 18);
  // A layer applied twice: its per-example gradients of both uses are summed before squaring.
  struct Twice : ::torch::nn::Module {
    ::torch::nn::Linear shared{nullptr};
    Twice() { shared = register_module("shared", ::torch::nn::Linear(3, 3)); }
    at::Tensor forward(const at::Tensor& x) { return shared(::torch::tanh(shared(x))); }
  };
  auto twice = std::make_shared<Twice>();
  twice->to(at::kDouble);
  const Model m2(twice);
  const auto x2 = at::randn({5, 3}, at::kDouble);
  const auto y2 = at::randint(0, 3, {5}, at::kLong);
  const auto sigma2 = random_variances(m2);
  expect_close(network_sensitivity(m2, sigma2, x2, y2).variance,
               brute_force_variance(m2, sigma2, x2), 24);
}

TEST(TorchSensitivity, WeightedNormsLeaveGradientsAlone) {
  ::torch::manual_seed(3);
  ::torch::nn::Linear lin(2, 2);
  lin->to(at::kDouble);
  const auto x = at::randn({3, 2}, at::kDouble);
  lin->weight.mutable_grad() = at::full_like(lin->weight, 7.0);
  const auto named = Model(lin).named_parameters();
  const auto r = weighted_squared_gradient_norms(lin(x).select(1, 0).sum(), named,
                                                 {at::ones({2, 2}, at::kDouble),
                                                  at::ones({2}, at::kDouble)},
                                                 3);
  // ∂f_i0/∂W = [x_i; 0], ∂f_i0/∂b = [1, 0]: r_i = ‖x_i‖² + 1.
  EXPECT_TRUE(at::allclose(r, x.square().sum(1) + 1, 0, 4 * kEps));
  EXPECT_TRUE(at::equal(lin->weight.grad(), at::full_like(lin->weight, 7.0)));
}

TEST(TorchSensitivity, ErrorDeviationScoreAndLooByHand) {
  ::torch::manual_seed(4);
  ::torch::nn::Sequential net(::torch::nn::Linear(3, 4), ::torch::nn::Sigmoid(), ::torch::nn::Linear(4, 3));
  net->to(at::kDouble);
  const Model model(net);
  const auto x = at::randn({5, 3}, at::kDouble);
  const auto y = at::tensor(std::vector<int64_t>{0, 2, 1, 1, 0});
  const auto sigma2 = random_variances(model);
  const auto s = network_sensitivity(model, sigma2, x, y);
  at::NoGradGuard no_grad;
  const auto f = model.forward(x);
  double loo_nll = 0, train_nll = 0;
  int loo_correct = 0;
  for (int64_t i = 0; i < 5; ++i) {
    double z = 0;
    for (int64_t k = 0; k < 3; ++k) z += std::exp(f[i][k].item<double>());
    double score = 0, zt = 0;
    std::vector<double> ft(3);
    for (int64_t k = 0; k < 3; ++k) {
      const double p = std::exp(f[i][k].item<double>()) / z;
      const double e = p - (y[i].item<int64_t>() == k ? 1.0 : 0.0);
      const double v = s.variance[i][k].item<double>();
      EXPECT_NEAR(s.error[i][k].item<double>(), e, 4 * kEps);
      EXPECT_NEAR(s.deviation[i][k].item<double>(), v * e, 4 * kEps * std::abs(v));
      score += std::abs(e * p * (1 - p) * v);
      ft[k] = f[i][k].item<double>() + v * e;
      zt += std::exp(ft[k]);
    }
    EXPECT_NEAR(s.score[i].item<double>(), score, 16 * kEps * score);
    const int64_t yi = y[i].item<int64_t>();
    loo_nll += -(ft[yi] - std::log(zt)) / 5;
    train_nll += -(f[i][yi].item<double>() - std::log(z)) / 5;
    loo_correct += (std::max_element(ft.begin(), ft.end()) - ft.begin()) == yi;
  }
  EXPECT_NEAR(s.loo_nll, loo_nll, 64 * kEps * loo_nll);
  EXPECT_NEAR(s.train_nll, train_nll, 64 * kEps * train_nll);
  EXPECT_DOUBLE_EQ(s.loo_accuracy, loo_correct / 5.0);
  // The LOO estimate is pessimistic: each example's own pull is taken out.
  EXPECT_GT(s.loo_nll, s.train_nll);
  const auto per_class = class_scores(s, y);
  EXPECT_NEAR(per_class[1].item<double>(), (s.score[2] + s.score[3]).item<double>(), 4 * kEps);
  const auto top = ranked_examples(s.score, 2, true);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_GE(s.score[top[0]].item<double>(), s.score[top[1]].item<double>());
  const auto sorted = std::get<0>(at::sort(s.score, 0, /*descending=*/true));
  EXPECT_EQ(s.score[top[0]].item<double>(), sorted[0].item<double>());
  EXPECT_EQ(s.score[top[1]].item<double>(), sorted[1].item<double>());
}

// A linear model with two logits whose first row of weights is zero with zero variance is
// logistic regression: p_1 = σ(xᵀw). Its MPE must equal the core's GLM sensitivity.
TEST(TorchSensitivity, TwoLogitLinearModelIsTheCoresLogisticRegression) {
  ::torch::manual_seed(5);
  const int64_t n = 12, d = 3;
  ::torch::nn::Linear lin(::torch::nn::LinearOptions(d, 2).bias(false));
  lin->to(at::kDouble);
  {
    at::NoGradGuard no_grad;
    lin->weight[0].zero_();
  }
  const auto x = at::randn({n, d}, at::kDouble);
  const auto y = at::randint(0, 2, {n}, at::kLong);
  auto sigma_w = at::zeros({2, d}, at::kDouble);
  sigma_w[1] = 0.05 * at::rand({d}, at::kDouble) + 0.01;  // h·v < 1, as the core requires
  const auto s = network_sensitivity(Model(lin), {sigma_w}, x, y);

  Matrix xm(n, d);
  Vector ym(n), w(d);
  Matrix cov = Matrix::Zero(d, d);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) xm(i, j) = x[i][j].item<double>();
    ym[i] = static_cast<double>(y[i].item<int64_t>());
  }
  for (int64_t j = 0; j < d; ++j) {
    w[j] = lin->weight[1][j].item<double>();
    cov(j, j) = sigma_w[1][j].item<double>();
  }
  const auto glm =
      inference::Glm::with_isotropic_prior(xm, ym, inference::Likelihood::logistic, 1.0);
  const auto core = inference::glm_sensitivity(glm, w, cov);
  for (int64_t i = 0; i < n; ++i) {
    const double tol = 64 * kEps;
    EXPECT_NEAR(s.error[i][1].item<double>(), core.error[i], tol);
    EXPECT_NEAR(s.variance[i][1].item<double>(), core.variance[i], tol * core.variance[i]);
    EXPECT_NEAR(s.deviation[i][1].item<double>(), core.deviation_first_order[i],
                tol * std::abs(core.deviation_first_order[i]) + tol);
    EXPECT_EQ(s.variance[i][0].item<double>(), 0.0);
    // Only logit 1 has variance, so s_i = |e_i1 λ_i1 v_i1| = h_i |v_i e_i|: Nickl et al.'s
    // |e λ v| of the GLM section, the core's score with the first-order deviation.
    EXPECT_NEAR(s.score[i].item<double>(), core.curvature[i] * std::abs(core.deviation_first_order[i]),
                tol * s.score[i].item<double>() + tol);
  }
}

TEST(TorchSensitivity, AdamSecondMomentGivesTheVariance) {
  ::torch::manual_seed(6);
  ::torch::nn::Linear lin(2, 2);
  ::torch::optim::AdamW adam(lin->parameters(), ::torch::optim::AdamWOptions(0.01).weight_decay(0.1));
  EXPECT_THROW(posterior_variance(adam, 10), Error);  // no step yet: no second moment
  const auto x = at::randn({4, 2});
  adam.zero_grad();
  lin(x).square().sum().backward();
  adam.step();
  const auto pv = posterior_variance(adam, 10);
  ASSERT_EQ(pv.variance.size(), 2u);
  const auto& state = static_cast<const ::torch::optim::AdamWParamState&>(
      *adam.state().at(libtorch_state_key(adam.state(), lin->weight)));
  const auto expected = 1.0 / (10 * state.exp_avg_sq().sqrt() + 10 * 0.1);
  EXPECT_TRUE(at::allclose(pv.variance[0], expected, 1e-6, 0));
  ::torch::optim::SGD sgd(lin->parameters(), ::torch::optim::SGDOptions(0.1));
  EXPECT_THROW(posterior_variance(sgd, 10), Error);
}

TEST(TorchSensitivity, BadInputIsRefused) {
  ::torch::nn::Linear lin(2, 3);
  const Model model(lin);
  const auto x = at::randn({4, 2});
  const auto y = at::tensor(std::vector<int64_t>{0, 1, 2, 0});
  const std::vector<at::Tensor> good{at::ones({3, 2}), at::ones({3})};
  EXPECT_NO_THROW(network_sensitivity(model, good, x, y));
  EXPECT_THROW(network_sensitivity(model, {at::ones({3, 2})}, x, y), Error);         // count
  EXPECT_THROW(network_sensitivity(model, {at::ones({2, 3}), at::ones({3})}, x, y), Error);
  EXPECT_THROW(network_sensitivity(model, {-at::ones({3, 2}), at::ones({3})}, x, y), Error);
  EXPECT_THROW(network_sensitivity(model, good, x, at::tensor(std::vector<int64_t>{0, 1, 3, 0})),
               Error);  // label outside the classes
  EXPECT_THROW(network_sensitivity(model, good, x, y.narrow(0, 0, 3)), Error);
  NetworkSensitivityOptions zero;
  zero.batch_size = 0;
  EXPECT_THROW(network_sensitivity(model, good, x, y, zero), Error);
  RetrainOptions r;
  r.examples = 1;
  EXPECT_THROW(r.validate(), Error);
  r.examples = 2;
  r.momentum = 1.0;
  EXPECT_THROW(r.validate(), Error);
  EXPECT_THROW(pearson_correlation({1.0}, {2.0}), Error);
}

// Logistic regression (logits [0, xᵀw]) on one-hot group features: the Hessian is diagonal, so
// the diagonal Laplace posterior is the full one, and at the MAP removing one example of a group
// of g moves that group's logit by v e / (1 − h v) ≈ v e (h v ≈ 1/g), the MPE's prediction; the
// retraining check must see it.
struct PinnedLogistic : ::torch::nn::Module {
  ::torch::nn::Linear lin{nullptr};
  explicit PinnedLogistic(int64_t d) {
    lin = register_module("lin", ::torch::nn::Linear(::torch::nn::LinearOptions(d, 1).bias(false)));
  }
  at::Tensor forward(const at::Tensor& x) {
    const auto z = lin(x);
    return at::cat({at::zeros_like(z), z}, 1);
  }
};

TEST(TorchSensitivity, RetrainingAgreesWhereTheMpeIsNearlyExact) {
  ::torch::manual_seed(7);
  const int64_t groups = 6, per_group = 20, n = groups * per_group;
  const auto group = at::arange(n, at::kLong).remainder(groups);
  const auto x = at::one_hot(group, groups).to(at::kDouble);
  const auto y = (at::rand({n}, at::kDouble) < (group.to(at::kDouble) + 1) / (groups + 2))
                     .to(at::kLong);
  auto net = std::make_shared<PinnedLogistic>(groups);
  net->to(at::kDouble);
  const Model model(net);
  RetrainOptions o;
  o.examples = 12;
  o.steps = 400;
  o.learning_rate = 2.0;
  o.weight_decay = 0.02;
  auto& w = net->lin->weight;
  for (int t = 0; t < 4000; ++t) {  // gradient descent to the MAP of the retraining objective
    at::Tensor loss = ::torch::nn::functional::cross_entropy(model.forward(x), y) + 0.5 * o.weight_decay * w.square().sum();
    const auto g = ::torch::autograd::grad(std::vector<at::Tensor>{loss}, std::vector<at::Tensor>{w});
    at::NoGradGuard no_grad;
    w.add_(g[0], -2.0);
  }
  // Laplace at the MAP, on the scale of the summed loss: Σ_i p(1−p) x_ij² + Nγ.
  at::Tensor p1;
  {
    at::NoGradGuard no_grad;
    p1 = at::softmax(model.forward(x), 1).select(1, 1);
  }
  const auto h = (p1 * (1 - p1)).unsqueeze(0).mm(x.square());  // 1×groups
  const auto sigma2 = 1.0 / (h + n * o.weight_decay);
  const auto s = network_sensitivity(model, {sigma2}, x, y);
  const auto v = validate_by_retraining(model, s, x, y, o);
  EXPECT_LT(v.reference_shift, 1e-8);  // μ is the MAP: the reference retraining stays there
  EXPECT_GT(v.deviation_correlation, 0.99) << v.deviation_correlation;
  EXPECT_GT(v.score_correlation, 0.99) << v.score_correlation;
  const auto after = model.forward(x);  // μ is restored after the retrainings
  EXPECT_TRUE(at::equal(after.detach(), s.logits));
}

}  // namespace
}  // namespace blr::torch
