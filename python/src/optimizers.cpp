// The registry's optimizers for Python: `_blr.Optimizer` owns one C++ optimizer built by name
// from the registry over the Python parameters themselves (the same tensors, not copies: sampling
// writes θ into them and restoring puts μ back, as in C++). python/blr/optim.py wraps it in a
// torch.optim.Optimizer subclass per registry entry; this file only forwards. The GIL is released
// during sampling, restoring and the step (the fused passes run on LibTorch's threads).
#include <torch/csrc/utils/pybind.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <fmt/format.h>

#include <sstream>

#include "bindings.hpp"
#include "blr/torch/train/recipe.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/optim/mean_field.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/posterior_diagnostics.hpp"

namespace blr::python {

namespace {

using ::blr::torch::MeanFieldOptimizer;
using ::blr::torch::OptimizerEntry;
using ::blr::torch::VariationalOptimizer;
using Tensors = std::vector<::at::Tensor>;

/// The entries Python can build: the table-driven optimizers that train.
const OptimizerEntry& python_entry(const std::string& name) {
  const OptimizerEntry& entry = ::blr::torch::find_optimizer(name);
  check(entry.trains && static_cast<bool>(entry.group_options),
        fmt::format("Optimizer '{}' is not available from Python (use torch.optim for LibTorch's own "
                    "optimizers).",
                    name));
  return entry;
}

class PyOptimizer {
 public:
  PyOptimizer(const std::string& name, const std::vector<Tensors>& groups,
              const std::vector<py::dict>& group_options, const py::dict& defaults)
      : entry_(&python_entry(name)) {
    check(groups.size() == group_options.size(), "Internal: one options dict per param group.");
    std::vector<::torch::optim::OptimizerParamGroup> param_groups;
    for (size_t g = 0; g < groups.size(); ++g) {
      param_groups.emplace_back(groups[g], make_options(group_options[g]));
    }
    optimizer_ = entry_->make(std::move(param_groups), to_option_values(defaults), {});
    variational_ = dynamic_cast<VariationalOptimizer*>(optimizer_.get());
    mean_field_ = dynamic_cast<MeanFieldOptimizer*>(optimizer_.get());
  }

  void sample(bool train, const std::optional<Tensors>& standard_normal) {
    VariationalOptimizer& v = variational();
    if (standard_normal) {
      check(mean_field_ != nullptr,
            fmt::format("{} takes no given noise: only the Gaussian mean-field optimizers have the "
                        "noise hook.",
                        entry_->options->owner()));
      mean_field_->sample_parameters(train, *standard_normal);
    } else {
      v.sample_parameters(train);
    }
  }
  void restore() { variational().restore_parameters(); }
  void discard() { variational().discard_sample(); }
  void step() { optimizer_->step(); }

  bool is_variational() const { return variational_ != nullptr; }
  bool sampled() const { return variational_ != nullptr && variational_->sampled(); }
  bool has_posterior() const { return variational_ != nullptr && variational_->has_posterior(); }
  int training_samples() const { return ::blr::torch::training_samples(*optimizer_); }
  bool needs_squared_gradients() const {
    return variational_ != nullptr && variational_->needs_squared_gradients();
  }
  void add_squared_gradients(const Tensors& squared) {
    variational().add_squared_gradients(squared);
  }
  int64_t step_count() const { return mean_field().step_count(); }

  Tensors posterior_variance() { return variational().posterior_variance(); }
  Tensors posterior_precision() { return mean_field().posterior_precision(); }
  Tensors curvature() { return mean_field().curvature(); }
  Tensors momentum() { return mean_field().momentum(); }
  /// What the posterior has learned (posterior_diagnostics.hpp), as a dict; the same numbers as
  /// `blr train --verbose` and the JSON history.
  py::object posterior_diagnostics() {
    mean_field();  // a sentence for an optimizer without a mean-field posterior
    const auto d = ::blr::torch::posterior_diagnostics(*optimizer_, entry_->name);
    return py::module_::import("json").attr("loads")(d->to_json().dump());
  }
  void set_fused_kernels(bool fused) { mean_field().set_fused_kernels(fused); }
  void set_prior(const Tensors& means, const Tensors& precisions) {
    mean_field().set_prior(means, precisions);
  }
  void set_prior_from_posterior() { mean_field().set_prior_from_posterior(); }
  void clear_prior() { mean_field().clear_prior(); }

