// Cost per Monte Carlo sample of the sampling estimators on logistic regression (n = 1000 rows,
// d = 10, 100, 1000 features), as items (samples) per second. Each benchmark also reports
// `x_gradient`: its time per sample divided by the time of one value-and-gradient evaluation at
// the same d, measured by BM_Gradient earlier in the same run (the baseline; absolute times mean
// little on a shared machine; both are thread CPU times). A first-order Monte Carlo sample costs
// one gradient plus a draw; MonteCarlo<hessian> adds a diagonal Hessian (another O(nd) pass);
// ReparamHessian adds only O(d) for a diagonal q, and O(d²) for a full one.
#include <benchmark/benchmark.h>

#include <time.h>

#include <cmath>
#include <map>

#include "blr/core/rng.hpp"
#include "blr/estimator/monte_carlo.hpp"
#include "blr/estimator/reparam_hessian.hpp"
#include "blr/model/logistic_regression.hpp"

namespace {

using blr::Index;
using blr::Matrix;
using blr::Vector;

constexpr Index kRows = 1000;
constexpr int kSamples = 8;

blr::LogisticRegression make_loss(Index d) {
  blr::Rng rng(1);
  Matrix x(kRows, d);
  for (Index i = 0; i < x.size(); ++i) x.data()[i] = rng.normal() / std::sqrt(double(d));
  Vector y(kRows);
  for (Index i = 0; i < kRows; ++i) y[i] = rng.uniform() < 0.5 ? 1.0 : 0.0;
  return blr::LogisticRegression(std::move(x), std::move(y), {.prior_precision = 1.0});
}

/// Seconds per gradient evaluation at each d, from BM_Gradient.
std::map<Index, double>& baseline() {
  static std::map<Index, double> seconds;
  return seconds;
}

/// Thread CPU time in seconds (steadier than wall time on a loaded machine).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void report(benchmark::State& state, Index d, double start, long items) {
  const double seconds = cpu_seconds() - start;
  state.SetItemsProcessed(items);
  const auto it = baseline().find(d);
  if (it != baseline().end() && items > 0)
    state.counters["x_gradient"] = seconds / items / it->second;
}

void BM_Gradient(benchmark::State& state) {
  const Index d = state.range(0);
  const auto loss = make_loss(d);
  const Vector theta = Vector::Constant(d, 0.1);
  Vector g;
  long items = 0;
  const double start = cpu_seconds();
  for (auto _ : state) {
    benchmark::DoNotOptimize(blr::value_and_gradient(loss, theta, g));
    benchmark::DoNotOptimize(g.data());
    ++items;
  }
  const double seconds = cpu_seconds() - start;
  baseline()[d] = seconds / static_cast<double>(items);
  state.SetItemsProcessed(items);
}

template <class Estimator, class Q>
void run(benchmark::State& state, const Estimator& estimator, const Q& q, Index d) {
  const auto loss = make_loss(d);
  blr::Rng rng(2);
  long items = 0;
  const double start = cpu_seconds();
  for (auto _ : state) {
    blr::GaussianEstimate e = estimator.estimate(q, loss, rng);
    benchmark::DoNotOptimize(e.gradient.data());
    items += kSamples;
  }
  report(state, d, start, items);
}

blr::GaussianDiag diag_q(Index d) {
  return blr::GaussianDiag(Vector::Constant(d, 0.1), Vector::Constant(d, 100.0));
}

void BM_MonteCarloFirstOrder(benchmark::State& state) {
  const Index d = state.range(0);
  run(state, blr::MonteCarloFirstOrder({.samples = kSamples}), diag_q(d), d);
}

void BM_MonteCarloDiagonalHessian(benchmark::State& state) {
  const Index d = state.range(0);
  run(state, blr::MonteCarlo<>({.samples = kSamples}), diag_q(d), d);
}

void BM_ReparamHessianDiagonal(benchmark::State& state) {
  const Index d = state.range(0);
  run(state, blr::ReparamHessian({.samples = kSamples}), diag_q(d), d);
}

void BM_ReparamHessianFull(benchmark::State& state) {
  const Index d = state.range(0);
  const blr::GaussianFull q(Vector::Constant(d, 0.1), Matrix(100.0 * Matrix::Identity(d, d)));
  run(state, blr::ReparamHessian({.samples = kSamples}), q, d);
}

}  // namespace

BENCHMARK(BM_Gradient)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_MonteCarloFirstOrder)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_MonteCarloDiagonalHessian)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_ReparamHessianDiagonal)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_ReparamHessianFull)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK_MAIN();
