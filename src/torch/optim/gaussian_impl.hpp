// Internal: the definitions of GaussianOptimizer<Rule> (blr/torch/optim/gaussian.hpp). Each
// optimizer's .cpp includes this file and instantiates its rule once:
//
//   template class blr::torch::GaussianOptimizer<IvonRule>;
//
// The update of one parameter is the rule's estimate followed by the core's coordinate_step, in
// one pass over the buffers (fused CPU loop, float or double, one clone per instruction set) or as
// tensor operations (every other device and dtype) — the same function template in both.
#pragma once

#include <ATen/ATen.h>

#include <type_traits>
#include <utility>

#include "blr/rule/policy.hpp"
#include "blr/torch/optim/gaussian.hpp"
#include "dispatch.hpp"
#include "kernels.hpp"
#include "noise_seed_option.hpp"
#include "tensor_value.hpp"

namespace blr::torch {

namespace detail {

/// The averaged gradient and statistic of coordinate i (direct: the only sample's gradient and
/// noise), as the rule's estimate reads them.
template <Statistic kStat, bool kDirect, class T>
BLR_KERNEL_INLINE void averages(const T* grad, const T* stat, const T* squared, int64_t i, T inv,
                                T& g, T& s) {
  g = kDirect ? grad[i] : grad[i] * inv;
  if constexpr (kStat == Statistic::kNoiseTimesGradient) {
    s = kDirect ? stat[i] * g : stat[i] * inv;
  } else if constexpr (kStat == Statistic::kSquaredGradient) {
    s = kDirect ? g * g : stat[i] * inv;
  } else if constexpr (kStat == Statistic::kExternalSquared) {
    s = squared[i] * inv;
  } else {
    s = T(0);
  }
}

/// True when the rule takes a general prior (MeanFieldOptimizer::set_prior).
template <class Rule>
constexpr bool kTakesPrior = [] {
  if constexpr (requires { Rule::kGeneralPrior; }) return Rule::kGeneralPrior;
  return false;
}();

/// The prior of one parameter's coordinates: none (the options' δ and m₀ = 0), or m₀ and p₀.
template <class T>
struct PriorBuffers {
  const T* mean = nullptr;
  const T* precision = nullptr;
};

template <class Rule, int kVariant, bool kDirect, bool kPrior, class T, class K>
BLR_CPU_CLONES int gaussian_update_range(int64_t n, T* __restrict mu, T* __restrict average,
                                         T* __restrict precision, const T* __restrict grad,
                                         const T* __restrict stat, const T* __restrict squared,
                                         const T* __restrict prior_mean,
                                         const T* __restrict prior_precision, T inv,
                                         const typename Rule::template Estimate<T> e, const K k) {
  constexpr Statistic kStat = Rule::kStatistics[kVariant];
  constexpr bool kAverage = Rule::Policy::template has<stage::GradientAverage>;
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    T g, s;
    averages<kStat, kDirect>(grad, stat, squared, i, inv, g, s);
    std::conditional_t<kPrior, stage::PriorCoordinate<T>, stage::Coordinate<T>> c;
    c.mean = mu[i];
    c.precision = precision[i];
    if constexpr (kAverage) c.average = average[i];
    if constexpr (kPrior) {
      c.prior_mean = prior_mean[i];
      c.prior_precision = prior_precision[i];
    }
    Rule::template estimate<kVariant>(e, g, s, c);
    coordinate_step<true>(k, c);
    mu[i] = c.new_mean;
    precision[i] = c.new_precision;
    if constexpr (kAverage) average[i] = c.new_average;
    bad |= non_finite(c.new_mean);
  }
  return bad;
}

/// The fused CPU update of one contiguous float/double parameter.
template <class Rule, int kVariant>
bool fused_update(const typename Rule::Options& o, const typename Rule::Policy& policy,
                  const stage::StepContext& context, ::at::Tensor& param,
                  MeanFieldOptimizer::Slot& slot, const MeanFieldOptimizer::UpdateInput& in) {
  constexpr Statistic kStat = Rule::kStatistics[kVariant];
  ::at::Tensor squared;
  if constexpr (kStat == Statistic::kExternalSquared) {
    squared = in.squared->to(param.options()).contiguous();
  }
  bool ok = true;
  blr_dispatch::floating_types(param.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const auto k = coefficients<T>(policy, context);
    const auto e = Rule::template estimate_coefficients<T>(o);
    const T inv = static_cast<T>(1.0 / static_cast<double>(in.samples));
    T* mu = param.data_ptr<T>();
    T* u = slot.average.data_ptr<T>();
    T* p = slot.precision.data_ptr<T>();
    const T* g = in.grad->data_ptr<T>();
    const T* s = kStat == Statistic::kNoiseTimesGradient ||
                         (kStat == Statistic::kSquaredGradient && !in.direct)
                     ? in.stat->data_ptr<T>()
                     : nullptr;
    const T* q = squared.defined() ? squared.data_ptr<T>() : nullptr;
    const T* none = nullptr;
    const T* m0 = slot.prior_mean.defined() ? slot.prior_mean.data_ptr<T>() : nullptr;
    const T* p0 = slot.prior_precision.defined() ? slot.prior_precision.data_ptr<T>() : nullptr;
    ok = for_each_chunk_ok(param.numel(), [&](int64_t b, int64_t end) {
      const int64_t n = end - b;
      const T* sb = s ? s + b : s;
      const T* qb = q ? q + b : q;
      if constexpr (kTakesPrior<Rule>) {
        if (p0 != nullptr) {
          return in.direct ? gaussian_update_range<Rule, kVariant, true, true>(
                                 n, mu + b, u + b, p + b, g + b, sb, qb, m0 + b, p0 + b, inv, e, k)
                           : gaussian_update_range<Rule, kVariant, false, true>(
                                 n, mu + b, u + b, p + b, g + b, sb, qb, m0 + b, p0 + b, inv, e, k);
        }
      }
      return in.direct ? gaussian_update_range<Rule, kVariant, true, false>(
                             n, mu + b, u + b, p + b, g + b, sb, qb, none, none, inv, e, k)
                       : gaussian_update_range<Rule, kVariant, false, false>(
                             n, mu + b, u + b, p + b, g + b, sb, qb, none, none, inv, e, k);
    });
  });
  return ok;
}

