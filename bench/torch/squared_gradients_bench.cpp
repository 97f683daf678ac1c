// Google Benchmark (run with OPENBLAS_NUM_THREADS=1: OpenBLAS's own threads otherwise make the
// timings noisy on a loaded machine): the per-example squared gradients of VOGN/OGN from the
// autograd-graph engine (backward_with_squared_gradients) against backward alone, on
// blr's MLP (784-500-300-10) and LeNet-5 with a minibatch of 128 Fashion-MNIST-sized images, one
// LibTorch thread. Each benchmark iteration runs every variant once, interleaved, on its own copy
// of the model (same initial weights), so that load drifting on a shared machine hits all alike;
// the counters are per-variant medians of wall time (ms) and of process CPU time (cpu_ms, all
// threads: robust when other processes share the cores), and the ratios of the wall medians in
// the same run:
//
//   squared_gradients/<model>: forward + backward alone ("backward"), and with the engine
//     ("engine");  engine/backward
//   vogn_step/<model>: a whole training step — AdamW ("adamw") and VOGN with the engine
//     ("vogn");  vogn/adamw
// (Classifier's record mode, which the engine replaced, cost the same: 0.88–1.01× in the run of
// 2026-11-23 recorded in docs/benchmarks.md.)
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blr/torch/nn/classifier.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/optim/vogn.hpp"

namespace {

using blr::torch::Classifier;

constexpr int64_t kBatch = 128;

std::shared_ptr<Classifier> model(const std::string& kind) {
  ::at::set_num_threads(1);  // one LibTorch thread, like the figures in docs/benchmarks.md
  ::torch::manual_seed(0);
  blr::torch::ModelSpec spec;
  spec.kind = kind;
  return blr::torch::make_classifier(spec);
}

struct Batch {
  ::at::Tensor x, y;
};

Batch batch() {
  ::torch::manual_seed(1);
  return {::at::rand({kBatch, 1, 28, 28}), ::at::randint(0, 10, {kBatch}, ::at::kLong)};
}

::at::Tensor mean_loss(Classifier& m, const Batch& b) {
  return ::at::nll_loss(::at::log_softmax(m.forward(b.x), 1), b.y);
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/// Runs each variant once per iteration, interleaved; reports medians and the given ratios.
void interleaved(benchmark::State& state, const std::vector<std::string>& names,
                 const std::vector<std::function<void()>>& variants,
                 const std::vector<std::pair<std::string, std::string>>& ratios) {
  std::vector<std::vector<double>> wall_ms(variants.size()), cpu_ms(variants.size());
  for (auto& v : variants) v();  // warm-up: allocator, first-call costs
  for (auto _ : state) {
    double total = 0.0;
    for (size_t k = 0; k < variants.size(); ++k) {
      const double cpu_start = process_cpu_seconds();
      const auto start = std::chrono::steady_clock::now();
      variants[k]();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      cpu_ms[k].push_back(1e3 * (process_cpu_seconds() - cpu_start));
      wall_ms[k].push_back(1e3 * seconds);
      total += seconds;
    }
    state.SetIterationTime(total);
  }
  std::map<std::string, double> median;
  for (size_t k = 0; k < variants.size(); ++k) {
    median[names[k]] = median_of(wall_ms[k]);
    state.counters[names[k] + "_ms"] = median[names[k]];
    state.counters[names[k] + "_cpu_ms"] = median_of(cpu_ms[k]);
  }
  for (const auto& [top, bottom] : ratios) {
    state.counters[top + "/" + bottom] = median[top] / median[bottom];
  }
}

void squared_gradients(benchmark::State& state, const std::string& kind) {
  const Batch b = batch();
  auto plain = model(kind), engine = model(kind);
  const auto engine_parameters = engine->named_parameters().pairs();
  interleaved(state, {"backward", "engine"},
              {[&] {
                 plain->zero_grad();
                 mean_loss(*plain, b).backward();
               },
               [&] {
                 engine->zero_grad();
                 benchmark::DoNotOptimize(blr::torch::backward_with_squared_gradients(
                     mean_loss(*engine, b), engine_parameters, kBatch));
               }},
              {{"engine", "backward"}});
}

void vogn_step(benchmark::State& state, const std::string& kind) {
  const Batch b = batch();
  auto adamw_model = model(kind), vogn_model = model(kind);
  ::torch::optim::AdamW adamw(adamw_model->parameters(), ::torch::optim::AdamWOptions(1e-3));
  blr::torch::VognOptions vogn_options;
  vogn_options.lr = 1e-3;
  vogn_options.ess = 60000;
  blr::torch::Vogn vogn(vogn_model->parameters(), vogn_options);
  const auto vogn_parameters = vogn_model->named_parameters().pairs();
  interleaved(state, {"adamw", "vogn"},
              {[&] {
                 adamw.zero_grad();
                 mean_loss(*adamw_model, b).backward();
                 adamw.step();
               },
               [&] {
                 {
                   blr::torch::SampledParameters sample(vogn, /*train=*/true);
                   vogn.zero_grad();
                   vogn.add_squared_gradients(blr::torch::backward_with_squared_gradients(
                       mean_loss(*vogn_model, b), vogn_parameters, kBatch));
                 }
                 vogn.step();
               }},
              {{"vogn", "adamw"}});
}

BENCHMARK_CAPTURE(squared_gradients, mlp, "mlp")->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK_CAPTURE(squared_gradients, lenet, "lenet")
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK_CAPTURE(vogn_step, mlp, "mlp")->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK_CAPTURE(vogn_step, lenet, "lenet")->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
