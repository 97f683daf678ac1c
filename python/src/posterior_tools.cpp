// Network sensitivities and merging for Python (`blr.sensitivity`, `blr.merge`,
// python/blr/sensitivity.py and merge.py): the
// memory-perturbation equation of `blr sensitivity --checkpoint` (include/blr/torch/sensitivity.hpp)
// on a TorchScript copy of the caller's model (the bytes of torch.jit.save, read behind the model
// file's defences) under the σ² the caller's posterior gives, and AdamW's σ² from its second
// moment by the library's one formula; and merge.hpp's formula per parameter tensor. The same
// functions as the commands, so the same numbers (python/tests/test_sensitivity.py and
// test_merge.py compare them).
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "blr/torch/posterior/merge.hpp"
#include "blr/torch/posterior/sensitivity.hpp"

namespace blr::python {

namespace {

py::dict network_sensitivity(const py::bytes& model_archive, const std::string& origin,
                             const std::vector<::at::Tensor>& variance, const ::at::Tensor& x,
                             const ::at::Tensor& y, int64_t batch_size) {
  auto bytes = std::make_shared<const std::string>(std::string(model_archive));
  const ::blr::torch::Model model = ::blr::torch::load_script_model(std::move(bytes), origin);
  check(x.defined() && x.dim() >= 1 && x.size(0) > 0 && x.is_floating_point(),
        "blr.sensitivity: the inputs must be a floating-point tensor with at least one example "
        "(N×…).");
  check(y.defined() && y.dim() == 1 && y.size(0) == x.size(0) && !y.is_floating_point() &&
            !y.is_complex() && y.scalar_type() != ::at::kBool,
        fmt::format("blr.sensitivity: the labels must be a vector of {} integer class indices, "
                    "one per input.",
                    x.size(0)));
  const auto named = model.named_parameters();
  check(variance.size() == named.size(),
        fmt::format("blr.sensitivity: the posterior gives {} variance tensors but the model has {} "
                    "parameters.",
                    variance.size(), named.size()));
  for (size_t j = 0; j < named.size(); ++j) {
    check(variance[j].defined() && variance[j].sizes() == named[j].second.sizes(),
          fmt::format("blr.sensitivity: the posterior variance of parameter '{}' has shape {} but "
                      "the parameter has shape {}.",
                      named[j].first,
                      variance[j].defined() ? c10::str(variance[j].sizes()) : std::string("none"),
                      c10::str(named[j].second.sizes())));
  }
  ::blr::torch::NetworkSensitivityOptions options;
  options.batch_size = batch_size;
  const auto labels = y.to(::at::kLong);
  ::blr::torch::NetworkSensitivity s;
  ::at::Tensor classes;
  {
    py::gil_scoped_release release;
    s = ::blr::torch::network_sensitivity(model, variance, x, labels, options);
    classes = ::blr::torch::class_scores(s, labels);
  }
  py::dict out;
  out["logits"] = s.logits;
  out["error"] = s.error;
  out["variance"] = s.variance;
  out["deviation"] = s.deviation;
  out["score"] = s.score;
  out["class_scores"] = classes;
  out["loo_nll"] = s.loo_nll;
  out["loo_accuracy"] = s.loo_accuracy;
  out["train_nll"] = s.train_nll;
  out["train_accuracy"] = s.train_accuracy;
  return out;
}

/// One parameter by merge.hpp's formula; curvatures only for "uncertainty".
::at::Tensor merge_tensor(const ::at::Tensor& base, const std::vector<::at::Tensor>& tasks,
                          const std::optional<::at::Tensor>& base_curvature,
                          const std::optional<std::vector<::at::Tensor>>& task_curvatures,
                          const std::string& method, double scale, double delta0) {
  ::blr::torch::MergeOptions options;
  options.method = ::blr::torch::parse_merge_method(method);
  options.scale = scale;
  options.delta0 = delta0;
  options.validate();
  check(!tasks.empty(), "blr.merge: give at least one fine-tuned model.");
  const bool uncertainty = options.method == ::blr::torch::MergeMethod::kUncertainty;
  check(!uncertainty || (base_curvature && task_curvatures),
        "blr.merge: uncertainty merging needs the curvature of the base and of every model.");
  return ::blr::torch::merge_tensor(base, tasks, base_curvature.value_or(::at::Tensor()),
                                    task_curvatures.value_or(std::vector<::at::Tensor>{}),
                                    options);
}

}  // namespace

void bind_posterior_tools(py::module_& m) {
  m.def("network_sensitivity", &network_sensitivity, py::arg("model_archive"), py::arg("origin"),
        py::arg("variance"), py::arg("x"), py::arg("y"), py::arg("batch_size"));
  m.def("merge_tensor", &merge_tensor, py::arg("base"), py::arg("tasks"),
        py::arg("base_curvature"), py::arg("task_curvatures"), py::arg("method"),
        py::arg("scale"), py::arg("delta0"));
  m.def("adamw_posterior_variance", &::blr::torch::adamw_posterior_variance,
        py::arg("exp_avg_sq"), py::arg("examples"), py::arg("weight_decay"));
}

}  // namespace blr::python
