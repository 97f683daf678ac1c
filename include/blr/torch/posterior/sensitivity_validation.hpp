// Checking the memory-perturbation estimates of blr/torch/posterior/sensitivity.hpp against retraining, as
// Nickl et al. (NeurIPS 2023, §4.1, Fig. 2 and the class-removal experiment) do: remove one
// training example (or a whole class), retrain warm-started from the trained weights μ, and
// measure how much the prediction at the removed example(s) changed.
//
// Retraining: T full-batch steps of heavy-ball gradient descent from μ on
//     L(θ) = Σ_j w_j ℓ_j(θ) / Σ_j w_j + (γ/2)‖θ‖²      (w_j ∈ {0, 1}: kept examples; γ the
//                                                         per-example weight decay)
//     b ← m b + ∇L(θ),  θ ← θ − α_t b,   α_t = α (1 + cos(π t/T))/2   (cosine to 0)
// Full batches make the retraining deterministic, so that the reference run — the same T steps
// with every example kept — differs from a removal run only by the removal; the true change is
// taken against that reference (p^ref, f^ref), not against μ, which the retraining also moves
// when μ is not a stationary point of L (IVON's mean is not, exactly).
//
// Truth per removed example i (x_i, the example itself):
//     true score      Σ_k |p_k^{\i}(x_i) − p_k^{ref}(x_i)|    against the predicted s_i,
//     true deviation  f^{\i}(x_i) − f^{ref}(x_i) ∈ R^K          against d_i = v_i ⊙ e_i;
// per removed class c: Σ_{i: y_i = c} Σ_k |p_k^{\c}(x_i) − p_k^{ref}(x_i)| against Σ_{i: y_i=c} s_i.
// Reported: Pearson correlations of predicted and true values.
// Cost: (R + 1)·T forward and backward passes over the N training examples (use a subset).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

#include "blr/torch/nn/model.hpp"
#include "blr/torch/posterior/sensitivity.hpp"

namespace blr::torch {

struct RetrainOptions {
  int64_t examples = 100;       ///< R: random training examples removed, one per retraining
  int64_t steps = 100;          ///< T
  double learning_rate = 0.01;  ///< α
  double momentum = 0.9;        ///< m
  double weight_decay = 0.0;    ///< γ
  uint64_t seed = 0;            ///< which examples are removed
  void validate() const;
};

struct RetrainValidation {
  std::vector<int64_t> removed;               ///< indices of the removed examples (or classes)
  std::vector<double> predicted, truth;       ///< scores: s_i and the true L1 change
  ::at::Tensor predicted_deviation;           ///< R×K, d_i
  ::at::Tensor true_deviation;                ///< R×K, f^{\i}(x_i) − f^{ref}(x_i)
  double score_correlation = 0.0;             ///< Pearson(predicted, truth)
  double deviation_correlation = 0.0;         ///< Pearson over all R·K entries
  double reference_shift = 0.0;  ///< mean over examples of Σ_k |p^ref − p(μ)|: how far the
                                 ///< reference retraining moved from μ
};

/// Removes R random examples one at a time (the header's procedure); the model's parameters are
/// restored to μ afterwards.
RetrainValidation validate_by_retraining(const Model& model, const NetworkSensitivity& s,
                                         const ::at::Tensor& inputs, const ::at::Tensor& labels,
                                         const RetrainOptions& options);

/// Removes each class in turn (leave-one-class-out); `removed` holds the classes, `predicted`
/// the class scores, the deviations are left undefined.
RetrainValidation validate_classes_by_retraining(const Model& model, const NetworkSensitivity& s,
                                                 const ::at::Tensor& inputs,
                                                 const ::at::Tensor& labels,
                                                 const RetrainOptions& options);

/// Pearson's correlation of two equally long samples (NaN when one is constant).
double pearson_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace blr::torch
