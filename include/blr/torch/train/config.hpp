// The configuration of a training run: data, model, optimizer and its options, epochs, batch
// size, learning-rate schedule, seed and evaluation settings. It is what a checkpoint stores and
// what `blr train`, `blr compare` and `blr eval` build from their flags.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/stage/schedule.hpp"
#include "blr/torch/data/fashion_mnist.hpp"
#include "blr/torch/nn/classifier.hpp"

namespace blr::torch {

/// The name of the built-in data set (the default of TrainConfig::data).
inline constexpr const char* kFashionMnist = "fashion-mnist";

/// What TrainConfig::data names: the built-in set, a text corpus (fortunes, text:PATH;
/// train/load_data.hpp), a torch.save file (.pt) or a CSV table (.csv).
enum class DataFormat { kFashionMnist, kText, kTensorFile, kCsv };
/// The format of a --data value; a blr::Error naming the accepted forms otherwise.
DataFormat data_format(const std::string& data);

struct TrainConfig {
  std::string data = kFashionMnist;  ///< fashion-mnist, fortunes, text:PATH, FILE.pt or FILE.csv
  FashionMnistOptions data_options;  ///< directory, train/test limits, validation split
  std::string task;       ///< "" (the data's own; required for CSV), classification, regression
  std::string label;      ///< CSV: the response column ("" = the last column)
  std::string test_data;  ///< CSV: a test table with the same columns ("" = held out)
  std::vector<std::string> categorical;  ///< CSV: feature columns to one-hot code
  std::string missing = "error";         ///< CSV: error | drop (rows with an empty or NA cell)
  /// Classification: keep only the examples of these classes (labels keep their numbers, the
  /// model its outputs) in every split — one task of a class split (merging, docs/posterior.md).
  std::vector<int64_t> classes;
  /// A checkpoint whose model parameters start the training (fine-tuning); the optimizer starts
  /// fresh. Used by train/compare only (a resumed or evaluated run restores its own state).
  std::string init;
  /// Regression: the observation noise σ on the standardised scale; 0 = fitted by maximum
  /// likelihood after every epoch (train/trainer.hpp).
  double noise_std = 0.0;
  ModelSpec model;  ///< the built-in model (when model_file is empty)
  /// A TorchScript module to train instead of a built-in model (--model-file; nn/script_file.hpp):
  /// the path as given, and the archive's bytes once read (from the file, or from a checkpoint
  /// that embeds them, so that a resumed or evaluated run does not need the file). Only the path
  /// is part of the JSON; checkpoints store the bytes themselves.
  std::string model_file;
  std::shared_ptr<const std::string> model_archive;
  std::string optimizer = "ivon";
  OptionValues optimizer_options;  ///< only the options given (keys of its table); others default
  int64_t epochs = 10;
  int64_t batch_size = 128;
  /// Each minibatch is processed in this many parts whose gradients add up inside each sample
  /// (gradient accumulation: the step is the whole minibatch's, the memory a part's).
  int64_t micro_batches = 1;
  /// float32 | bfloat16 | float16 | autocast-bfloat16 (nn/precision.hpp).
  std::string precision = "float32";
  std::string schedule = "constant";  ///< constant | cosine | warmup-cosine
  /// warmup-cosine: linear warm-up from lr/5 over these epochs (a fraction of an epoch allowed:
  /// recipes give the warm-up as a share of the run, train/recipe.hpp).
  double warmup_epochs = 0.0;
  /// Clip the global L2 norm of each sample's minibatch gradient to this value before the
  /// optimizer reads it (torch.nn.utils.clip_grad_norm_; 0 = off). Data parallel: each rank's.
  double grad_clip = 0.0;
  /// The recipe the run's settings came from (train/recipe.hpp), for the record; "" = none.
  std::string recipe;
  /// Where the parameters came from when `optimizer` did not train them: `blr merge` writes
  /// "uncertainty merge of 2 models into a base trained with ivon" (its optimizer entry is then a
  /// fresh sgd); "" for a trained run. Reports show such a model as "merged".
  std::string origin;
  uint64_t seed = 0;
  int test_samples = 64;  ///< posterior-predictive samples (variational optimizers)
  /// Classification: also report the test metrics after temperature scaling, with T fitted on
  /// the validation split for each prediction (temperature_scaling.hpp); needs a validation split.
  bool temperature_scaling = false;
  int ece_bins = 15;

  /// Throws blr::Error with a sentence naming the offending option.
  void validate() const;
  /// validate(), and the optimizer trains (a post-hoc posterior such as laplace is refused).
  void validate_for_training() const;
  /// The learning-rate schedule for a base rate and a number of minibatches per epoch; steps are
  /// minibatches (the cosine decays to 0 at the last step).
  Schedule learning_rate_schedule(double base_lr, int64_t steps_per_epoch) const;

  nlohmann::json to_json() const;
  static TrainConfig from_json(const nlohmann::json& j);
};

/// Given options of several optimizers (by optimizer name), as `blr compare` and `blr bench` take
/// them from --<optimizer>-<option> flags.
using OptimizerOptions = std::map<std::string, OptionValues>;

}  // namespace blr::torch
