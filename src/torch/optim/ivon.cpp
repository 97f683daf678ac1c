// IVON (ivon.hpp): its option table, step rates, the instantiation of its update and its
// registration.
#include "blr/torch/optim/ivon.hpp"

#include "blr/torch/optim/registry.hpp"
#include "gaussian_impl.hpp"

namespace blr::torch {

const OptionTable<IvonOptions>& IvonOptions::table() {
  using O = IvonOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("IVON")
          .inherit(::blr::IvonOptions::table())
          .choice("hess_approx", &O::hess_approx,
                  {{"price", IvonHessian::kPrice}, {"gradsq", IvonHessian::kGradSquared}},
                  "Hessian estimator: price (reparameterisation, unbiased) or gradsq (λ·ĝ²)"));
  return t;
}

template class GaussianOptimizer<IvonRule>;

BLR_REGISTER_OPTIMIZER(Ivon, "ivon",
                       "IVON, improved variational online Newton (Shen et al. 2024): a diagonal "
                       "Gaussian posterior at the cost of Adam",
                       kDiagonalGaussian);

}  // namespace blr::torch
