// Boost.Math's digamma and trigamma behind plain functions (keeps Boost out of the headers).
#include "blr/family/special.hpp"

#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

#include "blr/core/error.hpp"

namespace blr {

double digamma(double x) {
  check(x > 0 && std::isfinite(x),
        fmt::format("digamma needs a positive finite argument; got {}.", x));
  return boost::math::digamma(x);
}

double trigamma(double x) {
  check(x > 0 && std::isfinite(x),
        fmt::format("trigamma needs a positive finite argument; got {}.", x));
  return boost::math::trigamma(x);
}

double inverse_digamma(double y) {
  check(std::isfinite(y), fmt::format("inverse_digamma needs a finite argument; got {}.", y));
  // Minka (2000), "Estimating a Dirichlet distribution", App. C: start, then Newton on ψ(x) − y.
  // ψ is increasing and concave, so Newton from this start converges monotonically.
  constexpr double kEulerGamma = 0.57721566490153286061;
  double x = y >= -2.22 ? std::exp(y) + 0.5 : -1.0 / (y + kEulerGamma);
  for (int it = 0; it < 100; ++it) {
    const double step = (boost::math::digamma(x) - y) / boost::math::trigamma(x);
    double next = x - step;
    if (next <= 0) next = 0.5 * x;  // never leave the domain
    const bool done = std::abs(next - x) <= 1e-15 * x;
    x = next;
    if (done) break;
  }
  return x;
}

Vector dirichlet_from_expected_log(const Vector& mu) {
  const Index k = mu.size();
  check(k >= 2, "Dirichlet: there must be at least two components.");
  check(mu.allFinite(), "Dirichlet: the expectation parameter E[log x] must be finite.");
  const double mass = mu.array().exp().sum();
  check(mass < 1.0, fmt::format("Dirichlet: the expectation parameter E[log x] needs "
                                "sum_k exp(E[log x_k]) < 1 (Jensen); it is {}.",
                                mass));
  // Per-observation log-likelihood f(α) = log Γ(α₀) − Σ log Γ(α_k) + Σ (α_k − 1) μ_k is concave;
  // its maximiser solves ψ(α_k) − ψ(α₀) = μ_k.
  auto objective = [&](const Vector& a) {
    double f = std::lgamma(a.sum());
    for (Index j = 0; j < k; ++j) f += (a[j] - 1.0) * mu[j] - std::lgamma(a[j]);
    return f;
  };
  // Start: the fixed point α_k ← ψ⁻¹(ψ(α₀) + μ_k) (Minka's eq. 9) from a moment-matching guess.
  Vector alpha = (mu.array().exp() / mass).matrix();
  for (int it = 0; it < 20; ++it) {
    const double psi0 = boost::math::digamma(alpha.sum());
    for (Index j = 0; j < k; ++j) alpha[j] = inverse_digamma(psi0 + mu[j]);
  }
  for (int it = 0; it < 200; ++it) {
    const double a0 = alpha.sum();
    Vector g(k), q(k);
    for (Index j = 0; j < k; ++j) {
      g[j] = boost::math::digamma(a0) - boost::math::digamma(alpha[j]) + mu[j];
      q[j] = -boost::math::trigamma(alpha[j]);
    }
    if (g.cwiseAbs().maxCoeff() <= 1e-14 * (1.0 + mu.cwiseAbs().maxCoeff())) return alpha;
    // Hessian diag(q) + z·11ᵀ; Newton direction H⁻¹g by Sherman–Morrison (Minka's eq. 14–15).
    const double z = boost::math::trigamma(a0);
    const double b = (g.array() / q.array()).sum() / (1.0 / z + (1.0 / q.array()).sum());
    const Vector direction = ((g.array() - b) / q.array()).matrix();
    const double f0 = objective(alpha);
    double t = 1.0;
    Vector next = alpha - direction;
    while ((next.array() <= 0).any() || objective(next) < f0 - 1e-15 * std::abs(f0)) {
      t *= 0.5;
      if (t < 1e-12) break;
      next = alpha - t * direction;
    }
    if (t < 1e-12) break;  // no acceptable step left: α is as good as double allows
    const bool tiny = (next - alpha).cwiseAbs().maxCoeff() <= 1e-15 * alpha.maxCoeff();
    alpha = next;
    if (tiny) break;
  }
  // Accept when the moment equations hold to a relative 1e-9 (the Newton loop may stop on a
  // step too small to change α before the strict test above).
  const double psi0 = boost::math::digamma(alpha.sum());
  double worst = 0.0;
  for (Index j = 0; j < k; ++j)
    worst = std::max(worst, std::abs(boost::math::digamma(alpha[j]) - psi0 - mu[j]));
  check(alpha.allFinite() && (alpha.array() > 0).all() &&
            worst <= 1e-9 * (1.0 + mu.cwiseAbs().maxCoeff()),
        fmt::format("Dirichlet: could not solve for the concentration from the expectation "
                    "parameter (residual {}).",
                    worst));
  return alpha;
}

double gamma_shape_from_log_gap(double gap) {
  check(gap > 0 && std::isfinite(gap),
        fmt::format("Gamma: the expectation parameter needs E[log x] < log E[x]; the gap is {}.",
                    gap));
  // g(α) = log α − ψ(α) − gap is decreasing from +∞ to −gap. Bracket the root, then Newton with
  // bisection as a safeguard. Start: Minka's (2002) approximation.
  double lo = 0.0, hi = std::numeric_limits<double>::infinity();
  double a = (3.0 - gap + std::sqrt((gap - 3.0) * (gap - 3.0) + 24.0 * gap)) / (12.0 * gap);
  for (int it = 0; it < 200; ++it) {
    const double g = std::log(a) - boost::math::digamma(a) - gap;
    if (g > 0)
      lo = a;
    else
      hi = a;
    const double slope = 1.0 / a - boost::math::trigamma(a);  // < 0
    double next = a - g / slope;
    if (!(next > lo && next < hi)) next = std::isfinite(hi) ? 0.5 * (lo + hi) : 2.0 * a;
    if (std::abs(next - a) <= 1e-15 * a) return next;
    a = next;
  }
  const double residual = std::log(a) - boost::math::digamma(a) - gap;
  check(std::abs(residual) <= 1e-10 * gap,
        fmt::format("Gamma: could not solve for the shape (residual {}).", residual));
  return a;
}

}  // namespace blr
