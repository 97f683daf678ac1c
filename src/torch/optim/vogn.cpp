// VOGN and OGN (vogn.hpp): options, validation and the fused update.
#include "blr/torch/optim/vogn.hpp"

#include <cmath>

#include "kernels.hpp"
#include "options.hpp"

namespace blr::torch {

namespace {

template <class T>
struct VognCoefficients {
  T inv_samples, beta1, rate, one_minus_rate, prior, floor, lr;
};

/// One VOGN update over [0, n): m, s and μ in one pass (see vogn.hpp).
template <class T>
BLR_KERNEL_INLINE int vogn_chunk(int64_t n, T* __restrict mu, T* __restrict m, T* __restrict s,
               const T* __restrict grad_sum, const T* __restrict squared_sum,
               const VognCoefficients<T> c) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T g = grad_sum[i] * c.inv_samples;
    const T d = squared_sum[i] * c.inv_samples;
    const T mi = c.beta1 * m[i] + (g + c.prior * mu[i]);
    const T si = c.one_minus_rate * s[i] + c.rate * d;
    const T mn = mu[i] - c.lr * mi / (si + c.floor);
    m[i] = mi;
    s[i] = si;
    mu[i] = mn;
    bad |= detail::non_finite(mn);
  }
  return bad;
}


BLR_CPU_CLONES int vogn_chunk_of(int64_t n, float* mu, float* m, float* s, const float* grad_sum,
                              const float* stat_sum, const VognCoefficients<float>& c) {
  return vogn_chunk<float>(n, mu, m, s, grad_sum, stat_sum, c);
}

BLR_CPU_CLONES int vogn_chunk_of(int64_t n, double* mu, double* m, double* s, const double* grad_sum,
                              const double* stat_sum, const VognCoefficients<double>& c) {
  return vogn_chunk<double>(n, mu, m, s, grad_sum, stat_sum, c);
}

}  // namespace

Vogn::Vogn(std::vector<::torch::optim::OptimizerParamGroup> param_groups, VognOptions defaults)
    : MeanFieldOptimizer(param_groups, std::make_unique<VognOptions>(defaults)) {
  keep_group_options(param_groups);
  check(defaults.ess().has_value(), "VOGN needs the option 'ess' (the training-set size N).");
  validate();
}

Vogn::Vogn(std::vector<::at::Tensor> params, VognOptions defaults)
    : Vogn(std::vector<::torch::optim::OptimizerParamGroup>{::torch::optim::OptimizerParamGroup(
               std::move(params))},
           std::move(defaults)) {}

const VognOptions& Vogn::options() const {
  return static_cast<const VognOptions&>(defaults());
}

int Vogn::training_samples() const {
  return static_cast<int>(options().mc_samples());
}

VognGroupOptions Vogn::group_options(size_t group) const {
  const VognOptions& d = options();
  const auto& o = detail::group_options_as<VognOptions>(param_groups_.at(group), group, name());
  using detail::merged;
  return {o.lr(),
          merged(o.ess(), d.ess(), 0.0),
          merged(o.prior_precision(), d.prior_precision(), 1.0),
          merged(o.damping(), d.damping(), 0.0),
          merged(o.beta1(), d.beta1(), 0.9),
          merged(o.curvature_rate(), d.curvature_rate(), 0.01),
          merged(o.hess_init(), d.hess_init(), 0.01)};
}

MeanFieldOptimizer::Precision Vogn::precision(size_t group) const {
  // N(s + δ̃ + γ) = N·s + δ + N·γ.
  const VognGroupOptions o = group_options(group);
  return {o.ess, o.prior_precision + o.ess * o.damping};
}

double Vogn::initial_curvature(size_t group) const {
  return group_options(group).hess_init;
}

void Vogn::validate() const {
  check(options().mc_samples() >= 1,
        fmt::format("Option 'mc-samples' must be at least 1; got {}.", options().mc_samples()));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const VognGroupOptions o = group_options(g);
    check_nonnegative("lr", o.lr);
    check_positive("ess", o.ess);
    check_positive("prior-precision", o.prior_precision);
    check_nonnegative("damping", o.damping);
    check_range("beta1", o.beta1, 0.0, 1.0, false, true);
    check_range("curvature-rate", o.curvature_rate, 0.0, 1.0, true, false);
    check_nonnegative("hess-init", o.hess_init);
  }
}

void Vogn::update(size_t group, size_t index, ::at::Tensor& param, Slot& slot, int64_t samples,
                  bool fused) {
  const VognGroupOptions o = group_options(group);
  const double prior = o.prior_precision / o.ess;  // δ̃
  const double inv_samples = 1.0 / static_cast<double>(samples);
  bool ok = true;
  if (fused) {
    ::at::Tensor squared = slot.squared_sum.to(param.options()).contiguous();
    AT_DISPATCH_FLOATING_TYPES(param.scalar_type(), "blr_vogn_update", [&] {
      using T = scalar_t;
      const VognCoefficients<T> c{T(inv_samples),
                                  T(o.beta1),
                                  T(o.curvature_rate),
                                  T(1.0 - o.curvature_rate),
                                  T(prior),
                                  T(prior + o.damping),
                                  T(o.lr)};
      T* mu = param.data_ptr<T>();
      T* m = slot.momentum.data_ptr<T>();
      T* s = slot.curvature.data_ptr<T>();
      const T* gs = slot.grad_sum.data_ptr<T>();
      const T* sq = squared.data_ptr<T>();
      ok = detail::for_each_chunk_ok(param.numel(), [&](int64_t b, int64_t e) {
        return vogn_chunk_of(e - b, mu + b, m + b, s + b, gs + b, sq + b, c);
      });
    });
  } else {
    slot.momentum.mul_(o.beta1).add_(slot.grad_sum, inv_samples).add_(param, prior);
    slot.curvature.mul_(1.0 - o.curvature_rate)
        .add_(slot.squared_sum, o.curvature_rate * inv_samples);
    param.addcdiv_(slot.momentum, slot.curvature.add(prior + o.damping), -o.lr);
    ok = detail::all_finite(param);
  }
  if (!ok) detail::throw_non_finite(name(), step_count(), group, index);
}

}  // namespace blr::torch
