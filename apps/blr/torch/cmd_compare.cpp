// `blr compare`: several optimizers on one task, side by side in one table.
#include <memory>

#include "../command.hpp"
#include "../torch_part.hpp"
#include "cli.hpp"

namespace {

void setup_compare(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("compare", blr::cli::torch_command("compare").summary);
  auto flags = std::make_shared<blr::torch::cli::TrainFlags>();
  auto names = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--optimizers", *names, "Comma-separated optimizers, e.g. ivon,adamw,sgd.")
      ->delimiter(',')
      ->required();
  auto seeds = std::make_shared<int>(1);
  cmd->add_option("--seeds", *seeds,
                  "Train every optimizer with this many seeds (--seed, --seed + 1, ...) and report "
                  "means ± standard deviations (the data split stays --seed's).")
      ->capture_default_str();
  blr::torch::cli::add_train_flags(cmd, *flags);
  blr::torch::cli::add_optimizer_flags(cmd, *flags);
  cmd->callback([cmd, flags, names, seeds, &exit_code] {
    blr::torch::cli::check_model_file_flags(cmd, *flags);
    blr::torch::cli::finish_config(*flags);
    blr::torch::cli::apply_recipe_flags(cmd, *flags, *names);
    exit_code =
        blr::torch::run_compare(flags->config, *names, flags->optimizer_options, flags->settings,
                                *seeds);
  });
}

BLR_REGISTER_COMMAND("compare", blr::cli::torch_command("compare").order, setup_compare);

}  // namespace
