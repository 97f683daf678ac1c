// `blr continual`: Fashion-MNIST tasks learnt one after another (blr/torch/posterior/continual.hpp), IVON
// with the posterior of each task as the prior of the next, or fine-tuning, or retraining on all
// tasks so far; prints the accuracy matrix, average accuracy and forgetting, writes JSON and a
// heat map.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "../command.hpp"
#include "../preflight.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/posterior/continual.hpp"
#include "cli.hpp"
#include "continual_plot.hpp"
#include "report.hpp"

namespace {

namespace fs = std::filesystem;

struct ContinualFlags {
  blr::torch::ContinualConfig config;
  blr::torch::cli::TrainFlags train;  // model, data directory and --<optimizer>-<key> flags
  blr::torch::RunSettings settings;
};

/// The matrix (rows: after task t; columns: task j), then A_t and F_t per row.
void print_matrix(std::ostream& out, const blr::torch::ContinualResult& r) {
  out << fmt::format("{} on {} tasks ({}), {}; accuracy (%) at the mean\n", r.config.method(),
                     r.config.tasks, r.config.tasks == "split" ? "multi-head" : "single head",
                     r.model_description);
  out << fmt::format("{:<12}", "after task");
  for (size_t j = 0; j < r.accuracy.size(); ++j) out << fmt::format("{:>8}", fmt::format("T{}", j + 1));
  out << fmt::format("{:>10}{:>12}\n", "average", "forgetting");
  for (size_t t = 0; t < r.accuracy.size(); ++t) {
    out << fmt::format("{:<12}", fmt::format("T{}", t + 1));
    for (size_t j = 0; j < r.accuracy.size(); ++j) {
      out << (j <= t ? fmt::format("{:>8.2f}", 100.0 * r.accuracy[t][j]) : fmt::format("{:>8}", ""));
    }
    out << fmt::format("{:>10.2f}{:>12.2f}\n", 100.0 * r.average_accuracy[t],
                       100.0 * r.forgetting[t]);
  }
  out << fmt::format("tasks: ");
  for (size_t j = 0; j < r.task_names.size(); ++j) {
    out << fmt::format("{}T{} = {} ({} train, {} test)", j ? "; " : "", j + 1, r.task_names[j],
                       r.train_sizes[j], r.test_sizes[j]);
  }
  out << fmt::format("\ntime: {:.1f} s\n", r.seconds);
}

int run(ContinualFlags& f) {
  auto& c = f.config;
  blr::torch::cli::finish_config(f.train);
  c.model = f.train.config.model;
  c.model_file = f.train.config.model_file;
  c.data_options.directory = f.train.config.data_options.directory;
  for (const auto& [name, values] : f.train.optimizer_options) {
    blr::check(name == c.optimizer,
               fmt::format("Options for optimizer '{}' were given (--{}-...), but this run uses "
                           "--optimizer {}.",
                           name, name, c.optimizer));
    c.optimizer_options = values;
  }
  // A recipe's options of the optimizer (under the flags given); continual learning trains each
  // task at a constant rate, so the recipe's schedule, warm-up and clipping do not apply.
  if (const auto* recipe = blr::torch::cli::chosen_recipe(f.train)) {
    blr::check(recipe->find(c.optimizer) != nullptr,
               fmt::format("Recipe '{}' has no settings for {}; drop --recipe or choose an "
                           "optimizer it covers.",
                           recipe->name, c.optimizer));
    c.optimizer_options = blr::torch::recipe_options(*recipe, c.optimizer, c.optimizer_options);
  }
  c.validate();
  blr::torch::apply_run_settings(f.settings);
  if (!f.settings.out.empty()) {
    blr::cli::check_writable_directory(f.settings.out, "--out");
    std::error_code ec;
    fs::create_directories(f.settings.out, ec);
    blr::check(!ec, fmt::format("Cannot create the output directory '{}': {}.", f.settings.out,
                                ec.message()));
  }
  std::function<void(const std::string&)> progress;
  if (!f.settings.quiet) {
    progress = [](const std::string& line) { std::cerr << "blr: " << line << '\n'; };
  }
  const auto result = blr::torch::run_continual(c, ::at::Device(f.settings.device), progress);
  for (const double a : result.average_accuracy) {
    blr::check(std::isfinite(a), "The continual-learning run gave a non-finite accuracy.");
  }
  print_matrix(std::cout, result);
  std::cout.flush();
  const nlohmann::json report = result.to_json();
  blr::torch::write_json(f.settings.json, report);
  if (!f.settings.out.empty()) {
    blr::torch::write_json((fs::path(f.settings.out) / "continual.json").string(), report);
    if (blr::torch::write_continual_heatmap(f.settings.out, result, std::cerr)) {
      std::cerr << fmt::format("blr: heat map written to {}/continual.png\n", f.settings.out);
    }
  }
  return 0;
}

void setup_continual(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("continual", blr::cli::torch_command("continual").summary);
  auto f = std::make_shared<ContinualFlags>();
  auto& c = f->config;
  cmd->add_option("--tasks", c.tasks,
                  "split (Fashion-MNIST class pairs 0/1 ... 8/9, multi-head: each task predicts "
                  "between its own two classes) or permuted (all ten classes, a fixed random "
                  "pixel permutation per task, task 1 unpermuted).")
      ->check(CLI::IsMember({"split", "permuted"}))
      ->capture_default_str();
  cmd->add_option("--task-count", c.task_count, "Number of tasks (split: at most 5).")
      ->capture_default_str();
  cmd->add_option("--optimizer", c.optimizer,
                  "ivon (posterior of each task as the prior of the next, unless --prior "
                  "initial) or adamw (fine-tuning).")
      ->check(CLI::IsMember({"ivon", "adamw"}))
      ->capture_default_str();
  cmd->add_option("--prior", c.prior,
                  "IVON's prior for task t+1: posterior (the posterior after task t, the "
                  "default) or initial (the options' N(0, 1/(ess*weight_decay)) throughout: "
                  "fine-tuning).")
      ->check(CLI::IsMember({"posterior", "initial"}));
  cmd->add_flag("--retrain", c.retrain,
                "Baseline: after each task, train a fresh model on all tasks so far (same "
                "epochs), instead of continuing.");
  cmd->add_option("--epochs", c.epochs, "Epochs per task.")->capture_default_str();
  cmd->add_option("--batch-size", c.batch_size, "Minibatch size.")->capture_default_str();
  cmd->add_option("--seed", c.seed, "Seed (initialisation, minibatch order, noise, permutations).")
      ->capture_default_str();
  cmd->add_option("--train-limit", c.data_options.train_limit,
                  "Use only the first N training examples of each task (0 = all).")
      ->capture_default_str();
  cmd->add_option("--test-limit", c.data_options.test_limit,
                  "Use only the first N test examples of each task (0 = all).")
      ->capture_default_str();
  blr::torch::cli::add_model_flags(cmd, f->train);
  blr::torch::cli::add_model_file_flag(cmd, f->train.config.model_file);
  auto& s = f->settings;
  cmd->add_option("--threads", s.threads, "LibTorch threads (0 = all cores).")
      ->capture_default_str();
  cmd->add_option("--device", s.device, "cpu, cuda or cuda:N.")->capture_default_str();
  cmd->add_option("--json", s.json, "Write the results as JSON to this file ('-' = stdout).");
  cmd->add_option("--out", s.out, "Directory for continual.json and the heat map continual.png.");
  cmd->add_flag("--quiet", s.quiet, "No progress output on stderr.");
  blr::torch::cli::add_recipe_flag(cmd, f->train);
  blr::torch::cli::add_optimizer_flags(cmd, f->train);
  cmd->callback([f, cmd, &exit_code] {
    blr::torch::cli::check_model_file_flags(cmd, f->train);
    exit_code = run(*f);
  });
}

BLR_REGISTER_COMMAND("continual", blr::cli::torch_command("continual").order, setup_continual);

}  // namespace
