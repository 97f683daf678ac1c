#include "blr/torch/nn/lenet.hpp"

#include <fmt/format.h>
#include <torch/nn/functional/pooling.h>

namespace blr::torch {

LeNet5::LeNet5(int64_t input_channels, int64_t image_size, int64_t classes) : Classifier("LeNet5") {
  namespace nn = ::torch::nn;
  conv1_ = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(input_channels, 6, 5).padding(2)));
  conv2_ = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(6, 16, 5)));
  const int64_t side = ((image_size / 2) - 4) / 2;  // pad-2 conv keeps the size; pool; conv; pool
  flat_ = 16 * side * side;
  fc1_ = register_module("fc1", nn::Linear(flat_, 120));
  fc2_ = register_module("fc2", nn::Linear(120, 84));
  fc3_ = register_module("fc3", nn::Linear(84, classes));
}

::torch::Tensor LeNet5::forward(const ::torch::Tensor& images) {
  auto a = ::torch::max_pool2d(::torch::relu(conv1_->forward(images)), 2);
  a = ::torch::max_pool2d(::torch::relu(conv2_->forward(a)), 2);
  a = a.flatten(1);
  a = ::torch::relu(fc1_->forward(a));
  a = ::torch::relu(fc2_->forward(a));
  return fc3_->forward(a);
}

std::string LeNet5::describe() const {
  return fmt::format("lenet5 conv6-conv16-{}-120-84-{}", flat_, fc3_->options.out_features());
}

}  // namespace blr::torch
