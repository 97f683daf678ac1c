// Log-probabilities and labels as the metrics read them (metrics.cpp, uncertainty.cpp,
// temperature_scaling.cpp): (N, ..., C) and (N, ...) flattened to M×C double and M int64 on the
// CPU, one row per label, with everything that would make a metric silently wrong refused in one
// sentence (audit 2026-11-28, D14):
//
//   * log-probabilities of a floating dtype with no NaN and no +∞ (−∞ is log 0, allowed);
//   * each row a log-probability vector: lp_k ≤ τ and |Σ_k exp(lp_k) − 1| ≤ τ, with
//         τ = (C + ln C + 2 + K)·ε,   K = 1024,   ε = max(ε_dtype, ε_float32).
//     The worst-case rounding error of a sum of n terms is about n·ε (Higham, Accuracy and
//     Stability of Numerical Algorithms, 2nd ed., §4.2): a log-softmax over C classes sums C
//     terms and subtracts a logarithm (ln C + 2 accounts for the rounding of lp_k, weighted by
//     p_k, whose sum is the entropy ≤ ln C), and a posterior predictive's log-mean-exp over up
//     to K draws sums K more. ε is at least float32's because double log-probabilities usually
//     come from float32 networks (blr's own predictive averages float32 log-softmaxes in double).
//     Logits, or log-probabilities of unnormalised scores, miss by far more than τ (for float32
//     and C = 10, τ ≈ 1.2e-4); a row that passes has probabilities within a relative τ of
//     normalised ones, so no metric moves by more than that;
//   * labels of an integer dtype (not float, not bool) in [0, C), one per row.
#pragma once

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "blr/core/error.hpp"

namespace blr::torch::detail {

struct Prepared {
  at::Tensor log_probs;  // N×C double, CPU, contiguous
  at::Tensor labels;     // N int64, CPU, contiguous
};

inline void check_bins(int bins) {
  check(bins >= 1 && bins <= 10000,
        fmt::format("The number of calibration bins must lie in [1, 10000]; got {}.", bins));
}

/// τ of the header for `classes` classes and log-probabilities of dtype `type`.
inline double log_prob_tolerance(at::ScalarType type, int64_t classes) {
  const double eps = std::max(static_cast<double>(std::numeric_limits<float>::epsilon()),
                              type == at::kDouble ? std::numeric_limits<double>::epsilon()
                              : type == at::kFloat ? std::numeric_limits<float>::epsilon()
                              : type == at::kBFloat16 ? 0.0078125    // 2^-7
                                                      : 0.0009765625);  // half: 2^-10
  const auto c = static_cast<double>(classes);
  return (c + std::log(c) + 2.0 + 1024.0) * eps;
}

/// Log-probabilities (N, ..., C) as N'×C double on the CPU, every row checked (the header's
/// rules); `what` names them in the sentence ("Metrics", "AUROC", ...).
inline at::Tensor checked_log_probs(const at::Tensor& log_probs, const char* what) {
  check(log_probs.defined(), fmt::format("{} need defined tensors.", what));
  check(log_probs.dim() >= 2,
        fmt::format("{} need log-probabilities of shape (N, ..., C); got {} dimension(s).", what,
                    log_probs.dim()));
  check(at::isFloatingType(log_probs.scalar_type()),
        fmt::format("{} need floating-point log-probabilities; got dtype {}.", what,
                    std::string(c10::toString(log_probs.scalar_type()))));
  const int64_t classes = log_probs.size(-1);
  check(classes >= 1, fmt::format("{} need at least one class.", what));
  const auto lp = log_probs.detach().reshape({-1, classes}).to(at::kCPU, at::kDouble).contiguous();
  const double tol = log_prob_tolerance(log_probs.scalar_type(), classes);
  const double* v = lp.data_ptr<double>();
  for (int64_t i = 0; i < lp.size(0); ++i) {
    const double* row = v + i * classes;
    double sum = 0.0;
    for (int64_t k = 0; k < classes; ++k) {
      check(!std::isnan(row[k]) && row[k] != std::numeric_limits<double>::infinity(),
            fmt::format("{}: log-probability {} of row {} is {}; the inputs must be finite "
                        "log-probabilities (−inf for a probability of 0 is allowed).",
                        what, k, i, row[k]));
      check(row[k] <= tol,
            fmt::format("{}: log-probability {} of row {} is {:.6g} > 0; these look like logits: "
                        "pass log_softmax(logits), not the logits.",
                        what, k, i, row[k]));
      sum += std::exp(row[k]);
    }
    check(std::abs(sum - 1.0) <= tol,
          fmt::format("{}: the probabilities of row {} sum to {:.9g}, not 1 (tolerance {:.2g}); "
                      "pass log-probabilities (log_softmax of the logits), not logits or scores.",
                      what, i, sum, tol));
  }
  return lp;
}

inline Prepared prepare(const at::Tensor& log_probs, const at::Tensor& labels) {
  check(log_probs.defined() && labels.defined(), "Metrics need defined tensors.");
  check(log_probs.dim() >= 2 && labels.dim() == log_probs.dim() - 1 &&
            labels.sizes() == log_probs.sizes().slice(0, labels.dim()),
        fmt::format("Metrics need log-probabilities of shape labels.shape + (C): got shape [{}] "
                    "for labels of shape [{}].",
                    fmt::join(log_probs.sizes(), ", "), fmt::join(labels.sizes(), ", ")));
  check(log_probs.size(0) > 0, "Metrics need at least one example.");
  check(at::isIntegralType(labels.scalar_type(), /*includeBool=*/false),
        fmt::format("Metrics need integer class labels; got dtype {}.",
                    std::string(c10::toString(labels.scalar_type()))));
  // One label per position (N, T, ...): every label counts as one prediction.
  const int64_t classes = log_probs.size(-1);
  Prepared p{checked_log_probs(log_probs, "Metrics"),
             labels.detach().reshape(-1).to(at::kCPU, at::kLong).contiguous()};
  const auto* y = p.labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < p.labels.size(0); ++i) {
    check(y[i] >= 0 && y[i] < classes,
          fmt::format("Label {} of example {} lies outside 0..{}.", y[i], i, classes - 1));
  }
  return p;
}

// The uncertainty metrics of uncertainty.cpp on prepared input (classification_metrics fills
// its fields with them).
double adaptive_ece(const Prepared& p, int bins);
double classwise_ece(const Prepared& p, int bins);
double aurc(const Prepared& p);

}  // namespace blr::torch::detail
