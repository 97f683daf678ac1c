// VOGN's options and policy (include/blr/algorithms/ogn_vogn.hpp).
#include "blr/algorithms/ogn_vogn.hpp"

namespace blr {

const OptionTable<VognOptions>& VognOptions::table() {
  using O = VognOptions;
  static const OptionTable<O> t =
      OptionTable<O>("VOGN")
          .number("lr", &O::lr, Range::at_least(0.0), "learning rate α")
          .number("ess", &O::ess, Range::positive(), "training-set size N")
          .required(DefaultFrom::kTrainingSetSize)
          .number("prior_precision", &O::prior_precision, Range::positive(),
                  "prior precision δ (1/prior variance)")
          .number("damping", &O::damping, Range::at_least(0.0),
                  "damping γ added to the precision per example")
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "heavy-ball momentum β₁")
          .number("curvature_rate", &O::curvature_rate, Range::between(0.0, 1.0, true, false),
                  "weight β of the new squared gradients in the curvature")
          .number("hess_init", &O::hess_init, Range::at_least(0.0), "initial curvature s₀")
          .integer("mc_samples", &O::mc_samples, Range::between(1, 1e6),
                   "Monte Carlo weight samples per step (VOGN)", OptionScope::kOptimizer);
  return t;
}

VognPolicy vogn_policy(const VognOptions& o, double scale) {
  VognPolicy p;
  p.mean_rate = Schedule::constant(o.lr);
  p.precision_rate = Schedule::constant(o.curvature_rate);
  p.get<stage::PriorInGradient>().precision = scale * o.prior_precision / o.ess;
  p.get<stage::GradientAverage>() = {o.beta1, /*debias=*/false, /*heavy_ball=*/true};
  p.get<stage::PriorInCurvature>().precision = scale * (o.prior_precision / o.ess + o.damping);
  return p;
}

}  // namespace blr
