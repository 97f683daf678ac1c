#include "blr/torch/metrics/metrics.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "blr/core/error.hpp"
#include "prepared.hpp"

namespace blr::torch {
namespace {

using detail::Prepared;
using detail::check_bins;
using detail::prepare;

std::vector<ReliabilityBin> bins_of(const Prepared& p, int bins) {
  check_bins(bins);
  std::vector<ReliabilityBin> out(static_cast<size_t>(bins));
  std::vector<double> conf_sum(out.size(), 0.0), correct_sum(out.size(), 0.0);
  const int64_t n = p.log_probs.size(0), c = p.log_probs.size(1);
  const double* lp = p.log_probs.data_ptr<double>();
  const int64_t* y = p.labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const double* row = lp + i * c;
    const int64_t k = std::max_element(row, row + c) - row;
    const double conf = std::exp(row[k]);
    auto b = static_cast<int64_t>(std::floor(conf * bins));
    b = std::clamp<int64_t>(b, 0, bins - 1);
    out[static_cast<size_t>(b)].count += 1;
    conf_sum[static_cast<size_t>(b)] += conf;
    correct_sum[static_cast<size_t>(b)] += (k == y[i]) ? 1.0 : 0.0;
  }
  for (size_t b = 0; b < out.size(); ++b) {
    out[b].lower = static_cast<double>(b) / bins;
    out[b].upper = static_cast<double>(b + 1) / bins;
    if (out[b].count > 0) {
      out[b].confidence = conf_sum[b] / static_cast<double>(out[b].count);
      out[b].accuracy = correct_sum[b] / static_cast<double>(out[b].count);
    }
  }
  return out;
}

double ece_of(const Prepared& p, int bins) {
  const auto b = bins_of(p, bins);
  double total = 0.0;
  for (const auto& bin : b) {
    total += std::abs(bin.accuracy - bin.confidence) * static_cast<double>(bin.count);
  }
  return total / static_cast<double>(p.log_probs.size(0));
}

}  // namespace

ClassificationMetrics classification_metrics(const at::Tensor& log_probs, const at::Tensor& labels,
                                             int ece_bins) {
  check_bins(ece_bins);
  const Prepared p = prepare(log_probs, labels);
  ClassificationMetrics m;
  m.count = p.log_probs.size(0);
  m.ece_bins = ece_bins;
  const int64_t n = m.count, c = p.log_probs.size(1);
  const double* lp = p.log_probs.data_ptr<double>();
  const int64_t* y = p.labels.data_ptr<int64_t>();
  double correct = 0, nll = 0, brier = 0, entropy = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double* row = lp + i * c;
    const int64_t k = std::max_element(row, row + c) - row;
    correct += (k == y[i]) ? 1.0 : 0.0;
    nll -= row[y[i]];
    for (int64_t j = 0; j < c; ++j) {
      const double prob = std::exp(row[j]);
      const double target = (j == y[i]) ? 1.0 : 0.0;
      brier += (prob - target) * (prob - target);
      if (prob > 0.0) entropy -= prob * row[j];
    }
  }
  const auto nd = static_cast<double>(n);
  m.accuracy = correct / nd;
  m.nll = nll / nd;
  m.brier = brier / nd;
  m.entropy = entropy / nd;
  m.ece = ece_of(p, ece_bins);
  m.ece20 = ece_bins == 20 ? m.ece : ece_of(p, 20);
  m.adaptive_ece = detail::adaptive_ece(p, ece_bins);
  m.classwise_ece = detail::classwise_ece(p, ece_bins);
  m.aurc = detail::aurc(p);
  return m;
}

double expected_calibration_error(const at::Tensor& log_probs, const at::Tensor& labels, int bins) {
  return ece_of(prepare(log_probs, labels), bins);
}

std::vector<ReliabilityBin> reliability_bins(const at::Tensor& log_probs, const at::Tensor& labels,
                                             int bins) {
  return bins_of(prepare(log_probs, labels), bins);
}

at::Tensor predictive_entropy(const at::Tensor& log_probs) {
  check(log_probs.dim() >= 2, "predictive_entropy needs log-probabilities of shape (N, ..., C).");
  const auto lp = log_probs.detach().reshape({-1, log_probs.size(-1)}).to(at::kCPU, at::kDouble);
  // p·log p with 0·log 0 = 0.
  const auto plogp = at::where(lp.isneginf(), at::zeros_like(lp), lp.exp() * lp);
  return -plogp.sum(1);
}

double auroc(const std::vector<double>& in, const std::vector<double>& out) {
  check(!in.empty() && !out.empty(), "AUROC needs at least one score in each set.");
  // Mann–Whitney: rank all scores (average ranks for ties), sum the ranks of the positives.
  std::vector<std::pair<double, bool>> all;
  all.reserve(in.size() + out.size());
  for (double s : in) all.emplace_back(s, false);
  for (double s : out) all.emplace_back(s, true);
  for (const auto& [s, positive] : all) {
    (void)positive;
    check(!std::isnan(s), "AUROC scores must not be NaN.");
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum = 0.0;
  size_t i = 0;
  while (i < all.size()) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double average_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1..j
    for (size_t k = i; k < j; ++k) {
      if (all[k].second) rank_sum += average_rank;
    }
    i = j;
  }
  const auto n_out = static_cast<double>(out.size());
  const auto n_in = static_cast<double>(in.size());
  const double u = rank_sum - n_out * (n_out + 1.0) / 2.0;
  return u / (n_in * n_out);
}

double entropy_auroc(const at::Tensor& log_probs_in, const at::Tensor& log_probs_out) {
  const auto entropies = [](const at::Tensor& t) {
    const auto c = predictive_entropy(detail::checked_log_probs(t, "AUROC")).contiguous();
    return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  };
  return auroc(entropies(log_probs_in), entropies(log_probs_out));
}

}  // namespace blr::torch
