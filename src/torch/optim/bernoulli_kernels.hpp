// Internal: the fused CPU passes of BayesBiNN (blr/torch/optim/bayesbinn.hpp) and the vectorisable
// functions they need.
//
// The relaxation's formulas are the core's (estimator/concrete.hpp), evaluated on KernelScalar<T>:
// a float or double whose arithmetic with a double constant rounds the constant to T first (as a
// tensor operation with a scalar does), and whose tanh_of and log_of are the branch-free
// polynomials below, so that a loop over them vectorises (libm's tanhf costs 14 ns an element).
//
//   log x   = kernels.hpp's log_unit (x = 2^e·m, atanh series; any positive normal x)
//   expm1 y = 2^k·expm1(r) + (2^k − 1), y ≤ 0, k = nearest(y/ln 2), r = y − k·ln 2 (two-part
//             ln 2), expm1(r) by its Taylor series
//   tanh x  = sign(x)·(−m)/(2 + m),  m = expm1(−2|x|)   (no cancellation at small |x|)
//
// Each is within a few units in the last place of the correctly rounded value
// (tests/torch/optim/bayesbinn_fused_test.cpp measures them), and rounds the same on every instruction
// set (no FMA contraction). The uniforms of a training sample come from the counter-based
// generator of the Gaussian passes (kernels.hpp), keyed by (seed, draw, parameter, chunk): the
// noise does not depend on the number of threads.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "blr/algorithms/bayesbinn.hpp"
#include "blr/estimator/concrete.hpp"
#include "kernels.hpp"

