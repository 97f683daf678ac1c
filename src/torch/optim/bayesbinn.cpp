// BayesBiNN for LibTorch (bayesbinn.hpp): sampling, restoring, stepping, saving and registration.
#include "blr/torch/optim/bayesbinn.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/archive.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "bernoulli_kernels.hpp"
#include "binary_sign.hpp"
#include "dispatch.hpp"
#include "blr/torch/optim/registry.hpp"
#include "all_finite.hpp"
#include "noise_seed_option.hpp"
#include "tensor_value.hpp"
#include "state_archive.hpp"

namespace blr::torch {

using detail::all_finite;
using detail::param_key;
using detail::shape_string;

namespace {

using detail::binary_sign;

// The fused passes (bernoulli_kernels.hpp), compute-bound by their tanh and log: one clone per
// instruction set and element type, as the Gaussian passes (kernels.hpp).
#define BLR_BAYESBINN_PASSES(T)                                                                 \
  BLR_CPU_CLONES void sample_chunk_of(const detail::RelaxedSampleArgs<T>& a, int64_t chunk,     \
                                      int64_t begin, int64_t end) {                             \
    detail::relaxed_sample_chunk(a, chunk, begin, end);                                         \
  }                                                                                             \
  BLR_CPU_CLONES void restore_chunk_of(const detail::RelaxedRestoreArgs<T>& a, int64_t begin,   \
                                       int64_t end) {                                           \
    detail::relaxed_restore_chunk(a, begin, end);                                               \
  }                                                                                             \
  BLR_CPU_CLONES int step_chunk_of(const detail::BernoulliStepArgs<T>& a, int64_t begin,        \
                                   int64_t end) {                                               \
    return detail::bernoulli_step_range(a, begin, end);                                         \
  }
BLR_BAYESBINN_PASSES(float)
BLR_BAYESBINN_PASSES(double)
#undef BLR_BAYESBINN_PASSES

constexpr int64_t kBayesBinnFormatVersion = 1;
using detail::TensorValue;

}  // namespace

const OptionTable<BayesBinnOptions>& BayesBinnOptions::table() {
  using O = BayesBinnOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("BayesBiNN")
          .inherit(::blr::BayesBinnOptions::table())
          .number("ess", &O::ess, Range::positive(),
                  "training-set size N (the gradient of the mean loss is scaled by N)")
          .required(DefaultFrom::kTrainingSetSize)
          .number("init_natural", &O::init_natural, Range::positive(),
                  "|λ| at initialisation (random sign per weight)", OptionScope::kOptimizer)
          .number("init_std", &O::init_std, Range::at_least(0.0),
                  "variance of the noise added to |λ| at initialisation", OptionScope::kOptimizer));
  return t;
}

BayesBinn::BayesBinn(std::vector<::torch::optim::OptimizerParamGroup> param_groups,
                     Options defaults)
    : VariationalOptimizer(param_groups, std::make_unique<Options>(defaults)),
      generator_(::at::make_generator<::at::CPUGeneratorImpl>(defaults.seed)) {
  // LibTorch 2.x replaces a custom optimizer's group options by the defaults: keep the groups'.
  for (size_t g = 0; g < param_groups.size(); ++g) {
    if (param_groups[g].has_options()) {
      param_groups_[g].set_options(param_groups[g].options().clone());
    }
  }
  validate();
  ensure_state();
}

BayesBinn::BayesBinn(std::vector<::at::Tensor> params, Options defaults)
    : BayesBinn(std::vector<::torch::optim::OptimizerParamGroup>{
                    ::torch::optim::OptimizerParamGroup(std::move(params))},
                std::move(defaults)) {}

const BayesBinnOptions& BayesBinn::options(size_t group) const {
  return group_options_as<Options>(param_groups_.at(group), group, name());
}

void BayesBinn::validate() const {
  validate_groups(param_groups_, options(), name());
  for (const auto& group : param_groups_) {
    for (const auto& p : group.params()) {
      check(p.is_floating_point(),
            fmt::format("{}: every parameter must be a floating-point tensor (binary weights are "
                        "stored as ±1).",
                        name()));
    }
  }
}

