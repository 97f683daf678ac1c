// The likelihood of a data set's task as the training loss (the ℓ̄ of the rule: a mean over the
// minibatch, so that ess·ℓ̄ is the negative log-likelihood of ess examples).
//
//   classification:  ℓ̄ = −(1/M) Σ_j log softmax(f(x))_{j, y_j}, j over every label of the batch:
//                    logits of shape y.shape + (C) are flattened to (M, C) and y to (M), so one
//                    label per example (N) and one per position (N, T) share the formula.
#pragma once

#include <ATen/Tensor.h>

namespace blr::torch {

/// Mean cross-entropy of logits (y.shape + (C)) against int64 labels y.
::at::Tensor classification_loss(const ::at::Tensor& logits, const ::at::Tensor& labels);

}  // namespace blr::torch
