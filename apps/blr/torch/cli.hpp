// Flags shared by `blr train` and `blr compare` (CLI11; included by apps/blr/torch/cmd_*.cpp
// only, so the library itself does not depend on CLI11).
//
// Every option of every registered optimizer is a flag --<optimizer>-<option> (e.g. --ivon-lr,
// --ivon-hess-init, --sgd-momentum) typed and checked by its option table
// (blr/torch/optim/registry.hpp); a value given for an optimizer the run does not use is an
// error, so that a typo never silently does nothing.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/train/config.hpp"
#include "blr/torch/train/recipe.hpp"
#include "commands.hpp"

namespace blr::torch::cli {

/// Values of the flags shared by train and compare.
struct TrainFlags {
  TrainConfig config;
  RunSettings settings;
  std::string hidden = "500,300";
  OptimizerOptions optimizer_options;
  /// --recipe: a recipe's name, "none", or "" for the default (train/recipe.hpp).
  std::string recipe;
};

/// Names of the flags that change the training configuration (refused together with --resume;
/// --epochs is not among them: with --resume it extends the run).
inline const std::vector<std::string>& configuration_flags() {
  static const std::vector<std::string> names = {"--data",          "--model",      "--hidden",
                                                 "--batch-size",    "--schedule",   "--warmup-epochs",
                                                 "--seed",          "--train-limit", "--validation",
                                                 "--optimizer",     "--test-limit", "--micro-batches",
                                                 "--precision",     "--task",       "--label",
                                                 "--test-data",     "--categorical", "--missing",
                                                 "--noise-std",     "--classes",    "--init",
                                                 "--model-file", "--recipe",
                                                 "--grad-clip"};
  static const std::vector<std::string> all = [] {
    std::vector<std::string> out = names;  // and the language model's shape, --gpt-<key>
    for (const auto& info : GptOptions::table().options()) out.push_back("--gpt-" + info.key);
    return out;
  }();
  return all;
}

/// Adds --data-dir, --model and --hidden (also used by `blr bench epoch|predict`).
/// The check of a flag generated from an option table: the value parses and lies in its range
/// (CLI11 then names the flag in the refusal: "--gpt-width: Option 'width' takes an integer; got ''.").
inline CLI::Validator table_validator(const OptionInfo& info) {
  return CLI::Validator(
      [info](std::string& text) -> std::string {
        try {
          info.check(info.parse(text));
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "", "option table");
}

inline void add_model_flags(CLI::App* cmd, TrainFlags& f) {
  auto& c = f.config;
  cmd->add_option("--data-dir", c.data_options.directory,
                  "Directory of the Fashion-MNIST *-ubyte.gz files (default "
                  "$BLR_FASHION_MNIST_DIR or /usr/share/datasets/fashion-mnist).");
  cmd->add_option("--model", c.model.kind, "Model: mlp, lenet, resnet20 (ResNet-20, option-A shortcuts, batch norm: not for vogn/ogn), gpt (character-level language model for --data fortunes|text:PATH) or binary-mlp (bias-free Linear + batch norm without affine parameters: every parameter a binary weight, for bayesbinn and ste).")->capture_default_str();
  cmd->add_option("--hidden", f.hidden, "Hidden widths of the MLP, comma-separated.")
      ->capture_default_str();
  // --gpt-<key> for each option of the language model's table (nn/gpt_options.hpp).
  auto* gpt = &c.model.gpt;
  for (const auto& info : GptOptions::table().options()) {
    cmd->add_option_function<std::string>(
           fmt::format("--gpt-{}", info.key),
           [gpt, info](const std::string& text) {
             GptOptions::table().set(*gpt, info.key, info.parse(text));
           },
           fmt::format("--model gpt: {} (default {})", info.help,
                       OptionInfo::format(info.default_value)))
        ->check(table_validator(info))  // the flag named in its refusal, before the parse
        ->type_name("INT")
        ->group("Options of the language model (--model gpt)");
  }
}

/// Adds --model-file (a TorchScript module instead of the built-in --model) to `cmd`.
inline void add_model_file_flag(CLI::App* cmd, std::string& model_file) {
  cmd->add_option("--model-file", model_file,
                  "A TorchScript module to train instead of --model: a file written in Python by "
                  "torch.jit.script(model).save(PATH) whose forward maps one input batch to the "
                  "logits (regression: the targets); checkpoints embed it (at most 1 GiB).");
}

/// Adds --recipe (train/recipe.hpp) to `cmd`.
inline void add_recipe_flag(CLI::App* cmd, TrainFlags& f) {
  cmd->add_option("--recipe", f.recipe,
                  fmt::format("Published settings for a kind of task: {} (or none). Sets every "
                              "option of the optimizers it covers, the schedule, warm-up and "
                              "gradient clipping; flags given override it. Default: lm-pretrain "
                              "for --model gpt, none otherwise. `blr optimizers` lists them.",
                              fmt::join(recipe_names(), ", ")))
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            return name.empty() ? "Option '--recipe' needs a recipe's name, or none." : "";
          },
          "", "non-empty"));
}

