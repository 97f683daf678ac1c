#include "blr/torch/nn/mlp.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/nn/functional/activation.h>

namespace blr::torch {

Mlp::Mlp(int64_t inputs, std::vector<int64_t> hidden, int64_t classes) : Classifier("Mlp") {
  widths_.push_back(inputs);
  widths_.insert(widths_.end(), hidden.begin(), hidden.end());
  widths_.push_back(classes);
  for (size_t i = 0; i + 1 < widths_.size(); ++i) {
    layers_.push_back(register_module("fc" + std::to_string(i + 1),
                                      ::torch::nn::Linear(widths_[i], widths_[i + 1])));
  }
}

::torch::Tensor Mlp::forward(const ::torch::Tensor& images) {
  auto a = images.flatten(1);
  for (size_t i = 0; i < layers_.size(); ++i) {
    a = layers_[i]->forward(a);
    if (i + 1 < layers_.size()) a = ::torch::relu(a);
  }
  return a;
}

std::string Mlp::describe() const {
  return fmt::format("mlp {}", fmt::join(widths_, "-"));
}

}  // namespace blr::torch
