// The optimizer registry (registry.hpp).
#include "blr/torch/optim/registry.hpp"

#include <torch/optim/adamw.h>

#include <fmt/ranges.h>

#include <algorithm>

#include "blr/core/error.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

namespace {

std::vector<OptimizerEntry>& registry() {
  static std::vector<OptimizerEntry> entries;
  return entries;
}

}  // namespace

bool register_optimizer(OptimizerEntry entry) {
  auto& entries = registry();
  for (const auto& e : entries) {
    check(e.name != entry.name,
          fmt::format("Internal: two optimizers are registered as '{}'.", entry.name));
  }
  entries.push_back(std::move(entry));
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    if (a.trains != b.trains) return a.trains;
    if (a.variational != b.variational) return a.variational;
    return a.name < b.name;
  });
  return true;
}

const std::vector<OptimizerEntry>& optimizers() { return registry(); }

std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) {
    if (e.trains) names.push_back(e.name);
  }
  return names;
}

const OptimizerEntry& find_optimizer(std::string_view name) {
  for (const auto& e : registry()) {
    if (e.name == name) return e;
  }
  const auto names = optimizer_names();
  const std::string suggestion = closest_match(name, names);
  throw Error(fmt::format("Unknown optimizer '{}'{}; the optimizers are {}.", name,
                          suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion),
                          fmt::join(names, ", ")));
}

void check_options(std::string_view name, const OptionValues& given) {
  const OptimizerEntry& entry = find_optimizer(name);
  for (const auto& [key, value] : given) {
    const OptionInfo& info = entry.options->at(key, fmt::format("Optimizer '{}'", name));
    info.check(info.coerce(value));
  }
}

std::unique_ptr<::torch::optim::Optimizer> make_optimizer(std::string_view name,
                                                          std::vector<::at::Tensor> parameters,
                                                          const OptionValues& options,
                                                          const OptimizerContext& context) {
  const OptimizerEntry& entry = find_optimizer(name);
  check_options(name, options);
  std::vector<::torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::move(parameters));
  return entry.make(std::move(groups), options, context);
}

OptionValues effective_options(std::string_view name, const OptionValues& given,
                               const OptimizerContext& context) {
  const OptimizerEntry& entry = find_optimizer(name);
  OptionValues out;
  for (const auto& info : entry.options->options()) {
    OptionValue value = info.default_value;
    if (info.default_from == DefaultFrom::kTrainingSetSize && context.training_set_size > 0) {
      value = static_cast<double>(context.training_set_size);
    } else if (info.default_from == DefaultFrom::kRunSeed) {
      value = static_cast<int64_t>(context.seed % (uint64_t{1} << 53));
    } else if (info.default_from == DefaultFrom::kBatchSize && context.batch_size > 0) {
      value = context.batch_size;
    }
    for (const auto& [key, v] : given) {
      if (key == info.key) value = info.coerce(v);
    }
    out.emplace_back(info.key, value);
  }
  return out;
}

void set_learning_rate(::torch::optim::Optimizer& optimizer, double lr) {
  check_nonnegative("lr", lr);
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

double learning_rate(const ::torch::optim::Optimizer& optimizer) {
  check(!optimizer.param_groups().empty(), "The optimizer has no param groups.");
  return optimizer.param_groups().front().options().get_lr();
}

GaussianPosterior* as_gaussian_posterior(::torch::optim::Optimizer& optimizer) {
  return dynamic_cast<GaussianPosterior*>(&optimizer);
}

::torch::optim::AdamW* as_libtorch_adamw(::torch::optim::Optimizer& optimizer) {
  return dynamic_cast<::torch::optim::AdamW*>(&optimizer);
}

std::vector<std::string> gaussian_posterior_names() {
  std::vector<std::string> names;
  for (const auto& entry : optimizers())
    if (entry.gaussian_posterior) names.push_back(entry.name);
  return names;
}

std::vector<std::string> optimizer_names_with(bool OptimizerEntry::*flag) {
  std::vector<std::string> names;
  for (const auto& entry : optimizers())
    if (entry.trains && entry.*flag) names.push_back(entry.name);
  return names;
}

std::string_view kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kPointEstimate: return "point estimate";
    case OptimizerKind::kDiagonalGaussian: return "diagonal Gaussian";
    case OptimizerKind::kKroneckerGaussian: return "Kronecker Gaussian";
    case OptimizerKind::kBernoulli: return "Bernoulli";
    case OptimizerKind::kDropout: return "dropout";
    case OptimizerKind::kPosthocGaussian: return "post-hoc Gaussian";
  }
  return "unknown";
}

int training_samples(const ::torch::optim::Optimizer& optimizer) {
  const auto* v = dynamic_cast<const VariationalOptimizer*>(&optimizer);
  return v != nullptr ? v->training_samples() : 1;
}

}  // namespace blr::torch
