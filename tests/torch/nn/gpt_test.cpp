// The GPT-style language model (nn/gpt.hpp): shapes and option errors, causality (changing token
// t changes no logit before t), weight tying (one matrix for input and output, which receives
// the gradient of both uses), per-example squared gradients against one backward per example
// (float64; VOGN/OGN), and a tiny model overfitting a tiny text with AdamW, IVON and VOGN.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cmath>
#include <string>
#include <tuple>

#include "blr/core/error.hpp"
#include "blr/torch/nn/classifier.hpp"
#include "blr/torch/nn/gpt.hpp"
#include "model_training.hpp"
#include "per_example_reference.hpp"
#include "error_message.hpp"

namespace blr::torch {
namespace {

GptOptions tiny(int64_t context = 8, int64_t layers = 2, int64_t heads = 2, int64_t width = 8) {
  GptOptions o;
  o.context = context;
  o.layers = layers;
  o.heads = heads;
  o.width = width;
  return o;
}

using ::blr::testing::expect_error;

TEST(Gpt, ShapesAndOptionErrors) {
  ::torch::manual_seed(0);
  Gpt model(tiny(), 11);
  const auto tokens = at::randint(0, 11, {3, 5}, at::kLong);
  EXPECT_EQ(model.forward(tokens).sizes(), (at::IntArrayRef{3, 5, 11}));
  EXPECT_EQ(model.forward(at::randint(0, 11, {2, 8}, at::kLong)).sizes(), (at::IntArrayRef{2, 8, 11}));
  expect_error([&] { model.forward(at::randint(0, 11, {2, 9}, at::kLong)); }, "context [1, 8]");
  expect_error([&] { model.forward(at::randn({2, 4})); }, "int64");
  expect_error([&] { Gpt(tiny(8, 2, 3, 8), 11); }, "multiple of 'heads'");
  expect_error([&] { Gpt(tiny(0), 11); }, "'context'");
  expect_error([&] { Gpt(tiny(), 1); }, "at least 2 tokens");
  ModelSpec spec;
  spec.kind = "gpt";
  spec.classes = 11;
  spec.gpt = tiny();
  EXPECT_EQ(make_classifier(spec)->describe(),
            "gpt context 8 layers 2 heads 2 width 8 vocabulary 11");
}

TEST(Gpt, ChangingTokenTChangesNoEarlierLogit) {
  ::torch::manual_seed(1);
  Gpt model(tiny(12, 2, 2, 16), 9);
  model.to(at::kDouble);
  const auto tokens = at::randint(0, 9, {2, 12}, at::kLong);
  const auto logits = model.forward(tokens);
  for (int64_t t = 0; t < 12; ++t) {
    auto changed = tokens.clone();
    changed.select(1, t).add_(1).remainder_(9);
    const auto other = model.forward(changed);
    EXPECT_TRUE(at::equal(other.slice(1, 0, t), logits.slice(1, 0, t))) << "t = " << t;
    // The logits at t itself depend on token t (the test could fail).
    EXPECT_GT((other.select(1, t) - logits.select(1, t)).abs().max().item<double>(), 1e-6)
        << "t = " << t;
  }
}

TEST(Gpt, OutputLayerIsTheTokenEmbedding) {
  ::torch::manual_seed(2);
  const auto o = tiny(6, 2, 2, 8);
  const int64_t v = 10, c = o.width;
  Gpt model(o, v);
  // Parameters: E (v×c), P (context×c), per block 2 LayerNorms, W_qkv, W_o, W₁, W₂ with biases,
  // final LayerNorm; no separate output matrix.
  const int64_t block = 2 * 2 * c + (3 * c * c + 3 * c) + (c * c + c) + (4 * c * c + 4 * c) +
                        (4 * c * c + c);
  int64_t count = 0, matrices_of_shape_vc = 0;
  for (const auto& p : model.parameters()) {
    count += p.numel();
    if (p.sizes() == at::IntArrayRef{v, c}) ++matrices_of_shape_vc;
  }
  EXPECT_EQ(count, v * c + o.context * c + o.layers * block + 2 * c);
  EXPECT_EQ(matrices_of_shape_vc, 1);
  // A token absent from the input gets an embedding gradient only through the output layer.
  const auto tokens = at::randint(0, v - 1, {2, 6}, at::kLong);  // token v−1 never appears
  testing::cross_entropy(model.forward(tokens), at::randint(0, v, {2, 6}, at::kLong)).backward();
  EXPECT_GT(model.token_embedding().grad()[v - 1].abs().max().item<float>(), 0.0f);
  // Changing E changes the output layer: scaling row k shifts logit k only.
  {
    ::torch::NoGradGuard no_grad;
    const auto before = model.forward(tokens);
    model.token_embedding()[v - 1].mul_(2.0);
    const auto after = model.forward(tokens);
    EXPECT_TRUE(at::equal(after.slice(2, 0, v - 1), before.slice(2, 0, v - 1)));
    EXPECT_TRUE(at::allclose(after.select(2, v - 1), 2.0 * before.select(2, v - 1)));
  }
}

TEST(Gpt, PerExampleSquaredGradientsMatchOneBackwardPerExample) {
  ::torch::manual_seed(3);
  Gpt model(tiny(6, 2, 2, 8), 7);
  model.to(at::kDouble);
  const auto tokens = at::randint(0, 7, {5, 6}, at::kLong);
  const auto targets = at::randint(0, 7, {5, 6}, at::kLong);
  const auto log_p = at::log_softmax(model.forward(tokens), -1);
  const auto losses = -log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1).mean(1);  // ℓ_i
  testing::expect_engine_matches(losses, model.named_parameters().pairs());
}

TEST(Gpt, TinyModelOverfitsATinyText) {
  // "abcab..." patterns: with the context each next character is determined.
  const std::string text = "the cat sat on the mat. the dog sat on the log. ";
  std::vector<int64_t> ids;
  for (const char ch : text + text + text) ids.push_back(static_cast<unsigned char>(ch) % 32);
  const int64_t t = 16, n = 8;
  auto stream = at::tensor(ids, at::kLong);
  std::vector<at::Tensor> xs, ys;
  for (int64_t i = 0; i < n; ++i) {
    xs.push_back(stream.slice(0, 6 * i, 6 * i + t));
    ys.push_back(stream.slice(0, 6 * i + 1, 6 * i + t + 1));
  }
  const auto x = at::stack(xs), y = at::stack(ys);
  // AdamW overfits; IVON and VOGN (per-example squared gradients through the whole model) bring
  // the loss below a quarter of its start (a large ess: little weight noise, as for a big data
  // set; rates from a small grid, IVON lr ∈ {0.05, 0.1, 0.2, 0.5}, VOGN lr ∈ {3e-4, 1e-3, 3e-3}).
  for (const auto& [optimizer, options, steps, bound] :
       std::vector<std::tuple<std::string, OptionValues, int, double>>{
           {"adamw", {{"lr", 2e-2}}, 60, 0.25},
           {"ivon", {{"lr", 0.5}, {"hess_init", 1.0}, {"ess", 1e7}}, 60, 0.25 * std::log(32.0)},
           {"vogn", {{"lr", 3e-4}, {"hess_init", 1e-3}, {"ess", 1e7}, {"prior_precision", 1e-3}}, 60,
            0.25 * std::log(32.0)}}) {
    ::torch::manual_seed(4);
    Gpt model(tiny(t, 1, 2, 32), 32);
    const auto [before, after] =
        testing::train_steps([&](const at::Tensor& in) { return model.forward(in); },
                             model.named_parameters().pairs(), optimizer, options, x, y, steps);
    EXPECT_NEAR(before, std::log(32.0), 0.3) << optimizer;  // near-uniform start
    EXPECT_LT(after, bound) << optimizer << ": " << before << " -> " << after;
  }
}

}  // namespace
}  // namespace blr::torch
