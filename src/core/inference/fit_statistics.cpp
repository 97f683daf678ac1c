// A GLM's fit statistics (fit_statistics.hpp).
#include "blr/inference/fit_statistics.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"

namespace blr::inference {
namespace {

/// Σ log y_i! (Poisson).
double log_factorials(const Vector& y) {
  double s = 0;
  for (Index i = 0; i < y.size(); ++i) s += std::lgamma(y[i] + 1.0);
  return s;
}

/// y log p with 0 log 0 = 0.
double xlogy(double y, double p) { return y == 0 ? 0.0 : y * std::log(p); }

}  // namespace

FitStatistics fit_statistics(Likelihood likelihood, const Matrix& x, const Vector& y,
                             const Vector& mean) {
  const Index n = x.rows(), k = x.cols();
  check(n >= 1 && y.size() == n && mean.size() == k,
        fmt::format("Fit statistics need one response per row and one coefficient per column; got "
                    "{} rows, {} responses, {} columns and {} coefficients.",
                    n, y.size(), k, mean.size()));
  FitStatistics f;
  f.observations = n;
  f.parameters = k;
  f.r_squared = std::numeric_limits<double>::quiet_NaN();
  const Vector eta = x * mean;
  const double nd = static_cast<double>(n), ybar = y.mean();
  switch (likelihood) {
    case Likelihood::logistic: {
      for (Index i = 0; i < n; ++i) f.log_likelihood += y[i] * eta[i] - log1p_exp(eta[i]);
      for (Index i = 0; i < n; ++i)
        f.null_log_likelihood += xlogy(y[i], ybar) + xlogy(1 - y[i], 1 - ybar);
      break;
    }
    case Likelihood::poisson: {
      const double lf = log_factorials(y);
      f.log_likelihood = y.dot(eta) - eta.array().exp().sum() - lf;
      for (Index i = 0; i < n; ++i) f.null_log_likelihood += xlogy(y[i], ybar);
      f.null_log_likelihood -= nd * ybar + lf;
      break;
    }
    case Likelihood::gaussian: {
      const double rss = (y - eta).squaredNorm();
      const double tss = (y.array() - ybar).matrix().squaredNorm();
      check(rss > 0 && tss > 0,
            "The fit statistics of a Gaussian model need residuals and responses that vary.");
      f.log_likelihood = -0.5 * nd * (std::log(2 * M_PI * rss / nd) + 1);
      f.null_log_likelihood = -0.5 * nd * (std::log(2 * M_PI * tss / nd) + 1);
      f.r_squared = 1 - rss / tss;
      break;
    }
  }
  f.pseudo_r2 = 1 - f.log_likelihood / f.null_log_likelihood;
  f.aic = 2.0 * static_cast<double>(k) - 2 * f.log_likelihood;
  f.bic = static_cast<double>(k) * std::log(nd) - 2 * f.log_likelihood;
  return f;
}

}  // namespace blr::inference
