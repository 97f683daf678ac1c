#include "blr/torch/metrics/uncertainty.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "blr/core/error.hpp"
#include "blr/torch/metrics/metrics.hpp"
#include "prepared.hpp"

namespace blr::torch {
namespace detail {
namespace {

// Per prediction: its confidence max_k p_ik and whether the argmax is the label.
struct Confidence {
  std::vector<double> value;
  std::vector<double> correct;
};

Confidence confidences(const Prepared& p) {
  const int64_t n = p.log_probs.size(0), c = p.log_probs.size(1);
  const double* lp = p.log_probs.data_ptr<double>();
  const int64_t* y = p.labels.data_ptr<int64_t>();
  Confidence out{std::vector<double>(static_cast<size_t>(n)),
                 std::vector<double>(static_cast<size_t>(n))};
  for (int64_t i = 0; i < n; ++i) {
    const double* row = lp + i * c;
    const int64_t k = std::max_element(row, row + c) - row;
    out.value[static_cast<size_t>(i)] = std::exp(row[k]);
    out.correct[static_cast<size_t>(i)] = k == y[i] ? 1.0 : 0.0;
  }
  return out;
}

// The indices 0..n−1 sorted by `value`, stable; descending when `highest_first`.
std::vector<size_t> order_of(const std::vector<double>& value, bool highest_first) {
  std::vector<size_t> order(value.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return highest_first ? value[a] > value[b] : value[a] < value[b];
  });
  return order;
}

std::vector<double> entropies(const at::Tensor& log_probs, const char* what) {
  const auto lp = checked_log_probs(log_probs, what);
  const auto h = predictive_entropy(lp).contiguous();
  return std::vector<double>(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
}

void check_scores(const std::vector<double>& in, const std::vector<double>& out,
                  const char* what) {
  check(!in.empty() && !out.empty(),
        fmt::format("{} needs at least one score in each set.", what));
  for (const auto* set : {&in, &out}) {
    for (double s : *set) check(!std::isnan(s), fmt::format("{} scores must not be NaN.", what));
  }
}

}  // namespace

double adaptive_ece(const Prepared& p, int bins) {
  check_bins(bins);
  const auto conf = confidences(p);
  const auto order = order_of(conf.value, false);
  const size_t n = order.size();
  double total = 0.0;
  for (size_t b = 0; b < static_cast<size_t>(bins); ++b) {
    double gap = 0.0;  // Σ correct − Σ conf over the bin
    for (size_t r = b * n / bins; r < (b + 1) * n / bins; ++r) {
      gap += conf.correct[order[r]] - conf.value[order[r]];
    }
    total += std::abs(gap);
  }
  return total / static_cast<double>(n);
}

double classwise_ece(const Prepared& p, int bins) {
  check_bins(bins);
  const int64_t n = p.log_probs.size(0), c = p.log_probs.size(1);
  const double* lp = p.log_probs.data_ptr<double>();
  const int64_t* y = p.labels.data_ptr<int64_t>();
  double total = 0.0;
  std::vector<double> gap(static_cast<size_t>(bins));
  for (int64_t k = 0; k < c; ++k) {
    std::fill(gap.begin(), gap.end(), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const double prob = std::exp(lp[i * c + k]);
      const auto b = std::clamp<int64_t>(static_cast<int64_t>(std::floor(prob * bins)), 0,
                                         bins - 1);
      gap[static_cast<size_t>(b)] += (y[i] == k ? 1.0 : 0.0) - prob;
    }
    for (double g : gap) total += std::abs(g);
  }
  return total / (static_cast<double>(n) * static_cast<double>(c));
}

double aurc(const Prepared& p) {
  const auto conf = confidences(p);
  const auto order = order_of(conf.value, true);
  const size_t n = order.size();
  double area = 0.0, errors_before = 0.0;
  size_t start = 0;
  while (start < n) {  // one group of tied confidences [start, end)
    size_t end = start;
    double group_errors = 0.0;
    while (end < n && conf.value[order[end]] == conf.value[order[start]]) {
      group_errors += 1.0 - conf.correct[order[end]];
      ++end;
    }
    const auto size = static_cast<double>(end - start);
    for (size_t k = start + 1; k <= end; ++k) {
      const double errors = errors_before + static_cast<double>(k - start) * group_errors / size;
      area += errors / static_cast<double>(k);
    }
    errors_before += group_errors;
    start = end;
  }
  return area / static_cast<double>(n);
}

}  // namespace detail

double adaptive_calibration_error(const at::Tensor& log_probs, const at::Tensor& labels,
                                  int bins) {
  detail::check_bins(bins);
  return detail::adaptive_ece(detail::prepare(log_probs, labels), bins);
}

double classwise_calibration_error(const at::Tensor& log_probs, const at::Tensor& labels,
                                   int bins) {
  detail::check_bins(bins);
  return detail::classwise_ece(detail::prepare(log_probs, labels), bins);
}

double area_under_risk_coverage(const at::Tensor& log_probs, const at::Tensor& labels) {
  return detail::aurc(detail::prepare(log_probs, labels));
}

double aupr(const std::vector<double>& in, const std::vector<double>& out) {
  detail::check_scores(in, out, "AUPR");
  std::vector<std::pair<double, bool>> all;  // (score, out of distribution)
  all.reserve(in.size() + out.size());
  for (double s : in) all.emplace_back(s, false);
  for (double s : out) all.emplace_back(s, true);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const auto positives = static_cast<double>(out.size());
  double true_positives = 0.0, flagged = 0.0, recall_before = 0.0, area = 0.0;
  size_t i = 0;
  while (i < all.size()) {  // every score equal to the threshold all[i].first is flagged at once
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) {
      true_positives += all[j].second ? 1.0 : 0.0;
      flagged += 1.0;
      ++j;
    }
    const double recall = true_positives / positives;
    area += (recall - recall_before) * (true_positives / flagged);
    recall_before = recall;
    i = j;
  }
  return area;
}

double fpr_at_95_tpr(const std::vector<double>& in, const std::vector<double>& out) {
  detail::check_scores(in, out, "FPR95");
  std::vector<double> sorted = in;
  std::sort(sorted.begin(), sorted.end());
  // ⌈0.95·n⌉ in integers: (95·n + 99) / 100.
  const size_t rank = (95 * sorted.size() + 99) / 100;
  const double threshold = sorted[rank - 1];
  const auto accepted = std::count_if(out.begin(), out.end(),
                                      [threshold](double s) { return s <= threshold; });
  return static_cast<double>(accepted) / static_cast<double>(out.size());
}

OodMetrics ood_metrics(const std::vector<double>& in, const std::vector<double>& out) {
  return {auroc(in, out), aupr(in, out), fpr_at_95_tpr(in, out)};
}

OodMetrics entropy_ood_metrics(const at::Tensor& log_probs_in, const at::Tensor& log_probs_out) {
  return ood_metrics(detail::entropies(log_probs_in, "OOD metrics"),
                     detail::entropies(log_probs_out, "OOD metrics"));
}

}  // namespace blr::torch
