// Internal: fused CPU kernels of the mean-field Gaussian optimizers and their noise generator.
//
// Each kernel makes one pass over a parameter's buffers, split into chunks of kChunk elements
// that at::parallel_for hands to threads. The standard normal draws of a chunk come from a
// counter-based generator keyed by (seed, draw, parameter, chunk), so the noise does not depend on
// the number of threads. Within a chunk, normals are made kBlock at a time into an L1-resident
// buffer by a branch-free Box–Muller transform (own polynomial log, sin and cos; the hardware's
// correctly rounded square root, which vectorises because the project builds with
// -fno-math-errno) that the compiler vectorises:
//
//   w1, w2 = two keyed hashes of the pair counter;  u = uniform(w1) ∈ (0,1);  v = uniform(w2);
//   r = sqrt(−2 log u);  ψ = π(v − ½) ∈ (−π/2, π/2);  s = ±1 from a spare bit of w2;
//   z_cos = s·r·cos ψ,  z_sin = s·r·sin ψ   (the angle ψ or ψ + π is uniform on the circle).
//
// Float normals use 23-bit uniforms (|z| ≤ 5.8), double normals 31-bit uniforms (|z| ≤ 6.6).
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "blr/core/cpu_clones.hpp"

namespace blr::torch::detail {

// The sampling helpers are forced inline so that a multiversioned caller (mean_field.cpp) compiles
// them for its own instruction set.
#if defined(__GNUC__)
#define BLR_KERNEL_INLINE [[gnu::always_inline]] inline
#else
#define BLR_KERNEL_INLINE inline
#endif

constexpr int64_t kChunk = int64_t{1} << 14;  ///< elements per task and per noise stream
constexpr int64_t kBlock = 256;               ///< normals generated at a time (even)

/// The splitmix64 finaliser (a bijection with full avalanche).
BLR_KERNEL_INLINE uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Key of the noise stream of one chunk of one parameter at one draw.
BLR_KERNEL_INLINE uint64_t stream_key(uint64_t seed, uint64_t draw, uint64_t param,
                                      uint64_t chunk) {
  return mix64(mix64(mix64(mix64(seed) ^ draw) ^ param) ^ chunk);
}

/// 32-bit avalanche mix (the MurmurHash3 finaliser).
BLR_KERNEL_INLINE uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

/// Natural log of a positive normal x (the sampling passes take it of uniforms in (0, 1] and of
/// u/(1 − u); tests/torch/optim/bayesbinn_fused_test.cpp measures 10⁻³⁰ … 10³⁰): x = 2^e·m with
/// m ∈ [√½, √2) (found by integer arithmetic, without branches), log m = 2·atanh(s) =
/// 2(s + s³/3 + s⁵/5 + …), s = (m−1)/(m+1), |s| ≤ 0.1716.
template <class T>
BLR_KERNEL_INLINE T log_unit(T x) {
  constexpr bool kFloat = std::is_same_v<T, float>;
  using U = std::conditional_t<kFloat, uint32_t, uint64_t>;
  constexpr int kMantissa = kFloat ? 23 : 52;
  constexpr U kOne = std::bit_cast<U>(T(1));
  constexpr U kSqrtHalf = std::bit_cast<U>(T(0.70710678118654752440));
  const U shifted = std::bit_cast<U>(x) + (kOne - kSqrtHalf);
  const T e = static_cast<T>(static_cast<int32_t>(shifted >> kMantissa) -
                             static_cast<int32_t>(kOne >> kMantissa));
  const T m = std::bit_cast<T>((shifted & ((U{1} << kMantissa) - 1)) + kSqrtHalf);
  const T s = (m - T(1)) / (m + T(1));
  const T s2 = s * s;
  T p;
  if constexpr (kFloat) {
    p = T(2) + s2 * (T(2.0 / 3) + s2 * (T(2.0 / 5) + s2 * (T(2.0 / 7) + s2 * T(2.0 / 9))));
  } else {
    p = T(2.0 / 19);
    for (int k = 17; k >= 1; k -= 2) p = T(2.0 / k) + s2 * p;
  }
  return e * T(0.69314718055994531) + s * p;
}

/// Taylor coefficients (−1)^k/(2k+1+odd_offset)!: sine (offset 1) or cosine (offset 0) series.
template <int kTerms>
constexpr std::array<double, kTerms> taylor_coefficients(int offset) {
  std::array<double, kTerms> c{};
  double factorial = 1.0;
  for (int n = 1; n <= offset; ++n) factorial *= n;
  for (int k = 0; k < kTerms; ++k) {
    c[k] = ((k % 2) ? -1.0 : 1.0) / factorial;
    factorial *= (2.0 * k + 1 + offset) * (2.0 * k + 2 + offset);
  }
  return c;
}

/// sin ψ and cos ψ for |ψ| ≤ π/2 (Taylor polynomials; error < 1e-9 in float, 1e-17 in double).
template <class T>
BLR_KERNEL_INLINE void sin_cos_half_turn(T psi, T& sine, T& cosine) {
  constexpr int kTerms = std::is_same_v<T, float> ? 7 : 11;  // highest powers 13/14 or 21/22
  constexpr auto kSin = taylor_coefficients<kTerms>(1);
  constexpr auto kCos = taylor_coefficients<kTerms>(0);
  const T x2 = psi * psi;
  T s = T(kSin[kTerms - 1]), c = T(kCos[kTerms - 1]);
  for (int k = kTerms - 2; k >= 0; --k) {
    s = T(kSin[k]) + x2 * s;
    c = T(kCos[k]) + x2 * c;
  }
  sine = psi * s;
  cosine = c;
}

/// Fills z[0, kBlock) with standard normals from pairs pair0 … pair0 + kBlock/2 − 1 of the stream
/// `key`: z[t] is the cosine draw and z[kBlock/2 + t] the sine draw of pair pair0 + t.
template <class T>
BLR_KERNEL_INLINE void fill_normals(T* __restrict z, uint64_t key, uint32_t pair0) {
  constexpr int kBits = std::is_same_v<T, float> ? 23 : 31;  // uniform resolution
  constexpr T kScale = T(1) / T(uint64_t{1} << kBits);
  constexpr int64_t kHalf = kBlock / 2;
  const uint32_t k1 = static_cast<uint32_t>(key);
  const uint32_t k2 = static_cast<uint32_t>(key >> 32);
  for (int64_t t = 0; t < kHalf; ++t) {
    const uint32_t j = 2u * (pair0 + static_cast<uint32_t>(t));
    const uint32_t w1 = mix32(mix32(j ^ k1) + k2);
    const uint32_t w2 = mix32(mix32((j + 1u) ^ k1) + k2);
    const T u = (static_cast<T>(static_cast<int32_t>(w1 >> (32 - kBits))) + T(0.5)) * kScale;
    const T v = (static_cast<T>(static_cast<int32_t>(w2 >> (32 - kBits))) + T(0.5)) * kScale;
    const T sign = T(1) - T(2) * static_cast<T>(static_cast<int32_t>(w2 & 1u));
    const T radius2 = T(-2) * log_unit(u);
    const T r = sign * std::sqrt(radius2);  // correctly rounded; vectorised (-fno-math-errno)
    T sine, cosine;
    sin_cos_half_turn(T(3.14159265358979323846) * (v - T(0.5)), sine, cosine);
    z[t] = r * cosine;
    z[kHalf + t] = r * sine;
  }
}

/// Runs f(chunk_index, begin, end) over [0, n) in chunks of kChunk, in parallel.
template <class F>
inline void for_each_chunk(int64_t n, const F& f) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  ::at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) f(c, c * kChunk, std::min(n, (c + 1) * kChunk));
  });
}

