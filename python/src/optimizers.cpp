// The registry's optimizers for Python: `_blr.Optimizer` owns one C++ optimizer built by name
// from the registry over the Python parameters themselves (the same tensors, not copies: sampling
// writes θ into them and restoring puts μ back, as in C++). python/blr/optim.py wraps it in a
// torch.optim.Optimizer subclass per registry entry; this file forwards, after checking what the
// C++ optimizers assume of their parameters and inputs. The GIL is released during sampling,
// restoring and the step (the fused passes run on LibTorch's threads).
//
// Python code can change a parameter behind the optimizer's back (`p.data = t` replaces the
// tensor's storage, size, dtype and device in place), while the C++ state was made for the
// parameter as it was: every entry that touches that state first compares each parameter's size,
// dtype, device and layout with those it had when it joined the optimizer (a comparison per
// parameter, no copies) and refuses a change with one sentence; inside a sample, the sample is
// discarded first so the optimizer stays usable. A state coming back through load_state_dict is
// read behind a checkpoint's defences (blr/torch/optim/state_bytes.hpp).
#include <nlohmann/json.hpp>
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/utils/tensor_dtypes.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fmt/ostream.h>

#include <cmath>
#include <optional>
#include <sstream>

#include "bindings.hpp"
#include "blr/torch/train/recipe.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/distributed/communicator.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/optim/capabilities.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/state_bytes.hpp"
#include "blr/torch/posterior/diagnostics.hpp"

namespace blr::python {

namespace {

using ::blr::torch::DataParallelStatistics;
using ::blr::torch::DiagonalGaussianPosterior;
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

/// What the C++ state of a parameter was made for: its size, dtype, device and layout.
struct ParameterLayout {
  std::vector<int64_t> sizes;
  ::at::ScalarType dtype;
  ::at::Device device;
  ::at::Layout layout;

  explicit ParameterLayout(const ::at::Tensor& p)
      : sizes(p.sizes().vec()), dtype(p.scalar_type()), device(p.device()), layout(p.layout()) {}
  bool matches(const ::at::Tensor& p) const {
    return p.defined() && p.sizes() == ::at::IntArrayRef(sizes) && p.scalar_type() == dtype &&
           p.device() == device && p.layout() == layout;
  }
};

/// "size [3] (torch.float32, cpu)" of a recorded layout.
std::string describe_layout(::at::IntArrayRef sizes, ::at::ScalarType dtype,
                            const ::at::Device& device, ::at::Layout layout) {
  std::string shape = "[";
  for (size_t k = 0; k < sizes.size(); ++k) shape += (k ? ", " : "") + std::to_string(sizes[k]);
  shape += "]";
  std::string layout_name;
  if (layout != ::at::kStrided) layout_name = fmt::format(", {}", fmt::streamed(layout));
  return fmt::format("size {} (torch.{}, {}{})", shape, ::torch::utils::getDtypeNames(dtype).first,
                     device.str(), layout_name);
}

/// The same of a tensor.
std::string describe_tensor(const ::at::Tensor& t) {
  return t.defined() ? describe_layout(t.sizes(), t.scalar_type(), t.device(), t.layout())
                     : "nothing (undefined)";
}

// A Communicator (blr/torch/distributed/communicator.hpp) over a Python function that sums a list
// of tensors in place over the processes (torch.distributed.all_reduce in blr.optim): what
// sync=True needs, the ivon package's multi-process training.
class PythonCommunicator final : public ::blr::torch::distributed::Communicator {
 public:
  PythonCommunicator(py::function all_reduce, int rank, int world)
      : all_reduce_(std::move(all_reduce)), rank_(rank), world_(world) {}
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  void sum(const std::vector<::at::Tensor>& tensors, double weight) override {
    if (weight != 1.0) {
      for (const auto& t : tensors) t.mul_(weight);
    }
    all_reduce_(tensors);
  }
  void barrier() override { all_reduce_(std::vector<::at::Tensor>{}); }

