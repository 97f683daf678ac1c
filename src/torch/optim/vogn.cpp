// VOGN and OGN (vogn.hpp): option tables, the instantiation of their update, registration.
#include "blr/torch/optim/vogn.hpp"

#include "blr/torch/optim/registry.hpp"
#include "gaussian_impl.hpp"

namespace blr::torch {

const OptionTable<VognOptions>& VognOptions::table() {
  using O = VognOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("VOGN")
          .inherit(::blr::VognOptions::table()));
  return t;
}

const OptionTable<OgnOptions>& OgnOptions::table() {
  static const OptionTable<OgnOptions> t =
      OptionTable<OgnOptions>("OGN").inherit(::blr::VognOptions::table(), {"mc_samples"});
  return t;
}

template class GaussianOptimizer<VognRule>;
template class GaussianOptimizer<OgnRule>;

BLR_REGISTER_OPTIMIZER(Vogn, "vogn",
                       "VOGN (Osawa et al. 2019): variational online Gauss-Newton with exact "
                       "per-example squared gradients",
                       kDiagonalGaussian);
BLR_REGISTER_OPTIMIZER(Ogn, "ogn",
                       "OGN: online Gauss-Newton, VOGN without weight noise (gradients at the mean)",
                       kDiagonalGaussian);

}  // namespace blr::torch
