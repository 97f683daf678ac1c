// The BLR step for Gaussian candidates (Khan & Rue 2023, eq. 6 in the coordinates of eqs. 10–12):
//
//     S_{t+1} = (1 − ρ_S) S_t + ρ_S Ĥ   [+ stages: prior, iBLR correction, natural momentum]
//     m_{t+1} = m_t − ρ_m P⁻¹ ĝ          [+ stages: averaging, prior, clipping, momentum]
//
// with ĝ ≈ E_q[∇ℓ̄], Ĥ ≈ E_q[∇²ℓ̄] from an estimator and P = S_{t+1} or what the policy's stages
// make of it (rule/policy.hpp, stage/coordinate.hpp). With ρ_m = ρ_S and no stages this is exactly
// λ ← (1−ρ)λ − ρ∇_μE_q[ℓ̄] on λ = (Sm, −S/2) (proved equal to natural_step() by a test).
//
// One implementation serves the three Gaussian families: GaussianFixed (S never moves: gradient
// descent), GaussianDiag (every stage elementwise: one fused pass, rule/diagonal_kernel.hpp;
// strong exception guarantee) and GaussianFull (Cholesky factor; Gauss–Newton curvature given as
// outer products is folded in by rank-one updates in O(d²) per example). The full step runs the
// elementwise phases (gradient, direction) through the same stage code on whole vectors.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "blr/core/cholesky.hpp"
#include "blr/core/error.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/family/gaussian_concepts.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_fixed.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/rule/diagonal_kernel.hpp"
#include "blr/rule/policy.hpp"