/// Adds the data/model/schedule/run flags to `cmd`.
inline void add_train_flags(CLI::App* cmd, TrainFlags& f) {
  auto& c = f.config;
  cmd->add_option("--data", c.data,
                  "Data set: fashion-mnist; fortunes (Debian's fortune files) or text:PATH (a text "
                  "file or directory), character-level, for --model gpt; a file written by "
                  "torch.save (FILE.pt: a dict with x, y and optionally x_test, y_test); or a CSV "
                  "table (FILE.csv, with --task).")
      ->capture_default_str();
  cmd->add_option("--task", c.task,
                  "classification or regression (CSV: required; a .pt file: from y's dtype).");
  cmd->add_option("--label", c.label, "CSV: the response column (default: the last column).");
  cmd->add_option("--test-data", c.test_data,
                  "CSV: a test table with the same columns (default: 20 % of the rows held out by "
                  "a fixed seeded rule).");
  cmd->add_option("--categorical", c.categorical,
                  "CSV: feature columns to one-hot code (repeatable or comma list).")
      ->delimiter(',');
  cmd->add_option("--missing", c.missing,
                  "CSV: error (an empty or NA cell is an error naming it) or drop (such rows are "
                  "left out).")
      ->capture_default_str();
  cmd->add_option("--noise-std", c.noise_std,
                  "Regression: the observation noise sigma on the standardised scale; 0 = fitted "
                  "by maximum likelihood after every epoch.")
      ->capture_default_str();
  add_model_flags(cmd, f);
  add_model_file_flag(cmd, c.model_file);
  cmd->add_option("--epochs", c.epochs, "Number of epochs.")->capture_default_str();
  cmd->add_option("--batch-size", c.batch_size, "Minibatch size.")->capture_default_str();
  cmd->add_option("--micro-batches", c.micro_batches,
                  "Process each minibatch in this many parts, accumulating their gradients (same "
                  "step, less memory).")
      ->capture_default_str();
  cmd->add_option("--precision", c.precision,
                  "float32 | bfloat16 | float16 (parameters in that type; the BLR optimizers keep "
                  "float32 master weights) | autocast-bfloat16 (CPU autocast, any optimizer).")
      ->capture_default_str();
  cmd->add_option("--schedule", c.schedule,
                  "Learning-rate schedule over steps: constant, cosine (to 0) or warmup-cosine.")
      ->capture_default_str();
  cmd->add_option("--warmup-epochs", c.warmup_epochs,
                  "warmup-cosine: epochs of linear warm-up from lr/5 (fractions allowed).")
      ->capture_default_str();
  cmd->add_option("--grad-clip", c.grad_clip,
                  "Clip the global L2 norm of each sample's gradient to this value before the "
                  "optimizer step (0 = off).")
      ->capture_default_str();
  add_recipe_flag(cmd, f);
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
  cmd->add_option("--classes", c.classes,
                  "Classification: keep only the examples of these classes, e.g. 0,1,2,3,4 (one "
                  "task of a class split; labels and outputs keep their numbers).")
      ->delimiter(',');
  cmd->add_option("--init", c.init,
                  "Start from the model parameters of this checkpoint (fine-tuning; same --model "
                  "and --hidden); the optimizer starts fresh.");
  cmd->add_option("--test-samples", c.test_samples,
                  "Posterior samples K of the predictive (variational optimizers).")
      ->capture_default_str();
  cmd->add_option("--ece-bins", c.ece_bins, "Equal-width bins of the ECE (20 is also reported).")
      ->capture_default_str();
  cmd->add_flag("--temperature-scaling", c.temperature_scaling,
                "Also report each prediction after temperature scaling (softmax(log p / T), T "
                "fitted on the validation split: needs --validation; Guo et al. 2017).");
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
  cmd->add_flag("--verbose", s.verbose,
                "After each epoch, what the posterior has learned: quantiles of its curvature h "
                "and of σ, the share of h still within 1 % of h₀ (and at h₀β₂ᵗ), the share of "
                "steps at the clip radius, and the share of clipped gradients (also in the JSON's "
                "history).");
  cmd->add_option("--divergence-factor", s.divergence_factor,
                  "Flag a run as diverged when its training loss or test NLL exceeds this multiple "
                  "of its first step's loss.")
      ->capture_default_str();
  cmd->add_flag("--fail-on-divergence", s.fail_on_divergence,
                "Exit with status 4 when a run diverged (the outputs are still written).");
  cmd->add_option("--dist-timeout", s.dist_timeout,
                  "Data parallel (blr launch, torchrun): seconds the rendezvous and each "
                  "collective wait for the other ranks before the run stops with an error.")
      ->capture_default_str();
  cmd->add_option("--dist-split", s.dist_split,
                  "Data parallel: data (each rank trains on its share of every minibatch) or "
                  "samples (each rank takes the whole minibatch and its own Monte Carlo samples).")
      ->capture_default_str();
}

