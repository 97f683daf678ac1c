#include "blr/family/special.hpp"
#include "blr/inference/mixture_vi.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/inference/gaussian_natural.hpp"
#include "blr/rule/natural_step.hpp"

namespace blr::inference {
namespace {


struct Prepared {
  std::vector<Eigen::LLT<Matrix>> llt;
  std::vector<double> log_norm;  ///< log π_k − (d/2) log 2π + ½ log|S_k|
};

Prepared prepare(const Vector& weights, const std::vector<GaussianComponent>& comps) {
  Prepared p;
  for (std::size_t k = 0; k < comps.size(); ++k) {
    p.llt.emplace_back(comps[k].precision);
    check(p.llt.back().info() == Eigen::Success,
          fmt::format("The precision of mixture component {} is not positive definite.", k + 1));
    const Matrix l = p.llt.back().matrixL();
    p.log_norm.push_back(std::log(weights[k]) -
                         0.5 * static_cast<double>(comps[k].mean.size()) * kLog2Pi +
                         l.diagonal().array().log().sum());
  }
  return p;
}

/// log π_j N(θ | m_j, S_j⁻¹) for every j.
Vector component_logs(const std::vector<GaussianComponent>& comps, const Prepared& p,
                      const Vector& theta) {
  Vector out(comps.size());
  for (std::size_t j = 0; j < comps.size(); ++j) {
    const Vector diff = theta - comps[j].mean;
    out[j] = p.log_norm[j] - 0.5 * diff.dot(comps[j].precision * diff);
  }
  return out;
}

double lse(const Vector& v) {
  const double mx = v.maxCoeff();
  return mx + std::log((v.array() - mx).exp().sum());
}

void derivatives(const std::vector<GaussianComponent>& comps, const Prepared& p,
                 const Vector& theta, Vector& grad, Matrix& hess) {
  const Index d = theta.size();
  const Vector logs = component_logs(comps, p, theta);
  const Vector r = (logs.array() - lse(logs)).exp();
  grad = Vector::Zero(d);
  hess = Matrix::Zero(d, d);
  for (std::size_t j = 0; j < comps.size(); ++j) {
    const Vector g = comps[j].precision * (comps[j].mean - theta);  // S_j(m_j − θ)
    grad += r[j] * g;
    hess += r[j] * (g * g.transpose() - comps[j].precision);
  }
  hess -= grad * grad.transpose();  // Σ_j r_j Σ_i r_i A_ij = ḡḡᵀ
}

}  // namespace

const OptionTable<MixtureViOptions>& MixtureViOptions::table() {
  using O = MixtureViOptions;
  static const OptionTable<O> t =
      OptionTable<O>("mixture VI")
          .integer("iterations", &O::iterations, Range::between(0, 1e9), "BLR steps (eqs. 29–30)")
          .number("rho", &O::rho, Range::between(0, 1, true), "initial step size ρ")
          .number("decay_time", &O::decay_time, Range::positive(),
                  "t₀ of the decay ρ_t = ρ/(1 + t/t₀)^κ")
          .number("decay_power", &O::decay_power, Range::at_least(0), "κ of that decay")
          .integer("mc_samples", &O::samples, Range::between(1, 1e9),
                   "Monte Carlo draws per component and iteration")
          .integer("elbo_samples", &O::elbo_samples, Range::between(2, 1e9),
                   "draws per component for the final ELBO estimate")
          .integer("seed", &O::seed, Range::between(0, 9.2e18), "seed of the Monte Carlo draws");
  return t;
}

void MixtureViOptions::validate() const {
  table().validate(*this);
}

double mixture_log_density(const Vector& weights, const std::vector<GaussianComponent>& comps,
                           const Vector& theta) {
  return lse(component_logs(comps, prepare(weights, comps), theta));
}

void mixture_log_density_derivatives(const Vector& weights,
                                     const std::vector<GaussianComponent>& comps,
                                     const Vector& theta, Vector& gradient, Matrix& hessian) {
  derivatives(comps, prepare(weights, comps), theta, gradient, hessian);
}

void mixture_elbo(const LossFunctions& loss, const Vector& weights,
                  const std::vector<GaussianComponent>& comps, int samples, Rng& rng, double& elbo,
                  double& se) {
  const Prepared p = prepare(weights, comps);
  elbo = 0;
  double var = 0;
  for (std::size_t k = 0; k < comps.size(); ++k) {
    const Matrix l = p.llt[k].matrixL();
    double s1 = 0, s2 = 0;
    for (int s = 0; s < samples; ++s) {
      const Vector theta = comps[k].mean + l.transpose().triangularView<Eigen::Upper>().solve(
                                               rng.normal_vector(comps[k].mean.size()));
      const double v = -loss.value(theta) - lse(component_logs(comps, p, theta));
      s1 += v;
      s2 += v * v;
    }
    const double mean = s1 / samples, vk = std::max(0.0, s2 / samples - mean * mean);
    elbo += weights[k] * mean;
    var += weights[k] * weights[k] * vk / samples;
  }
  se = std::sqrt(var);
}

MixtureViResult mixture_vi(const LossFunctions& loss, const Vector& weights,
                           std::vector<GaussianComponent> comps, const MixtureViOptions& options) {
  options.validate();
  const Index k = static_cast<Index>(comps.size()), d = loss.dimension;
  check(k >= 1 && weights.size() == k, "Mixture VI needs one weight per component.");
  check((weights.array() > 0).all() && std::abs(weights.sum() - 1) < 1e-10,
        "Mixture weights must be positive and sum to 1.");
  for (const auto& c : comps)
    check(c.mean.size() == d && c.precision.rows() == d && c.precision.cols() == d,
          fmt::format("Every component must have dimension {}.", d));
  Rng rng(options.seed);
  MixtureViResult r;
  r.weights = weights;
  for (int t = 0; t < options.iterations; ++t) {
    const double rho0 = options.rho / std::pow(1.0 + t / options.decay_time, options.decay_power);
    const Prepared p = prepare(weights, comps);  // all components move from the same q_t
    std::vector<GaussianComponent> next = comps;
    for (Index c = 0; c < k; ++c) {
      const Matrix l = p.llt[c].matrixL();
      Vector ghat = Vector::Zero(d);
      Matrix hhat = Matrix::Zero(d, d);
      for (int s = 0; s < options.samples; ++s) {
        const Vector theta = comps[c].mean + l.transpose().triangularView<Eigen::Upper>().solve(
                                                 rng.normal_vector(d));
        Vector gq;
        Matrix hq;
        derivatives(comps, p, theta, gq, hq);
        ghat += loss.gradient(theta) + gq;
        hhat += loss.hessian(theta) + hq;
      }
      ghat /= options.samples;
      hhat /= options.samples;
      check_finite(ghat, fmt::format("mixture component {} gradient", c + 1), t + 1);
      const Matrix& s = comps[c].precision;
      const Matrix s_target = s + 0.5 * (hhat + hhat.transpose());
      const Vector lambda = pack_full(s * comps[c].mean, s);
      const Vector target = pack_full(s_target * comps[c].mean - ghat, s_target);
      double rho = rho0;
      for (int tries = 0; tries < 30; ++tries, rho *= 0.5) {
        const Vector cand = natural_step_towards(lambda, target, rho);
        const Matrix sc = full_precision(cand, d);
        const Eigen::LLT<Matrix> llt(sc);
        if (llt.info() != Eigen::Success) continue;
        next[c].precision = sc;
        next[c].mean = llt.solve(full_sm(cand, d));
        break;
      }
    }
    comps = std::move(next);
    r.iterations = t + 1;
  }
  r.components = comps;
  mixture_elbo(loss, weights, comps, options.elbo_samples, rng, r.elbo, r.elbo_se);
  return r;
}

}  // namespace blr::inference
