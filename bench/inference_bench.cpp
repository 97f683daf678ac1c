// Speed of the inference algorithms of blr::inference, each against a plain baseline measured in
// the same run (absolute times mean little on a shared machine; the `x_baseline` counter is the
// ratio of CPU times):
//   Kalman filter, local level, 10⁶ steps      vs a scalar textbook Kalman loop
//   Kalman filter, 10-state model, 10⁵ steps    vs a textbook covariance-form filter (Eigen)
//   CVI logistic regression, 10⁵ rows × 50      one full-Gaussian CVI iteration, and a run to
//                                               convergence, vs one Newton step (Laplace)
//   EM, 10⁵ points, 2-D, K = 3, full            one BLR EM step vs a textbook EM step
// Run: build/inference_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <time.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>
#include <map>
#include <numbers>
#include <string>

#include "blr/core/rng.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/kalman.hpp"

namespace {

using blr::Index;
using blr::Matrix;
using blr::Vector;
namespace inf = blr::inference;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Seconds per iteration of each baseline, by name.
std::map<std::string, double>& baselines() {
  static std::map<std::string, double> b;
  return b;
}

/// Times the loop body; records it as a baseline or reports the ratio to one.
template <class F>
void timed(benchmark::State& state, const std::string& baseline, bool is_baseline, F&& body) {
  long n = 0;
  const double start = cpu_seconds();
  for (auto _ : state) {
    body();
    ++n;
  }
  const double per = (cpu_seconds() - start) / static_cast<double>(n);
  if (is_baseline) {
    baselines()[baseline] = per;
  } else if (baselines().count(baseline)) {
    state.counters["x_baseline"] = per / baselines()[baseline];
  }
}

// ---- Kalman, local level
// -------------------------------------------------------------------------
constexpr Index kSteps = 1000000;

const Matrix& local_level_data() {
  static const Matrix y = [] {
    blr::Rng rng(1);
    Matrix out(kSteps, 1);
    double x = 0;
    for (Index t = 0; t < kSteps; ++t) {
      x += std::sqrt(1469.1) * rng.normal();
      out(t, 0) = x + std::sqrt(15099.0) * rng.normal();
    }
    return out;
  }();
  return y;
}

void BM_KalmanLocalLevelTextbook(benchmark::State& state) {
  const Matrix& y = local_level_data();
  timed(state, "kalman1", true, [&] {
    double m = 0, p = 1e7, ll = 0;
    for (Index t = 0; t < kSteps; ++t) {
      const double f = p + 15099.0, v = y(t, 0) - m, k = p / f;
      ll += -0.5 * (std::log(2 * std::numbers::pi * f) + v * v / f);
      m += k * v;
      p = p - k * p + 1469.1;
    }
    benchmark::DoNotOptimize(ll);
    benchmark::DoNotOptimize(m);
  });
  state.SetItemsProcessed(state.iterations() * kSteps);
}

void BM_KalmanLocalLevelBlr(benchmark::State& state) {
  const Matrix& y = local_level_data();
  const auto model = inf::StateSpaceModel::local_level(15099.0, 1469.1, 0.0, 1e7);
  timed(state, "kalman1", false, [&] {
    const inf::KalmanResult r = inf::kalman_filter(model, y);
    benchmark::DoNotOptimize(r.log_likelihood);
  });
  state.SetItemsProcessed(state.iterations() * kSteps);
}

// The same filter without its four per-step output arrays (the log-likelihood only, as parameter
// estimation calls it): the arithmetic against the textbook loop's.
void BM_KalmanLocalLevelBlrLogLikelihood(benchmark::State& state) {
  const Matrix& y = local_level_data();
  const auto model = inf::StateSpaceModel::local_level(15099.0, 1469.1, 0.0, 1e7);
  timed(state, "kalman1", false, [&] {
    benchmark::DoNotOptimize(inf::kalman_log_likelihood(model, y));
  });
  state.SetItemsProcessed(state.iterations() * kSteps);
}

void BM_KalmanLocalLevelBlrSmoother(benchmark::State& state) {
  const Matrix& y = local_level_data();
  const auto model = inf::StateSpaceModel::local_level(15099.0, 1469.1, 0.0, 1e7);
  timed(state, "kalman1", false, [&] {
    inf::KalmanResult r = inf::kalman_filter(model, y);
    inf::kalman_smooth(model, y, r);
    benchmark::DoNotOptimize(r.smoothed_mean.data());
  });
  state.SetItemsProcessed(state.iterations() * kSteps);
}

// ---- Kalman, 10-state model
// ----------------------------------------------------------------------
constexpr Index kSteps10 = 100000;

struct TenState {
  inf::StateSpaceModel model;
  Matrix y;
};

const TenState& ten_state() {
  static const TenState s = [] {
    const Index n = 10, p = 3;
    blr::Rng rng(2);
    TenState out;
    auto& m = out.model;
    m.transition = 0.95 * Matrix::Identity(n, n);
    for (Index i = 0; i + 1 < n; ++i) m.transition(i, i + 1) = 0.1;
    m.observation = Matrix(p, n);
    for (Index i = 0; i < m.observation.size(); ++i) m.observation.data()[i] = rng.normal();
    m.state_noise = 0.1 * Matrix::Identity(n, n);
    m.obs_noise = Matrix::Identity(p, p);
    m.init_mean = Vector::Zero(n);
    m.init_cov = Matrix::Identity(n, n);
    out.y.resize(kSteps10, p);
    Vector x = Vector::Zero(n);
    for (Index t = 0; t < kSteps10; ++t) {
      x = m.transition * x + std::sqrt(0.1) * rng.normal_vector(n);
      out.y.row(t) = (m.observation * x + rng.normal_vector(p)).transpose();
    }
    return out;
  }();
  return s;
}

void BM_KalmanTenStateTextbook(benchmark::State& state) {
  const auto& s = ten_state();
  const auto& m = s.model;
  timed(state, "kalman10", true, [&] {
    Vector x = m.init_mean;
    Matrix p = m.init_cov;
    double ll = 0;
    for (Index t = 0; t < kSteps10; ++t) {
      const Vector v = s.y.row(t).transpose() - m.observation * x;
      const Matrix f = m.observation * p * m.observation.transpose() + m.obs_noise;
      const Eigen::LLT<Matrix> fl(f);
      const Matrix k = fl.solve(m.observation * p).transpose();
      const Matrix fL = fl.matrixL();
      ll += -0.5 * v.dot(fl.solve(v)) - fL.diagonal().array().log().sum();
      x += k * v;
      p -= k * m.observation * p;
      x = m.transition * x;
      p = m.transition * p * m.transition.transpose() + m.state_noise;
    }
    benchmark::DoNotOptimize(ll);
  });
  state.SetItemsProcessed(state.iterations() * kSteps10);
}

void BM_KalmanTenStateBlr(benchmark::State& state) {
  const auto& s = ten_state();
  timed(state, "kalman10", false,
        [&] { benchmark::DoNotOptimize(inf::kalman_log_likelihood(s.model, s.y)); });
  state.SetItemsProcessed(state.iterations() * kSteps10);
}

// ---- CVI logistic regression, 10⁵ × 50
// -------------------------------------------------------------
const inf::Glm& logistic_problem() {
  static const inf::Glm g = [] {
    const Index n = 100000, d = 50;
    blr::Rng rng(3);
    Matrix x(n, d);
    for (Index i = 0; i < x.size(); ++i) x.data()[i] = rng.normal();
    x.col(0).setOnes();
    Vector w(d);
    for (Index j = 0; j < d; ++j) w[j] = rng.normal() / std::sqrt(static_cast<double>(d));
    const Vector a = x * w;
    Vector y(n);
    for (Index i = 0; i < n; ++i) y[i] = rng.uniform() < 1 / (1 + std::exp(-a[i])) ? 1.0 : 0.0;
    return inf::Glm::with_isotropic_prior(std::move(x), std::move(y), inf::Likelihood::logistic,
                                          1.0);
  }();
  return g;
}

void BM_LaplaceNewtonStep(benchmark::State& state) {
  const auto& g = logistic_problem();
  inf::LaplaceOptions o;
  o.max_iterations = 1;
  timed(state, "newton", true, [&] { benchmark::DoNotOptimize(inf::laplace(g, o).mean.data()); });
}

void BM_CviLogisticIteration(benchmark::State& state) {
  const auto& g = logistic_problem();
  inf::CviOptions o;
  o.max_iterations = 1;
  o.family = state.range(0) ? inf::GaussianFamilyKind::full : inf::GaussianFamilyKind::diagonal;
  timed(state, "newton", false, [&] { benchmark::DoNotOptimize(inf::cvi(g, o).elbo); });
  state.SetLabel(state.range(0) ? "full" : "diagonal");
}

void BM_CviLogisticToConvergence(benchmark::State& state) {
  const auto& g = logistic_problem();
  inf::CviOptions o;
  o.tolerance = 1e-8;
  int iterations = 0;
  timed(state, "newton", false, [&] {
    const auto r = inf::cvi(g, o);
    iterations = r.iterations;
    benchmark::DoNotOptimize(r.elbo);
  });
  state.counters["cvi_iterations"] = iterations;
}

// ---- EM, 10⁵ points
// ---------------------------------------------------------------------------------
const Matrix& em_data() {
  static const Matrix x = [] {
    const Index n = 100000;
    blr::Rng rng(4);
    Matrix out(n, 2);
    const double centres[3][2] = {{0, 0}, {4, 1}, {1, 5}};
    for (Index i = 0; i < n; ++i) {
      const auto* c = centres[i % 3];
      out(i, 0) = c[0] + rng.normal();
      out(i, 1) = c[1] + 0.5 * rng.normal();
    }
    return out;
  }();
  return x;
}

inf::GaussianMixture em_init() {
  blr::Rng rng(5);
  return inf::kmeans_plus_plus_init(em_data(), 3, inf::CovarianceType::full, rng);
}

void BM_EmStepTextbook(benchmark::State& state) {
  const Matrix& x = em_data();
  const inf::GaussianMixture g0 = em_init();
  const Index n = x.rows(), k = 3;
  timed(state, "em", true, [&] {
    // Textbook E and M steps with per-point loops over closed-form 2×2 densities.
    Matrix r(n, k);
    std::vector<Matrix> inv(k);
    std::vector<double> norm(k);
    for (Index j = 0; j < k; ++j) {
      inv[j] = g0.covariances[j].inverse();
      norm[j] = g0.weights[j] / (2 * std::numbers::pi * std::sqrt(g0.covariances[j].determinant()));
    }
    for (Index i = 0; i < n; ++i) {
      double total = 0;
      for (Index j = 0; j < k; ++j) {
        const Eigen::Vector2d d(x(i, 0) - g0.means(j, 0), x(i, 1) - g0.means(j, 1));
        r(i, j) = norm[j] * std::exp(-0.5 * d.dot(inv[j].topLeftCorner<2, 2>() * d));
        total += r(i, j);
      }
      r.row(i) /= total;
    }
    inf::GaussianMixture out = g0;
    for (Index j = 0; j < k; ++j) {
      const double nk = r.col(j).sum();
      const Vector mu = x.transpose() * r.col(j) / nk;
      const Matrix c = x.rowwise() - mu.transpose();
      out.covariances[j] = c.transpose() * r.col(j).asDiagonal() * c / nk;
      out.means.row(j) = mu.transpose();
      out.weights[j] = nk / n;
    }
    benchmark::DoNotOptimize(out.means.data());
  });
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_EmStepBlr(benchmark::State& state) {
  const Matrix& x = em_data();
  const inf::GaussianMixture g0 = em_init();
  timed(state, "em", false, [&] {
    const inf::GaussianMixture g = inf::em_step(x, g0, 0.0);
    benchmark::DoNotOptimize(g.means.data());
  });
  state.SetItemsProcessed(state.iterations() * x.rows());
}

void BM_EmToConvergence(benchmark::State& state) {
  const Matrix& x = em_data();
  inf::EmOptions o;
  o.components = 3;
  o.seed = 5;
  int iterations = 0;
  timed(state, "em", false, [&] {
    const auto r = inf::em(x, o);
    iterations = r.iterations;
    benchmark::DoNotOptimize(r.log_likelihood);
  });
  state.counters["em_iterations"] = iterations;
}

}  // namespace

BENCHMARK(BM_KalmanLocalLevelTextbook)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KalmanLocalLevelBlr)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KalmanLocalLevelBlrLogLikelihood)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KalmanLocalLevelBlrSmoother)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KalmanTenStateTextbook)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KalmanTenStateBlr)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LaplaceNewtonStep)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CviLogisticIteration)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CviLogisticToConvergence)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EmStepTextbook)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EmStepBlr)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EmToConvergence)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