size_t BayesBinn::parameter_count() const {
  size_t total = 0;
  for (const auto& group : param_groups_) total += group.params().size();
  return total;
}

bool BayesBinn::fused_for(const ::at::Tensor& p) const {
  return fused_ && detail::fused_layout(p);
}

void BayesBinn::ensure_denominator(Slot& s, double tau) {
  if (s.denominator.defined() && s.denominator_temperature == tau) return;
  s.denominator = concrete::relaxation_denominator<TensorValue>(s.natural.tanh(), tau).t;
  s.denominator_temperature = tau;
}

const ::at::Tensor& BayesBinn::binary(Slot& s) {
  if (!s.binary.defined()) s.binary = binary_sign(s.natural);
  return s.binary;
}

void BayesBinn::ensure_state() {
  ::at::NoGradGuard no_grad;
  const Options& o = options();
  slots_.resize(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    slots_[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      if (s.natural.defined()) continue;
      ::at::Tensor& p = params[i];
      // λ = ±(init + √std·N(0,1)), the sign uniform per coordinate; drawn on the CPU from the
      // seeded generator so that the start does not depend on the device.
      const auto cpu = ::at::TensorOptions().dtype(::at::kDouble);
      ::at::Tensor magnitude = ::at::full(p.sizes(), o.init_natural, cpu);
      if (o.init_std > 0.0) {
        magnitude.add_(::at::randn(p.sizes(), generator_, cpu).mul_(std::sqrt(o.init_std)));
      }
      ::at::Tensor sign = ::at::bernoulli(::at::full(p.sizes(), 0.5, cpu), generator_).mul_(2).sub_(1);
      s.average = ::at::zeros(p.sizes(), p.options());
      set_slot_natural(s, magnitude.mul_(sign).to(p.options()), p);
    }
  }
}

void BayesBinn::set_slot_natural(Slot& s, ::at::Tensor natural, ::at::Tensor& param) {
  s.natural = natural.contiguous();  // the fused passes index it as the parameter's buffer
  s.binary = binary_sign(s.natural);
  s.denominator = ::at::Tensor();  // made at the next restore, for the temperature then in force
  param.copy_(s.binary);
}

void BayesBinn::sample_parameters(bool train) { sample(train, nullptr); }

void BayesBinn::sample_parameters(bool train, const std::vector<::at::Tensor>& uniforms) {
  sample(train, &uniforms);
}

void BayesBinn::sample(bool train, const std::vector<::at::Tensor>* uniforms) {
  check(!sampled_, fmt::format("{}: sample_parameters() was called twice without "
                               "restore_parameters() in between.",
                               name()));
  ensure_state();
  ::at::NoGradGuard no_grad;
  if (uniforms != nullptr) {
    check(train, fmt::format("{}: given uniforms drive training samples only.", name()));
    check(uniforms->size() == parameter_count(),
          fmt::format("{}: {} uniform tensors were given for {} parameters.", name(),
                      uniforms->size(), parameter_count()));
  }
  size_t j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const double tau = options(g).temperature;
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      ::at::Tensor& p = params[i];
      const Slot& s = slot(g, i);
      if (!train) {  // w = 2r − 1, r ~ Bernoulli(σ(2λ))
        ::at::Tensor probability = s.natural.mul(2.0).sigmoid_();
        ::at::Tensor r = p.is_cpu() ? ::at::bernoulli(probability, generator_)
                                    : ::at::bernoulli(probability);
        p.copy_(r.mul_(2).sub_(1));
        continue;
      }
      ::at::Tensor u;
      if (uniforms != nullptr) {
        const ::at::Tensor& given = (*uniforms)[j];
        check(given.sizes() == p.sizes(),
              fmt::format("{}: uniform tensor {} has shape {} but the parameter has shape {}.",
                          name(), j, shape_string(given.sizes()), shape_string(p.sizes())));
        u = given.to(s.natural.options()).contiguous();
      }
      if (fused_for(p)) {
        blr_dispatch::floating_types(p.scalar_type(), [&](auto tag) {
          using T = decltype(tag);
          const detail::RelaxedSampleArgs<T> args{
              s.natural.data_ptr<T>(), p.data_ptr<T>(), u.defined() ? u.data_ptr<T>() : nullptr,
              tau, detail::NoiseSource{options().seed, draws_, j}};
          detail::for_each_chunk(p.numel(), [&](int64_t chunk, int64_t begin, int64_t end) {
            sample_chunk_of(args, chunk, begin, end);
          });
        });
        continue;
      }
      if (!u.defined()) {
        u = p.is_cpu() ? ::at::rand(p.sizes(), generator_, s.natural.options())
                       : ::at::rand(p.sizes(), s.natural.options());
      }
      const TensorValue delta = concrete::logistic_noise<TensorValue>(u);
      p.copy_(concrete::relaxed_sample<TensorValue>(s.natural, delta, tau).t);
    }
  }
  if (train) ++draws_;
  sampled_ = true;
  train_sample_ = train;
}

