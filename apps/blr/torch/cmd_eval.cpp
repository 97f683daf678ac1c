// `blr eval`: evaluates a checkpoint written by `blr train` / `blr compare`.
#include <fmt/format.h>

#include <memory>

#include "../command.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "commands.hpp"

namespace {

struct EvalFlags {
  std::string checkpoint;
  std::string bare;  // a checkpoint named without --checkpoint (accepted before; now refused)
  int test_samples = 0;
  int ece_bins = 0;
  std::string data_dir;
  std::vector<int64_t> classes;
  blr::torch::RunSettings settings;
};

void setup_eval(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("eval", blr::cli::torch_command("eval").summary);
  auto f = std::make_shared<EvalFlags>();
  cmd->add_option("--checkpoint", f->checkpoint, "Checkpoint file (.ckpt) to evaluate (required).");
  // `blr eval FILE` worked once; it now gets an error naming the one spelling.
  cmd->add_option("bare-checkpoint", f->bare)->group("");
  cmd->add_option("--test-samples", f->test_samples,
                  "Posterior samples K (default: the checkpoint's).");
  cmd->add_option("--ece-bins", f->ece_bins, "Equal-width ECE bins (default: the checkpoint's).");
  cmd->add_option("--data-dir", f->data_dir, "Directory of the Fashion-MNIST files.");
  cmd->add_option("--classes", f->classes,
                  "Score only the test examples of these classes, e.g. 5,6,7,8,9 (one task of a "
                  "class split).")
      ->delimiter(',');
  cmd->add_option("--threads", f->settings.threads, "LibTorch threads (0 = all cores).");
  cmd->add_option("--device", f->settings.device, "cpu, cuda or cuda:N.")->capture_default_str();
  cmd->add_option("--json", f->settings.json, "Write the results as JSON ('-' = stdout).");
  cmd->add_option("--out", f->settings.out, "Directory for the reliability diagram.");
  cmd->add_flag("--quiet", f->settings.quiet, "No progress output on stderr.");
  cmd->add_flag("--temperature-scaling", f->settings.temperature_scaling,
                "Also report each prediction after temperature scaling (T fitted on the run's "
                "validation split; Guo et al. 2017).");
  cmd->callback([f, &exit_code] {
    blr::check(f->bare.empty(),
               fmt::format("blr eval takes the checkpoint as --checkpoint {}, not as a bare "
                           "argument.",
                           f->bare));
    blr::check(!f->checkpoint.empty(), "blr eval needs --checkpoint FILE (a .ckpt of blr train).");
    exit_code =
        blr::torch::run_eval(f->checkpoint, f->test_samples, f->data_dir, f->ece_bins,
                             f->classes, f->settings);
  });
}

BLR_REGISTER_COMMAND("eval", blr::cli::torch_command("eval").order, setup_eval);

}  // namespace
