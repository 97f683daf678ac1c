// Google Benchmark: a Fashion-MNIST training epoch (MLP 784-500-300-10, batch 128, the first
// 12 800 training images = 100 steps) per optimizer, and the posterior predictive with K = 64
// samples against one pass at the mean (2 000 test images), one LibTorch thread. Compare within
// one run; `blr bench epoch` and `blr bench predict` print the ratios on the full data set.
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <memory>

#include "blr/core/error.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "blr/torch/train/trainer.hpp"

namespace {

std::shared_ptr<const blr::torch::Dataset> data() {
  static std::shared_ptr<const blr::torch::Dataset> cached = [] {
    ::at::set_num_threads(1);  // one LibTorch thread, like the figures in docs/benchmarks.md
    blr::torch::FashionMnistOptions o;
    o.train_limit = 12800;
    o.test_limit = 2000;
    return std::make_shared<const blr::torch::Dataset>(blr::torch::load_fashion_mnist(o));
  }();
  return cached;
}

blr::torch::TrainConfig config(const std::string& optimizer) {
  blr::torch::TrainConfig c;
  c.optimizer = optimizer;
  c.epochs = 100000;  // the largest allowed; the benchmark decides how many it runs
  c.schedule = "constant";
  return c;
}

void epoch(benchmark::State& state, const std::string& optimizer) {
  try {
    blr::torch::Trainer trainer(config(optimizer), data());
    for (auto _ : state) {
      blr::torch::TrainHooks hooks;
      hooks.stop_after_epoch = trainer.epoch() + 1;
      hooks.on_epoch = [&state](const blr::torch::EpochRecord& r) { state.SetIterationTime(r.seconds); };
      trainer.train(hooks);
    }
  } catch (const blr::Error& e) {
    state.SkipWithError(e.what());
  }
}

void predictive(benchmark::State& state) {
  try {
    blr::torch::Trainer trainer(config("ivon"), data());
    auto* v = blr::torch::as_variational(trainer.optimizer());
    const auto samples = static_cast<int>(state.range(0));
    for (auto _ : state) {
      if (samples == 0) {
        benchmark::DoNotOptimize(blr::torch::predict_log_probs(trainer.model(), data()->test.x));
      } else {
        benchmark::DoNotOptimize(
            blr::torch::predictive_log_probs(trainer.model(), *v, data()->test.x, samples));
      }
    }
  } catch (const blr::Error& e) {
    state.SkipWithError(e.what());
  }
}

#define BLR_EPOCH_BENCHMARK(name) \
  BENCHMARK_CAPTURE(epoch, name, #name)->Unit(benchmark::kMillisecond)->UseManualTime()

BLR_EPOCH_BENCHMARK(ivon);
BLR_EPOCH_BENCHMARK(vogn);
BLR_EPOCH_BENCHMARK(adamw);
BLR_EPOCH_BENCHMARK(sgd);
// K = 0: one pass at the mean; K = 64: the predictive of docs/results.md.
BENCHMARK(predictive)->Arg(0)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
