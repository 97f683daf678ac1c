#include "blr/family/special.hpp"
#include "blr/inference/gmm.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/rule/natural_step.hpp"

namespace blr::inference {
namespace {


/// Length of one component's statistic block (1, x, xxᵀ or x²).
Index block_size(Index d, CovarianceType type) {
  return type == CovarianceType::full ? 1 + d + d * d : 1 + 2 * d;
}

/// Largest change of a weight, mean or covariance entry, relative to the scale of its block.
double max_relative_change(const GaussianMixture& a, const GaussianMixture& b) {
  double out = (a.weights - b.weights).cwiseAbs().maxCoeff();
  out = std::max(out, (a.means - b.means).cwiseAbs().maxCoeff() /
                          std::max(1e-300, b.means.cwiseAbs().maxCoeff()));
  for (std::size_t j = 0; j < a.covariances.size(); ++j)
    out = std::max(out, (a.covariances[j] - b.covariances[j]).cwiseAbs().maxCoeff() /
                            std::max(1e-300, b.covariances[j].cwiseAbs().maxCoeff()));
  return out;
}

}  // namespace

Vector log_sum_exp_rows(const Matrix& a) {
  const Vector mx = a.rowwise().maxCoeff();
  return mx.array() + (a.colwise() - mx).array().exp().rowwise().sum().log();
}

void GaussianMixture::validate() const {
  const Index k = weights.size(), d = means.cols();
  check(k >= 1 && means.rows() == k && static_cast<Index>(covariances.size()) == k,
        "A Gaussian mixture needs one weight, mean and covariance per component.");
  check((weights.array() >= 0).all() && std::abs(weights.sum() - 1.0) < 1e-8,
        "The mixture weights must be non-negative and sum to 1.");
  for (Index j = 0; j < k; ++j) {
    check(covariances[j].rows() == d && covariances[j].cols() == d,
          fmt::format("Covariance {} of the mixture must be {}×{}.", j + 1, d, d));
  }
}

Matrix GaussianMixture::log_joint(const Matrix& x) const {
  const Index n = x.rows(), k = components(), d = dimension();
  check(x.cols() == d,
        fmt::format("The data have {} columns but the mixture has dimension {}.", x.cols(), d));
  Matrix out(n, k);
  for (Index j = 0; j < k; ++j) {
    const Matrix centred = (x.rowwise() - means.row(j)).transpose();  // D×N
    double log_det = 0;
    Vector maha;
    if (type == CovarianceType::diagonal) {
      const Vector var = covariances[j].diagonal();
      check((var.array() > 0).all(),
            fmt::format("Component {} has a non-positive variance.", j + 1));
      log_det = var.array().log().sum();
      maha = (centred.array().square().colwise() / var.array()).colwise().sum().transpose();
    } else {
      const Eigen::LLT<Matrix> llt(covariances[j]);
      check(llt.info() == Eigen::Success,
            fmt::format("The covariance of component {} is not positive definite.", j + 1));
      const Matrix l = llt.matrixL();
      log_det = 2.0 * l.diagonal().array().log().sum();
      maha = l.triangularView<Eigen::Lower>().solve(centred).colwise().squaredNorm().transpose();
    }
    out.col(j) = (std::log(weights[j]) - 0.5 * (static_cast<double>(d) * kLog2Pi + log_det)) -
                 0.5 * maha.array();
  }
  return out;
}

double GaussianMixture::log_likelihood(const Matrix& x) const {
  return log_sum_exp_rows(log_joint(x)).sum();
}

const OptionTable<EmOptions>& EmOptions::table() {
  using O = EmOptions;
  static const OptionTable<O> t =
      OptionTable<O>("EM")
          .integer("components", &O::components, Range::between(1, 1e6), "mixture components K")
          .choice("covariance", &O::covariance,
                  {{"full", CovarianceType::full}, {"diag", CovarianceType::diagonal}},
                  "each component's covariance: full or diagonal")
          .integer("max_iterations", &O::max_iterations, Range::between(1, 1e9),
                   "EM steps at most; a fit that stops there unconverged is refused")
          .number("tolerance", &O::tolerance, Range::positive(),
                  "stop when the mean log-likelihood per point changes by less")
          .number("parameter_tolerance", &O::parameter_tolerance, Range::at_least(0),
                  "…and no parameter moves more, relative (0: not tested)")
          .integer("fixed_iterations", &O::fixed_iterations, Range::between(1, 1e9),
                   "exactly this many steps, no stopping rule")
          .unset_by_default()
          .number("reg_covar", &O::reg_covar, Range::at_least(0),
                  "added to covariance diagonals in the M-step")
          .integer("seed", &O::seed, Range::between(0, 9.2e18), "seed of the k-means++ start")
          .integer("kmeans_iterations", &O::kmeans_iterations, Range::between(0, 1e9),
                   "k-means steps after the k-means++ seeding");
  return t;
}

void EmOptions::validate() const {
  table().validate(*this);
}

namespace {

// One step from θ's E-step target log π + log N (N×K) and its row-wise log-sum-exp.
GaussianMixture em_step_from(const Matrix& x, const GaussianMixture& theta, const Matrix& target,
                             const Vector& target_lse, double reg_covar,
                             Matrix* responsibilities) {
  const Index n = x.rows(), k = theta.components(), d = theta.dimension();
  // ---- E-step: q(z_i) categorical; one ρ = 1 BLR step per row towards log π + log N.
  Vector lambda_z = Vector::Zero(n * k);  // any start: ρ = 1 forgets it
  lambda_z = natural_step_towards(lambda_z, Eigen::Map<const Vector>(target.data(), n * k), 1.0);
  const Matrix logits = Eigen::Map<const Matrix>(lambda_z.data(), n, k);
  // With ρ = 1 the logits are the target itself, whose log-sum-exp the caller has.
  const Matrix r = (logits.colwise() - target_lse).array().exp();
  if (responsibilities) *responsibilities = r;
  // ---- M-step: per block, target = expected complete-data statistics (flat prior), ρ = 1,
  // then the mode ∇A*(λ).
  GaussianMixture out;
  out.type = theta.type;
  out.means.resize(k, d);
  out.covariances.resize(k);
  const Index b = block_size(d, theta.type);
  Vector lambda_weights = Vector::Zero(k);
  lambda_weights = natural_step_towards(lambda_weights, r.colwise().sum().transpose(), 1.0);
  out.weights = lambda_weights / lambda_weights.sum();
  for (Index j = 0; j < k; ++j) {
    Vector stats(b);
    const Vector rj = r.col(j);
    stats[0] = rj.sum();
    stats.segment(1, d) = x.transpose() * rj;
    if (theta.type == CovarianceType::full) {
      const Matrix xx = x.transpose() * rj.asDiagonal() * x;
      stats.tail(d * d) = Eigen::Map<const Vector>(xx.data(), d * d);
    } else {
      stats.tail(d) = x.array().square().matrix().transpose() * rj;
    }
    Vector lambda = Vector::Zero(b);
    lambda = natural_step_towards(lambda, stats, 1.0);
    const double nk = lambda[0];
    check(nk > 0, fmt::format("Component {} lost all its responsibility (empty cluster).", j + 1));
    const Vector mu = lambda.segment(1, d) / nk;
    out.means.row(j) = mu.transpose();
    Matrix cov;
    if (theta.type == CovarianceType::full) {
      cov = Eigen::Map<const Matrix>(lambda.data() + 1 + d, d, d) / nk - mu * mu.transpose();
      cov = 0.5 * (cov + cov.transpose());
    } else {
      cov = (lambda.tail(d) / nk - mu.cwiseAbs2()).asDiagonal();
    }
    cov.diagonal().array() += reg_covar;
    out.covariances[j] = cov;
  }
  return out;
}

}  // namespace

GaussianMixture em_step(const Matrix& x, const GaussianMixture& theta, double reg_covar,
                        Matrix* responsibilities) {
  const Matrix target = theta.log_joint(x);
  return em_step_from(x, theta, target, log_sum_exp_rows(target), reg_covar, responsibilities);
}

GaussianMixture kmeans_plus_plus_init(const Matrix& x, int components, CovarianceType type,
                                      Rng& rng, int lloyd_iterations, double reg_covar) {
  const Index n = x.rows(), d = x.cols(), k = components;
  check(k >= 1 && n >= k,
        fmt::format("A mixture of {} components needs at least {} data points; got {}.", k, k, n));
  Matrix centres(k, d);
  centres.row(0) = x.row(static_cast<Index>(rng.below(n)));
  Vector dist2 = (x.rowwise() - centres.row(0)).rowwise().squaredNorm();
  for (Index c = 1; c < k; ++c) {
    const double total = dist2.sum();
    Index pick = static_cast<Index>(rng.below(n));
    if (total > 0) {
      double u = rng.uniform() * total, acc = 0;
      for (Index i = 0; i < n; ++i) {
        acc += dist2[i];
        if (acc >= u) {
          pick = i;
          break;
        }
      }
    }
    centres.row(c) = x.row(pick);
    dist2 = dist2.cwiseMin((x.rowwise() - centres.row(c)).rowwise().squaredNorm());
  }
  std::vector<Index> assign(n, 0);
  for (int it = 0; it <= lloyd_iterations; ++it) {
    bool changed = false;
    for (Index i = 0; i < n; ++i) {
      Index best = 0;
      (centres.rowwise() - x.row(i)).rowwise().squaredNorm().minCoeff(&best);
      changed = changed || best != assign[i];
      assign[i] = best;
    }
    if (it == lloyd_iterations || (!changed && it > 0)) break;
    Matrix sums = Matrix::Zero(k, d);
    Vector counts = Vector::Zero(k);
    for (Index i = 0; i < n; ++i) {
      sums.row(assign[i]) += x.row(i);
      counts[assign[i]] += 1;
    }
    for (Index c = 0; c < k; ++c)
      if (counts[c] > 0) centres.row(c) = sums.row(c) / counts[c];
  }
  GaussianMixture g;
  g.type = type;
  g.weights.resize(k);
  g.means = centres;
  g.covariances.resize(k);
  const Vector global_mean = x.colwise().mean();
  const Matrix xc = x.rowwise() - global_mean.transpose();
  const Matrix global_cov = xc.transpose() * xc / static_cast<double>(n);
  for (Index c = 0; c < k; ++c) {
    std::vector<Index> rows;
    for (Index i = 0; i < n; ++i)
      if (assign[i] == c) rows.push_back(i);
    g.weights[c] = std::max<double>(rows.size(), 1.0);
    Matrix cov = global_cov;
    if (rows.size() >= 2) {
      Matrix xs(rows.size(), d);
      for (std::size_t r = 0; r < rows.size(); ++r) xs.row(r) = x.row(rows[r]);
      const Matrix cs = xs.rowwise() - xs.colwise().mean();
      cov = cs.transpose() * cs / static_cast<double>(rows.size());
    }
    if (type == CovarianceType::diagonal) cov = Matrix(cov.diagonal().asDiagonal());
    cov.diagonal().array() += std::max(reg_covar, 1e-9 * cov.diagonal().maxCoeff());
    g.covariances[c] = cov;
  }
  g.weights /= g.weights.sum();
  return g;
}

EmResult em(const Matrix& x, const GaussianMixture& init, const EmOptions& options) {
  options.validate();
  init.validate();
  check(x.rows() >= 1 && x.allFinite(), "EM needs finite data with at least one row.");
  EmResult r;
  r.initial = init;
  r.mixture = init;
  // The log joint of θ_t gives both ℓ_t and the next E-step: one evaluation per step.
  Matrix joint = init.log_joint(x);
  Vector lse = log_sum_exp_rows(joint);
  double ll = lse.sum();
  r.log_likelihoods.push_back(ll);
  const double points = static_cast<double>(x.rows());
  const int steps = options.fixed_iterations > 0 ? options.fixed_iterations : options.max_iterations;
  for (int it = 1; it <= steps; ++it) {
    GaussianMixture next_theta =
        em_step_from(x, r.mixture, joint, lse, options.reg_covar, &r.responsibilities);
    const double step = max_relative_change(r.mixture, next_theta);
    r.mixture = std::move(next_theta);
    joint = r.mixture.log_joint(x);
    lse = log_sum_exp_rows(joint);
    const double next = lse.sum();
    check(std::isfinite(next), fmt::format("EM step {} produced a non-finite log-likelihood.", it));
    r.log_likelihoods.push_back(next);
    r.iterations = it;
    const double change = next - ll;
    ll = next;
    r.converged = std::abs(change) / points < options.tolerance &&
                  (options.parameter_tolerance == 0 || step <= options.parameter_tolerance);
    if (r.converged && options.fixed_iterations == 0) break;
  }
  r.log_likelihood = ll;
  if (r.iterations == 0) r.responsibilities = (joint.colwise() - lse).array().exp();
  return r;
}

EmResult em(const Matrix& x, const EmOptions& options) {
  options.validate();
  Rng rng(options.seed);
  const GaussianMixture init = kmeans_plus_plus_init(x, options.components, options.covariance, rng,
                                                     options.kmeans_iterations, options.reg_covar);
  return em(x, init, options);
}

}  // namespace blr::inference