namespace blr::torch::detail {

/// 1/(k + offset)! for k = 0 … kTerms − 1 (Taylor coefficients of exp, offset 0, and of
/// expm1(y)/y, offset 1).
template <int kTerms>
constexpr std::array<double, kTerms> inverse_factorials(int offset) {
  std::array<double, kTerms> c{};
  double factorial = 1.0;
  for (int n = 2; n <= offset; ++n) factorial *= n;
  for (int k = 0; k < kTerms; ++k) {
    c[k] = 1.0 / factorial;
    factorial *= k + 1 + offset;
  }
  return c;
}

/// expm1(y) for y ≤ 0: y = k·ln 2 + r (k = nearest(y/ln 2), two-part ln 2, |r| ≤ ½ln 2),
/// expm1(y) = 2^k·expm1(r) + (2^k − 1), expm1(r) by its Taylor series. Below the clamp (−87 in
/// float, −708 in double) the result is −1 to T's precision.
template <class T>
BLR_KERNEL_INLINE T expm1_nonpositive(T y) {
  constexpr bool kFloat = std::is_same_v<T, float>;
  using U = std::conditional_t<kFloat, uint32_t, uint64_t>;
  constexpr int kMantissa = kFloat ? 23 : 52;
  constexpr T kMagic = T(1.5) * T(U{1} << kMantissa);  // adding it rounds to an integer
  constexpr T kLowest = kFloat ? T(-87) : T(-708);
  y = y < kLowest ? kLowest : y;
  const T shifted = y * T(1.44269504088896340736) + kMagic;
  const T k = shifted - kMagic;
  const T r = (y - k * T(0.693145751953125)) - k * T(1.42860682030941723212e-6);
  // r^n/n! up to n = 8 (float) or 14 (double): the next term is below T's ulp of |r|.
  constexpr int kTerms = kFloat ? 8 : 14;
  constexpr auto c = inverse_factorials<kTerms>(1);
  T p = T(c[kTerms - 1]);
  for (int n = kTerms - 2; n >= 0; --n) p = T(c[n]) + r * p;
  p = r * p;
  // 2^k from k's integer in the low bits of `shifted` (two's complement within the mantissa).
  const U k_bits = std::bit_cast<U>(shifted) - std::bit_cast<U>(kMagic);
  const T two_k = std::bit_cast<T>((k_bits + U(kFloat ? 127 : 1023)) << kMantissa);
  return two_k * p + (two_k - T(1));
}

/// tanh(x) = sign(x)·(−m)/(2 + m), m = expm1(−2|x|): branch-free, one division.
template <class T>
BLR_KERNEL_INLINE T tanh_kernel(T x) {
  const T m = expm1_nonpositive(T(-2) * std::abs(x));
  const T t = -m / (T(2) + m);
  return x < T(0) ? -t : t;
}

/// A float or double for the core's formulas inside the fused loops (see the file's header).
template <class T>
struct KernelScalar {
  T v;
};

template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator+(KernelScalar<T> a, KernelScalar<T> b) {
  return {a.v + b.v};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator-(KernelScalar<T> a, KernelScalar<T> b) {
  return {a.v - b.v};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator*(KernelScalar<T> a, KernelScalar<T> b) {
  return {a.v * b.v};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator/(KernelScalar<T> a, KernelScalar<T> b) {
  return {a.v / b.v};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator+(KernelScalar<T> a, double b) {
  return {a.v + static_cast<T>(b)};
}
/// Division by a constant multiplies by its reciprocal, as a tensor divided by a scalar does.
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator/(KernelScalar<T> a, double b) {
  return {a.v * static_cast<T>(1.0 / b)};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator-(double a, KernelScalar<T> b) {
  return {static_cast<T>(a) - b.v};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> operator*(double a, KernelScalar<T> b) {
  return {static_cast<T>(a) * b.v};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> tanh_of(KernelScalar<T> x) {
  return {tanh_kernel(x.v)};
}
template <class T>
BLR_KERNEL_INLINE KernelScalar<T> log_of(KernelScalar<T> x) {
  return {log_unit(x.v)};
}

/// Fills u[0, kBlock) with uniforms on (0, 1) from elements index0 … of the stream `key`
/// (23-bit in float, 31-bit in double, centred in their cells so that 1 − u is exact too).
template <class T>
BLR_KERNEL_INLINE void fill_uniforms(T* __restrict u, uint64_t key, uint32_t index0) {
  constexpr int kBits = std::is_same_v<T, float> ? 23 : 31;
  constexpr T kScale = T(1) / T(uint64_t{1} << kBits);
  const uint32_t k1 = static_cast<uint32_t>(key);
  const uint32_t k2 = static_cast<uint32_t>(key >> 32);
  for (int64_t t = 0; t < kBlock; ++t) {
    const uint32_t w = mix32(mix32((index0 + static_cast<uint32_t>(t)) ^ k1) + k2);
    u[t] = (static_cast<T>(static_cast<int32_t>(w >> (32 - kBits))) + T(0.5)) * kScale;
  }
}

/// The training sample of one parameter: w ← θ̂ = tanh((λ + δ(ε))/τ) (eq. 50), ε from `uniforms`
/// when not null, else from the generator (stream `source`).
template <class T>
struct RelaxedSampleArgs {
  const T* natural;
  T* param;
  const T* uniforms;
  double temperature;
  NoiseSource source;
};

/// |x| from which tanh_kernel(x) is ±1 exactly (1 − tanh x ≈ 2e^{−2|x|} is below half an ulp of
/// 1 from 9.0 in float and 19.1 in double; tests/torch/optim/bayesbinn_fused_test.cpp checks the values).
template <class T>
inline constexpr T kTanhSaturated = std::is_same_v<T, float> ? T(10) : T(20);

/// θ̂ = tanh(a), a = (λ + δ)/τ, for one block. With a small τ (the default 10⁻¹⁰) nearly every
/// |a| is far beyond kTanhSaturated: a block where all are is given ±1 without the tanh, which
/// is the value tanh_kernel returns there (a NaN counts as unsaturated and propagates).
template <class T>
BLR_KERNEL_INLINE void relaxed_sample_block(int64_t m, const T* __restrict natural,
                                            T* __restrict param, const T* __restrict u,
                                            double temperature, T* __restrict argument) {
  using K = KernelScalar<T>;
  int open = 0;
  for (int64_t k = 0; k < m; ++k) {
    const K delta = concrete::logistic_noise<K>(K{u[k]});
    const T a = concrete::relaxed_argument<K>(K{natural[k]}, delta, temperature).v;
    argument[k] = a;
    open += !(std::abs(a) >= kTanhSaturated<T>);
  }
  if (open == 0) {
    for (int64_t k = 0; k < m; ++k) param[k] = argument[k] < T(0) ? T(-1) : T(1);
  } else {
    for (int64_t k = 0; k < m; ++k) param[k] = tanh_of(K{argument[k]}).v;
  }
}

/// The sampling pass over chunk `chunk` = [begin, end), one L1-resident block of uniforms at a
/// time.
template <class T>
BLR_KERNEL_INLINE void relaxed_sample_chunk(const RelaxedSampleArgs<T>& s, int64_t chunk,
                                            int64_t begin, int64_t end) {
  const uint64_t key =
      stream_key(s.source.seed, s.source.draw, s.source.param, static_cast<uint64_t>(chunk));
  alignas(64) T z[kBlock];
  alignas(64) T argument[kBlock];
  for (int64_t b0 = begin; b0 < end; b0 += kBlock) {
    const int64_t m = std::min(kBlock, end - b0);
    const T* u = z;
    if (s.uniforms != nullptr) {
      u = s.uniforms + b0;
    } else {
      fill_uniforms(z, key, static_cast<uint32_t>(b0 - begin));
    }
    relaxed_sample_block(m, s.natural + b0, s.param + b0, u, s.temperature, argument);
  }
}

/// The binary weight sign(λ) (λ ≤ 0 → −1, the reference's "mean mode").
template <class T>
BLR_KERNEL_INLINE T binary_weight(T natural) {
  return natural > T(0) ? T(1) : T(-1);
}

/// The restore pass: Σ ← Σ + s⊙∇ℓ̄(θ̂) with s = (1 − θ̂² + 10⁻¹⁰)/(τ(1 − μ² + 10⁻¹⁰)), μ = tanh λ
/// (eq. 51), θ̂ read from the parameter, which then receives the binary weights sign(λ). The
/// denominator is made here from λ rather than stored: the pass is memory-bound in training.
/// `grad` null: a gradient of zero.
template <class T>
struct RelaxedRestoreArgs {
  T* param;
  const T* grad;
  const T* natural;
  T* grad_sum;
  double temperature;
  bool first;
};

template <class T, bool kFirst, bool kGradient, bool kSaturated>
BLR_KERNEL_INLINE void relaxed_restore_block(const RelaxedRestoreArgs<T>& a, int64_t b0,
                                             int64_t b1) {
  using K = KernelScalar<T>;
  T* __restrict param = a.param;
  const T* __restrict grad = a.grad;
  const T* __restrict natural = a.natural;
  T* __restrict grad_sum = a.grad_sum;
  for (int64_t i = b0; i < b1; ++i) {
    const T w = binary_weight(natural[i]);
    T term = T(0);
    if constexpr (kGradient) {
      K mean;
      if constexpr (kSaturated) {
        mean = K{w};
      } else {
        mean = tanh_of(K{natural[i]});
      }
      const K denominator = concrete::relaxation_denominator<K>(mean, a.temperature);
      term = (concrete::relaxation_scale<K>(K{param[i]}, denominator) * K{grad[i]}).v;
    }
    if constexpr (kFirst) {
      grad_sum[i] = term;
    } else {
      grad_sum[i] += term;
    }
    param[i] = w;
  }
}

template <class T, bool kFirst, bool kGradient>
BLR_KERNEL_INLINE void relaxed_restore_range(const RelaxedRestoreArgs<T>& a, int64_t begin,
                                             int64_t end) {
  for (int64_t b0 = begin; b0 < end; b0 += kBlock) {
    const int64_t b1 = std::min(end, b0 + kBlock);
    // μ = tanh λ is sign(λ) where every |λ| of the block is saturated (as in the sample).
    int open = 0;
    for (int64_t i = b0; i < b1; ++i) open += !(std::abs(a.natural[i]) >= kTanhSaturated<T>);
    if (open == 0) {
      relaxed_restore_block<T, kFirst, kGradient, true>(a, b0, b1);
    } else {
      relaxed_restore_block<T, kFirst, kGradient, false>(a, b0, b1);
    }
  }
}

template <class T>
BLR_KERNEL_INLINE void relaxed_restore_chunk(const RelaxedRestoreArgs<T>& a, int64_t b, int64_t e) {
  if (a.first) {
    a.grad ? relaxed_restore_range<T, true, true>(a, b, e)
           : relaxed_restore_range<T, true, false>(a, b, e);
  } else {
    a.grad ? relaxed_restore_range<T, false, true>(a, b, e)
           : relaxed_restore_range<T, false, false>(a, b, e);
  }
}

/// The step pass (eq. 52 with the averaged natural gradient, bayesbinn_natural_step): λ' and u'
/// into new buffers, so that a non-finite λ' leaves the state as it was, and the binary weights
/// sign(λ') into the parameter (which the caller resets to sign(λ) if the step is refused).
/// `prior` null: the scalar λ₀. Returns 1 when a λ' is not finite.
template <class T>
struct BernoulliStepArgs {
  const T* natural;
  const T* average;
  const T* grad_sum;
  const T* prior;
  T* new_natural;
  T* new_average;
  T* param;
  double grad_scale;  ///< N / K
  double prior_natural, beta, lr;
  long t;
};

template <class T, bool kPriorArray>
BLR_KERNEL_INLINE int bernoulli_step_loop(int64_t begin, int64_t end, const T* __restrict natural,
                                          const T* __restrict average, const T* __restrict grad_sum,
                                          const T* __restrict prior, T prior_scalar,
                                          T* __restrict new_natural, T* __restrict new_average,
                                          T* __restrict param, T scale, double beta, long t,
                                          double lr) {
  int bad = 0;
  for (int64_t i = begin; i < end; ++i) {
    T lambda, u;
    bayesbinn_natural_step<T>(natural[i], grad_sum[i] * scale,
                              kPriorArray ? prior[i] : prior_scalar, average[i], beta, t, lr,
                              lambda, u);
    new_natural[i] = lambda;
    new_average[i] = u;
    param[i] = binary_weight(lambda);
    bad |= non_finite(lambda);
  }
  return bad;
}

template <class T>
BLR_KERNEL_INLINE int bernoulli_step_range(const BernoulliStepArgs<T>& a, int64_t begin,
                                           int64_t end) {
  const T scale = static_cast<T>(a.grad_scale);
  const T prior = static_cast<T>(a.prior_natural);
  return a.prior != nullptr
             ? bernoulli_step_loop<T, true>(begin, end, a.natural, a.average, a.grad_sum, a.prior,
                                            prior, a.new_natural, a.new_average, a.param, scale,
                                            a.beta, a.t, a.lr)
             : bernoulli_step_loop<T, false>(begin, end, a.natural, a.average, a.grad_sum, a.prior,
                                             prior, a.new_natural, a.new_average, a.param, scale,
                                             a.beta, a.t, a.lr);
}

}  // namespace blr::torch::detail
