// The uncertainty metrics users compare Bayesian deep learning against, beside the ECE and AUROC
// of metrics.hpp. p_i are the predicted probabilities (given as log-probabilities, checked as in
// metrics.hpp), conf_i = max_k p_ik, correct_i = 1[argmax_k p_ik = y_i], N predictions, B bins.
//
//   adaptive ECE   Σ_b |Σ_{i∈b} correct_i − Σ_{i∈b} conf_i| / N with equal-mass bins: the
//                  predictions sorted by confidence (stable: ties keep their order), bin b holding
//                  ranks ⌊bN/B⌋ … ⌊(b+1)N/B⌋ − 1 (Nguyen & O'Connor 2015; Mukhoti et al. 2020's
//                  AdaECE; Nixon et al. 2019 "Measuring calibration in deep learning")
//   classwise ECE  (1/C) Σ_k Σ_b |Σ_{i∈b_k} 1[y_i = k] − Σ_{i∈b_k} p_ik| / N, where b_k are B
//                  equal-width bins of p_ik on [0, 1] (index min(⌊p·B⌋, B − 1)) (Kull et al. 2019)
//   AURC           area under the risk–coverage curve (Geifman et al. 2019): predictions sorted by
//                  confidence, highest first; risk(k) = errors among the k most confident / k;
//                  AURC = (1/N) Σ_{k=1..N} risk(k). Tied confidences have no order, so the errors
//                  of a tied group count as spread evenly over it (the mean over its orderings).
//
// Out-of-distribution detection with a score s (predictive entropy: higher = more likely out of
// distribution), in-distribution scores s_in (n_in) against out-of-distribution scores s_out:
//
//   AUPR           area under the precision–recall curve with the OOD set as the positive class
//                  ("AUPR-Out"), as average precision: over the distinct thresholds t, highest
//                  first, Σ_t (R_t − R_{t−1})·P_t with R_t = #{s_out ≥ t}/n_out and
//                  P_t = #{s_out ≥ t} / #{s ≥ t} (Hendrycks & Gimpel 2017; scikit-learn's
//                  average_precision_score)
//   FPR95          the share of OOD inputs accepted as in-distribution when 95 % of the
//                  in-distribution inputs are accepted: t* = the ⌈0.95·n_in⌉-th smallest s_in,
//                  FPR95 = #{s_out ≤ t*} / n_out (lower is better; Liang et al. 2018, Hendrycks
//                  et al. 2019; ties at t* count as accepted)
//   AUROC          metrics.hpp's auroc (OOD positive, ties one half)
//
// Everything is computed in double precision on the CPU; bad input is one sentence (blr::Error).
#pragma once

#include <ATen/Tensor.h>

#include <limits>
#include <vector>

namespace blr::torch {

/// OOD detection by a score: AUROC, AUPR (OOD positive) and FPR95; NaN when there is no OOD set.
struct OodMetrics {
  double auroc = std::numeric_limits<double>::quiet_NaN();
  double aupr = std::numeric_limits<double>::quiet_NaN();
  double fpr95 = std::numeric_limits<double>::quiet_NaN();
};

/// Adaptive (equal-mass) ECE with `bins` bins.
double adaptive_calibration_error(const ::at::Tensor& log_probs, const ::at::Tensor& labels,
                                  int bins);

/// Classwise ECE with `bins` equal-width bins per class.
double classwise_calibration_error(const ::at::Tensor& log_probs, const ::at::Tensor& labels,
                                   int bins);

/// Area under the risk–coverage curve (confidence = max probability).
double area_under_risk_coverage(const ::at::Tensor& log_probs, const ::at::Tensor& labels);

/// Average precision of telling `out` (positives) from `in` by a higher score.
double aupr(const std::vector<double>& in, const std::vector<double>& out);

/// The share of `out` scores at or below the 95 % quantile of the `in` scores (see the header).
double fpr_at_95_tpr(const std::vector<double>& in, const std::vector<double>& out);

/// AUROC, AUPR and FPR95 of the scores.
OodMetrics ood_metrics(const std::vector<double>& in, const std::vector<double>& out);

/// The same with predictive entropy as the score: `log_probs_in` (test) vs `log_probs_out` (OOD).
OodMetrics entropy_ood_metrics(const ::at::Tensor& log_probs_in,
                               const ::at::Tensor& log_probs_out);

}  // namespace blr::torch
