// BayesBiNN's options (include/blr/algorithms/bayesbinn.hpp), shared with the LibTorch optimizer.
#include "blr/algorithms/bayesbinn.hpp"

namespace blr {

const OptionTable<BayesBinnOptions>& BayesBinnOptions::table() {
  using O = BayesBinnOptions;
  static const OptionTable<O> t =
      OptionTable<O>("BayesBiNN")
          .number("lr", &O::lr, Range::between(0.0, 1.0, true, false), "learning rate α (ρ)")
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "average of the natural gradient β (the reference's betas; 0 = eq. 52)")
          .number("temperature", &O::temperature, Range::positive(),
                  "temperature τ of the Concrete relaxation")
          .integer("mc_samples", &O::mc_samples, Range::between(1, 1e6),
                   "relaxed samples per step", OptionScope::kOptimizer)
          .number("prior_natural", &O::prior_natural, Range::any(),
                  "natural parameter λ₀ of the Bernoulli prior (0 = uniform)");
  return t;
}

}  // namespace blr