/// The same update as tensor operations (any device and dtype).
template <class Rule, int kVariant>
bool tensor_update(const typename Rule::Options& o, const typename Rule::Policy& policy,
                   const stage::StepContext& context, ::at::Tensor& param,
                   MeanFieldOptimizer::Slot& slot, const MeanFieldOptimizer::UpdateInput& in) {
  constexpr Statistic kStat = Rule::kStatistics[kVariant];
  constexpr bool kAverage = Rule::Policy::template has<stage::GradientAverage>;
  const double inv = 1.0 / static_cast<double>(in.samples);
  using V = TensorValue;
  const V g = in.direct ? V(*in.grad) : V(in.grad->mul(inv));
  V s;
  if constexpr (kStat == Statistic::kNoiseTimesGradient) {
    s = in.direct ? V(in.stat->mul(g.t)) : V(in.stat->mul(inv));
  } else if constexpr (kStat == Statistic::kSquaredGradient) {
    s = in.direct ? V(g.t.mul(g.t)) : V(in.stat->mul(inv));
  } else if constexpr (kStat == Statistic::kExternalSquared) {
    s = V(in.squared->to(slot.precision.options()).mul(inv));
  }
  // The step on a coordinate type: stage::Coordinate, or stage::PriorCoordinate with m₀ and p₀.
  // With master weights (half/bfloat16 parameters) the step runs on the float32 mean, and the
  // parameter receives it rounded to its own dtype.
  ::at::Tensor mean = slot.master.defined() ? slot.master : param.detach();
  auto run = [&](auto& c) {
    c.mean = V(mean);
    c.precision = V(slot.precision);
    if constexpr (kAverage) c.average = V(slot.average);
    Rule::template estimate<kVariant>(Rule::template estimate_coefficients<double>(o), g, s, c);
    coordinate_step<true>(coefficients<double>(policy, context), c);
    mean.copy_(c.new_mean.t);
    if (slot.master.defined()) param.copy_(mean);
    slot.precision.copy_(c.new_precision.t);
    if constexpr (kAverage) slot.average.copy_(c.new_average.t);
  };
  bool prior_done = false;
  if constexpr (kTakesPrior<Rule>) {
    if (slot.prior_precision.defined()) {
      stage::PriorCoordinate<V> c;
      c.prior_mean = V(slot.prior_mean);
      c.prior_precision = V(slot.prior_precision);
      run(c);
      prior_done = true;
    }
  }
  if (!prior_done) {
    stage::Coordinate<V> c;
    run(c);
  }
  return ::at::isfinite(mean).all().item<bool>();
}

/// Calls f.template operator()<kVariant>() for the rule's variant v ∈ [0, kVariants).
template <class Rule, int kVariant = 0, class F>
bool with_variant(int v, F&& f) {
  if constexpr (kVariant + 1 < Rule::kVariants) {
    if (v != kVariant) return with_variant<Rule, kVariant + 1>(v, std::forward<F>(f));
  }
  return f.template operator()<kVariant>();
}

}  // namespace detail

template <class Rule>
GaussianOptimizer<Rule>::GaussianOptimizer(
    std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults)
    : MeanFieldOptimizer(param_groups, std::make_unique<Options>(defaults)) {
  keep_group_options(param_groups);
  validate();
}

template <class Rule>
GaussianOptimizer<Rule>::GaussianOptimizer(std::vector<::at::Tensor> params, Options defaults)
    : GaussianOptimizer(std::vector<::torch::optim::OptimizerParamGroup>{
                            ::torch::optim::OptimizerParamGroup(std::move(params))},
                        std::move(defaults)) {}

template <class Rule>
bool GaussianOptimizer<Rule>::update(size_t group, ::at::Tensor& param, Slot& slot,
                                     const UpdateInput& in, bool fused) {
  if constexpr (requires { Rule::at_learning_rate(options(group), 1.0); }) {
    return update_with(Rule::at_learning_rate(options(group), initial_lr(group)), param, slot, in,
                       fused);
  } else {
    return update_with(options(group), param, slot, in, fused);
  }
}

template <class Rule>
bool GaussianOptimizer<Rule>::update_with(const Options& o, ::at::Tensor& param, Slot& slot,
                                          const UpdateInput& in, bool fused) {
  const typename Rule::Policy policy = Rule::policy(o);
  const long t = static_cast<long>(step_count());
  const stage::StepContext context{t, policy.mean_rate.at(t - 1), policy.precision_rate.at(t - 1),
                                   Rule::precision_keep(o)};
  return detail::with_variant<Rule>(Rule::variant(options()), [&]<int kVariant>() {
    return fused ? detail::fused_update<Rule, kVariant>(o, policy, context, param, slot, in)
                 : detail::tensor_update<Rule, kVariant>(o, policy, context, param, slot, in);
  });
}

}  // namespace blr::torch
