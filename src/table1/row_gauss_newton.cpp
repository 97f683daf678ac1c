// Table 1: OGN (eqs. 44–45) and VOGN (eq. 46) against plain versions on the same noise.
#include "blr/algorithms/ogn_vogn.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

namespace {

/// Plain OGN/VOGN: ĥ = (N/M)Σ g_i² + δ, s ← (1−β)s + βĥ, θ ← θ − α(ĝ + δθ)/s, gradients at θ + ε/√s.
ReductionResult compare_gauss_newton(bool sample, std::uint64_t seed) {
  const auto loss = synthetic_logistic(200, 5, 0.0, seed);
  VognOptions options;  // eqs. 44–46: no momentum, no damping; the prior δ = 1 in sum units
  options.lr = 0.2;
  options.ess = 200.0;
  options.curvature_rate = 0.1;
  options.prior_precision = 1.0;
  options.beta1 = 0.0;
  const auto method = sample ? make_vogn(options) : make_ogn(options);
  Rng rng(20), plain_rng(20), batches(21);
  auto state = init(GaussianDiag(Vector::Zero(5), Vector::Constant(5, 50.0)));
  Vector m = Vector::Zero(5), s = Vector::Constant(5, 50.0);
  double deviation = 0.0;
  for (int t = 0; t < 60; ++t) {
    std::vector<Index> rows;
    for (int i = 0; i < 20; ++i) rows.push_back(static_cast<Index>(batches.below(200)));
    const auto minibatch = loss.with_rows(rows);
    method.step(state, minibatch, rng);
    Vector theta = m;
    if (sample) theta += plain_rng.normal_vector(5).cwiseQuotient(s.cwiseSqrt());
    const Matrix per_example = minibatch.per_example_gradients(theta);
    const double scale = 200.0 / 20.0;
    const Vector g = scale * per_example.colwise().sum().transpose();
    const Vector h = scale * per_example.array().square().colwise().sum().transpose() + 1.0;
    s = 0.9 * s + 0.1 * h;
    m -= 0.2 * (g + 1.0 * m).cwiseQuotient(s);
    deviation = std::max({deviation, max_abs_diff(state.q.mean, m), max_abs_diff(state.q.precision, s) / s.norm()});
  }
  return ReductionResult{deviation, kDeterministicTolerance, "60 iterates of m and s"};
}

}  // namespace

Table1Row row_ogn() {
  Table1Row row{"ogn", "Gaussian, diagonal", "delta + Gauss-Newton (eq. 45)", "online Gauss-Newton",
                "logistic regression n=200 d=5, M=20, 60 steps", "include/blr/algorithms/ogn_vogn.hpp", {}};
  row.check = [] { return compare_gauss_newton(false, 22); };
  return row;
}

Table1Row row_vogn() {
  Table1Row row{"vogn", "Gaussian, diagonal", "MC (1 sample) + Gauss-Newton", "VOGN (weight perturbation)",
                "logistic regression n=200 d=5, M=20, 60 steps", "include/blr/algorithms/ogn_vogn.hpp", {}};
  row.check = [] { return compare_gauss_newton(true, 23); };
  return row;
}

}  // namespace blr::detail
