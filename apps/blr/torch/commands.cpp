#include "commands.hpp"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <thread>

#include "blr/torch/train/load_data.hpp"
#include "blr/core/error.hpp"
#include "blr/io/output_file.hpp"
#include "blr/torch/checkpoint/checkpoint.hpp"
#include "blr/torch/data/batches.hpp"
#include "blr/torch/distributed/process_group.hpp"
#include "blr/torch/data/load.hpp"
#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/posterior/posthoc_laplace.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/train/threads.hpp"
#include "blr/torch/train/trainer.hpp"
#include "../error_boundary.hpp"
#include "plots.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "sensitivity_report.hpp"

namespace blr::torch {
namespace fs = std::filesystem;
using ::blr::cli::kExitDiverged;

at::Device parse_device(const std::string& text) {
  try {
    at::Device device(text);
    if (device.is_cuda()) {
      check(::torch::cuda::is_available(),
            fmt::format("Device '{}' was asked for, but this LibTorch sees no CUDA device.", text));
    } else {
      check(device.is_cpu(), fmt::format("Device '{}' is not supported; use cpu or cuda.", text));
    }
    return device;
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {
    throw Error(fmt::format("Unknown device '{}'; use cpu, cuda or cuda:N.", text));
  }
}

namespace {

std::shared_ptr<Dataset> load_data(const TrainConfig& config,
                                   const std::vector<int64_t>& scored_classes = {}) {
  return std::make_shared<Dataset>(load_training_data(config, scored_classes));
}

// A --model-file run's checkpoint rebuilds its model from the TorchScript archive it embeds, not
// from the file (which may have changed or been deleted since).
void use_embedded_model(TrainConfig& config, const Checkpoint& checkpoint) {
  if (config.model_file.empty()) return;
  config.model_archive = checkpoint.model_archive();
  check(config.model_archive != nullptr,
        fmt::format("The checkpoint '{}' names the model file '{}' but does not embed its "
                    "TorchScript archive.",
                    checkpoint.path, config.model_file));
}

void prepare_out(const RunSettings& s) {
  check(s.checkpoint_every >= 0,
        fmt::format("Option 'checkpoint-every' must be >= 0; got {}.", s.checkpoint_every));
  check(s.checkpoint_every == 0 || !s.out.empty(),
        "Option '--checkpoint-every' needs '--out DIR' (where the checkpoints go).");
  if (!s.out.empty()) {
    std::error_code ec;
    fs::create_directories(s.out, ec);
    check(!ec, fmt::format("Cannot create the output directory '{}': {}.", s.out, ec.message()));
    // What a killed run left half-written (its final write or a periodic checkpoint) goes now.
    remove_stale_temporaries(s.out);
    const std::string checkpoints = (fs::path(s.out) / "checkpoints").string();
    // blr makes this directory: a link in its place was planted, and is not written through.
    if (s.checkpoint_every > 0) {
      blr::io::make_output_directory(checkpoints, "the checkpoint directory");
    }
    if (fs::is_directory(checkpoints, ec)) remove_stale_temporaries(checkpoints);
  }
}

// Trains (or continues) one run and evaluates it.
RunResult train_one(Trainer& trainer, const RunSettings& s, ProgressReporter& progress,
                    const std::string& label, EpochSensitivity* sensitivity = nullptr,
                    const Dataset* data = nullptr) {
  const auto& c = trainer.config();
  TrainHooks hooks = s.quiet ? TrainHooks{} : progress.hooks();
  if (sensitivity != nullptr) {
    sensitivity->attach(hooks, trainer, data->train.x.to(parse_device(s.device)),
                        data->train.y.to(parse_device(s.device)));
  }
  hooks.checkpoint_every = s.checkpoint_every;
  hooks.divergence_factor = s.divergence_factor;
  if (s.checkpoint_every > 0) hooks.checkpoint_dir = (fs::path(s.out) / "checkpoints").string();
  const int64_t n = trainer.result().train_size;
  if (!s.quiet) {
    progress.begin(label, c.epochs, batch_count(n, std::min(c.batch_size, n)), trainer.epoch());
  }
  progress.set_verbose(s.verbose);
  const size_t epochs_before = trainer.result().history.size();
  trainer.train(hooks);
  if (trainer.result().diverged) {  // shown even with --quiet: the numbers are not to be trusted
    std::cerr << fmt::format("blr: warning: {}.\n", trainer.result().divergence);
  }
  if (s.quiet) {  // the progress lines show it live otherwise
    const auto& history = trainer.result().history;
    for (size_t e = epochs_before; e < history.size(); ++e) {
      if (!history[e].warning.empty()) std::cerr << "blr: warning: " << history[e].warning << '\n';
    }
  }
  // Saved before the evaluation, whose posterior draws advance the generators: a run resumed
  // from this checkpoint with more epochs trains exactly as one longer run.
  if (!s.out.empty()) {
    const auto path = (fs::path(s.out) / (c.optimizer + ".ckpt")).string();
    trainer.save(path);
    trainer.result().checkpoint = path;
  }
  if (!s.quiet) progress.message(fmt::format("{}: evaluating on the test set", label));
  trainer.evaluate(0, s.quiet ? SampleProgress{} : progress.sample_progress(label));
  return trainer.result();
}

// A data-parallel rank other than 0: trains (rank 0 evaluates, reports and writes checkpoints).
int train_rank(Trainer& trainer, const RunSettings& s) {
  TrainHooks hooks;
  hooks.checkpoint_every = s.checkpoint_every;
  hooks.divergence_factor = s.divergence_factor;
  if (s.checkpoint_every > 0) hooks.checkpoint_dir = (fs::path(s.out) / "checkpoints").string();
  trainer.train(hooks);
  return 0;
}

// What rank 0 reports of a data-parallel run: ranks, split, and the all-reduce per step.
nlohmann::json distributed_report(const distributed::ProcessGroup& group,
                                  distributed::Split split, int64_t steps_run) {
  const auto& st = group.stats();
  const auto steps = std::max<int64_t>(1, steps_run);
  return {{"distributed",
           {{"world_size", group.world_size()},
            {"split", distributed::split_name(split)},
            {"bucket_bytes", group.bucket_bytes()},
            {"steps", steps_run},
            {"allreduce_ms_per_step", 1000.0 * st.seconds / static_cast<double>(steps)},
            {"allreduce_bytes_per_step", st.bytes / steps},
            {"allreduce_buckets_per_step", static_cast<double>(st.buckets) / steps}}}};
}

// Prints the table and writes the outputs; returns the exit status (4 when a run diverged and
// --fail-on-divergence was given).
int finish(const std::string& command, const std::vector<RunResult>& runs, const RunSettings& s,
           const nlohmann::json& extra = nlohmann::json::object()) {
  print_table(std::cout, runs);
  std::cout.flush();
  nlohmann::json report = report_to_json(command, runs);
  for (const auto& [key, value] : extra.items()) report[key] = value;
  write_json(s.json, report);
  if (!s.out.empty()) {
    write_json((fs::path(s.out) / "results.json").string(), report);
    if (runs.front().test.task == Task::kClassification && write_plots(s.out, runs, std::cerr)) {
      std::cerr << fmt::format("blr: plots written to {}/curves.png and {}/reliability.png\n",
                               s.out, s.out);
    }
  }
  const bool diverged =
      std::any_of(runs.begin(), runs.end(), [](const RunResult& r) { return r.diverged; });
  return diverged && s.fail_on_divergence ? kExitDiverged : 0;
}

}  // namespace

int effective_threads(int requested) {
  check(requested >= 0, fmt::format("Option 'threads' must be 0 (all cores) or more; got {}.",
                                    requested));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (requested == 0) return cores;
  if (requested > cores) {
    std::cerr << fmt::format(
        "blr: warning: --threads {} exceeds the {} cores of this machine; using {} (more threads "
        "than cores only wait on each other).\n",
        requested, cores, cores);
    return cores;
  }
  return requested;
}

void apply_run_settings(const RunSettings& settings) {
  set_thread_count(effective_threads(settings.threads));
  parse_device(settings.device);
  check(settings.divergence_factor > 1 && std::isfinite(settings.divergence_factor),
        fmt::format("Option '--divergence-factor' must be a finite number above 1; got {}.",
                    settings.divergence_factor));
}

/// What every rank of a data-parallel run must share, in the order a difference is reported:
/// the configuration (paths left out: they may differ between machines; their contents are
/// compared instead), then the training data's size and checksum and the starting parameters.
static std::vector<std::pair<std::string, std::string>> rank_configuration(
    const TrainConfig& config, const Trainer& trainer, distributed::Split split) {
  std::vector<std::pair<std::string, std::string>> values;
  const nlohmann::json j = config.to_json();
  for (const auto& [key, value] : j.items()) {
    if (key == "data_dir" || key == "test_samples" || key == "model_file" || key == "init" ||
        key == "test_data" || (key == "data" && value.get<std::string>().find('/') != std::string::npos)) {
      continue;
    }
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    values.emplace_back(key == "optimizer_options" ? "the optimizer's options"
                        : key == "gpt"             ? "the GPT's options"
                                                   : "--" + flag,
                        value.dump());
  }
  values.emplace_back("--dist-split", distributed::split_name(split));
  const Dataset& data = trainer.data();
  values.emplace_back("the number of training examples", std::to_string(data.train.size()));
  values.emplace_back(
      "the training data's checksum",
      fmt::format("{:.17g}", data.train.x.sum(::at::kDouble).item<double>() +
                                 data.train.y.sum(::at::kDouble).item<double>()));
  values.emplace_back("the starting parameters' digest", trainer.parameter_digest());
  values.emplace_back("the steps already taken", std::to_string(trainer.result().steps));
  return values;
}

std::optional<Checkpoint> newest_checkpoint_if_any(const std::string& directory,
                                                   std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return std::nullopt;
  remove_stale_temporaries(directory);
  bool any = false;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end && !any; it.increment(ec)) {
    any = it->path().extension() == ".ckpt" && it->is_regular_file();
  }
  if (!any) return std::nullopt;
  std::vector<std::string> refused;
  try {
    Checkpoint newest = newest_valid_checkpoint(directory, &refused);
    if (skipped != nullptr) skipped->insert(skipped->end(), refused.begin(), refused.end());
    return newest;
  } catch (const Error&) {
    if (refused.empty()) throw;  // the directory could not be listed
    if (skipped != nullptr) skipped->insert(skipped->end(), refused.begin(), refused.end());
    return std::nullopt;  // every file was refused
  }
}

namespace {

// The checkpoint --resume PATH names: that file, or the newest valid one of a directory (each
// file skipped on the way named on stderr).
Checkpoint resume_source(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return load_checkpoint(path);
  std::vector<std::string> skipped;
  remove_stale_temporaries(path);
  Checkpoint checkpoint = newest_valid_checkpoint(path, &skipped);
  for (const auto& why : skipped) std::cerr << "blr: skipped: " << why << '\n';
  std::cerr << fmt::format("blr: resuming from '{}' (epoch {}).\n", checkpoint.path,
                           checkpoint.meta.value("epoch", int64_t{0}));
  return checkpoint;
}

// The training configuration a checkpoint holds, with this command's data directory and test
// samples, and `epochs` in all when > 0.
TrainConfig configuration_of(const Checkpoint& checkpoint, const TrainConfig& command,
                             int64_t epochs, const std::string& named_as) {
  TrainConfig config;
  try {
    config = TrainConfig::from_json(checkpoint.meta.at("config"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("The checkpoint '{}' holds no training configuration: {}", named_as,
                            e.what()));
  }
  if (!command.data_options.directory.empty()) {
    config.data_options.directory = command.data_options.directory;
  }
  config.test_samples = command.test_samples;
  if (epochs > 0) {
    const int64_t done = checkpoint.meta.value("epoch", int64_t{0});
    check(epochs >= done,
          fmt::format("--epochs {} is fewer than the {} epochs the checkpoint '{}' has finished.",
                      epochs, done, named_as));
    config.epochs = epochs;
  }
  return config;
}

// The first setting in which the run that wrote `checkpoint` differs from `config` ("--seed = 1
// there and 2 here"), or "" when none does. Compared: everything that shapes training, the epoch
// count included (it spans the learning-rate schedule); not where the data lives or how the run
// is evaluated.
std::string configuration_difference(const Checkpoint& checkpoint, const TrainConfig& config) {
  nlohmann::json saved;
  try {
    saved = TrainConfig::from_json(checkpoint.meta.at("config")).to_json();
  } catch (const nlohmann::json::exception&) {
    return "no training configuration";
  }
  nlohmann::json wanted = config.to_json();
  for (const char* key : {"data_dir", "test_samples", "ece_bins", "test_limit", "test_data",
                          "temperature_scaling"}) {
    saved.erase(key);
    wanted.erase(key);
  }
  for (const auto& [key, value] : wanted.items()) {
    const nlohmann::json there = saved.contains(key) ? saved.at(key) : nlohmann::json();
    if (there != value) {
      std::string flag = key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      return fmt::format("--{} = {} there and {} here", flag, there.dump(), value.dump());
    }
  }
  for (const auto& [key, value] : saved.items()) {
    if (!wanted.contains(key)) return fmt::format("the setting {} = {}", key, value.dump());
  }
  return "";
}

}  // namespace

int run_train(const TrainConfig& config_in, const RunSettings& settings_in,
              const std::string& resume_path, int64_t resume_epochs, bool auto_resume) {
  RunSettings settings = settings_in;
  const auto split = distributed::parse_split(settings.dist_split);
  check(!auto_resume || !settings.out.empty(),
        "Option '--auto-resume' needs '--out DIR': it continues the newest valid checkpoint in "
        "DIR/checkpoints.");
  // Data parallel when launched with RANK and WORLD_SIZE (blr launch, torchrun): the ranks meet
  // first; only rank 0 reports and writes outputs.
  const auto group = distributed::process_group_from_environment(settings.dist_timeout);
  const bool root = group == nullptr || group->rank() == 0;
  if (!root) {
    settings.quiet = true;
    settings.json.clear();
  }
  apply_run_settings(settings);
  if (root) prepare_out(settings);
  TrainConfig config = config_in;
  std::optional<Checkpoint> checkpoint;
  if (!resume_path.empty()) {
    checkpoint = resume_source(resume_path);
    config = configuration_of(*checkpoint, config_in, resume_epochs, resume_path);
  }
  if (auto_resume) {
    // The run's own checkpoints: every rank reads the same directory, which nothing writes until
    // the ranks have agreed (below) on the steps already taken and the parameters.
    const std::string own = (fs::path(settings.out) / "checkpoints").string();
    std::vector<std::string> skipped;
    auto newest = newest_checkpoint_if_any(own, &skipped);
    if (root) {
      for (const auto& why : skipped) std::cerr << "blr: skipped: " << why << '\n';
    }
    if (newest) {
      const std::string difference = configuration_difference(*newest, config);
      check(difference.empty(),
            fmt::format("--auto-resume: the newest valid checkpoint in '{}', '{}', was written by "
                        "a run with another configuration ({}); give this run its own --out.",
                        own, newest->path, difference));
      if (root) {
        std::cerr << fmt::format("blr: --auto-resume: resuming from '{}' (epoch {}).\n",
                                 newest->path, newest->meta.value("epoch", int64_t{0}));
      }
      checkpoint = std::move(newest);
    } else if (root) {
      std::cerr << fmt::format("blr: --auto-resume: no valid checkpoint in '{}' yet; starting {}.\n",
                               own, checkpoint ? "from '" + checkpoint->path + "'" : "from scratch");
    }
  }
  if (checkpoint) use_embedded_model(config, *checkpoint);
  config.validate_for_training();
  const auto device = parse_device(settings.device);
  const auto data = load_data(config);
  Trainer trainer(config, data, device);
  if (checkpoint) {
    trainer.restore(*checkpoint);
  } else if (!config.init.empty()) {
    trainer.start_from(load_checkpoint(config.init));
  }
  if (group) {
    group->agree("train", rank_configuration(config, trainer, split));
    trainer.set_data_parallel(std::make_shared<distributed::DataParallel>(group, split));
    if (!root) return train_rank(trainer, settings);
    group->reset_stats();
  }
  const int64_t steps_before = trainer.result().steps;
  ProgressReporter progress(std::cerr, stderr_is_terminal());
  if (!settings.quiet) {
    progress.message(
        fmt::format("blr train: {} with {} on {} ({} training examples, {} test), "
                    "LibTorch threads {}, device {}",
                    trainer.result().model_description, config.optimizer, config.data,
                    data->train.size(), data->test.size(), at::get_num_threads(), settings.device));
  }
  check(settings.sensitivity_every >= 0,
        fmt::format("Option '--sensitivity-every' must be 0 (never) or a positive number of "
                    "epochs; got {}.",
                    settings.sensitivity_every));
  if (settings.sensitivity_every > 0) check_has_posterior_variance(trainer.optimizer());
  EpochSensitivity sensitivity(settings.sensitivity_every, 10);
  std::vector<RunResult> runs{train_one(trainer, settings, progress, config.optimizer,
                                        settings.sensitivity_every > 0 ? &sensitivity : nullptr,
                                        data.get())};
  nlohmann::json extra =
      group ? distributed_report(*group, split, trainer.result().steps - steps_before)
            : nlohmann::json::object();
  if (settings.sensitivity_every == 0) return finish("train", runs, settings, extra);
  if (!settings.out.empty() && !sensitivity.points().empty()) {
    write_loo_curve(settings.out, sensitivity.points(),
                    fmt::format("{}: leave-one-out NLL estimate (MPE) and test NLL",
                                config.optimizer),
                    std::cerr);
  }
  extra["sensitivity"] = sensitivity.to_json();
  return finish("train", runs, settings, extra);
}

int run_compare(const TrainConfig& base, const std::vector<std::string>& optimizers,
                const OptimizerOptions& options, const RunSettings& settings, int seeds) {
  check(!optimizers.empty(), "Option '--optimizers' needs at least one optimizer name.");
  check(seeds >= 1 && seeds <= 100,
        fmt::format("Option '--seeds' must lie in [1, 100]; got {}.", seeds));
  std::set<std::string> seen;
  for (const auto& name : optimizers) {
    check(seen.insert(name).second,
          fmt::format("Optimizer '{}' appears twice in --optimizers.", name));
  }
  for (const auto& [name, values] : options) {
    (void)values;
    check(seen.count(name) > 0,
          fmt::format("Options for optimizer '{}' were given (--{}-...), but it is not in "
                      "--optimizers.",
                      name, name));
  }
  std::vector<TrainConfig> configs;
  for (const auto& name : optimizers) {
    TrainConfig c = base;
    c.optimizer = name;
    auto it = options.find(name);
    c.optimizer_options = it != options.end() ? it->second : OptionValues{};
    c.validate_for_training();  // all configurations are checked before any training starts
    configs.push_back(c);
  }
  apply_run_settings(settings);
  prepare_out(settings);
  const auto device = parse_device(settings.device);
  const auto data = load_data(base);
  // A --model-file is read once: every optimizer starts from the same module.
  std::shared_ptr<const std::string> archive;
  if (!base.model_file.empty()) archive = read_model_file(base.model_file);
  for (auto& c : configs) c.model_archive = archive;
  ProgressReporter progress(std::cerr, stderr_is_terminal());
  if (!settings.quiet) {
    progress.message(fmt::format(
        "blr compare: {} on {} ({} training examples, {} test), {} epochs, batch {}, seed {}, "
        "LibTorch threads {}",
        fmt::join(optimizers, ", "), base.data, data->train.size(), data->test.size(), base.epochs,
        base.batch_size, base.seed, at::get_num_threads()));
  }
  // A model that a posterior optimizer's per-example engine cannot handle is refused before any
  // optimizer trains (a throwaway trainer each: the forward pass may draw random numbers).
  for (const auto& c : configs) {
    if (find_optimizer(c.optimizer).variational) {
      Trainer(c, data, device).check_per_example_support();
    }
  }
  if (seeds == 1) {
    std::vector<RunResult> runs;
    for (const auto& c : configs) {
      Trainer trainer(c, data, device);
      if (!c.init.empty()) trainer.start_from(load_checkpoint(c.init));
      runs.push_back(train_one(trainer, settings, progress, c.optimizer));
    }
    return finish("compare", runs, settings);
  }
  // Several seeds: every optimizer once per seed (initialisation, minibatch order and noise; the
  // data split stays the base seed's), no checkpoints (they would share names), one summary.
  RunSettings each = settings;
  each.out.clear();
  each.json.clear();
  std::vector<std::vector<RunResult>> by_seed;
  for (int k = 0; k < seeds; ++k) {
    std::vector<RunResult> runs;
    for (auto c : configs) {
      c.seed = base.seed + static_cast<uint64_t>(k);
      Trainer trainer(c, data, device);
      if (!c.init.empty()) trainer.start_from(load_checkpoint(c.init));
      runs.push_back(
          train_one(trainer, each, progress, fmt::format("{} seed {}", c.optimizer, c.seed)));
    }
    by_seed.push_back(std::move(runs));
  }
  print_seed_summary(std::cout, by_seed);
  std::cout.flush();
  nlohmann::json report = report_to_json("compare", by_seed.front());
  report["seeds"] = seeds_to_json(by_seed);
  write_json(settings.json, report);
  if (!settings.out.empty()) {
    write_json((fs::path(settings.out) / "results.json").string(), report);
    if (write_plots(settings.out, by_seed.front(), std::cerr)) {
      std::cerr << fmt::format("blr: plots (seed {}) written to {}/curves.png and "
                               "{}/reliability.png\n",
                               base.seed, settings.out, settings.out);
    }
  }
  for (const auto& runs : by_seed) {
    for (const auto& r : runs) {
      if (r.diverged && settings.fail_on_divergence) return kExitDiverged;
    }
  }
  return 0;
}

namespace {

/// JSON equality with numbers equal to 1e-9 relative: statistics such as a pixel mean are sums
/// whose last bits depend on the thread count of the process that computed them.
bool same_statistics(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-9 * std::max({1.0, std::abs(x), std::abs(y)});
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !same_statistics(it.value(), b.at(it.key()))) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!same_statistics(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

// The loader's statistics (standardisation constants, split rule) must be those the checkpoint
// was trained with; the data directory may move. Checkpoints written before the Dataset shape
// stored only the pixel mean.
void check_same_data(const Checkpoint& checkpoint, const Dataset& data) {
  const auto& meta = checkpoint.meta;
  if (meta.contains("dataset")) {
    auto saved = meta.at("dataset").value("statistics", nlohmann::json::object());
    auto now = data.statistics;
    saved.erase("directory");
    now.erase("directory");
    check(same_statistics(saved, now),
          fmt::format("The data set now has statistics {} but the checkpoint '{}' was trained "
                      "with {}: the data set differs from the one used for training.",
                      now.dump(), checkpoint.path, saved.dump()));
  } else if (meta.contains("pixel_mean")) {
    const double m = meta.at("pixel_mean").get<double>();
    const double now = data.statistics.value("pixel_mean", 0.0);
    check(std::abs(m - now) < 1e-9,
          fmt::format("The training images now have pixel mean {} but the checkpoint was trained "
                      "with {}: the data set differs from the one used for training.",
                      now, m));
  }
}

}  // namespace

LoadedRun load_run(const std::string& checkpoint_path, int test_samples,
                   const std::string& data_dir, int ece_bins,
                   const std::vector<int64_t>& classes) {
  LoadedRun run{load_checkpoint(checkpoint_path), {}, nullptr};
  try {
    run.config = TrainConfig::from_json(run.checkpoint.meta.at("config"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("The checkpoint '{}' holds no training configuration: {}",
                            checkpoint_path, e.what()));
  }
  use_embedded_model(run.config, run.checkpoint);
  if (test_samples > 0) run.config.test_samples = test_samples;
  if (ece_bins > 0) run.config.ece_bins = ece_bins;
  if (!data_dir.empty()) run.config.data_options.directory = data_dir;
  run.config.validate();
  if (!classes.empty()) {
    TrainConfig scored = run.config;  // the override passes the same checks as in training
    scored.classes = classes;
    scored.validate();
  }
  // Scored on `classes`' test (and validation) examples when given; the training set stays the
  // one the checkpoint was trained on, which a task's checkpoint may have filtered otherwise.
  run.data = load_data(run.config, classes);
  check_same_data(run.checkpoint, *run.data);
  return run;
}

namespace {

void create_out(const RunSettings& settings) {
  if (settings.out.empty()) return;
  std::error_code ec;
  fs::create_directories(settings.out, ec);
  check(!ec, fmt::format("Cannot create the output directory '{}'.", settings.out));
}

}  // namespace

int run_ensemble(const TrainConfig& base, int members, const RunSettings& settings) {
  check(members >= 1 && members <= 100,
        fmt::format("Option '--members' must lie in [1, 100]; got {}.", members));
  base.validate_for_training();
  apply_run_settings(settings);
  prepare_out(settings);
  const auto device = parse_device(settings.device);
  const auto data = load_data(base);
  check(data->task == Task::kClassification,
        "blr ensemble averages classifiers' predictive distributions; this data set is a "
        "regression task.");
  std::shared_ptr<const std::string> archive;
  if (!base.model_file.empty()) archive = read_model_file(base.model_file);
  ProgressReporter progress(std::cerr, stderr_is_terminal());
  if (!settings.quiet) {
    progress.message(fmt::format(
        "blr ensemble: {} members of {} on {} ({} training examples, {} test), seeds {}..{}",
        members, base.optimizer, base.data, data->train.size(), data->test.size(), base.seed,
        base.seed + static_cast<uint64_t>(members) - 1));
  }
  // Each member alone: no checkpoint or plot of its own (the ensemble's JSON holds them all).
  RunSettings member_settings = settings;
  member_settings.out.clear();
  member_settings.json.clear();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<RunResult> runs;
  std::vector<MemberPredictions> predictions;
  for (int m = 0; m < members; ++m) {
    TrainConfig c = base;
    c.seed = base.seed + static_cast<uint64_t>(m);
    c.data_options.seed = base.data_options.seed;  // one split for all members
    c.model_archive = archive;
    Trainer trainer(c, data, device);
    if (!c.init.empty()) trainer.start_from(load_checkpoint(c.init));
    runs.push_back(train_one(trainer, member_settings, progress,
                             fmt::format("{} member {}", c.optimizer, m + 1)));
    predictions.push_back(trainer.mean_predictions());
  }
  const auto ensemble = evaluate_ensemble(
      predictions, data->test.y,
      data->validation.size() > 0 ? data->validation.y : at::Tensor(), base.ece_bins,
      base.temperature_scaling);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  print_ensemble(std::cout, runs, ensemble);
  std::cout.flush();
  nlohmann::json report = report_to_json("ensemble", runs);
  report.erase("optimizers");
  report["optimizer"] = base.optimizer;
  nlohmann::json member_docs = nlohmann::json::array();
  for (const auto& r : runs) member_docs.push_back(run_to_json(r));
  report["members"] = member_docs;
  report["ensemble"] = ensemble_to_json(ensemble);
  report["seconds"] = seconds;
  write_json(settings.json, report);
  if (!settings.out.empty()) {
    write_json((fs::path(settings.out) / "results.json").string(), report);
  }
  const bool diverged =
      std::any_of(runs.begin(), runs.end(), [](const RunResult& r) { return r.diverged; });
  return diverged && settings.fail_on_divergence ? kExitDiverged : 0;
}

int run_eval(const std::string& checkpoint_path, int test_samples, const std::string& data_dir,
             int ece_bins, const std::vector<int64_t>& classes, const RunSettings& settings) {
  apply_run_settings(settings);
  check(settings.checkpoint_every == 0, "blr eval writes no periodic checkpoints.");
  create_out(settings);
  const auto device = parse_device(settings.device);
  const LoadedRun run = load_run(checkpoint_path, test_samples, data_dir, ece_bins, classes);
  TrainConfig config = run.config;
  if (settings.temperature_scaling) {
    config.temperature_scaling = true;
    check(run.data->validation.size() > 0,
          fmt::format("--temperature-scaling fits its temperature on the validation split, and "
                      "the run of '{}' has none; train with --validation FRACTION.",
                      checkpoint_path));
  }
  Trainer trainer(config, run.data, device);
  trainer.restore(run.checkpoint);
  if (!settings.quiet) {
    std::cerr << fmt::format("blr eval: {} {} after {} epochs; evaluating on {} test examples\n",
                             trainer.result().model_description,
                             run.config.origin.empty() ? "with " + run.config.optimizer
                                                       : "(" + run.config.origin + ")",
                             trainer.epoch(), run.data->test.size());
  }
  ProgressReporter progress(std::cerr, stderr_is_terminal());
  trainer.evaluate(0, settings.quiet ? SampleProgress{} : progress.sample_progress("blr eval"));
  std::vector<RunResult> runs{trainer.result()};
  return finish("eval", runs, settings);
}

int run_laplace(const LaplaceRequest& request, const RunSettings& settings) {
  apply_run_settings(settings);
  check(settings.checkpoint_every == 0, "blr laplace writes no periodic checkpoints.");
  // The posterior and its checkpoint get the current spellings of the request's choices.
  const LaplaceChoices read = read_laplace_choices({{"subset", request.subset},
                                                    {"curvature", request.curvature},
                                                    {"structure", request.structure},
                                                    {"predictive", request.predictive}});
  const LaplacePosteriorOptions& choice = read.options;
  const OptionValues& choices = read.spelled;
  const auto spelled_choice = [&](const char* key) { return read.spelling(key); };
  const bool last_layer = choice.subset == LaplaceSubset::kLastLayer;
  const bool probit = choice.predictive == LaplacePredictive::kProbit;
  check(request.prior_precision == 0 ||
            (request.prior_precision > 0 && std::isfinite(request.prior_precision)),
        fmt::format("The prior precision must be a positive finite number (0: choose it by the "
                    "marginal likelihood); got {}.",
                    request.prior_precision));
  create_out(settings);
  const auto device = parse_device(settings.device);
  const LoadedRun run = load_run(request.checkpoint, request.test_samples, request.data_dir, 0);
  check(find_optimizer(run.config.optimizer).trains,
        fmt::format("The checkpoint '{}' already holds a {} posterior; give the checkpoint of the "
                    "trained run.",
                    request.checkpoint, run.config.optimizer));
  const bool regression = run.data->task == Task::kRegression;
  check(regression || request.noise_std_method == "run",
        "--noise-std-method chooses the noise σ of a regression; '{}' is a classification run.",
        request.checkpoint);
  const bool chosen = !(request.prior_precision > 0);
  const bool gridsearch = chosen && request.prior_precision_method == "gridsearch";
  const bool noise_by_marglik = regression && request.noise_std_method == "marglik";
  check(!(noise_by_marglik && gridsearch),
        "--noise-std-method marglik chooses σ by the marginal likelihood, with δ given or chosen "
        "by it too; it does not combine with --prior-precision-method gridsearch.");
  // Checked before the curvature's passes over the training set, which take minutes.
  check(!gridsearch || run.data->validation.size() > 0,
        fmt::format("--prior-precision-method gridsearch chooses δ on the validation split, and "
                    "the run of '{}' has none; train with --validation FRACTION.",
                    request.checkpoint));
  Trainer trainer(run.config, run.data, device);
  trainer.restore(run.checkpoint);
  LaplaceCurvatureOptions fit_options;
  if (regression) {
    fit_options.likelihood = LaplaceLikelihood::kRegression;
    fit_options.noise_std = trainer.noise_std();
  }
  fit_options.subset = choice.subset;
  fit_options.curvature = choice.curvature;
  fit_options.structure = choice.structure;
  if (!settings.quiet) {
    std::cerr << fmt::format(
        "blr laplace: {} trained with {} for {} epochs; {} {} of {} weights over {} "
        "training examples of '{}'{}; {} predictive\n",
        trainer.result().model_description, run.config.optimizer, trainer.epoch(),
        choice.structure == LaplaceStructure::kKronecker ? "Kronecker-factored" : "diagonal",
        choice.curvature == LaplaceCurvature::kEmpiricalFisher ? "empirical Fisher"
                                                                : "Gauss-Newton",
        last_layer ? "the last layer's" : "all", run.data->train.size(), run.data->name,
        regression ? " (Gaussian likelihood)" : "",
        probit ? (regression ? "linearised Gaussian" : "linearised probit") : "Monte Carlo");
  }
  // The library's pipeline (posthoc_laplace.hpp): curvature, σ, δ, the posterior, log Z.
  PosthocLaplaceRequest pipeline;
  pipeline.curvature = fit_options;
  pipeline.prior_precision = request.prior_precision;
  pipeline.prior_precision_method = request.prior_precision_method;
  pipeline.grid = request.grid;
  pipeline.noise_std_by_marglik = noise_by_marglik;
  pipeline.samples = run.config.test_samples;
  const PosthocLaplaceFit result = fit_posthoc_laplace(
      trainer.model(), run.data->train.x.to(device), run.data->train.y.to(device),
      gridsearch ? run.data->validation.x.to(device) : ::at::Tensor(),
      gridsearch ? run.data->validation.y.to(device) : ::at::Tensor(), pipeline,
      [&](double delta, const LaplaceCurvatureResult& fit) -> LaplacePosterior& {
        if (noise_by_marglik) trainer.set_noise_std(fit.noise_std);
        OptionValues options{{"prior_precision", delta},
                             {"ess", static_cast<double>(fit.examples)}};
        options.insert(options.end(), choices.begin(), choices.end());
        auto posterior = make_laplace_posterior(trainer.model().parameters(), options,
                                                trainer.optimizer_context());
        LaplacePosterior& made = *posterior;
        trainer.replace_optimizer("laplace", options, std::move(posterior));
        return made;
      });
  const LaplaceCurvatureResult& fit = result.fit;
  const double run_noise_std = result.run_noise_std;
  const double delta = result.prior_precision;
  const std::optional<PriorPrecisionSearch>& search = result.search;
  const double log_evidence = result.log_marginal_likelihood;
  const double fit_seconds = result.seconds;
  if (search && search->at_edge())
    std::cerr << fmt::format(
        "blr: warning: the validation NLL is lowest at the {} prior precision of the grid, "
        "{:.6g}; the best δ may lie beyond it, so widen --prior-precision-grid{}.\n",
        delta == search->grid.back() ? "largest" : "smallest", delta,
        delta == search->grid.back() ? " (at a large δ the posterior adds little to the "
                                       "point estimate)"
                                     : "");
  if (!settings.quiet) {
    std::cerr << fmt::format(
        "blr laplace: {} weights in the posterior, prior precision {:.6g} ({}), log marginal "
        "likelihood {:.6g}, fitted in {:.2f} s\n",
        fit.subset_size, delta,
        !chosen      ? "given"
        : gridsearch ? fmt::format("the lowest validation NLL, {:.6g}, of {} values in [{:.3g}, "
                                   "{:.3g}]",
                                   search->best_nll, search->grid.size(), request.grid.min,
                                   request.grid.max)
                     : "maximises the marginal likelihood",
        log_evidence, fit_seconds);
    if (regression) {
      std::cerr << fmt::format(
          "blr laplace: observation noise σ {:.6g} on the standardised scale ({}{})\n",
          trainer.noise_std(),
          noise_by_marglik ? "chosen by the marginal likelihood; the run's was "
                           : "the training run's, --noise-std-method run",
          noise_by_marglik ? fmt::format("{:.6g}", run_noise_std) : std::string());
    }
  }
  if (!request.save.empty()) {
    trainer.save(request.save);
    if (!settings.quiet) std::cerr << fmt::format("blr laplace: posterior saved to {}\n", request.save);
  }
  trainer.evaluate();
  std::vector<RunResult> runs{trainer.result()};
  nlohmann::json extra = {
      {"laplace",
       {{"source_optimizer", run.config.optimizer},
        {"subset", spelled_choice("subset")},
        {"curvature", spelled_choice("curvature")},
        {"structure", spelled_choice("structure")},
        {"predictive", spelled_choice("predictive")},
        {"weights", fit.subset_size},
        {"examples", fit.examples},
        {"prior_precision", delta},
        {"prior_precision_chosen", chosen},
        {"prior_precision_method", !chosen ? "given" : request.prior_precision_method},
        {"log_marginal_likelihood", log_evidence},
        {"train_nll_sum", fit.nll_sum},
        {"likelihood", regression ? "regression" : "classification"},
        {"fit_seconds", fit_seconds},
        {"posterior", request.save}}}};
  if (regression) {
    extra["laplace"]["noise_std"] = trainer.noise_std();
    extra["laplace"]["noise_std_method"] = request.noise_std_method;
    extra["laplace"]["run_noise_std"] = run_noise_std;
  }
  if (search) {
    nlohmann::json grid = nlohmann::json::array();
    for (size_t k = 0; k < search->grid.size(); ++k)
      grid.push_back({{"prior_precision", search->grid[k]}, {"validation_nll", search->nll[k]}});
    extra["laplace"]["prior_precision_grid"] = grid;
    extra["laplace"]["validation_nll"] = search->best_nll;
    extra["laplace"]["prior_precision_at_grid_edge"] = search->at_edge();
  }
  return finish("laplace", runs, settings, extra);
}

}  // namespace blr::torch
