#include "blr/torch/metrics/regression.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "blr/core/error.hpp"

namespace blr::torch {

PredictiveMoments predictive_moments(const at::Tensor& means, const at::Tensor& sigma) {
  PredictiveMoments out;
  out.mean = means.mean(0);
  const auto spread = (means - out.mean).pow(2).mean(0);  // population variance over samples
  auto noise = sigma.pow(2);  // (D), (1, 1, D) or (1, N, D): to a shape that broadcasts with N×D
  while (noise.dim() > 2) noise = noise.squeeze(0);
  out.sd = (spread + noise).sqrt();
  return out;
}

namespace {

/// The metrics of the header for means m (K×N×D) with noise sd `sigma` ((1, 1, D) or (1, N, D))
/// against targets y (1×N×D), all double on the CPU.
RegressionMetrics metrics_of(const at::Tensor& m, const at::Tensor& sigma, const at::Tensor& y) {
  RegressionMetrics r;
  r.count = y.numel();
  const int64_t k = m.size(0);
  const auto moments = predictive_moments(m, sigma);  // N×D
  r.rmse = std::sqrt((y - moments.mean).pow(2).mean().item<double>());
  const auto z = (y - m) / sigma;  // K×N×D
  const auto log_pdf = -0.5 * z.pow(2) - sigma.log() - 0.5 * std::log(2 * M_PI);
  r.nll = -(at::logsumexp(log_pdf, 0) - std::log(static_cast<double>(k))).mean().item<double>();
  const auto pit = (0.5 * at::erfc(-z / std::sqrt(2.0))).mean(0);  // Φ(z) = ½ erfc(−z/√2)
  double miscalibration = 0.0;
  for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
    const double p = kCoverageLevels[i];
    const auto inside = at::logical_and(pit.ge((1 - p) / 2), pit.le((1 + p) / 2));
    r.coverage[i] = inside.to(at::kDouble).mean().item<double>();
    miscalibration += std::abs(r.coverage[i] - p);
  }
  r.miscalibration = miscalibration / static_cast<double>(kCoverageLevels.size());
  r.predictive_std = moments.sd.mean().item<double>();
  return r;
}

}  // namespace

RegressionMetrics regression_metrics(const at::Tensor& means, const at::Tensor& targets,
                                     const std::vector<double>& noise_std, bool sampled) {
  check(means.defined() && targets.defined() && targets.dim() >= 1 && targets.dim() <= 2,
        "Regression metrics need targets of shape (N) or (N, D).");
  const int64_t n = targets.size(0);
  const int64_t d = targets.dim() == 2 ? targets.size(1) : 1;
  check(n > 0, "Regression metrics need at least one example.");
  const auto y = targets.detach().to(at::kCPU, at::kDouble).reshape({1, n, d});
  auto m = means.detach().to(at::kCPU, at::kDouble);
  if (!sampled) m = m.unsqueeze(0);
  check(m.dim() >= 2 && m.size(1) == n && m.numel() == m.size(0) * n * d,
        "The predicted means have shape [{}]; the targets [{}].", fmt::join(means.sizes(), ", "),
        fmt::join(targets.sizes(), ", "));
  m = m.reshape({m.size(0), n, d});
  check(noise_std.size() == 1 || static_cast<int64_t>(noise_std.size()) == d,
        "Regression metrics need one noise standard deviation or one per output ({}); got {}.", d,
        noise_std.size());
  for (double s : noise_std) {
    check(s > 0 && std::isfinite(s), "The observation noise must be positive and finite; got {}.",
          s);
  }
  const auto sigma =
      (noise_std.size() == 1 ? at::full({d}, noise_std[0], at::kDouble)
                             : at::tensor(noise_std, at::kDouble))
          .reshape({1, 1, d});
  return metrics_of(m, sigma, y);
}

RegressionMetrics gaussian_regression_metrics(const at::Tensor& mean, const at::Tensor& sd,
                                              const at::Tensor& targets) {
  check(mean.defined() && sd.defined() && targets.defined() && targets.dim() >= 1 &&
            targets.dim() <= 2,
        "Regression metrics need targets of shape (N) or (N, D).");
  const int64_t n = targets.size(0);
  const int64_t d = targets.dim() == 2 ? targets.size(1) : 1;
  check(n > 0, "Regression metrics need at least one example.");
  check(mean.numel() == n * d && sd.numel() == n * d,
        "The predictive's means [{}] and standard deviations [{}] must match the targets [{}].",
        fmt::join(mean.sizes(), ", "), fmt::join(sd.sizes(), ", "),
        fmt::join(targets.sizes(), ", "));
  const auto s = sd.detach().to(at::kCPU, at::kDouble).reshape({1, n, d});
  check((s > 0).all().item<bool>() && s.isfinite().all().item<bool>(),
        "The predictive's standard deviations must be positive and finite.");
  return metrics_of(mean.detach().to(at::kCPU, at::kDouble).reshape({1, n, d}), s,
                    targets.detach().to(at::kCPU, at::kDouble).reshape({1, n, d}));
}

}  // namespace blr::torch
