// Vadam (vadam.hpp): options, validation and the fused update.
#include "blr/torch/optim/vadam.hpp"

#include <cmath>

#include "kernels.hpp"
#include "options.hpp"

namespace blr::torch {

namespace {

template <class T>
struct VadamCoefficients {
  T inv_samples, beta1, one_minus_beta1, beta2, one_minus_beta2, prior, debias1, debias2, lr;
};

/// One Vadam update over [0, n): m, s and μ in one pass (see vadam.hpp).
template <class T>
BLR_KERNEL_INLINE int vadam_chunk(int64_t n, T* __restrict mu, T* __restrict m, T* __restrict s,
                const T* __restrict grad_sum, const T* __restrict squared_sum,
                const VadamCoefficients<T> c) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T g = grad_sum[i] * c.inv_samples;
    const T q = squared_sum[i] * c.inv_samples;
    const T mi = c.beta1 * m[i] + c.one_minus_beta1 * (g + c.prior * mu[i]);
    const T si = c.beta2 * s[i] + c.one_minus_beta2 * q;
    const T mn = mu[i] - c.lr * (mi * c.debias1) /
                             (std::sqrt(si * c.debias2) + c.prior);
    m[i] = mi;
    s[i] = si;
    mu[i] = mn;
    bad |= detail::non_finite(mn);
  }
  return bad;
}


BLR_CPU_CLONES int vadam_chunk_of(int64_t n, float* mu, float* m, float* s, const float* grad_sum,
                              const float* stat_sum, const VadamCoefficients<float>& c) {
  return vadam_chunk<float>(n, mu, m, s, grad_sum, stat_sum, c);
}

BLR_CPU_CLONES int vadam_chunk_of(int64_t n, double* mu, double* m, double* s, const double* grad_sum,
                              const double* stat_sum, const VadamCoefficients<double>& c) {
  return vadam_chunk<double>(n, mu, m, s, grad_sum, stat_sum, c);
}

}  // namespace

Vadam::Vadam(std::vector<::torch::optim::OptimizerParamGroup> param_groups, VadamOptions defaults)
    : MeanFieldOptimizer(param_groups, std::make_unique<VadamOptions>(defaults)) {
  keep_group_options(param_groups);
  check(defaults.ess().has_value(), "Vadam needs the option 'ess' (the training-set size N).");
  validate();
}

Vadam::Vadam(std::vector<::at::Tensor> params, VadamOptions defaults)
    : Vadam(std::vector<::torch::optim::OptimizerParamGroup>{::torch::optim::OptimizerParamGroup(
                std::move(params))},
            std::move(defaults)) {}

const VadamOptions& Vadam::options() const {
  return static_cast<const VadamOptions&>(defaults());
}

int Vadam::training_samples() const {
  return static_cast<int>(options().mc_samples());
}

VadamGroupOptions Vadam::group_options(size_t group) const {
  const VadamOptions& d = options();
  const auto& o = detail::group_options_as<VadamOptions>(param_groups_.at(group), group, name());
  using detail::merged;
  return {o.lr(),
          merged(o.ess(), d.ess(), 0.0),
          merged(o.beta1(), d.beta1(), 0.9),
          merged(o.beta2(), d.beta2(), 0.999),
          merged(o.prior_precision(), d.prior_precision(), 1.0),
          merged(o.prec_init(), d.prec_init(), 1.0)};
}

MeanFieldOptimizer::Precision Vadam::precision(size_t group) const {
  const VadamGroupOptions o = group_options(group);
  return {o.ess, o.prior_precision};
}

double Vadam::initial_curvature(size_t group) const {
  const VadamGroupOptions o = group_options(group);
  return (o.prec_init - o.prior_precision) / o.ess;
}

void Vadam::validate() const {
  check(options().mc_samples() >= 1,
        fmt::format("Option 'mc-samples' must be at least 1; got {}.", options().mc_samples()));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const VadamGroupOptions o = group_options(g);
    check_nonnegative("lr", o.lr);
    check_positive("ess", o.ess);
    check_range("beta1", o.beta1, 0.0, 1.0, false, true);
    check_range("beta2", o.beta2, 0.0, 1.0, false, true);
    check_positive("prior-precision", o.prior_precision);
    check(std::isfinite(o.prec_init) && o.prec_init >= o.prior_precision,
          fmt::format("Option 'prec-init' must be at least the prior precision {}; got {}.",
                      o.prior_precision, o.prec_init));
  }
}

void Vadam::update(size_t group, size_t index, ::at::Tensor& param, Slot& slot, int64_t samples,
                   bool fused) {
  const VadamGroupOptions o = group_options(group);
  const double t = static_cast<double>(step_count());
  const double debias1 = 1.0 / (1.0 - std::pow(o.beta1, t));
  const double debias2 = 1.0 / (1.0 - std::pow(o.beta2, t));
  const double prior = o.prior_precision / o.ess;  // λ̃
  const double inv_samples = 1.0 / static_cast<double>(samples);
  bool ok = true;
  if (fused) {
    AT_DISPATCH_FLOATING_TYPES(param.scalar_type(), "blr_vadam_update", [&] {
      using T = scalar_t;
      const VadamCoefficients<T> c{T(inv_samples), T(o.beta1),       T(1.0 - o.beta1),
                                   T(o.beta2),     T(1.0 - o.beta2), T(prior),
                                   T(debias1),     T(debias2),       T(o.lr)};
      T* mu = param.data_ptr<T>();
      T* m = slot.momentum.data_ptr<T>();
      T* s = slot.curvature.data_ptr<T>();
      const T* gs = slot.grad_sum.data_ptr<T>();
      const T* ss = slot.stat_sum.data_ptr<T>();
      ok = detail::for_each_chunk_ok(param.numel(), [&](int64_t b, int64_t e) {
        return vadam_chunk_of(e - b, mu + b, m + b, s + b, gs + b, ss + b, c);
      });
    });
  } else {
    slot.momentum.mul_(o.beta1).add_(slot.grad_sum.mul(inv_samples).add_(param, prior),
                                     1.0 - o.beta1);
    slot.curvature.mul_(o.beta2).add_(slot.stat_sum, (1.0 - o.beta2) * inv_samples);
    ::at::Tensor denominator = slot.curvature.mul(debias2).sqrt_().add_(prior);
    param.addcdiv_(slot.momentum, denominator, -o.lr * debias1);
    ok = detail::all_finite(param);
  }
  if (!ok) detail::throw_non_finite(name(), step_count(), group, index);
}

}  // namespace blr::torch
