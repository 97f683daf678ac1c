// LeNet-5-style CNN (LeCun et al. 1998, with ReLU and max pooling as in modern re-implementations):
//   conv 6@5×5 (pad 2) → ReLU → max-pool 2 → conv 16@5×5 → ReLU → max-pool 2
//   → fc 120 → ReLU → fc 84 → ReLU → fc classes
// For 28×28 inputs the flattened feature map is 16×5×5 = 400.
#pragma once

#include "blr/torch/nn/classifier.hpp"

namespace blr::torch {

class LeNet5 : public Classifier {
 public:
  LeNet5(int64_t input_channels, int64_t image_size, int64_t classes);
  ::torch::Tensor forward(const ::torch::Tensor& images) override;
  std::string describe() const override;

 private:
  ::torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  ::torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
  int64_t flat_ = 0;
};

}  // namespace blr::torch