void BayesBinn::restore_parameters() { restore(true); }

void BayesBinn::discard_sample() { restore(false); }

void BayesBinn::restore(bool collect) {
  check(sampled_, fmt::format("{}: restore_parameters() was called without a sample.", name()));
  ::at::NoGradGuard no_grad;
  collect = collect && train_sample_;
  const bool first = samples_ == 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const double tau = options(g).temperature;
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      ::at::Tensor& p = params[i];
      Slot& s = slot(g, i);
      if (!collect) {
        p.copy_(binary(s));
        continue;
      }
      if (fused_for(p)) {
        // A parameter the loss did not reach has gradient zero (a null gradient pointer).
        ::at::Tensor grad = p.grad();
        if (grad.defined()) grad = grad.to(s.natural.options()).contiguous();
        if (!s.grad_sum.defined() || !s.grad_sum.is_contiguous() ||
            s.grad_sum.scalar_type() != s.natural.scalar_type()) {
          s.grad_sum = ::at::empty_like(s.natural);  // `first` writes it whole
        }
        blr_dispatch::floating_types(p.scalar_type(), [&](auto tag) {
          using T = decltype(tag);
          const detail::RelaxedRestoreArgs<T> args{p.data_ptr<T>(),
                                                   grad.defined() ? grad.data_ptr<T>() : nullptr,
                                                   s.natural.data_ptr<T>(),
                                                   s.grad_sum.data_ptr<T>(),
                                                   tau,
                                                   first};
          detail::for_each_chunk(p.numel(), [&](int64_t, int64_t begin, int64_t end) {
            restore_chunk_of(args, begin, end);
          });
        });
        continue;
      }
      ensure_denominator(s, tau);
      const ::at::Tensor grad =
          p.grad().defined() ? p.grad().to(s.natural.options()) : ::at::zeros_like(s.natural);
      const TensorValue relaxed = p.detach().to(s.natural.options());
      const ::at::Tensor term =
          (concrete::relaxation_scale<TensorValue>(relaxed, s.denominator) * TensorValue(grad)).t;
      s.grad_sum = first ? term : s.grad_sum.add_(term);
      p.copy_(binary(s));
    }
  }
  if (collect) ++samples_;
  sampled_ = false;
}

std::vector<::at::Tensor> BayesBinn::posterior_variance() {
  std::vector<::at::Tensor> out;
  for (const auto& group : slots_) {
    for (const Slot& s : group) out.push_back(1.0 - s.natural.tanh().square());
  }
  return out;
}

std::vector<::at::Tensor> BayesBinn::natural() const {
  std::vector<::at::Tensor> out;
  for (const auto& group : slots_) {
    for (const Slot& s : group) out.push_back(s.natural.clone());
  }
  return out;
}

std::vector<::at::Tensor> BayesBinn::mean() const {
  std::vector<::at::Tensor> out;
  for (const auto& group : slots_) {
    for (const Slot& s : group) out.push_back(s.natural.tanh());
  }
  return out;
}

