// AdaBayes and AdaBayes-FP (adabayes.hpp): option tables, their options under a learning-rate
// schedule, the instantiation of their updates, AdaBayes-FP's posterior view, and their
// registration (AdaBayes with a posterior, AdaBayes-FP as a point estimate).
#include "blr/torch/optim/adabayes.hpp"

#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "gaussian_impl.hpp"

namespace blr::torch {

const OptionTable<AdaBayesOptions>& AdaBayesOptions::table() {
  using O = AdaBayesOptions;
  static const OptionTable<O> t =
      with_noise_seed(OptionTable<O>("AdaBayes").inherit(::blr::AdaBayesOptions::table()));
  return t;
}

const OptionTable<AdaBayesFpOptions>& AdaBayesFpOptions::table() {
  static const OptionTable<AdaBayesFpOptions> t =
      OptionTable<AdaBayesFpOptions>("AdaBayes-FP").inherit(::blr::AdaBayesFpOptions::table());
  return t;
}

// η/η₀ is how far a schedule has moved the group's rate from the one its options were given at
// (both validated positive: η₀ when the group joined, η at every step).
AdaBayesOptions AdaBayesRule::at_learning_rate(const Options& o, double initial_lr) {
  const double ratio = o.lr / initial_lr;
  AdaBayesOptions scheduled = o;
  scheduled.lr_sgd = o.lr_sgd * ratio;
  scheduled.weight_drift = o.weight_drift * ratio;
  check(scheduled.weight_drift < 1.0,
        fmt::format("AdaBayes: the weight drift at the current learning rate, {} × {}/{} = {}, "
                    "must stay below 1; lower weight_drift or the learning rate.",
                    o.weight_drift, o.lr, initial_lr, scheduled.weight_drift));
  return scheduled;
}

AdaBayesFpOptions AdaBayesFpRule::at_learning_rate(const Options& o, double initial_lr) {
  AdaBayesFpOptions scheduled = o;
  scheduled.lr_sgd = o.lr_sgd * (o.lr / initial_lr);
  return scheduled;
}

template class GaussianOptimizer<AdaBayesRule>;
template class GaussianOptimizer<AdaBayesFpRule>;

void AdaBayesFp::sample_parameters(bool train) {
  check(train,
        "AdaBayes-FP holds no posterior to sample from (it is a point estimate); predict with the "
        "mean.");
  GaussianOptimizer::sample_parameters(train);
}

std::vector<::at::Tensor> AdaBayesFp::posterior_variance() {
  std::vector<::at::Tensor> v = curvature();  // v, parameter order
  const double t = static_cast<double>(step_count());
  size_t j = 0;
  for (size_t g = 0; g < param_groups().size(); ++g) {
    const Options o = AdaBayesFpRule::at_learning_rate(options(g), initial_lr(g));
    const double sigma2 = ::blr::adabayes_prior_variance(o);
    const double a = std::isinf(sigma2) ? 0.0 : 1.0 / (2.0 * sigma2);
    const double debias = t > 0 ? 1.0 / (1.0 - std::pow(o.beta2, t)) : 0.0;
    for (size_t i = 0; i < param_groups()[g].params().size(); ++i, ++j) {
      // 1/L = 1/(√((v̂ + ε)/η² + a²) + a)
      v[j] = v[j].mul(debias).add_(o.eps).div_(o.lr * o.lr).add_(a * a).sqrt_().add_(a).reciprocal_();
    }
  }
  return v;
}

BLR_REGISTER_OPTIMIZER(AdaBayes, "adabayes",
                       "AdaBayes (Aitchison 2020): a Kalman filter per weight, between SGD (little "
                       "data) and Adam (much data); a diagonal Gaussian posterior, gradients at the "
                       "mean",
                       kDiagonalGaussian);

BLR_REGISTER_OPTIMIZER(AdaBayesFp, "adabayes-fp",
                       "AdaBayes-FP (Aitchison 2020): AdaBayes' variance at its fixed point, Adam's "
                       "state; a point estimate",
                       kPointEstimate);

}  // namespace blr::torch
