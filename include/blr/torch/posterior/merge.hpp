// Merging fine-tuned networks: uncertainty-based gradient matching (Daheim, Möllenhoff, Ponti,
// Gurevych & Khan, "Model merging by uncertainty-based gradient matching", ICLR 2024: the formula
// of its reference code, research/algorithms.md §8.1), task arithmetic (Ilharco et al., ICLR
// 2023) and plain averaging.
//
// Inputs per parameter coordinate: the base (pretrained) θ₀ with curvature C₀, T fine-tuned
// models θ_t with curvatures C_t, a task scale α > 0 and δ₀ ≥ 0. A curvature is precision-scaled,
// C = N·H (data-set size times the diagonal Hessian/Fisher of the mean loss):
//   IVON       its posterior precision ess·(h + δ)  (MeanFieldOptimizer::posterior_precision)
//   VOGN/OGN   ess·(s + δ/ess + γ);  Vadam  ess·s + prior precision  (the same call)
//   Laplace    1/σ² = N·Ĝ + δ of a `blr laplace` posterior (all weights)
//   AdamW, SGD and the other point estimates: N·diag GGN of the cross-entropy over the model's own
//              training set, exact (laplace_fit.hpp's laplace_curvature).
// Uncertainty-weighted merging (the paper's formula with N₀H₀ ← C₀, N_t H_t ← C_t):
//
//     H̄  = α Σ_t C_t + C₀ + δ₀
//     θ  = θ₀ + α Σ_t [(C_t + C₀ + δ₀) / H̄] ⊙ (θ_t − θ₀).
//
// With C₀ = δ₀ = 0 it is Fisher-weighted averaging of task vectors; with equal C_t and C₀ = δ₀ =
// 0 it is the average; for Gaussian posteriors fitted from the prior N(θ₀, C₀⁻¹) it is the exact
// merge of blr/inference/merge.hpp (α = 1). Task arithmetic: θ = θ₀ + α Σ_t (θ_t − θ₀). Averaging:
// θ = (1/T) Σ_t θ_t. All three are written once, as weights w_t of
//
//     θ = (1 − Σ_t w_t) θ₀ + Σ_t w_t θ_t,
//     w_t = α (C_t + C₀ + δ₀) / H̄   |   α   |   1/T,
//
// evaluated in double, so that one model (T = 1, α = 1) comes back bit for bit (w = 1 exactly).
#pragma once

#include <ATen/Tensor.h>

#include <string>
#include <vector>

#include "blr/torch/nn/model.hpp"

namespace torch::optim {
class Optimizer;
}

namespace blr::torch {

enum class MergeMethod { kUncertainty, kAverage, kTaskArithmetic };

/// "uncertainty" | "average" | "task-arithmetic"; anything else is a blr::Error naming the three.
MergeMethod parse_merge_method(const std::string& name);
const char* merge_method_name(MergeMethod method);

struct MergeOptions {
  MergeMethod method = MergeMethod::kUncertainty;
  double scale = 1.0;     ///< α (uncertainty, task arithmetic)
  double delta0 = 1e-12;  ///< δ₀ (uncertainty); the paper's recommended value
  /// Throws blr::Error: α must be positive and finite, δ₀ non-negative and finite.
  void validate() const;
};

/// One parameter tensor by the header's formula. `base_curvature` and `task_curvatures` are
/// needed (same shapes, non-negative) for kUncertainty only. The result has base's dtype and
/// device. Throws blr::Error on a shape mismatch or an H̄ that is not positive.
::at::Tensor merge_tensor(const ::at::Tensor& base, const std::vector<::at::Tensor>& tasks,
                          const ::at::Tensor& base_curvature,
                          const std::vector<::at::Tensor>& task_curvatures,
                          const MergeOptions& options);

/// The curvature C of the header for a trained model and its optimizer, parameter order:
/// a mean-field posterior's precision, a Laplace posterior's 1/σ², or N·diag GGN over
/// (inputs, labels) for a point estimate. `source` receives what was used, in words.
std::vector<::at::Tensor> merge_curvature(const Model& model, ::torch::optim::Optimizer& optimizer,
                                          const ::at::Tensor& inputs, const ::at::Tensor& labels,
                                          std::string& source);

}  // namespace blr::torch