/// "hess-init" for the key "hess_init".
inline std::string flag_spelling(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

/// Adds --<optimizer>-<option> for every registered optimizer and option, typed by its table:
/// numbers, integers, switches (true/false) and choices, each checked against its range when
/// parsed.
inline void add_optimizer_flags(CLI::App* cmd, TrainFlags& f) {
  for (const auto& entry : optimizers()) {
    if (!entry.trains) continue;  // a post-hoc posterior has its own command (blr laplace)
    for (const auto& info : entry.options->options()) {
      auto* values = &f.optimizer_options;
      const std::string name = entry.name;
      std::string default_text;
      switch (info.default_from) {
        case DefaultFrom::kTrainingSetSize: default_text = "the training-set size"; break;
        case DefaultFrom::kRunSeed: default_text = "the run's --seed"; break;
        case DefaultFrom::kBatchSize: default_text = "the run's --batch-size"; break;
        case DefaultFrom::kInitialiser: default_text = OptionInfo::format(info.default_value); break;
      }
      auto* option = cmd->add_option_function<std::string>(
          fmt::format("--{}-{}", name, flag_spelling(info.key)),
          [values, name, info](const std::string& text) {
            (*values)[name].emplace_back(info.key, info.parse(text));
          },
          fmt::format("{} (default {})", info.help, default_text));
      option->check(table_validator(info));
      switch (info.type) {
        case OptionType::kNumber: option->type_name("FLOAT"); break;
        case OptionType::kInteger: option->type_name("INT"); break;
        case OptionType::kSwitch: option->type_name("BOOL"); break;
        case OptionType::kChoice:
          option->type_name(fmt::format("{{{}}}", fmt::join(info.choices, ",")));
          break;
      }
      option->group(fmt::format("Options of {}", name));
    }
  }
}

/// --model-file brings its own model: the built-in models' flags beside it are refused.
inline void check_model_file_flags(const CLI::App* cmd, const TrainFlags& f) {
  if (f.config.model_file.empty()) return;
  std::vector<std::string> names = {"--model", "--hidden"};
  for (const auto& info : GptOptions::table().options()) names.push_back("--gpt-" + info.key);
  for (const auto& name : names) {
    blr::check(cmd->count(name) == 0,
               fmt::format("--model-file {} brings its own model; drop {}, which shapes blr's "
                           "built-in models only.",
                           f.config.model_file, name));
  }
}

/// The recipe a command uses: --recipe's, else the default for its configuration; nullptr for
/// none.
inline const Recipe* chosen_recipe(const TrainFlags& f) {
  const std::string name = f.recipe.empty() ? default_recipe(f.config) : f.recipe;
  if (name.empty() || name == "none") return nullptr;
  return &find_recipe(name);
}

/// Applies the chosen recipe to the run's configuration and to the options of each optimizer in
/// `optimizers` (train: the one; compare: all): the recipe's options under the given flags, its
/// schedule, warm-up and clipping unless given as flags. An optimizer the recipe does not cover
/// keeps its defaults and flags, with a note on stderr.
inline void apply_recipe_flags(const CLI::App* cmd, TrainFlags& f,
                               const std::vector<std::string>& optimizers) {
  const Recipe* recipe = chosen_recipe(f);
  if (recipe == nullptr) return;
  const ExplicitSettings given{cmd->count("--schedule") > 0, cmd->count("--warmup-epochs") > 0,
                               cmd->count("--grad-clip") > 0};
  TrainConfig c = f.config;
  apply_recipe(*recipe, c, given);  // the schedule, warm-up, clipping and name
  f.config.schedule = c.schedule;
  f.config.warmup_epochs = c.warmup_epochs;
  f.config.grad_clip = c.grad_clip;
  f.config.recipe = c.recipe;
  for (const auto& name : optimizers) {
    if (recipe->find(name) == nullptr) {
      std::vector<std::string> covered;
      for (const auto& o : recipe->optimizers) covered.push_back(o.optimizer);
      std::cerr << fmt::format(
          "blr: note: recipe '{}' has no settings for {} (it covers {}); {} uses its defaults "
          "and the flags given.\n",
          recipe->name, name, fmt::join(covered, ", "), name);
      continue;
    }
    f.optimizer_options[name] = recipe_options(*recipe, name, f.optimizer_options[name]);
  }
}

/// The run's optimizer options from the --<optimizer>-<key> flags: flags of another optimizer than
/// the run's are refused in one sentence (`who` says which run: "this run", "each member").
inline void take_optimizer_options(TrainFlags& f, const std::string& who) {
  for (const auto& [name, values] : f.optimizer_options) {
    (void)values;
    blr::check(name == f.config.optimizer,
               fmt::format("Options for optimizer '{}' were given (--{}-...), but {} uses "
                           "--optimizer {}.",
                           name, name, who, f.config.optimizer));
  }
  auto it = f.optimizer_options.find(f.config.optimizer);
  if (it != f.optimizer_options.end()) f.config.optimizer_options = it->second;
}

/// Finishes the configuration after parsing (hidden widths).
inline void finish_config(TrainFlags& f) {
  f.config.model.hidden = parse_widths(f.hidden);
  if (f.config.model.kind == "lenet") f.config.model.hidden.clear();
  f.config.data_options.seed = f.config.seed;
}

}  // namespace blr::torch::cli
