// Multilayer perceptron: flatten → [Linear → ReLU]* → Linear, e.g. 784-500-300-10.
#pragma once

#include "blr/torch/nn/classifier.hpp"

namespace blr::torch {

class Mlp : public Classifier {
 public:
  /// `inputs` features (images are flattened), hidden widths, `classes` outputs.
  Mlp(int64_t inputs, std::vector<int64_t> hidden, int64_t classes);
  ::torch::Tensor forward(const ::torch::Tensor& images) override;
  std::string describe() const override;

 private:
  std::vector<int64_t> widths_;
  std::vector<::torch::nn::Linear> layers_;
};

}  // namespace blr::torch
