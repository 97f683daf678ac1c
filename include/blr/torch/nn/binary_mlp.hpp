// The binary multilayer perceptron of BayesBiNN and STE (Meng, Bachmann & Khan 2020; their MNIST
// model, research/algorithms.md §4):
//
//   flatten → [dropout → Linear (no bias) → BatchNorm1d (no affine) → ReLU]* → dropout →
//   Linear (no bias) → BatchNorm1d (no affine)
//
// Every parameter is a Linear weight, so an optimizer over binary weights (BayesBiNN, STE) owns
// all of them; batch norm keeps running statistics (buffers) but no parameters. Batch norm as in
// the reference: eps 10⁻⁴, momentum 0.15.
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/dropout.h>

#include "blr/torch/nn/classifier.hpp"

namespace blr::torch {

class BinaryMlp : public Classifier {
 public:
  /// `inputs` features (images are flattened), hidden widths, `classes` outputs, dropout
  /// probability on the input and hidden activations.
  BinaryMlp(int64_t inputs, std::vector<int64_t> hidden, int64_t classes, double dropout = 0.0);
  ::torch::Tensor forward(const ::torch::Tensor& images) override;
  std::string describe() const override;

 private:
  std::vector<int64_t> widths_;
  double dropout_;
  std::vector<::torch::nn::Linear> layers_;
  std::vector<::torch::nn::BatchNorm1d> norms_;
  ::torch::nn::Dropout drop_{nullptr};
};

}  // namespace blr::torch