  /// Replaces the options of param group `g` (schedulers and users edit the Python dicts).
  void set_group_options(size_t g, const py::dict& options) {
    auto& groups = optimizer_->param_groups();
    check(g < groups.size(), fmt::format("Internal: no param group {}.", g));
    groups[g].set_options(make_options(options));
  }
  py::dict group_options(size_t g) const {
    const auto& groups = optimizer_->param_groups();
    check(g < groups.size(), fmt::format("Internal: no param group {}.", g));
    py::dict out;
    for (const auto& [key, value] : entry_->group_options.read(groups[g].options())) {
      out[py::str(key)] = to_python(value);
    }
    return out;
  }
  void add_param_group(const Tensors& params, const py::dict& options) {
    ::torch::optim::OptimizerParamGroup group(params, make_options(options));
    if (mean_field_ != nullptr) {
      mean_field_->add_param_group(group);  // keeps the group's own options (see mean_field.hpp)
    } else {
      optimizer_->add_param_group(group);
    }
  }

  /// The state (step counters, noise draws, per-parameter averages) as the bytes of a LibTorch
  /// archive: what C++ checkpoints hold, so Python and C++ states are one format.
  py::bytes state_bytes() const {
    ::torch::serialize::OutputArchive archive;
    optimizer_->save(archive);
    std::ostringstream out;
    archive.save_to(out);
    return py::bytes(out.str());
  }
  void load_state_bytes(const std::string& bytes) {
    ::torch::serialize::InputArchive archive;
    std::istringstream in(bytes);
    try {
      archive.load_from(in);
    } catch (const c10::Error&) {
      throw Error(fmt::format("The {} state in this state dict is not a LibTorch archive (corrupt "
                              "or from another program).",
                              entry_->options->owner()));
    }
    optimizer_->load(archive);
  }

 private:
  std::unique_ptr<::torch::optim::OptimizerOptions> make_options(const py::dict& options) const {
    return entry_->group_options.make(to_option_values(options), {});
  }
  VariationalOptimizer& variational() const {
    check(variational_ != nullptr,
          fmt::format("{} is a point estimate: it has no posterior to sample.",
                      entry_->options->owner()));
    return *variational_;
  }
  MeanFieldOptimizer& mean_field() const {
    check(mean_field_ != nullptr,
          fmt::format("{} is not a Gaussian mean-field optimizer: it has no step counter, curvature "
                      "or precision to read.",
                      entry_->options->owner()));
    return *mean_field_;
  }

