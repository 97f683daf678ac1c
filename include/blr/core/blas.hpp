// Large dense products through the system BLAS.
//
// The N×d designs of `blr infer` (N = 10⁵ rows) make two products most of the work of a Newton
// or CVI iteration: the curvature XᵀWX and the site variances x_iᵀΣx_i (rows of X·Σ). Eigen's own
// kernels are compiled for the build's baseline instruction set (SSE2 on x86-64); the system BLAS
// chooses its kernels for the machine at run time. Debian's libblas.so.3 is OpenBLAS when
// libopenblas0-pthread is installed (as for LibTorch, which links the same library), and the
// reference BLAS otherwise. Its threads follow OPENBLAS_NUM_THREADS (default: every core).
//
// Only products of at least kBlasMinimumWork multiply-adds go to the BLAS: below it the call costs
// more than it saves, and every smaller problem (the shipped data sets, the tests' problems) keeps
// Eigen's rounding bit for bit. The BLAS rounds differently in the last bits (another summation
// order), so a result above the threshold differs from Eigen's by a few units in the last place.
#pragma once

#include <Eigen/Core>

#include "blr/core/types.hpp"

namespace blr {

/// Multiply-adds from which a product goes to the system BLAS (2²² ≈ 4.2·10⁶: a 10⁵ × 50 curvature
/// is 2.5·10⁸, Pima's 768 × 9 is 6.2·10⁴).
inline constexpr double kBlasMinimumWork = 4194304.0;

/// Whether an m×k by k×n product is large enough for the BLAS.
inline bool blas_worthwhile(Index m, Index n, Index k) {
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return work >= kBlasMinimumWork;
}

/// The lower triangle of C += AᵀA (C k×k, its strict upper triangle untouched), by dsyrk (half
/// the multiply-adds of a full product): a gram summed block of rows by block of rows.
void blas_gram_accumulate(const Eigen::Ref<const Matrix>& a, Eigen::Ref<Matrix> c);

/// C = A·B by the BLAS's dgemm (C sized by the caller; any of the three may be a block with an
/// outer stride).
void blas_multiply(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b,
                   Eigen::Ref<Matrix> c);

}  // namespace blr