void BayesBinn::set_natural(const std::vector<::at::Tensor>& natural) {
  check(!sampled_, fmt::format("{}: λ cannot be replaced while the parameters hold a sample.", name()));
  ensure_state();
  check(natural.size() == parameter_count(),
        fmt::format("{}: {} natural-parameter tensors were given for {} parameters.", name(),
                    natural.size(), parameter_count()));
  ::at::NoGradGuard no_grad;
  size_t j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      check(natural[j].sizes() == params[i].sizes(),
            fmt::format("{}: natural-parameter tensor {} has shape {} but the parameter has shape {}.",
                        name(), j, shape_string(natural[j].sizes()), shape_string(params[i].sizes())));
      check(all_finite(natural[j]),
            fmt::format("{}: natural-parameter tensor {} is not finite.", name(), j));
      set_slot_natural(slot(g, i), natural[j].to(params[i].options()).clone(), params[i]);
    }
  }
}

void BayesBinn::set_prior(const std::vector<::at::Tensor>& prior_natural) {
  ensure_state();
  check(prior_natural.size() == parameter_count(),
        fmt::format("{}: {} prior tensors were given for {} parameters.", name(),
                    prior_natural.size(), parameter_count()));
  size_t j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      check(prior_natural[j].sizes() == params[i].sizes(),
            fmt::format("{}: prior tensor {} has shape {} but the parameter has shape {}.", name(),
                        j, shape_string(prior_natural[j].sizes()), shape_string(params[i].sizes())));
      check(all_finite(prior_natural[j]),
            fmt::format("{}: prior tensor {} is not finite.", name(), j));
      slot(g, i).prior = prior_natural[j].to(params[i].options()).contiguous().clone();
    }
  }
}

::at::Tensor BayesBinn::step(LossClosure closure) {
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
  ensure_state();
  const int64_t t = step_ + 1;
  ::at::NoGradGuard no_grad;
  // Compute every new λ first, so that a non-finite one leaves the whole state unchanged. The
  // fused pass writes λ' and u' into the slot's spare buffers; the tensor path into new tensors.
  std::vector<std::vector<std::pair<::at::Tensor, ::at::Tensor>>> updated(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Options& o = options(g);
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slot(g, i);
      bool finite = true;
      if (fused_for(params[i])) {
        for (::at::Tensor* buffer : {&s.next_natural, &s.next_average}) {
          if (!buffer->defined() || buffer->sizes() != s.natural.sizes() ||
              buffer->scalar_type() != s.natural.scalar_type()) {
            *buffer = ::at::empty_like(s.natural);
          }
        }
        blr_dispatch::floating_types(s.natural.scalar_type(), [&](auto tag) {
          using T = decltype(tag);
          const detail::BernoulliStepArgs<T> args{
              s.natural.data_ptr<T>(),
              s.average.data_ptr<T>(),
              s.grad_sum.data_ptr<T>(),
              s.prior.defined() ? s.prior.data_ptr<T>() : nullptr,
              s.next_natural.data_ptr<T>(),
              s.next_average.data_ptr<T>(),
              params[i].data_ptr<T>(),
              o.ess / static_cast<double>(samples_),
              o.prior_natural,
              o.beta1,
              o.lr,
              static_cast<long>(t)};
          finite = detail::for_each_chunk_ok(s.natural.numel(), [&](int64_t b, int64_t e) {
            return step_chunk_of(args, b, e);
          });
        });
        updated[g].emplace_back();
      } else {
        const TensorValue grad_mu = s.grad_sum.mul(o.ess / static_cast<double>(samples_));
        const TensorValue prior =
            s.prior.defined() ? s.prior : ::at::scalar_tensor(o.prior_natural, s.natural.options());
        TensorValue natural, average;
        bayesbinn_natural_step<TensorValue>(s.natural, grad_mu, prior, s.average, o.beta1,
                                            static_cast<long>(t), o.lr, natural, average);
        finite = all_finite(natural.t);
        updated[g].emplace_back(natural.t, average.t);
      }
      if (!finite) {
        samples_ = 0;
        // The fused passes wrote sign(λ') into their parameters: back to sign(λ).
        for (size_t h = 0; h < param_groups_.size(); ++h) {
          auto& ps = param_groups_[h].params();
          for (size_t k = 0; k < ps.size(); ++k) ps[k].copy_(binary(slot(h, k)));
        }
        throw Error(fmt::format(
            "{} step {} produced a non-finite natural parameter in parameter {} of param group {} "
            "(learning rate too large, or NaN/Inf in the gradients?).",
            name(), t, i, g));
      }
    }
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slot(g, i);
      ::at::Tensor& p = params[i];
      if (!updated[g][i].first.defined()) {  // fused: accept λ', u' (p holds sign(λ') already)
        std::swap(s.natural, s.next_natural);
        std::swap(s.average, s.next_average);
        s.binary = ::at::Tensor();  // made from λ when a tensor path or a discard needs it
        s.denominator = ::at::Tensor();
        continue;
      }
      s.average = std::move(updated[g][i].second);
      set_slot_natural(s, std::move(updated[g][i].first), p);
    }
  }
  step_ = t;
  samples_ = 0;
  return loss;
}

