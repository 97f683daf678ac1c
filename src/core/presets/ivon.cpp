// IVON's options and policy (include/blr/algorithms/ivon.hpp).
#include "blr/algorithms/ivon.hpp"

namespace blr {

const OptionTable<IvonOptions>& IvonOptions::table() {
  using O = IvonOptions;
  static const OptionTable<O> t =
      OptionTable<O>("IVON")
          .number("lr", &O::lr, Range::at_least(0.0),
                  "learning rate α; with rescale_lr the first step is an SGD step of size α")
          .number("ess", &O::ess, Range::positive(),
                  "effective sample size λ, usually the training-set size")
          .required(DefaultFrom::kTrainingSetSize)
          .number("hess_init", &O::hess_init, Range::positive(), "initial Hessian estimate h₀")
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "momentum (gradient average) factor β₁")
          .number("beta2", &O::beta2, Range::between(0.0, 1.0), "Hessian average factor β₂")
          .number("weight_decay", &O::weight_decay, Range::at_least(0.0),
                  "weight decay δ: prior precision per example, N(0, 1/(λδ))")
          .number("clip_radius", &O::clip_radius, Range::positive_or_infinite(),
                  "elementwise clip of the preconditioned step (inf: none)")
          .integer("mc_samples", &O::mc_samples, Range::between(1, 1e6),
                   "Monte Carlo weight samples per step", OptionScope::kOptimizer)
          .flag("debias", &O::debias, "divide the momentum by 1 − β₁ᵗ")
          .flag("rescale_lr", &O::rescale_lr,
                "use α·(h₀ + δ) as the step size, so that the first step is an SGD step of size α");
  return t;
}

IvonPolicy ivon_policy(const IvonOptions& o, double scale) {
  IvonPolicy p;
  p.mean_rate = Schedule::constant(o.rescale_lr ? o.lr * (o.hess_init + o.weight_decay) : o.lr);
  p.precision_rate = Schedule::constant(1.0 - o.beta2);
  p.get<stage::GradientAverage>() = {o.beta1, o.debias};
  p.get<stage::PriorInDirection>().precision = scale * o.weight_decay;
  p.get<stage::PriorInCurvature>().precision = scale * o.weight_decay;
  p.get<stage::Clip>().radius = o.clip_radius;
  return p;
}

}  // namespace blr
