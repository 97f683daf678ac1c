// Any LibTorch model (model.hpp).
#include "blr/torch/nn/model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/script.h>

#include "blr/core/error.hpp"
#include "blr/torch/nn/script_file.hpp"
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

namespace {

// The first parameter type of `module` other than float32 (as saved), else empty.
std::string saved_non_float_type(const ::torch::jit::Module& module) {
  for (const auto& p : module.parameters()) {
    if (p.scalar_type() != ::at::kFloat) return c10::toString(p.scalar_type());
  }
  return {};
}

// When blr has converted the parameters from the type they were saved in (`saved`), the note
// that names the conversion; else empty.
std::string conversion_note(const std::string& saved, const ::torch::jit::Module& module) {
  if (saved.empty()) return {};
  for (const auto& p : module.parameters()) {
    const std::string now = c10::toString(p.scalar_type());
    if (now == saved) return {};
    return fmt::format(" (blr converted the model's {} parameters to {}; if its forward casts its "
                       "inputs to {}, remove the cast or save the model after model.float())",
                       saved, now, saved);
  }
  return {};
}

// Outputs blr can train on: floating point, and with an autograd graph to the parameters that
// require gradients while gradients are recorded.
void check_output(const std::string& name, const ::at::Tensor& x, const ::at::Tensor& out,
                  const ::torch::jit::Module& module) {
  check(out.is_floating_point(),
        "{} returns {} outputs for an input batch of shape [{}]; blr needs floating-point logits "
        "(or regression outputs), so return a float tensor (no .long(), .int() or argmax at the "
        "end of forward).",
        name, c10::toString(out.scalar_type()), fmt::join(x.sizes(), ", "));
  if (!::at::GradMode::is_enabled() || out.requires_grad()) return;
  for (const auto& p : module.parameters()) {
    check(!p.requires_grad(),
          "{} returns outputs without an autograd graph to its parameters for an input batch of "
          "shape [{}] (a .detach(), .data or torch.no_grad() in its forward?), so blr cannot "
          "compute their gradients.",
          name, fmt::join(x.sizes(), ", "));
  }
}

}  // namespace

Model Model::script(const ::torch::jit::Module& module, std::shared_ptr<const std::string> archive,
                    std::string origin) {
  Model m = script(module);
  m.archive_ = std::move(archive);
  m.origin_ = std::move(origin);
  m.forward_ = [plain = std::move(m.forward_), script = m.script_,
                name = fmt::format("The model in '{}'", m.origin_),
                saved = saved_non_float_type(module)](const ::at::Tensor& x) {
    const UnoptimizedScriptExecution unoptimized;
    ::at::Tensor out;
    try {
      out = plain(x);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // at any call, not only the first (probe_model_output)
      throw Error(forward_failure(name, x, e, conversion_note(saved, *script)));
    }
    check_output(name, x, out, *script);
    return out;
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
