// `blr infer ... --predict FILE --predict-out OUT`: the predictive of every row of a file without
// labels, as CSV. The table's mathematics is the library's (inference/predictive_table.hpp); here
// are the file lines, the predicted class, the report and the CSV writer.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <utility>

#include "blr/core/error.hpp"
#include "blr/inference/predictive_table.hpp"
#include "blr/io/output_file.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

PredictionTable with_lines(inference::PredictiveTable t, inference::Likelihood l,
                           const std::vector<long>& lines, const std::vector<std::string>& classes) {
  PredictionTable out{std::move(t.columns), lines, std::move(t.values), {}};
  if (l == inference::Likelihood::logistic) {
    for (Index i = 0; i < out.values.rows(); ++i)
      out.predicted.push_back(out.values(i, 0) > 0.5 ? classes.at(1) : classes.at(0));
    out.columns.push_back("predicted");
  }
  return out;
}

PredictionTable prediction_table(inference::Likelihood l, const Vector& weights,
                                 const Matrix& latent_mean, const Matrix& latent_variance,
                                 const Vector& probability, double noise_variance, double level,
                                 const std::vector<long>& lines,
                                 const std::vector<std::string>& classes) {
  return with_lines(inference::predictive_table(l, weights, latent_mean, latent_variance,
                                                probability, noise_variance, level),
                    l, lines, classes);
}

std::string probability_method(const inference::PredictiveOptions& p) {
  using inference::PredictiveMethod;
  if (p.method == PredictiveMethod::probit)
    return "the probit approximation σ(μ/√(1 + πσ²/8)) of E[σ(a*)]";
  if (p.method == PredictiveMethod::monte_carlo)
    return fmt::format("E[σ(a*)] by Monte Carlo ({} draws, seed {})", p.samples, p.seed);
  return fmt::format("E[σ(a*)] by {}-node Gauss–Hermite quadrature", p.quadrature_nodes);
}

nlohmann::json report_predictions(const Options& o, const inference::PredictiveOptions& p,
                                  inference::Likelihood l, const PredictionTable& t,
                                  const std::vector<std::string>& classes) {
  using inference::Likelihood;
  const std::string what =
      l == Likelihood::gaussian
          ? "predictive mean and sd of y (noise included) and its interval"
          : l == Likelihood::logistic
                ? fmt::format("probability of class '{}' as {}, and the interval of σ(a*)",
                              classes.at(1), probability_method(p))
                : "the rate e^{a*}: mean, sd and interval";
  fmt::print("predictions: {} rows of '{}' written to '{}' ({}; {:g}% intervals)\n",
             t.values.rows(), o.predict, o.predict_out, what, 100 * o.level);
  nlohmann::json j{{"file", o.predict}, {"out", o.predict_out}, {"rows", t.values.rows()},
                   {"columns", t.columns}, {"level", o.level}};
  if (l == Likelihood::logistic) {
    j["positive_class"] = classes.at(1);
    j["probability"] = std::get<std::string>(inference::PredictiveOptions::table().get(p, "predictive"));
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
