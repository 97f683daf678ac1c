// Internal: the `seed` option of a sampling optimizer's table (the seed of its weight noise, by
// default the run's seed), declared once for every optimizer that draws noise.
#pragma once

#include "blr/core/option_table.hpp"

namespace blr::torch {

/// Adds the `seed` option to `table`: an integer in [0, 2⁵³] of the optimizer as a whole, whose
/// default is the run's seed (DefaultFrom::kRunSeed).
template <class O>
OptionTable<O>& with_noise_seed(OptionTable<O>& table) {
  return table
      .integer("seed", &O::seed, Range::between(0, 9007199254740992.0), "seed of the weight noise",
               OptionScope::kOptimizer)
      .default_from(DefaultFrom::kRunSeed);
}

}  // namespace blr::torch