 private:
  py::function all_reduce_;
  int rank_, world_;
};

class PyOptimizer {
 public:
  PyOptimizer(const std::string& name, const std::vector<Tensors>& groups,
              const std::vector<py::dict>& group_options, const py::dict& defaults)
      : entry_(&python_entry(name)) {
    check(groups.size() == group_options.size(), "Internal: one options dict per param group.");
    std::vector<::torch::optim::OptimizerParamGroup> param_groups;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (size_t i = 0; i < groups[g].size(); ++i) check_parameter(groups[g][i], g, i);
      param_groups.emplace_back(groups[g], make_options(group_options[g]));
    }
    optimizer_ = entry_->make(std::move(param_groups), to_option_values(defaults), {});
    variational_ = dynamic_cast<VariationalOptimizer*>(optimizer_.get());
    diagonal_ = ::blr::torch::capability<DiagonalGaussianPosterior>(*optimizer_);
    for (const auto& group : optimizer_->param_groups()) record_layouts(group.params());
  }

  void sample(bool train, const std::optional<Tensors>& standard_normal) {
    VariationalOptimizer& v = variational();
    check_layouts();
    train_sample_ = train;
    if (standard_normal) {
      auto* gaussian = ::blr::torch::capability<::blr::torch::GaussianPosterior>(*optimizer_);
      check(gaussian != nullptr,
            fmt::format("{} takes no given noise: only the Gaussian posteriors ({}) take "
                        "standard-normal draws.",
                        entry_->options->owner(),
                        fmt::join(::blr::torch::optimizer_names_with(
                                      &::blr::torch::OptimizerEntry::gaussian_posterior),
                                  ", ")));
      gaussian->sample_given_noise(train, *standard_normal);
    } else {
      v.sample_parameters(train);
    }
  }
  void restore() {
    VariationalOptimizer& v = variational();
    check_layouts_in_sample(/*gradients=*/v.sampled() && train_sample_);
    v.restore_parameters();
  }
  void discard() {
    VariationalOptimizer& v = variational();
    check_layouts_in_sample(/*gradients=*/false);
    v.discard_sample();
  }
  void step() {
    check_layouts(/*gradients=*/true);
    optimizer_->step();
  }
  /// sync=True: this process draws the noise that rank `rank` of `world` draws in blr's
  /// data-parallel runs (DataParallelStatistics::set_noise_shard).
  void set_noise_shard(int rank, int world) {
    check(world >= 1 && rank >= 0 && rank < world,
          fmt::format("The rank must lie in [0, world size); got rank {} of {}.", rank, world));
    statistics().set_noise_shard(rank, world);
  }
  /// sync=True, before step(): the step's gradient and curvature sums all-reduced over the
  /// processes by `all_reduce` (a Python function summing a list of tensors in place over the
  /// ranks, e.g. with torch.distributed), this process's weighted by `weight`.
  void reduce_statistics(const py::function& all_reduce, int rank, int world, double weight) {
    PythonCommunicator communicator(all_reduce, rank, world);
    statistics().reduce_statistics(communicator, weight);
  }

