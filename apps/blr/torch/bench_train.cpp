// `blr bench epoch` and `blr bench predict`: what training and prediction cost on Fashion-MNIST,
// as ratios to a baseline measured in the same process (timing.hpp).
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "../thread_policy.hpp"
#include "bench.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/train/load_data.hpp"
#include "cli.hpp"
#include "report.hpp"
#include "timing.hpp"

namespace blr::cli {
namespace {

using blr::torch::cli::TrainFlags;

/// Model, data and thread flags shared by both subcommands.
void add_task_flags(CLI::App* cmd, TrainFlags& f) {
  blr::torch::cli::add_model_flags(cmd, f);
  blr::torch::cli::add_model_file_flag(cmd, f.config.model_file);
  cmd->add_option("--data", f.config.data,
                  "Data set: fashion-mnist, fortunes or text:PATH (the last two for --model gpt).")
      ->capture_default_str();
  cmd->add_option("--seed", f.config.seed, "Seed (initialisation, minibatch order, noise).")
      ->capture_default_str();
  cmd->add_option("--threads", f.settings.threads, "LibTorch threads (0 = all cores).")
      ->capture_default_str();
  cmd->add_option("--json", f.settings.json, "Also write the results as JSON to this file ('-' = stdout).");
}

std::shared_ptr<const blr::torch::Dataset> prepare(const CLI::App* cmd, TrainFlags& f) {
  keep_freed_memory();
  blr::torch::cli::check_model_file_flags(cmd, f);
  blr::torch::cli::finish_config(f);
  f.config.validate();
  // A --model-file is read once; every timed trainer loads its module from these bytes.
  if (!f.config.model_file.empty()) {
    f.config.model_archive = blr::torch::read_model_file(f.config.model_file);
  }
  blr::torch::apply_run_settings(f.settings);
  return std::make_shared<const blr::torch::Dataset>(blr::torch::load_training_data(f.config));
}

/// "mlp 500,300", "lenet", or the --model-file's path.
std::string model_name(const TrainFlags& f) {
  const auto& kind = f.config.model.kind;
  if (!f.config.model_file.empty()) return "torchscript " + f.config.model_file;
  return kind == "mlp" || kind == "binary-mlp" ? kind + " " + f.hidden : kind;
}

struct EpochFlags {
  TrainFlags train;
  std::vector<std::string> optimizers = {"ivon", "vogn", "adamw", "sgd"};
  int rounds = 3;
};

int run_epoch(const CLI::App* cmd, EpochFlags& o) {
  std::set<std::string> seen(o.optimizers.begin(), o.optimizers.end());
  check(seen.size() == o.optimizers.size(), "An optimizer appears twice in --optimizers.");
  check(seen.count("adamw") > 0, "--optimizers must include adamw, the baseline of the ratios.");
  for (const auto& [name, values] : o.train.optimizer_options) {
    (void)values;
    check(seen.count(name) > 0,
          fmt::format("Options for optimizer '{}' were given (--{}-...), but it is not in "
                      "--optimizers.",
                      name, name));
  }
  check(o.rounds >= 1, fmt::format("--rounds must be at least 1; got {}.", o.rounds));
  const auto data = prepare(cmd, o.train);
  const auto timings = blr::torch::time_epochs(o.train.config, o.optimizers,
                                               o.train.optimizer_options, data, o.rounds);
  double adamw = 0.0;
  for (const auto& t : timings)
    if (t.optimizer == "adamw") adamw = t.median_seconds;
  const auto& c = o.train.config;
  // Labels per position (a language model): report tokens per second beside the epoch time.
  const bool tokens = data->train.y.dim() > 1;
  const double labels_per_epoch = static_cast<double>(data->train.y.numel());
  fmt::print("Training epoch on {} ({} examples, batch {}, {} steps), model {}, "
             "{} thread(s), median of {} interleaved epochs, wall-clock, steady allocator\n\n",
             data->name, data->train.size(), c.batch_size, timings.front().steps_per_epoch,
             model_name(o.train), at::get_num_threads(), o.rounds);
  fmt::print("{:<10} {:>14} {:>12} {:>15}\n", "optimizer", "epoch seconds", "ms/step",
             "ratio to AdamW");
  nlohmann::json out;
  for (const auto& t : timings) {
    const double ratio = t.median_seconds / adamw;
    fmt::print("{:<10} {:>14.3f} {:>12.3f} {:>15.2f}", t.optimizer, t.median_seconds,
               t.median_step_ms, ratio);
    if (tokens) fmt::print(" {:>10.0f} tokens/s", labels_per_epoch / t.median_seconds);
    fmt::print("\n");
    out[t.optimizer] = {{"median_epoch_seconds", t.median_seconds},
                        {"epoch_seconds", t.epoch_seconds},
                        {"median_step_ms", t.median_step_ms},
                        {"ratio_to_adamw", ratio}};
    if (tokens) out[t.optimizer]["tokens_per_second"] = labels_per_epoch / t.median_seconds;
  }
  fmt::print("\nAn epoch is its training steps (forward, backward, per-example squared gradients "
             "for VOGN, sampling and update); evaluation is not counted.\n");
  out["train_size"] = data->train.size();
  out["batch_size"] = c.batch_size;
  out["steps_per_epoch"] = timings.front().steps_per_epoch;
  out["model"] = {{"kind", c.model.kind}, {"hidden", c.model.hidden}};
  if (!c.model_file.empty()) out["model"] = {{"model_file", c.model_file}};
  out["data"] = data->name;
  out["threads"] = at::get_num_threads();
  out["rounds"] = o.rounds;
  blr::torch::write_json(o.train.settings.json, out);
  return 0;
}

struct PredictFlags {
  TrainFlags train;
  int samples = 64;
  int repeats = 3;
};

int run_predict(const CLI::App* cmd, PredictFlags& o) {
  const auto data = prepare(cmd, o.train);
  const auto t = blr::torch::time_predictive(o.train.config, data, o.samples, o.repeats);
  fmt::print("Prediction on {} test examples of {}, model {}, optimizer {}, {} thread(s), "
             "median of {}\n\n",
             t.examples, data->name, model_name(o.train), o.train.config.optimizer,
             at::get_num_threads(), o.repeats);
  fmt::print("{:<32} {:>9.3f} s\n", "one pass at the mean", t.mean_seconds);
  fmt::print("{:<32} {:>9.3f} s\n", fmt::format("predictive, K = {}", t.samples),
             t.predictive_seconds);
  fmt::print("{:<32} {:>9.2f}\n", "per sample / pass at the mean", t.per_sample_ratio);
  const bool tokens = data->test.y.dim() > 1;  // a language model: tokens per second too
  const double labels = static_cast<double>(data->test.y.numel());
  if (tokens) {
    fmt::print("{:<32} {:>9.0f}\n", "tokens/s at the mean", labels / t.mean_seconds);
    fmt::print("{:<32} {:>9.0f}\n", "tokens/s, predictive (per sample)",
               labels * t.samples / t.predictive_seconds);
  }
  blr::torch::write_json(o.train.settings.json, {{"samples", t.samples},
                                     {"examples", t.examples},
                                     {"mean_seconds", t.mean_seconds},
                                     {"predictive_seconds", t.predictive_seconds},
                                     {"per_sample_ratio", t.per_sample_ratio},
                                     {"optimizer", o.train.config.optimizer},
                                     {"threads", at::get_num_threads()}});
  return 0;
}

}  // namespace

void add_bench_epoch(CLI::App* bench, int& exit_code) {
  auto o = std::make_shared<EpochFlags>();
  CLI::App* cmd = bench->add_subcommand(
      "epoch",
      "Median wall time of a Fashion-MNIST training epoch per optimizer (interleaved rounds), "
      "with ratios to AdamW.");
  add_task_flags(cmd, o->train);
  cmd->add_option("--optimizers", o->optimizers, "Comma-separated optimizers (adamw included).")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--batch-size", o->train.config.batch_size, "Minibatch size.")
      ->capture_default_str();
  cmd->add_option("--train-limit", o->train.config.data_options.train_limit,
                  "Use only the first N training examples (0 = all).")
      ->capture_default_str();
  cmd->add_option("--rounds", o->rounds, "Timed epochs per optimizer.")->capture_default_str();
  blr::torch::cli::add_optimizer_flags(cmd, o->train);
  cmd->callback([o, cmd, &exit_code] { exit_code = run_epoch(cmd, *o); });
}

void add_bench_predict(CLI::App* bench, int& exit_code) {
  auto o = std::make_shared<PredictFlags>();
  CLI::App* cmd = bench->add_subcommand(
      "predict",
      "Wall time of the posterior predictive with K samples on the test set against one pass "
      "at the mean.");
  add_task_flags(cmd, o->train);
  cmd->add_option("--optimizer", o->train.config.optimizer,
                  fmt::format("Variational optimizer whose posterior is sampled ({}).",
                              fmt::join(blr::torch::optimizer_names_with(
                                            &blr::torch::OptimizerEntry::variational),
                                        ", ")))
      ->capture_default_str();
  cmd->add_option("--samples", o->samples, "Posterior samples K.")->capture_default_str();
  cmd->add_option("--test-limit", o->train.config.data_options.test_limit,
                  "Use only the first N test examples (0 = all).")
      ->capture_default_str();
  cmd->add_option("--repeats", o->repeats, "Timed repetitions.")->capture_default_str();
  cmd->callback([o, cmd, &exit_code] { exit_code = run_predict(cmd, *o); });
}

}  // namespace blr::cli
