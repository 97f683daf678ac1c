// `blr ensemble`: a deep ensemble (blr/torch/predictive/ensemble.hpp) — M members of one optimizer trained
// from seeds s..s+M-1 on the same data split, scored by the average of their predictive
// distributions.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "../command.hpp"
#include "../torch_part.hpp"
#include "cli.hpp"

namespace {

void setup_ensemble(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("ensemble", blr::cli::torch_command("ensemble").summary);
  auto flags = std::make_shared<blr::torch::cli::TrainFlags>();
  auto members = std::make_shared<int>(5);
  flags->config.optimizer = "adamw";
  cmd->add_option("--optimizer", flags->config.optimizer,
                  fmt::format("Optimizer of every member: {}.",
                              fmt::join(blr::torch::optimizer_names(), ", ")))
      ->capture_default_str();
  cmd->add_option("--members", *members, "Number of members M (seeds --seed, --seed + 1, ...).")
      ->capture_default_str();
  blr::torch::cli::add_train_flags(cmd, *flags);
  blr::torch::cli::add_optimizer_flags(cmd, *flags);
  cmd->callback([cmd, flags, members, &exit_code] {
    auto& f = *flags;
    blr::torch::cli::check_model_file_flags(cmd, f);
    blr::torch::cli::finish_config(f);
    blr::torch::cli::apply_recipe_flags(cmd, f, {f.config.optimizer});
    blr::torch::cli::take_optimizer_options(f, "each member");
    exit_code = blr::torch::run_ensemble(f.config, *members, f.settings);
  });
}

BLR_REGISTER_COMMAND("ensemble", blr::cli::torch_command("ensemble").order, setup_ensemble);

}  // namespace
