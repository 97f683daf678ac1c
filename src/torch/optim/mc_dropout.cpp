// MC dropout as the BLR (mc_dropout.hpp): masks, the slab estimate, the core's Adam policy as the
// step, saving and registration.
#include "blr/torch/optim/mc_dropout.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/archive.h>

#include <cmath>

#include "blr/algorithms/rmsprop_adam.hpp"
#include "blr/core/error.hpp"
#include "blr/rule/policy.hpp"
#include "blr/torch/optim/registry.hpp"
#include "noise_seed_option.hpp"
#include "tensor_value.hpp"
#include "state_archive.hpp"

namespace blr::torch {

namespace {

/// Version 1: the versioned header (state_archive.hpp); unversioned states still load.
constexpr int64_t kMcDropoutFormatVersion = 1;

}  // namespace

using detail::param_key;
using detail::shape_string;

namespace {

bool has_units(const ::at::Tensor& param) { return param.dim() >= 2; }

/// π₁ as a 0-dimensional tensor of the mean's type and device, for mul_out (W = π₁·m in place).
::at::Tensor keep_scalar(double keep, const ::at::Tensor& mean) {
  return ::at::scalar_tensor(keep, mean.options());
}

}  // namespace

const OptionTable<McDropoutOptions>& McDropoutOptions::table() {
  using O = McDropoutOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("MC dropout")
          .number("lr", &O::lr, Range::positive(), "learning rate α")
          .number("keep_probability", &O::keep_probability, Range::between(0.0, 1.0, true, false),
                  "probability π₁ that an input unit is kept", OptionScope::kOptimizer)
          .number("input_keep_probability", &O::input_keep_probability,
                  Range::between(0.0, 1.0, true, false),
                  "probability that a unit of the model's input (the first weight's) is kept; 1 "
                  "keeps the data whole",
                  OptionScope::kOptimizer)
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "gradient average factor β₁")
          .number("beta2", &O::beta2, Range::between(0.0, 1.0, false, true),
                  "squared-gradient average factor β₂")
          .number("eps", &O::eps, Range::positive(), "denominator offset ε")
          .integer("mc_samples", &O::mc_samples, Range::between(1, 1e6),
                   "dropout masks per step", OptionScope::kOptimizer));
  return t;
}

McDropout::McDropout(std::vector<::torch::optim::OptimizerParamGroup> param_groups,
                     Options defaults)
    : VariationalOptimizer(param_groups, std::make_unique<Options>(defaults)),
      generator_(::at::make_generator<::at::CPUGeneratorImpl>(defaults.seed)) {
  for (size_t g = 0; g < param_groups.size(); ++g) {
    if (param_groups[g].has_options()) param_groups_[g].set_options(param_groups[g].options().clone());
  }
  validate();
  ensure_slots();
}

McDropout::McDropout(std::vector<::at::Tensor> params, Options defaults)
    : McDropout(std::vector<::torch::optim::OptimizerParamGroup>{
                    ::torch::optim::OptimizerParamGroup(std::move(params))},
                std::move(defaults)) {}

const McDropoutOptions& McDropout::options(size_t group) const {
  return group_options_as<Options>(param_groups_.at(group), group, name());
}

void McDropout::validate() const { validate_groups(param_groups_, options(), name()); }

double McDropout::keep_of(size_t group, size_t index) const {
  const Options& o = options(group);
  return std::pair{group, index} == input_weight_ ? o.input_keep_probability : o.keep_probability;
}

void McDropout::ensure_slots() {
  ::at::NoGradGuard no_grad;
  slots_.resize(param_groups_.size());
  input_weight_ = {SIZE_MAX, SIZE_MAX};
  for (size_t g = 0; g < param_groups_.size() && input_weight_.first == SIZE_MAX; ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      if (has_units(params[i])) {
        input_weight_ = {g, i};
        break;
      }
    }
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    slots_[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      if (s.mean.defined()) continue;
      const double keep = keep_of(g, i);
      // The model's initial weights are the slab means; at rest the parameter is E_q = π₁·m.
      s.mean = params[i].detach().clone();
      s.average = ::at::zeros_like(s.mean);
      s.precision = ::at::zeros_like(s.mean);  // Adam's s₀ = 0
      if (has_units(params[i])) params[i].mul_(keep);
    }
  }
}

::at::Tensor McDropout::unit_mask(const ::at::Tensor& z, const ::at::Tensor& param) {
  std::vector<int64_t> shape(static_cast<size_t>(param.dim()), 1);
  shape[1] = param.size(1);
  return z.view(shape);
}

void McDropout::sample_parameters(bool train) {
  train_sample_ = train;
  sample(nullptr);
}

void McDropout::sample_parameters(bool train, const std::vector<::at::Tensor>& masks) {
  train_sample_ = train;
  sample(&masks);
}

