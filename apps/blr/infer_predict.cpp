// `blr infer ... --predict FILE --predict-out OUT`: the predictive of every row of a file without
// labels, as CSV. The latent a* = x*ᵀw is Gaussian under a Gaussian posterior (a mixture of
// Gaussians under a mixture posterior; GP latents likewise):
//   linreg, gpr   y* = a* + ε, ε ~ N(0, σ²_noise): mean, sd = √(Var a* + σ²_noise), interval of y*;
//   logistic, gpc P(y* = positive) = E[σ(a*)] by the --predictive method; the interval of the
//                 success probability σ(a*) is σ of a*'s interval (σ is monotone);
//   poisson       the rate e^{a*}: mean Σ_k w_k e^{m_k + v_k/2}, sd from E[e^{2a*}] =
//                 Σ_k w_k e^{2m_k + 2v_k}, interval e^{a*'s interval} (lognormal quantiles).
#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/io/output_file.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {
namespace {

double sigmoid(double a) { return a >= 0 ? 1.0 / (1.0 + std::exp(-a)) : std::exp(a) / (1.0 + std::exp(a)); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

PredictionTable prediction_table(inference::Likelihood l, const Vector& weights,
                                 const Matrix& latent_mean, const Matrix& latent_variance,
                                 const Vector& probability, double noise_variance, double level,
                                 const std::vector<long>& lines,
                                 const std::vector<std::string>& classes) {
  using inference::Likelihood;
  const Index n = latent_mean.rows(), k = weights.size();
  PredictionTable t;
  t.lines = lines;
  t.columns = l == Likelihood::gaussian   ? std::vector<std::string>{"mean", "sd", "lower", "upper"}
              : l == Likelihood::logistic ? std::vector<std::string>{"probability", "lower", "upper"}
                                          : std::vector<std::string>{"rate_mean", "rate_sd",
                                                                     "lower", "upper"};
  t.values.resize(n, static_cast<Index>(t.columns.size()));
  for (Index i = 0; i < n; ++i) {
    inference::GaussianMixture1d a{weights, latent_mean.row(i).transpose(),
                                   latent_variance.row(i).transpose().cwiseMax(0.0)};
    if (l == Likelihood::gaussian) {
      a.variances.array() += noise_variance;  // y* = a* + ε
      const auto ci = a.interval(level);
      t.values.row(i) << a.mean(), std::sqrt(a.variance()), ci.lower, ci.upper;
    } else if (l == Likelihood::logistic) {
      const auto ci = a.interval(level);
      t.values.row(i) << probability[i], sigmoid(ci.lower), sigmoid(ci.upper);
      t.predicted.push_back(probability[i] > 0.5 ? classes.at(1) : classes.at(0));
    } else {
      const auto ci = a.interval(level);
      double mean = 0, second = 0;
      for (Index c = 0; c < k; ++c) {
        mean += weights[c] * std::exp(a.means[c] + a.variances[c] / 2);
        second += weights[c] * std::exp(2 * a.means[c] + 2 * a.variances[c]);
      }
      // One component: the lognormal sd e^{m + v/2}·√(e^v − 1), without cancellation.
      const double sd = k == 1 ? mean * std::sqrt(std::expm1(a.variances[0]))
                               : std::sqrt(std::max(0.0, second - mean * mean));
      t.values.row(i) << mean, sd, std::exp(ci.lower), std::exp(ci.upper);
    }
  }
  if (l == Likelihood::logistic) t.columns.push_back("predicted");
  return t;
}

std::string probability_method(const Options& o) {
  if (o.predictive == "probit")
    return "the probit approximation σ(μ/√(1 + πσ²/8)) of E[σ(a*)]";
  if (o.predictive == "monte-carlo")
    return fmt::format("E[σ(a*)] by Monte Carlo ({} draws, seed {})", o.samples, o.seed);
  return fmt::format("E[σ(a*)] by {}-node Gauss–Hermite quadrature", o.quadrature_nodes);
}

nlohmann::json report_predictions(const Options& o, inference::Likelihood l,
                                  const PredictionTable& t,
                                  const std::vector<std::string>& classes) {
  using inference::Likelihood;
  const std::string what =
      l == Likelihood::gaussian
          ? "predictive mean and sd of y (noise included) and its interval"
          : l == Likelihood::logistic
                ? fmt::format("probability of class '{}' as {}, and the interval of σ(a*)",
                              classes.at(1), probability_method(o))
                : "the rate e^{a*}: mean, sd and interval";
  fmt::print("predictions: {} rows of '{}' written to '{}' ({}; {:g}% intervals)\n",
             t.values.rows(), o.predict, o.predict_out, what, 100 * o.level);
  nlohmann::json j{{"file", o.predict}, {"out", o.predict_out}, {"rows", t.values.rows()},
                   {"columns", t.columns}, {"level", o.level}};
  if (l == Likelihood::logistic) {
    j["positive_class"] = classes.at(1);
    j["probability"] = o.predictive;
  }
  return j;
}

void require_finite_predictions(const PredictionTable& t, const std::string& file) {
  for (Index i = 0; i < t.values.rows(); ++i)
    for (Index j = 0; j < t.values.cols(); ++j)
      if (!std::isfinite(t.values(i, j))) {
        throw Error(fmt::format(
            "The prediction for line {} of '{}' is not finite ('{}' is {}); the inputs are beyond "
            "what double precision can represent (rescale them, e.g. --standardize).",
            t.lines[i], file, t.columns[j], std::isnan(t.values(i, j)) ? "NaN" : "infinite"));
      }
}

void write_predictions(const std::string& path, const PredictionTable& t) {
  std::string out = "line";
  for (const auto& c : t.columns) out += ',' + c;
  out += '\n';
  for (Index i = 0; i < t.values.rows(); ++i) {
    out += std::to_string(t.lines[i]);
    for (Index j = 0; j < t.values.cols(); ++j) out += fmt::format(",{}", t.values(i, j));
    if (!t.predicted.empty()) out += ',' + csv_field(t.predicted[i]);
    out += '\n';
  }
  blr::io::write_output_file(path, out, "the prediction file");
}

}  // namespace blr::cli::infer
