// A core preset on a loss the user writes: IVON (family × estimator × policy from make_ivon) on a
// Poisson regression that is not one of blr's models. It only needs dimension, value and gradient
// (the reparameterisation estimator asks for nothing else). Exits non-zero unless IVON's mean
// lands on the MAP estimate, found here by Newton's method written out in full.
#include <cmath>
#include <Eigen/Dense>

#include <cstdio>

#include "blr/algorithms/ivon.hpp"

namespace {

/// ℓ̄(θ) = Σ_i [exp(x_iᵀθ) − y_i x_iᵀθ] + (δ/2)|θ|²: Poisson log-likelihood with a Gaussian prior.
struct PoissonRegression {
  blr::Matrix x;
  blr::Vector y;
  double prior_precision = 1.0;

  blr::Index dimension() const { return x.cols(); }
  double value(const blr::Vector& theta) const {
    const blr::Vector eta = x * theta;
    return eta.array().exp().sum() - y.dot(eta) + 0.5 * prior_precision * theta.squaredNorm();
  }
  blr::Vector gradient(const blr::Vector& theta) const {
    const blr::Vector rate = (x * theta).array().exp();
    return x.transpose() * (rate - y) + prior_precision * theta;
  }
  blr::Matrix hessian(const blr::Vector& theta) const {
    const blr::Vector rate = (x * theta).array().exp();
    return x.transpose() * rate.asDiagonal() * x +
           prior_precision * blr::Matrix::Identity(x.cols(), x.cols());
  }
};

}  // namespace

int main() {
  const blr::Index n = 2000;
  PoissonRegression loss{blr::Matrix(n, 2), blr::Vector(n)};
  blr::Rng data(11);
  for (blr::Index i = 0; i < n; ++i) {
    loss.x.row(i) << 1.0, data.normal();
    const double rate = std::exp(0.5 - 0.3 * loss.x(i, 1));
    double count = 0, t = -std::log(data.uniform());  // Poisson draw by exponential arrivals
    while (t < rate) ++count, t -= std::log(data.uniform());
    loss.y[i] = count;
  }

  blr::Vector map = blr::Vector::Zero(2);  // Newton's method to the MAP estimate
  for (int it = 0; it < 50; ++it) map -= loss.hessian(map).ldlt().solve(loss.gradient(map));
  const blr::Vector laplace_sd = loss.hessian(map).inverse().diagonal().cwiseSqrt();

  blr::IvonOptions options;
  options.lr = 0.05;
  options.ess = static_cast<double>(n);
  options.beta2 = 0.999;
  options.weight_decay = 0.0;  // the prior is in the user's loss
  const blr::Ivon ivon = blr::make_ivon(options);
  auto state = blr::init(blr::ivon_initial(blr::Vector::Zero(2), options));
  blr::Rng rng(0);
  for (int t = 0; t < 4000; ++t) ivon.step(state, loss, rng);

  // IVON's mean is a stochastic estimate of the posterior mean, which the Laplace approximation
  // puts at the MAP; allow half a posterior standard deviation (the step noise is far smaller).
  const blr::Vector deviation = (state.q.mean - map).cwiseQuotient(laplace_sd);
  std::printf("IVON mean (%.4f, %.4f), MAP (%.4f, %.4f), deviation in posterior sd (%.3f, %.3f)\n",
              state.q.mean[0], state.q.mean[1], map[0], map[1], deviation[0], deviation[1]);
  return deviation.cwiseAbs().maxCoeff() < 0.5 ? 0 : 1;
}
