// IVON (ivon.hpp): options, validation and the fused update.
#include "blr/torch/optim/ivon.hpp"

#include <cmath>

#include "kernels.hpp"
#include "options.hpp"

namespace blr::torch {

namespace {

template <class T>
struct IvonCoefficients {
  T inv_samples, beta1, one_minus_beta1, beta2, rho, half_rho2, lambda, delta, debias, lr, clip;
};

/// One IVON update over [0, n): m, h and μ in one pass (see ivon.hpp). Returns 1 when a new μ is
/// not finite.
/// kDirect (one sample, see mean_field.hpp): `grad_sum` is the gradient and `stat_sum` the noise,
/// and x = noise⊙g is formed here — the same numbers as the sums over one sample.
template <class T, bool kPrice, bool kDirect>
BLR_KERNEL_INLINE int ivon_chunk(int64_t n, T* __restrict mu, T* __restrict m, T* __restrict h,
               const T* __restrict grad_sum, const T* __restrict stat_sum,
               const IvonCoefficients<T> c) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T g = kDirect ? grad_sum[i] : grad_sum[i] * c.inv_samples;
    const T x = kDirect ? stat_sum[i] * g : stat_sum[i] * c.inv_samples;
    const T mi = c.beta1 * m[i] + c.one_minus_beta1 * g;
    const T hi = h[i];
    const T hhat = kPrice ? c.lambda * (hi + c.delta) * x : c.lambda * x;
    const T d = hi - hhat;
    const T hn = c.beta2 * hi + c.rho * hhat + c.half_rho2 * d * d / (hi + c.delta);
    T u = (mi * c.debias + c.delta * mu[i]) / (hn + c.delta);
    u = u < -c.clip ? -c.clip : u;
    u = u > c.clip ? c.clip : u;
    const T mn = mu[i] - c.lr * u;
    m[i] = mi;
    h[i] = hn;
    mu[i] = mn;
    bad |= detail::non_finite(mn);
  }
  return bad;
}


BLR_CPU_CLONES int ivon_chunk_of(int64_t n, float* mu, float* m, float* h, const float* grad_sum,
                                 const float* stat_sum, const IvonCoefficients<float>& c, bool price,
                                 bool direct) {
  if (direct) {
    return price ? ivon_chunk<float, true, true>(n, mu, m, h, grad_sum, stat_sum, c)
                 : ivon_chunk<float, false, true>(n, mu, m, h, grad_sum, stat_sum, c);
  }
  return price ? ivon_chunk<float, true, false>(n, mu, m, h, grad_sum, stat_sum, c)
               : ivon_chunk<float, false, false>(n, mu, m, h, grad_sum, stat_sum, c);
}

BLR_CPU_CLONES int ivon_chunk_of(int64_t n, double* mu, double* m, double* h, const double* grad_sum,
                                 const double* stat_sum, const IvonCoefficients<double>& c, bool price,
                                 bool direct) {
  if (direct) {
    return price ? ivon_chunk<double, true, true>(n, mu, m, h, grad_sum, stat_sum, c)
                 : ivon_chunk<double, false, true>(n, mu, m, h, grad_sum, stat_sum, c);
  }
  return price ? ivon_chunk<double, true, false>(n, mu, m, h, grad_sum, stat_sum, c)
               : ivon_chunk<double, false, false>(n, mu, m, h, grad_sum, stat_sum, c);
}

}  // namespace

Ivon::Ivon(std::vector<::torch::optim::OptimizerParamGroup> param_groups, IvonOptions defaults)
    : MeanFieldOptimizer(param_groups, std::make_unique<IvonOptions>(defaults)) {
  keep_group_options(param_groups);
  check(defaults.ess().has_value(),
        "IVON needs the option 'ess' (the effective sample size λ, usually the training-set "
        "size).");
  validate();
}

Ivon::Ivon(std::vector<::at::Tensor> params, IvonOptions defaults)
    : Ivon(std::vector<::torch::optim::OptimizerParamGroup>{::torch::optim::OptimizerParamGroup(
               std::move(params))},
           std::move(defaults)) {}

const IvonOptions& Ivon::options() const {
  return static_cast<const IvonOptions&>(defaults());
}

int Ivon::training_samples() const {
  return static_cast<int>(options().mc_samples());
}

IvonGroupOptions Ivon::group_options(size_t group) const {
  const IvonOptions& d = options();
  const auto& o = detail::group_options_as<IvonOptions>(param_groups_.at(group), group, name());
  using detail::merged;
  return {o.lr(),
          merged(o.ess(), d.ess(), 0.0),
          merged(o.hess_init(), d.hess_init(), 1.0),
          merged(o.beta1(), d.beta1(), 0.9),
          merged(o.beta2(), d.beta2(), 0.99999),
          merged(o.weight_decay(), d.weight_decay(), 1e-4),
          merged(o.clip_radius(), d.clip_radius(), std::numeric_limits<double>::infinity())};
}

