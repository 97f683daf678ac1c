// Classifiers for the deep-learning side of blr: a LibTorch module mapping images (N×1×28×28) to
// logits (N×classes), built from Linear and Conv2d layers that can report, for VOGN/OGN, the
// per-example squared gradients
//
//   D = (1/M) Σ_i (∇_θ ℓ_i)²      (one tensor per parameter, ℓ_i the loss of example i)
//
// of the mean minibatch loss (Osawa et al. 2019, §3; research/algorithms.md §3.3). In record mode
// every layer keeps its input a and retains the gradient of its output z; after backward() of the
// MEAN minibatch loss, squared_gradients() turns each (a, ∂l̄/∂z) pair into D with
// linear_squared_gradients / conv2d_squared_gradients (blr/torch/optim/per_example.hpp).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace blr::torch {

/// Base class of blr's classifiers.
class Classifier : public ::torch::nn::Module {
 public:
  explicit Classifier(std::string name) : ::torch::nn::Module(std::move(name)) {}

  /// Logits for a batch of images.
  virtual ::torch::Tensor forward(const ::torch::Tensor& images) = 0;

  /// Record mode: forward() keeps what squared_gradients() needs (layer inputs; retained output
  /// gradients). Off by default.
  void set_record(bool on);
  bool recording() const { return record_; }

  /// After backward() of the mean minibatch loss of a recorded forward(): the per-example squared
  /// gradients, in parameters() order. Throws blr::Error when nothing was recorded.
  std::vector<::torch::Tensor> squared_gradients() const;

  /// A one-line description, e.g. "mlp 784-500-300-10".
  virtual std::string describe() const = 0;

 protected:
  /// Applies `layer` to `input`, recording (input, output) in record mode.
  ::torch::Tensor linear(::torch::nn::Linear& layer, const ::torch::Tensor& input);
  /// `padding` must be the layer's (numeric) padding; it is needed for the squared gradients.
  ::torch::Tensor conv2d(::torch::nn::Conv2d& layer, const ::torch::Tensor& input,
                         std::array<int64_t, 2> padding);
  /// Call at the start of forward(): forgets the previous recording.
  void begin_forward();

 private:
  struct Record {
    bool is_conv = false;
    ::torch::nn::Module* layer = nullptr;
    ::torch::Tensor input;                 // detached layer input
    ::torch::Tensor output;                // layer output with retained gradient
    std::array<int64_t, 2> padding{0, 0};  // Conv2d only
  };
  bool record_ = false;
  std::vector<Record> records_;
};

/// What to build: "mlp" with hidden widths, or "lenet" (LeNet-5).
struct ModelSpec {
  std::string kind = "mlp";
  std::vector<int64_t> hidden = {500, 300};
  int64_t input_channels = 1;
  int64_t image_size = 28;
  int64_t classes = 10;
  void validate() const;
};

/// Builds the classifier `spec` describes (parameters initialised from LibTorch's generator).
std::shared_ptr<Classifier> make_classifier(const ModelSpec& spec);

/// Parses "500,300" (empty string: no hidden layer); throws blr::Error on a bad entry.
std::vector<int64_t> parse_widths(const std::string& text);

}  // namespace blr::torch
