// Classifiers for the deep-learning side of blr: LibTorch modules mapping images (N×C×H×W) to
// logits (N×classes), built from Linear and Conv2d layers (MLP, LeNet-5). Any other
// torch::nn::Module or TorchScript module trains as well (nn/model.hpp); VOGN/OGN read the
// per-example squared gradients of any of them from the autograd graph (curvature/squared_gradients.hpp).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "blr/torch/nn/gpt_options.hpp"

namespace blr::torch {

/// Base class of blr's classifiers.
class Classifier : public ::torch::nn::Module {
 public:
  explicit Classifier(std::string name) : ::torch::nn::Module(std::move(name)) {}

  /// Logits for a batch of images.
  virtual ::torch::Tensor forward(const ::torch::Tensor& images) = 0;

  /// A one-line description, e.g. "mlp 784-500-300-10".
  virtual std::string describe() const = 0;
};

/// What to build: "mlp" with hidden widths, "lenet" (LeNet-5), "resnet20" (nn/resnet.hpp),
/// "gpt" (nn/gpt.hpp: the language model, `classes` = its vocabulary) or "binary-mlp"
/// (nn/binary_mlp.hpp).
struct ModelSpec {
  std::string kind = "mlp";
  std::vector<int64_t> hidden = {500, 300};
  int64_t input_channels = 1;
  int64_t image_size = 28;
  int64_t classes = 10;
  GptOptions gpt{};  ///< kind "gpt" only
  void validate() const;
};

/// Builds the classifier `spec` describes (parameters initialised from LibTorch's generator).
std::shared_ptr<Classifier> make_classifier(const ModelSpec& spec);

/// Parses "500,300" (empty string: no hidden layer); throws blr::Error on a bad entry.
std::vector<int64_t> parse_widths(const std::string& text);

}  // namespace blr::torch