  const OptimizerEntry* entry_;
  std::unique_ptr<::torch::optim::Optimizer> optimizer_;
  VariationalOptimizer* variational_ = nullptr;
  MeanFieldOptimizer* mean_field_ = nullptr;
};

py::dict option_info(const OptionInfo& info) {
  py::dict d;
  d["key"] = info.key;
  d["type"] = std::string(type_name(info.type));
  d["default"] = to_python(info.default_value);
  d["range"] = (info.type == OptionType::kNumber || info.type == OptionType::kInteger)
                   ? py::object(py::str(info.range.describe()))
                   : py::object(py::none());
  d["choices"] = info.choices;
  d["help"] = info.help;
  d["scope"] = info.scope == OptionScope::kGroup ? "group" : "optimizer";
  d["required"] = info.required;
  d["default_from_training_set_size"] = info.default_from == DefaultFrom::kTrainingSetSize;
  return d;
}

}  // namespace

void bind_optimizers(py::module_& m) {
  m.def(
      "optimizers",
      [] {
        py::list out;
        for (const auto& e : ::blr::torch::optimizers()) {
          if (!e.trains || !e.group_options) continue;
          py::dict d;
          d["name"] = e.name;
          d["owner"] = e.options->owner();
          d["summary"] = e.summary;
          d["variational"] = e.variational;
          py::list options;
          for (const auto& info : e.options->options()) options.append(option_info(info));
          d["options"] = options;
          out.append(d);
        }
        return out;
      },
      "Every optimizer of the registry that Python can build, with its option table.");
  m.def(
      "recipes",
      [] {
        py::list out;
        for (const auto& r : ::blr::torch::recipes()) {
          py::dict d;
          d["name"] = r.name;
          d["summary"] = r.summary;
          d["schedule"] = r.schedule;
          d["warmup_share"] = r.warmup_share;
          d["grad_clip"] = r.grad_clip;
          d["schedule_source"] = r.schedule_source;
          d["notes"] = r.notes;
          py::list optimizers;
          for (const auto& o : r.optimizers) {
            py::dict options;
            for (const auto& [key, value] : o.options) options[py::str(key)] = to_python(value);
            py::dict entry;
            entry["optimizer"] = o.optimizer;
            entry["options"] = options;
            entry["source"] = o.source;
            optimizers.append(entry);
          }
          d["optimizers"] = optimizers;
          out.append(d);
        }
        return out;
      },
      "Every recipe (train/recipe.hpp): the published settings of a kind of task, per optimizer.");
  m.def(
      "check_options",
      [](const std::string& name, const py::dict& options) {
        ::blr::torch::check_options(python_entry(name).name, to_option_values(options));
      },
      "Checks keyword options against an optimizer's table (blr.Error naming the first bad one).");

  using Release = py::call_guard<py::gil_scoped_release>;
  py::class_<PyOptimizer>(m, "Optimizer", "One C++ optimizer of the registry (see blr.optim).")
      .def(py::init<const std::string&, const std::vector<Tensors>&, const std::vector<py::dict>&,
                    const py::dict&>(),
           py::arg("name"), py::arg("groups"), py::arg("group_options"), py::arg("defaults"))
      .def("sample", &PyOptimizer::sample, py::arg("train"), py::arg("standard_normal") = py::none(),
           Release())
      .def("restore", &PyOptimizer::restore, Release())
      .def("discard", &PyOptimizer::discard, Release())
      .def("step", &PyOptimizer::step, Release())
      .def_property_readonly("variational", &PyOptimizer::is_variational)
      .def_property_readonly("sampled", &PyOptimizer::sampled)
      .def_property_readonly("has_posterior", &PyOptimizer::has_posterior)
      .def_property_readonly("training_samples", &PyOptimizer::training_samples)
      .def_property_readonly("needs_squared_gradients", &PyOptimizer::needs_squared_gradients)
      .def_property_readonly("step_count", &PyOptimizer::step_count)
      .def("add_squared_gradients", &PyOptimizer::add_squared_gradients, Release())
      .def("posterior_variance", &PyOptimizer::posterior_variance)
      .def("posterior_precision", &PyOptimizer::posterior_precision)
      .def("curvature", &PyOptimizer::curvature)
      .def("momentum", &PyOptimizer::momentum)
      .def("posterior_diagnostics", &PyOptimizer::posterior_diagnostics)
      .def("set_fused_kernels", &PyOptimizer::set_fused_kernels)
      .def("set_prior", &PyOptimizer::set_prior)
      .def("set_prior_from_posterior", &PyOptimizer::set_prior_from_posterior)
      .def("clear_prior", &PyOptimizer::clear_prior)
      .def("set_group_options", &PyOptimizer::set_group_options)
      .def("group_options", &PyOptimizer::group_options)
      .def("add_param_group", &PyOptimizer::add_param_group)
      .def("state_bytes", &PyOptimizer::state_bytes)
      .def("load_state_bytes", &PyOptimizer::load_state_bytes);
}

}  // namespace blr::python
