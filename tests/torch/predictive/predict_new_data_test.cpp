// blr predict's predictive (predictive/new_data.hpp): the linearised probit predictive of a
// diagonal-Gaussian posterior against the formula with Jacobians by autograd, and the dispatch
// by posterior (IVON: probit and Monte Carlo; a point estimate: the mean, no probit).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/predictive/new_data.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "torch/option_helpers.hpp"

// Outside blr::torch: TORCH_MODULE names `nn::ModuleHolder`, which blr::torch::nn would shadow.
namespace predict_new_data_test {
struct SmallNetImpl : torch::nn::Module {
  SmallNetImpl()
      : first(register_module("first", torch::nn::Linear(3, 5))),
        second(register_module("second", torch::nn::Linear(5, 4))) {}
  at::Tensor forward(const at::Tensor& x) { return second(torch::tanh(first(x))); }
  torch::nn::Linear first, second;
};
TORCH_MODULE(SmallNet);
}  // namespace predict_new_data_test

namespace blr::torch {
namespace {

using predict_new_data_test::SmallNet;

// v_k = Σ_j σ_j² (∂f_k/∂θ_j)² per example from autograd's Jacobian rows, then
// log softmax(f / √(1 + π v / 8)).
::at::Tensor probit_by_hand(SmallNet& net, const std::vector<::at::Tensor>& variance,
                            const ::at::Tensor& x) {
  const auto params = net->parameters();
  std::vector<::at::Tensor> rows;
  for (int64_t i = 0; i < x.size(0); ++i) {
    const auto f = net->forward(x.slice(0, i, i + 1))[0];
    std::vector<double> v;
    for (int64_t k = 0; k < f.size(0); ++k) {
      double total = 0.0;
      for (size_t j = 0; j < params.size(); ++j) {
        const auto g = ::torch::autograd::grad({f[k]}, {params[j]}, {}, true)[0];
        total += (g * g * variance[j]).sum().item<double>();
      }
      v.push_back(total);
    }
    const auto scale = (::torch::tensor(v, ::at::kDouble) * (std::numbers::pi / 8) + 1).rsqrt();
    rows.push_back(::torch::log_softmax(f.detach() * scale, 0));
  }
  return ::torch::stack(rows);
}

TEST(PredictNewData, DiagonalProbitEqualsTheFormulaFromJacobians) {
  ::torch::manual_seed(4);
  SmallNet net;
  net->to(::at::kDouble);
  const auto x = ::torch::randn({6, 3}, ::at::kDouble);
  std::vector<::at::Tensor> variance;
  for (const auto& p : net->parameters()) variance.push_back(::torch::rand_like(p) * 0.5);
  const auto got = diagonal_probit_log_probs(Model(net), variance, x, 4);  // two batches
  // Both sides sum the same products in double; their orders differ: round-off ≤ 1e-13.
  EXPECT_LT((got - probit_by_hand(net, variance, x)).abs().max().item<double>(), 1e-13);
  // Zero variance is the softmax at the mean.
  std::vector<::at::Tensor> zero;
  for (const auto& p : net->parameters()) zero.push_back(::torch::zeros_like(p));
  const auto at_mean = diagonal_probit_log_probs(Model(net), zero, x);
  EXPECT_LT((at_mean - ::torch::log_softmax(net->forward(x), 1)).abs().max().item<double>(),
            1e-15);
  // A variance per parameter is required, of the parameter's shape.
  EXPECT_THROW(diagonal_probit_log_probs(Model(net), {variance[0]}, x), Error);
  auto wrong = variance;
  wrong[1] = ::torch::ones({2}, ::at::kDouble);
  EXPECT_THROW(diagonal_probit_log_probs(Model(net), wrong, x), Error);
}

TEST(PredictNewData, DispatchesByPosterior) {
  ::torch::manual_seed(5);
  SmallNet net;
  net->to(::at::kDouble);
  const auto x = ::torch::randn({7, 3}, ::at::kDouble);
  Ivon ivon(net->parameters(),
            make_options<IvonOptions>({{"lr", 0.1}, {"ess", 20.0}, {"hess_init", 0.5}}));
  const auto probit = predict_new_data(Model(net), ivon, x, 8, PredictiveMethod::kProbit);
  EXPECT_EQ(probit.method, "probit");
  const auto expected = diagonal_probit_log_probs(Model(net), ivon.posterior_variance(), x);
  EXPECT_LT((probit.log_probs - expected).abs().max().item<double>(), 1e-14);
  // Each row sums to 1 (4 exp and 4 additions in double, each ≤ ε) and its entropy is −Σ p log p.
  const auto p = probit.log_probs.exp();
  EXPECT_LT((p.sum(1) - 1).abs().max().item<double>(), 8 * std::numeric_limits<double>::epsilon());
  EXPECT_LT((probit.entropy + (p * probit.log_probs).sum(1)).abs().max().item<double>(), 1e-14);

  const auto mc = predict_new_data(Model(net), ivon, x, 8, PredictiveMethod::kMonteCarlo);
  EXPECT_EQ(mc.method, "monte-carlo");
  EXPECT_EQ(mc.samples, 8);
  EXPECT_EQ(mc.log_probs.sizes(), probit.log_probs.sizes());

  ::torch::optim::SGD sgd(net->parameters(), ::torch::optim::SGDOptions(0.1));
  const auto mean = predict_new_data(Model(net), sgd, x, 8, PredictiveMethod::kMonteCarlo);
  EXPECT_EQ(mean.method, "mean");
  EXPECT_LT((mean.log_probs - ::torch::log_softmax(net->forward(x), 1)).abs().max().item<double>(),
            1e-15);
  EXPECT_THROW(predict_new_data(Model(net), sgd, x, 8, PredictiveMethod::kProbit), Error);
  EXPECT_THROW(parse_predictive_method("laplace"), Error);
}

}  // namespace
}  // namespace blr::torch
