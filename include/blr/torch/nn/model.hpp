// Any LibTorch model that maps a batch of inputs to logits: a torch::nn::Module with a
// forward(Tensor) — blr's own classifiers, a torch::nn::Sequential, a user's module — or a
// TorchScript module (torch::jit::load of a model written in Python with
// `torch.jit.script(model).save(path)`). The predictive, the trainer and the checkpoints take a
// Model, so every optimizer works with every model.
//
//   blr::torch::Model m(my_module);                          // std::shared_ptr<M> or a holder
//   blr::torch::Model s = blr::torch::Model::script(torch::jit::load("model.pt"));
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "blr/torch/nn/precision.hpp"

#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace blr::torch {

class Model {
 public:
  Model() = default;

  /// A module with `forward(const Tensor&) → Tensor` (held by shared_ptr).
  template <class M>
    requires std::derived_from<M, ::torch::nn::Module> &&
             requires(M& m, const ::at::Tensor& x) { ::at::Tensor(m.forward(x)); }
  Model(std::shared_ptr<M> module)  // NOLINT: implicit by design
      : module_(module), forward_([module](const ::at::Tensor& x) { return module->forward(x); }) {}

  /// A module holder such as torch::nn::Sequential or torch::nn::Linear.
  template <class M>
  Model(const ::torch::nn::ModuleHolder<M>& holder) : Model(holder.ptr()) {}  // NOLINT

  /// A TorchScript module (its `forward` takes one tensor and returns the logits).
  static Model script(const ::torch::jit::Module& module);
  /// A TorchScript module loaded from `archive`, the bytes of its torch.jit.save file, which the
  /// model keeps so that a checkpoint can embed them; `origin` (the file) names it in messages.
  /// Its forward runs unoptimised (nn/script_file.hpp builds these).
  static Model script(const ::torch::jit::Module& module,
                      std::shared_ptr<const std::string> archive, std::string origin);

  bool defined() const { return forward_ != nullptr; }
  bool is_script() const { return script_ != nullptr; }

  ::at::Tensor forward(const ::at::Tensor& x) const;
  void train(bool on = true) const;
  bool is_training() const;
  std::vector<::at::Tensor> parameters() const;
  /// Parameters with their module paths ("0.weight", "blocks.1.attn.in_proj_weight").
  std::vector<std::pair<std::string, ::at::Tensor>> named_parameters() const;  // NamedParameters
  void to(::at::Device device) const;
  /// Sets the precision of the model's computation (nn/precision.hpp): casts the parameters and
  /// buffers to its parameter dtype, and makes forward() cast floating inputs to it (or run under
  /// CPU autocast) and return float32. Call before an optimizer takes the parameters.
  void set_precision(Precision precision);
  Precision precision() const { return precision_; }

  /// Parameters and buffers into/from an archive (an nn::Module keeps LibTorch's own layout).
  void save(::torch::serialize::OutputArchive& archive) const;
  void load(::torch::serialize::InputArchive& archive) const;

  /// The nn::Module, or nullptr for a TorchScript model.
  const std::shared_ptr<::torch::nn::Module>& module() const { return module_; }
  /// The TorchScript archive the model was loaded from, or nullptr.
  const std::shared_ptr<const std::string>& script_archive() const { return archive_; }
  /// Where the archive came from (a file path), or "".
  const std::string& origin() const { return origin_; }

 private:
  std::shared_ptr<::torch::nn::Module> module_;
  std::shared_ptr<::torch::jit::Module> script_;
  std::function<::at::Tensor(const ::at::Tensor&)> forward_;
  std::shared_ptr<const std::string> archive_;
  std::string origin_;
  Precision precision_ = Precision::kFloat32;
};

/// Puts a model in evaluation mode for a scope and restores its training flag afterwards.
class EvalMode {
 public:
  explicit EvalMode(const Model& model) : model_(model), was_training_(model.is_training()) {
    model_.train(false);
  }
  ~EvalMode() { model_.train(was_training_); }
  EvalMode(const EvalMode&) = delete;
  EvalMode& operator=(const EvalMode&) = delete;

 private:
  const Model& model_;
  bool was_training_;
};

}  // namespace blr::torch
