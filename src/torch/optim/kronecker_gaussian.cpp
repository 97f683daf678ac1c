// The Gaussian in a Kronecker eigenbasis (kronecker_gaussian.hpp): eigendecomposition, draws,
// marginal variances and the dense covariance.
#include "blr/torch/optim/kronecker_gaussian.hpp"

#include <ATen/ATen.h>

namespace blr::torch {

// The bases are made row-major: LAPACK returns them column-major, a saved and loaded basis is
// row-major, and a BLAS may round a product differently for the two layouts (MKL in PyTorch's
// wheels does), which made a resumed K-FAC run differ from the uninterrupted one.
KroneckerEigen kronecker_eigen(const KroneckerFactors& factors) {
  auto [d_a, q_a] = ::at::linalg_eigh(factors.input);
  auto [d_g, q_g] = ::at::linalg_eigh(factors.output);
  return {q_a.contiguous(), d_a.clamp_min(0.0), q_g.contiguous(), d_g.clamp_min(0.0)};
}

::at::Tensor kronecker_draw(const ::at::Tensor& output_basis, const ::at::Tensor& input_basis,
                            const ::at::Tensor& precision_eigen, const ::at::Tensor& noise) {
  return output_basis.mm(noise.div(precision_eigen.sqrt())).mm(input_basis.t());
}

::at::Tensor kronecker_marginal_variance(const ::at::Tensor& output_basis,
                                         const ::at::Tensor& input_basis,
                                         const ::at::Tensor& precision_eigen) {
  return output_basis.square().mm(precision_eigen.reciprocal()).mm(input_basis.square().t());
}

::at::Tensor kronecker_covariance(const ::at::Tensor& output_basis, const ::at::Tensor& input_basis,
                                  const ::at::Tensor& precision_eigen) {
  const ::at::Tensor q = ::at::kron(output_basis, input_basis);
  return ::at::mm(q * precision_eigen.reciprocal().flatten().unsqueeze(0), q.t());
}

}  // namespace blr::torch
