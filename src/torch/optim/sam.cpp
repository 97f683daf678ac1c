// SAM and bSAM (sam.hpp): the two-gradient protocol, both updates, saving and registration.
#include "blr/torch/optim/sam.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/archive.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "all_finite.hpp"
#include "dispatch.hpp"
#include "noise_seed_option.hpp"
#include "kernels.hpp"
#include "state_archive.hpp"
#include "two_point_step.hpp"

namespace blr::torch {

using detail::param_key;
using detail::shape_string;

namespace {

/// LibTorch 2.x replaces a custom optimizer's group options by the defaults: keep the groups'.
void keep_options(std::vector<::torch::optim::OptimizerParamGroup>& mine,
                  const std::vector<::torch::optim::OptimizerParamGroup>& given) {
  for (size_t g = 0; g < given.size(); ++g) {
    if (given[g].has_options()) mine[g].set_options(given[g].options().clone());
  }
}

// The fused updates (two_point_step.hpp): one pass over a parameter's buffers, one clone per
// instruction set and element type; 1 when a new μ is not finite.
template <class T>
struct UpdateBuffers {
  T* mean;
  T* average;
  T* precision;  ///< bSAM's s (null for SAM)
  const T* grad;
  const T* ascent_grad;
};

template <class T>
BLR_KERNEL_INLINE int sam_update_range(const UpdateBuffers<T>& b, const detail::SamCoefficients& k,
                                       int64_t begin, int64_t end) {
  T* __restrict mean = b.mean;
  T* __restrict average = b.average;
  const T* __restrict ascent_grad = b.ascent_grad;
  int bad = 0;
  for (int64_t i = begin; i < end; ++i) {
    T new_mean, new_average;
    detail::sam_coordinate<T>(mean[i], average[i], ascent_grad[i], k, new_mean, new_average);
    mean[i] = new_mean;
    average[i] = new_average;
    bad |= detail::non_finite(new_mean);
  }
  return bad;
}

template <class T>
BLR_KERNEL_INLINE int bsam_update_range(const UpdateBuffers<T>& b,
                                        const detail::BsamCoefficients& k, int64_t begin,
                                        int64_t end) {
  T* __restrict mean = b.mean;
  T* __restrict average = b.average;
  T* __restrict precision = b.precision;
  const T* __restrict grad = b.grad;
  const T* __restrict ascent_grad = b.ascent_grad;
  int bad = 0;
  for (int64_t i = begin; i < end; ++i) {
    T new_mean, new_average, new_precision;
    detail::bsam_coordinate<T>(mean[i], average[i], precision[i], grad[i], ascent_grad[i], k,
                               new_mean, new_average, new_precision);
    mean[i] = new_mean;
    average[i] = new_average;
    precision[i] = new_precision;
    bad |= detail::non_finite(new_mean);
  }
  return bad;
}

#define BLR_TWO_POINT_PASSES(T)                                                                 \
  BLR_CPU_CLONES int update_chunk_of(const UpdateBuffers<T>& b,                                 \
                                     const detail::SamCoefficients& k, int64_t begin,           \
                                     int64_t end) {                                             \
    return sam_update_range(b, k, begin, end);                                                  \
  }                                                                                             \
  BLR_CPU_CLONES int update_chunk_of(const UpdateBuffers<T>& b,                                 \
                                     const detail::BsamCoefficients& k, int64_t begin,          \
                                     int64_t end) {                                             \
    return bsam_update_range(b, k, begin, end);                                                 \
  }
BLR_TWO_POINT_PASSES(float)
BLR_TWO_POINT_PASSES(double)
#undef BLR_TWO_POINT_PASSES

/// The fused update of one parameter (μ in `mean`; `precision` null for SAM) with coefficients
/// K; true when every new μ is finite.
template <class K>
bool fused_update(::at::Tensor& mean, ::at::Tensor& average, ::at::Tensor* precision,
                  const ::at::Tensor& grad, const ::at::Tensor& ascent_grad, const K& k) {
  bool ok = true;
  blr_dispatch::floating_types(mean.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const UpdateBuffers<T> b{mean.data_ptr<T>(), average.data_ptr<T>(),
                             precision != nullptr ? precision->data_ptr<T>() : nullptr,
                             grad.data_ptr<T>(), ascent_grad.data_ptr<T>()};
    ok = detail::for_each_chunk_ok(mean.numel(), [&](int64_t begin, int64_t end) {
      return update_chunk_of(b, k, begin, end);
    });
  });
  return ok;
}

}  // namespace

