// Optimizers by name: every blr optimizer registers itself, with its option table, in its own
// source file by one line that says what it is,
//
//   BLR_REGISTER_OPTIMIZER(Ivon, "ivon", "IVON, improved variational online Newton ...",
//                          kDiagonalGaussian);
//
// and everything that lists or builds optimizers — the CLI's --optimizer and its typed
// --<optimizer>-<option> flags, the JSON of runs and checkpoints, `blr bench`, the docs, the
// Python package — reads this registry. Keys are the option tables' (snake_case). (LibTorch's own
// AdamW and SGD, whose options are LibTorch's, are entered by register_optimizer directly.)
//
// The registry is also the one place that knows an optimizer's type: the tools ask it for a
// capability (capabilities.hpp) with capability<C>(optimizer), and list the optimizers that have
// one with optimizer_names_with(&OptimizerEntry::flag), so no message hand-lists names.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/torch/optim/capabilities.hpp"
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

/// What an optimizer fits, as its registration line says: it sets whether the entry is
/// variational and whether it trains.
enum class OptimizerKind {
  kPointEstimate,      ///< a point estimate (SGD, AdamW, SAM, STE, AdaBayes-FP)
  kDiagonalGaussian,   ///< q = N(μ, diag(σ²)) (IVON, VOGN, OGN, Vadam, AdaBayes, bSAM)
  kKroneckerGaussian,  ///< q = N(μ, Σ) with Kronecker-factored blocks (K-FAC)
  kBernoulli,          ///< q over binary weights (BayesBiNN)
  kDropout,            ///< Bernoulli masks on the weights' units (MC dropout)
  kPosthocGaussian,    ///< a Gaussian fitted after training (Laplace): does not train
};
/// "point estimate", "diagonal Gaussian", ...
std::string_view kind_name(OptimizerKind kind);

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
  /// type by the registration macro, by hand for a raw entry; so are the flags below.
  bool gaussian_posterior = false;
  OptimizerKind kind = OptimizerKind::kPointEstimate;
  /// The DiagonalGaussianPosterior capability (capabilities.hpp): a mean-field state with a prior
  /// of its own and float32 master weights for half/bfloat16 parameters.
  bool diagonal_gaussian_posterior = false;
  /// The DataParallelStatistics capability: trains data-parallel with its statistics all-reduced.
  bool data_parallel_statistics = false;
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
/// The names of the registered optimizers that train and have the capability `flag` (an
/// OptimizerEntry member such as &OptimizerEntry::data_parallel_statistics), in display order.
std::vector<std::string> optimizer_names_with(bool OptimizerEntry::*flag);
/// The capability C (capabilities.hpp, gaussian_posterior.hpp, kronecker_factors.hpp) of
/// `optimizer`, or nullptr: what the tools ask instead of an optimizer's type.
template <class Capability>
Capability* capability(::torch::optim::Optimizer& optimizer) {
  return dynamic_cast<Capability*>(&optimizer);
}

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

/// The entry of a table-driven optimizer type: its factory, its group options and its
/// capabilities from the type, variational and trains from its kind.
template <class Optimizer>
bool register_table_optimizer(std::string name, std::string summary, OptimizerKind kind) {
  using Options = typename Optimizer::Options;
  OptimizerEntry entry;
  entry.name = std::move(name);
  entry.summary = std::move(summary);
  entry.kind = kind;
  entry.variational = kind != OptimizerKind::kPointEstimate;
  entry.trains = kind != OptimizerKind::kPosthocGaussian;
  entry.options = &Options::table();
  entry.make = [](std::vector<::torch::optim::OptimizerParamGroup> groups,
                  const OptionValues& given,
                  const OptimizerContext& context) -> std::unique_ptr<::torch::optim::Optimizer> {
    return std::make_unique<Optimizer>(std::move(groups), options_from<Options>(given, context));
  };
  entry.group_options = group_option_access<Options>();
  entry.gaussian_posterior = std::is_base_of_v<GaussianPosterior, Optimizer>;
  entry.diagonal_gaussian_posterior = std::is_base_of_v<DiagonalGaussianPosterior, Optimizer>;
  entry.data_parallel_statistics = std::is_base_of_v<DataParallelStatistics, Optimizer>;
  return register_optimizer(std::move(entry));
}

}  // namespace detail
}  // namespace blr::torch

#define BLR_OPTIMIZER_CONCAT_INNER(a, b) a##b
#define BLR_OPTIMIZER_CONCAT(a, b) BLR_OPTIMIZER_CONCAT_INNER(a, b)
/// Registers a table-driven blr optimizer type (its `Options` has a `table()`) under `name`;
/// `kind` is an OptimizerKind enumerator (kDiagonalGaussian, kPointEstimate, ...).
#define BLR_REGISTER_OPTIMIZER(Type, name, summary, kind)                                 \
  [[maybe_unused]] static const bool BLR_OPTIMIZER_CONCAT(blr_optimizer_registered_, __COUNTER__) = \
      ::blr::torch::detail::register_table_optimizer<Type>(name, summary,                \
                                                           ::blr::torch::OptimizerKind::kind)