MeanFieldOptimizer::Statistic Ivon::statistic() const {
  return options().hess_approx() == IvonHessian::kPrice ? Statistic::kNoiseTimesGradient
                                                        : Statistic::kSquaredGradient;
}

MeanFieldOptimizer::Precision Ivon::precision(size_t group) const {
  const IvonGroupOptions o = group_options(group);
  return {o.ess, o.ess * o.weight_decay};
}

double Ivon::initial_curvature(size_t group) const {
  return group_options(group).hess_init;
}

void Ivon::validate() const {
  check(options().mc_samples() >= 1,
        fmt::format("Option 'mc-samples' must be at least 1; got {}.", options().mc_samples()));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const IvonGroupOptions o = group_options(g);
    check_nonnegative("lr", o.lr);
    check_positive("ess", o.ess);
    check_positive("hess-init", o.hess_init);
    check_range("beta1", o.beta1, 0.0, 1.0);
    check_range("beta2", o.beta2, 0.0, 1.0);
    check_nonnegative("weight-decay", o.weight_decay);
    check(o.clip_radius > 0.0,
          fmt::format("Option 'clip-radius' must be positive (+inf: no clipping); got {}.",
                      o.clip_radius));
  }
}

void Ivon::update(size_t group, size_t index, ::at::Tensor& param, Slot& slot, int64_t samples,
                  bool fused) {
  const IvonGroupOptions o = group_options(group);
  const bool price = options().hess_approx() == IvonHessian::kPrice;
  const double rho = 1.0 - o.beta2;
  const double debias =
      options().debias() ? 1.0 / (1.0 - std::pow(o.beta1, static_cast<double>(step_count()))) : 1.0;
  const double lr = options().rescale_lr() ? o.lr * (o.hess_init + o.weight_decay) : o.lr;
  const double inv_samples = 1.0 / static_cast<double>(samples);
  bool ok = true;
  if (fused) {
    AT_DISPATCH_FLOATING_TYPES(param.scalar_type(), "blr_ivon_update", [&] {
      using T = scalar_t;
      const IvonCoefficients<T> c{
          T(inv_samples),     T(o.beta1), T(1.0 - o.beta1),  T(o.beta2), T(rho),
          T(0.5 * rho * rho), T(o.ess),   T(o.weight_decay), T(debias),  T(lr),
          T(o.clip_radius)};
      T* mu = param.data_ptr<T>();
      T* m = slot.momentum.data_ptr<T>();
      T* h = slot.curvature.data_ptr<T>();
      // One sample read directly: the gradient and the noise instead of their sums.
      const bool direct = slot.pending_grad.defined();
      const T* gs = direct ? slot.pending_grad.data_ptr<T>() : slot.grad_sum.data_ptr<T>();
      const T* ss = direct ? slot.noise.data_ptr<T>() : slot.stat_sum.data_ptr<T>();
      ok = detail::for_each_chunk_ok(param.numel(), [&](int64_t b, int64_t e) {
        return ivon_chunk_of(e - b, mu + b, m + b, h + b, gs + b, ss + b, c, price, direct);
      });
      slot.pending_grad = ::at::Tensor();
    });
  } else {
    const bool direct = slot.pending_grad.defined();  // one sample, read directly
    ::at::Tensor g = direct ? slot.pending_grad : slot.grad_sum.mul(inv_samples);
    ::at::Tensor x = direct ? slot.noise.mul(slot.pending_grad) : slot.stat_sum.mul(inv_samples);
    slot.pending_grad = ::at::Tensor();
    ::at::Tensor& h = slot.curvature;
    slot.momentum.mul_(o.beta1).add_(g, 1.0 - o.beta1);
    ::at::Tensor hhat = price ? x.mul_(h.add(o.weight_decay)).mul_(o.ess) : x.mul_(o.ess);
    ::at::Tensor d = h.sub(hhat);
    ::at::Tensor correction = d.square_().div_(h.add(o.weight_decay)).mul_(0.5 * rho * rho);
    h.mul_(o.beta2).add_(hhat, rho).add_(correction);
    ::at::Tensor u =
        slot.momentum.mul(debias).add_(param, o.weight_decay).div_(h.add(o.weight_decay));
    if (std::isfinite(o.clip_radius)) u.clamp_(-o.clip_radius, o.clip_radius);
    param.add_(u, -lr);
    ok = detail::all_finite(param);
  }
  if (!ok) detail::throw_non_finite(name(), step_count(), group, index);
}

}  // namespace blr::torch
