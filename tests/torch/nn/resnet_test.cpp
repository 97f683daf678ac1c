// ResNet-20 (nn/resnet.hpp): the architecture (20 weighted layers, parameter count of the 3×3
// stages with option-A shortcuts, feature-map sizes), VOGN/OGN's refusal of batch norm, and
// IVON, AdamW and SGD lowering the loss on a fixed minibatch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/nn/classifier.hpp"
#include "blr/torch/nn/resnet.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "model_training.hpp"

namespace blr::torch {
namespace {

// Parameters of ResNet-20 from its definition: a 3×3 convolution in→out has 9·in·out weights, a
// batch norm 2·channels (γ, β), the classifier 64·classes + classes; option-A shortcuts none.
ModelSpec resnet(int64_t channels, int64_t side, int64_t classes) {
  ModelSpec spec;
  spec.kind = "resnet20";
  spec.input_channels = channels;
  spec.image_size = side;
  spec.classes = classes;
  return spec;
}

int64_t expected_parameters(int64_t in, int64_t classes) {
  auto conv = [](int64_t a, int64_t b) { return 9 * a * b; };
  int64_t n = conv(in, 16) + 2 * 16;
  int64_t channels = 16;
  for (int64_t width : {16, 32, 64}) {
    for (int b = 0; b < 3; ++b) {
      n += conv(channels, width) + conv(width, width) + 2 * 2 * width;
      channels = width;
    }
  }
  return n + 64 * classes + classes;
}

TEST(ResNet20, ArchitectureAndShapes) {
  ::torch::manual_seed(0);
  auto model = make_classifier(resnet(1, 28, 10));
  int64_t count = 0, weighted_layers = 0;
  for (const auto& p : model->parameters()) {
    count += p.numel();
    if (p.dim() >= 2) ++weighted_layers;  // conv and linear weights (BN's γ, β are vectors)
  }
  EXPECT_EQ(count, expected_parameters(1, 10));
  EXPECT_NEAR(static_cast<double>(count), 0.27e6, 0.01e6);  // He et al. 2016, Table 6: 0.27M
  EXPECT_EQ(weighted_layers, 20);
  model->eval();
  const auto logits = model->forward(at::randn({3, 1, 28, 28}));
  EXPECT_EQ(logits.sizes(), (at::IntArrayRef{3, 10}));
  EXPECT_EQ(model->describe().rfind("resnet20", 0), 0u);
  // Three input channels and other sizes work too (global average pooling).
  auto rgb = make_classifier(resnet(3, 32, 7));
  rgb->eval();
  EXPECT_EQ(rgb->forward(at::randn({2, 3, 32, 32})).sizes(), (at::IntArrayRef{2, 7}));
}

TEST(ResNet20, OptionAShortcutPadsChannelsAndSubsamples) {
  ::torch::manual_seed(1);
  BasicBlock block(16, 32, 2);
  block.eval();
  EXPECT_EQ(block.parameters().size(), 6u);  // two convs, two batch norms: no projection
  // Zero convolution weights and BN β: the block returns ReLU(shortcut(x)).
  {
    ::torch::NoGradGuard no_grad;
    for (auto& p : block.parameters()) p.zero_();
  }
  const auto x = at::randn({2, 16, 8, 8});
  const auto y = block.forward(x);
  ASSERT_EQ(y.sizes(), (at::IntArrayRef{2, 32, 4, 4}));
  const auto sub = x.slice(2, 0, c10::nullopt, 2).slice(3, 0, c10::nullopt, 2).relu();
  EXPECT_TRUE(at::equal(y.slice(1, 8, 24), sub));
  EXPECT_EQ(y.slice(1, 0, 8).abs().max().item<float>(), 0.0f);
  EXPECT_EQ(y.slice(1, 24, 32).abs().max().item<float>(), 0.0f);
}

TEST(ResNet20, PerExampleSquaredGradientsRefuseBatchNorm) {
  ::torch::manual_seed(2);
  auto model = make_classifier(resnet(1, 8, 10));
  model->train();
  const auto loss = testing::cross_entropy(model->forward(at::randn({4, 1, 8, 8})),
                                           at::randint(0, 10, {4}, at::kLong));
  try {
    backward_with_squared_gradients(loss, model->named_parameters().pairs(), 4);
    ADD_FAILURE() << "batch norm in training mode was accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("couple the examples"), std::string::npos) << message;
  }
}

TEST(ResNet20, IvonAdamwAndSgdLowerTheLoss) {
  for (const auto& [optimizer, options] :
       std::vector<std::pair<std::string, OptionValues>>{
           {"ivon", {{"lr", 0.1}, {"hess_init", 0.1}, {"ess", 1e4}}},
           {"adamw", {{"lr", 1e-2}}},
           {"sgd", {{"lr", 0.05}, {"momentum", 0.9}}}}) {
    ::torch::manual_seed(3);
    auto model = make_classifier(resnet(1, 8, 4));
    model->train();
    const auto x = at::randn({8, 1, 8, 8});
    const auto y = at::randint(0, 4, {8}, at::kLong);
    const auto [before, after] = testing::train_steps(
        [&](const at::Tensor& in) { return model->forward(in); },
        model->named_parameters().pairs(), optimizer, options, x, y, 6);
    EXPECT_LT(after, 0.7 * before) << optimizer << ": " << before << " -> " << after;
  }
}

}  // namespace
}  // namespace blr::torch
