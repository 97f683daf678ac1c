#include "blr/torch/train/likelihood.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "blr/core/error.hpp"

namespace blr::torch {

at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels) {
  check(logits.dim() == labels.dim() + 1 &&
            logits.sizes().slice(0, labels.dim()) == labels.sizes(),
        "The model returns shape [{}] for labels of shape [{}]; expected the labels' shape "
        "followed by the number of classes.",
        fmt::join(logits.sizes(), ", "), fmt::join(labels.sizes(), ", "));
  const int64_t classes = logits.size(-1);
  return at::nll_loss(at::log_softmax(logits.reshape({-1, classes}), 1), labels.reshape(-1));
}

}  // namespace blr::torch