void McDropout::sample(const std::vector<::at::Tensor>* masks) {
  check(!sampled_, fmt::format("{}: sample_parameters() was called twice without "
                               "restore_parameters() in between.",
                               name()));
  ensure_slots();
  ::at::NoGradGuard no_grad;
  size_t j = 0, total = 0;
  for (const auto& group : param_groups_) total += group.params().size();
  check(masks == nullptr || masks->size() == total,
        fmt::format("{}: {} masks were given for {} parameters.", name(),
                    masks == nullptr ? 0 : masks->size(), total));
  // Every mask first (a given one checked), so that a refused mask leaves the parameters as they were.
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      if (!has_units(params[i])) continue;
      Slot& s = slots_[g][i];
      const int64_t units = params[i].size(1);
      if (masks != nullptr) {
        const ::at::Tensor& z = (*masks)[j];
        check(z.defined() && z.dim() == 1 && z.size(0) == units,
              fmt::format("{}: mask {} must have one entry per input unit ({}).", name(), j, units));
        s.mask = z.to(s.mean.options());
      } else {
        const auto keep_tensor = ::at::full({units}, keep_of(g, i), s.mean.options());
        s.mask = s.mean.is_cpu() ? ::at::bernoulli(keep_tensor, generator_) : ::at::bernoulli(keep_tensor);
      }
    }
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {  // W ← m⊙z, written in place (one pass)
      if (has_units(params[i]))
        ::at::mul_out(params[i], slots_[g][i].mean, unit_mask(slots_[g][i].mask, params[i]));
    }
  }
  sampled_ = true;
}

void McDropout::restore(bool collect) {
  check(sampled_, fmt::format("{}: restore_parameters() was called without a sample.", name()));
  ::at::NoGradGuard no_grad;
  collect = collect && train_sample_;
  const bool first = samples_ == 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      const bool units = has_units(params[i]);
      const double keep = keep_of(g, i);
      if (collect) {
        ::at::Tensor grad = params[i].grad().defined() ? params[i].grad().detach().to(s.mean.options())
                                                       : ::at::zeros_like(s.mean);
        // The slab's derivatives: ĝ = z⊙∇ℓ̄(θ̃)/π₁ and Ĥ = z⊙(∇ℓ̄)²/π₁ = ĝ⊙∇ℓ̄ (z² = z; z = 1
        // without units): one pass each, the mask scaled by 1/π₁ once per unit.
        ::at::Tensor g_hat = units ? grad * unit_mask(s.mask / keep, params[i]) : grad.clone();
        ::at::Tensor h_hat = g_hat * grad;
        if (first) {
          s.grad_sum = std::move(g_hat);
          s.curvature_sum = std::move(h_hat);
        } else {
          s.grad_sum.add_(g_hat);
          s.curvature_sum.add_(h_hat);
        }
      }
      if (units) ::at::mul_out(params[i], s.mean, keep_scalar(keep, s.mean));
    }
  }
  if (collect) ++samples_;
  sampled_ = false;
}

::at::Tensor McDropout::step(LossClosure closure) {
  check(!sampled_, fmt::format("{}: step() was called while the parameters hold a sample; "
                               "restore them first.",
                               name()));
  ::at::Tensor loss;
  if (closure) {
    double total = 0.0;
    const int samples = training_samples();
    for (int k = 0; k < samples; ++k) {
      SampledParameters sampled(*this, true);
      ::at::AutoGradMode grad_mode(true);
      total += closure().item<double>();
    }
    loss = ::at::scalar_tensor(total / samples, ::at::kDouble);
  }
  check(samples_ > 0,
        fmt::format("{}: step() needs at least one training sample since the last step: run "
                    "forward and backward inside SampledParameters(optimizer, true).",
                    name()));
  validate();
  ensure_slots();
  const long t = static_cast<long>(step_ + 1);
  const double inv = 1.0 / static_cast<double>(samples_);
  ::at::NoGradGuard no_grad;
  using V = detail::TensorValue;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Options& o = options(g);
    ::blr::AdamOptions adam;
    adam.lr = Schedule::constant(o.lr);
    adam.beta1 = o.beta1;
    adam.beta2 = o.beta2;
    adam.epsilon = o.eps;
    const AdamPolicy policy = make_adam(adam).policy;  // the core's Adam: one equation for both layers
    const stage::StepContext context{t, policy.mean_rate.at(t - 1), policy.precision_rate.at(t - 1),
                                     o.beta2};  // the weight of s: β₂ exactly
    const auto k = coefficients<double>(policy, context);
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      stage::Coordinate<V> c;
      c.gradient = V(samples_ == 1 ? s.grad_sum : s.grad_sum.mul(inv));
      c.curvature = V(samples_ == 1 ? s.curvature_sum : s.curvature_sum.mul(inv));
      c.mean = V(s.mean);
      c.precision = V(s.precision);
      c.average = V(s.average);
      coordinate_step<true>(k, c);
      if (!std::isfinite(c.new_mean.t.sum(::at::kDouble).item<double>())) {
        samples_ = 0;
        throw Error(fmt::format("{} step {} produced a non-finite value in parameter {} of param "
                                "group {} (learning rate too large, or NaN/Inf in the gradients?).",
                                name(), t, i, g));
      }
      s.mean = c.new_mean.t;
      s.precision = c.new_precision.t;
      s.average = c.new_average.t;
      if (has_units(params[i]))
        ::at::mul_out(params[i], s.mean, keep_scalar(keep_of(g, i), s.mean));
      else
        params[i].copy_(s.mean);
    }
  }
  step_ = t;
  samples_ = 0;
  return loss;
}