/// Runs f(begin, end) → int over the chunks of [0, n) in parallel; true when every call returned
/// 0 (the update kernels return 1 when they wrote a non-finite value).
template <class F>
inline bool for_each_chunk_ok(int64_t n, const F& f) {
  std::atomic<int> bad{0};
  for_each_chunk(n, [&](int64_t, int64_t begin, int64_t end) {
    if (f(begin, end) != 0) bad.store(1, std::memory_order_relaxed);
  });
  return bad.load() == 0;
}

/// 1 when v is NaN or infinite (branch-free, for integer OR-reductions in vectorised loops).
template <class T>
inline int non_finite(T v) {
  return !(std::abs(v) <= std::numeric_limits<T>::max());
}

/// Where the noise of a sample comes from: the generator (eps == nullptr) or given ε.
struct NoiseSource {
  uint64_t seed = 0, draw = 0, param = 0;
};

/// The sampling pass over one parameter: θ ← μ + ε/sqrt(a·c + b) into a buffer of its own (the
/// optimizer then swaps it with μ, so μ is neither copied nor overwritten), keeping the
/// perturbation ε/sqrt(a·c + b) in `noise` when it is not null. ε comes from `eps` when not null,
/// else from the generator (stream `source`).
template <class T>
struct SampleArgs {
  const T* mean;
  T* theta;
  const T* curvature;
  T a, b;
  T* noise;
  const T* eps;
  NoiseSource source;
};

