// GaussianFull (family/gaussian_full.hpp): the full Gaussian's exponential-family maps, λ and μ
// packed minimally (the symmetric S counted once), and its densities, KL and reparameterised draws.
#include "blr/family/gaussian_full.hpp"

#include <Eigen/Cholesky>
#include <cmath>
#include <numbers>

namespace blr {
namespace {

// d of a parameter packed minimally (length d + d(d+1)/2), refused in one sentence otherwise.
Index packed_dimension(Index size, const char* parameter) {
  const Index d = GaussianFull::dimension_for_natural_size(size);
  check(d >= 0, fmt::format("GaussianFull: a minimal {} parameter has length d + d(d+1)/2; {} is "
                            "no such length.",
                            parameter, size));
  return d;
}

// Eigen's LLT can report success on a semidefinite matrix; a zero pivot is refused here too.
bool positive_definite(const Eigen::LLT<Matrix>& llt) {
  return llt.info() == Eigen::Success && llt.matrixLLT().diagonal().minCoeff() > 0;
}

}  // namespace

Vector GaussianFull::variance() const { return covariance().diagonal(); }

Index GaussianFull::dimension_for_natural_size(Index n) {
  const Index d = static_cast<Index>(std::lround((-3.0 + std::sqrt(9.0 + 8.0 * n)) / 2.0));
  return d >= 0 && natural_size_for(d) == n ? d : -1;
}

Vector GaussianFull::pack(const Vector& v, const Matrix& m, double diagonal_factor,
                          double offdiagonal_factor) {
  const Index d = v.size();
  Vector out(natural_size_for(d));
  out.head(d) = v;
  out.segment(d, d) = diagonal_factor * m.diagonal();
  Index k = 2 * d;
  for (Index j = 0; j < d; ++j)
    for (Index i = j + 1; i < d; ++i) out[k++] = offdiagonal_factor * m(i, j);
  return out;
}

Matrix GaussianFull::unpack_matrix(const Vector& packed, Index d, double diagonal_factor,
                                   double offdiagonal_factor) {
  Matrix m(d, d);
  m.diagonal() = packed.segment(d, d) / diagonal_factor;
  Index k = 2 * d;
  for (Index j = 0; j < d; ++j)
    for (Index i = j + 1; i < d; ++i) m(i, j) = m(j, i) = packed[k++] / offdiagonal_factor;
  return m;
}

Vector GaussianFull::natural() const {
  return natural_from(precision_times(mean), precision.matrix());
}

Vector GaussianFull::natural_from(const Vector& precision_times_mean, const Matrix& precision) {
  return pack(precision_times_mean, precision, -0.5, -1.0);
}

Matrix GaussianFull::precision_from_natural(const Vector& lambda) {
  return unpack_matrix(lambda, packed_dimension(lambda.size(), "natural"), -0.5, -1.0);
}

Vector GaussianFull::expectation() const {
  const Matrix second = covariance() + mean * mean.transpose();
  return pack(mean, second, 1.0, 1.0);
}

bool GaussianFull::natural_is_valid(const Vector& lambda) {
  const Index d = dimension_for_natural_size(lambda.size());
  if (d < 0 || !lambda.allFinite()) return false;
  return positive_definite(Eigen::LLT<Matrix>(unpack_matrix(lambda, d, -0.5, -1.0)));
}

GaussianFull GaussianFull::from_natural(const Vector& lambda) {
  const Index d = packed_dimension(lambda.size(), "natural");
  check_all_finite("GaussianFull", "the natural parameter", lambda);
  const Eigen::LLT<Matrix> llt(unpack_matrix(lambda, d, -0.5, -1.0));
  check(positive_definite(llt),
        "GaussianFull: the natural parameter encodes a precision matrix S that is not positive "
        "definite.");
  return GaussianFull(llt.solve(lambda.head(d)), CholeskyFactor::from_lower(llt.matrixL()));
}

GaussianFull GaussianFull::from_expectation(const Vector& mu) {
  const Index d = packed_dimension(mu.size(), "expectation");
  check_all_finite("GaussianFull", "the expectation parameter", mu);
  const Vector m = mu.head(d);
  const Matrix cov = unpack_matrix(mu, d, 1.0, 1.0) - m * m.transpose();
  const Eigen::LLT<Matrix> llt(cov);
  check(positive_definite(llt),
        "GaussianFull: the expectation parameter gives a covariance E[xx^T] - mm^T that is not "
        "positive definite.");
  Matrix s = llt.solve(Matrix(Matrix::Identity(d, d)));
  s = 0.5 * (s + s.transpose()).eval();
  return GaussianFull(m, s);
}

double GaussianFull::log_partition() const {
  return 0.5 * (precision.lower().transpose() * mean).squaredNorm() -
         0.5 * precision.log_determinant();
}

double GaussianFull::entropy() const {
  return 0.5 * (static_cast<double>(mean.size()) * (1.0 + std::log(2.0 * std::numbers::pi)) -
                precision.log_determinant());
}

double GaussianFull::kl(const GaussianFull& other) const {
  check(other.mean.size() == mean.size(), "GaussianFull::kl: the dimensions differ.");
  // tr(S_o Σ) = ‖L⁻¹ L_o‖²_F with S = LLᵀ, S_o = L_o L_oᵀ.
  const Matrix y = precision.lower().triangularView<Eigen::Lower>().solve(other.precision.lower());
  const double quad = (other.precision.lower().transpose() * (other.mean - mean)).squaredNorm();
  return 0.5 * (y.squaredNorm() + quad - static_cast<double>(mean.size()) +
                precision.log_determinant() - other.precision.log_determinant());
}

double GaussianFull::log_density(const Vector& x) const {
  check(x.size() == mean.size(), "GaussianFull::log_density: the point has the wrong length.");
  return -0.5 * (precision.lower().transpose() * (x - mean)).squaredNorm() +
         0.5 * precision.log_determinant() -
         0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
}

Vector GaussianFull::sufficient_statistic(const Vector& x) const {
  return pack(x, x * x.transpose(), 1.0, 1.0);
}

double GaussianFull::log_base_measure(const Vector&) const {
  return -0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
}

Vector GaussianFull::sample_from_noise(const Vector& eps) const {
  check(eps.size() == mean.size(),
        "GaussianFull::sample_from_noise: the noise has the wrong length.");
  return mean + precision.solve_upper(eps);
}

Vector GaussianFull::precision_times(const Vector& v) const {
  return precision.lower() * (precision.lower().transpose() * v);
}

}  // namespace blr