// ---- the protocol ------------------------------------------------------------------------------

void TwoPointOptimizer::ensure_slots() {
  ::at::NoGradGuard no_grad;
  slots_.resize(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    slots_[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      if (!slots_[g][i].average.defined()) init_slot(g, params[i], slots_[g][i]);
    }
  }
}

bool TwoPointOptimizer::fused_for(const ::at::Tensor& t) const {
  return fused_ && detail::fused_layout(t);
}

void TwoPointOptimizer::sample_parameters(bool train) {
  check(!sampled_, fmt::format("{}: sample_parameters() was called twice without "
                               "restore_parameters() in between.",
                               name()));
  check(!train || collected_ < 2,
        fmt::format("{}: a step takes exactly two training samples (the point and the ascent "
                    "point); call step() after the second.",
                    name()));
  ensure_slots();
  ::at::NoGradGuard no_grad;
  if (train && collected_ == 1) prepare_ascent();
  const bool drawing = !train || collected_ == 0;  // a first point or a predictive draw
  size_t j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      Slot& s = slots_[g][i];
      ::at::Tensor& p = params[i];
      // The point is written into a spare buffer that then becomes the parameter's; μ stays in
      // its own buffer (`mean`) until restore swaps it back: no copy of μ.
      s.mean = p.detach();
      if (!s.theta.defined() || s.theta.sizes() != p.sizes() ||
          s.theta.scalar_type() != p.scalar_type() || s.theta.device() != p.device()) {
        s.theta = ::at::empty(p.sizes(), p.options());
      }
      bool moved = true;
      if (!train) {
        moved = posterior_draw(g, j, s, s.theta);
      } else if (collected_ == 0) {
        moved = first_point(g, j, s, s.theta);
      } else {
        ascent_point(g, s, s.theta);
      }
      if (moved) {
        p.set_data(s.theta);
        s.theta = ::at::Tensor();
        s.swapped = true;
      }
    }
  }
  if (drawing && has_posterior()) ++draws_;  // bSAM's first points and predictive draws
  sampled_ = true;
  train_sample_ = train;
}

void TwoPointOptimizer::restore(bool collect) {
  check(sampled_, fmt::format("{}: restore_parameters() was called without a sample.", name()));
  ::at::NoGradGuard no_grad;
  collect = collect && train_sample_;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      ::at::Tensor& p = params[i];
      if (s.swapped) {
        s.theta = p.detach();
        p.set_data(s.mean);
        s.swapped = false;
      }
      s.mean = ::at::Tensor();
      if (!collect) continue;
      // A parameter the loss did not reach has gradient zero; the buffers are kept between steps.
      ::at::Tensor& kept = collected_ == 0 ? s.first_grad : s.second_grad;
      if (!kept.defined() || kept.sizes() != p.sizes() || kept.scalar_type() != p.scalar_type() ||
          kept.device() != p.device()) {
        kept = ::at::empty(p.sizes(), p.options());
      }
      if (p.grad().defined()) {
        kept.copy_(p.grad());
      } else {
        kept.zero_();
      }
    }
  }
  if (collect) ++collected_;
  sampled_ = false;
}

