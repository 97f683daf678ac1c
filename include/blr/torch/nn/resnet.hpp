// ResNet-20 (He, Zhang, Ren, Sun 2016, "Deep Residual Learning for Image Recognition", §4.2: the
// CIFAR-10 network with n = 3) adapted to small grey images:
//
//   conv 3×3, 1→16 (input_channels→16) → BN → ReLU
//   3 stages × 3 basic blocks, 16 / 32 / 64 channels, stride 2 at the first block of stages 2, 3
//     basic block: y = ReLU(BN(conv3×3(ReLU(BN(conv3×3(x))))) + shortcut(x))
//   global average pool → Linear 64 → classes
//
// 6·3 + 2 = 20 weighted layers; 28×28 inputs give feature maps of 28, 14 and 7 pixels. The
// shortcut is the paper's option A (parameter-free, as in its CIFAR experiments): the identity,
// and where the shape changes the input subsampled with stride 2 and zero-padded with
// (out − in)/2 channels on each side. Convolutions have no bias (BN follows); weights use
// Kaiming-normal initialisation (fan-out), BN starts at γ = 1, β = 0.
//
// Batch normalisation in training mode couples the examples of a minibatch, so per-example
// gradients (VOGN, OGN) are not defined for this network: the squared-gradient engine refuses it
// with one sentence before backward (curvature/squared_gradients.hpp). IVON, AdamW and SGD train it.
#pragma once

#include <torch/nn/modules/batchnorm.h>

#include "blr/torch/nn/classifier.hpp"

namespace blr::torch {

/// One basic block: two 3×3 convolutions with batch norm and an option-A shortcut.
class BasicBlock : public ::torch::nn::Module {
 public:
  BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride);
  ::torch::Tensor forward(const ::torch::Tensor& x);

 private:
  ::torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  ::torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  int64_t in_channels_, out_channels_, stride_;
};

class ResNet20 : public Classifier {
 public:
  ResNet20(int64_t input_channels, int64_t classes);
  ::torch::Tensor forward(const ::torch::Tensor& images) override;
  std::string describe() const override;

 private:
  ::torch::nn::Conv2d stem_{nullptr};
  ::torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<std::shared_ptr<BasicBlock>> blocks_;
  ::torch::nn::Linear fc_{nullptr};
};

}  // namespace blr::torch
