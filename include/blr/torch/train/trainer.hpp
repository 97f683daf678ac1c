// The training loop of `blr train` / `blr compare`: minibatch steps with a variational or a
// point-estimate optimizer, a learning-rate schedule over steps, per-epoch evaluation at the mean,
// checkpoints, and a final evaluation (at the mean and with the posterior predictive).
//
// One step with a VariationalOptimizer v (the contract of blr/torch/optim/variational.hpp):
//   for s = 1..training_samples(v):
//     { SampledParameters sample(v, true); zero_grad; loss = ℓ̄(model(x), y) (train/likelihood.hpp);
//       if v.needs_squared_gradients(): v.add_squared_gradients(
//           backward_with_squared_gradients(loss, named parameters, M)) else backward }
//   v.step()
// and with a plain optimizer: zero_grad; loss; backward; step.
//
// Regression (a Dataset with task regression, targets standardised by the loader): the loss is
// the Gaussian negative log-likelihood with observation noise σ on the standardised scale
// (train/likelihood.hpp). σ is --noise-std when given; otherwise (the default) it is fitted: 1 (the
// targets' standard deviation) for the first epoch, then after every epoch its maximum-likelihood
// value given the mean prediction, σ² = mean squared residual at μ on the validation split if the
// run has one (held out, so an over-fitting network does not shrink it) or else on the training
// split, floored at kMinNoiseStd. A fixed σ that is too small makes every predictive interval too
// narrow and one too large makes them too wide; the fitted σ makes the intervals at the mean match
// the residuals, which the coverage metrics check (metrics/regression.hpp). σ is stored in
// checkpoints, so a resumed run is bitwise the uninterrupted one. Metrics are in the targets'
// original units. The predictive is the K-component Gaussian mixture (exact, not moment-matched).
//
// Divergence: a loss that turns NaN or infinite stops training with an error naming the step. A
// loss that stays finite but rises far above where it started is flagged: after each epoch, when
// the epoch's mean training loss or its test NLL exceeds divergence_factor × the loss of the run's
// first step (default 10: for 10 classes, 23 nats against a start near ln 10 = 2.3), the run is
// marked `diverged` with a sentence saying when and by how much; training goes on.
//
// Reproducibility: LibTorch's generator is seeded with the run seed before the model is built, the
// minibatch order of epoch e depends only on (seed, e), and a checkpoint holds every other piece
// of state, so on the CPU with a fixed thread count a resumed run is bitwise the uninterrupted one.
#pragma once

#include <ATen/Tensor.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json_fwd.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blr/torch/checkpoint/checkpoint.hpp"
#include "blr/torch/data/dataset.hpp"
#include "blr/torch/distributed/data_parallel.hpp"
#include "blr/torch/predictive/ensemble.hpp"
#include "blr/torch/metrics/metrics.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "blr/torch/nn/classifier.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/posterior/diagnostics.hpp"
#include "blr/torch/metrics/regression.hpp"
#include "blr/torch/metrics/temperature_scaling.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch {

/// What one epoch did.
struct EpochRecord {
  int64_t epoch = 0;           ///< 1-based
  double seconds = 0.0;        ///< wall time of the training steps of this epoch
  double train_loss = 0.0;     ///< mean minibatch loss (at the sampled parameters, if variational)
  double learning_rate = 0.0;  ///< at the last step of the epoch
  double test_accuracy = 0.0;  ///< at the mean (NaN for regression)
  double test_nll = 0.0;       ///< at the mean (regression: in the targets' units)
  double test_rmse = std::numeric_limits<double>::quiet_NaN();  ///< regression, at the mean
  double validation_accuracy = std::numeric_limits<double>::quiet_NaN();
  double validation_nll = std::numeric_limits<double>::quiet_NaN();
  double validation_rmse = std::numeric_limits<double>::quiet_NaN();  ///< regression
  double noise_std = std::numeric_limits<double>::quiet_NaN();  ///< regression: σ (standardised)
  /// --grad-clip: the share of this epoch's gradients (samples × steps) that were clipped.
  double clipped_share = std::numeric_limits<double>::quiet_NaN();
  /// What the posterior has learned (mean-field Gaussian optimizers; posterior/diagnostics.hpp).
  std::optional<PosteriorDiagnostics> posterior;
  /// The run's warning that its posterior has not moved, at the epoch it was first given.
  std::string warning;
};

/// One epoch as JSON (checkpoint metadata and run reports) and back.
nlohmann::json epoch_to_json(const EpochRecord& record);
EpochRecord epoch_from_json(const nlohmann::json& j);