template <class T, bool kKeepNoise>
BLR_KERNEL_INLINE void sample_block(int64_t m, const T* __restrict mean, T* __restrict theta,
                                    const T* __restrict curvature, T a, T b, T* __restrict noise,
                                    const T* __restrict e) {
  for (int64_t k = 0; k < m; ++k) {
    const T delta = e[k] / std::sqrt(a * curvature[k] + b);
    theta[k] = mean[k] + delta;
    if constexpr (kKeepNoise) noise[k] = delta;
  }
}

/// The sampling pass over chunk `chunk` = [begin, end): noise generation and update fused, one
/// L1-resident block of kBlock normals at a time.
template <class T>
BLR_KERNEL_INLINE void sample_chunk(const SampleArgs<T>& s, int64_t chunk, int64_t begin,
                                    int64_t end) {
  const uint64_t key =
      stream_key(s.source.seed, s.source.draw, s.source.param, static_cast<uint64_t>(chunk));
  alignas(64) T z[kBlock];
  for (int64_t b0 = begin; b0 < end; b0 += kBlock) {
    const int64_t m = std::min(kBlock, end - b0);
    const T* e = z;
    if (s.eps != nullptr) {
      e = s.eps + b0;
    } else {
      fill_normals(z, key, static_cast<uint32_t>((b0 - begin) / 2));
    }
    if (s.noise != nullptr) {
      sample_block<T, true>(m, s.mean + b0, s.theta + b0, s.curvature + b0, s.a, s.b, s.noise + b0,
                            e);
    } else {
      sample_block<T, false>(m, s.mean + b0, s.theta + b0, s.curvature + b0, s.a, s.b, nullptr, e);
    }
  }
}

/// True when the fused CPU passes apply to `t`: a contiguous float or double tensor on the CPU.
inline bool fused_layout(const ::at::Tensor& t) {
  return t.device().is_cpu() && t.layout() == ::at::kStrided && t.is_contiguous() &&
         (t.scalar_type() == ::at::kFloat || t.scalar_type() == ::at::kDouble);
}

/// The sampling pass over a whole parameter of n elements, chunks in parallel, one clone per
/// instruction set (defined in mean_field.cpp; bSAM draws its points with it too).
void sample_pass(const SampleArgs<float>& s, int64_t n);
void sample_pass(const SampleArgs<double>& s, int64_t n);

/// What restore collects besides the gradient sum.
enum class Collect { kGradient, kNoiseTimesGradient, kSquaredGradient };

/// The sums  Σg (grad_sum) and Σ noise⊙g or Σ g² (stat_sum) over [begin, end) of one parameter in
/// one pass (μ itself comes back by a buffer swap, without a copy). `first`: the sums start at
/// this sample (written, not added); then, with kNoiseTimesGradient, stat_sum may alias noise
/// (noise⊙g written over the noise).
template <class T>
struct RestoreArgs {
  const T* grad;
  T* grad_sum;
  const T* noise;
  T* stat_sum;
  Collect collect;
  bool first;
};

template <class T, Collect kCollect, bool kFirst>
BLR_KERNEL_INLINE void restore_range(int64_t begin, int64_t end, const T* __restrict grad,
                                     T* __restrict grad_sum, const T* noise, T* stat_sum) {
  for (int64_t i = begin; i < end; ++i) {
    const T g = grad[i];
    if constexpr (kFirst) {
      grad_sum[i] = g;
    } else {
      grad_sum[i] += g;
    }
    if constexpr (kCollect == Collect::kNoiseTimesGradient) {
      const T x = noise[i] * g;
      if constexpr (kFirst) {
        stat_sum[i] = x;
      } else {
        stat_sum[i] += x;
      }
    } else if constexpr (kCollect == Collect::kSquaredGradient) {
      if constexpr (kFirst) {
        stat_sum[i] = g * g;
      } else {
        stat_sum[i] += g * g;
      }
    }
  }
}

template <class T>
BLR_KERNEL_INLINE void restore_chunk(const RestoreArgs<T>& a, int64_t begin, int64_t end) {
  auto run = [&]<Collect kCollect>() {
    if (a.first) {
      restore_range<T, kCollect, true>(begin, end, a.grad, a.grad_sum, a.noise, a.stat_sum);
    } else {
      restore_range<T, kCollect, false>(begin, end, a.grad, a.grad_sum, a.noise, a.stat_sum);
    }
  };
  switch (a.collect) {
    case Collect::kGradient: run.template operator()<Collect::kGradient>(); break;
    case Collect::kNoiseTimesGradient: run.template operator()<Collect::kNoiseTimesGradient>(); break;
    case Collect::kSquaredGradient: run.template operator()<Collect::kSquaredGradient>(); break;
  }
}

}  // namespace blr::torch::detail
