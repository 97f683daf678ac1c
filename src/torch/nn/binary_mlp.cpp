#include "blr/torch/nn/binary_mlp.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/nn/functional/activation.h>

#include "blr/core/error.hpp"

namespace blr::torch {

BinaryMlp::BinaryMlp(int64_t inputs, std::vector<int64_t> hidden, int64_t classes, double dropout)
    : Classifier("BinaryMlp"), dropout_(dropout) {
  check(dropout >= 0.0 && dropout < 1.0,
        fmt::format("The dropout probability must lie in [0, 1); got {}.", dropout));
  widths_.push_back(inputs);
  widths_.insert(widths_.end(), hidden.begin(), hidden.end());
  widths_.push_back(classes);
  for (size_t i = 0; i + 1 < widths_.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    layers_.push_back(register_module(
        "fc" + n, ::torch::nn::Linear(::torch::nn::LinearOptions(widths_[i], widths_[i + 1]).bias(false))));
    norms_.push_back(register_module(
        "bn" + n, ::torch::nn::BatchNorm1d(::torch::nn::BatchNormOptions(widths_[i + 1])
                                               .eps(1e-4)
                                               .momentum(0.15)
                                               .affine(false))));
  }
  drop_ = register_module("drop", ::torch::nn::Dropout(dropout));
}

::torch::Tensor BinaryMlp::forward(const ::torch::Tensor& images) {
  auto a = images.flatten(1);
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (dropout_ > 0.0) a = drop_->forward(a);
    a = norms_[i]->forward(layers_[i]->forward(a));
    if (i + 1 < layers_.size()) a = ::torch::relu(a);
  }
  return a;
}

std::string BinaryMlp::describe() const {
  return fmt::format("binary-mlp {}", fmt::join(widths_, "-"));
}

}  // namespace blr::torch
