// The predictive table of new inputs (predictive_table.hpp).
#include "blr/inference/predictive_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/intervals.hpp"

namespace blr::inference {

PredictiveTable predictive_table(Likelihood likelihood, const Vector& weights,
                                 const Matrix& latent_mean, const Matrix& latent_variance,
                                 const Vector& probability, double noise_variance, double level) {
  const Index n = latent_mean.rows(), k = weights.size();
  check(latent_variance.rows() == n && latent_mean.cols() == k && latent_variance.cols() == k &&
            (likelihood != Likelihood::logistic || probability.size() == n),
        fmt::format("A predictive table needs one row of latent moments per input, one column per "
                    "mixture weight and, for a classifier, one probability per input; got {}×{} "
                    "means, {}×{} variances, {} weights and {} probabilities.",
                    n, latent_mean.cols(), latent_variance.rows(), latent_variance.cols(), k,
                    probability.size()));
  check_level(level);
  PredictiveTable t;
  t.columns = likelihood == Likelihood::gaussian
                  ? std::vector<std::string>{"mean", "sd", "lower", "upper"}
              : likelihood == Likelihood::logistic
                  ? std::vector<std::string>{"probability", "lower", "upper"}
                  : std::vector<std::string>{"rate_mean", "rate_sd", "lower", "upper"};
  t.values.resize(n, static_cast<Index>(t.columns.size()));
  for (Index i = 0; i < n; ++i) {
    GaussianMixture1d a{weights, latent_mean.row(i).transpose(),
                        latent_variance.row(i).transpose().cwiseMax(0.0)};
    if (likelihood == Likelihood::gaussian) {
      a.variances.array() += noise_variance;  // y* = a* + ε
      const auto ci = a.interval(level);
      t.values.row(i) << a.mean(), std::sqrt(a.variance()), ci.lower, ci.upper;
    } else if (likelihood == Likelihood::logistic) {
      const auto ci = a.interval(level);
      t.values.row(i) << probability[i], sigmoid(ci.lower), sigmoid(ci.upper);
    } else {
      const auto ci = a.interval(level);
      double mean = 0, second = 0;
      for (Index c = 0; c < k; ++c) {
        mean += weights[c] * std::exp(a.means[c] + a.variances[c] / 2);
        second += weights[c] * std::exp(2 * a.means[c] + 2 * a.variances[c]);
      }
      const double sd = k == 1 ? mean * std::sqrt(std::expm1(a.variances[0]))
                               : std::sqrt(std::max(0.0, second - mean * mean));
      t.values.row(i) << mean, sd, std::exp(ci.lower), std::exp(ci.upper);
    }
  }
  return t;
}

}  // namespace blr::inference
