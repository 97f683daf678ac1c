// Vadam's options and policy (include/blr/algorithms/vadam.hpp).
#include "blr/algorithms/vadam.hpp"

namespace blr {

const OptionTable<VadamOptions>& VadamOptions::table() {
  using O = VadamOptions;
  static const OptionTable<O> t =
      OptionTable<O>("Vadam")
          .number("lr", &O::lr, Range::at_least(0.0), "learning rate α")
          .number("ess", &O::ess, Range::positive(), "training-set size N")
          .required(DefaultFrom::kTrainingSetSize)
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "momentum (gradient average) factor β₁")
          .number("beta2", &O::beta2, Range::between(0.0, 1.0, false, true),
                  "squared-gradient average factor β₂")
          .number("prior_precision", &O::prior_precision, Range::positive(), "prior precision λp")
          .number("prec_init", &O::prec_init, Range::positive(),
                  "initial posterior precision N·s₀ + λp (≥ prior_precision)")
          .integer("mc_samples", &O::mc_samples, Range::between(1, 1e6),
                   "Monte Carlo weight samples per step", OptionScope::kOptimizer);
  return t;
}

void VadamOptions::check_consistency() const {
  check(prec_init >= prior_precision,
        fmt::format("Option 'prec_init' must be at least 'prior_precision' ({}), so that "
                    "s₀ = (prec_init − prior_precision)/N ≥ 0; got {}.",
                    prior_precision, prec_init));
}

VadamPolicy vadam_policy(const VadamOptions& o) {
  const double prior = o.prior_precision / o.ess;  // λ̃
  VadamPolicy p;
  p.mean_rate = Schedule::constant(o.lr);
  p.precision_rate = Schedule::constant(1.0 - o.beta2);
  p.get<stage::PriorInGradient>().precision = prior;
  p.get<stage::GradientAverage>() = {o.beta1, /*debias=*/true};
  p.get<stage::SqrtScaling>().outer = prior;
  return p;
}

}  // namespace blr