void BayesBinn::save(::torch::serialize::OutputArchive& archive) const {
  check(!sampled_ && samples_ == 0,
        fmt::format("{}: the state can only be saved between steps (no sample pending).", name()));
  detail::write_state_header(archive, name(), kBayesBinnFormatVersion, step_, param_groups_);
  archive.write("blr/draws", c10::IValue(static_cast<int64_t>(draws_)));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    for (size_t i = 0; g < slots_.size() && i < slots_[g].size(); ++i) {
      const Slot& s = slots_[g][i];
      if (!s.natural.defined()) continue;
      archive.write(param_key(g, i, "natural"), s.natural);
      archive.write(param_key(g, i, "average"), s.average);
      if (s.prior.defined()) archive.write(param_key(g, i, "prior"), s.prior);
    }
  }
}

void BayesBinn::load(::torch::serialize::InputArchive& archive) {
  check(!sampled_, fmt::format("{}: cannot load a state while the parameters hold a sample.", name()));
  detail::check_state_header(archive, name(), kBayesBinnFormatVersion, param_groups_);
  c10::IValue value;
  std::vector<std::vector<Slot>> slots(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    slots[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      ::at::Tensor natural, average, prior;
      archive.read(param_key(g, i, "natural"), natural);
      archive.read(param_key(g, i, "average"), average);
      check(natural.sizes() == params[i].sizes() && average.sizes() == params[i].sizes(),
            fmt::format("The saved {} state of parameter {} in group {} has shape {}; the "
                        "parameter has shape {}.",
                        name(), i, g, shape_string(natural.sizes()), shape_string(params[i].sizes())));
      check(all_finite(natural) && all_finite(average),
            fmt::format("The saved {} state of parameter {} in group {} is not finite.", name(), i, g));
      slots[g][i].natural = natural.to(params[i].options()).contiguous();
      slots[g][i].average = average.to(params[i].options()).contiguous();
      if (archive.try_read(param_key(g, i, "prior"), prior)) {
        check(prior.sizes() == params[i].sizes(),
              fmt::format("The saved {} prior of parameter {} in group {} has the wrong shape.",
                          name(), i, g));
        slots[g][i].prior = prior.to(params[i].options()).contiguous();
      }
    }
  }
  step_ = detail::read_state_step(archive, param_groups_);
  // States written before the fused passes have no draw count: one draw per sample of each step.
  draws_ = archive.try_read("blr/draws", value)
               ? static_cast<uint64_t>(value.toInt())
               : static_cast<uint64_t>(step_) * static_cast<uint64_t>(options().mc_samples);
  slots_ = std::move(slots);
  samples_ = 0;
  ::at::NoGradGuard no_grad;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      set_slot_natural(slots_[g][i], slots_[g][i].natural, params[i]);
    }
  }
}

BLR_REGISTER_OPTIMIZER(BayesBinn, "bayesbinn",
                       "BayesBiNN (Meng et al. 2020): binary weights with a mean-field Bernoulli "
                       "posterior, trained by the Concrete relaxation",
                       kBernoulli);

}  // namespace blr::torch
