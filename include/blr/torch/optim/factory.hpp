// Building optimizers by name from string-keyed options (the CLI's `--opt key=value` view).
//
// Names: "ivon", "vogn", "ogn", "vadam" (variational, blr::torch) and "adamw", "sgd"
// (::torch::optim). Keys use dashes (hess-init); booleans are 0/1.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace blr::torch {

struct OptimizerOptionSpec {
  std::string key;
  double default_value;
  std::string help;
};

/// The optimizer names make_optimizer() knows, in display order.
std::vector<std::string> optimizer_names();

/// Option keys of an optimizer ("ivon", "vogn", "ogn", "vadam", "adamw", "sgd"), e.g. for IVON:
/// lr, ess, hess-init, beta1, beta2, weight-decay, mc-samples, clip-radius, debias (0/1),
/// rescale-lr (0/1), hess-approx (0 = price, 1 = gradsq); sgd: lr, momentum, weight-decay,
/// nesterov; adamw: lr, beta1, beta2, eps, weight-decay. Throws blr::Error for an unknown name.
/// An `ess` default of 0 stands for the training-set size.
std::vector<OptimizerOptionSpec> optimizer_options(const std::string& name);

/// Builds the optimizer; `options` keys must come from optimizer_options(name) (else blr::Error
/// naming the key and listing the valid ones); missing keys take defaults; `dataset_size` is the
/// default ess/N. Values are validated with sentence errors.
std::unique_ptr<::torch::optim::Optimizer> make_optimizer(
    const std::string& name, std::vector<::at::Tensor> parameters,
    const std::map<std::string, double>& options, int64_t dataset_size);

/// Sets the learning rate of every param group (schedules).
void set_learning_rate(::torch::optim::Optimizer& optimizer, double lr);
/// The learning rate of the first param group.
double learning_rate(const ::torch::optim::Optimizer& optimizer);
/// Number of MC training samples the optimizer wants per step (1 for non-variational ones).
int training_samples(const ::torch::optim::Optimizer& optimizer);

}  // namespace blr::torch
