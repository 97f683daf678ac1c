// The defaults of a Gaussian posterior (gaussian_posterior.hpp): the precision 1/σ² per
// coordinate, and the diagonal covariance blocks of the linearised predictive.
#include "blr/torch/optim/gaussian_posterior.hpp"

namespace blr::torch {

std::vector<::at::Tensor> GaussianPosterior::marginal_precision() {
  std::vector<::at::Tensor> out;
  for (const auto& v : marginal_variance()) out.push_back(v.reciprocal());
  return out;
}

std::vector<CovarianceBlock> GaussianPosterior::covariance_blocks() {
  std::vector<CovarianceBlock> out;
  for (auto& v : marginal_variance()) out.push_back({std::move(v), {}, {}});
  return out;
}

}  // namespace blr::torch
