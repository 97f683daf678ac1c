// ResNet-20 with option-A shortcuts (resnet.hpp).
#include "blr/torch/nn/resnet.hpp"

#include <fmt/format.h>
#include <torch/nn/functional/padding.h>
#include <torch/nn/init.h>

namespace blr::torch {
namespace {

namespace nn = ::torch::nn;

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  nn::Conv2d conv(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
  nn::init::kaiming_normal_(conv->weight, 0.0, ::torch::kFanOut, ::torch::kReLU);
  return conv;
}

}  // namespace

BasicBlock::BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride)
    : ::torch::nn::Module("BasicBlock"),
      in_channels_(in_channels),
      out_channels_(out_channels),
      stride_(stride) {
  conv1_ = register_module("conv1", conv3x3(in_channels, out_channels, stride));
  bn1_ = register_module("bn1", nn::BatchNorm2d(out_channels));
  conv2_ = register_module("conv2", conv3x3(out_channels, out_channels, 1));
  bn2_ = register_module("bn2", nn::BatchNorm2d(out_channels));
}

::torch::Tensor BasicBlock::forward(const ::torch::Tensor& x) {
  auto h = ::torch::relu(bn1_->forward(conv1_->forward(x)));
  h = bn2_->forward(conv2_->forward(h));
  ::torch::Tensor shortcut = x;
  if (stride_ != 1 || in_channels_ != out_channels_) {  // option A: subsample, pad channels
    const int64_t pad = (out_channels_ - in_channels_) / 2;
    shortcut = nn::functional::pad(
        x.slice(2, 0, ::c10::nullopt, stride_).slice(3, 0, ::c10::nullopt, stride_),
        nn::functional::PadFuncOptions({0, 0, 0, 0, pad, out_channels_ - in_channels_ - pad}));
  }
  return ::torch::relu(h + shortcut);
}

ResNet20::ResNet20(int64_t input_channels, int64_t classes) : Classifier("ResNet20") {
  stem_ = register_module("stem", conv3x3(input_channels, 16, 1));
  stem_bn_ = register_module("stem_bn", nn::BatchNorm2d(16));
  int64_t in = 16;
  const int64_t widths[] = {16, 32, 64};
  for (int stage = 0; stage < 3; ++stage) {
    for (int b = 0; b < 3; ++b) {
      const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
      blocks_.push_back(register_module(fmt::format("layer{}_{}", stage + 1, b),
                                        std::make_shared<BasicBlock>(in, widths[stage], stride)));
      in = widths[stage];
    }
  }
  fc_ = register_module("fc", nn::Linear(64, classes));
}

::torch::Tensor ResNet20::forward(const ::torch::Tensor& images) {
  auto h = ::torch::relu(stem_bn_->forward(stem_->forward(images)));
  for (auto& block : blocks_) h = block->forward(h);
  return fc_->forward(h.mean({2, 3}));
}

std::string ResNet20::describe() const {
  return fmt::format("resnet20 (option-A shortcuts) 16-32-64-{}", fc_->options.out_features());
}

}  // namespace blr::torch
