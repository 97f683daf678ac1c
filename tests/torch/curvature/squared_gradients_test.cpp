// The per-example squared-gradient engine on torch::nn models: D against one backward per
// example (float64, per_example_reference.hpp) for every supported layer, nested and custom
// modules, shared parameters; refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/nn/functional/linear.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/utils.h>

#include <functional>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/nn/lenet.hpp"
#include "blr/torch/nn/mlp.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "per_example_reference.hpp"
#include "error_message.hpp"

namespace blr::torch {
namespace {

namespace nn = ::torch::nn;
using testing::expect_engine_matches;

using testing::example_losses;
using testing::token_losses;

NamedParameters named(const nn::Module& module) {
  return module.named_parameters().pairs();
}

using ::blr::testing::expect_error;

// ---- Linear -----------------------------------------------------------------------------------

TEST(SquaredGradients, LinearOneRowPerExample) {
  ::torch::manual_seed(1);
  nn::Sequential model(nn::Linear(5, 4), nn::Tanh(),
                       nn::Linear(nn::LinearOptions(4, 3).bias(false)));
  model->to(at::kDouble);
  const auto x = at::randn({6, 5}, at::kDouble);
  expect_engine_matches(example_losses(model->forward(x)), named(*model));
}

TEST(SquaredGradients, LinearOnSequencesSumsRowsBeforeSquaring) {
  ::torch::manual_seed(2);
  nn::Linear layer(4, 3);
  layer->to(at::kDouble);
  // Contiguous M×T×in input: addmm on the (M·T)×in view.
  const auto x = at::randn({5, 7, 4}, at::kDouble);
  expect_engine_matches(example_losses(layer->forward(x)), named(*layer));
  // Four dimensions: matmul on a reshaped view, bias added with broadcasting.
  const auto x4 = at::randn({3, 2, 5, 4}, at::kDouble);
  expect_engine_matches(example_losses(layer->forward(x4)), named(*layer));
}

/// Conv1d features (M×C×L) transposed to M×L×C before a Linear: the non-contiguous input takes
/// matmul's copy path and the bias is an AddBackward0.
struct ConvThenLinear : nn::Module {
  ConvThenLinear() {
    conv = register_module("conv", nn::Conv1d(nn::Conv1dOptions(2, 3, 3).padding(1)));
    head = register_module("head", nn::Linear(3, 2));
  }
  at::Tensor forward(const at::Tensor& x) {
    return head->forward(conv->forward(x).transpose(1, 2));
  }
  nn::Conv1d conv{nullptr};
  nn::Linear head{nullptr};
};

TEST(SquaredGradients, LinearOnTransposedFeatures) {
  ::torch::manual_seed(3);
  auto model = std::make_shared<ConvThenLinear>();
  model->to(at::kDouble);
  const auto x = at::randn({4, 2, 6}, at::kDouble);
  expect_engine_matches(example_losses(model->forward(x)), named(*model));
}

// ---- Convolutions -----------------------------------------------------------------------------

TEST(SquaredGradients, Conv1dStridePaddingDilationGroups) {
  ::torch::manual_seed(4);
  nn::Sequential model(
      nn::Conv1d(nn::Conv1dOptions(2, 4, 3).stride(2).padding(1)), nn::Tanh(),
      nn::Conv1d(nn::Conv1dOptions(4, 6, 3).dilation(2).padding(2).groups(2)), nn::Tanh(),
      nn::Conv1d(nn::Conv1dOptions(6, 2, 2).padding(1).padding_mode(::torch::kReflect)));
  model->to(at::kDouble);
  const auto x = at::randn({5, 2, 11}, at::kDouble);
  expect_engine_matches(example_losses(model->forward(x)), named(*model));
}

TEST(SquaredGradients, Conv2dStridePaddingDilationGroups) {
  ::torch::manual_seed(5);
  nn::Sequential model(
      nn::Conv2d(nn::Conv2dOptions(2, 4, {3, 2}).stride({2, 1}).padding({1, 0}).dilation({1, 2})),
      nn::Tanh(), nn::Conv2d(nn::Conv2dOptions(4, 4, 2).groups(4).bias(false)), nn::Flatten(),
      nn::Linear(4 * 3 * 4, 3));
  model->to(at::kDouble);
  const auto x = at::randn({4, 2, 7, 7}, at::kDouble);
  expect_engine_matches(example_losses(model->forward(x)), named(*model));
}

// ---- Embedding, LayerNorm, broadcast parameters ----------------------------------------------

TEST(SquaredGradients, EmbeddingSumsRepeatedIndicesBeforeSquaring) {
  ::torch::manual_seed(6);
  nn::Embedding embedding(nn::EmbeddingOptions(5, 3).padding_idx(0));
  nn::Linear head(3, 2);
  embedding->to(at::kDouble);
  head->to(at::kDouble);
  // Vocabulary 5, 6 tokens per example: every example repeats indices, and uses padding 0.
  const auto tokens = at::randint(0, 5, {4, 6}, at::kLong);
  ASSERT_GT((tokens == 0).sum().item<int64_t>(), 0);
  NamedParameters parameters = named(*embedding);
  for (const auto& p : named(*head)) parameters.push_back(p);
  expect_engine_matches(example_losses(head->forward(embedding->forward(tokens).tanh().sum(1))),
                        parameters);
  // One index per example.
  const auto single = at::tensor({1, 3, 1, 4}, at::kLong);
  expect_engine_matches(example_losses(embedding->forward(single)), named(*embedding));
}

TEST(SquaredGradients, LayerNormWeightAndBias) {
  ::torch::manual_seed(7);
  nn::LayerNorm norm(nn::LayerNormOptions({4}));
  nn::LayerNorm norm2d(nn::LayerNormOptions({3, 4}));
  norm->to(at::kDouble);
  norm2d->to(at::kDouble);
  for (auto& p : norm->parameters()) p.data().normal_();  // γ = 1, β = 0 would hide errors
  for (auto& p : norm2d->parameters()) p.data().normal_();
  expect_engine_matches(example_losses(norm->forward(at::randn({5, 4}, at::kDouble))),
                        named(*norm));
  expect_engine_matches(example_losses(norm->forward(at::randn({5, 3, 4}, at::kDouble))),
                        named(*norm));
  expect_engine_matches(example_losses(norm2d->forward(at::randn({5, 3, 4}, at::kDouble))),
                        named(*norm2d));
}

/// RMSNorm (x / rms(x) ⊙ g) followed by a learned offset and a per-channel scale: parameters
/// multiplied and subtracted with broadcasting, and a scale applied twice.
struct ScalesAndOffsets : nn::Module {
  ScalesAndOffsets() {
    gain = register_parameter("gain", at::randn({4}));
    offset = register_parameter("offset", at::randn({1, 4}));
    scale = register_parameter("scale", at::randn({4}));
  }
  at::Tensor forward(const at::Tensor& x) {
    const auto normalised = x * at::rsqrt(x.square().mean(-1, /*keepdim=*/true) + 1e-6);
    const auto h = (normalised * gain - offset).tanh();
    return scale * (h * scale).tanh();
  }
  at::Tensor gain, offset, scale;
};

TEST(SquaredGradients, ParametersMultipliedOrSubtractedWithBroadcasting) {
  ::torch::manual_seed(17);
  auto model = std::make_shared<ScalesAndOffsets>();
  model->to(at::kDouble);
  expect_engine_matches(example_losses(model->forward(at::randn({5, 3, 4}, at::kDouble))),
                        named(*model));
  // A parameter with a batch-sized dimension of its own is no broadcast: refused.
  auto per_row = at::randn({5, 4}, at::kDouble).requires_grad_();
  const auto loss = example_losses(at::randn({5, 4}, at::kDouble) * per_row).mean();
  expect_error(
      [&] {
        backward_with_squared_gradients(loss, {{"per_row", per_row}}, 5);
      },
      {"'per_row'", "batch dimension of its own"});
}

/// Token embedding plus a learned positional table (added with broadcasting), LayerNorm, and
/// an output layer tied to the embedding: the table is used twice.
struct TinyLanguageModel : nn::Module {
  TinyLanguageModel(int64_t vocabulary, int64_t width, int64_t length, bool tied_shape_2d) {
    embedding = register_module("embedding", nn::Embedding(vocabulary, width));
    position = register_parameter(
        "position", at::randn(tied_shape_2d ? std::vector<int64_t>{length, width}
                                            : std::vector<int64_t>{1, length, width}) *
                        0.5);
    norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({width})));
    mix = register_module("mix", nn::Linear(width, width));
  }
  at::Tensor forward(const at::Tensor& tokens) {
    auto h = embedding->forward(tokens) + position;
    h = h + mix->forward(norm->forward(h)).tanh();
    return ::torch::nn::functional::linear(h, embedding->weight);  // tied output layer
  }
  nn::Embedding embedding{nullptr};
  nn::LayerNorm norm{nullptr};
  nn::Linear mix{nullptr};
  at::Tensor position;
};

