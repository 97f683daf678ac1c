// Flags shared by `blr train` and `blr compare` (CLI11; included by apps/blr/torch/cmd_*.cpp
// only, so the library itself does not depend on CLI11).
//
// Every option of every optimizer is a flag --<optimizer>-<key> (e.g. --ivon-lr, --ivon-ess,
// --sgd-momentum), generated from optimizer_options(); a value given for an optimizer the run does
// not use is an error, so that a typo never silently does nothing.
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/optim/factory.hpp"
#include "blr/torch/train/commands.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch::cli {

/// Values of the flags shared by train and compare.
struct TrainFlags {
  TrainConfig config;
  RunSettings settings;
  std::string hidden = "500,300";
  std::map<std::string, std::map<std::string, double>> optimizer_options;
};

/// Names of the flags that change the training configuration (refused together with --resume).
inline const std::vector<std::string>& configuration_flags() {
  static const std::vector<std::string> names = {"--data",          "--model",      "--hidden",
                                                 "--epochs",        "--batch-size", "--schedule",
                                                 "--warmup-epochs", "--seed",       "--train-limit",
                                                 "--validation",    "--optimizer",  "--test-limit"};
  return names;
}

/// Adds --data-dir, --model and --hidden (also used by `blr bench epoch|predict`).
inline void add_model_flags(CLI::App* cmd, TrainFlags& f) {
  auto& c = f.config;
  cmd->add_option("--data-dir", c.data_options.directory,
                  "Directory of the Fashion-MNIST *-ubyte.gz files (default "
                  "$BLR_FASHION_MNIST_DIR or /usr/share/datasets/fashion-mnist).");
  cmd->add_option("--model", c.model.kind, "Model: mlp or lenet.")->capture_default_str();
  cmd->add_option("--hidden", f.hidden, "Hidden widths of the MLP, comma-separated.")
      ->capture_default_str();
}

/// Adds the data/model/schedule/run flags to `cmd`.
inline void add_train_flags(CLI::App* cmd, TrainFlags& f) {
  auto& c = f.config;
  cmd->add_option("--data", c.data, "Data set (fashion-mnist).")->capture_default_str();
  add_model_flags(cmd, f);
  cmd->add_option("--epochs", c.epochs, "Number of epochs.")->capture_default_str();
  cmd->add_option("--batch-size", c.batch_size, "Minibatch size.")->capture_default_str();
  cmd->add_option("--schedule", c.schedule,
                  "Learning-rate schedule over steps: constant, cosine (to 0) or warmup-cosine.")
      ->capture_default_str();
  cmd->add_option("--warmup-epochs", c.warmup_epochs,
                  "warmup-cosine: epochs of linear warm-up from lr/5.")
      ->capture_default_str();
  cmd->add_option("--seed", c.seed, "Seed (initialisation, minibatch order, noise).")
      ->capture_default_str();
  cmd->add_option("--train-limit", c.data_options.train_limit,
                  "Use only the first N training examples (0 = all; for quick runs).")
      ->capture_default_str();
  cmd->add_option("--test-limit", c.data_options.test_limit,
                  "Use only the first N test examples (0 = all).")
      ->capture_default_str();
  cmd->add_option("--validation", c.data_options.validation_fraction,
                  "Hold out this fraction of the training set for validation (0 = none).")
      ->capture_default_str();
  cmd->add_option("--test-samples", c.test_samples,
                  "Posterior samples K of the predictive (variational optimizers).")
      ->capture_default_str();
  cmd->add_option("--ece-bins", c.ece_bins, "Equal-width bins of the ECE (20 is also reported).")
      ->capture_default_str();
  auto& s = f.settings;
  cmd->add_option("--threads", s.threads, "LibTorch threads (0 = all cores).")
      ->capture_default_str();
  cmd->add_option("--device", s.device, "cpu, cuda or cuda:N.")->capture_default_str();
  cmd->add_option("--out", s.out, "Directory for plots, results.json and checkpoints.");
  cmd->add_option("--json", s.json, "Write the results as JSON to this file ('-' = stdout).");
  cmd->add_option("--checkpoint-every", s.checkpoint_every,
                  "Write a checkpoint every N epochs into OUT/checkpoints (needs --out).")
      ->capture_default_str();
  cmd->add_flag("--quiet", s.quiet, "No progress output on stderr.");
}

/// Adds --<optimizer>-<key> for every optimizer and key.
inline void add_optimizer_flags(CLI::App* cmd, TrainFlags& f) {
  for (const auto& name : optimizer_names()) {
    for (const auto& spec : optimizer_options(name)) {
      auto* values = &f.optimizer_options;
      const std::string key = spec.key;
      cmd->add_option_function<double>(
             fmt::format("--{}-{}", name, key),
             [values, name, key](const double& v) { (*values)[name][key] = v; },
             key == "seed" ? fmt::format("{} (default: the run's --seed)", spec.help)
                           : fmt::format("{} (default {})", spec.help, spec.default_value))
          ->group(fmt::format("Options of {}", name));
    }
  }
}

/// Finishes the configuration after parsing (hidden widths).
inline void finish_config(TrainFlags& f) {
  f.config.model.hidden = parse_widths(f.hidden);
  if (f.config.model.kind == "lenet") f.config.model.hidden.clear();
  f.config.data_options.seed = f.config.seed;
}

}  // namespace blr::torch::cli
