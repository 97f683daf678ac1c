// The default precision of a Gaussian posterior (gaussian_posterior.hpp): 1/σ² per coordinate.
#include "blr/torch/optim/gaussian_posterior.hpp"

namespace blr::torch {

std::vector<::at::Tensor> GaussianPosterior::marginal_precision() {
  std::vector<::at::Tensor> out;
  for (const auto& v : marginal_variance()) out.push_back(v.reciprocal());
  return out;
}

}  // namespace blr::torch
