// `blr laplace`: the post-hoc Laplace posterior of a checkpoint of `blr train` / `blr compare`
// (blr/torch/posterior/laplace_fit.hpp), saved as a checkpoint that `blr eval` scores.
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../command.hpp"
#include "../preflight.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "commands.hpp"

namespace {

struct LaplaceFlags {
  blr::torch::LaplaceRequest request;
  std::string grid;
  blr::torch::RunSettings settings;
};

/// "MIN,MAX,POINTS" as a grid; a sentence naming the option otherwise.
blr::torch::PriorPrecisionGrid parse_grid(const std::string& text) {
  const std::string usage = fmt::format(
      "Option '--prior-precision-grid' takes MIN,MAX,POINTS (e.g. 1e-4,1e4,17); got '{}'.", text);
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    parts.push_back(text.substr(start, comma - start));
  parts.push_back(text.substr(start));
  blr::check(parts.size() == 3, usage);
  blr::torch::PriorPrecisionGrid grid;
  try {
    size_t used_min = 0, used_max = 0, used_points = 0;
    grid.min = std::stod(parts[0], &used_min);
    grid.max = std::stod(parts[1], &used_max);
    grid.points = std::stoi(parts[2], &used_points);
    blr::check(used_min == parts[0].size() && used_max == parts[1].size() &&
                   used_points == parts[2].size(),
               usage);
  } catch (const std::logic_error&) {
    throw blr::Error(usage);
  }
  return grid;
}

void setup_laplace(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("laplace", blr::cli::torch_command("laplace").summary);
  auto f = std::make_shared<LaplaceFlags>();
  cmd->add_option("--checkpoint", f->request.checkpoint,
                  "Checkpoint (.ckpt) of a trained run, e.g. AdamW or SGD from blr train "
                  "(required).");
  // The choices are the laplace optimizer's table's (blr optimizers), which checks them in one
  // sentence; an earlier spelling (last_layer, mc: laplace-torch's) reads as the current one.
  cmd->add_option("--subset", f->request.subset, "Weights with a posterior: all or last-layer.")
      ->capture_default_str();
  cmd->add_option("--curvature", f->request.curvature,
                  "ggn (diagonal Gauss-Newton, exact: one backward pass per class or output) or ef "
                  "(empirical Fisher: one pass).")
      ->capture_default_str();
  cmd->add_option("--structure", f->request.structure,
                  "diag (one precision per weight) or kron (Kronecker-factored N·(A⊗G) + δI per "
                  "Linear/Conv2d weight; other parameters diagonal).")
      ->capture_default_str();
  cmd->add_option("--predictive", f->request.predictive,
                  "monte-carlo (average over --test-samples posterior draws) or probit "
                  "(linearised, no draws: softmax(f/√(1+πv/8)) for a classifier, N(f, v + σ²) for "
                  "a regression).")
      ->capture_default_str();
  cmd->add_option("--prior-precision", f->request.prior_precision,
                  "Prior precision δ of N(0, δ⁻¹I) (default: chosen by "
                  "--prior-precision-method).");
  cmd->add_option("--prior-precision-method", f->request.prior_precision_method,
                  "How δ is chosen when not given: marglik (maximises the Laplace marginal "
                  "likelihood) or gridsearch (the lowest NLL of the predictive on the run's "
                  "validation split over --prior-precision-grid; laplace-torch's names).")
      ->check(CLI::IsMember({"marglik", "gridsearch"}))
      ->capture_default_str();
  cmd->add_option("--prior-precision-grid", f->grid,
                  "gridsearch's grid MIN,MAX,POINTS, log-spaced (default 1e-4,1e4,17).");
  cmd->add_option("--noise-std-method", f->request.noise_std_method,
                  "Regression: the observation noise σ of the Gaussian likelihood: run (the σ "
                  "the training run fitted or was given) or marglik (chosen with δ by the "
                  "Laplace marginal likelihood).")
      ->check(CLI::IsMember({"run", "marglik"}))
      ->capture_default_str();
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
    blr::check(cmd->count("--prior-precision") == 0 ||
                   cmd->count("--prior-precision-method") + cmd->count("--prior-precision-grid") == 0,
               "Options '--prior-precision' and '--prior-precision-method'/'--prior-precision-grid' "
               "exclude each other: a given δ is not chosen.");
    if (!f->grid.empty()) {
      blr::check(f->request.prior_precision_method == "gridsearch",
                 "Option '--prior-precision-grid' needs --prior-precision-method gridsearch.");
      f->request.grid = parse_grid(f->grid);
    }
    f->request.grid.validate();
    if (!f->request.save.empty()) blr::cli::check_writable_file(f->request.save, "--save");
    exit_code = blr::torch::run_laplace(f->request, f->settings);
  });
}

BLR_REGISTER_COMMAND("laplace", blr::cli::torch_command("laplace").order, setup_laplace);

}  // namespace