::at::Tensor TwoPointOptimizer::step(LossClosure closure) {
  check(!sampled_, fmt::format("{}: step() was called while the parameters hold a sample; "
                               "restore them first.",
                               name()));
  ::at::Tensor loss;
  if (closure) {
    double total = 0.0;
    for (int k = collected_; k < 2; ++k) {
      SampledParameters sampled(*this, true);
      ::at::AutoGradMode grad_mode(true);
      const double value = closure().item<double>();
      if (k == 0) total = value;  // the loss at the first point is the step's loss
    }
    loss = ::at::scalar_tensor(total, ::at::kDouble);
  }
  check(collected_ == 2,
        fmt::format("{}: step() needs the gradients of two training samples on the same "
                    "minibatch (the point and the ascent point); it has {}.",
                    name(), collected_));
  validate();
  ++step_;
  ::at::NoGradGuard no_grad;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      if (!update(g, params[i], s)) {
        collected_ = 0;
        throw Error(fmt::format("{} step {} produced a non-finite value in parameter {} of param "
                                "group {} (learning rate too large, or NaN/Inf in the gradients?).",
                                name(), step_, i, g));
      }
    }
  }
  collected_ = 0;
  return loss;
}

void TwoPointOptimizer::save(::torch::serialize::OutputArchive& archive) const {
  check(!sampled_ && collected_ == 0,
        fmt::format("{}: the state can only be saved between steps (no sample pending).", name()));
  archive.write("blr/optimizer", c10::IValue(name()));
  archive.write("blr/step", c10::IValue(step_));
  archive.write("blr/draws", c10::IValue(static_cast<int64_t>(draws_)));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    archive.write(fmt::format("group{}/lr", g), c10::IValue(param_groups_[g].options().get_lr()));
    for (size_t i = 0; g < slots_.size() && i < slots_[g].size(); ++i) {
      const Slot& s = slots_[g][i];
      if (s.average.defined()) archive.write(param_key(g, i, "average"), s.average);
      if (s.precision.defined()) archive.write(param_key(g, i, "precision"), s.precision);
    }
  }
}

