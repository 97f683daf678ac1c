#include "blr/torch/predictive/ensemble.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"

namespace blr::torch {

at::Tensor ensemble_log_probs(const std::vector<at::Tensor>& members) {
  check(!members.empty(), "An ensemble needs at least one member's log-probabilities.");
  std::vector<at::Tensor> stacked;
  for (size_t m = 0; m < members.size(); ++m) {
    check(members[m].defined() && members[m].sizes() == members.front().sizes(),
          fmt::format("Ensemble member {} has log-probabilities of another shape than member 0.",
                      m));
    const auto lp = members[m].detach().to(at::kCPU, at::kDouble);
    check(!at::isnan(lp).any().item<bool>() && !at::isposinf(lp).any().item<bool>(),
          fmt::format("Ensemble member {} has a NaN or +inf log-probability.", m));
    stacked.push_back(lp);
  }
  return at::logsumexp(at::stack(stacked), {0}) - std::log(static_cast<double>(members.size()));
}

EnsembleEvaluation evaluate_ensemble(const std::vector<MemberPredictions>& members,
                                     const at::Tensor& test_labels,
                                     const at::Tensor& validation_labels, int ece_bins,
                                     bool temperature_scaling) {
  check(!members.empty(), "An ensemble needs at least one member.");
  const auto gather = [&members](at::Tensor MemberPredictions::*split) {
    std::vector<at::Tensor> out;
    for (const auto& m : members) out.push_back(m.*split);
    return out;
  };
  EnsembleEvaluation e;
  e.members = static_cast<int>(members.size());
  const auto test = ensemble_log_probs(gather(&MemberPredictions::test));
  e.test = classification_metrics(test, test_labels, ece_bins);
  e.reliability = reliability_bins(test, test_labels, ece_bins);
  const bool has_shifted = members.front().shifted.defined();
  const auto shifted =
      has_shifted ? ensemble_log_probs(gather(&MemberPredictions::shifted)) : at::Tensor();
  const OodMetrics kNone;  // NaN
  e.ood = has_shifted ? entropy_ood_metrics(test, shifted) : kNone;
  e.has_validation = members.front().validation.defined() && validation_labels.defined();
  check(!temperature_scaling || e.has_validation,
        "Temperature scaling of an ensemble needs a validation split (--validation FRACTION).");
  if (!e.has_validation) return e;
  const auto validation = ensemble_log_probs(gather(&MemberPredictions::validation));
  e.validation = classification_metrics(validation, validation_labels, ece_bins);
  if (temperature_scaling) {
    e.temperature_scaled = true;
    e.temperature = fit_temperature(validation, validation_labels);
    const auto scaled = scale_temperature(test, e.temperature.temperature);
    e.scaled = classification_metrics(scaled, test_labels, ece_bins);
    e.ood_scaled = has_shifted ? entropy_ood_metrics(
                                     scaled, scale_temperature(shifted, e.temperature.temperature))
                               : kNone;
  }
  return e;
}

}  // namespace blr::torch