/// The final evaluation on the test set (and the shifted set, for OOD detection).
struct Evaluation {
  Task task = Task::kClassification;
  /// Regression: the metrics of the test (and validation) split at the mean and with the
  /// predictive, and σ per output in the targets' units; the classification fields stay empty.
  RegressionMetrics regression_mean, regression_predictive;
  RegressionMetrics validation_regression_mean, validation_regression_predictive;
  std::vector<double> noise_std;
  ClassificationMetrics mean;         ///< prediction at the mean μ (the point estimate)
  ClassificationMetrics predictive;   ///< posterior predictive (= mean for point estimates)
  bool has_predictive = false;        ///< false for point-estimate optimizers
  int samples = 0;                    ///< K of the predictive (0 without one)
  /// OOD detection by predictive entropy (AUROC, AUPR, FPR95: metrics/uncertainty.hpp), test vs
  /// the OOD split (the file's x_ood, or Fashion-MNIST's inverted test set), at the mean; NaN
  /// when the data set has no OOD split.
  OodMetrics ood_mean;
  OodMetrics ood_predictive;  ///< same with the predictive
  std::string ood_shift;      ///< Dataset::ood_shift ("inverted", "x_ood", "" without one)
  std::vector<ReliabilityBin> reliability_mean, reliability_predictive;
  double posterior_std_mean = std::numeric_limits<double>::quiet_NaN();  ///< mean σ over θ
  /// The same two predictions on the validation split (has_validation: the run has one), so that
  /// hyper-parameters can be chosen by the predictive without looking at the test set.
  bool has_validation = false;
  ClassificationMetrics validation_mean, validation_predictive;
  /// Temperature scaling (config.temperature_scaling, temperature_scaling.hpp): T fitted on the
  /// validation split for the prediction at the mean and for the predictive, and the test
  /// metrics of each after scaling.
  bool temperature_scaled = false;
  TemperatureFit temperature_mean, temperature_predictive;
  ClassificationMetrics scaled_mean, scaled_predictive;
  OodMetrics ood_scaled_mean, ood_scaled_predictive;
  double seconds = 0.0;
};

/// Everything a run reports.
struct RunResult {
  TrainConfig config;
  std::string model_description;
  OptionValues options;  ///< effective optimizer options (given, from the run, or default)
  int64_t train_size = 0;
  std::vector<EpochRecord> history;
  double step_ms = 0.0;  ///< mean wall time of one training step (all MC samples + update)
  int64_t steps = 0;
  Evaluation test;
  std::string checkpoint;  ///< final checkpoint path, if written
  double initial_loss = std::numeric_limits<double>::quiet_NaN();  ///< loss of the first step
  /// FNV-1a 64-bit digest (hex) of the parameters' names, shapes, dtypes and bytes at the final
  /// evaluation: equal digests mean bitwise-equal parameters (resumed vs uninterrupted runs).
  std::string parameter_digest;
  bool diverged = false;  ///< the loss rose above divergence_factor × initial_loss
  std::string divergence;  ///< when diverged: which quantity, at which epoch, against what
};

/// The smallest fitted observation noise σ (standardised scale): 0.1 % of the targets' sd.
inline constexpr double kMinNoiseStd = 1e-3;

/// The default of TrainHooks::divergence_factor (`--divergence-factor`).
inline constexpr double kDefaultDivergenceFactor = 10.0;

/// Callbacks and output settings of Trainer::train().
struct TrainHooks {
  /// After each step: epoch (1-based), step within the epoch (1-based), steps per epoch, loss.
  std::function<void(int64_t, int64_t, int64_t, double)> on_step;
  std::function<void(const EpochRecord&)> on_epoch;
  int64_t checkpoint_every = 0;  ///< > 0: a checkpoint every this many epochs
  std::string checkpoint_dir;    ///< where checkpoints go (needed when checkpoint_every > 0)
  /// Stop after this epoch (for tests: simulate an interruption); 0 = run to the end.
  int64_t stop_after_epoch = 0;
  /// A run is flagged as diverged when a loss exceeds this multiple of its first step's loss.
  double divergence_factor = kDefaultDivergenceFactor;
};

class Trainer {
 public:
  /// Builds the model (LibTorch's generator seeded with config.seed; its input and output sizes
  /// from the data set) or loads config.model_file's TorchScript module (from config.model_archive
  /// when set), checks its output shape on two training examples, and builds the optimizer.
  Trainer(TrainConfig config, std::shared_ptr<const Dataset> data,
          ::at::Device device = ::at::kCPU);
  ~Trainer();

  /// Continues from a checkpoint of this configuration (epochs may be more than it has finished).
  void restore(const Checkpoint& checkpoint);

  /// Starts from the model parameters of another run's checkpoint (`--init`, fine-tuning): same
  /// model description required; the optimizer is built anew over them, epoch 0.
  void start_from(const Checkpoint& checkpoint);

  /// For an optimizer that reads per-example squared gradients or Kronecker factors (VOGN, OGN,
  /// kfac): runs that engine once on two training examples, so that a model it cannot handle is
  /// refused now, in the engine's sentence naming the layer, rather than at the first step.
  /// A training-mode forward pass at the mean: it may draw random numbers (dropout) and moves
  /// batch-norm statistics, so it is meant for a throwaway trainer (`blr compare` checks every
  /// optimizer before it trains any).
  void check_per_example_support();

  /// Trains from the current epoch to config.epochs.
  void train(const TrainHooks& hooks = {});

  /// Test-set evaluation at the mean and, for variational optimizers, with `samples` posterior
  /// samples (0: config.test_samples).
  Evaluation evaluate(int samples = 0, const SampleProgress& progress = {});

