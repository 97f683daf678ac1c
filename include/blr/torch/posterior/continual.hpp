// Continual learning on Fashion-MNIST: tasks learnt one after another, with the posterior of task t
// as the prior of task t + 1 (Bayes' rule applied task by task, as in variational continual
// learning, Nguyen et al., ICLR 2018; Khan & Rue 2023 on the BLR's posteriors), against
// fine-tuning and against retraining on all the data seen so far.
//
// Tasks (each a training and a test set; FashionMnistOptions' limits apply per task):
//   split     class pairs {0,1}, {2,3}, …, {8,9} (up to 5 tasks), multi-head: each task predicts
//             between its own two classes (its two output units; the loss and the prediction see
//             only those), the task-incremental setting of VCL and of IVON's continual experiments;
//   permuted  the whole 10-class problem with a fixed pixel permutation per task (task 1 the
//             identity, task t > 1 seeded by (seed, t)), one shared 10-way head.
// Methods:
//   IVON, prior "posterior": one optimizer through all tasks; after task t,
//             MeanFieldOptimizer::set_prior_from_posterior() makes q_t = N(μ_t, 1/(λP_t)) the
//             prior N(m₀, 1/(λp₀)) of task t + 1 (λ = ess = a task's training-set size; the
//             tasks have equal sizes);
//   IVON, prior "initial", or AdamW: fine-tuning, one optimizer and its state through all tasks
//             with the options' prior (weight decay) throughout;
//   retrain:  after task t, a fresh model and optimizer trained for the same epochs on the union
//             of tasks 1…t (each example with its task's head).
// Reported after each task t: the test accuracy a[t][j] at the mean on every task j ≤ t, the
// average accuracy A_t = mean_j a[t][j] and the forgetting F_t = mean_{j<t} (max_{l<t} a[l][j] −
// a[t][j]) (Chaudhry et al., ECCV 2018; F_1 = 0). The learning rate is constant; minibatch order of
// epoch e of task t depends only on (seed, t, e); the model is initialised from the seed. The model
// is a built-in classifier (`model`) or the user's TorchScript module (`model_file`,
// nn/script_file.hpp; every fresh model starts from the file's weights, and its forward must return
// 10 logits per image).
#pragma once

#include <ATen/Device.h>
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/torch/data/fashion_mnist.hpp"
#include "blr/torch/nn/classifier.hpp"

namespace blr::torch {

struct ContinualConfig {
  std::string tasks = "split";      ///< split | permuted
  int64_t task_count = 5;           ///< split: 1…5; permuted: ≥ 1
  std::string optimizer = "ivon";   ///< ivon | adamw
  OptionValues optimizer_options;   ///< only the options given; others default
  std::string prior;                ///< ivon: posterior (default) | initial (fine-tuning)
  bool retrain = false;             ///< retrain on all tasks so far after each task
  ModelSpec model;
  std::string model_file;           ///< a TorchScript module to train instead of `model`
  FashionMnistOptions data_options;  ///< directory; train_limit and test_limit per task
  int64_t epochs = 1;                ///< per task
  int64_t batch_size = 128;
  uint64_t seed = 0;

  /// Throws blr::Error with a sentence naming the offending option.
  void validate() const;
  /// True for IVON without --retrain unless prior is "initial".
  bool posterior_as_prior() const;
  /// "ivon (posterior as the next prior)", "adamw (fine-tuning)", "ivon (retraining on all tasks so far)".
  std::string method() const;
  nlohmann::json to_json() const;
};

struct ContinualResult {
  ContinualConfig config;
  std::string model_description;
  std::vector<std::string> task_names;         ///< "classes 0/1", "permutation 2", …
  std::vector<int64_t> train_sizes, test_sizes;  ///< per task
  std::vector<std::vector<double>> accuracy;   ///< accuracy[t][j], j ≤ t
  std::vector<double> average_accuracy;        ///< A_t
  std::vector<double> forgetting;              ///< F_t
  double seconds = 0.0;                        ///< training and evaluation, all tasks

  nlohmann::json to_json() const;
};

/// Runs the tasks of `config` on `device`; `progress` (may be empty) gets one line per epoch.
ContinualResult run_continual(const ContinualConfig& config, ::at::Device device,
                              const std::function<void(const std::string&)>& progress = {});

/// A_t and F_t of an accuracy matrix (rows t, entries j ≤ t), as defined above.
void continual_summary(const std::vector<std::vector<double>>& accuracy,
                       std::vector<double>& average_accuracy, std::vector<double>& forgetting);

}  // namespace blr::torch
