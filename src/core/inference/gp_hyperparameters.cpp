#include "blr/inference/gp_hyperparameters.hpp"

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/inference/gp_regression.hpp"

namespace blr::inference {
namespace {

/// Runs L-BFGS on −objective(θ); an evaluation that throws (a kernel matrix that is not positive
/// definite at extreme θ) counts as +∞, which the line search treats as too long a step.
GpLearned maximise(const std::function<GpEvidence(const Vector&)>& objective, const Vector& theta0,
                   const LbfgsOptions& options) {
  const GpEvidence first = objective(theta0);  // throws with the real reason if θ₀ is bad
  const Objective negative = [&](const Vector& theta, Vector& gradient) {
    try {
      const GpEvidence e = theta == theta0 ? first : objective(theta);
      gradient = -e.gradient;
      return -e.value;
    } catch (const Error&) {
      gradient = Vector::Constant(theta.size(), std::numeric_limits<double>::quiet_NaN());
      return std::numeric_limits<double>::infinity();
    }
  };
  GpLearned out;
  out.initial_value = first.value;
  const LbfgsResult r = lbfgs(negative, theta0, options);
  out.log_parameters = r.x;
  out.value = -r.value;
  out.gradient = -r.gradient;
  out.iterations = r.iterations;
  out.evaluations = r.evaluations;
  out.converged = r.converged;
  out.stop = r.stop;
  return out;
}

}  // namespace

void GpLearnOptions::validate() const {
  lbfgs.validate();
  laplace.validate();
  cvi.validate();
}

Vector gp_cvi_elbo_gradient(const Matrix& kernel, const GpcResult& fit,
                            const std::vector<Matrix>& dk) {
  const Index n = kernel.rows();
  check(fit.site_tau.size() == n && fit.mean.size() == n,
        "GP CVI gradient: the fit does not match the kernel matrix.");
  const Vector st = fit.site_tau.cwiseMax(0.0).cwiseSqrt();
  Matrix lower;
  check(gp_b_cholesky(kernel, st, lower), "GP CVI gradient: the fitted sites are invalid.");
  const Matrix r = gp_r_matrix(lower, st);                                 // T^½B⁻¹T^½
  const Vector alpha = fit.site_nu - fit.site_tau.cwiseProduct(fit.mean);  // K⁻¹m
  Vector g(static_cast<Index>(dk.size()));
  for (std::size_t j = 0; j < dk.size(); ++j)
    g[static_cast<Index>(j)] = evidence_gradient_term(alpha, r, dk[j]);
  return g;
}

GpEvidence gp_laplace_evidence(const Kernel& kernel, const Matrix& x, const Vector& y,
                               Likelihood likelihood, const GpLaplaceOptions& options,
                               Vector* warm_a) {
  const Matrix k = kernel.matrix(x, x);
  const GpLaplaceResult fit = gp_laplace(k, y, likelihood, options,
                                         warm_a && warm_a->size() == y.size() ? warm_a : nullptr);
  if (warm_a) *warm_a = fit.a;
  return {fit.log_marginal_likelihood,
          gp_laplace_gradient(k, fit, y, likelihood, kernel.gradients(x))};
}

GpEvidence gp_cvi_evidence(const Kernel& kernel, const Matrix& x, const Vector& y,
                           Likelihood likelihood, const CviOptions& options) {
  const Matrix k = kernel.matrix(x, x);
  const GpcResult fit = gp_cvi(k, y, likelihood, options);
  return {fit.elbo, gp_cvi_elbo_gradient(k, fit, kernel.gradients(x))};
}

GpEvidence gp_regression_evidence(const Kernel& kernel, double noise_variance, const Matrix& x,
                                  const Vector& y) {
  const Matrix k = kernel.matrix(x, x);
  const GprResult fit = gp_regression(k, y, noise_variance);
  auto dk = kernel.gradients(x);
  dk.push_back(noise_variance * Matrix::Identity(k.rows(), k.rows()));
  return {fit.log_marginal_likelihood, gp_regression_gradient(fit, dk)};
}

GpLearned learn_gpc_kernel(const Kernel& start, const Matrix& x, const Vector& y,
                           Likelihood likelihood, GpcMethod method, const GpLearnOptions& options) {
  options.validate();
  start.validate();
  Vector warm;  // the last Laplace mode starts the next search
  const auto objective = [&](const Vector& theta) {
    const Kernel k = start.with_log_parameters(theta);
    return method == GpcMethod::laplace
               ? gp_laplace_evidence(k, x, y, likelihood, options.laplace, &warm)
               : gp_cvi_evidence(k, x, y, likelihood, options.cvi);
  };
  GpLearned out = maximise(objective, start.log_parameters(), options.lbfgs);
  out.kernel = start.with_log_parameters(out.log_parameters);
  return out;
}

GpLearned learn_gpr_kernel(const Kernel& start, double noise_variance, const Matrix& x,
                           const Vector& y, const GpLearnOptions& options) {
  options.validate();
  start.validate();
  check_positive("noise-variance", noise_variance);
  const Vector kernel_theta = start.log_parameters();
  const Index n = kernel_theta.size();
  Vector theta0(n + 1);
  theta0 << kernel_theta, std::log(noise_variance);
  const auto objective = [&](const Vector& theta) {
    return gp_regression_evidence(start.with_log_parameters(theta.head(n)), std::exp(theta[n]), x,
                                  y);
  };
  GpLearned out = maximise(objective, theta0, options.lbfgs);
  out.kernel = start.with_log_parameters(out.log_parameters.head(n));
  out.noise_variance = std::exp(out.log_parameters[n]);
  return out;
}

}  // namespace blr::inference