  /// Log-probabilities at the mean on the test, shifted and validation splits (classification;
  /// undefined for a split the data set lacks): what an ensemble averages (ensemble.hpp).
  MemberPredictions mean_predictions();

  /// Replaces the optimizer by a new one named `optimizer` with the given options over the same
  /// model parameters (as they are now), keeping the epoch and the history: how `blr laplace`
  /// turns a trained run into a run whose "optimizer" is the fitted posterior.
  /// `origin` (TrainConfig::origin) says where the parameters came from when the new optimizer
  /// did not train them (blr merge).
  void replace_optimizer(const std::string& optimizer, const OptionValues& options,
                         const std::string& origin = "");
  /// The same with the optimizer already built by the caller (named `optimizer`, from `options`
  /// and optimizer_context(), over model().parameters()): the post-hoc Laplace keeps its type.
  void replace_optimizer(const std::string& optimizer, const OptionValues& options,
                         std::unique_ptr<::torch::optim::Optimizer> made,
                         const std::string& origin = "");
  /// The registry's context for this run's optimizers: ess from the likelihood terms, the seed,
  /// the batch size.
  OptimizerContext optimizer_context() const;
  /// Trains as one rank of a data-parallel run (blr/torch/distributed/data_parallel.hpp): this
  /// rank's share of each minibatch, all-reduced updates, evaluation and checkpoints on rank 0.
  void set_data_parallel(std::shared_ptr<distributed::DataParallel> parallel);
  /// Writes a checkpoint of the current state.
  void save(const std::string& path) const;

  /// The metadata stored in checkpoints (config, epoch, history, timing, and the data set's name,
  /// task, outputs and loader statistics under "dataset").
  nlohmann::json checkpoint_meta() const;

  /// The model (any LibTorch model interface: forward, parameters, train/eval).
  const Model& model() const { return model_; }
  /// A 64-bit fingerprint (FNV-1a, hex) of the parameters' names, types, shapes and values now.
  std::string parameter_digest() const;
  ::torch::optim::Optimizer& optimizer() { return *optimizer_; }
  const TrainConfig& config() const { return config_; }
  const Dataset& data() const { return *data_; }
  int64_t epoch() const { return epoch_; }
  /// Regression: the noise σ on the standardised scale (fitted, or --noise-std).
  double noise_std() const { return noise_std_; }
  /// Regression: sets σ (standardised scale; > 0), e.g. to the one a Laplace fit chose. Saved with
  /// the run's checkpoints and used by every evaluation after.
  void set_noise_std(double noise_std);
  RunResult& result() { return result_; }
  const RunResult& result() const { return result_; }

 private:
  double train_step(const ::at::Tensor& x, const ::at::Tensor& y);
  ::at::Tensor loss_of(const ::at::Tensor& outputs, const ::at::Tensor& y) const;
  void check_model_output() const;
  void refit_noise();
  void evaluate_regression(Evaluation& ev, int samples, const SampleProgress& progress);
  /// Regression metrics of standardised means (K×N×… when sampled) against standardised targets,
  /// in the targets' original units.
  RegressionMetrics regression_score(const ::at::Tensor& means, const ::at::Tensor& y,
                                     bool sampled) const;
  /// The training targets' mean and standard deviation per output (D each; 0 and 1 when the
  /// targets were not standardised): the standardised scale back to the targets' units.
  std::pair<::at::Tensor, ::at::Tensor> target_scale() const;
  /// The same for a linearised predictive N(f, v + σ²) (f, v standardised, N×D).
  RegressionMetrics regression_score(const std::pair<::at::Tensor, ::at::Tensor>& linearised,
                                     const ::at::Tensor& y) const;
  void check_divergence(const EpochRecord& record, double factor);
  /// --grad-clip: scales every gradient so that their global L2 norm is at most grad_clip.
  void clip_gradients();
  /// The posterior's diagnostics after an epoch, and the run's warning the first time it applies.
  void diagnose_posterior(EpochRecord& record);

  TrainConfig config_;
  std::shared_ptr<const Dataset> data_;
  ::at::Device device_;
  std::shared_ptr<Classifier> classifier_;  // blr's built-in model (null for --model-file)
  Model model_;
  std::vector<std::pair<std::string, ::at::Tensor>> named_parameters_;  // for VOGN/OGN
  std::unique_ptr<::torch::optim::Optimizer> optimizer_;
  ::at::Tensor train_x_, train_y_;  // on device_
  int64_t epoch_ = 0;               // completed epochs
  int64_t global_step_ = 0;
  double base_lr_ = 0.0;
  double step_seconds_ = 0.0;
  double noise_std_ = 1.0;  // regression: σ on the standardised scale
  int64_t clipped_steps_ = 0;  // gradients clipped in the current epoch
  int64_t gradients_ = 0;      // gradients computed in the current epoch (clip share)
  RunResult result_;
  std::shared_ptr<distributed::DataParallel> parallel_;  // null: one process
  distributed::DataParallel::Share share_;               // this rank's share of the current step
};

}  // namespace blr::torch
