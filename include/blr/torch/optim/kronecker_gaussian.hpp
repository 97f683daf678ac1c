// A Gaussian over a weight matrix W (out×in; a Conv2d weight viewed O×(C·kh·kw)) whose precision
// is diagonal in a Kronecker eigenbasis — the posterior of the K-FAC optimizer (kfac.hpp) and of
// the Kronecker-factored Laplace (laplace.hpp), written once here:
//
//   A = U_A diag(a) U_Aᵀ (in×in),  G = U_G diag(g) U_Gᵀ (out×out)   (eigh; eigenvalues clamped ≥ 0)
//   precision of row-major vec(W):  (U_G ⊗ U_A) diag(vec D) (U_G ⊗ U_A)ᵀ,   D out×in, D > 0
//   (D = N·(g aᵀ + γ) for K-FAC, N·g aᵀ + δ for the Laplace: the eigenvalues of N·(G ⊗ A) + δI)
//
//   a draw:             W − W* = U_G (E ⊘ √D) U_Aᵀ,   E standard normal out×in
//   marginal variances: Var(W_oi) = Σ_kl U_G[o,k]² U_A[i,l]² / D_kl = (U_G²) D⁻¹ (U_A²)ᵀ
//   dense covariance:   (U_G ⊗ U_A) diag(1/vec D) (U_G ⊗ U_A)ᵀ   (small layers: tests)
//
// Row-major vec(U_G X U_Aᵀ) = (U_G ⊗ U_A) vec(X), which is why every formula pairs G with the rows
// and A with the columns.
#pragma once

#include <ATen/Tensor.h>

#include "blr/torch/curvature/kronecker_factors.hpp"

namespace blr::torch {

/// The eigendecompositions of A (input side) and G (output side).
struct KroneckerEigen {
  ::at::Tensor input_basis, input_eigen;    ///< U_A (columns), a ≥ 0
  ::at::Tensor output_basis, output_eigen;  ///< U_G (columns), g ≥ 0
};

/// eigh of both factors, negative round-off eigenvalues clamped to 0.
KroneckerEigen kronecker_eigen(const KroneckerFactors& factors);

/// U_G (E ⊘ √D) U_Aᵀ for a standard-normal E (out×in); D out×in.
::at::Tensor kronecker_draw(const ::at::Tensor& output_basis, const ::at::Tensor& input_basis,
                            const ::at::Tensor& precision_eigen, const ::at::Tensor& noise);

/// (U_G²) D⁻¹ (U_A²)ᵀ: the marginal variances, out×in.
::at::Tensor kronecker_marginal_variance(const ::at::Tensor& output_basis,
                                         const ::at::Tensor& input_basis,
                                         const ::at::Tensor& precision_eigen);

/// The dense covariance of row-major vec(W), (out·in)×(out·in).
::at::Tensor kronecker_covariance(const ::at::Tensor& output_basis, const ::at::Tensor& input_basis,
                                  const ::at::Tensor& precision_eigen);

}  // namespace blr::torch
