// Any LibTorch model (model.hpp).
#include "blr/torch/nn/model.hpp"

#include <fmt/format.h>
#include <torch/script.h>

#include "blr/core/error.hpp"
#include "blr/torch/nn/script_module.hpp"

namespace blr::torch {

Model Model::script(const ::torch::jit::Module& module) {
  Model m;
  m.script_ = std::make_shared<::torch::jit::Module>(module);
  auto script = m.script_;
  m.forward_ = [script](const ::at::Tensor& x) {
    const c10::IValue out = script->forward({x});
    check(out.isTensor(),
          fmt::format("The TorchScript model's forward returned a {}, not a tensor of logits.",
                      out.tagKind()));
    return out.toTensor();
  };
  return m;
}

Model Model::script(const ::torch::jit::Module& module, std::shared_ptr<const std::string> archive,
                    std::string origin) {
  Model m = script(module);
  m.archive_ = std::move(archive);
  m.origin_ = std::move(origin);
  m.forward_ = [plain = std::move(m.forward_)](const ::at::Tensor& x) {
    const UnoptimizedScriptExecution unoptimized;
    return plain(x);
  };
  return m;
}

::at::Tensor Model::forward(const ::at::Tensor& x) const {
  check(defined(), "The model is empty.");
  switch (precision_) {
    case Precision::kFloat32:
      return forward_(x);
    case Precision::kAutocastBFloat16: {
      const CpuAutocast autocast;
      return forward_(x).to(::at::kFloat);
    }
    default: {
      const auto dtype = parameter_dtype(precision_);
      return forward_(x.is_floating_point() ? x.to(dtype) : x).to(::at::kFloat);
    }
  }
}

void Model::set_precision(Precision precision) {
  check(defined(), "The model is empty.");
  const auto dtype = parameter_dtype(precision);
  if (script_) {
    script_->to(dtype);
  } else {
    module_->to(dtype);
  }
  precision_ = precision;
}

void Model::train(bool on) const {
  if (script_) {
    script_->train(on);
  } else if (module_) {
    module_->train(on);
  }
}

bool Model::is_training() const {
  if (script_) return script_->is_training();
  return module_ && module_->is_training();
}

std::vector<::at::Tensor> Model::parameters() const {
  std::vector<::at::Tensor> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

std::vector<std::pair<std::string, ::at::Tensor>> Model::named_parameters() const {
  std::vector<std::pair<std::string, ::at::Tensor>> out;
  if (script_) {
    return ::blr::torch::named_parameters(*script_);
  } else if (module_) {
    for (const auto& p : module_->named_parameters(/*recurse=*/true)) out.emplace_back(p.key(), p.value());
  }
  return out;
}

void Model::to(::at::Device device) const {
  if (script_) {
    script_->to(device);
  } else if (module_) {
    module_->to(device);
  }
}

void Model::save(::torch::serialize::OutputArchive& archive) const {
  if (module_) {
    module_->save(archive);
    return;
  }
  check(script_ != nullptr, "The model is empty.");
  for (const auto& p : script_->named_parameters(true)) archive.write(p.name, p.value);
  for (const auto& b : script_->named_buffers(true)) archive.write(b.name, b.value, /*is_buffer=*/true);
}

void Model::load(::torch::serialize::InputArchive& archive) const {
  if (module_) {
    module_->load(archive);
    return;
  }
  check(script_ != nullptr, "The model is empty.");
  ::torch::NoGradGuard no_grad;
  // Every parameter and buffer by name and shape, and nothing more: a saved model with other
  // entries is another model.
  std::size_t entries = 0;
  auto restore = [&](const std::string& name, const at::Tensor& value, bool is_buffer) {
    const char* what = is_buffer ? "buffer" : "parameter";
    ::at::Tensor saved;
    check(archive.try_read(name, saved, is_buffer),
          fmt::format("The saved model has no {} '{}'.", what, name));
    check(saved.sizes() == value.sizes(),
          fmt::format("The saved {} '{}' has another shape than the model's.", what, name));
    value.copy_(saved);
    ++entries;
  };
  for (const auto& p : script_->named_parameters(true)) restore(p.name, p.value, false);
  for (const auto& b : script_->named_buffers(true)) restore(b.name, b.value, true);
  const std::size_t saved_entries = archive.keys().size();
  check(saved_entries == entries,
        fmt::format("The saved model holds {} parameters and buffers, this model {}.",
                    saved_entries, entries));
}

}  // namespace blr::torch
