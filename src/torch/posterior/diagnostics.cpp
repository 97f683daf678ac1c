#include "blr/torch/posterior/diagnostics.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "blr/torch/optim/registry.hpp"

namespace blr::torch {
namespace {

// Quantiles are read off a sorted copy; above this many coordinates, off an evenly strided subset
// of this size (the shares are always exact).
constexpr int64_t kQuantileSample = int64_t{1} << 20;

std::vector<double> quantiles(const at::Tensor& flat) {
  at::Tensor values = flat;
  const int64_t n = flat.numel();
  if (n > kQuantileSample) {
    const int64_t stride = (n + kQuantileSample - 1) / kQuantileSample;
    values = flat.slice(0, 0, n, stride);
  }
  const auto sorted = std::get<0>(values.to(at::kDouble).sort());
  const auto* v = sorted.data_ptr<double>();
  const int64_t m = sorted.numel();
  std::vector<double> out;
  for (const double level : diagnostic_levels()) {  // linear interpolation between order statistics
    const double position = level * static_cast<double>(m - 1);
    const auto lo = static_cast<int64_t>(std::floor(position));
    const int64_t hi = std::min(lo + 1, m - 1);
    const double w = position - static_cast<double>(lo);
    out.push_back((1.0 - w) * v[lo] + w * v[hi]);
  }
  return out;
}

std::optional<double> number_option(const OptionValues& values, const std::string& key) {
  for (const auto& [k, v] : values) {
    if (k == key && std::holds_alternative<double>(v)) return std::get<double>(v);
  }
  return std::nullopt;
}

bool switch_option(const OptionValues& values, const std::string& key, bool otherwise) {
  for (const auto& [k, v] : values) {
    if (k == key && std::holds_alternative<bool>(v)) return std::get<bool>(v);
  }
  return otherwise;
}

}  // namespace

nlohmann::json PosteriorDiagnostics::to_json() const {
  const auto number = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  nlohmann::json j = {{"steps", steps},
                      {"coordinates", coordinates},
                      {"levels", diagnostic_levels()},
                      {"curvature_quantiles", curvature_quantiles},
                      {"sigma_quantiles", sigma_quantiles},
                      {"initial_curvature", number(initial_curvature)},
                      {"share_at_initial", share_at_initial},
                      {"share_decaying", number(share_decaying)},
                      {"share_clipped", number(share_clipped)},
                      {"beta2", number(beta2)}};
  return j;
}

PosteriorDiagnostics PosteriorDiagnostics::from_json(const nlohmann::json& j) {
  const auto number = [&j](const char* key) {
    return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>()
                                                    : std::numeric_limits<double>::quiet_NaN();
  };
  PosteriorDiagnostics d;
  d.steps = j.at("steps").get<int64_t>();
  d.coordinates = j.at("coordinates").get<int64_t>();
  d.curvature_quantiles = j.at("curvature_quantiles").get<std::vector<double>>();
  d.sigma_quantiles = j.at("sigma_quantiles").get<std::vector<double>>();
  d.initial_curvature = number("initial_curvature");
  d.share_at_initial = j.at("share_at_initial").get<double>();
  d.share_clipped = number("share_clipped");
  d.share_decaying = number("share_decaying");
  d.beta2 = number("beta2");
  return d;
}

std::optional<PosteriorDiagnostics> posterior_diagnostics(::torch::optim::Optimizer& optimizer,
                                                          const std::string& name) {
  auto* posterior = capability<DiagonalGaussianPosterior>(optimizer);
  if (posterior == nullptr) return std::nullopt;
  const auto& entry = find_optimizer(name);
  ::at::NoGradGuard no_grad;
  const auto curvature = posterior->curvature();
  const auto precision = posterior->posterior_precision();
  const auto means = posterior->posterior_mean();
  const auto momentum = posterior->momentum();
  PosteriorDiagnostics d;
  d.steps = posterior->step_count();
  std::vector<at::Tensor> h_all, sigma_all;
  double at_initial = 0.0, decaying = 0.0, clipped = 0.0;
  bool decay_known = false;
  bool clip_known = false;
  size_t index = 0;
  const auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    const double h0 = posterior->initial_curvature(g);
    if (g == 0) d.initial_curvature = h0;
    OptionValues options;
    if (entry.group_options) options = entry.group_options.read(groups[g].options());
    if (g == 0) d.beta2 = number_option(options, "beta2").value_or(d.beta2);
    const double clip = number_option(options, "clip_radius").value_or(INFINITY);
    const double delta = number_option(options, "weight_decay").value_or(0.0);
    const double beta1 = number_option(options, "beta1").value_or(0.0);
    const bool debias = switch_option(options, "debias", false);
    for (size_t k = 0; k < groups[g].params().size(); ++k, ++index) {
      const auto h = curvature[index].detach().to(at::kDouble).reshape(-1);
      h_all.push_back(h);
      sigma_all.push_back(precision[index].detach().to(at::kDouble).reshape(-1).rsqrt());
      at_initial += (h - h0).abs().le(0.01 * std::abs(h0)).sum().item<double>();
      if (const auto beta2 = number_option(options, "beta2")) {
        decay_known = true;
        const double decayed = h0 * std::pow(*beta2, static_cast<double>(d.steps));
        decaying += (h - decayed).abs().le(0.01 * std::abs(decayed)).sum().item<double>();
      }
      if (std::isfinite(clip) && d.steps > 0) {
        clip_known = true;
        const double correction =
            debias ? 1.0 - std::pow(beta1, static_cast<double>(d.steps)) : 1.0;
        const auto m_hat = momentum[index].detach().to(at::kDouble).reshape(-1) / correction;
        const auto mu = means[index].detach().to(at::kDouble).reshape(-1);
        const auto step = (m_hat + delta * mu).abs() / (h + delta);
        clipped += step.ge(clip).sum().item<double>();
      }
    }
  }
  if (h_all.empty()) return std::nullopt;
  const auto h = at::cat(h_all);
  d.coordinates = h.numel();
  d.curvature_quantiles = quantiles(h);
  d.sigma_quantiles = quantiles(at::cat(sigma_all));
  d.share_at_initial = at_initial / static_cast<double>(d.coordinates);
  if (clip_known) d.share_clipped = clipped / static_cast<double>(d.coordinates);
  if (decay_known) d.share_decaying = decaying / static_cast<double>(d.coordinates);
  return d;
}

std::string posterior_warning(const PosteriorDiagnostics& d, double run_share,
                              const std::string& name) {
  if (run_share < kStuckAfterShare || d.share_at_initial < kStuckShare) return {};
  std::string reach;
  if (std::isfinite(d.beta2)) {
    const double moved = 1.0 - std::pow(d.beta2, static_cast<double>(d.steps));
    reach = fmt::format(
        "lower --{0}-beta2 (with β₂ = {1} at most {2:.1f} % of h can come from the data in {3} "
        "steps; 1 − β₂ of about 5 divided by the run's steps lets h reach its estimates), lower "
        "--{0}-hess-init or raise --{0}-lr",
        name, d.beta2, 100.0 * moved, d.steps);
  } else {
    reach = fmt::format("lower --{0}-hess-init or raise --{0}-lr", name);
  }
  return fmt::format(
      "{}: the posterior has not moved from its initial value: after {} steps ({:.0f} % of the "
      "run) the curvature is still within 1 % of its initial value {:g} for {:.1f} % of the "
      "coordinates, so σ is set by that value rather than learned from the data; {}.",
      name, d.steps, 100.0 * run_share, d.initial_curvature, 100.0 * d.share_at_initial, reach);
}

}  // namespace blr::torch
