// Models: shapes, and the per-example squared gradients of the engine on blr's MLP and LeNet-5
// against a brute-force
// loop over examples (float64).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include "blr/core/error.hpp"
#include "blr/torch/nn/classifier.hpp"
#include "blr/torch/nn/lenet.hpp"
#include "blr/torch/nn/mlp.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"

namespace blr::torch {
namespace {

// (1/M) Σ_i (∇ℓ_i)² computed one example at a time.
std::vector<at::Tensor> brute_force(Classifier& model, const at::Tensor& x, const at::Tensor& y) {
  std::vector<at::Tensor> sum;
  const int64_t m = x.size(0);
  for (int64_t i = 0; i < m; ++i) {
    model.zero_grad();
    auto loss =
        at::nll_loss(at::log_softmax(model.forward(x.slice(0, i, i + 1)), 1), y.slice(0, i, i + 1));
    loss.backward();
    const auto params = model.parameters();
    for (size_t k = 0; k < params.size(); ++k) {
      const auto g2 = params[k].grad().square();
      if (sum.size() <= k) {
        sum.push_back(g2.clone());
      } else {
        sum[k] += g2;
      }
    }
  }
  for (auto& s : sum) s /= static_cast<double>(m);
  return sum;
}

void expect_squared_gradients_match(Classifier& model, const at::Tensor& x, const at::Tensor& y) {
  model.to(at::kDouble);
  const auto expected = brute_force(model, x, y);
  model.zero_grad();
  auto loss = at::nll_loss(at::log_softmax(model.forward(x), 1), y);
  const auto got = backward_with_squared_gradients(loss, model.named_parameters().pairs(), x.size(0));
  ASSERT_EQ(got.size(), expected.size());
  const auto params = model.parameters();
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].sizes(), params[k].sizes()) << "parameter " << k;
    const double scale = expected[k].abs().max().item<double>() + 1e-300;
    EXPECT_LT((got[k] - expected[k]).abs().max().item<double>(), 1e-10 * scale)
        << "parameter " << k;
  }
}

TEST(TrainNn, MlpShapesAndDescription) {
  ::torch::manual_seed(0);
  auto model = make_classifier(ModelSpec{"mlp", {32, 16}});
  EXPECT_EQ(model->describe(), "mlp 784-32-16-10");
  EXPECT_EQ(model->parameters().size(), 6u);
  const auto out = model->forward(at::randn({5, 1, 28, 28}));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{5, 10}));
}

TEST(TrainNn, LenetShapes) {
  ::torch::manual_seed(0);
  auto model = make_classifier(ModelSpec{"lenet", {}});
  EXPECT_EQ(model->parameters().size(), 10u);
  EXPECT_EQ(model->parameters()[0].sizes(), (std::vector<int64_t>{6, 1, 5, 5}));
  EXPECT_EQ(model->forward(at::randn({3, 1, 28, 28})).sizes(), (std::vector<int64_t>{3, 10}));
  EXPECT_EQ(model->parameters()[4].sizes(), (std::vector<int64_t>{120, 400}));
}

TEST(TrainNn, MlpSquaredGradientsArePerExample) {
  ::torch::manual_seed(1);
  Mlp model(12, {7, 5}, 4);
  const auto x = at::randn({6, 1, 3, 4}, at::kDouble);
  const auto y = at::tensor({0, 1, 2, 3, 1, 0}, at::kLong);
  expect_squared_gradients_match(model, x, y);
}

TEST(TrainNn, LenetSquaredGradientsArePerExample) {
  ::torch::manual_seed(2);
  LeNet5 model(1, 16, 3);
  const auto x = at::randn({4, 1, 16, 16}, at::kDouble);
  const auto y = at::tensor({0, 2, 1, 2}, at::kLong);
  expect_squared_gradients_match(model, x, y);
}

TEST(TrainNn, ParseWidths) {
  EXPECT_EQ(parse_widths("500,300"), (std::vector<int64_t>{500, 300}));
  EXPECT_EQ(parse_widths("64"), (std::vector<int64_t>{64}));
  EXPECT_TRUE(parse_widths("").empty());
  EXPECT_THROW(parse_widths("500,,300"), Error);
  EXPECT_THROW(parse_widths("500,abc"), Error);
  EXPECT_THROW(parse_widths("500,0"), Error);
  EXPECT_THROW(parse_widths("500,"), Error);
  EXPECT_THROW(make_classifier(ModelSpec{"resnet", {}}), Error);
}

}  // namespace
}  // namespace blr::torch
