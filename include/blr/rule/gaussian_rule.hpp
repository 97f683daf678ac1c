// The BLR step for Gaussian candidates (Khan & Rue 2023, eq. 6 in the coordinates of eqs. 10–12):
//
//     S_{t+1} = (1 − ρ_S) S_t + ρ_S Ĥ  [+ (ρ_S²/2)(S_t − Ĥ)S_t⁻¹(S_t − Ĥ)]  [+ γ(S_t − S_{t−1})]
//     m_{t+1} = m_t − ρ_m P⁻¹ ĝ                                         [+ γ P⁻¹ S_{t−1}(m_t − m_{t−1})]
//
// with ĝ ≈ E_q[∇ℓ̄], Ĥ ≈ E_q[∇²ℓ̄] from an estimator, P = S_{t+1} (or S_t, or its debiased
// square root, see StepPolicy). With ρ_m = ρ_S this is exactly λ ← (1−ρ)λ − ρ∇_μE_q[ℓ̄] on
// λ = (Sm, −S/2) (proved equal to natural_step() by a test); the momentum terms are eq. 80
// written in (m, S): λ_{t+1} = … + γ(λ_t − λ_{t−1}) gives S_{t+1}m_{t+1} = S_{t+1}m_t − ρĝ +
// γS_{t−1}(m_t − m_{t−1}). (Eq. 81 of the paper prints the mean term without γ; we follow eq. 80.)
//
// One implementation serves the three Gaussian families: GaussianFixed (S never moves: gradient
// descent), GaussianDiag (elementwise), GaussianFull (Cholesky factor; Gauss–Newton curvature
// given as outer products is folded in by rank-one updates in O(d²) per example).
#pragma once

#include <cmath>
#include <type_traits>

#include "blr/core/cholesky.hpp"
#include "blr/core/error.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_fixed.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/rule/step_policy.hpp"
#include "blr/stage/gradient_averaging.hpp"
#include "blr/stage/pd_correction.hpp"
#include "blr/stage/preconditioner.hpp"

