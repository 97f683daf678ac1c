#include "blr/torch/train/likelihood.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

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

at::Tensor match_targets(const at::Tensor& outputs, const at::Tensor& targets) {
  if (outputs.sizes() == targets.sizes()) return outputs;
  if (outputs.dim() == targets.dim() + 1 && outputs.size(-1) == 1 &&
      outputs.sizes().slice(0, targets.dim()) == targets.sizes()) {
    return outputs.squeeze(-1);
  }
  throw Error(fmt::format(
      "The model returns shape [{}] for targets of shape [{}]; a regression model must return the "
      "targets' shape.",
      fmt::join(outputs.sizes(), ", "), fmt::join(targets.sizes(), ", ")));
}

at::Tensor gaussian_loss(const at::Tensor& outputs, const at::Tensor& targets, double noise_std) {
  check(noise_std > 0 && std::isfinite(noise_std),
        "The observation noise must be a positive finite number; got {}.", noise_std);
  const auto residual = (targets - match_targets(outputs, targets)) / noise_std;
  return 0.5 * residual.pow(2).mean() + (std::log(noise_std) + 0.5 * std::log(2 * M_PI));
}

}  // namespace blr::torch
