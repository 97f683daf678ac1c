// `blr laplace`: the post-hoc Laplace posterior of a checkpoint of `blr train` / `blr compare`
// (blr/torch/laplace_fit.hpp), saved as a checkpoint that `blr eval` scores.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "../command.hpp"
#include "../preflight.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "commands.hpp"

namespace {

struct LaplaceFlags {
  blr::torch::LaplaceRequest request;
  std::string subset = "all";
  std::string curvature = "ggn";
  blr::torch::RunSettings settings;
};

void setup_laplace(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("laplace", blr::cli::torch_command("laplace").summary);
  auto f = std::make_shared<LaplaceFlags>();
  cmd->add_option("--checkpoint", f->request.checkpoint,
                  "Checkpoint (.ckpt) of a trained run, e.g. AdamW or SGD from blr train "
                  "(required).");
  cmd->add_option("--subset", f->subset, "Weights with a posterior: all or last-layer.")
      ->check(CLI::IsMember({"all", "last-layer"}))
      ->capture_default_str();
  cmd->add_option("--curvature", f->curvature,
                  "ggn (diagonal Gauss-Newton, exact: one backward pass per class) or ef "
                  "(empirical Fisher: one pass).")
      ->check(CLI::IsMember({"ggn", "ef"}))
      ->capture_default_str();
  cmd->add_option("--structure", f->request.structure,
                  "diag (one precision per weight) or kron (Kronecker-factored N·(A⊗G) + δI per "
                  "Linear/Conv2d weight; other parameters diagonal).")
      ->check(CLI::IsMember({"diag", "kron"}))
      ->capture_default_str();
  cmd->add_option("--predictive", f->request.predictive,
                  "mc (average over --test-samples posterior draws) or probit (linearised, "
                  "softmax(f/√(1+πv/8)), no draws).")
      ->check(CLI::IsMember({"mc", "probit"}))
      ->capture_default_str();
  cmd->add_option("--prior-precision", f->request.prior_precision,
                  "Prior precision δ of N(0, δ⁻¹I) (default: the δ that maximises the Laplace "
                  "marginal likelihood).");
  cmd->add_option("--save", f->request.save,
                  "Write the posterior as a checkpoint (.ckpt) that blr eval scores.");
  cmd->add_option("--test-samples", f->request.test_samples,
                  "Posterior samples K of the predictive (default: the checkpoint's).");
  cmd->add_option("--data-dir", f->request.data_dir, "Directory of the Fashion-MNIST files.");
  cmd->add_option("--threads", f->settings.threads, "LibTorch threads (0 = all cores).");
  cmd->add_option("--device", f->settings.device, "cpu, cuda or cuda:N.")->capture_default_str();
  cmd->add_option("--json", f->settings.json, "Write the results as JSON ('-' = stdout).");
  cmd->add_option("--out", f->settings.out, "Directory for the reliability diagram.");
  cmd->add_flag("--quiet", f->settings.quiet, "No progress output on stderr.");
  cmd->callback([cmd, f, &exit_code] {
    blr::check(!f->request.checkpoint.empty(),
               "blr laplace needs --checkpoint FILE (a .ckpt of blr train).");
    const double delta = f->request.prior_precision;
    blr::check(cmd->count("--prior-precision") == 0 || (delta > 0 && std::isfinite(delta)),
               fmt::format("Option 'prior-precision' must be a positive finite number (or left "
                           "out to choose it by the marginal likelihood); got {}.",
                           delta));
    if (!f->request.save.empty()) blr::cli::check_writable_file(f->request.save, "--save");
    f->request.subset = f->subset == "last-layer" ? "last_layer" : f->subset;
    f->request.curvature = f->curvature;
    exit_code = blr::torch::run_laplace(f->request, f->settings);
  });
}

BLR_REGISTER_COMMAND("laplace", blr::cli::torch_command("laplace").order, setup_laplace);

}  // namespace