TEST(SquaredGradients, TiedEmbeddingSquaresTheSumOfBothUses) {
  ::torch::manual_seed(8);
  for (bool table_2d : {false, true}) {
    auto model = std::make_shared<TinyLanguageModel>(7, 4, 5, table_2d);
    model->to(at::kDouble);
    const auto tokens = at::randint(0, 7, {3, 5}, at::kLong);
    const auto targets = at::randint(0, 7, {3, 5}, at::kLong);
    expect_engine_matches(token_losses(model->forward(tokens), targets), named(*model));
  }
}

/// A Sequential that can sit inside another one (LibTorch's needs a non-templated forward).
struct StackImpl : nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  at::Tensor forward(at::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(Stack);

/// A custom module holding a Sequential inside a Sequential, one Linear applied twice.
struct Nested : nn::Module {
  Nested() {
    inner = register_module(
        "inner", nn::Sequential(nn::Linear(3, 3),
                                Stack(nn::Tanh(), nn::LayerNorm(nn::LayerNormOptions({3})))));
    shared = register_module("shared", nn::Linear(3, 3));
    out = register_module("out", nn::Linear(3, 2));
  }
  at::Tensor forward(const at::Tensor& x) {
    auto h = inner->forward(x);
    h = shared->forward(shared->forward(h).tanh());  // the same weights twice
    return out->forward(h);
  }
  nn::Sequential inner{nullptr};
  nn::Linear shared{nullptr}, out{nullptr};
};

TEST(SquaredGradients, NestedModulesAndALayerAppliedTwice) {
  ::torch::manual_seed(9);
  auto model = std::make_shared<Nested>();
  model->to(at::kDouble);
  const auto x = at::randn({6, 3}, at::kDouble);
  expect_engine_matches(example_losses(model->forward(x)), named(*model));
  const auto names = named(*model);
  EXPECT_EQ(names[0].first, "inner.0.weight");
  EXPECT_EQ(names[2].first, "inner.1.1.weight");
}

TEST(SquaredGradients, ChunksOfOneExampleGiveTheSameResult) {
  ::torch::manual_seed(10);
  auto model = std::make_shared<TinyLanguageModel>(6, 4, 3, false);
  model->to(at::kDouble);
  const auto tokens = at::randint(0, 6, {5, 3}, at::kLong);
  const auto targets = at::randint(0, 6, {5, 3}, at::kLong);
  SquaredGradientOptions one;
  one.chunk_bytes = 1;  // every chunk holds a single example
  expect_engine_matches(token_losses(model->forward(tokens), targets), named(*model), one);
  nn::Sequential conv(nn::Conv2d(nn::Conv2dOptions(1, 2, 3)));
  conv->to(at::kDouble);
  expect_engine_matches(example_losses(conv->forward(at::randn({4, 1, 5, 5}, at::kDouble))),
                        named(*conv), one);
}

TEST(SquaredGradients, UnusedParametersGetZero) {
  ::torch::manual_seed(11);
  nn::Linear used(3, 2), unused(3, 2);
  NamedParameters parameters = named(*used);
  parameters.emplace_back("unused.weight", unused->weight);
  const auto loss = example_losses(used->forward(at::randn({4, 3}))).mean();
  const auto d = backward_with_squared_gradients(loss, parameters, 4);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2].sizes(), unused->weight.sizes());
  EXPECT_EQ(d[2].abs().max().item<double>(), 0.0);
  EXPECT_FALSE(unused->weight.grad().defined());
  EXPECT_GT(d[0].abs().max().item<double>(), 0.0);
}

