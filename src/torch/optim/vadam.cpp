// Vadam (vadam.hpp): its option table, the instantiation of its update and its registration.
#include "blr/torch/optim/vadam.hpp"

#include "blr/torch/optim/registry.hpp"
#include "gaussian_impl.hpp"

namespace blr::torch {

const OptionTable<VadamOptions>& VadamOptions::table() {
  using O = VadamOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("Vadam")
          .inherit(::blr::VadamOptions::table()));
  return t;
}

template class GaussianOptimizer<VadamRule>;

BLR_REGISTER_OPTIMIZER(Vadam, "vadam",
                       "Vadam (Khan et al. 2018): Adam's steps with weight perturbation, a diagonal "
                       "Gaussian posterior",
                       kDiagonalGaussian);

}  // namespace blr::torch