  bool is_variational() const { return variational_ != nullptr; }
  bool sampled() const { return variational_ != nullptr && variational_->sampled(); }
  bool has_posterior() const { return variational_ != nullptr && variational_->has_posterior(); }
  int training_samples() const { return ::blr::torch::training_samples(*optimizer_); }
  bool needs_squared_gradients() const {
    return variational_ != nullptr && variational_->needs_squared_gradients();
  }
  void add_squared_gradients(const Tensors& squared) {
    VariationalOptimizer& v = variational();
    check_layouts_in_sample(/*gradients=*/false);
    if (v.needs_squared_gradients()) check_squared_gradients(squared);
    v.add_squared_gradients(squared);
  }
  /// loss.backward(), and the per-example curvature statistic this optimizer needs, read off the
  /// autograd graph by the engine of the C++ trainer (curvature/squared_gradients.hpp,
  /// curvature/kronecker_factors.hpp): K-FAC's Kronecker factors, VOGN/OGN's per-example squared
  /// gradients; for the others a plain backward. `examples` is the minibatch size M of the mean
  /// loss. Inside a training sample only, like add_squared_gradients.
  void backward(const ::at::Tensor& loss, int64_t examples) {
    check(loss.defined() && loss.numel() == 1 && loss.requires_grad(),
          fmt::format("{}: backward() takes the minibatch's mean loss, a scalar with a gradient.",
                      entry_->options->owner()));
    check(examples >= 1, fmt::format("{}: the number of examples in the minibatch must be ≥ 1; "
                                     "got {}.",
                                     entry_->options->owner(), examples));
    auto* factors = dynamic_cast<::blr::torch::KroneckerCurvatureInput*>(optimizer_.get());
    if (factors == nullptr && !needs_squared_gradients()) {
      py::gil_scoped_release release;
      loss.backward();
      return;
    }
    VariationalOptimizer& v = variational();
    check(v.sampled() && train_sample_,
          fmt::format("{}: backward() collects a training sample's curvature; call it inside "
                      "sampled_params(train=True).",
                      entry_->options->owner()));
    check_layouts_in_sample(/*gradients=*/false);
    ::blr::torch::NamedParameters named;
    const auto& groups = optimizer_->param_groups();
    for (size_t g = 0; g < groups.size(); ++g) {
      for (size_t i = 0; i < groups[g].params().size(); ++i) {
        named.emplace_back(fmt::format("param_groups[{}]['params'][{}]", g, i),
                           groups[g].params()[i]);
      }
    }
    py::gil_scoped_release release;
    if (factors != nullptr && !factors->wants_curvature()) {
      loss.backward();  // K-FAC between its curvature updates (curvature_interval)
    } else if (factors != nullptr) {
      factors->add_curvature(
          ::blr::torch::backward_with_kronecker_factors(loss, named, examples));
    } else {
      v.add_squared_gradients(::blr::torch::backward_with_squared_gradients(loss, named, examples));
    }
  }
  int64_t step_count() const { return diagonal().step_count(); }

  Tensors posterior_variance() {
    check_layouts();
    return variational().posterior_variance();
  }
  Tensors posterior_precision() {
    check_layouts();
    return diagonal().posterior_precision();
  }
  Tensors curvature() {
    check_layouts();
    return diagonal().curvature();
  }
  Tensors momentum() {
    check_layouts();
    return diagonal().momentum();
  }
  /// What the posterior has learned (posterior/diagnostics.hpp), as a dict; the same numbers as
  /// `blr train --verbose` and the JSON history.
  py::object posterior_diagnostics() {
    diagonal();  // a sentence for an optimizer without a mean-field posterior
    check_layouts();
    const auto d = ::blr::torch::posterior_diagnostics(*optimizer_, entry_->name);
    return py::module_::import("json").attr("loads")(d->to_json().dump());
  }
  void set_fused_kernels(bool fused) {
    auto* fused_switch = ::blr::torch::capability<::blr::torch::FusedKernelsSwitch>(*optimizer_);
    check(fused_switch != nullptr, fmt::format("{} has no fused CPU passes to switch off.",
                                               entry_->options->owner()));
    fused_switch->set_fused_kernels(fused);
  }
  void set_prior(const Tensors& means, const Tensors& precisions) {
    check_layouts();
    diagonal().set_prior(means, precisions);
  }
  void set_prior_from_posterior() {
    check_layouts();
    diagonal().set_prior_from_posterior();
  }
  void clear_prior() { diagonal().clear_prior(); }

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
    check(!sampled(),
          fmt::format("{}: add_param_group() was called while the parameters hold a sample "
                      "(inside sampled_params()); add param groups between steps.",
                      entry_->options->owner()));
    check_layouts();
    const size_t g = optimizer_->param_groups().size();
    for (size_t i = 0; i < params.size(); ++i) check_parameter(params[i], g, i);
    ::torch::optim::OptimizerParamGroup group(params, make_options(options));
    if (auto* keeper = ::blr::torch::capability<::blr::torch::ParamGroupOptionsKept>(*optimizer_)) {
      keeper->add_param_group_keeping_options(group);  // see capabilities.hpp
    } else {
      optimizer_->add_param_group(group);
    }
    record_layouts(optimizer_->param_groups().back().params());
  }

