// Speed of training and prediction as users see it (`blr bench epoch|predict`,
// bench/torch/train_bench.cpp): the wall time of a training epoch of each optimizer on one task,
// and of the posterior predictive with K samples against one pass at the mean.
//
// Epochs: every optimizer gets its own Trainer (same model, data, minibatch order and seed), and
// the timed epochs are interleaved in rounds (round r trains epoch r of every optimizer), so a
// change of load on the machine hits all of them alike. An epoch's time is that of its training
// steps (forward, backward, per-example squared gradients where the optimizer needs them, the
// weight sampling and the update) — Trainer's EpochRecord::seconds, without the evaluation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blr/torch/data/fashion_mnist.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch {

/// The median of a non-empty sample (the mean of the two middle values for an even count).
double median(std::vector<double> values);

struct EpochTiming {
  std::string optimizer;
  std::vector<double> epoch_seconds;  ///< one per round
  double median_seconds = 0.0;
  int64_t steps_per_epoch = 0;
  double median_step_ms = 0.0;  ///< median_seconds / steps_per_epoch
};

/// Trains `rounds` ≥ 1 epochs of each optimizer (constant learning rate, `base` otherwise) and
/// returns their epoch times in the order of `optimizers`. `options[name]` holds each
/// optimizer's given options.
std::vector<EpochTiming> time_epochs(
    const TrainConfig& base, const std::vector<std::string>& optimizers,
    const OptimizerOptions& options,
    const std::shared_ptr<const Dataset>& data, int rounds);

struct PredictiveTiming {
  int samples = 0;               ///< K
  int64_t examples = 0;          ///< test examples per pass
  double mean_seconds = 0.0;     ///< median time of one pass at the mean
  double predictive_seconds = 0.0;  ///< median time of the K-sample predictive
  /// predictive_seconds / (K · mean_seconds): the cost of a sample relative to a plain pass
  /// (≥ 1: drawing θ, restoring μ and the log-domain average come on top of the forward pass).
  double per_sample_ratio = 0.0;
};

/// Times the posterior predictive of a variational optimizer (`base.optimizer`, freshly
/// initialised: the cost does not depend on training) on the test set, median of `repeats`.
PredictiveTiming time_predictive(const TrainConfig& base,
                                 const std::shared_ptr<const Dataset>& data, int samples,
                                 int repeats);

}  // namespace blr::torch
