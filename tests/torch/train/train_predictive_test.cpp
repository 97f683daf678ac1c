// Posterior predictive: the log-domain average of K sampled softmaxes, with μ restored.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "blr/core/error.hpp"
#include "blr/torch/nn/mlp.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/predictive/predictive.hpp"

namespace blr::torch {
namespace {

// A stand-in posterior: sample k sets every parameter to μ + shift_k (shift_k = 0.1·k), σ² = 0.25.
class ShiftOptimizer : public VariationalOptimizer {
 public:
  explicit ShiftOptimizer(std::vector<at::Tensor> params)
      : VariationalOptimizer(std::move(params), std::make_unique<::torch::optim::SGDOptions>(0.1)) {
  }
  at::Tensor step(LossClosure) override { return {}; }
  void sample_parameters(bool) override {
    ::torch::NoGradGuard guard;
    saved_.clear();
    for (auto& p : param_groups()[0].params()) {
      saved_.push_back(p.detach().clone());
      p.add_(0.1 * static_cast<double>(draws_));
    }
    ++draws_;
    sampled_ = true;
  }
  void restore_parameters() override {
    ::torch::NoGradGuard guard;
    auto params = param_groups()[0].params();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(saved_[i]);
    sampled_ = false;
  }
  std::vector<at::Tensor> posterior_variance() override {
    std::vector<at::Tensor> out;
    for (auto& p : param_groups()[0].params()) out.push_back(at::full_like(p, 0.25));
    return out;
  }
  bool sampled() const override { return sampled_; }
  int draws_ = 0;

 private:
  bool sampled_ = false;
  std::vector<at::Tensor> saved_;
};

TEST(TrainPredictive, LogDomainAverageOfSampledSoftmaxes) {
  ::torch::manual_seed(3);
  auto module = std::make_shared<Mlp>(6, std::vector<int64_t>{5}, 3);
  module->to(at::kDouble);
  const Model model(module);  // any model: here one of blr's own
  ShiftOptimizer opt(model.parameters());
  const auto x = at::randn({7, 6}, at::kDouble);

  // Expected: mean over k = 0..3 of softmax at μ + 0.1k, computed directly.
  at::Tensor expected = at::zeros({7, 3}, at::kDouble);
  {
    ::torch::NoGradGuard guard;
    for (int k = 0; k < 4; ++k) {
      for (auto& p : model.parameters()) p.add_(0.1 * k);
      expected += at::softmax(model.forward(x), 1);
      for (auto& p : model.parameters()) p.sub_(0.1 * k);
    }
    expected /= 4.0;
  }
  const auto before = model.parameters()[0].clone();
  const auto lp = predictive_log_probs(model, opt, x, 4, /*batch_size=*/3);
  EXPECT_EQ(opt.draws_, 4);
  EXPECT_LT((lp.exp() - expected).abs().max().item<double>(), 1e-12);
  EXPECT_TRUE(at::equal(model.parameters()[0], before));  // μ restored
  EXPECT_TRUE(model.is_training());                       // mode restored

  const auto at_mean = predict_log_probs(model, x, 2);
  EXPECT_LT((at_mean.exp().sum(1) - 1).abs().max().item<double>(), 1e-12);
  const auto var = posterior_variance(opt);
  ASSERT_EQ(var.size(), model.parameters().size());
  EXPECT_DOUBLE_EQ(var[0][0][0].item<double>(), 0.25);
  EXPECT_NE(as_variational(opt), nullptr);
  EXPECT_THROW(predictive_log_probs(model, opt, x, 0), Error);
}

TEST(TrainPredictive, PointEstimateOptimizerHasNoPosterior) {
  Mlp model(6, {5}, 3);
  ::torch::optim::SGD sgd(model.parameters(), ::torch::optim::SGDOptions(0.1));
  EXPECT_EQ(as_variational(sgd), nullptr);
  EXPECT_TRUE(posterior_variance(sgd).empty());
}

}  // namespace
}  // namespace blr::torch
