// A decoder-only transformer language model (GPT-style; Radford et al. 2018/2019, "Language
// Models are Unsupervised Multitask Learners", with the pre-norm blocks of GPT-2):
//
//   h⁰ = E[x_t] + P[t]                                 token and position embeddings (t < context)
//   hˡ = hˡ⁻¹ + Attn(LN(hˡ⁻¹)),  hˡ ← hˡ + MLP(LN(hˡ))   l = 1..layers (pre-norm blocks)
//   Attn(u) = W_o concat_h softmax(Q_h K_hᵀ/√d + M) V_h,  [Q K V] = W_qkv u,  d = width/heads,
//             M_ts = −∞ for s > t (causal: position t sees positions ≤ t only)
//   MLP(u) = W₂ GELU(W₁ u),  W₁: width → 4·width
//   logits_t = LN_f(h^L_t) Eᵀ                          output layer tied to the token embedding E
//
// Inputs are token ids (N, T) int64 with T ≤ context; the output is logits (N, T, vocabulary).
// Built only from Linear (rank-3 inputs), Embedding, LayerNorm and parameter-free tensor ops, so
// blr's per-example squared-gradient engine (curvature/squared_gradients.hpp) covers it and VOGN/OGN
// train it; the position table is an Embedding indexed by (N, T) positions, so that it, too, has
// the batch first. The tied matrix E is one parameter used twice (input and output); the engine
// sums both uses per example before squaring. Initialisation as GPT-2: N(0, 0.02²) weights, zero
// biases, the residual output projections (W_o, W₂) scaled by 1/√(2·layers).
#pragma once

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include <cstdint>

#include "blr/torch/nn/classifier.hpp"
#include "blr/torch/nn/gpt_options.hpp"

namespace blr::torch {

/// Pre-norm block: h + Attn(LN(h)), then + MLP(LN(·)).
class GptBlock : public ::torch::nn::Module {
 public:
  GptBlock(const GptOptions& options);
  ::torch::Tensor forward(const ::torch::Tensor& h);

 private:
  int64_t heads_;
  ::torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  ::torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, fc1_{nullptr}, fc2_{nullptr};
};

class Gpt : public Classifier {
 public:
  Gpt(const GptOptions& options, int64_t vocabulary);
  /// Logits (N, T, vocabulary) for token ids (N, T), T ≤ context.
  ::torch::Tensor forward(const ::torch::Tensor& tokens) override;
  std::string describe() const override;
  const GptOptions& options() const { return options_; }
  int64_t vocabulary() const { return vocabulary_; }
  /// The token embedding E (also the output layer).
  const ::torch::Tensor& token_embedding() const { return wte_->weight; }

 private:
  GptOptions options_;
  int64_t vocabulary_;
  ::torch::nn::Embedding wte_{nullptr}, wpe_{nullptr};
  std::vector<std::shared_ptr<GptBlock>> blocks_;
  ::torch::nn::LayerNorm ln_f_{nullptr};
};

}  // namespace blr::torch
