// `blr merge`: merges fine-tuned checkpoints of `blr train` into their base checkpoint by
// uncertainty-weighted gradient matching, task arithmetic or averaging (blr/torch/posterior/merge.hpp, with
// the equations), and writes the merged model as a checkpoint that `blr eval` scores. The merged
// checkpoint keeps the base's configuration (data, model) and holds a point estimate: its
// optimizer entry is a fresh SGD, so `blr eval` reports the prediction at the merged weights.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>

#include "../command.hpp"
#include "../preflight.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/posterior/merge.hpp"
#include "commands.hpp"

namespace {

struct MergeFlags {
  std::string base;
  std::vector<std::string> models;
  std::string method = "uncertainty";
  blr::torch::MergeOptions options;
  std::string out;
  std::string data_dir;
  blr::torch::RunSettings settings;
};

std::string shape_text(const at::Tensor& x) {
  return fmt::format("[{}]", fmt::join(x.sizes(), ", "));
}

// A checkpoint restored into its trainer, with its data.
struct Restored {
  blr::torch::LoadedRun run;
  std::unique_ptr<blr::torch::Trainer> trainer;
};

Restored restore(const std::string& path, const std::string& data_dir, at::Device device) {
  Restored r{blr::torch::load_run(path, 0, data_dir, 0), nullptr};
  blr::check(r.run.data->task == blr::torch::Task::kClassification,
             "blr merge combines posteriors of classifiers; '{}' was trained on a regression data "
             "set.",
             path);
  r.trainer = std::make_unique<blr::torch::Trainer>(r.run.config, r.run.data, device);
  r.trainer->restore(r.run.checkpoint);
  return r;
}

std::vector<at::Tensor> curvature_of(Restored& r, at::Device device, const std::string& path,
                                     bool quiet) {
  std::string source;
  auto c = blr::torch::merge_curvature(r.trainer->model(), r.trainer->optimizer(),
                                       r.run.data->train.x.to(device),
                                       r.run.data->train.y.to(device), source);
  if (!quiet) {
    std::cerr << fmt::format("blr merge: {}: {} ({})\n", path, source, r.run.config.optimizer);
  }
  return c;
}

int run_merge(const MergeFlags& f) {
  blr::torch::apply_run_settings(f.settings);
  const auto device = blr::torch::parse_device(f.settings.device);
  const bool uncertainty = f.options.method == blr::torch::MergeMethod::kUncertainty;
  Restored base = restore(f.base, f.data_dir, device);
  const auto base_params = base.trainer->model().named_parameters();
  std::vector<at::Tensor> base_curvature;
  if (uncertainty) base_curvature = curvature_of(base, device, f.base, f.settings.quiet);
  const size_t n_params = base_params.size();
  std::vector<std::vector<at::Tensor>> params(n_params), curvatures(n_params);
  for (const auto& path : f.models) {
    Restored model = restore(path, f.data_dir, device);
    const auto named = model.trainer->model().named_parameters();
    blr::check(named.size() == n_params,
               fmt::format("The checkpoint '{}' has {} parameter tensors but the base '{}' has "
                           "{}; merging needs one architecture.",
                           path, named.size(), f.base, n_params));
    for (size_t j = 0; j < n_params; ++j) {
      const auto& [name, value] = named[j];
      blr::check(name == base_params[j].first &&
                     value.sizes() == base_params[j].second.sizes(),
                 fmt::format("The checkpoint '{}' has parameter {} of shape {} where the base "
                             "'{}' has {} of shape {}; merging needs one architecture.",
                             path, name, shape_text(value), f.base, base_params[j].first,
                             shape_text(base_params[j].second)));
      params[j].push_back(value.detach().clone());
    }
    if (uncertainty) {
      auto c = curvature_of(model, device, path, f.settings.quiet);
      for (size_t j = 0; j < n_params; ++j) curvatures[j].push_back(c[j]);
    }
  }
  {
    at::NoGradGuard no_grad;
    for (size_t j = 0; j < n_params; ++j) {
      auto& target = base_params[j].second;
      const auto merged = blr::torch::merge_tensor(
          target, params[j], uncertainty ? base_curvature[j] : at::Tensor(), curvatures[j],
          f.options);
      target.copy_(merged);
    }
  }
  base.trainer->replace_optimizer(
      "sgd", {},
      fmt::format("{} merge of {} model(s) into a base trained with {}",
                  blr::torch::merge_method_name(f.options.method), f.models.size(),
                  base.run.config.optimizer));
  base.trainer->save(f.out);
  if (!f.settings.quiet) {
    // Only the settings the method uses: average has no scale, only uncertainty has δ₀.
    std::string settings;
    if (f.options.method == blr::torch::MergeMethod::kUncertainty) {
      settings = fmt::format(" (scale {}, delta0 {})", f.options.scale, f.options.delta0);
    } else if (f.options.method == blr::torch::MergeMethod::kTaskArithmetic) {
      settings = fmt::format(" (scale {})", f.options.scale);
    }
    std::cerr << fmt::format("blr merge: {} of {} model(s) into the base {}{} written to {}\n",
                             blr::torch::merge_method_name(f.options.method), f.models.size(),
                             f.base, settings, f.out);
  }
  return 0;
}

void setup_merge(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("merge", blr::cli::torch_command("merge").summary);
  auto f = std::make_shared<MergeFlags>();
  cmd->add_option("--base", f->base, "Checkpoint of the base (pretrained) model (required).");
  cmd->add_option("--models", f->models,
                  "Checkpoints of the fine-tuned models, comma-separated (required).")
      ->delimiter(',');
  cmd->add_option("--method", f->method, "uncertainty, average or task-arithmetic.")
      ->capture_default_str();
  cmd->add_option("--scale", f->options.scale,
                  "Task scale α of uncertainty and task-arithmetic merging.")
      ->capture_default_str();
  cmd->add_option("--delta0", f->options.delta0,
                  "δ₀ added to the merged precision (uncertainty merging).")
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Where the merged checkpoint (.ckpt) goes (required).")
      ->type_name("FILE");  // one file, not a directory (preflight.hpp)
  cmd->add_option("--data-dir", f->data_dir, "Directory of the Fashion-MNIST files.");
  cmd->add_option("--threads", f->settings.threads, "LibTorch threads (0 = all cores).");
  cmd->add_option("--device", f->settings.device, "cpu, cuda or cuda:N.")->capture_default_str();
  cmd->add_flag("--quiet", f->settings.quiet, "No progress output on stderr.");
  cmd->callback([cmd, f, &exit_code] {
    blr::check(!f->base.empty(), "blr merge needs --base FILE (the checkpoint merged into).");
    blr::check(!f->models.empty(),
               "blr merge needs --models C1,C2,... (the fine-tuned checkpoints).");
    blr::check(!f->out.empty(), "blr merge needs --out FILE (where the merged checkpoint goes).");
    f->options.method = blr::torch::parse_merge_method(f->method);
    blr::check(f->options.method != blr::torch::MergeMethod::kAverage || cmd->count("--scale") == 0,
               "--scale applies to uncertainty and task-arithmetic merging, not to average.");
    // δ₀ weighs the base model's prior in the uncertainty merge only; elsewhere it would be
    // silently ignored (as Python's blr.merge refuses it too).
    blr::check(f->options.method == blr::torch::MergeMethod::kUncertainty ||
                   cmd->count("--delta0") == 0,
               "--delta0 applies to uncertainty merging only, not to {}.",
               blr::torch::merge_method_name(f->options.method));
    f->options.validate();
    blr::cli::check_writable_file(f->out, "--out");
    exit_code = run_merge(*f);
  });
}

BLR_REGISTER_COMMAND("merge", blr::cli::torch_command("merge").order, setup_merge);

}  // namespace
