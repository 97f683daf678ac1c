// Deep ensembles (Lakshminarayanan, Pritzel & Blundell, NeurIPS 2017), the standard strong
// baseline for calibration: M networks trained alike from M seeds, predicting with the average
// of their predictive distributions,
//
//   p(y|x) = (1/M) Σ_m p_m(y|x),   log p = logsumexp_m log p_m − log M
//
// (the log-mean-exp of the members' log-probabilities: no underflow for confident classes).
// `blr ensemble` trains the members with one optimizer and recipe (seeds s, s+1, …, s+M−1) and
// scores the ensemble with the metrics of metrics.hpp, optionally after temperature scaling.
#pragma once

#include <ATen/Tensor.h>

#include <vector>

#include "blr/torch/metrics/metrics.hpp"
#include "blr/torch/metrics/temperature_scaling.hpp"

namespace blr::torch {

/// log (1/M) Σ_m exp(members[m]): members' log-probabilities of one shape (N×…×C), in double
/// precision on the CPU (blr::Error for none, different shapes or non-finite values).
::at::Tensor ensemble_log_probs(const std::vector<::at::Tensor>& members);

/// The members' log-probabilities on each split a run is scored on (undefined when absent).
struct MemberPredictions {
  ::at::Tensor test, shifted, validation;
};

/// An ensemble's scores: the metrics of the averaged predictive on the test split (and on the
/// validation split when there is one), its reliability bins, the entropy AUROC against the
/// shifted split, and with temperature scaling T fitted on the validation split.
struct EnsembleEvaluation {
  int members = 0;
  ClassificationMetrics test;
  std::vector<ReliabilityBin> reliability;
  OodMetrics ood;  ///< entropy AUROC, AUPR, FPR95; NaN without an OOD split
  bool has_validation = false;
  ClassificationMetrics validation;
  bool temperature_scaled = false;
  TemperatureFit temperature;
  ClassificationMetrics scaled;
  OodMetrics ood_scaled;
};

/// Scores the ensemble of `members` against the test and validation labels (`validation_labels`
/// undefined when there is no validation split); `temperature_scaling` needs a validation split.
EnsembleEvaluation evaluate_ensemble(const std::vector<MemberPredictions>& members,
                                     const ::at::Tensor& test_labels,
                                     const ::at::Tensor& validation_labels, int ece_bins,
                                     bool temperature_scaling);

}  // namespace blr::torch