/// A CNN on images and a tied language model on tokens, in one loss.
struct ImagesAndTokens : nn::Module {
  ImagesAndTokens() {
    vision = register_module(
        "vision", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1).groups(1)),
                                 nn::Tanh(), nn::Conv2d(nn::Conv2dOptions(4, 4, 3).groups(2)),
                                 nn::Flatten(), nn::Linear(4 * 4 * 4, 7)));
    language = register_module("language", std::make_shared<TinyLanguageModel>(7, 4, 5, false));
  }
  at::Tensor forward(const at::Tensor& images, const at::Tensor& tokens,
                     const at::Tensor& targets) {
    return example_losses(vision->forward(images)) +
           token_losses(language->forward(tokens), targets);
  }
  nn::Sequential vision{nullptr};
  std::shared_ptr<TinyLanguageModel> language;
};

// What a session with a GPU checks: the engine on CUDA (index_add_, _unique, im2col, bmm there)
// gives the CPU's D ("cpu": a copy of the model on the CPU, the same code path). Float64; atomic
// adds in a different order on the GPU: kFloat64Tolerance.
class SquaredGradientsOnDevice : public ::testing::TestWithParam<std::string> {};

TEST_P(SquaredGradientsOnDevice, MatchesTheCpu) {
  if (GetParam() != "cpu" && !::torch::cuda::is_available()) {
    GTEST_SKIP() << "LibTorch sees no CUDA device";
  }
  at::Device device(GetParam());
  if (device.is_cuda() && !device.has_index()) device.set_index(0);  // tensors report cuda:0
  ::torch::manual_seed(18);
  auto cpu = std::make_shared<ImagesAndTokens>();
  auto copy = std::make_shared<ImagesAndTokens>();
  cpu->to(at::kDouble);
  copy->to(at::kDouble);
  {
    at::NoGradGuard no_grad;
    for (size_t k = 0; k < cpu->parameters().size(); ++k) {
      copy->parameters()[k].copy_(cpu->parameters()[k]);
    }
  }
  copy->to(device);
  const auto images = at::randn({6, 1, 6, 6}, at::kDouble);
  const auto tokens = at::randint(0, 7, {6, 5}, at::kLong);
  const auto targets = at::randint(0, 7, {6, 5}, at::kLong);
  const auto on_cpu =
      backward_with_squared_gradients(cpu->forward(images, tokens, targets).mean(), named(*cpu), 6);
  const auto on_device = backward_with_squared_gradients(
      copy->forward(images.to(device), tokens.to(device), targets.to(device)).mean(), named(*copy),
      6);
  std::vector<at::Tensor> back;
  for (const auto& d : on_device) {
    EXPECT_EQ(d.device(), device);
    back.push_back(d.cpu());
  }
  testing::expect_all_close(back, on_cpu, named(*cpu), testing::kFloat64Tolerance, "D on device");
}

