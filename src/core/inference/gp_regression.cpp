#include "blr/inference/gp_regression.hpp"

#include <Eigen/Cholesky>
#include <cmath>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"

namespace blr::inference {

double evidence_gradient_term(const Vector& alpha, const Matrix& r, const Matrix& d) {
  return 0.5 * alpha.dot(d * alpha) - 0.5 * r.cwiseProduct(d).sum();
}

GprResult gp_regression(const Matrix& kernel, const Vector& y, double noise_variance) {
  const Index n = kernel.rows();
  check(n >= 1 && kernel.cols() == n && y.size() == n,
        "GP regression needs a square kernel matrix with one row per response.");
  check_positive("noise-variance", noise_variance);
  check(y.allFinite(), "GP regression needs finite responses.");
  Matrix ky = kernel;
  ky.diagonal().array() += noise_variance;
  const Eigen::LLT<Matrix> llt(ky);
  check(llt.info() == Eigen::Success,
        "GP regression: the kernel matrix plus noise is not positive definite.");
  GprResult r;
  r.cholesky = llt.matrixL();
  r.alpha = llt.solve(y);
  r.log_marginal_likelihood = -0.5 * y.dot(r.alpha) - r.cholesky.diagonal().array().log().sum() -
                              0.5 * static_cast<double>(n) * kLog2Pi;
  return r;
}

void gp_regression_predict(const GprResult& fit, const Matrix& cross, const Vector& self_diag,
                           Vector& mean, Vector& variance) {
  check(cross.rows() == fit.alpha.size() && self_diag.size() == cross.cols(),
        "GP prediction: the cross-kernel must have one row per training input.");
  mean = cross.transpose() * fit.alpha;
  const Matrix v = fit.cholesky.triangularView<Eigen::Lower>().solve(cross);
  variance = (self_diag - v.colwise().squaredNorm().transpose()).cwiseMax(0.0);
}

Vector gp_regression_gradient(const GprResult& fit, const std::vector<Matrix>& dk_y) {
  const Index n = fit.alpha.size();
  const auto l = fit.cholesky.triangularView<Eigen::Lower>();
  const Matrix linv = l.solve(Matrix(Matrix::Identity(n, n)));
  const Matrix ky_inv = linv.transpose() * linv;
  Vector g(static_cast<Index>(dk_y.size()));
  for (std::size_t j = 0; j < dk_y.size(); ++j)
    g[static_cast<Index>(j)] = evidence_gradient_term(fit.alpha, ky_inv, dk_y[j]);
  return g;
}

}  // namespace blr::inference
