// Micro-benchmarks of the Gaussian BLR step (docs/benchmarks.md).
//
// 1. Diagonal step (IVON and VOGN policies) for d = 1e5 … 1e7, reported as achieved memory
//    bandwidth (bytes the step must move: IVON reads ĝ, ĥ, m, s, u and writes m, s, u = 64 B per
//    coordinate) beside a STREAM triad a = b + k·c (24 B per element) run in the same process.
//    Goal: ≥ 60% of the triad's bandwidth. Single-threaded, like the step. A second triad runs on
//    the step's working set (8d doubles): at d = 1e6 the triad's 24 MB fit in L3, the step's 64 MB
//    do not, and only the second triad compares like with like.
// 2. Full-Gaussian Gauss–Newton step with one example: rank-one Cholesky update, O(d²), against
//    refactorising (1−ρ)S + ρggᵀ, O(d³), for d = 100 … 2000.
#include <benchmark/benchmark.h>

#include "blr/core/rng.hpp"
#include "blr/algorithms/ivon.hpp"
#include "blr/algorithms/ogn_vogn.hpp"
#include "blr/rule/gaussian_rule.hpp"

namespace {

using blr::Index;
using blr::Vector;

void stream_triad(benchmark::State& st, Index d) {
  Vector a = Vector::Zero(d), b = Vector::Ones(d), c = Vector::Constant(d, 2.0);
  const double k = 0.5;
  for (auto _ : st) {
    double* pa = a.data();
    const double* pb = b.data();
    const double* pc = c.data();
    for (Index i = 0; i < d; ++i) pa[i] = pb[i] + k * pc[i];
    benchmark::DoNotOptimize(pa);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * d * 3 * 8);
}

/// The triad on d elements per array.
void BM_StreamTriad(benchmark::State& st) { stream_triad(st, st.range(0)); }

/// The triad with the working set of a d-coordinate step (8 arrays of d doubles = 3 arrays of
/// 8d/3): the fair baseline where the step's arrays spill out of a cache level the triad's fit in.
void BM_StreamTriadSameFootprint(benchmark::State& st) { stream_triad(st, 8 * st.range(0) / 3); }

/// IVON's stages with the benchmark's rates (the preset's policy type).
blr::IvonPolicy bench_ivon_policy() {
  blr::IvonOptions o;
  o.ess = 1.0;
  return blr::ivon_policy(o, 1.0);
}

/// VOGN's stages (heavy-ball momentum, prior in the gradient and the curvature).
blr::VognPolicy bench_vogn_policy() {
  blr::VognOptions o;
  o.ess = 1e4;
  o.curvature_rate = 1e-3;
  return blr::vogn_policy(o, 1.0);
}

template <class P>
void diagonal_step(benchmark::State& st, const P& policy) {
  const Index d = st.range(0);
  blr::Rng rng(1);
  auto state = blr::init(blr::GaussianDiag(rng.normal_vector(d), Vector::Ones(d)));
  blr::GaussianEstimate e{rng.normal_vector(d),
                          blr::Curvature::diagonal(rng.normal_vector(d).cwiseAbs())};
  for (auto _ : st) blr::step(state, e, policy);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * d * 8 * 8);
}

void BM_DiagonalStepIvon(benchmark::State& st) { diagonal_step(st, bench_ivon_policy()); }
void BM_DiagonalStepVogn(benchmark::State& st) { diagonal_step(st, bench_vogn_policy()); }

blr::Policy<> gauss_newton_policy() {
  // Small rates keep the precision well conditioned over the many repetitions of one step.
  blr::Policy<> p;
  p.mean_rate = blr::Schedule::constant(1e-3);
  p.precision_rate = blr::Schedule::constant(1e-4);
  return p;
}

void BM_FullGaussNewtonRankOne(benchmark::State& st) {
  const Index d = st.range(0);
  blr::Rng rng(2);
  auto state = blr::init(blr::GaussianFull(Vector::Zero(d), blr::Matrix(blr::Matrix::Identity(d, d))));
  const blr::Matrix row = rng.normal_vector(d).transpose();
  const blr::GaussianEstimate e{rng.normal_vector(d), blr::Curvature::outer(row, 1.0)};
  const auto policy = gauss_newton_policy();
  for (auto _ : st) blr::step(state, e, policy);
  st.SetComplexityN(d);
}

void BM_FullGaussNewtonRefactor(benchmark::State& st) {
  const Index d = st.range(0);
  blr::Rng rng(2);
  auto state = blr::init(blr::GaussianFull(Vector::Zero(d), blr::Matrix(blr::Matrix::Identity(d, d))));
  const Vector g = rng.normal_vector(d);
  const blr::GaussianEstimate e{rng.normal_vector(d), blr::Curvature::full(g * g.transpose())};
  const auto policy = gauss_newton_policy();
  for (auto _ : st) blr::step(state, e, policy);
  st.SetComplexityN(d);
}

}  // namespace

BENCHMARK(BM_StreamTriad)->Arg(100000)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StreamTriadSameFootprint)->Arg(100000)->Arg(1000000)->Arg(10000000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DiagonalStepIvon)->Arg(100000)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DiagonalStepVogn)->Arg(100000)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FullGaussNewtonRankOne)->Arg(100)->Arg(250)->Arg(500)->Arg(1000)->Arg(2000)
    ->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_FullGaussNewtonRefactor)->Arg(100)->Arg(250)->Arg(500)->Arg(1000)->Arg(2000)
    ->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_MAIN();
