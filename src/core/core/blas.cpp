// The system BLAS behind blr/core/blas.hpp, through its C interface (Debian's cblas.h).
#include "blr/core/blas.hpp"

#include <cblas.h>

#include <algorithm>
#include <limits>

#include "blr/core/error.hpp"

namespace blr {
namespace {

/// The BLAS takes 32-bit sizes.
int blas_size(Index n) {
  check(n <= std::numeric_limits<int>::max(),
        "A matrix dimension is beyond the 32-bit sizes the system BLAS takes.");
  return static_cast<int>(n);
}

}  // namespace

void blas_gram_accumulate(const Eigen::Ref<const Matrix>& a, Eigen::Ref<Matrix> c) {
  const Index k = a.cols();
  check(c.rows() == k && c.cols() == k,
        "blas_gram_accumulate: C must be square with one row per column of A.");
  if (k == 0 || a.rows() == 0) return;
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, blas_size(k), blas_size(a.rows()), 1.0,
              a.data(), blas_size(std::max<Index>(a.outerStride(), 1)), 1.0, c.data(),
              blas_size(std::max<Index>(c.outerStride(), 1)));
}

void blas_multiply(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b,
                   Eigen::Ref<Matrix> c) {
  check(a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols(),
        "blas_multiply: the shapes of A, B and C do not match.");
  if (c.size() == 0) return;
  if (a.cols() == 0) {
    c.setZero();
    return;
  }
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, blas_size(c.rows()), blas_size(c.cols()),
              blas_size(a.cols()), 1.0, a.data(), blas_size(std::max<Index>(a.outerStride(), 1)),
              b.data(), blas_size(std::max<Index>(b.outerStride(), 1)), 0.0, c.data(),
              blas_size(std::max<Index>(c.outerStride(), 1)));
}

}  // namespace blr
