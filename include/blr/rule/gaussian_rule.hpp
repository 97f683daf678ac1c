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

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "blr/core/cholesky.hpp"
#include "blr/core/error.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_fixed.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/family/gaussian_concepts.hpp"
#include "blr/rule/diagonal_kernel.hpp"
#include "blr/rule/step_policy.hpp"
#include "blr/stage/gradient_averaging.hpp"
#include "blr/stage/pd_correction.hpp"
#include "blr/stage/preconditioner.hpp"

namespace blr {


/// Everything a run needs to resume exactly: q, the step counter, the gradient average and the
/// previous q (for natural momentum).
template <GaussianCandidate Q>
struct RuleState {
  Q q;
  long step = 0;              ///< completed steps
  Vector gradient_average;    ///< u (empty until used)
  Q previous;                 ///< q_{t−1} (valid when step > 0 and momentum is used)
  bool has_previous = false;
  /// Work buffers of the fused diagonal step (not part of the saved state).
  Vector scratch_mean, scratch_precision, scratch_average;
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
}

[[noreturn]] inline void throw_non_finite(long t, const char* block, Index i, double value) {
  throw Error(fmt::format("Step {} produced a non-finite value in '{}' (entry {} = {}).", t, block,
                          i, value));
}

[[noreturn]] inline void throw_non_positive(long t, Index i, double value) {
  throw Error(fmt::format(
      "Step {}: the preconditioner became non-positive at coordinate {} ({}); enable the "
      "positive-definite correction (pd_correction), add a prior precision or lower the "
      "precision rate.",
      t, i, value));
}

/// The fixed and diagonal families: every stage is elementwise, so the whole step is one fused
/// pass over the coordinates. New values go to work buffers that are swapped in only when every
/// coordinate is valid: on an error the state is left exactly as it was.
template <class Q>
StepInfo diagonal_step(RuleState<Q>& state, const GaussianEstimate& estimate,
                       const StepPolicy& policy) {
  constexpr bool learn_precision = std::is_same_v<Q, GaussianDiag>;
  const long t = state.step + 1;
  Q& q = state.q;
  const Index d = q.dimension();
  const double rho_m = policy.mean_rate.at(state.step);
  const double rho_s = policy.precision_rate.at(state.step);
  const double delta = policy.prior_precision;
  const double gamma = policy.natural_momentum;
  const bool momentum = gamma != 0.0;
  const bool momentum_term = momentum && state.has_previous;
  const double beta1 = policy.gradient_averaging;
  const bool average = beta1 > 0.0;
  const double grad_scale =
      average && policy.debias_gradient ? 1.0 / (1.0 - std::pow(beta1, static_cast<double>(t))) : 1.0;
  const bool update_precision = learn_precision && rho_s > 0.0 && !estimate.curvature.empty();
  const double precision_scale =
      policy.debias_precision ? 1.0 / (1.0 - std::pow(1.0 - rho_s, static_cast<double>(t))) : 1.0;

  // Curvature diagonal: read in place when it is already a diagonal.
  Vector curvature_storage;
  const double* h = nullptr;
  if (update_precision) {
    if (estimate.curvature.kind == Curvature::Kind::diagonal) {
      check(estimate.curvature.diag.size() == d,
            fmt::format("Step {}: the curvature estimate has the wrong size.", t));
      h = estimate.curvature.diag.data();
    } else {
      curvature_storage = estimate.curvature.diagonal_part(d);
      h = curvature_storage.data();
    }
  }
  if (average && state.gradient_average.size() != d) state.gradient_average = Vector::Zero(d);
  state.scratch_mean.resize(d);
  if (update_precision) state.scratch_precision.resize(d);
  if (average) state.scratch_average.resize(d);
  if (momentum && !state.has_previous) state.previous = q;

  DiagonalKernel k;
  k.g = estimate.gradient.data();
  k.h = h;
  k.m = q.mean.data();
  k.s = q.precision.data();
  k.u = average ? state.gradient_average.data() : nullptr;
  k.m_prev = momentum ? state.previous.mean.data() : nullptr;
  k.s_prev = momentum ? state.previous.precision.data() : nullptr;
  k.m_out = state.scratch_mean.data();
  k.s_out = update_precision ? state.scratch_precision.data() : nullptr;
  k.u_out = average ? state.scratch_average.data() : nullptr;
  k.rho_m = rho_m;
  k.rho_s = rho_s;
  k.delta_in_average = policy.prior_in_average ? delta : 0.0;
  k.delta_after = policy.prior_in_average ? 0.0 : delta;
  k.delta_curvature = policy.prior_in_curvature ? delta : 0.0;
  k.gamma = gamma;
  k.beta1 = beta1;
  k.grad_scale = grad_scale;
  k.correct = policy.pd_correction;
  k.precision_scale = precision_scale;
  k.sqrt_scaling = policy.sqrt_scaling;
  k.c_in = policy.sqrt_inner_offset;
  k.c_out = policy.sqrt_outer_offset;
  k.radius = policy.clip_radius;
  k.use_new = policy.use_new_precision;
  k.check_mean = policy.check_finite;
  k.average = average;
  k.update_precision = update_precision;
  k.momentum = momentum_term;

  // Fast pass (vectorisable, no exits), then a diagnosis pass only if something was invalid.
  const auto [all_ok, change] = run_diagonal_kernel(k, d);
  if (!all_ok) {
    // Diagnosis (rare): recompute coordinate by coordinate and name the first invalid one.
    auto is_finite = [](double x) { return std::abs(x) <= std::numeric_limits<double>::max(); };
    for (Index i = 0; i < d; ++i) {
      const CoordinateStep c = diagnose_coordinate(k, i);
      if (!is_finite(c.gradient)) throw_non_finite(t, "gradient estimate", i, k.g[i]);
      if (!is_finite(c.direction)) throw_non_finite(t, "gradient average", i, c.direction);
      if (!is_finite(c.curvature)) throw_non_finite(t, "curvature estimate", i, c.curvature);
      if (!is_finite(c.precision)) throw_non_finite(t, "precision", i, c.precision);
      if (!(c.preconditioner > 0.0)) throw_non_positive(t, i, c.preconditioner);
      if (policy.check_finite && !is_finite(c.mean)) throw_non_finite(t, "mean", i, c.mean);
    }
    throw Error(fmt::format("Step {}: the fused diagonal step flagged an invalid value that the "
                            "diagnosis pass could not find (internal error).", t));
  }
  // Commit: q_{t−1} ← q_t where momentum needs it, then q_t ← the new values.
  if (momentum) {
    std::swap(state.previous.mean, q.mean);
    if constexpr (learn_precision) {
      if (update_precision) std::swap(state.previous.precision, q.precision);
      else state.previous.precision = q.precision;
    }
    state.has_previous = true;
  }
  std::swap(q.mean, state.scratch_mean);
  if (update_precision) std::swap(q.precision, state.scratch_precision);
  if (average) std::swap(state.gradient_average, state.scratch_average);
  state.step = t;
  return StepInfo{t, estimate.loss, change};
}

/// The full Gaussian: dense or rank-one precision step, Cholesky solves. Everything is computed
/// into locals and committed at the end (strong exception guarantee).
inline StepInfo full_step(RuleState<GaussianFull>& state, const GaussianEstimate& estimate,
                          const StepPolicy& policy) {
  const long t = state.step + 1;
  GaussianFull& q = state.q;
  const Index d = q.dimension();
  check(!policy.sqrt_scaling && !policy.debias_precision &&
            policy.clip_radius == std::numeric_limits<double>::infinity(),
        "Square-root scaling, precision debiasing and clipping are defined for diagonal "
        "Gaussians only.");
  check_finite(estimate.gradient, "gradient estimate", t);
  const double rho_m = policy.mean_rate.at(state.step);
  const double rho_s = policy.precision_rate.at(state.step);
  const double delta = policy.prior_precision;
  const double gamma = policy.natural_momentum;

  Vector gradient = estimate.gradient;
  if (delta != 0.0 && policy.prior_in_average) gradient += delta * q.mean;
  Vector average = state.gradient_average;
  Vector direction = policy.gradient_averaging > 0.0
                         ? stage::average_gradient(average, gradient, policy.gradient_averaging,
                                                   policy.debias_gradient, t)
                         : gradient;
  if (delta != 0.0 && !policy.prior_in_average) direction += delta * q.mean;

  CholeskyFactor new_precision = q.precision;
  if (rho_s > 0.0 && !estimate.curvature.empty()) {
    Curvature h = estimate.curvature;
    h.add_identity(policy.prior_in_curvature ? delta : 0.0, d);
    const bool rank_one = h.kind == Curvature::Kind::outer && h.shift.size() == 0 &&
                          !policy.pd_correction && gamma == 0.0 && rho_s < 1.0;
    if (rank_one) {
      check_finite(h.factors, "curvature estimate", t);
      new_precision.scale(1.0 - rho_s);
      const double c = std::sqrt(rho_s * h.scale);
      for (Index i = 0; i < h.factors.rows(); ++i)
        new_precision.rank_one_update(c * h.factors.row(i).transpose());
    } else {
      const Matrix hd = h.to_dense(d);
      check_finite(hd, "curvature estimate", t);
      const Matrix s = q.precision.matrix();
      Matrix next = stage::precision_step_dense(
          s, hd, rho_s, policy.pd_correction,
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
  const CholeskyFactor& p = policy.use_new_precision ? new_precision : q.precision;
  Vector new_mean = q.mean - rho_m * p.solve(direction);
  if (gamma != 0.0 && state.has_previous)
    new_mean += gamma * p.solve(Vector(state.previous.precision.matrix() * (q.mean - state.previous.mean)));
  if (policy.check_finite) check_finite(new_mean, "mean", t);

  const double change = (new_mean - q.mean).cwiseAbs().maxCoeff();
  if (gamma != 0.0) {
    state.previous = q;
    state.has_previous = true;
  }
  q.mean = std::move(new_mean);
  q.precision = std::move(new_precision);
  state.gradient_average = std::move(average);
  state.step = t;
  return StepInfo{t, estimate.loss, change};
}

}  // namespace detail

/// One BLR step from an estimate. Throws blr::Error naming the step on invalid input or results,
/// and then leaves the state unchanged.
template <GaussianCandidate Q>
StepInfo step(RuleState<Q>& state, const GaussianEstimate& estimate, const StepPolicy& policy) {
  detail::check_estimate(estimate, state.q.dimension(), state.step + 1);
  if constexpr (std::is_same_v<Q, GaussianFull>) {
    return detail::full_step(state, estimate, policy);
  } else {
    return detail::diagonal_step(state, estimate, policy);
  }
}

}  // namespace blr