INSTANTIATE_TEST_SUITE_P(Devices, SquaredGradientsOnDevice, ::testing::Values("cpu", "cuda"));

// ---- refusals ---------------------------------------------------------------------------------

/// A Linear whose output is divided by a learned temperature: no per-example formula.
struct Tempered : nn::Module {
  Tempered() {
    layer = register_module("layer", nn::Linear(3, 3));
    temperature = register_parameter("temperature", at::ones({3}));
  }
  at::Tensor forward(const at::Tensor& x) { return layer->forward(x) / temperature; }
  nn::Linear layer{nullptr};
  at::Tensor temperature;
};

TEST(SquaredGradients, RefusesAnUnsupportedUseNamingTheParameterBeforeBackward) {
  ::torch::manual_seed(12);
  nn::Sequential model;
  model->push_back("block", std::make_shared<Tempered>());
  const auto loss = example_losses(model->forward(at::randn({4, 3}))).mean();
  expect_error([&] { backward_with_squared_gradients(loss, named(*model), 4); },
               {"'block.temperature'", "DivBackward0"});
  for (const auto& p : model->parameters()) EXPECT_FALSE(p.grad().defined());  // no backward ran
}

TEST(SquaredGradients, RefusesBatchNormInTraining) {
  ::torch::manual_seed(13);
  nn::Sequential model(nn::Linear(3, 4), nn::BatchNorm1d(nn::BatchNorm1dOptions(4).affine(false)),
                       nn::Linear(4, 2));
  const auto loss = example_losses(model->forward(at::randn({5, 3}))).mean();
  expect_error([&] { backward_with_squared_gradients(loss, named(*model), 5); },
               {"NativeBatchNormBackward0", "couple the examples"});
  nn::Sequential affine(nn::Linear(3, 4), nn::BatchNorm1d(4));
  affine->eval();  // running statistics: examples are independent, but γ, β have no formula
  const auto eval_loss = example_losses(affine->forward(at::randn({5, 3}))).mean();
  expect_error([&] { backward_with_squared_gradients(eval_loss, named(*affine), 5); },
               {"'1.weight'", "NativeBatchNormBackward0"});
}