void TwoPointOptimizer::load(::torch::serialize::InputArchive& archive) {
  check(!sampled_, fmt::format("{}: cannot load a state while the parameters hold a sample.", name()));
  c10::IValue value;
  check(archive.try_read("blr/optimizer", value) && value.isString() &&
            value.toStringRef() == name(),
        fmt::format("The archive holds no {} optimizer state.", name()));
  ensure_slots();
  std::vector<std::vector<Slot>> slots = slots_;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots[g][i];
      for (auto [key, tensor] : {std::pair{"average", &s.average}, std::pair{"precision", &s.precision}}) {
        ::at::Tensor t;
        if (!archive.try_read(param_key(g, i, key), t)) continue;
        check(t.sizes() == params[i].sizes() && std::isfinite(t.abs().max().item<double>()),
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
  // States written before the counter-based noise have no draw count: one draw a step.
  draws_ = archive.try_read("blr/draws", value) ? static_cast<uint64_t>(value.toInt())
                                                 : static_cast<uint64_t>(step_);
  slots_ = std::move(slots);
  collected_ = 0;
}

// ---- SAM ---------------------------------------------------------------------------------------

const OptionTable<SamOptions>& SamOptions::table() {
  using O = SamOptions;
  static const OptionTable<O> t =
      OptionTable<O>("SAM")
          .number("lr", &O::lr, Range::at_least(0.0), "learning rate α")
          .number("momentum", &O::momentum, Range::between(0.0, 1.0, false, true),
                  "heavy-ball momentum β")
          .number("weight_decay", &O::weight_decay, Range::at_least(0.0),
                  "L2 weight decay δ (inside the momentum)")
          .number("rho", &O::rho, Range::at_least(0.0), "radius ρ of the ascent step");
  return t;
}

Sam::Sam(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults)
    : TwoPointOptimizer(param_groups, std::make_unique<Options>(defaults)) {
  keep_options(param_groups_, param_groups);
  validate();
}

Sam::Sam(std::vector<::at::Tensor> params, Options defaults)
    : Sam(std::vector<::torch::optim::OptimizerParamGroup>{
              ::torch::optim::OptimizerParamGroup(std::move(params))},
          std::move(defaults)) {}

const SamOptions& Sam::options(size_t group) const {
  return group_options_as<Options>(param_groups_.at(group), group, name());
}

void Sam::validate() const { validate_groups(param_groups_, options(), name()); }

void Sam::init_slot(size_t, const ::at::Tensor& param, Slot& s) {
  s.average = ::at::zeros_like(param);
}

bool Sam::first_point(size_t, size_t, Slot&, ::at::Tensor&) { return false; }  // θ₁ = μ

void Sam::prepare_ascent() {
  double squared = 0.0;
  for (auto& group : slots()) {
    for (Slot& s : group) {
      const double norm =
          ::at::linalg_vector_norm(s.first_grad, 2, c10::nullopt, false, ::at::kDouble).item<double>();
      squared += norm * norm;
    }
  }
  inverse_norm_ = squared > 0.0 ? 1.0 / std::sqrt(squared) : 0.0;
}

void Sam::ascent_point(size_t group, Slot& s, ::at::Tensor& out) {
  ::at::add_out(out, s.mean, s.first_grad, options(group).rho * inverse_norm_);
}

bool Sam::update(size_t group, ::at::Tensor& param, Slot& s) {
  const Options& o = options(group);
  const detail::SamCoefficients k{o.momentum, o.weight_decay, o.lr};
  if (fused_for(param)) {  // param holds μ
    return fused_update(param, s.average, nullptr, s.first_grad, s.second_grad, k);
  }
  using V = detail::TensorValue;
  V mean, average;
  detail::sam_coordinate<V>(V(param), V(s.average), V(s.second_grad), k, mean, average);
  s.average.copy_(average.t);
  param.copy_(mean.t);
  return detail::all_finite(param);
}

// ---- bSAM --------------------------------------------------------------------------------------

const OptionTable<BsamOptions>& BsamOptions::table() {
  using O = BsamOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("bSAM")
          .number("lr", &O::lr, Range::at_least(0.0), "learning rate α")
          .number("ess", &O::ess, Range::positive(),
                  "effective sample size N (training-set size × data-augmentation factor)")
          .required(DefaultFrom::kTrainingSetSize)
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "momentum (gradient average) factor β₁")
          .number("beta2", &O::beta2, Range::between(0.0, 1.0, false, true),
                  "precision average factor β₂")
          .number("rho", &O::rho, Range::at_least(0.0), "radius ρ of the ascent step μ + ρ·g/s")
          .number("prior_precision", &O::prior_precision, Range::at_least(0.0),
                  "prior precision λp (weight decay δ = λp/N)")
          .number("damping", &O::damping, Range::at_least(0.0), "damping added to the precision")
          .number("hess_init", &O::hess_init, Range::positive(), "initial precision per example s₀"));
  return t;
}

Bsam::Bsam(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults)
    : TwoPointOptimizer(param_groups, std::make_unique<Options>(defaults)),
      generator_(::at::make_generator<::at::CPUGeneratorImpl>(defaults.seed)) {
  keep_options(param_groups_, param_groups);
  validate();
}

Bsam::Bsam(std::vector<::at::Tensor> params, Options defaults)
    : Bsam(std::vector<::torch::optim::OptimizerParamGroup>{
               ::torch::optim::OptimizerParamGroup(std::move(params))},
           std::move(defaults)) {}

const BsamOptions& Bsam::options(size_t group) const {
  return group_options_as<Options>(param_groups_.at(group), group, name());
}

void Bsam::validate() const { validate_groups(param_groups_, options(), name()); }

void Bsam::init_slot(size_t group, const ::at::Tensor& param, Slot& s) {
  s.average = ::at::zeros_like(param);
  s.precision = ::at::full_like(param, options(group).hess_init);
}

