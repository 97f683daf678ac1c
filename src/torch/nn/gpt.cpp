// The GPT-style language model (gpt.hpp).
#include "blr/torch/nn/gpt.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/nn/init.h>

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"

namespace blr::torch {
namespace {

namespace nn = ::torch::nn;

constexpr double kInitStd = 0.02;  // GPT-2's initialisation scale

nn::Linear linear(int64_t in, int64_t out, double std) {
  nn::Linear layer(in, out);
  ::torch::NoGradGuard no_grad;
  layer->weight.normal_(0.0, std);
  layer->bias.zero_();
  return layer;
}

}  // namespace

const OptionTable<GptOptions>& GptOptions::table() {
  using O = GptOptions;
  static const OptionTable<O> t =
      OptionTable<O>("GPT")
          .integer("context", &O::context, Range::between(1, 65536),
                   "context length: longest input sequence, in tokens")
          .integer("layers", &O::layers, Range::between(1, 256), "transformer blocks")
          .integer("heads", &O::heads, Range::between(1, 256), "attention heads per block")
          .integer("width", &O::width, Range::between(1, 65536),
                   "embedding width (a multiple of heads)");
  return t;
}

void GptOptions::validate() const {
  table().validate(*this);
  check(width % heads == 0,
        fmt::format("GPT option 'width' ({}) must be a multiple of 'heads' ({}), so that every "
                    "head has width/heads dimensions.",
                    width, heads));
}

GptBlock::GptBlock(const GptOptions& o) : ::torch::nn::Module("GptBlock"), heads_(o.heads) {
  const double residual_std = kInitStd / std::sqrt(2.0 * static_cast<double>(o.layers));
  ln1_ = register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({o.width})));
  qkv_ = register_module("qkv", linear(o.width, 3 * o.width, kInitStd));
  proj_ = register_module("proj", linear(o.width, o.width, residual_std));
  ln2_ = register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({o.width})));
  fc1_ = register_module("fc1", linear(o.width, 4 * o.width, kInitStd));
  fc2_ = register_module("fc2", linear(4 * o.width, o.width, residual_std));
}

::torch::Tensor GptBlock::forward(const ::torch::Tensor& h) {
  const int64_t n = h.size(0), t = h.size(1), c = h.size(2), d = c / heads_;
  // (N, T, 3, H, d) → three (N, H, T, d)
  const auto qkv = qkv_->forward(ln1_->forward(h)).view({n, t, 3, heads_, d}).permute({2, 0, 3, 1, 4});
  const auto q = qkv[0], k = qkv[1], v = qkv[2];
  auto scores = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(d));
  const auto future = at::ones({t, t}, h.options().dtype(at::kBool)).triu(1);
  scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
  const auto attended = at::matmul(at::softmax(scores, -1), v);  // (N, H, T, d)
  auto out = h + proj_->forward(attended.transpose(1, 2).reshape({n, t, c}));
  return out + fc2_->forward(at::gelu(fc1_->forward(ln2_->forward(out))));
}

Gpt::Gpt(const GptOptions& options, int64_t vocabulary)
    : Classifier("Gpt"), options_(options), vocabulary_(vocabulary) {
  options_.validate();
  check(vocabulary >= 2,
        fmt::format("A language model needs a vocabulary of at least 2 tokens; got {}.", vocabulary));
  wte_ = register_module("wte", nn::Embedding(vocabulary, options_.width));
  wpe_ = register_module("wpe", nn::Embedding(options_.context, options_.width));
  {
    ::torch::NoGradGuard no_grad;
    wte_->weight.normal_(0.0, kInitStd);
    wpe_->weight.normal_(0.0, kInitStd);
  }
  for (int64_t l = 0; l < options_.layers; ++l) {
    blocks_.push_back(register_module(fmt::format("block{}", l), std::make_shared<GptBlock>(options_)));
  }
  ln_f_ = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({options_.width})));
}

::torch::Tensor Gpt::forward(const ::torch::Tensor& tokens) {
  check(tokens.dim() == 2 && tokens.scalar_type() == at::kLong,
        fmt::format("The language model takes token ids of shape (N, T) and dtype int64; got {} "
                    "dimensions of {}.",
                    tokens.dim(), c10::toString(tokens.scalar_type())));
  const int64_t n = tokens.size(0), t = tokens.size(1);
  check(t >= 1 && t <= options_.context,
        fmt::format("The language model's inputs have {} tokens, outside its context [1, {}].", t,
                    options_.context));
  const auto positions = at::arange(t, tokens.options()).unsqueeze(0).expand({n, t});
  auto h = wte_->forward(tokens) + wpe_->forward(positions);
  for (auto& block : blocks_) h = block->forward(h);
  return nn::functional::linear(ln_f_->forward(h), wte_->weight);  // tied output layer
}

std::string Gpt::describe() const {
  return fmt::format("gpt context {} layers {} heads {} width {} vocabulary {}", options_.context,
                     options_.layers, options_.heads, options_.width, vocabulary_);
}

}  // namespace blr::torch
