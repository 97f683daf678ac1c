// Optimizers by name: every optimizer registers itself, with its option table, in its own source
// file by one line,
//
//   BLR_REGISTER_OPTIMIZER(Ivon, "ivon", "IVON, improved variational online Newton ...");
//
// and everything that lists or builds optimizers — the CLI's --optimizer and its typed
// --<optimizer>-<option> flags, the JSON of runs and checkpoints, `blr bench`, the docs, the
// Python package — reads this registry. Keys are the option tables' (snake_case).
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/torch/optim/gaussian_posterior.hpp"

namespace torch::optim {
class AdamW;
}  // namespace torch::optim

namespace blr::torch {

/// Values the registry supplies for options the user did not give whose table row says where
/// its default comes from (DefaultFrom): the training-set size (ess) and the run's seed.
struct OptimizerContext {
  int64_t training_set_size = 0;  ///< 0: unknown (then ess must be given)
  uint64_t seed = 0;
  int64_t batch_size = 0;  ///< the run's minibatch size; 0: unknown (the initialiser stands)
};

using OptimizerFactory = std::function<std::unique_ptr<::torch::optim::Optimizer>(
    std::vector<::torch::optim::OptimizerParamGroup>, const OptionValues&, const OptimizerContext&)>;

/// Typed access to a param group's options object by the keys of the option table (bindings:
/// Python param groups are dictionaries that schedulers edit between steps).
struct GroupOptionAccess {
  /// A new options object of the optimizer's type: the table's defaults, then the context's
  /// (DefaultFrom), then `given`, each value converted and checked.
  std::function<std::unique_ptr<::torch::optim::OptimizerOptions>(const OptionValues& given,
                                                                   const OptimizerContext&)>
      make;
  /// Every option of a group's options object, in table order.
  std::function<OptionValues(const ::torch::optim::OptimizerOptions&)> read;
  explicit operator bool() const { return make && read; }
};

struct OptimizerEntry {
  std::string name;       ///< "ivon"
  std::string summary;    ///< one line for --help and the docs
  bool variational = false;  ///< samples weights (a posterior), or a point estimate
  const OptionSchema* options = nullptr;
  OptimizerFactory make;
  /// False for a posterior fitted after training (Laplace): it is built and saved by its own
  /// command, scored by `blr eval`, and refused by train/compare/bench.
  bool trains = true;
  /// Empty for the LibTorch baselines (AdamW, SGD), whose options are LibTorch's own.
  GroupOptionAccess group_options = {};
  /// Its optimizer has the GaussianPosterior capability (gaussian_posterior.hpp): set from the
  /// type by the registration macros, by hand for a raw entry.
  bool gaussian_posterior = false;
};

/// Adds an optimizer (called by the registration lines); a second one with the same name is an
/// error.
bool register_optimizer(OptimizerEntry entry);

/// Every registered optimizer, in display order: the variational ones, then the point
/// estimates, then the post-hoc posteriors, each alphabetically.
const std::vector<OptimizerEntry>& optimizers();
/// The names of the optimizers that train, in display order (what --optimizer(s) accept).
std::vector<std::string> optimizer_names();
/// The entry named `name`; an unknown name is a sentence error listing the names (with a
/// "did you mean" suggestion).
const OptimizerEntry& find_optimizer(std::string_view name);

/// Builds optimizer `name` over `parameters` from the given options (keys of its table; values
/// converted to the option's type and checked; missing ones take the context's or the default).
std::unique_ptr<::torch::optim::Optimizer> make_optimizer(std::string_view name,
                                                          std::vector<::at::Tensor> parameters,
                                                          const OptionValues& options,
                                                          const OptimizerContext& context);

/// Every option of `name` with the value a run uses: given, else from the context, else default.
OptionValues effective_options(std::string_view name, const OptionValues& given,
                               const OptimizerContext& context);

/// Checks keys and values without building anything (all runs of a comparison are checked before
/// the first trains).
void check_options(std::string_view name, const OptionValues& given);

/// The optimizer's Gaussian posterior (IVON, VOGN, OGN, Vadam, AdaBayes, K-FAC, Laplace: whatever
/// has the capability, gaussian_posterior.hpp), or nullptr. The one place that asks an optimizer
/// what it is; the posterior tools ask this.
GaussianPosterior* as_gaussian_posterior(::torch::optim::Optimizer& optimizer);
/// LibTorch's AdamW behind `optimizer`, or nullptr (its second moment gives AdamW's posterior
/// variance, sensitivity.hpp).
::torch::optim::AdamW* as_libtorch_adamw(::torch::optim::Optimizer& optimizer);
/// The names of the registered optimizers with a Gaussian posterior, in display order (for
/// messages that say which would do).
std::vector<std::string> gaussian_posterior_names();

/// Sets the learning rate of every param group (schedules).
void set_learning_rate(::torch::optim::Optimizer& optimizer, double lr);
/// The learning rate of the first param group.
double learning_rate(const ::torch::optim::Optimizer& optimizer);
/// Number of Monte Carlo training samples the optimizer wants per step (1 for point estimates).
int training_samples(const ::torch::optim::Optimizer& optimizer);

namespace detail {

/// The options struct of a table-driven optimizer from given values and the context.
template <class Options>
Options options_from(const OptionValues& given, const OptimizerContext& context) {
  Options o;
  const auto& table = Options::table();
  for (const auto& info : table.options()) {
    bool is_given = false;
    for (const auto& [key, value] : given) is_given = is_given || key == info.key;
    if (is_given) continue;
    if (info.default_from == DefaultFrom::kTrainingSetSize && context.training_set_size > 0) {
      table.set(o, info.key, static_cast<double>(context.training_set_size));
    } else if (info.default_from == DefaultFrom::kRunSeed) {
      table.set(o, info.key, static_cast<int64_t>(context.seed % (uint64_t{1} << 53)));
    } else if (info.default_from == DefaultFrom::kBatchSize && context.batch_size > 0) {
      table.set(o, info.key, context.batch_size);
    }
  }
  table.apply(o, given);
  return o;
}

/// GroupOptionAccess for an options struct with a table.
template <class Options>
GroupOptionAccess group_option_access() {
  return {[](const OptionValues& given, const OptimizerContext& context)
              -> std::unique_ptr<::torch::optim::OptimizerOptions> {
            return std::make_unique<Options>(options_from<Options>(given, context));
          },
          [](const ::torch::optim::OptimizerOptions& options) {
            const auto* typed = dynamic_cast<const Options*>(&options);
            check(typed != nullptr, "Internal: a param group carries another optimizer's options.");
            return Options::table().values(*typed);
          }};
}

template <class Optimizer>
bool register_table_optimizer(std::string name, std::string summary, bool trains = true) {
  using Options = typename Optimizer::Options;
  return register_optimizer(
      {std::move(name), std::move(summary), true, &Options::table(),
       [](std::vector<::torch::optim::OptimizerParamGroup> groups, const OptionValues& given,
          const OptimizerContext& context) -> std::unique_ptr<::torch::optim::Optimizer> {
         return std::make_unique<Optimizer>(std::move(groups), options_from<Options>(given, context));
       },
       trains, group_option_access<Options>(), std::is_base_of_v<GaussianPosterior, Optimizer>});
}

}  // namespace detail
}  // namespace blr::torch

#define BLR_OPTIMIZER_CONCAT_INNER(a, b) a##b
#define BLR_OPTIMIZER_CONCAT(a, b) BLR_OPTIMIZER_CONCAT_INNER(a, b)
/// Registers a table-driven BLR optimizer type (its `Options` has a `table()`) under `name`.
#define BLR_REGISTER_OPTIMIZER(Type, name, summary)                                      \
  [[maybe_unused]] static const bool BLR_OPTIMIZER_CONCAT(blr_optimizer_registered_, __COUNTER__) = \
      ::blr::torch::detail::register_table_optimizer<Type>(name, summary)
/// Registers a posterior fitted after training (it has a table, samples, is saved and evaluated,
/// but does not train).
#define BLR_REGISTER_POSTERIOR(Type, name, summary)                                      \
  [[maybe_unused]] static const bool BLR_OPTIMIZER_CONCAT(blr_posterior_registered_, __COUNTER__) = \
      ::blr::torch::detail::register_table_optimizer<Type>(name, summary, false)