namespace blr {

/// Everything a run needs to resume exactly: q, the step counter, the gradient average and the
/// previous q (for natural momentum).
template <GaussianCandidate Q>
struct RuleState {
  Q q;
  long step = 0;              ///< completed steps
  Vector gradient_average;    ///< u (empty until used)
  Q previous;                 ///< q_{t−1} (valid when has_previous)
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

/// Names the first invalid coordinate of a fused step that flagged one, and throws.
template <bool kLearn, class... Stages>
[[noreturn]] void diagnose(const StepCoefficients<double, Stages...>& k, const DiagonalBuffers& b,
                           Index d, long t, bool check_mean) {
  auto is_finite = [](double x) { return std::abs(x) <= std::numeric_limits<double>::max(); };
  for (Index i = 0; i < d; ++i) {
    const stage::Coordinate<double> c = diagnose_coordinate<kLearn>(k, b, i);
    if (!is_finite(c.gradient)) throw_non_finite(t, "gradient estimate", i, b.g[i]);
    if (!is_finite(c.direction)) throw_non_finite(t, "gradient average", i, c.direction);
    if (kLearn && !is_finite(c.curvature)) throw_non_finite(t, "curvature estimate", i, c.curvature);
    if (kLearn && !is_finite(c.new_precision)) throw_non_finite(t, "precision", i, c.new_precision);
    if (!(c.preconditioner > 0.0)) throw_non_positive(t, i, c.preconditioner);
    if (check_mean && !is_finite(c.new_mean)) throw_non_finite(t, "mean", i, c.new_mean);
  }
  throw Error(fmt::format("Step {}: the fused diagonal step flagged an invalid value that the "
                          "diagnosis pass could not find (internal error).",
                          t));
}

/// The fixed and diagonal families: every stage is elementwise, so the whole step is one fused
/// pass over the coordinates. New values go to work buffers that are swapped in only when every
/// coordinate is valid: on an error the state is left exactly as it was.
template <class Q, class... Stages>
StepInfo diagonal_step(RuleState<Q>& state, const GaussianEstimate& estimate,
                       const Policy<Stages...>& policy) {
  constexpr bool kAverage = kAverages<Stages...>;
  constexpr bool kMomentum = kHasMomentum<Stages...>;
  const stage::StepContext context = policy.context(state.step);
  const long t = context.t;
  Q& q = state.q;
  const Index d = q.dimension();
  const bool learn = std::is_same_v<Q, GaussianDiag> && context.precision_rate > 0.0 &&
                     !estimate.curvature.empty();

  // Curvature diagonal: read in place when it is already a diagonal.
  Vector curvature_storage;
  const double* h = nullptr;
  if (learn) {
    if (estimate.curvature.kind == Curvature::Kind::diagonal) {
      check(estimate.curvature.diag.size() == d,
            fmt::format("Step {}: the curvature estimate has the wrong size.", t));
      h = estimate.curvature.diag.data();
    } else {
      curvature_storage = estimate.curvature.diagonal_part(d);
      h = curvature_storage.data();
    }
  }
  if (kAverage && state.gradient_average.size() != d) state.gradient_average = Vector::Zero(d);
  state.scratch_mean.resize(d);
  if (learn) state.scratch_precision.resize(d);
  if (kAverage) state.scratch_average.resize(d);
  // Before the first step the previous q is the current one: the momentum terms vanish.
  if (kMomentum && !state.has_previous) state.previous = q;

  DiagonalBuffers b;
  b.g = estimate.gradient.data();
  b.h = h;
  b.m = q.mean.data();
  b.s = q.precision.data();
  b.u = kAverage ? state.gradient_average.data() : nullptr;
  b.m_prev = kMomentum ? state.previous.mean.data() : nullptr;
  b.s_prev = kMomentum ? state.previous.precision.data() : nullptr;
  b.m_out = state.scratch_mean.data();
  b.s_out = learn ? state.scratch_precision.data() : nullptr;
  b.u_out = kAverage ? state.scratch_average.data() : nullptr;
  const auto k = coefficients<double>(policy, context);

  // Fast pass (vectorised, no exits), then a diagnosis pass only if something was invalid.
  const KernelResult r = learn ? diagonal_pass<true, Stages...>(k, b, d, policy.check_finite)
                               : diagonal_pass<false, Stages...>(k, b, d, policy.check_finite);
  if (!r.all_ok) {
    if (learn) diagnose<true>(k, b, d, t, policy.check_finite);
    diagnose<false>(k, b, d, t, policy.check_finite);
  }
  // Commit: q_{t−1} ← q_t where momentum needs it, then q_t ← the new values.
  if constexpr (kMomentum) {
    std::swap(state.previous.mean, q.mean);
    if constexpr (std::is_same_v<Q, GaussianDiag>) {
      if (learn) std::swap(state.previous.precision, q.precision);
      else state.previous.precision = q.precision;
    }
    state.has_previous = true;
  }
  std::swap(q.mean, state.scratch_mean);
  if (learn) std::swap(q.precision, state.scratch_precision);
  if (kAverage) std::swap(state.gradient_average, state.scratch_average);
  state.step = t;
  return StepInfo{t, estimate.loss, r.change};
}

/// The full Gaussian: dense or rank-one precision step, Cholesky solves. The gradient and
/// direction phases are elementwise and run through the stages' own code on whole vectors.
/// Everything is computed into locals and committed at the end (strong exception guarantee).
template <class... Stages>
StepInfo full_step(RuleState<GaussianFull>& state, const GaussianEstimate& estimate,
                   const Policy<Stages...>& policy) {
  static_assert(!Policy<Stages...>::diagonal_only,
                "This policy has a stage defined for diagonal Gaussians only (precision "
                "debiasing, square-root scaling or clipping); use GaussianDiag.");
  using P = Policy<Stages...>;
  constexpr bool kMomentum = P::template has<stage::NaturalMomentum>;
  const stage::StepContext context = policy.context(state.step);
  const long t = context.t;
  GaussianFull& q = state.q;
  const Index d = q.dimension();
  check_finite(estimate.gradient, "gradient estimate", t);
  const auto k = coefficients<double>(policy, context);
  const bool has_previous = kMomentum && state.has_previous;

  // Phases 1–2 on whole vectors (the same stage code as the diagonal loop).
  stage::Coordinate<Eigen::ArrayXd> c;
  c.gradient = estimate.gradient.array();
  c.mean = q.mean.array();
  c.average = Eigen::ArrayXd::Zero(d);
  if (state.gradient_average.size() == d) c.average = state.gradient_average.array();
  std::apply([&](const auto&... s) { (detail::gradient_phase(s, c), ...); }, k.stages);
  c.direction = c.gradient;
  std::apply([&](const auto&... s) { (detail::direction_phase(s, c), ...); }, k.stages);

  // Phase 3: the precision matrix.
  CholeskyFactor new_precision = q.precision;
  const double rho = context.precision_rate;
  if (rho > 0.0 && !estimate.curvature.empty()) {
    Curvature h = estimate.curvature;
    if constexpr (P::template has<stage::PriorInCurvature>) {
      h.add_identity(policy.template get<stage::PriorInCurvature>().precision, d);
    }
    bool correct = false;
    if constexpr (P::template has<stage::IblrCorrection>) {
      correct = policy.template get<stage::IblrCorrection>().enabled;
    }
    double gamma = 0.0;
    if constexpr (kMomentum) {
      if (has_previous) gamma = policy.template get<stage::NaturalMomentum>().gamma;
    }
    const bool rank_one = h.kind == Curvature::Kind::outer && h.shift.size() == 0 && !correct &&
                          gamma == 0.0 && rho < 1.0;
    if (rank_one) {
      check_finite(h.factors, "curvature estimate", t);
      new_precision.scale(context.precision_keep);
      const double scale = std::sqrt(rho * h.scale);
      for (Index i = 0; i < h.factors.rows(); ++i)
        new_precision.rank_one_update(scale * h.factors.row(i).transpose());
    } else {
      const Matrix hd = h.to_dense(d);
      check_finite(hd, "curvature estimate", t);
      const Matrix s = q.precision.matrix();
      Matrix next = context.precision_keep * s + rho * hd;  // eq. 12
      if (correct) {  // iBLR: + (ρ²/2)(S − Ĥ)S⁻¹(S − Ĥ)
        const Matrix gap = s - hd;
        next += 0.5 * rho * rho * gap * q.precision.solve(gap);
      }
      if (gamma != 0.0) next += gamma * (s - state.previous.precision.matrix());
      next = 0.5 * (next + next.transpose());
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
  // Phases 4–6: m' = m − α P⁻¹d (+ γ P⁻¹ S_{t−1}(m − m_{t−1})).
  const CholeskyFactor& preconditioner =
      P::template has<stage::OldPrecision> ? q.precision : new_precision;
  Vector new_mean = q.mean - context.mean_rate * preconditioner.solve(Vector(c.direction.matrix()));
  if constexpr (kMomentum) {
    const double gamma = policy.template get<stage::NaturalMomentum>().gamma;
    if (has_previous && gamma != 0.0) {
      new_mean += gamma * preconditioner.solve(
                              Vector(state.previous.precision.matrix() * (q.mean - state.previous.mean)));
    }
  }
  if (policy.check_finite) check_finite(new_mean, "mean", t);

  const double change = (new_mean - q.mean).cwiseAbs().maxCoeff();
  if constexpr (kMomentum) {
    state.previous = q;
    state.has_previous = true;
  }
  if constexpr (P::template has<stage::GradientAverage>) {
    state.gradient_average = c.new_average.matrix();
  }
  q.mean = std::move(new_mean);
  q.precision = std::move(new_precision);
  state.step = t;
  return StepInfo{t, estimate.loss, change};
}

}  // namespace detail

/// One BLR step from an estimate. Throws blr::Error naming the step on invalid input or results,
/// and then leaves the state unchanged.
template <GaussianCandidate Q, class... Stages>
StepInfo step(RuleState<Q>& state, const GaussianEstimate& estimate,
              const Policy<Stages...>& policy) {
  detail::check_estimate(estimate, state.q.dimension(), state.step + 1);
  if constexpr (std::is_same_v<Q, GaussianFull>) {
    return detail::full_step(state, estimate, policy);
  } else {
    return detail::diagonal_step(state, estimate, policy);
  }
}

}  // namespace blr
