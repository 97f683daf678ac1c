// Classification and calibration metrics of a predictive distribution p_i (N×C probabilities,
// given as log-probabilities) against labels y_i. Labels of shape (N, T, ...) with
// log-probabilities of shape (N, T, ..., C) (one label per position, as a language model's next
// tokens) count every label as one prediction: i runs over all N·T·… labels.
//
//   accuracy  (1/N) Σ_i 1[argmax_k p_ik = y_i]
//   NLL       (1/N) Σ_i −log p_i,y_i
//   ECE       Σ_b |Σ_{i∈b} 1[correct_i] − Σ_{i∈b} conf_i| / N,  conf_i = max_k p_ik, B equal-width
//             bins on [0, 1], bin index min(⌊conf·B⌋, B − 1) (Guo et al. 2017; the IVON
//             experiments' convention with B = 20; blr reports B = 15 by default and 20 beside it)
//   Brier     (1/N) Σ_i Σ_k (p_ik − 1[k = y_i])²   (summed over classes, not divided by C)
//   entropy   (1/N) Σ_i −Σ_k p_ik log p_ik          (predictive entropy, nats)
//   AUROC     P(s_out > s_in) + ½ P(s_out = s_in) with score s = predictive entropy: how well the
//             entropy separates a shifted (out-of-distribution) set from the test set
//             (Mann–Whitney U / (n_in·n_out)).
// The adaptive and classwise ECE, AURC, AUPR and FPR95 are in metrics/uncertainty.hpp; every
// entry refuses input that is not log-probabilities and integer labels in one sentence (NaN, +∞,
// rows whose probabilities do not sum to 1, float labels, mismatched shapes: see
// src/torch/metrics/prepared.hpp for the tolerance).
// Everything is computed in double precision on the CPU whatever the device of the inputs.
#pragma once

#include <ATen/Tensor.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "blr/torch/metrics/uncertainty.hpp"

namespace blr::torch {

struct ClassificationMetrics {
  int64_t count = 0;
  double accuracy = 0.0;
  double nll = 0.0;
  double ece = 0.0;    ///< with `ece_bins` bins (15 by default)
  double ece20 = 0.0;  ///< with 20 bins
  int ece_bins = 15;
  double brier = 0.0;
  double entropy = 0.0;  ///< mean predictive entropy (nats)
  double adaptive_ece = 0.0;   ///< equal-mass bins, `ece_bins` of them (metrics/uncertainty.hpp)
  double classwise_ece = 0.0;  ///< `ece_bins` equal-width bins per class
  double aurc = 0.0;           ///< area under the risk–coverage curve
};

/// One bin of a reliability diagram.
struct ReliabilityBin {
  double lower = 0.0, upper = 0.0;
  int64_t count = 0;
  double confidence = 0.0;  ///< mean confidence in the bin (0 when empty)
  double accuracy = 0.0;    ///< accuracy in the bin (0 when empty)
};

/// All metrics of log-probabilities `log_probs` (N×C, or labels.shape + (C)) against `labels`.
ClassificationMetrics classification_metrics(const ::at::Tensor& log_probs,
                                             const ::at::Tensor& labels, int ece_bins = 15);

/// Perplexity exp(NLL): for a language model, exp of the mean negative log-likelihood per token
/// (of the predictive the metrics were computed from: at the mean, or the posterior predictive).
inline double perplexity(const ClassificationMetrics& m) { return std::exp(m.nll); }

/// Expected calibration error with `bins` equal-width confidence bins.
double expected_calibration_error(const ::at::Tensor& log_probs, const ::at::Tensor& labels,
                                  int bins);

/// The bins of the reliability diagram (same binning as the ECE).
std::vector<ReliabilityBin> reliability_bins(const ::at::Tensor& log_probs,
                                             const ::at::Tensor& labels, int bins);

/// Entropy −Σ_k p_k log p_k of each row of `log_probs` (N), double, CPU.
::at::Tensor predictive_entropy(const ::at::Tensor& log_probs);

/// Area under the ROC curve for telling `out` scores (positives) from `in` scores (negatives),
/// higher score = more likely out of distribution; ties count one half.
double auroc(const std::vector<double>& in, const std::vector<double>& out);

/// AUROC of predictive entropy: in-distribution `log_probs_in` vs shifted `log_probs_out`.
double entropy_auroc(const ::at::Tensor& log_probs_in, const ::at::Tensor& log_probs_out);

}  // namespace blr::torch
