// The options of a LibTorch optimizer from an option table (blr/core/option_table.hpp).
//
// An optimizer's options struct derives from OptimizerOptionsFor<Itself> (which makes it the
// options type of LibTorch's param groups: clone, get_lr/set_lr) and, for the BLR optimizers,
// from the core preset's options, so that an option is declared once for both layers:
//
//   struct IvonOptions : OptimizerOptionsFor<IvonOptions>, blr::IvonOptions {
//     IvonHessian hess_approx = IvonHessian::kPrice;
//     uint64_t seed = 0;
//     static const OptionTable<IvonOptions>& table();   // the core table + hess_approx, seed
//   };
//
// Options are public members: `IvonOptions o; o.lr = 0.1; o.ess = 60000;`. A param group holds a
// complete copy (a group given without options gets the optimizer's); options whose scope is the
// whole optimizer (OptionScope::kOptimizer: mc_samples, seed, ...) must not differ between groups.
#pragma once

#include <torch/optim/optimizer.h>

#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/option_table.hpp"

namespace blr::torch {

template <class Derived>
struct OptimizerOptionsFor : public ::torch::optim::OptimizerCloneableOptions<Derived> {
  double get_lr() const override { return static_cast<const Derived&>(*this).lr; }
  void set_lr(const double lr) override { static_cast<Derived&>(*this).lr = lr; }
};

/// The options of param group `g` as the optimizer's own type (a group carrying another
/// optimizer's options is refused with a sentence).
template <class Options>
const Options& group_options_as(const ::torch::optim::OptimizerParamGroup& group, size_t g,
                                const std::string& optimizer) {
  const auto* options = dynamic_cast<const Options*>(&group.options());
  check(options != nullptr,
        fmt::format("{}: param group {} carries the options of another optimizer.", optimizer, g));
  return *options;
}

/// Validates every group's options with the table, and that options of the whole optimizer do
/// not differ between the groups and the defaults.
template <class Options>
void validate_groups(const std::vector<::torch::optim::OptimizerParamGroup>& groups,
                     const Options& defaults, const std::string& optimizer) {
  const auto& table = Options::table();
  defaults.validate();
  for (size_t g = 0; g < groups.size(); ++g) {
    const Options& o = group_options_as<Options>(groups[g], g, optimizer);
    try {
      o.validate();
    } catch (const Error& e) {
      throw Error(fmt::format("{} param group {}: {}", optimizer, g, e.what()));
    }
    for (const auto& info : table.options()) {
      if (info.scope != OptionScope::kOptimizer) continue;
      const OptionValue mine = table.get(o, info.key), whole = table.get(defaults, info.key);
      check(mine == whole,
            fmt::format("{}: option '{}' applies to the whole optimizer, but param group {} sets "
                        "it to {} while the optimizer has {}.",
                        optimizer, info.key, g, OptionInfo::format(mine), OptionInfo::format(whole)));
    }
  }
}

}  // namespace blr::torch
