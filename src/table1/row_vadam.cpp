// Table 1: Vadam (research/algorithms.md §5) — its first-step oracle and a plain Vadam.
#include "blr/algorithms/vadam.hpp"
#include "blr/model/quadratic.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

Table1Row row_vadam() {
  Table1Row row{"vadam", "Gaussian, diagonal", "MC, Ĥ ≈ ĝ², √ scaling", "Vadam (Khan et al. 2018)",
                "§5 first-step oracle; logistic n=200 d=5, 50 steps", "include/blr/algorithms/vadam.hpp", {}};
  row.check = [] {
    // Oracle: N=100, λp=1, μ0=1, loss θ² (mean), ε=0.5 ⇒ θ=1.5, ĝ=3, μ1=0.999, precision 1.9.
    VadamOptions o;
    o.ess = 100.0;
    const Vadam vadam = make_vadam(o);
    const DiagonalQuadratic mean_loss(Vector::Constant(1, 2.0), Vector::Zero(1));
    auto state = init(vadam_initial(Vector::Ones(1), o));
    step(state, vadam.estimator.estimate_with_noise(state.q, mean_loss, {Vector::Constant(1, 0.5)}),
         vadam.policy);
    double deviation = std::max(std::abs(state.q.mean[0] - 0.999),
                                std::abs(vadam_posterior_precision(state.q, o)[0] - 1.9));
    // Plain Vadam on logistic regression (mean loss = sum loss / N).
    const Index n = 200, d = 5;
    const auto sum_loss = synthetic_logistic(n, d, 0.0, 40);
    struct MeanLoss {
      const LogisticRegression& sum;
      double n;
      Index dimension() const { return sum.dimension(); }
      double value(const Vector& t) const { return sum.value(t) / n; }
      Vector gradient(const Vector& t) const { return sum.gradient(t) / n; }
    } loss{sum_loss, static_cast<double>(n)};
    VadamOptions p;
    p.lr = 0.05;
    p.ess = static_cast<double>(n);
    p.prec_init = 10.0;
    const Vadam method = make_vadam(p);
    Rng rng(41), plain_rng(41);
    auto vstate = init(vadam_initial(Vector::Zero(d), p));
    const double lt = p.prior_precision / p.ess;
    Vector mu = Vector::Zero(d), m = Vector::Zero(d);
    Vector s = Vector::Constant(d, (p.prec_init - p.prior_precision) / p.ess);
    for (int t = 1; t <= 50; ++t) {
      method.step(vstate, loss, rng);
      const Vector theta = mu + plain_rng.normal_vector(d).cwiseQuotient(
                                    (p.ess * s.array() + p.prior_precision).sqrt().matrix());
      const Vector g = loss.gradient(theta);
      m = p.beta1 * m + (1 - p.beta1) * (g + lt * mu);
      s = p.beta2 * s + (1 - p.beta2) * g.cwiseAbs2();
      const Vector m_hat = m / (1 - std::pow(p.beta1, t));
      const Vector s_hat = s / (1 - std::pow(p.beta2, t));
      mu -= p.lr * m_hat.cwiseQuotient((s_hat.cwiseSqrt().array() + lt).matrix());
      deviation = std::max({deviation, max_abs_diff(vstate.q.mean, mu), max_abs_diff(vstate.q.precision, s)});
    }
    return ReductionResult{deviation, kDeterministicTolerance, "oracle μ₁, precision; 50 plain iterates"};
  };
  return row;
}

}  // namespace blr::detail
