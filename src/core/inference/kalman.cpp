#include "blr/inference/kalman.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/inference/gaussian_natural.hpp"
#include "blr/rule/natural_step.hpp"

namespace blr::inference {
namespace {

bool positive_definite(const Matrix& m) {
  if (m.rows() != m.cols() || !m.isApprox(m.transpose(), 1e-10)) return false;
  Eigen::LLT<Matrix> llt(m);
  return llt.info() == Eigen::Success;
}

bool positive_semidefinite(const Matrix& m) {
  if (m.rows() != m.cols() || !m.isApprox(m.transpose(), 1e-10)) return false;
  Eigen::LDLT<Matrix> ldlt(m);
  return ldlt.info() == Eigen::Success && ldlt.isPositive();
}

/// (P⁻¹m, P⁻¹) from moments; throws naming the step when P is not positive definite.
Vector natural_from_moments(const Vector& m, const Matrix& p, Index t, const char* what) {
  Eigen::LLT<Matrix> llt(p);
  check(llt.info() == Eigen::Success,
        "Kalman step {}: the {} covariance is not positive definite.", t + 1, what);
  const Matrix prec = llt.solve(Matrix(Matrix::Identity(p.rows(), p.cols())));
  return pack_full(prec * m, 0.5 * (prec + prec.transpose()));
}

/// Moments from (Sm, vec S).
void moments_from_natural(const Vector& lambda, Index n, Index t, Vector& m, Matrix& p) {
  const Matrix s = full_precision(lambda, n);
  Eigen::LLT<Matrix> llt(s);
  check(llt.info() == Eigen::Success,
        "Kalman step {}: the posterior precision is not positive definite.", t + 1);
  m = llt.solve(full_sm(lambda, n));
  p = llt.solve(Matrix(Matrix::Identity(n, n)));
  p = 0.5 * (p + p.transpose());
}

bool missing(const Eigen::Ref<const Vector>& y) {
  return !y.allFinite();
}

/// NaN marks a missing observation; ±inf is a broken value, refused with its (1-based) row, so
/// that `missing` above meets only NaN.
void check_no_infinite_observation(const Matrix& y) {
  if (!y.array().isInf().any()) return;
  for (Index t = 0; t < y.rows(); ++t) {
    for (Index j = 0; j < y.cols(); ++j) {
      check(!std::isinf(y(t, j)),
            "Observation row {} holds an infinite value ({}); only NaN marks a missing observation.",
            t + 1, y(t, j));
    }
  }
}

struct Observation {
  Matrix ct_rinv;    ///< CᵀR⁻¹
  Matrix ct_rinv_c;  ///< CᵀR⁻¹C
  /// λ̃_t = (CᵀR⁻¹y, CᵀR⁻¹C).
  Vector message(const Vector& y) const { return pack_full(ct_rinv * y, ct_rinv_c); }
};

Observation observation_terms(const StateSpaceModel& model) {
  Observation o;
  const Eigen::LLT<Matrix> r(model.obs_noise);
  o.ct_rinv = r.solve(model.observation).transpose();
  o.ct_rinv_c = o.ct_rinv * model.observation;
  o.ct_rinv_c = 0.5 * (o.ct_rinv_c + o.ct_rinv_c.transpose());
  return o;
}

void store(Matrix& means, Matrix& covs, Index t, const Vector& m, const Matrix& p) {
  means.row(t) = m.transpose();
  covs.row(t) = Eigen::Map<const Vector>(p.data(), p.size()).transpose();
}

// ---- The scalar path: one state, one output (local level, AR(1) with noise). The same equations
// as the general path below, on doubles: no Eigen object and no heap allocation per step. The
// smoother writes each 1×1 Cholesky solve b/P as it is computed there, (b/√P)/√P; the filter, the
// hot loop of long series, divides directly (two divisions and one logarithm per step instead
// of five square roots and eight divisions), so the two paths agree to round-off, not to the last
// bit (tests/inference/kalman_test.cpp compares them to 1e-12).

/// b / x as the 1×1 Cholesky solve computes it; false when x is not positive.
bool chol_solve(double x, double b, double& out) {
  if (!(x > 0)) return false;
  const double l = std::sqrt(x);
  out = (b / l) / l;
  return true;
}

/// The general path's symmetrisation ½(P + Pᵀ) of a 1×1 matrix: x, except that 2x may overflow
/// (then ∞, as there).
double symmetrised(double x) {
  return 0.5 * (x + x);
}

/// Natural parameters (P⁻¹m, P⁻¹) of N(m, P), or moments from them, for one state.
struct Natural1 {
  double sm = 0, s = 0;
};
Natural1 natural_from_moments_1(double m, double p, Index t, const char* what) {
  double prec = 0;
  check(chol_solve(p, 1.0, prec), "Kalman step {}: the {} covariance is not positive definite.",
        t + 1, what);
  return {prec * m, symmetrised(prec)};
}
void moments_from_natural_1(const Natural1& lambda, Index t, double& m, double& p) {
  const double s = symmetrised(lambda.s);
  check(chol_solve(s, lambda.sm, m) && chol_solve(s, 1.0, p),
        "Kalman step {}: the posterior precision is not positive definite.", t + 1);
  p = symmetrised(p);
}

/// The scalar filter's one-sentence errors, kept out of its loop.
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void scalar_step_failed(Index t, double f,
                                                                      double cov) {
  if (!(f > 0))
    throw Error(fmt::format("Kalman step {}: the innovation covariance is not positive definite.",
                            t + 1));
  if (!(cov > 0))
    throw Error(fmt::format("Kalman step {}: the predicted covariance is not positive definite.",
                            t + 1));
  throw Error(fmt::format("Kalman step {}: the posterior precision is not positive definite.",
                          t + 1));
}

double run_filter_scalar(const StateSpaceModel& model, const Matrix& y, KalmanResult* out) {
  const Index T = y.rows();
  const double a = model.transition(0, 0), c = model.observation(0, 0);
  const double q = model.state_noise(0, 0), r = model.obs_noise(0, 0);
  double ct_rinv = 0;  // CᵀR⁻¹
  chol_solve(r, c, ct_rinv);  // R > 0: validated
  const double ct_rinv_c = symmetrised(ct_rinv * c);
  const double log2pi = std::log(2 * std::numbers::pi);
  double* predicted_mean = out ? out->predicted_mean.data() : nullptr;
  double* predicted_cov = out ? out->predicted_cov.data() : nullptr;
  double* filtered_mean = out ? out->filtered_mean.data() : nullptr;
  double* filtered_cov = out ? out->filtered_cov.data() : nullptr;
  const double* obs = y.data();
  double m = model.init_mean[0], cov = model.init_cov(0, 0), loglik = 0;
  for (Index t = 0; t < T; ++t) {
    if (out) {
      predicted_mean[t] = m;
      predicted_cov[t] = cov;
    }
    const double yt = obs[t];
    if (std::isfinite(yt)) {
      const double v = yt - c * m;
      const double f = c * cov * c + r;
      // Conjugate update: one ρ = 1 BLR step towards prior + message, i.e. prior + message, in
      // natural parameters: P'⁻¹ = P⁻¹ + CᵀR⁻¹C, P'⁻¹m' = P⁻¹m + CᵀR⁻¹y. With d = 1 + P·CᵀR⁻¹C
      // (= P·P'⁻¹) one reciprocal gives both: P' = P/d, m' = m/d + P'·CᵀR⁻¹y.
      const double d = 1.0 + cov * ct_rinv_c;
      if (!(f > 0 && cov > 0 && d > 0)) [[unlikely]]
        scalar_step_failed(t, f, cov);
      loglik += -0.5 * (log2pi + v * (v / f) + std::log(f));
      const double inv_d = 1.0 / d;
      cov *= inv_d;
      m = m * inv_d + cov * (ct_rinv * yt);
    }
    if (!std::isfinite(m)) [[unlikely]]
      check_finite(Vector(Vector::Constant(1, m)), "Kalman filtered mean", t + 1);
    if (out) {
      filtered_mean[t] = m;
      filtered_cov[t] = cov;
    }
    m = a * m;
    cov = a * cov * a + q;
  }
  if (out) out->log_likelihood = loglik;
  return loglik;
}

void smooth_scalar(const StateSpaceModel& model, const Matrix& y, KalmanResult& r) {
  const Index T = r.steps();
  const double a = model.transition(0, 0), c = model.observation(0, 0);
  const double q = model.state_noise(0, 0);
  double ct_rinv = 0;
  chol_solve(model.obs_noise(0, 0), c, ct_rinv);
  const double ct_rinv_c = symmetrised(ct_rinv * c);
  r.smoothed_mean(T - 1, 0) = r.filtered_mean(T - 1, 0);
  r.smoothed_cov(T - 1, 0) = r.filtered_cov(T - 1, 0);
  Natural1 beta;  // β_T = p(∅ | x_T) = 1
  for (Index t = T - 2; t >= 0; --t) {
    const double ynext = y(t + 1, 0);
    const Natural1 next = std::isfinite(ynext)
                              ? Natural1{beta.sm + ct_rinv * ynext, beta.s + ct_rinv_c}
                              : beta;
    // Marginalise x_{t+1} through the transition: Ω = aΛ(1 + QΛ)⁻¹a, ω = a(1 + ΛQ)⁻¹η.
    const double big_lambda = symmetrised(next.s);
    const double denominator = 1.0 + big_lambda * q;
    const double k = symmetrised(big_lambda / denominator);
    beta = {a * (next.sm / denominator), symmetrised(a * k * a)};
    const Natural1 filtered =
        natural_from_moments_1(r.filtered_mean(t, 0), r.filtered_cov(t, 0), t, "filtered");
    moments_from_natural_1({filtered.sm + beta.sm, filtered.s + beta.s}, t, r.smoothed_mean(t, 0),
                           r.smoothed_cov(t, 0));
  }
}

double run_filter(const StateSpaceModel& model, const Matrix& y, KalmanResult* out) {
  model.validate();
  const Index n = model.state_dim(), p = model.obs_dim(), T = y.rows();
  check(y.cols() == p,
        fmt::format("The observations have {} columns but the model observes {}.", y.cols(), p));
  check(T >= 1, "The Kalman filter needs at least one observation.");
  check_no_infinite_observation(y);
  if (out) {
    out->predicted_mean.resize(T, n);
    out->predicted_cov.resize(T, n * n);
    out->filtered_mean.resize(T, n);
    out->filtered_cov.resize(T, n * n);
  }
  if (n == 1 && p == 1) return run_filter_scalar(model, y, out);
  const Observation obs = observation_terms(model);
  const double log2pi = std::log(2 * std::numbers::pi);
  Vector m = model.init_mean;
  Matrix cov = model.init_cov;
  double loglik = 0;
  for (Index t = 0; t < T; ++t) {
    if (out) store(out->predicted_mean, out->predicted_cov, t, m, cov);
    const Vector yt = y.row(t).transpose();
    if (!missing(yt)) {
      // Prediction-error decomposition.
      const Vector v = yt - model.observation * m;
      const Matrix f = model.observation * cov * model.observation.transpose() + model.obs_noise;
      const Eigen::LLT<Matrix> fl(f);
      check(fl.info() == Eigen::Success,
            "Kalman step {}: the innovation covariance is not positive definite.", t + 1);
      const Matrix fL = fl.matrixL();
      loglik += -0.5 * (static_cast<double>(p) * log2pi + v.dot(fl.solve(v))) -
                fL.diagonal().array().log().sum();
      // Conjugate update: one BLR step with ρ = 1 towards prior + message.
      const Vector prior = natural_from_moments(m, cov, t, "predicted");
      const Vector post = natural_step_towards(prior, prior + obs.message(yt), 1.0);
      moments_from_natural(post, n, t, m, cov);
    }
    check_finite(m, "Kalman filtered mean", t + 1);
    if (out) store(out->filtered_mean, out->filtered_cov, t, m, cov);
    // Predict x_{t+1}.
    m = model.transition * m;
    cov = model.transition * cov * model.transition.transpose() + model.state_noise;
    cov = 0.5 * (cov + cov.transpose());
  }
  if (out) out->log_likelihood = loglik;
  return loglik;
}

}  // namespace

void StateSpaceModel::validate() const {
  const Index n = transition.rows();
  check(n >= 1 && transition.cols() == n, "The transition matrix A must be square and non-empty.");
  check(observation.cols() == n && observation.rows() >= 1,
        fmt::format("The observation matrix C must have {} columns (the state dimension).", n));
  check(state_noise.rows() == n && state_noise.cols() == n,
        fmt::format("The state noise Q must be {}×{}.", n, n));
  check(obs_noise.rows() == observation.rows() && obs_noise.cols() == observation.rows(),
        fmt::format("The observation noise R must be {}×{}.", observation.rows(),
                    observation.rows()));
  check(init_mean.size() == n, fmt::format("The initial mean must have {} entries.", n));
  check(init_cov.rows() == n && init_cov.cols() == n,
        fmt::format("The initial covariance must be {}×{}.", n, n));
  check(transition.allFinite() && observation.allFinite() && state_noise.allFinite() &&
            obs_noise.allFinite() && init_mean.allFinite() && init_cov.allFinite(),
        "The state-space model holds a non-finite number.");
  check(positive_semidefinite(state_noise),
        "The state noise Q must be symmetric positive semi-definite.");
  check(positive_definite(obs_noise),
        "The observation noise R must be symmetric positive definite.");
  check(positive_definite(init_cov),
        "The initial covariance must be symmetric positive definite (the initial variance must be "
        "positive).");
}

StateSpaceModel StateSpaceModel::local_level(double obs_var, double state_var, double init_mean,
                                             double init_var) {
  check_positive("obs-var", obs_var);
  check_nonnegative("state-var", state_var);
  check_positive("init-var", init_var);
  check(std::isfinite(init_mean), "Option 'init-mean' must be finite.");
  StateSpaceModel s;
  s.transition = Matrix::Ones(1, 1);
  s.observation = Matrix::Ones(1, 1);
  s.state_noise = Matrix::Constant(1, 1, state_var);
  s.obs_noise = Matrix::Constant(1, 1, obs_var);
  s.init_mean = Vector::Constant(1, init_mean);
  s.init_cov = Matrix::Constant(1, 1, init_var);
  return s;
}

StateSpaceModel StateSpaceModel::local_linear_trend(double obs_var, double level_var,
                                                    double slope_var, const Vector& init_mean,
                                                    const Matrix& init_cov) {
  check_positive("obs-var", obs_var);
  check_nonnegative("level-var", level_var);
  check_nonnegative("slope-var", slope_var);
  StateSpaceModel s;
  s.transition = (Matrix(2, 2) << 1, 1, 0, 1).finished();
  s.observation = (Matrix(1, 2) << 1, 0).finished();
  s.state_noise = (Matrix(2, 2) << level_var, 0, 0, slope_var).finished();
  s.obs_noise = Matrix::Constant(1, 1, obs_var);
  s.init_mean = init_mean;
  s.init_cov = init_cov;
  return s;
}

Matrix KalmanResult::filtered_covariance(Index t) const {
  const Index n = filtered_mean.cols();
  return Eigen::Map<const Matrix>(Vector(filtered_cov.row(t).transpose()).data(), n, n);
}

Matrix KalmanResult::smoothed_covariance(Index t) const {
  const Index n = smoothed_mean.cols();
  return Eigen::Map<const Matrix>(Vector(smoothed_cov.row(t).transpose()).data(), n, n);
}

namespace {

/// The first row of `rows` (T×k) with a value that is not finite, or -1.
Index first_non_finite_row(const Matrix& rows) {
  for (Index t = 0; t < rows.rows(); ++t)
    if (!rows.row(t).allFinite()) return t;
  return -1;
}

/// Refuses a result that overflowed double precision (an observation or model entry near 1e300
/// does), naming the first step: never returned as if it were a posterior.
void check_finite_result(const Matrix& means, const Matrix& covariances, const char* what) {
  const Index a = first_non_finite_row(means), b = first_non_finite_row(covariances);
  const Index t = a < 0 ? b : b < 0 ? a : std::min(a, b);
  check(t < 0, fmt::format("The Kalman {} is not finite from step {} on: the observations or the "
                           "model's entries are too large for double precision; rescale them.",
                           what, t + 1));
}

}  // namespace

KalmanResult kalman_filter(const StateSpaceModel& model, const Matrix& y) {
  KalmanResult r;
  run_filter(model, y, &r);
  check_finite_result(r.filtered_mean, r.filtered_cov, "filter's result");
  check(std::isfinite(r.log_likelihood),
        "The Kalman filter's log-likelihood is not finite: the observations or the model's "
        "entries are too large for double precision; rescale them.");
  return r;
}

double kalman_log_likelihood(const StateSpaceModel& model, const Matrix& y) {
  const double log_likelihood = run_filter(model, y, nullptr);
  check(std::isfinite(log_likelihood),
        "The Kalman filter's log-likelihood is not finite: the observations or the model's "
        "entries are too large for double precision; rescale them.");
  return log_likelihood;
}

void kalman_smooth(const StateSpaceModel& model, const Matrix& y, KalmanResult& r) {
  const Index n = model.state_dim(), T = r.steps();
  check(T == y.rows() && T >= 1, "Smoothing needs the filter result of the same observations.");
  check_no_infinite_observation(y);
  const Observation obs = observation_terms(model);
  r.smoothed_mean.resize(T, n);
  r.smoothed_cov.resize(T, n * n);
  if (n == 1 && model.obs_dim() == 1) {
    smooth_scalar(model, y, r);
    return check_finite_result(r.smoothed_mean, r.smoothed_cov, "smoother's result");
  }
  r.smoothed_mean.row(T - 1) = r.filtered_mean.row(T - 1);
  r.smoothed_cov.row(T - 1) = r.filtered_cov.row(T - 1);
  Vector beta = Vector::Zero(full_natural_size(n));  // β_T = p(∅ | x_T) = 1
  const Matrix eye = Matrix::Identity(n, n);
  for (Index t = T - 2; t >= 0; --t) {
    // Include y_{t+1}: a conjugate ρ = 1 step on the backward message.
    const Vector ynext = y.row(t + 1).transpose();
    const Vector lambda_next =
        missing(ynext) ? beta : natural_step_towards(beta, beta + obs.message(ynext), 1.0);
    // Marginalise x_{t+1} through the transition.
    const Matrix big_lambda = full_precision(lambda_next, n);
    const Eigen::PartialPivLU<Matrix> lu(eye + big_lambda * model.state_noise);
    Matrix k = lu.solve(big_lambda);
    k = 0.5 * (k + k.transpose());
    const Vector omega = model.transition.transpose() * lu.solve(full_sm(lambda_next, n));
    const Matrix big_omega = model.transition.transpose() * k * model.transition;
    beta = pack_full(omega, 0.5 * (big_omega + big_omega.transpose()));
    // Smoothed marginal: filtered × backward message, one ρ = 1 step.
    const Vector filtered = natural_from_moments(r.filtered_mean.row(t).transpose(),
                                                 r.filtered_covariance(t), t, "filtered");
    const Vector smoothed = natural_step_towards(filtered, filtered + beta, 1.0);
    Vector m;
    Matrix p;
    moments_from_natural(smoothed, n, t, m, p);
    store(r.smoothed_mean, r.smoothed_cov, t, m, p);
  }
  check_finite_result(r.smoothed_mean, r.smoothed_cov, "smoother's result");
}

VarianceFit fit_variances(const std::function<StateSpaceModel(const Vector&)>& build,
                          const Matrix& y, const Vector& start, const NelderMeadOptions& options) {
  check(start.size() >= 1 && (start.array() > 0).all() && start.allFinite(),
        "Maximum likelihood of the noise variances needs positive starting variances.");
  auto objective = [&](const Vector& log_var) {
    try {
      return -kalman_log_likelihood(build(log_var.array().exp().matrix()), y);
    } catch (const Error&) {
      return std::numeric_limits<double>::infinity();
    }
  };
  const NelderMeadResult nm = nelder_mead(objective, start.array().log().matrix(), options);
  VarianceFit fit;
  fit.variances = nm.x.array().exp();
  fit.log_likelihood = -nm.value;
  fit.evaluations = nm.evaluations;
  fit.converged = nm.converged;
  return fit;
}

}  // namespace blr::inference
