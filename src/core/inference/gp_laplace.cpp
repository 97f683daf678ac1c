#include "blr/inference/gp_laplace.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/gp_regression.hpp"

namespace blr::inference {
namespace {

/// Ψ(a) = −½ aᵀf + log p(y | f) at f = Ka.
double objective(const Vector& a, const Vector& f, const Vector& y, Likelihood lik, double beta) {
  double s = -0.5 * a.dot(f);
  for (Index i = 0; i < f.size(); ++i) s += site_terms(lik, y[i], f[i], beta).value;
  return s;
}

void check_responses(const Vector& y, Likelihood lik) {
  for (Index i = 0; i < y.size(); ++i) {
    switch (lik) {
      case Likelihood::logistic:
        check(y[i] == 0.0 || y[i] == 1.0, "GP classification needs 0/1 responses; row {} holds {}.",
              i + 1, y[i]);
        break;
      case Likelihood::poisson:
        check(y[i] >= 0 && std::floor(y[i]) == y[i] && std::isfinite(y[i]),
              "A Poisson GP needs non-negative integer counts; row {} holds {}.", i + 1, y[i]);
        break;
      case Likelihood::gaussian:
        check(std::isfinite(y[i]), "A Gaussian GP needs finite responses; row {} holds {}.", i + 1,
              y[i]);
        break;
    }
  }
}

}  // namespace

const OptionTable<GpLaplaceOptions>& GpLaplaceOptions::table() {
  using O = GpLaplaceOptions;
  static const OptionTable<O> t =
      OptionTable<O>("GP Laplace")
          .integer("max_iterations", &O::max_iterations, Range::between(1, 1e9),
                   "Newton steps at most (GPML Alg. 3.1)")
          .number("tolerance", &O::tolerance, Range::positive(),
                  "stop when max|∇ log p(y | Ka) − a| falls below this");
  return t;
}

void GpLaplaceOptions::validate() const {
  table().validate(*this);
}

bool gp_b_cholesky(const Matrix& kernel, const Vector& sqrt_w, Matrix& lower) {
  Matrix b = sqrt_w.asDiagonal() * kernel * sqrt_w.asDiagonal();
  b.diagonal().array() += 1.0;
  const Eigen::LLT<Matrix> llt(b);
  if (llt.info() != Eigen::Success) return false;
  lower = llt.matrixL();
  return true;
}

Matrix gp_r_matrix(const Matrix& lower, const Vector& sqrt_w) {
  const Matrix m = lower.triangularView<Eigen::Lower>().solve(Matrix(sqrt_w.asDiagonal()));
  return m.transpose() * m;
}

double site_third_derivative(Likelihood likelihood, double /*y*/, double f) {
  switch (likelihood) {
    case Likelihood::logistic: {
      const double p = sigmoid(f);  // ∂² = −p(1 − p), ∂p/∂f = p(1 − p)
      return -p * (1.0 - p) * (1.0 - 2.0 * p);
    }
    case Likelihood::poisson:
      return -std::exp(f);
    case Likelihood::gaussian:
      return 0.0;
  }
  return 0.0;
}

GpLaplaceResult gp_laplace(const Matrix& kernel, const Vector& y, Likelihood likelihood,
                           const GpLaplaceOptions& options, const Vector* start_a,
                           double noise_precision) {
  options.validate();
  const Index n = kernel.rows();
  check(n >= 1 && kernel.cols() == n && y.size() == n,
        "GP inference needs a square kernel matrix with one row per response.");
  check(kernel.allFinite(), "The GP kernel matrix holds a value that is not finite.");
  check_positive("noise-precision", noise_precision);
  check_responses(y, likelihood);

  GpLaplaceResult r;
  Vector a = Vector::Zero(n);
  if (start_a) {
    check(start_a->size() == n,
          "The starting vector of the Laplace mode search has the wrong length.");
    a = *start_a;
  }
  Vector f = kernel * a;
  double psi = objective(a, f, y, likelihood, noise_precision);
  if (start_a) {  // a warm start worse than the prior mean is dropped (as GPML's code does)
    const double psi0 = objective(Vector::Zero(n), Vector::Zero(n), y, likelihood, noise_precision);
    if (!(psi >= psi0)) {
      a.setZero();
      f.setZero();
      psi = psi0;
    }
  }
  Vector grad(n), w(n);
  auto derivatives = [&](const Vector& at) {
    for (Index i = 0; i < n; ++i) {
      const SiteTerms t = site_terms(likelihood, y[i], at[i], noise_precision);
      grad[i] = t.gradient;
      w[i] = std::max(-t.hessian, 0.0);
    }
  };
  Matrix lower;
  for (int it = 0;; ++it) {
    derivatives(f);
    r.iterations = it;
    if ((grad - a).cwiseAbs().maxCoeff() <= options.tolerance) {
      r.converged = true;
      break;
    }
    if (it == options.max_iterations) break;
    // One Newton step (Alg. 3.1, lines 4–8) in the coordinates a.
    const Vector sw = w.cwiseSqrt();
    check(gp_b_cholesky(kernel, sw, lower),
          "GP Laplace step {}: the kernel matrix is not positive semi-definite.", it + 1);
    const Matrix& lc = lower;
    const auto l = lc.triangularView<Eigen::Lower>();
    const Vector rhs = w.cwiseProduct(f) + grad;
    const Vector a_newton =
        rhs - sw.cwiseProduct(l.transpose().solve(l.solve(sw.cwiseProduct(kernel * rhs))));
    const Vector step = a_newton - a;
    double t = 1.0;
    bool accepted = false;
    for (; t >= 1e-10; t *= 0.5) {
      const Vector a_t = a + t * step, f_t = kernel * a_t;
      const double psi_t = objective(a_t, f_t, y, likelihood, noise_precision);
      if (std::isfinite(psi_t) && psi_t >= psi - 1e-12 * std::abs(psi)) {
        a = a_t;
        f = f_t;
        psi = psi_t;
        accepted = true;
        break;
      }
    }
    if (!accepted) break;  // no ascent left: Ψ is flat to rounding here
  }
  // The approximation at the mode (Alg. 3.2, eq. 3.32).
  const Vector sw = w.cwiseSqrt();
  check(gp_b_cholesky(kernel, sw, r.b_cholesky),
        "GP Laplace: the kernel matrix is not positive semi-definite.");
  r.mode = f;
  r.a = a;
  r.w = w;
  const Matrix c =
      r.b_cholesky.triangularView<Eigen::Lower>().solve(Matrix(sw.asDiagonal() * kernel));
  r.variance = (kernel.diagonal() - c.colwise().squaredNorm().transpose()).cwiseMax(0.0);
  r.log_likelihood = psi + 0.5 * a.dot(f);
  r.log_marginal_likelihood = psi - r.b_cholesky.diagonal().array().log().sum();
  check(std::isfinite(r.log_marginal_likelihood),
        "GP Laplace: the log marginal likelihood is not finite.");
  return r;
}

void gp_laplace_predict_latent(const GpLaplaceResult& fit, const Matrix& cross,
                               const Vector& self_diag, Vector& mean, Vector& variance) {
  check(cross.rows() == fit.a.size() && self_diag.size() == cross.cols(),
        "GP prediction: the cross-kernel must have one row per training input.");
  mean = cross.transpose() * fit.a;
  const Matrix v = fit.b_cholesky.triangularView<Eigen::Lower>().solve(
      Matrix(fit.w.cwiseSqrt().asDiagonal() * cross));
  variance = (self_diag - v.colwise().squaredNorm().transpose()).cwiseMax(0.0);
}

Vector gp_laplace_gradient(const Matrix& kernel, const GpLaplaceResult& fit, const Vector& y,
                           Likelihood likelihood, const std::vector<Matrix>& dk,
                           double noise_precision) {
  const Index n = kernel.rows();
  check(fit.a.size() == n && y.size() == n,
        "GP Laplace gradient: the fit does not match the kernel matrix.");
  const Matrix r = gp_r_matrix(fit.b_cholesky, fit.w.cwiseSqrt());  // W^½B⁻¹W^½
  Vector s2(n), grad(n);
  for (Index i = 0; i < n; ++i) {
    s2[i] = 0.5 * fit.variance[i] * site_third_derivative(likelihood, y[i], fit.mode[i]);
    grad[i] = site_terms(likelihood, y[i], fit.mode[i], noise_precision).gradient;
  }
  Vector g(static_cast<Index>(dk.size()));
  for (std::size_t j = 0; j < dk.size(); ++j) {
    check(dk[j].rows() == n && dk[j].cols() == n,
          "GP Laplace gradient: a kernel derivative has the wrong size.");
    const Vector b = dk[j] * grad;
    const Vector s3 = b - kernel * (r * b);
    g[static_cast<Index>(j)] = evidence_gradient_term(fit.a, r, dk[j]) + s2.dot(s3);
  }
  return g;
}

}  // namespace blr::inference