void Bsam::draw(size_t group, size_t index, Slot& s, ::at::Tensor& out) {
  ::at::Tensor given;
  if (!next_noise_.empty()) {
    check(index < next_noise_.size() && next_noise_[index].sizes() == out.sizes(),
          fmt::format("bSAM: the given noise does not match parameter {}.", index));
    given = next_noise_[index].to(out.options()).contiguous();
    if (index + 1 == next_noise_.size()) next_noise_.clear();  // used once, by the last parameter
  }
  const double ess = options(group).ess;
  if (fused_for(out) && s.mean.is_contiguous() && s.precision.is_contiguous()) {
    // θ = μ + ε/√(a·s + b) with a = N, b = 0: the Gaussian optimizers' sampling pass.
    blr_dispatch::floating_types(out.scalar_type(), [&](auto tag) {
      using T = decltype(tag);
      const detail::SampleArgs<T> args{s.mean.data_ptr<T>(),
                                       out.data_ptr<T>(),
                                       s.precision.data_ptr<T>(),
                                       static_cast<T>(ess),
                                       T(0),
                                       nullptr,
                                       given.defined() ? given.data_ptr<T>() : nullptr,
                                       detail::NoiseSource{options().seed, draw_count(), index}};
      detail::sample_pass(args, out.numel());
    });
    return;
  }
  ::at::Tensor e = given.defined() ? given
                   : out.is_cpu()  ? ::at::randn(out.sizes(), generator_, out.options())
                                   : ::at::randn(out.sizes(), out.options());
  out.copy_(e.mul((s.precision * ess).rsqrt_()).add_(s.mean));  // e may be the caller's noise
}

bool Bsam::first_point(size_t group, size_t index, Slot& s, ::at::Tensor& out) {
  draw(group, index, s, out);
  return true;
}

void Bsam::ascent_point(size_t group, Slot& s, ::at::Tensor& out) {
  ::at::addcdiv_out(out, s.mean, s.first_grad, s.precision, options(group).rho);
}

bool Bsam::posterior_draw(size_t group, size_t index, Slot& s, ::at::Tensor& out) {
  draw(group, index, s, out);
  return true;
}

bool Bsam::update(size_t group, ::at::Tensor& param, Slot& s) {
  const Options& o = options(group);
  const detail::BsamCoefficients k{o.beta1, o.beta2, o.prior_precision / o.ess, o.damping, o.lr};
  if (fused_for(param)) {  // param holds μ
    return fused_update(param, s.average, &s.precision, s.first_grad, s.second_grad, k);
  }
  using V = detail::TensorValue;
  V mean, average, precision;
  detail::bsam_coordinate<V>(V(param), V(s.average), V(s.precision), V(s.first_grad),
                             V(s.second_grad), k, mean, average, precision);
  s.average.copy_(average.t);
  s.precision.copy_(precision.t);
  param.copy_(mean.t);
  return detail::all_finite(param);
}

std::vector<::at::Tensor> Bsam::posterior_variance() {
  ensure_slots();
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < slots().size(); ++g) {
    for (Slot& s : slots()[g]) out.push_back((s.precision * options(g).ess).reciprocal());
  }
  return out;
}

std::vector<::at::Tensor> Bsam::precision() {
  ensure_slots();
  std::vector<::at::Tensor> out;
  for (auto& group : slots()) {
    for (Slot& s : group) out.push_back(s.precision.clone());
  }
  return out;
}

BLR_REGISTER_OPTIMIZER(Sam, "sam",
                       "SAM (Foret et al. 2021): SGD with momentum at the ascent point, a point "
                       "estimate",
                       kPointEstimate);
BLR_REGISTER_OPTIMIZER(Bsam, "bsam",
                       "Bayesian SAM (Möllenhoff & Khan 2023): SAM as a relaxation of Bayes, a "
                       "diagonal Gaussian posterior",
                       kDiagonalGaussian);

}  // namespace blr::torch
