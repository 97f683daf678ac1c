// The likelihood of a data set's task as the training loss (the ℓ̄ of the rule: a mean over the
// minibatch, so that ess·ℓ̄ is the negative log-likelihood of ess examples).
//
//   classification:  ℓ̄ = −(1/M) Σ_j log softmax(f(x))_{j, y_j}, j over every label of the batch:
//                    logits of shape y.shape + (C) are flattened to (M, C) and y to (M), so one
//                    label per example (N) and one per position (N, T) share the formula.
//   regression:      ℓ̄ = (1/M) Σ_j [ (y_j − f_j)²/(2σ²) + log σ + ½ log 2π ], j over every target
//                    value (M = N·D), on the standardised scale, with observation noise σ
//                    (Gaussian likelihood y ~ N(f(x), σ²)). How σ is set: train/noise.hpp.
// The model's outputs must have the targets' shape; for targets of shape (N) an output of shape
// (N, 1) is accepted (a network's last Linear layer has one unit).
#pragma once

#include <ATen/Tensor.h>

namespace blr::torch {

/// Mean cross-entropy of logits (y.shape + (C)) against int64 labels y.
::at::Tensor classification_loss(const ::at::Tensor& logits, const ::at::Tensor& labels);

/// The outputs in the targets' shape ((N, 1) → (N) when the targets are (N)); a blr::Error naming
/// both shapes when they cannot be matched.
::at::Tensor match_targets(const ::at::Tensor& outputs, const ::at::Tensor& targets);

/// Mean Gaussian negative log-likelihood with noise standard deviation `noise_std` (> 0).
::at::Tensor gaussian_loss(const ::at::Tensor& outputs, const ::at::Tensor& targets,
                           double noise_std);

}  // namespace blr::torch
