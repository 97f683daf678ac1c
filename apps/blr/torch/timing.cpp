// Epoch and predictive timings (timing.hpp).
#include "timing.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "blr/core/error.hpp"
#include "blr/torch/data/batches.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "blr/torch/train/trainer.hpp"

namespace blr::torch {
namespace {

double seconds_of(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double median(std::vector<double> v) {
  check(!v.empty(), "The median of an empty sample is undefined.");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<EpochTiming> time_epochs(
    const TrainConfig& base, const std::vector<std::string>& optimizers,
    const OptimizerOptions& options,
    const std::shared_ptr<const Dataset>& data, int rounds) {
  check(rounds >= 1, fmt::format("The number of timed epochs must be at least 1; got {}.", rounds));
  check(!optimizers.empty(), "Name at least one optimizer to time.");
  std::vector<std::unique_ptr<Trainer>> trainers;
  for (const auto& name : optimizers) {
    TrainConfig config = base;
    config.optimizer = name;
    config.epochs = rounds;
    config.schedule = "constant";
    const auto given = options.find(name);
    config.optimizer_options = given == options.end() ? OptionValues{} : given->second;
    trainers.push_back(std::make_unique<Trainer>(config, data));
  }
  std::vector<EpochTiming> timings(optimizers.size());
  for (int r = 1; r <= rounds; ++r) {
    for (size_t k = 0; k < trainers.size(); ++k) {
      TrainHooks hooks;
      hooks.stop_after_epoch = r;
      hooks.on_epoch = [&timings, k](const EpochRecord& record) {
        timings[k].epoch_seconds.push_back(record.seconds);
      };
      trainers[k]->train(hooks);
    }
  }
  const int64_t n = data->train.size();
  const int64_t steps = batch_count(n, std::min(base.batch_size, n));
  for (size_t k = 0; k < optimizers.size(); ++k) {
    EpochTiming& t = timings[k];
    t.optimizer = optimizers[k];
    t.median_seconds = median(t.epoch_seconds);
    t.steps_per_epoch = steps;
    t.median_step_ms = 1000.0 * t.median_seconds / static_cast<double>(steps);
  }
  return timings;
}

PredictiveTiming time_predictive(const TrainConfig& base,
                                 const std::shared_ptr<const Dataset>& data, int samples,
                                 int repeats) {
  check(samples >= 1, fmt::format("The number of posterior samples must be at least 1; got {}.",
                                  samples));
  check(repeats >= 1, fmt::format("The number of repeats must be at least 1; got {}.", repeats));
  Trainer trainer(base, data);
  VariationalOptimizer* v = as_variational(trainer.optimizer());
  check(v != nullptr && v->has_posterior(),
        fmt::format("The posterior predictive needs an optimizer with a posterior ({}); got '{}'.",
                    fmt::join(optimizer_names_with(&OptimizerEntry::variational), ", "),
                    base.optimizer));
  const at::Tensor& images = data->test.x;
  std::vector<double> mean_times, predictive_times;
  for (int r = 0; r < repeats; ++r) {
    mean_times.push_back(seconds_of([&] { predict_log_probs(trainer.model(), images); }));
    predictive_times.push_back(
        seconds_of([&] { predictive_log_probs(trainer.model(), *v, images, samples); }));
  }
  PredictiveTiming t;
  t.samples = samples;
  t.examples = images.size(0);
  t.mean_seconds = median(mean_times);
  t.predictive_seconds = median(predictive_times);
  t.per_sample_ratio = t.predictive_seconds / (samples * t.mean_seconds);
  return t;
}

}  // namespace blr::torch
