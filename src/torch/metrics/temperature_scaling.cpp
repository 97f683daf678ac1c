#include "blr/torch/metrics/temperature_scaling.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <boost/math/tools/minima.hpp>
#include <cmath>

#include "blr/core/error.hpp"
#include "prepared.hpp"

namespace blr::torch {
namespace {

using detail::Prepared;

// The metrics' checks, and finite log-probabilities (a temperature cannot scale −∞ or NaN).
Prepared prepare_finite(const at::Tensor& log_probs, const at::Tensor& labels) {
  Prepared p = detail::prepare(log_probs, labels);
  check(at::isfinite(p.log_probs).all().item<bool>(),
        "Temperature scaling: the log-probabilities hold a non-finite value.");
  return p;
}

double nll(const Prepared& p, double beta) {
  const auto scaled = p.log_probs * beta;
  return (at::logsumexp(scaled, {1}) - scaled.gather(1, p.labels.unsqueeze(1)).squeeze(1))
      .mean()
      .item<double>();
}

}  // namespace

TemperatureFit fit_temperature(const at::Tensor& log_probs, const at::Tensor& labels) {
  const Prepared p = prepare_finite(log_probs, labels);
  const auto [beta, value] = boost::math::tools::brent_find_minima(
      [&p](double b) { return nll(p, b); }, 1.0 / kMaxTemperature, 1.0 / kMinTemperature, 52);
  TemperatureFit fit;
  fit.temperature = 1.0 / beta;
  fit.nll_before = nll(p, 1.0);
  fit.nll_after = value;
  // Within Brent's tolerance of an end: the range, not the data, chose T.
  fit.at_bound = std::abs(fit.temperature - kMinTemperature) < 1e-6 * kMinTemperature ||
                 std::abs(fit.temperature - kMaxTemperature) < 1e-6 * kMaxTemperature;
  return fit;
}

at::Tensor scale_temperature(const at::Tensor& log_probs, double temperature) {
  check(std::isfinite(temperature) && temperature > 0,
        fmt::format("A temperature must be a finite number above 0; got {}.", temperature));
  return at::log_softmax(log_probs.detach().to(at::kCPU, at::kDouble) / temperature, -1);
}

}  // namespace blr::torch
