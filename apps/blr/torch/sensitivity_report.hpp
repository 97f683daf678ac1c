// The network sensitivities as the CLI reports them (blr/torch/posterior/sensitivity.hpp): the JSON of one
// evaluation (per-example arrays with the GLM command's names: error, variance, deviation, score,
// loo) and the per-epoch record of `blr train --sensitivity-every E` (LOO-NLL estimate, test NLL,
// the most influential examples), with its curve (sensitivity_plots.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/posterior/sensitivity.hpp"
#include "blr/torch/train/trainer.hpp"
#include "sensitivity_plots.hpp"

namespace blr::torch {

/// {index, label, score} of each ranked example.
nlohmann::json ranked_json(const NetworkSensitivity& s, const ::at::Tensor& labels,
                           const std::vector<int64_t>& rows);

/// Every example's e, v, d (N×K arrays), s (N), and the LOO and in-sample estimates.
nlohmann::json sensitivity_json(const NetworkSensitivity& s);

/// `--sensitivity-every E`: after every E-th epoch, the sensitivities of the whole training set
/// under the optimizer's posterior (posterior_variance), timed.
class EpochSensitivity {
 public:
  EpochSensitivity(int64_t every, int64_t top) : every_(every), top_(top) {}
  /// Chains a step onto hooks.on_epoch (the progress reporter's stays first).
  void attach(TrainHooks& hooks, Trainer& trainer, const ::at::Tensor& inputs,
              const ::at::Tensor& labels);
  /// {every, source, epochs: [{epoch, loo_nll, loo_accuracy, train_nll, train_accuracy, test_nll,
  /// test_accuracy, seconds, epoch_seconds, top: [...]}]}
  nlohmann::json to_json() const;
  const std::vector<LooPoint>& points() const { return points_; }

 private:
  int64_t every_, top_;
  std::string source_;
  nlohmann::json epochs_ = nlohmann::json::array();
  std::vector<LooPoint> points_;
};

}  // namespace blr::torch
