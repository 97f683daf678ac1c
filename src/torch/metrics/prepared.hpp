// Log-probabilities and labels as the metrics read them (metrics.cpp, temperature_scaling.cpp):
// (N, ..., C) and (N, ...) flattened to M×C double and M int64 on the CPU, one row per label, with
// the shapes and label range checked in one sentence.
#pragma once

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "blr/core/error.hpp"

namespace blr::torch::detail {

struct Prepared {
  at::Tensor log_probs;  // N×C double, CPU, contiguous
  at::Tensor labels;     // N int64, CPU, contiguous
};

inline Prepared prepare(const at::Tensor& log_probs, const at::Tensor& labels) {
  check(log_probs.defined() && labels.defined(), "Metrics need defined tensors.");
  check(log_probs.dim() >= 2 && labels.dim() == log_probs.dim() - 1 &&
            labels.sizes() == log_probs.sizes().slice(0, labels.dim()),
        fmt::format("Metrics need log-probabilities of shape labels.shape + (C): got {} "
                    "dimensions for labels of {} dimensions.",
                    log_probs.dim(), labels.dim()));
  check(log_probs.size(0) > 0, "Metrics need at least one example.");
  // One label per position (N, T, ...): every label counts as one prediction.
  const int64_t classes = log_probs.size(-1);
  Prepared p{log_probs.detach().reshape({-1, classes}).to(at::kCPU, at::kDouble).contiguous(),
             labels.detach().reshape(-1).to(at::kCPU, at::kLong).contiguous()};
  const auto* y = p.labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < p.labels.size(0); ++i) {
    check(y[i] >= 0 && y[i] < classes,
          fmt::format("Label {} of example {} lies outside 0..{}.", y[i], i, classes - 1));
  }
  return p;
}

}  // namespace blr::torch::detail
