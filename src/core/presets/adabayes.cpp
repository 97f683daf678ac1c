// AdaBayes' and AdaBayes-FP's options and policies (include/blr/algorithms/adabayes.hpp).
#include "blr/algorithms/adabayes.hpp"

#include <cmath>
#include <limits>

namespace blr {

const OptionTable<AdaBayesOptions>& AdaBayesOptions::table() {
  using O = AdaBayesOptions;
  static const OptionTable<O> t =
      OptionTable<O>("AdaBayes")
          .number("lr", &O::lr, Range::positive(),
                  "learning rate η (Adam's, which AdaBayes approaches when data are plentiful)")
          .number("lr_sgd", &O::lr_sgd, Range::positive_or_infinite(),
                  "SGD's learning rate in the low-data limit; prior variance σ² = lr_sgd/batch_size "
                  "(inf: no prior, the Adam limit)")
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "gradient average factor β₁")
          .number("weight_drift", &O::weight_drift, Range::between(0.0, 1.0, false, true),
                  "decoupled weight decay c per step, μ ← (1 − c)μ after the step")
          .integer("batch_size", &O::batch_size, Range::between(1, 1e9),
                   "minibatch size B (the gradient of the summed loss is B × that of the mean loss)")
          .default_from(DefaultFrom::kBatchSize);
  return t;
}

const OptionTable<AdaBayesFpOptions>& AdaBayesFpOptions::table() {
  using O = AdaBayesFpOptions;
  static const OptionTable<O> t =
      OptionTable<O>("AdaBayes-FP")
          .inherit(AdaBayesOptions::table())
          .number("beta2", &O::beta2, Range::between(0.0, 1.0, false, true),
                  "squared-gradient average factor β₂")
          .number("eps", &O::eps, Range::at_least(0.0),
                  "ε added to the debiased squared-gradient average (inside the square root)");
  return t;
}

double adabayes_prior_variance(const AdaBayesOptions& o) {
  return o.lr_sgd / static_cast<double>(o.batch_size);
}

AdaBayesPolicy adabayes_policy(const AdaBayesOptions& o) {
  const double sigma2 = adabayes_prior_variance(o);
  const double eta2 = o.lr * o.lr;
  AdaBayesPolicy p;
  p.mean_rate = Schedule::constant(1.0);
  p.precision_rate = Schedule::constant(1.0);
  p.get<stage::GradientAverage>() = {o.beta1, /*debias=*/true};
  auto& predict = p.get<stage::StatePrediction>();
  if (std::isinf(sigma2)) {  // the limit σ² → ∞: d = 1, σ²(1 − d) = η²
    predict.decay = 1.0;
    predict.noise = eta2;
  } else {
    predict.decay = std::exp(-eta2 / sigma2);
    predict.noise = -sigma2 * std::expm1(-eta2 / sigma2);
  }
  p.get<stage::DecoupledDecay>().rate = o.weight_drift;
  return p;
}

AdaBayesFpPolicy adabayes_fp_policy(const AdaBayesFpOptions& o) {
  const double sigma2 = adabayes_prior_variance(o);
  const double eta_a = std::isinf(sigma2) ? 0.0 : o.lr / (2.0 * sigma2);  // η·a
  AdaBayesFpPolicy p;
  p.mean_rate = Schedule::constant(o.lr);
  p.precision_rate = Schedule::constant(1.0 - o.beta2);
  p.get<stage::GradientAverage>() = {o.beta1, /*debias=*/true};
  p.get<stage::SqrtScaling>().inner = o.eps + eta_a * eta_a;
  p.get<stage::SqrtScaling>().outer = eta_a;
  p.get<stage::DecoupledDecay>().rate = o.weight_drift;
  return p;
}

}  // namespace blr
