// `blr train`: trains a network on Fashion-MNIST, a text corpus or the user's data with one
// optimizer (BLR or baseline) and optionally a recipe, with checkpoints, resumption, calibration
// report, JSON and plots.
#include <memory>

#include "../command.hpp"
#include "../torch_part.hpp"
#include "cli.hpp"

namespace {

void setup_train(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("train", blr::cli::torch_command("train").summary);
  auto flags = std::make_shared<blr::torch::cli::TrainFlags>();
  auto resume = std::make_shared<std::string>();
  auto auto_resume = std::make_shared<bool>(false);
  cmd->add_option("--optimizer", flags->config.optimizer,
                  fmt::format("Optimizer: {}.", fmt::join(blr::torch::optimizer_names(), ", ")))
      ->capture_default_str();
  blr::torch::cli::add_train_flags(cmd, *flags);
  cmd->add_option("--resume", *resume,
                  "Continue the run saved in this checkpoint (its configuration is used); with "
                  "--epochs N, train until N epochs in all (the learning-rate schedule then spans "
                  "N epochs).");
  cmd->add_flag("--auto-resume", *auto_resume,
                "Continue from the newest valid checkpoint in OUT/checkpoints when there is one "
                "(it must be of this configuration, --epochs included), else start as without "
                "this flag: the same command then resumes after a crash, as a torchrun script "
                "loads its snapshot (blr launch --max-restarts adds it when it restarts ranks).");
  cmd->add_option("--sensitivity-every", flags->settings.sensitivity_every,
                  "Every E epochs, each training example's sensitivity and the leave-one-out NLL "
                  "estimate under the optimizer's posterior (JSON key sensitivity; --out: loo.png).")
      ->capture_default_str();
  blr::torch::cli::add_optimizer_flags(cmd, *flags);
  cmd->callback([cmd, flags, resume, auto_resume, &exit_code] {
    auto& f = *flags;
    if (!resume->empty()) {
      for (const auto& name : blr::torch::cli::configuration_flags()) {
        blr::check(cmd->count(name) == 0,
                   fmt::format("--resume takes the training configuration from the checkpoint; "
                               "drop {}.",
                               name));
      }
      blr::check(f.optimizer_options.empty(),
                 "--resume takes the optimizer options from the checkpoint; drop the "
                 "--<optimizer>-<key> flags.");
    } else {
      blr::torch::cli::check_model_file_flags(cmd, f);
      blr::torch::cli::finish_config(f);
      blr::torch::cli::apply_recipe_flags(cmd, f, {f.config.optimizer});
      blr::torch::cli::take_optimizer_options(f, "this run");
    }
    const int64_t resume_epochs = cmd->count("--epochs") > 0 ? f.config.epochs : 0;
    exit_code =
        blr::torch::run_train(f.config, f.settings, *resume, resume_epochs, *auto_resume);
  });
}

BLR_REGISTER_COMMAND("train", blr::cli::torch_command("train").order, setup_train);

}  // namespace
