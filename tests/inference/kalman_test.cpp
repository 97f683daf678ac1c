// Kalman filter and smoother as sequential conjugate BLR: oracle §4(c) C1 (exact fractions), a
// plain textbook filter + Rauch–Tung–Striebel smoother written here, one batch conjugate step over
// the whole state path, and maximum likelihood on the Nile data.
#include "blr/inference/kalman.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/gaussian_natural.hpp"
#include "blr/io/csv.hpp"
#include "blr/rule/natural_step.hpp"
#include "error_message.hpp"

namespace blr::inference {
namespace {

Matrix column(std::initializer_list<double> v) {
  Matrix m(static_cast<Index>(v.size()), 1);
  Index i = 0;
  for (double x : v) m(i++, 0) = x;
  return m;
}

TEST(Kalman, C1ExactFractions) {
  const auto model = StateSpaceModel::local_level(1.0, 1.0, 0.0, 2.0);
  const Matrix y = column({1, 2, 0});
  KalmanResult r = kalman_filter(model, y);
  kalman_smooth(model, y, r);
  const double fm[] = {2.0 / 3, 3.0 / 2, 4.0 / 7}, fv[] = {2.0 / 3, 5.0 / 8, 13.0 / 21};
  const double sm[] = {6.0 / 7, 8.0 / 7, 4.0 / 7}, sv[] = {10.0 / 21, 10.0 / 21, 13.0 / 21};
  for (int t = 0; t < 3; ++t) {
    EXPECT_NEAR(r.filtered_mean(t, 0), fm[t], 1e-15);
    EXPECT_NEAR(r.filtered_cov(t, 0), fv[t], 1e-15);
    EXPECT_NEAR(r.smoothed_mean(t, 0), sm[t], 1e-15);
    EXPECT_NEAR(r.smoothed_cov(t, 0), sv[t], 1e-15);
  }
  EXPECT_NEAR(r.log_likelihood, -5.207648247047, 1e-12);
  EXPECT_DOUBLE_EQ(kalman_log_likelihood(model, y), r.log_likelihood);
}

TEST(Kalman, C1AsOneBatchConjugateStep) {
  // The whole path x_1:3 as one Gaussian: prior from the dynamics, messages from y, ρ = 1.
  const Index T = 3;
  Matrix prior_prec = Matrix::Zero(T, T);
  prior_prec(0, 0) = 1.0 / 2.0;    // x_1 ~ N(0, 2)
  for (Index t = 1; t < T; ++t) {  // x_t − x_{t−1} ~ N(0, 1)
    prior_prec(t, t) += 1;
    prior_prec(t - 1, t - 1) += 1;
    prior_prec(t, t - 1) -= 1;
    prior_prec(t - 1, t) -= 1;
  }
  const Vector y = (Vector(3) << 1, 2, 0).finished();
  const Vector prior = pack_full(Vector::Zero(T), prior_prec);
  const Vector post =
      natural_step_towards(prior, prior + pack_full(y, Matrix::Identity(T, T)), 1.0);
  const GaussianFull q = GaussianFull::from_natural(post);
  const Matrix cov = q.covariance();
  const auto model = StateSpaceModel::local_level(1.0, 1.0, 0.0, 2.0);
  KalmanResult r = kalman_filter(model, column({1, 2, 0}));
  kalman_smooth(model, column({1, 2, 0}), r);
  for (Index t = 0; t < T; ++t) {
    EXPECT_NEAR(q.mean[t], r.smoothed_mean(t, 0), 1e-14);
    EXPECT_NEAR(cov(t, t), r.smoothed_cov(t, 0), 1e-14);
  }
}

/// Textbook Kalman filter and RTS smoother (covariance form), written plainly.
struct PlainKalman {
  std::vector<Vector> mf, mp, ms;
  std::vector<Matrix> pf, pp, ps;
  double loglik = 0;
};

PlainKalman plain_kalman(const StateSpaceModel& s, const Matrix& y) {
  PlainKalman o;
  const Index T = y.rows();
  Vector m = s.init_mean;
  Matrix p = s.init_cov;
  for (Index t = 0; t < T; ++t) {
    o.mp.push_back(m);
    o.pp.push_back(p);
    const Vector v = y.row(t).transpose() - s.observation * m;
    const Matrix f = s.observation * p * s.observation.transpose() + s.obs_noise;
    const Matrix k = p * s.observation.transpose() * f.inverse();
    o.loglik += -0.5 * (v.size() * std::log(2 * std::numbers::pi) + std::log(f.determinant()) +
                        v.dot(f.inverse() * v));
    m = m + k * v;
    p = p - k * s.observation * p;
    o.mf.push_back(m);
    o.pf.push_back(p);
    m = s.transition * m;
    p = s.transition * p * s.transition.transpose() + s.state_noise;
  }
  o.ms = o.mf;
  o.ps = o.pf;
  for (Index t = T - 2; t >= 0; --t) {
    const Matrix j = o.pf[t] * s.transition.transpose() * o.pp[t + 1].inverse();
    o.ms[t] = o.mf[t] + j * (o.ms[t + 1] - o.mp[t + 1]);
    o.ps[t] = o.pf[t] + j * (o.ps[t + 1] - o.pp[t + 1]) * j.transpose();
  }
  return o;
}

void expect_equal_to_plain(const StateSpaceModel& s, const Matrix& y, double tol) {
  KalmanResult r = kalman_filter(s, y);
  kalman_smooth(s, y, r);
  const PlainKalman o = plain_kalman(s, y);
  EXPECT_NEAR(r.log_likelihood, o.loglik, tol * std::abs(o.loglik));
  double dev = 0;
  for (Index t = 0; t < y.rows(); ++t) {
    dev = std::max(dev, (r.filtered_mean.row(t).transpose() - o.mf[t]).cwiseAbs().maxCoeff());
    dev = std::max(dev, (r.filtered_covariance(t) - o.pf[t]).cwiseAbs().maxCoeff());
    dev = std::max(dev, (r.smoothed_mean.row(t).transpose() - o.ms[t]).cwiseAbs().maxCoeff());
    dev = std::max(dev, (r.smoothed_covariance(t) - o.ps[t]).cwiseAbs().maxCoeff());
  }
  EXPECT_LT(dev, tol);
}

TEST(Kalman, GeneralModelEqualsTextbookFilterAndRts) {
  Rng rng(11);
  const Index n = 3, p = 2, T = 60;
  StateSpaceModel s;
  s.transition = Matrix::Identity(n, n) * 0.9;
  s.transition(0, 1) = 0.2;
  s.transition(2, 0) = -0.1;
  s.observation = Matrix(p, n);
  for (Index i = 0; i < p; ++i)
    for (Index j = 0; j < n; ++j) s.observation(i, j) = rng.normal();
  Matrix g(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) g(i, j) = 0.3 * rng.normal();
  s.state_noise = g * g.transpose() + 0.05 * Matrix::Identity(n, n);
  s.obs_noise = (Matrix(2, 2) << 0.5, 0.1, 0.1, 0.3).finished();
  s.init_mean = Vector::Zero(n);
  s.init_cov = 2.0 * Matrix::Identity(n, n);
  Matrix y(T, p);
  Vector x = rng.normal_vector(n);
  for (Index t = 0; t < T; ++t) {
    x = s.transition * x + 0.3 * rng.normal_vector(n);
    y.row(t) = (s.observation * x + 0.5 * rng.normal_vector(p)).transpose();
  }
  expect_equal_to_plain(s, y, 1e-10);
}

TEST(Kalman, LocalLinearTrendWithSingularStateNoise) {
  // Slope variance 0: Q is singular, which the backward message handles without Q⁻¹.
  const auto s = StateSpaceModel::local_linear_trend(
      2.0, 0.5, 0.0, (Vector(2) << 0.0, 0.0).finished(), 10.0 * Matrix::Identity(2, 2));
  Rng rng(5);
  Matrix y(40, 1);
  for (Index t = 0; t < 40; ++t) y(t, 0) = 0.3 * t + rng.normal();
  expect_equal_to_plain(s, y, 1e-9);
}

TEST(Kalman, ScalarPathEqualsTheGeneralPathAndTheTextbook) {
  // One state and one output take the scalar path. Embedded as the first state of a two-state
  // model whose second state is independent and unobserved, the same model takes the general
  // (matrix) path; the first state's moments and the log-likelihood must agree to round-off.
  // a ≠ 1, c ≠ 1 and missing observations exercise every term of the scalar recursion.
  const double a = 0.95, c = 1.7, q = 0.3, r = 0.8;
  StateSpaceModel one;
  one.transition = Matrix::Constant(1, 1, a);
  one.observation = Matrix::Constant(1, 1, c);
  one.state_noise = Matrix::Constant(1, 1, q);
  one.obs_noise = Matrix::Constant(1, 1, r);
  one.init_mean = Vector::Constant(1, 0.4);
  one.init_cov = Matrix::Constant(1, 1, 5.0);
  StateSpaceModel two;
  two.transition = (Matrix(2, 2) << a, 0, 0, 0.5).finished();
  two.observation = (Matrix(1, 2) << c, 0).finished();
  two.state_noise = (Matrix(2, 2) << q, 0, 0, 1).finished();
  two.obs_noise = one.obs_noise;
  two.init_mean = (Vector(2) << 0.4, 0).finished();
  two.init_cov = (Matrix(2, 2) << 5.0, 0, 0, 1).finished();
  Rng rng(3);
  const Index T = 200;
  Matrix y(T, 1);
  double x = 0;
  for (Index t = 0; t < T; ++t) {
    x = a * x + std::sqrt(q) * rng.normal();
    y(t, 0) = t % 17 == 5 ? std::nan("") : c * x + std::sqrt(r) * rng.normal();
  }
  KalmanResult s1 = kalman_filter(one, y), s2 = kalman_filter(two, y);
  kalman_smooth(one, y, s1);
  kalman_smooth(two, y, s2);
  EXPECT_NEAR(s1.log_likelihood, s2.log_likelihood, 1e-12 * std::abs(s2.log_likelihood));
  double dev = 0;
  for (Index t = 0; t < T; ++t) {
    dev = std::max(dev, std::abs(s1.predicted_mean(t, 0) - s2.predicted_mean(t, 0)));
    dev = std::max(dev, std::abs(s1.predicted_cov(t, 0) - s2.predicted_cov(t, 0)));
    dev = std::max(dev, std::abs(s1.filtered_mean(t, 0) - s2.filtered_mean(t, 0)));
    dev = std::max(dev, std::abs(s1.filtered_cov(t, 0) - s2.filtered_cov(t, 0)));
    dev = std::max(dev, std::abs(s1.smoothed_mean(t, 0) - s2.smoothed_mean(t, 0)));
    dev = std::max(dev, std::abs(s1.smoothed_cov(t, 0) - s2.smoothed_cov(t, 0)));
  }
  EXPECT_LT(dev, 1e-12);
  EXPECT_EQ(kalman_log_likelihood(one, y), s1.log_likelihood);
  // Without missing values, the textbook covariance-form filter and RTS smoother.
  Matrix full(T, 1);
  for (Index t = 0; t < T; ++t) full(t, 0) = std::isnan(y(t, 0)) ? 0.1 * t : y(t, 0);
  expect_equal_to_plain(one, full, 1e-10);
}

TEST(Kalman, ScalarPathNamesTheStepOfANonFiniteMean) {
  // R = 1e-300: the message CᵀR⁻¹y of y = 1.7e308 overflows, so the mean after step 2 is not finite.
  const auto model = StateSpaceModel::local_level(1e-300, 1.0, 0.0, 1.0);
  try {
    kalman_filter(model, column({1.0, 1.7e308, 0.0}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Step 2 produced a non-finite value in 'Kalman filtered "
                                         "mean'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Kalman, MissingObservationsSkipTheUpdate) {
  const auto model = StateSpaceModel::local_level(1.0, 1.0, 0.0, 2.0);
  Matrix y = column({1, std::nan(""), 0});
  const KalmanResult r = kalman_filter(model, y);
  EXPECT_EQ(r.filtered_mean(1, 0), r.predicted_mean(1, 0));
  EXPECT_NEAR(r.filtered_cov(1, 0), 2.0 / 3 + 1.0, 1e-15);
}

TEST(Kalman, NileMaximumLikelihood) {
  const auto t = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/nile.csv");
  const Matrix y = t.numeric_column("volume");
  ASSERT_EQ(y.rows(), 100);
  // A near-diffuse prior on the first level.
  auto build = [](const Vector& v) { return StateSpaceModel::local_level(v[0], v[1], 0.0, 1e7); };
  const VarianceFit fit = fit_variances(build, y, (Vector(2) << 10000.0, 1000.0).finished());
  ASSERT_TRUE(fit.converged);
  // Durbin & Koopman (2012, §2.10): σ²_ε = 15099, σ²_η = 1469.1 (diffuse initialisation).
  EXPECT_NEAR(fit.variances[0], 15099, 0.01 * 15099);
  EXPECT_NEAR(fit.variances[1], 1469.1, 0.02 * 1469.1);
  // A maximum: the log-likelihood is lower a little way off in each direction.
  for (int j = 0; j < 2; ++j)
    for (double f : {0.95, 1.05}) {
      Vector v = fit.variances;
      v[j] *= f;
      EXPECT_LT(kalman_log_likelihood(build(v), y), fit.log_likelihood);
    }
}

TEST(Kalman, InvalidModelsAreErrors) {
  EXPECT_THROW(StateSpaceModel::local_level(-1.0, 1.0, 0.0, 1.0), Error);
  EXPECT_THROW(StateSpaceModel::local_level(1.0, 1.0, 0.0, 0.0), Error);
  auto s = StateSpaceModel::local_level(1.0, 1.0, 0.0, 1.0);
  s.obs_noise(0, 0) = -2.0;
  EXPECT_THROW(kalman_filter(s, column({1.0})), Error);
  s = StateSpaceModel::local_level(1.0, 1.0, 0.0, 1.0);
  EXPECT_THROW(kalman_filter(s, Matrix::Zero(3, 2)), Error);
}

// Issue 34, D15: NaN marks a missing observation; ±inf is a broken value, refused with a sentence
// naming the row (1-based, as the CLI numbers rows), on the scalar and the general path, by the
// filter, the log-likelihood alone (maximum likelihood) and the smoother. Before, ±inf was taken
// for missing: the log-likelihood equalled that of the NaN row.
TEST(Kalman, InfiniteObservationsAreRefusedNamingTheRow) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto scalar = StateSpaceModel::local_level(1.0, 1.0, 0.0, 2.0);
  StateSpaceModel general = scalar;  // two observations of one state: the general path
  general.observation = Matrix::Ones(2, 1);
  general.obs_noise = Matrix::Identity(2, 2);
  for (const double bad : {inf, -inf}) {
    Matrix y1 = column({1.0, 0.5, bad, 0.0});
    Matrix y2 = Matrix::Zero(4, 2);
    y2(2, 1) = bad;
    for (const auto& [model, y] :
         {std::pair{scalar, y1}, std::pair{general, y2}}) {
      const std::vector<std::string> parts{"row 3", "infinite", "NaN"};
      blr::testing::expect_error([&] { kalman_filter(model, y); }, parts);
      blr::testing::expect_error([&] { kalman_log_likelihood(model, y); }, parts);
      Matrix ok = y;
      ok(2, y.cols() - 1) = 0.0;
      KalmanResult r = kalman_filter(model, ok);
      blr::testing::expect_error([&] { kalman_smooth(model, y, r); }, parts);
    }
  }
  // NaN is still missing.
  EXPECT_NO_THROW(kalman_filter(scalar, column({1.0, std::nan(""), 0.0})));
}

}  // namespace
}  // namespace blr::inference
