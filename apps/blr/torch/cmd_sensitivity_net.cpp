// `blr sensitivity --checkpoint C`: how much a trained network depends on each of its training
// examples — the memory-perturbation equation (blr/torch/posterior/sensitivity.hpp) under the posterior of
// the checkpoint's optimizer (IVON, VOGN, OGN, Vadam, a `blr laplace` posterior, or AdamW's second
// moment) — with the leave-one-out estimates, and optionally the check against retraining without
// R random examples and without each class (blr/torch/posterior/sensitivity_validation.hpp). The front's
// `blr sensitivity <glm>` (apps/blr/cmd_sensitivity.cpp) hands a command line with --checkpoint
// over to this one (torch_part.hpp). --json writes every example's values, --out the pictures.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <memory>

#include "../command.hpp"
#include "../preflight.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/posterior/sensitivity.hpp"
#include "blr/torch/posterior/sensitivity_validation.hpp"
#include "commands.hpp"
#include "report.hpp"
#include "sensitivity_plots.hpp"
#include "sensitivity_report.hpp"

namespace {

namespace bt = blr::torch;

struct SensitivityFlags {
  std::string checkpoint;
  int64_t top = 10;
  bt::NetworkSensitivityOptions options;
  int64_t retrain = 0;  ///< R; 0 = no retraining check
  bool classes = false;  ///< leave-one-class-out retraining too
  bt::RetrainOptions retrain_options;
  std::string data_dir;
  bt::RunSettings settings;
};

nlohmann::json validation_json(const bt::RetrainValidation& v) {
  nlohmann::json j{{"removed", v.removed},
                   {"predicted", v.predicted},
                   {"true", v.truth},
                   {"score_correlation", v.score_correlation},
                   {"reference_shift", v.reference_shift}};
  if (v.true_deviation.defined()) j["deviation_correlation"] = v.deviation_correlation;
  return j;
}

int run(SensitivityFlags& f, bool weight_decay_given) {
  bt::apply_run_settings(f.settings);
  const auto device = bt::parse_device(f.settings.device);
  if (!f.settings.out.empty()) blr::cli::check_writable_directory(f.settings.out, "--out");
  const auto start = std::chrono::steady_clock::now();
  bt::LoadedRun run = bt::load_run(f.checkpoint, 0, f.data_dir, 0);
  bt::Trainer trainer(run.config, run.data, device);
  trainer.restore(run.checkpoint);
  const auto x = run.data->train.x.to(device);
  const auto y = run.data->train.y.to(device);
  const int64_t n = x.size(0);
  const auto pv = bt::posterior_variance(trainer.optimizer(), n);
  if (!f.settings.quiet) {
    std::cerr << fmt::format("blr sensitivity: {} ({}), {} training examples, {}\n", f.checkpoint,
                             run.config.optimizer, n, pv.source);
  }
  const auto s = bt::network_sensitivity(trainer.model(), pv.variance, x, y, f.options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto most = bt::ranked_examples(s.score, f.top, true);
  const auto least = bt::ranked_examples(s.score, f.top, false);

  fmt::print("leave-one-out estimate (no refitting): NLL {:.6f}, accuracy {:.4f}\n", s.loo_nll,
             s.loo_accuracy);
  fmt::print("in-sample (every example in the fit):  NLL {:.6f}, accuracy {:.4f}\n", s.train_nll,
             s.train_accuracy);
  fmt::print(
      "the {} most influential training examples (score = predicted L1 change of the softmax "
      "when the example is removed; e, v, deviation at the true class):\n",
      most.size());
  fmt::print("{:>5} {:>7} {:>12} {:>11} {:>11} {:>11} {:>11}\n", "rank", "index", "label", "error",
             "variance", "deviation", "score");
  const auto names = bt::class_names_of(run.config.data);
  for (size_t r = 0; r < most.size(); ++r) {
    const int64_t i = most[r];
    const int64_t yi = y[i].item<int64_t>();
    fmt::print("{:>5} {:>7} {:>12} {:>11.4g} {:>11.4g} {:>11.4g} {:>11.4g}\n", r + 1, i,
               bt::class_name(yi, names), s.error[i][yi].item<double>(), s.variance[i][yi].item<double>(),
               s.deviation[i][yi].item<double>(), s.score[i].item<double>());
  }
  fmt::print("(index: 0-based position in the training set of the checkpoint's run)\n");

  nlohmann::json j = bt::sensitivity_json(s);
  j.update({{"checkpoint", f.checkpoint},
            {"optimizer", run.config.optimizer},
            {"source", pv.source},
            {"seconds", seconds},
            {"top", bt::ranked_json(s, y, most)},
            {"least", bt::ranked_json(s, y, least)},
            {"class_score", std::vector<double>()}});
  {
    const auto c = bt::class_scores(s, y).cpu();
    std::vector<double> v(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
    j["class_score"] = v;
  }

  bt::RetrainValidation single, by_class;
  if (f.retrain > 0 || f.classes) {
    auto& o = f.retrain_options;
    if (!weight_decay_given) {
      const auto options = blr::options_to_json(trainer.result().options);
      o.weight_decay = options.contains("weight_decay") && options["weight_decay"].is_number()
                           ? options["weight_decay"].get<double>()
                           : 0.0;
    }
    nlohmann::json settings{{"steps", o.steps},
                            {"lr", o.learning_rate},
                            {"momentum", o.momentum},
                            {"weight_decay", o.weight_decay},
                            {"seed", o.seed}};
    if (f.retrain > 0) {
      o.examples = f.retrain;
      if (!f.settings.quiet) {
        std::cerr << fmt::format(
            "blr sensitivity: retraining {} + 1 times ({} full-batch steps over {} examples)\n",
            f.retrain, o.steps, n);
      }
      single = bt::validate_by_retraining(trainer.model(), s, x, y, o);
      fmt::print(
          "retrained without each of {} random examples: Pearson r(score, true change) = {:.4f}, "
          "r(deviation, true logit change) = {:.4f}\n",
          single.removed.size(), single.score_correlation, single.deviation_correlation);
      j["validation"] = validation_json(single);
      j["validation"]["retrain"] = settings;
    }
    if (f.classes) {
      by_class = bt::validate_classes_by_retraining(trainer.model(), s, x, y, o);
      fmt::print("retrained without each of {} classes: Pearson r(class score, true change) = "
                 "{:.4f}\n",
                 by_class.removed.size(), by_class.score_correlation);
      j["class_validation"] = validation_json(by_class);
      j["class_validation"]["retrain"] = settings;
    }
  }
  bt::write_json(f.settings.json, j);
  if (!f.settings.out.empty()) {
    const std::string title =
        fmt::format("{}: {} ({} training examples)", run.config.optimizer, pv.source, n);
    bt::write_influence_grid(f.settings.out, run.data->train.x, run.data->train.y,
                             s.score.cpu(), bt::ranked_examples(s.score, 8, true),
                             bt::ranked_examples(s.score, 8, false),
                             fmt::format("most (top) and least (bottom) influential: {}", title),
                             std::cerr, names);
    if (f.retrain > 0) {
      bt::write_validation_scatter(f.settings.out, single, f.classes ? &by_class : nullptr, title,
                                   std::cerr);
    }
  }
  return 0;
}

void setup_sensitivity_net(CLI::App& app, int& exit_code) {
  const auto& entry = blr::cli::kTorchSensitivity;
  auto* cmd = app.add_subcommand(entry.name, entry.summary);
  auto f = std::make_shared<SensitivityFlags>();
  cmd->add_option("--checkpoint", f->checkpoint,
                  fmt::format("Checkpoint (.ckpt) of blr train with a Gaussian posterior ({}) or "
                              "AdamW, or of blr laplace --save (required).",
                              fmt::join(blr::torch::optimizer_names_with(
                                            &blr::torch::OptimizerEntry::gaussian_posterior),
                                        ", ")));
  cmd->add_option("--top", f->top, "How many of the most influential examples to list.")
      ->capture_default_str();
  cmd->add_option("--batch-size", f->options.batch_size,
                  "Examples per forward pass (and its K backward passes).")
      ->capture_default_str();
  cmd->add_option("--retrain", f->retrain,
                  "Check against retraining: remove each of this many random training examples "
                  "(>= 2) in turn and retrain warm-started (0 = no check).")
      ->capture_default_str();
  cmd->add_flag("--retrain-classes", f->classes,
                "Check leave-one-class-out too: retrain without each class.");
  cmd->add_option("--retrain-steps", f->retrain_options.steps,
                  "Full-batch steps of each retraining.")
      ->capture_default_str();
  cmd->add_option("--retrain-lr", f->retrain_options.learning_rate,
                  "Learning rate of the retraining (cosine to 0).")
      ->capture_default_str();
  cmd->add_option("--retrain-momentum", f->retrain_options.momentum,
                  "Heavy-ball momentum of the retraining.")
      ->capture_default_str();
  cmd->add_option("--retrain-weight-decay", f->retrain_options.weight_decay,
                  "Weight decay γ on the mean loss of the retraining (default: the checkpoint "
                  "optimizer's weight_decay, else 0).");
  cmd->add_option("--retrain-seed", f->retrain_options.seed, "Seed of the removed examples.")
      ->capture_default_str();
  cmd->add_option("--data-dir", f->data_dir, "Directory of the Fashion-MNIST files.");
  cmd->add_option("--threads", f->settings.threads, "LibTorch threads (0 = all cores).");
  cmd->add_option("--device", f->settings.device, "cpu, cuda or cuda:N.")->capture_default_str();
  cmd->add_option("--json", f->settings.json,
                  "Write every example's values as JSON ('-' = stdout).");
  cmd->add_option("--out", f->settings.out,
                  "Directory for the pictures (influence.png, validation.png).");
  cmd->add_flag("--quiet", f->settings.quiet, "No progress output on stderr.");
  cmd->callback([cmd, f, &exit_code] {
    blr::check(!f->checkpoint.empty(),
               "blr sensitivity needs --checkpoint FILE (a .ckpt of blr train or blr laplace) "
               "for a network, or a GLM name (linreg, logistic, poisson) for the GLM command.");
    blr::check(f->top >= 1, "Option '--top' must be a positive integer; got {}.", f->top);
    blr::check(f->retrain == 0 || f->retrain >= 2,
               "Option '--retrain' must be 0 (no check) or at least 2 (a correlation needs two "
               "points); got {}.",
               f->retrain);
    f->options.validate();
    if (f->retrain > 0 || f->classes) {
      auto check_options = f->retrain_options;
      check_options.examples = f->retrain > 0 ? f->retrain : 2;
      check_options.validate();
    } else {
      for (const char* name : {"--retrain-steps", "--retrain-lr", "--retrain-momentum",
                               "--retrain-weight-decay", "--retrain-seed"}) {
        blr::check(cmd->count(name) == 0,
                   "{} applies to the retraining check; give --retrain R or --retrain-classes.",
                   name);
      }
    }
    exit_code = run(*f, cmd->count("--retrain-weight-decay") > 0);
  });
}

BLR_REGISTER_COMMAND("sensitivity", blr::cli::kTorchSensitivity.order, setup_sensitivity_net);

}  // namespace
