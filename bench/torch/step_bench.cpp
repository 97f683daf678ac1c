// Google Benchmark: one optimizer step (variational: sample + restore + update) on a flat float32
// parameter of 1e6 and 1e7 elements, for IVON, VOGN, Vadam, AdamW and SGD. Compare ratios to
// AdamW within one run; `blr bench step` prints them directly.
#include <benchmark/benchmark.h>

#include "blr/torch/checks/step_benchmark.hpp"

namespace {

void step(benchmark::State& state, const std::string& optimizer) {
  blr::torch::StepBenchmark bench(optimizer, state.range(0));
  bench.run();  // allocate the state
  for (auto _ : state) bench.run();
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

#define BLR_STEP_BENCHMARK(name)       \
  BENCHMARK_CAPTURE(step, name, #name) \
      ->Arg(1000000)                   \
      ->Arg(10000000)                  \
      ->Unit(benchmark::kMillisecond)  \
      ->UseRealTime()

BLR_STEP_BENCHMARK(ivon);
BLR_STEP_BENCHMARK(vogn);
BLR_STEP_BENCHMARK(vadam);
BLR_STEP_BENCHMARK(adamw);
BLR_STEP_BENCHMARK(sgd);

}  // namespace

BENCHMARK_MAIN();
