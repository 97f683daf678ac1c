// `blr bench`: speed as ratios to a baseline measured in the same process. `step` (here): median
// optimizer step time of IVON, VOGN, Vadam, AdamW and SGD on one flat parameter; `epoch` and
// `predict` (bench_train.cpp): Fashion-MNIST training epochs and the posterior predictive.
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "../command.hpp"
#include "../json_output.hpp"
#include "../thread_policy.hpp"
#include "../torch_part.hpp"
#include "bench.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/checks/step_benchmark.hpp"
#include "blr/torch/train/threads.hpp"
#include "commands.hpp"
#include "timing.hpp"

namespace {

struct StepOptions {
  double params = 1e6;
  int threads = 0;
  int repeats = 20;
  std::string json;
  std::string clock = "wall";
  std::string isolation = "process";
  std::string allocator = "steady";
};

/// Milliseconds on the chosen clock: wall time, or CPU time of the whole process (all threads,
/// spin-waiting included) — steadier than wall time on a loaded machine.
double now_ms(bool cpu) {
  if (cpu) {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
  }
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Times `count` steps of one optimizer in a child process (fork before LibTorch starts any
/// thread), so that its heap and caches start as in a program of its own: in one shared process
/// the optimizers' temporaries leave the allocator in states that favour or penalise the next
/// one (LibTorch's AdamW allocates several parameter-sized temporaries per step).
std::vector<double> time_in_child(const std::string& name, int64_t n, int threads, int count,
                                  bool cpu, bool steady) {
  int fds[2];
  blr::check(::pipe(fds) == 0, "Cannot create a pipe for the benchmark child process.");
  const pid_t pid = ::fork();
  blr::check(pid >= 0, "Cannot fork a benchmark child process.");
  if (pid == 0) {
    ::close(fds[0]);
    int status = 0;
    try {
      if (steady) blr::cli::keep_freed_memory();
      blr::torch::set_thread_count(threads);
      blr::torch::StepBenchmark bench(name, n, 0);
      bench.run();  // warm-up: allocates the state
      bench.run();
      std::vector<double> times;
      for (int r = 0; r < count; ++r) {
        const double start = now_ms(cpu);
        bench.run();
        times.push_back(now_ms(cpu) - start);
      }
      const auto bytes = static_cast<ssize_t>(times.size() * sizeof(double));
      if (::write(fds[1], times.data(), static_cast<size_t>(bytes)) != bytes) status = 1;
    } catch (const std::exception& e) {
      std::cerr << "blr bench step (" << name << "): " << e.what() << '\n';
      status = 1;
    }
    ::_exit(status);
  }
  ::close(fds[1]);
  std::vector<double> times(static_cast<size_t>(count));
  size_t received = 0;
  const size_t wanted = times.size() * sizeof(double);
  auto* buffer = reinterpret_cast<char*>(times.data());
  while (received < wanted) {
    const ssize_t got = ::read(fds[0], buffer + received, wanted - received);
    if (got <= 0) break;
    received += static_cast<size_t>(got);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  blr::check(received == wanted && WIFEXITED(status) && WEXITSTATUS(status) == 0,
             fmt::format("The benchmark child process of '{}' failed.", name));
  return times;
}

int run_step_bench(const StepOptions& o) {
  blr::check(std::floor(o.params) == o.params && o.params >= 1 && o.params <= 2e9,
             fmt::format("--params must be a whole number in [1, 2e9]; got {}.", o.params));
  blr::check(o.repeats >= 1, fmt::format("--repeats must be at least 1; got {}.", o.repeats));
  const int threads = blr::torch::effective_threads(o.threads);
  blr::check(o.clock == "wall" || o.clock == "cpu",
             fmt::format("--clock must be 'wall' or 'cpu'; got '{}'.", o.clock));
  blr::check(o.isolation == "process" || o.isolation == "shared",
             fmt::format("--isolation must be 'process' or 'shared'; got '{}'.", o.isolation));
  blr::check(o.allocator == "steady" || o.allocator == "default",
             fmt::format("--allocator must be 'steady' or 'default'; got '{}'.", o.allocator));
  const bool cpu = o.clock == "cpu";
  const bool steady = o.allocator == "steady";
  if (steady) blr::cli::keep_freed_memory();
  const auto n = static_cast<int64_t>(o.params);
  const std::vector<std::string> names = blr::torch::benchmark_optimizers();
  std::vector<std::vector<double>> times(names.size());
  if (o.isolation == "process") {
    // Three rounds of one child per optimizer, interleaved so that load changes on the machine
    // hit all of them alike.
    const int rounds = std::min(3, o.repeats);
    for (int r = 0; r < rounds; ++r) {
      const int count = o.repeats / rounds + (r < o.repeats % rounds ? 1 : 0);
      for (size_t k = 0; k < names.size(); ++k) {
        const auto t = time_in_child(names[k], n, threads, count, cpu, steady);
        times[k].insert(times[k].end(), t.begin(), t.end());
      }
    }
  } else {
    blr::torch::set_thread_count(threads);
    std::vector<std::unique_ptr<blr::torch::StepBenchmark>> benches;
    for (const auto& name : names) {
      benches.push_back(std::make_unique<blr::torch::StepBenchmark>(name, n, 0));
      benches.back()->run();  // warm-up: allocates the state
      benches.back()->run();
    }
    // Rounds interleave the optimizers so that load changes on the machine hit all of them alike.
    for (int r = 0; r < o.repeats; ++r) {
      for (size_t k = 0; k < names.size(); ++k) {
        const double start = now_ms(cpu);
        benches[k]->run();
        times[k].push_back(now_ms(cpu) - start);
      }
    }
  }
  std::map<std::string, double> medians;
  for (size_t k = 0; k < names.size(); ++k) medians[names[k]] = blr::torch::median(times[k]);
  const double adamw = medians.at("adamw");

  fmt::print(
      "Optimizer step on one float32 parameter of {} elements, {} thread(s), median of {} "
      "steps, {} time, {}, {} allocator\n\n",
      n, threads, o.repeats, cpu ? "process CPU" : "wall-clock",
      o.isolation == "process" ? "each optimizer in a process of its own"
                               : "all optimizers in one process",
      o.allocator);
  fmt::print("{:<10} {:>12} {:>15}\n", "optimizer", "median ms", "ratio to AdamW");
  nlohmann::json out;
  for (const auto& name : names) {
    const double ratio = medians[name] / adamw;
    fmt::print("{:<10} {:>12.3f} {:>15.2f}\n", name, medians[name], ratio);
    out[name] = {{"median_ms", medians[name]}, {"ratio_to_adamw", ratio}};
  }
  fmt::print("\nA step of a variational optimizer is sample + restore + update (OGN's sample is the "
             "mean); of a point-estimate optimizer, the update.\n");
  out["params"] = n;
  out["threads"] = threads;
  out["repeats"] = o.repeats;
  out["dtype"] = "float32";
  out["device"] = "cpu";
  out["clock"] = o.clock;
  out["isolation"] = o.isolation;
  out["allocator"] = o.allocator;
  if (!o.json.empty()) blr::cli::write_json_text(o.json, out.dump(2));
  return 0;
}

void setup_bench(CLI::App& app, int& exit_code) {
  CLI::App* bench = app.add_subcommand("bench", blr::cli::torch_command("bench").summary);
  bench->require_subcommand(1);
  auto options = std::make_shared<StepOptions>();
  CLI::App* step = bench->add_subcommand(
      "step",
      "Median optimizer step time of every registered optimizer (variational: sample + restore + "
      "update; point estimates: update) on one flat float32 parameter, with ratios to AdamW.");
  step->add_option("--params", options->params, "Number of parameter elements (e.g. 1e6)")
      ->default_val(1e6);
  step->add_option("--threads", options->threads,
                   "LibTorch threads (default: the hardware concurrency)");
  step->add_option("--repeats", options->repeats, "Timed steps per optimizer")->default_val(20);
  step->add_option("--json", options->json, "Also write the results as JSON to this file ('-' = stdout)");
  step->add_option("--clock", options->clock,
                   "wall: elapsed time; cpu: CPU time of the process (all threads), steadier on a "
                   "loaded machine")
      ->check(CLI::IsMember({"wall", "cpu"}))
      ->default_val("wall");
  step->add_option("--isolation", options->isolation,
                   "process: each optimizer runs in a forked process of its own (its allocator "
                   "and caches untouched by the others); shared: all in this process")
      ->check(CLI::IsMember({"process", "shared"}))
      ->default_val("process");
  step->add_option("--allocator", options->allocator,
                   "steady: freed memory stays in the heap (no page faults from re-mapping "
                   "temporaries, as in a long run); default: glibc's adaptive rules")
      ->check(CLI::IsMember({"steady", "default"}))
      ->default_val("steady");
  step->callback([options, &exit_code] { exit_code = run_step_bench(*options); });
  blr::cli::add_bench_epoch(bench, exit_code);
  blr::cli::add_bench_predict(bench, exit_code);
  blr::cli::add_bench_data_parallel(bench, exit_code);
}

}  // namespace

BLR_REGISTER_COMMAND("bench", blr::cli::torch_command("bench").order, setup_bench);
