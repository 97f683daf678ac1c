// The work behind `blr train`, `blr compare` and `blr eval`, independent of the flag parser
// (apps/blr/torch/cmd_*.cpp wire the flags; apps/blr/torch/cli.hpp holds the shared
// flag definitions). Each returns the process exit status; user errors throw blr::Error.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blr/torch/checkpoint/checkpoint.hpp"
#include "blr/torch/posterior/laplace_prior_search.hpp"
#include "blr/torch/train/config.hpp"
#include "blr/torch/train/trainer.hpp"

namespace blr::torch {

/// Settings that do not change what is learned.
struct RunSettings {
  int threads = 0;             ///< LibTorch intra-op threads; 0 = hardware concurrency
  std::string device = "cpu";  ///< "cpu", "cuda", "cuda:1", ...
  std::string json;            ///< --json FILE ("-" = stdout)
  std::string out;             ///< --out DIR: plots and checkpoints
  int64_t checkpoint_every = 0;
  bool quiet = false;  ///< no progress output
  /// After each epoch, a line with the posterior's diagnostics (posterior/diagnostics.hpp).
  bool verbose = false;
  /// blr eval: report temperature-scaled predictions too (the checkpoint's run needs a
  /// validation split; train and compare set it in the configuration).
  bool temperature_scaling = false;
  double divergence_factor = kDefaultDivergenceFactor;  ///< see trainer.hpp
  bool fail_on_divergence = false;  ///< exit status 4 when a run diverged
  /// blr train: > 0, the training set's sensitivities after every this many epochs
  /// (sensitivity_report.hpp).
  int64_t sensitivity_every = 0;
  /// Data parallel (blr launch, torchrun): seconds a rendezvous or collective may wait for the
  /// other ranks, and how the ranks split a step (data | samples; distributed/data_parallel.hpp).
  double dist_timeout = 300.0;
  std::string dist_split = "data";
};

/// The LibTorch thread count for a request: 0 means all cores; more than the machine's cores is
/// clamped to them with a warning on stderr (oversubscribed threads only wait on each other: 1024
/// threads on 2 cores ran 18 times slower).
int effective_threads(int requested);

/// Sets the thread count and checks the device; returns the device string normalised.
void apply_run_settings(const RunSettings& settings);

/// `blr train`: trains one optimizer (or resumes `resume_path`, until `resume_epochs` epochs in
/// all when > 0, else the checkpoint's), prints the table, writes JSON, plots and checkpoints.
/// `resume_path` may be a directory of checkpoints (e.g. OUT/checkpoints): the newest valid one is
/// used, and every file skipped on the way is named on stderr. With `auto_resume` (--auto-resume,
/// what `blr launch --max-restarts` adds when it restarts the ranks), the run continues the newest
/// valid checkpoint in OUT/checkpoints when there is one (newest_checkpoint_if_any), which must
/// have been written by a run of this configuration, epoch count included (else a blr::Error);
/// with none it starts as it would without the flag.
int run_train(const TrainConfig& config, const RunSettings& settings,
              const std::string& resume_path = "", int64_t resume_epochs = 0,
              bool auto_resume = false);

/// The newest checkpoint of `directory` that loads and verifies (newest_valid_checkpoint: by the
/// epoch in its metadata, ties the newer file; truncated, half-written or corrupt files are
/// skipped and named in `skipped`), or nothing when the directory does not exist or holds no
/// valid checkpoint. Temporaries left by dead writers are removed first.
std::optional<Checkpoint> newest_checkpoint_if_any(const std::string& directory,
                                                   std::vector<std::string>* skipped);

/// `blr compare`: trains each optimizer of `optimizers` with the shared configuration `base` and
/// its own options, then prints one table; with `seeds` > 1, each optimizer once per seed
/// base.seed, base.seed + 1, … and a table of means ± standard deviations.
int run_compare(const TrainConfig& base, const std::vector<std::string>& optimizers,
                const OptimizerOptions& options, const RunSettings& settings, int seeds = 1);

/// `blr ensemble`: trains `members` runs of `base` (seeds base.seed, base.seed + 1, …; one data
/// split), scores the average of their predictive distributions (ensemble.hpp), prints the
/// members and the ensemble, writes JSON.
int run_ensemble(const TrainConfig& base, int members, const RunSettings& settings);

/// The device named by --device ("cpu", "cuda", "cuda:N"); a blr::Error when unavailable.
at::Device parse_device(const std::string& text);

/// A checkpoint of blr train with its configuration and the data it was trained on (the same
/// training data, checked by the loader's statistics), for eval, laplace and merge.
struct LoadedRun {
  Checkpoint checkpoint;
  TrainConfig config;
  std::shared_ptr<Dataset> data;
};
/// Loads a checkpoint and its data; `test_samples`, `ece_bins` > 0 and a non-empty `data_dir`
/// override the checkpoint's; non-empty `classes` keep only those classes' test and validation
/// examples (the training set stays the checkpoint's).
LoadedRun load_run(const std::string& checkpoint_path, int test_samples,
                   const std::string& data_dir, int ece_bins,
                   const std::vector<int64_t>& classes = {});

/// `blr laplace`: what to fit.
struct LaplaceRequest {
  std::string checkpoint;  ///< a checkpoint of a trained run (blr train / compare)
  std::string subset = "all";         ///< all | last-layer
  std::string curvature = "ggn";      ///< ggn | ef
  std::string structure = "diag";     ///< diag | kron
  std::string predictive = "monte-carlo";  ///< monte-carlo | probit
  double prior_precision = 0.0;       ///< δ; 0: chosen by `prior_precision_method`
  std::string prior_precision_method = "marglik";  ///< marglik | gridsearch (validation NLL)
  PriorPrecisionGrid grid;            ///< gridsearch's grid
  /// Regression: the noise σ of the likelihood: run (the σ the training run fitted or was given)
  /// or marglik (chosen with δ by the Laplace marginal likelihood).
  std::string noise_std_method = "run";
  std::string save;                   ///< where the posterior checkpoint goes ("" = not saved)
  int test_samples = 0;               ///< K of the predictive (0: the checkpoint's)
  std::string data_dir;
};
/// `blr laplace`: fits the diagonal or Kronecker-factored Laplace posterior of a trained run (blr/torch/posterior/laplace_fit.hpp),
/// saves it as a checkpoint that `blr eval` scores, and evaluates it like `blr eval`.
int run_laplace(const LaplaceRequest& request, const RunSettings& settings);
/// `blr eval`: metrics at the mean and with the posterior predictive from a checkpoint.
/// `test_samples` ≤ 0 and `data_dir` empty keep the checkpoint's values; `ece_bins` ≤ 0 too;
/// non-empty `classes` scores only those classes' examples.
int run_eval(const std::string& checkpoint_path, int test_samples, const std::string& data_dir,
             int ece_bins, const std::vector<int64_t>& classes, const RunSettings& settings);

}  // namespace blr::torch
