// `blr bench data-parallel`: training throughput of 2 processes × 1 thread (`blr launch --nproc 2`)
// against 1 process × 1 thread and 1 process × 2 threads, per optimizer, with the all-reduce time
// and bytes per step that rank 0 reports. Each configuration is a child `blr train` (so the
// command is self-contained and each run has a process of its own); rounds are interleaved and
// the median step time is kept. Throughput = batch size / step time (a step of the 2-process run
// is a step of the global batch, rank 0's wall time including its waits for rank 1).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench.hpp"
#include "blr/core/error.hpp"
#include "report.hpp"

namespace blr::cli {
namespace {

struct DataParallelFlags {
  std::vector<std::string> optimizers = {"adamw", "ivon"};
  std::string model = "lenet";
  int64_t train_limit = 6000;
  int64_t batch_size = 128;
  int64_t epochs = 1;
  int rounds = 3;
  uint64_t seed = 0;
  std::string json;
};

/// Runs `blr-torch args...` (this executable) with output discarded; returns its exit status.
int run_self(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  check(pid >= 0, "Cannot start a benchmark child process.");
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    std::vector<std::string> a = {"blr"};
    a.insert(a.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int run_data_parallel(const DataParallelFlags& f) {
  check(f.rounds >= 1, fmt::format("--rounds must be at least 1; got {}.", f.rounds));
  check(f.epochs >= 1, fmt::format("--epochs must be at least 1; got {}.", f.epochs));
  check(!f.optimizers.empty(), "--optimizers needs at least one optimizer.");
  check(f.model == "mlp" || f.model == "lenet" || f.model == "resnet20",
        fmt::format("--model must be mlp, lenet or resnet20 (the Fashion-MNIST models); got '{}'.",
                    f.model));
  // The children's JSON files go to a fresh private directory (mkdtemp: never one planted there).
  std::string pattern = (std::filesystem::temp_directory_path() / "blr-bench-dp-XXXXXX").string();
  check(::mkdtemp(pattern.data()) != nullptr,
        fmt::format("Cannot create a temporary directory for the benchmark's runs: {}.",
                    std::strerror(errno)));
  const std::filesystem::path dir = pattern;
  struct Config {
    const char* name;
    int procs, threads;
  };
  const std::vector<Config> configs = {{"1x1", 1, 1}, {"1x2", 1, 2}, {"2x1", 2, 1}};
  nlohmann::json out = {{"benchmark", "data-parallel"},
                        {"model", f.model},
                        {"train_limit", f.train_limit},
                        {"batch_size", f.batch_size},
                        {"epochs", f.epochs},
                        {"rounds", f.rounds}};
  std::cout << fmt::format(
      "blr bench data-parallel: {} on {} Fashion-MNIST examples, batch {}, {} epoch(s), median of "
      "{} interleaved rounds\n",
      f.model, f.train_limit, f.batch_size, f.epochs, f.rounds);
  std::cout << fmt::format("{:<10} {:>5} {:>10} {:>12} {:>9} {:>14} {:>14}\n", "optimizer",
                           "PxT", "step ms", "examples/s", "vs 1x1", "allreduce ms", "bytes/step");
  for (const auto& opt : f.optimizers) {
    std::vector<std::vector<double>> ms(configs.size());
    std::vector<nlohmann::json> dist(configs.size());
    for (int round = 0; round < f.rounds; ++round) {
      for (size_t c = 0; c < configs.size(); ++c) {
        const auto json = (dir / fmt::format("{}-{}.json", opt, configs[c].name)).string();
        std::vector<std::string> args;
        if (configs[c].procs > 1) {
          args = {"launch", "--nproc", std::to_string(configs[c].procs), "--"};
        }
        for (const std::string& a :
             {std::string("train"), std::string("--optimizer"), opt, std::string("--model"),
              f.model, std::string("--train-limit"), std::to_string(f.train_limit),
              std::string("--test-limit"), std::string("100"), std::string("--batch-size"),
              std::to_string(f.batch_size), std::string("--epochs"), std::to_string(f.epochs),
              std::string("--seed"), std::to_string(f.seed), std::string("--threads"),
              std::to_string(configs[c].threads), std::string("--test-samples"),
              std::string("1"), std::string("--quiet"), std::string("--json"), json}) {
          args.push_back(a);
        }
        const int rc = run_self(args);
        check(rc == 0, fmt::format("The benchmark run '{}' of {} failed with status {}.",
                                   configs[c].name, opt, rc));
        std::ifstream in(json);
        const auto report = nlohmann::json::parse(in);
        ms[c].push_back(report.at("optimizers").at(opt).at("step_ms").get<double>());
        if (report.contains("distributed")) dist[c] = report.at("distributed");
      }
    }
    const double base = median(ms[0]);
    for (size_t c = 0; c < configs.size(); ++c) {
      const double m = median(ms[c]);
      const double per_s = 1000.0 * static_cast<double>(f.batch_size) / m;
      nlohmann::json row = {{"step_ms", m},
                            {"step_ms_all", ms[c]},
                            {"examples_per_second", per_s},
                            {"throughput_vs_1x1", base / m}};
      std::string ar = "-", bytes = "-";
      if (!dist[c].is_null()) {
        row["distributed"] = dist[c];
        ar = fmt::format("{:.3f}", dist[c].at("allreduce_ms_per_step").get<double>());
        bytes = std::to_string(dist[c].at("allreduce_bytes_per_step").get<int64_t>());
      }
      out["results"][opt][configs[c].name] = row;
      std::cout << fmt::format("{:<10} {:>5} {:>10.2f} {:>12.0f} {:>8.2f}x {:>14} {:>14}\n", opt,
                               configs[c].name, m, per_s, base / m, ar, bytes);
    }
  }
  std::filesystem::remove_all(dir);
  if (!f.json.empty()) blr::torch::write_json(f.json, out);
  return 0;
}

}  // namespace

void add_bench_data_parallel(CLI::App* bench, int& exit_code) {
  auto f = std::make_shared<DataParallelFlags>();
  CLI::App* cmd = bench->add_subcommand(
      "data-parallel",
      "Training throughput of 2 processes x 1 thread (blr launch) against 1 process x 1 thread "
      "and 1 process x 2 threads, with all-reduce time and bytes per step.");
  cmd->add_option("--optimizers", f->optimizers, "Comma-separated optimizers.")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--model", f->model,
                  "A built-in image model of blr train: mlp, lenet or resnet20.")
      ->capture_default_str();
  cmd->add_option("--train-limit", f->train_limit, "Training examples.")->capture_default_str();
  cmd->add_option("--batch-size", f->batch_size, "Global minibatch size.")->capture_default_str();
  cmd->add_option("--epochs", f->epochs, "Epochs per run.")->capture_default_str();
  cmd->add_option("--rounds", f->rounds, "Interleaved runs per configuration.")
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "Seed of every run.")->capture_default_str();
  cmd->add_option("--json", f->json, "Also write the results as JSON to this file ('-' = stdout).");
  cmd->callback([f, &exit_code] { exit_code = run_data_parallel(*f); });
}

}  // namespace blr::cli