namespace blr {

template <class Q>
concept GaussianCandidate = std::is_same_v<Q, GaussianFixed> || std::is_same_v<Q, GaussianDiag> ||
                            std::is_same_v<Q, GaussianFull>;

/// Everything a run needs to resume exactly: q, the step counter, the gradient average and the
/// previous q (for natural momentum).
template <GaussianCandidate Q>
struct RuleState {
  Q q;
  long step = 0;              ///< completed steps
  Vector gradient_average;    ///< u (empty until used)
  Q previous;                 ///< q_{t−1} (valid when step > 0 and momentum is used)
  bool has_previous = false;
};

template <GaussianCandidate Q>
RuleState<Q> init(Q q0) {
  RuleState<Q> state;
  state.q = std::move(q0);
  return state;
}

/// What one step reports.
struct StepInfo {
  long step = 0;           ///< 1-based index of the step just taken
  double loss = 0.0;       ///< the estimator's loss value
  double mean_change = 0;  ///< max |m_{t+1} − m_t|
};

namespace detail {

inline void check_estimate(const GaussianEstimate& e, Index d, long step) {
  check(e.gradient.size() == d,
        fmt::format("Step {}: the estimator returned a gradient of length {} for a {}-dimensional "
                    "candidate.",
                    step, e.gradient.size(), d));
  check_finite(e.gradient, "gradient estimate", step);
}

/// m ← m − ρ_m·dir, plus the natural-momentum term γ P⁻¹ S_{t−1}(m_t − m_{t−1}).
template <class Solve, class PrevTimes>
Vector mean_update(const Vector& m, const Vector& direction, double rho_m, double gamma,
                   bool has_previous, const Vector& m_prev, Solve&& solve, PrevTimes&& prev_times) {
  Vector out = m - rho_m * direction;
  if (gamma != 0.0 && has_previous) out += gamma * solve(prev_times(m - m_prev));
  return out;
}

}  // namespace detail

/// One BLR step from an estimate. Throws blr::Error naming the step on invalid results.
template <GaussianCandidate Q>
StepInfo step(RuleState<Q>& state, const GaussianEstimate& estimate, const StepPolicy& policy) {
  const long t = state.step + 1;
  Q& q = state.q;
  const Index d = q.dimension();
  detail::check_estimate(estimate, d, t);
  const double rho_m = policy.mean_rate.at(state.step);
  const double rho_s = policy.precision_rate.at(state.step);
  const double delta = policy.prior_precision;
  const double gamma = policy.natural_momentum;

  Vector direction = policy.gradient_averaging > 0.0
                         ? stage::average_gradient(state.gradient_average, estimate.gradient,
                                                   policy.gradient_averaging,
                                                   policy.debias_gradient, t)
                         : estimate.gradient;
  if (delta != 0.0) direction += delta * q.mean;

  Vector new_mean;
  if constexpr (std::is_same_v<Q, GaussianFull>) {
    check(!policy.sqrt_scaling && !policy.debias_precision &&
              policy.clip_radius == std::numeric_limits<double>::infinity(),
          "Square-root scaling, precision debiasing and clipping are defined for diagonal "
          "Gaussians only.");
    CholeskyFactor old_precision = q.precision;
    CholeskyFactor new_precision = q.precision;
    if (rho_s > 0.0 && !estimate.curvature.empty()) {
      Curvature h = estimate.curvature;
      h.add_identity(delta, d);
      const bool rank_one = h.kind == Curvature::Kind::outer && h.shift.size() == 0 &&
                            !policy.pd_correction && gamma == 0.0 && rho_s < 1.0;
      if (rank_one) {
        new_precision.scale(1.0 - rho_s);
        const double c = std::sqrt(rho_s * h.scale);
        for (Index i = 0; i < h.factors.rows(); ++i)
          new_precision.rank_one_update(c * h.factors.row(i).transpose());
      } else {
        const Matrix s = q.precision.matrix();
        Matrix next = stage::precision_step_dense(
            s, h.to_dense(d), rho_s, policy.pd_correction,
            [&](const Matrix& b) { return q.precision.solve(b); });
        if (gamma != 0.0 && state.has_previous) next += gamma * (s - state.previous.precision.matrix());
        check_finite(next, "precision", t);
        try {
          new_precision = CholeskyFactor::from_matrix(next);
        } catch (const Error&) {
          throw Error(fmt::format(
              "Step {}: the precision matrix is no longer positive definite; enable the "
              "positive-definite correction (pd_correction) or lower the precision rate.",
              t));
        }
      }
    }
    const CholeskyFactor& p = policy.use_new_precision ? new_precision : old_precision;
    const Vector dir = p.solve(direction);
    const Matrix prev_s = (gamma != 0.0 && state.has_previous) ? state.previous.precision.matrix()
                                                               : Matrix();
    new_mean = detail::mean_update(
        q.mean, dir, rho_m, gamma, state.has_previous,
        state.has_previous ? state.previous.mean : q.mean,
        [&](const Vector& v) { return p.solve(v); }, [&](const Vector& v) { return prev_s * v; });
    if (gamma != 0.0) {
      state.previous = q;
      state.has_previous = true;
    }
    q.precision = std::move(new_precision);
  } else {
    Vector new_precision = q.precision;
    if constexpr (std::is_same_v<Q, GaussianDiag>) {
      if (rho_s > 0.0 && !estimate.curvature.empty()) {
        Vector h = estimate.curvature.diagonal_part(d);
        check(h.size() == d, fmt::format("Step {}: the curvature estimate has the wrong size.", t));
        h.array() += delta;
        check_finite(h, "curvature estimate", t);
        new_precision = stage::precision_step_diagonal(q.precision, h, rho_s, policy.pd_correction);
        if (gamma != 0.0 && state.has_previous)
          new_precision += gamma * (q.precision - state.previous.precision);
      }
    }
    const Vector& s = policy.use_new_precision ? new_precision : q.precision;
    const Vector p = stage::diagonal_preconditioner(
        s,
        {policy.debias_precision, rho_s, policy.sqrt_scaling, policy.sqrt_inner_offset,
         policy.sqrt_outer_offset},
        t);
    for (Index i = 0; i < d; ++i) {
      if (!(p[i] > 0.0)) {
        throw Error(fmt::format(
            "Step {}: the preconditioner became non-positive at coordinate {} ({}); enable the "
            "positive-definite correction (pd_correction), add a prior precision or lower the "
            "precision rate.",
            t, i, p[i]));
      }
    }
    Vector dir = direction.cwiseQuotient(p);
    stage::clip(dir, policy.clip_radius);
    const Vector prev_s = state.has_previous ? state.previous.precision : q.precision;
    new_mean = detail::mean_update(
        q.mean, dir, rho_m, gamma, state.has_previous,
        state.has_previous ? state.previous.mean : q.mean,
        [&](const Vector& v) { return Vector(v.cwiseQuotient(p)); },
        [&](const Vector& v) { return Vector(prev_s.cwiseProduct(v)); });
    if (gamma != 0.0) {
      state.previous = q;
      state.has_previous = true;
    }
    if (policy.check_finite) check_finite(new_precision, "precision", t);
    q.precision = std::move(new_precision);
  }
  if (policy.check_finite) check_finite(new_mean, "mean", t);
  StepInfo info;
  info.step = t;
  info.loss = estimate.loss;
  info.mean_change = (new_mean - q.mean).cwiseAbs().maxCoeff();
  q.mean = std::move(new_mean);
  state.step = t;
  return info;
}

}  // namespace blr