  /// The state (step counters, noise draws, per-parameter averages) as the bytes of a LibTorch
  /// archive: what C++ checkpoints hold, so Python and C++ states are one format.
  py::bytes state_bytes() const {
    check_layouts();
    return py::bytes(::blr::torch::save_optimizer_state(*optimizer_));
  }
  /// Replaces the curvature (IVON's h, VOGN's s) and the gradient average of every parameter
  /// (param-group order, each with its parameter's shape), and with `step` the step counter: the
  /// ivon package's param_groups "hess" and "momentum" (python/blr/optim.py). Written as a
  /// version-1 archive of the mean-field state (curvature and momentum per parameter, which
  /// MeanFieldOptimizer::load converts to its precision P with the groups' current options; the
  /// layout of src/torch/optim/mean_field.cpp's save and load) and loaded with load(), so the
  /// load's checks of shapes and values apply. The noise-draw counter is kept.
  void set_curvature_and_momentum(const Tensors& curvature, const Tensors& momentum,
                                  std::optional<int64_t> step) {
    DiagonalGaussianPosterior& mf = diagonal();
    check_layouts();
    const std::string owner = entry_->options->owner();
    check(!sampled(), fmt::format("{}: the curvature and momentum cannot be set while the "
                                     "parameters hold a sample (inside sampled_params()).",
                                     owner));
    check(!mf.has_prior(), fmt::format("{}: the curvature and momentum cannot be set while a prior "
                                       "of its own is set (call clear_prior() first).",
                                       owner));
    std::string current;
    try {
      current = ::blr::torch::save_optimizer_state(*optimizer_);
    } catch (const Error&) {
      throw Error(fmt::format("{}: the curvature and momentum can be set only between steps (samples "
                              "were collected since the last step).",
                              owner));
    }
    ::torch::serialize::InputArchive old;
    old.load_from(current.data(), current.size(), ::at::Device(::at::kCPU));
    c10::IValue draws, old_step, archive_name;
    old.read("blr/draws", draws);
    old.read("blr/step", old_step);
    old.read("blr/optimizer", archive_name);
    const auto& groups = optimizer_->param_groups();
    size_t count = 0;
    for (const auto& group : groups) count += group.params().size();
    check(curvature.size() == count && momentum.size() == count,
          fmt::format("{}: give one curvature and one momentum tensor per parameter ({}); got {} "
                      "and {}.",
                      owner, count, curvature.size(), momentum.size()));
    check(!step || *step >= 0,
          fmt::format("{}: the step counter cannot be negative (got {}).", owner, step.value_or(0)));
    ::torch::serialize::OutputArchive archive;
    archive.write("blr/format_version", c10::IValue(int64_t{1}));
    archive.write("blr/optimizer", archive_name);
    archive.write("blr/step", step ? c10::IValue(*step) : old_step);
    archive.write("blr/draws", draws);
    archive.write("blr/groups", c10::IValue(static_cast<int64_t>(groups.size())));
    size_t k = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      archive.write(fmt::format("group{}/lr", g), c10::IValue(groups[g].options().get_lr()));
      archive.write(fmt::format("group{}/params", g),
                    c10::IValue(static_cast<int64_t>(groups[g].params().size())));
      for (size_t i = 0; i < groups[g].params().size(); ++i, ++k) {
        const ::at::Tensor& p = groups[g].params()[i];
        for (const ::at::Tensor* t : {&curvature[k], &momentum[k]}) {
          check(t->defined() && t->layout() == ::at::kStrided && t->sizes() == p.sizes() &&
                    ::at::isFloatingType(t->scalar_type()),
                fmt::format("{}: the curvature and momentum of parameter {} in param group {} must "
                            "be dense floating-point tensors of its {}; got {}.",
                            owner, i, g, describe_tensor(p), describe_tensor(*t)));
        }
        ::at::NoGradGuard no_grad;
        archive.write(fmt::format("group{}/param{}/curvature", g, i),
                      curvature[k].detach().to(::at::kCPU).clone());
        archive.write(fmt::format("group{}/param{}/momentum", g, i),
                      momentum[k].detach().to(::at::kCPU).clone());
      }
    }
    std::ostringstream out;
    archive.save_to(out);
    const std::string bytes = out.str();
    ::torch::serialize::InputArchive in;
    in.load_from(bytes.data(), bytes.size(), ::at::Device(::at::kCPU));
    optimizer_->load(in);
  }
  void load_state_bytes(const std::string& bytes) {
    check_layouts();
    ::blr::torch::load_optimizer_state(
        *optimizer_, bytes,
        fmt::format("The {} state in this state dict", entry_->options->owner()));
  }

 private:
  std::unique_ptr<::torch::optim::OptimizerOptions> make_options(const py::dict& options) const {
    return entry_->group_options.make(to_option_values(options), {});
  }
  /// What every C++ optimizer takes as a parameter: a dense (strided) floating-point tensor.
  void check_parameter(const ::at::Tensor& p, size_t g, size_t i) const {
    check(p.defined() && p.layout() == ::at::kStrided && ::at::isFloatingType(p.scalar_type()),
          fmt::format("{}: parameter {} of param group {} is {}; the optimizer takes dense "
                      "floating-point tensors.",
                      entry_->options->owner(), i, g,
                      p.defined() ? "a tensor of " + describe_tensor(p) : "undefined"));
  }

  void record_layouts(const Tensors& params) {
    std::vector<ParameterLayout> group;
    for (const auto& p : params) group.emplace_back(p);
    layouts_.push_back(std::move(group));
  }

  /// The sentence for parameter i of group g, which no longer matches its recorded layout, or ""
  /// when it does (and, with `gradients`, its gradient has its size and is dense).
  std::string layout_problem(size_t g, size_t i, bool gradients) const {
    const ::at::Tensor& p = optimizer_->param_groups()[g].params()[i];
    const ParameterLayout& l = layouts_[g][i];
    const std::string owner = entry_->options->owner();
    if (!l.matches(p)) {
      return fmt::format(
          "{} holds its state of parameter {} in param group {} for a tensor of {}, but the "
          "parameter is now a tensor of {}: a parameter's .data cannot be replaced by a tensor of "
          "another size, dtype or device while an optimizer holds it (build a new optimizer for "
          "the new parameters).",
          owner, i, g, describe_layout(l.sizes, l.dtype, l.device, l.layout), describe_tensor(p));
    }
    if (gradients && p.grad().defined()) {
      const ::at::Tensor& grad = p.grad();
      if (grad.layout() != ::at::kStrided) {
        return fmt::format(
            "{}: parameter {} in param group {} has a sparse gradient; the optimizer takes dense "
            "gradients (e.g. torch.nn.Embedding(sparse=False)).",
            owner, i, g);
      }
      if (grad.sizes() != p.sizes()) {
        return fmt::format(
            "{}: the gradient of parameter {} in param group {} has {}, but the parameter has "
            "{}.",
            owner, i, g, describe_tensor(grad), describe_tensor(p));
      }
    }
    return {};
  }

  /// Refuses, with the first mismatch's sentence, when a parameter (or with `gradients` its
  /// gradient) is no longer what the C++ state was made for.
  void check_layouts(bool gradients = false) const {
    const auto& groups = optimizer_->param_groups();
    check(groups.size() == layouts_.size(),
          "Internal: the param groups changed without add_param_group().");
    for (size_t g = 0; g < groups.size(); ++g) {
      for (size_t i = 0; i < groups[g].params().size(); ++i) {
        const std::string problem = layout_problem(g, i, gradients);
        if (!problem.empty()) throw Error(problem);
      }
    }
  }

  /// check_layouts() while a sample may be held: on a mismatch the parameters that changed get a
  /// buffer of their recorded layout back, the sample is discarded (μ restored, nothing
  /// collected), and then the mismatch is refused, so that the optimizer stays usable.
  void check_layouts_in_sample(bool gradients) {
    std::string problem;
    const auto& groups = optimizer_->param_groups();
    for (size_t g = 0; g < groups.size() && problem.empty(); ++g) {
      for (size_t i = 0; i < groups[g].params().size() && problem.empty(); ++i) {
        problem = layout_problem(g, i, gradients);
      }
    }
    if (problem.empty()) return;
    if (sampled()) {
      ::at::NoGradGuard no_grad;
      for (size_t g = 0; g < groups.size(); ++g) {
        for (size_t i = 0; i < groups[g].params().size(); ++i) {
          ::at::Tensor p = groups[g].params()[i];
          const ParameterLayout& l = layouts_[g][i];
          if (!l.matches(p)) {
            p.set_data(::at::zeros(l.sizes, ::at::TensorOptions().dtype(l.dtype).device(l.device)));
          }
        }
      }
      variational_->discard_sample();
      problem += " The sample was discarded.";
    }
    throw Error(problem);
  }

  /// VOGN and OGN's squared gradients: finite and not negative (a negative one would make the
  /// posterior variance negative).
  void check_squared_gradients(const Tensors& squared) const {
    for (size_t j = 0; j < squared.size(); ++j) {
      const ::at::Tensor& sq = squared[j];
      if (!sq.defined()) continue;
      check(sq.layout() == ::at::kStrided && (::at::isFloatingType(sq.scalar_type()) ||
                                               ::at::isIntegralType(sq.scalar_type(), false)),
            fmt::format("{}: squared gradient {} is a tensor of {}; give dense real tensors.",
                        entry_->options->owner(), j, describe_tensor(sq)));
      if (sq.numel() == 0) continue;
      ::at::NoGradGuard no_grad;
      const auto [low, high] = ::at::aminmax(sq.detach());
      const double lowest = low.item<double>(), highest = high.item<double>();
      check(std::isfinite(lowest) && std::isfinite(highest),
            fmt::format("{}: squared gradient {} holds a value that is not finite (NaN or inf).",
                        entry_->options->owner(), j));
      check(lowest >= 0.0,
            fmt::format("{}: squared gradient {} holds a negative value ({:g}); squared gradients "
                        "are never negative.",
                        entry_->options->owner(), j, lowest));
    }
  }

  VariationalOptimizer& variational() const {
    check(variational_ != nullptr,
          fmt::format("{} is a point estimate: it has no posterior to sample.",
                      entry_->options->owner()));
    return *variational_;
  }
  DataParallelStatistics& statistics() const {
    auto* statistics = ::blr::torch::capability<DataParallelStatistics>(*optimizer_);
    check(statistics != nullptr,
          fmt::format("{} does not all-reduce its statistics: only {} do (and the point "
                      "estimates, through their gradients).",
                      entry_->options->owner(),
                      fmt::join(::blr::torch::optimizer_names_with(
                                    &::blr::torch::OptimizerEntry::data_parallel_statistics),
                                ", ")));
    return *statistics;
  }
  DiagonalGaussianPosterior& diagonal() const {
    check(diagonal_ != nullptr,
          fmt::format("{} is not a Gaussian mean-field optimizer: it has no step counter, curvature "
                      "or precision to read.",
                      entry_->options->owner()));
    return *diagonal_;
  }

  const OptimizerEntry* entry_;
  std::unique_ptr<::torch::optim::Optimizer> optimizer_;
  VariationalOptimizer* variational_ = nullptr;
  DiagonalGaussianPosterior* diagonal_ = nullptr;
  std::vector<std::vector<ParameterLayout>> layouts_;  ///< per group and parameter, as it joined
  bool train_sample_ = false;  ///< the current (or last) sample collects gradients
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
      .def("set_noise_shard", &PyOptimizer::set_noise_shard, py::arg("rank"), py::arg("world"))
      .def("reduce_statistics", &PyOptimizer::reduce_statistics, py::arg("all_reduce"),
           py::arg("rank"), py::arg("world"), py::arg("weight") = 1.0)
      .def_property_readonly("variational", &PyOptimizer::is_variational)
      .def_property_readonly("sampled", &PyOptimizer::sampled)
      .def_property_readonly("has_posterior", &PyOptimizer::has_posterior)
      .def_property_readonly("training_samples", &PyOptimizer::training_samples)
      .def_property_readonly("needs_squared_gradients", &PyOptimizer::needs_squared_gradients)
      .def_property_readonly("step_count", &PyOptimizer::step_count)
      .def("add_squared_gradients", &PyOptimizer::add_squared_gradients, Release())
      .def("backward", &PyOptimizer::backward, py::arg("loss"), py::arg("examples"))
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
      .def("load_state_bytes", &PyOptimizer::load_state_bytes)
      .def("set_curvature_and_momentum", &PyOptimizer::set_curvature_and_momentum,
           py::arg("curvature"), py::arg("momentum"), py::arg("step") = py::none());
}

}  // namespace blr::python