std::vector<::at::Tensor> McDropout::posterior_variance() {
  ensure_slots();
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      const Slot& s = slots_[g][i];
      const double keep = keep_of(g, i);
      out.push_back(has_units(params[i]) ? s.mean.square() * (keep * (1.0 - keep))
                                         : ::at::zeros_like(s.mean));
    }
  }
  return out;
}

std::vector<::at::Tensor> McDropout::slab_mean() const {
  std::vector<::at::Tensor> out;
  for (const auto& group : slots_) {
    for (const Slot& s : group) out.push_back(s.mean.clone());
  }
  return out;
}

void McDropout::save(::torch::serialize::OutputArchive& archive) const {
  check(!sampled_ && samples_ == 0,
        fmt::format("{}: the state can only be saved between steps (no sample pending).", name()));
  detail::write_state_header(archive, name(), kMcDropoutFormatVersion, step_, param_groups_);
  for (size_t g = 0; g < slots_.size(); ++g) {
    for (size_t i = 0; i < slots_[g].size(); ++i) {
      const Slot& s = slots_[g][i];
      archive.write(param_key(g, i, "mean"), s.mean);
      archive.write(param_key(g, i, "average"), s.average);
      archive.write(param_key(g, i, "precision"), s.precision);
    }
  }
  // The mask generator's state, so that a resumed run draws the masks the uninterrupted one
  // draws (a handle shares the generator; its mutex guards the read).
  ::at::Generator generator = generator_;
  std::lock_guard<std::mutex> lock(generator.mutex());
  archive.write("blr/mask_generator", generator.get_state());
}

void McDropout::load(::torch::serialize::InputArchive& archive) {
  check(!sampled_, fmt::format("{}: cannot load a state while the parameters hold a sample.", name()));
  c10::IValue value;
  if (archive.try_read("blr/format_version", value)) {
    detail::check_state_header(archive, name(), kMcDropoutFormatVersion, param_groups_);
  } else {
    // A state saved before the versioned header (2026-11-29): the name, step, learning rates and
    // slots, without the group and parameter counts.
    check(archive.try_read("blr/optimizer", value) && value.isString() &&
              value.toStringRef() == name(),
          fmt::format("The archive holds no {} optimizer state.", name()));
  }
  ensure_slots();
  auto slots = slots_;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      for (auto [key, tensor] : {std::pair{"mean", &slots[g][i].mean},
                                 std::pair{"average", &slots[g][i].average},
                                 std::pair{"precision", &slots[g][i].precision}}) {
        ::at::Tensor t;
        archive.read(param_key(g, i, key), t);
        check(t.sizes() == params[i].sizes() && std::isfinite(t.sum(::at::kDouble).item<double>()),
              fmt::format("The saved {} state of parameter {} in group {} has the wrong shape or "
                          "is not finite.",
                          name(), i, g));
        *tensor = t.to(params[i].options()).contiguous();
      }
    }
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    archive.read(fmt::format("group{}/lr", g), value);
    param_groups_[g].options().set_lr(value.toDouble());
  }
  archive.read("blr/step", value);
  step_ = value.toInt();
  // A state saved before the generator was kept (2026-11-29) leaves the generator as it is.
  ::at::Tensor generator_state;
  if (archive.try_read("blr/mask_generator", generator_state)) {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    try {
      generator_.set_state(generator_state);
    } catch (const c10::Error&) {
      throw Error(fmt::format("The saved {} state's mask generator is not a CPU generator's "
                              "state.",
                              name()));
    }
  }
  slots_ = std::move(slots);
  samples_ = 0;
  ::at::NoGradGuard no_grad;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      params[i].copy_(has_units(params[i]) ? slots_[g][i].mean * keep_of(g, i) : slots_[g][i].mean);
    }
  }
}

BLR_REGISTER_OPTIMIZER(McDropout, "mc-dropout",
                       "MC dropout as the BLR (Khan & Rue 2023, §4.3): a spike-and-slab posterior "
                       "per input unit, Adam's step on the slab, K dropout masks for prediction",
                       kDropout);

}  // namespace blr::torch