/// A layer that works sequence-first: (M, T, d) → (T, M, d) before a Linear.
struct SequenceFirst : nn::Module {
  SequenceFirst() {
    a = register_module("a", nn::Linear(3, 3));
    b = register_module("b", nn::Linear(3, 2));
  }
  at::Tensor forward(const at::Tensor& x) { return b->forward(a->forward(x).transpose(0, 1)); }
  nn::Linear a{nullptr}, b{nullptr};
};

TEST(SquaredGradients, RefusesLayersThatDoNotSeeTheBatchFirst) {
  ::torch::manual_seed(14);
  auto model = std::make_shared<SequenceFirst>();
  // T = M = 4: the sizes alone cannot tell; the transpose does.
  const auto loss = example_losses(model->forward(at::randn({4, 4, 3})).transpose(0, 1)).mean();
  expect_error([&] { backward_with_squared_gradients(loss, named(*model), 4); },
               {"'b.weight'", "TransposeBackward0", "batch-first"});
  // LibTorch's MultiheadAttention is sequence-first ((T, M, E)): refused by its leading size.
  nn::MultiheadAttention attention(6, 2);
  const auto x = at::randn({5, 3, 6});  // T = 5, M = 3
  const auto out = std::get<0>(attention->forward(x, x, x));
  const auto attention_loss = example_losses(out.transpose(0, 1)).mean();
  expect_error([&] { backward_with_squared_gradients(attention_loss, named(*attention), 3); },
               {"in_proj_weight", "batch-first"});
  // A 2-d input of rows that are not examples: M = 2 examples, 6 rows, no batch-first source.
  nn::Linear layer(3, 2);
  const auto rows = at::randn({6, 3});
  const auto row_loss = example_losses(layer->forward(rows).reshape({2, 6})).mean();
  expect_error([&] { backward_with_squared_gradients(row_loss, named(*layer), 2); },
               {"'weight'", "6 rows"});
}

TEST(SquaredGradients, RefusesTransposedAndThreeDimensionalConvolutions) {
  nn::ConvTranspose1d up(2, 2, 3);
  const auto loss = example_losses(up->forward(at::randn({3, 2, 4}))).mean();
  expect_error([&] { backward_with_squared_gradients(loss, named(*up), 3); },
               {"'weight'", "transposed convolution"});
  nn::Conv3d conv3d(1, 1, 2);
  const auto loss3 = example_losses(conv3d->forward(at::randn({2, 1, 3, 3, 3}))).mean();
  expect_error([&] { backward_with_squared_gradients(loss3, named(*conv3d), 2); },
               {"'weight'", "Conv1d and Conv2d"});
}

TEST(SquaredGradients, RefusesBadArguments) {
  nn::Linear layer(3, 2);
  const auto x = at::randn({4, 3});
  expect_error([&] { backward_with_squared_gradients(layer->forward(x).sum(), named(*layer), 0); },
               {"at least one example"});
  expect_error([&] { backward_with_squared_gradients(layer->forward(x), named(*layer), 4); },
               {"one-element"});
  expect_error([&] { backward_with_squared_gradients(at::ones({}), named(*layer), 4); },
               {"no autograd graph"});
  SquaredGradientOptions zero;
  zero.chunk_bytes = 0;
  expect_error(
      [&] { backward_with_squared_gradients(layer->forward(x).sum(), named(*layer), 4, zero); },
      {"chunk_bytes"});
}

}  // namespace
}  // namespace blr::torch
