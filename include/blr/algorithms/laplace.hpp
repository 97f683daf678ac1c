// Laplace's method as the BLR (Khan & Rue 2023, §4.4; §1.3.2, eq. 12): the one Laplace routine of
// blr. The Table-1 row `laplace` and `blr infer`'s GLM Laplace (inference::laplace, glm.hpp) both
// run it.
//
// Candidate q = N(m, S⁻¹) (GaussianFull), delta method of second order, ρ = `newton.step_size`:
//     S ← (1 − ρ)S + ρ(∇²ℓ̄(m) + δI),   m ← m − ρ S⁻¹(∇ℓ̄(m) + δm)       (the `Newton` preset)
// until the mode is reached — max|∇ℓ̄(m) + δm| < tolerance, or Newton's step changes no entry of m
// by more than 4 ulps of max|m| (the gradient is then at its rounding floor, above 1e-10 for counts
// of thousands) — or `max_steps` steps were taken.
//
// Damping (a backtracking line search on f(m) = ℓ̄(m) + ½δ|m|², Armijo's rule; Nocedal & Wright
// 2006, §3.1; Boyd & Vandenberghe 2004, §9.5.2): with Δ the rule's change of the mean and
// λ² = −∇f(m)ᵀΔ its Newton decrement, the mean moves to m + tΔ for the first t in 1, ½, ¼, … with
//     f(m + tΔ) ≤ f(m) − c·t·λ²,   c = 10⁻⁴.
// Far from the mode of a steep likelihood (Poisson counts of 150 from w = 0) the full step
// overshoots to where e^a overflows; halving brings it back in a few trials. Once λ² ≤ 1/16 the
// full step is taken untested: that is where backtracking accepts it anyway for a self-concordant
// f (λ ≤ (1 − 2c)/4, Boyd & Vandenberghe §9.6), and where the decrease sought falls towards the
// rounding of ℓ̄, which a test could not resolve. So runs whose full steps decrease f are unchanged
// bit for bit. If 52 halvings (t = 2⁻⁵², below the rounding of m) find no decrease, the run stops
// unconverged before its cap. The precision keeps the rule's update (it is ∇²ℓ̄ at the previous
// mean for ρ = 1, and the final S is taken at θ* in any case). At the
// mode θ* the delta method at ρ = 1 gives q = N(θ*, S⁻¹) with S = ∇²ℓ̄(θ*) + δI, and, when ℓ̄ is a
// negative log-likelihood (δ > 0: prior N(0, δ⁻¹I)) or a negative log joint (δ = 0) with all its
// normalisers,
//     log p(D) ≈ log p(D, θ*) + (d/2) log 2π − ½ log|S|                (exact for a Gaussian model).
//
// Why the rule's algorithm and not a loop of its own: the step is `Newton` (newton.hpp), the same
// estimator and the same Gaussian step as the Newton and online-Newton rows; this file adds only
// the stopping rule (stationarity, which the mode needs, rather than a small change of m), the
// final precision (taken from the estimate at θ*, so no Hessian is evaluated twice) and the
// evidence. Each estimate evaluates ℓ̄, ∇ℓ̄ and ∇²ℓ̄ once at each iterate; an observer sees every
// iterate with its ℓ̄ (inference::laplace records iterates and log joints with it).
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "blr/algorithms/newton.hpp"

namespace blr {

struct LaplaceOptions {
  NewtonOptions newton;      ///< ρ (1 = Newton), δ and the iBLR correction of the steps to the mode
  long max_steps = 100;      ///< at most this many steps
  double tolerance = 1e-10;  ///< the mode is reached once max|∇ℓ̄(m) + δm| < tolerance
  void validate() const {
    newton.validate();
    check(max_steps >= 1, "Option 'max_steps' must be at least 1.");
    check_positive("tolerance", tolerance);
  }
};

struct LaplaceResult {
  GaussianFull posterior;   ///< N(θ*, S⁻¹), S = ∇²ℓ̄(θ*) + δI
  double log_joint = 0;     ///< −ℓ̄(θ*) + log N(θ* | 0, δ⁻¹I) (the second term only when δ > 0)
  double log_evidence = 0;  ///< log p(D, θ*) + (d/2) log 2π − ½ log|S|
  long iterations = 0;      ///< steps taken
  long halvings = 0;        ///< halvings of the step by the line search, over the run
  bool converged = false;   ///< the stationarity test passed
};

/// Called after each step with its number (from 1), the new q and ℓ̄ at its mean.
using LaplaceObserver = std::function<void(long step, const GaussianFull& q, double loss)>;

/// Laplace's method from q₀ = `start` (its precision matters only when ρ < 1).
template <HasHessian L>
LaplaceResult laplace(const L& loss, GaussianFull start, const LaplaceOptions& options = {},
                      const LaplaceObserver& observer = {}) {
  options.validate();
  const Newton newton = make_newton(options.newton);
  const double delta = options.newton.prior_precision;
  const Index d = start.dimension();
  Rng unused(0);  // the delta method draws nothing
  RuleState<GaussianFull> state = init(std::move(start));
  LaplaceResult result;
  constexpr double kArmijo = 1e-4;           // c: the fraction of the predicted decrease required
  constexpr double kTrustedDecrement = 1.0 / 16;  // λ² below which the full step is taken
  constexpr int kMaxHalvings = 52;
  constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
  constexpr double kRoundingSteps = 4;  // a step of a few ulps of max|m| is rounding, not progress
  const auto objective = [delta](const Vector& m, double loss_value) {
    return delta > 0.0 ? loss_value + 0.5 * delta * m.squaredNorm() : loss_value;
  };
  GaussianEstimate estimate = newton.estimator.estimate(state.q, loss, unused);
  for (;;) {
    const Vector gradient = estimate.gradient + delta * state.q.mean;
    if (gradient.cwiseAbs().maxCoeff() < options.tolerance) {
      result.converged = true;
      break;
    }
    if (result.iterations == options.max_steps) break;
    const Vector from = state.q.mean;
    step(state, estimate, newton.policy);
    const Vector direction = state.q.mean - from;
    if (direction.cwiseAbs().maxCoeff() <= kRoundingSteps * kEpsilon * from.cwiseAbs().maxCoeff()) {
      // Newton's step no longer moves m beyond its rounding: ∇f is at its rounding floor (which
      // for large counts lies above an absolute tolerance of 1e-10); m is the mode in double.
      state.q.mean = from;
      result.converged = true;
      break;
    }
    const double decrement = -gradient.dot(direction);
    if (decrement > kTrustedDecrement) {
      const double f0 = objective(from, estimate.loss);
      double t = 1;
      int halvings = 0;
      bool decreased = false;
      for (;;) {
        const Vector trial = from + t * direction;
        if (objective(trial, loss.value(trial)) <= f0 - kArmijo * t * decrement) {  // NaN: no
          decreased = true;
          break;
        }
        if (halvings == kMaxHalvings) break;
        ++halvings;
        t *= 0.5;
      }
      if (!decreased) {
        state.q.mean = from;  // no decrease found: stop, unconverged, before the cap
        break;
      }
      result.halvings += halvings;
      if (halvings > 0) state.q.mean = from + t * direction;
    }
    ++result.iterations;
    estimate = newton.estimator.estimate(state.q, loss, unused);
    if (observer) observer(result.iterations, state.q, estimate.loss);
  }
  // The last estimate was taken at the final mean: S = ∇²ℓ̄(θ*) + δI.
  Matrix s = estimate.curvature.to_dense(d);
  s.diagonal().array() += delta;
  result.posterior = GaussianFull(state.q.mean, s);
  const double half_d = 0.5 * static_cast<double>(d);
  result.log_joint = -estimate.loss;
  if (delta > 0.0) {
    result.log_joint +=
        half_d * std::log(delta / (2.0 * std::numbers::pi)) - 0.5 * delta * state.q.mean.squaredNorm();
  }
  result.log_evidence = result.log_joint + half_d * std::log(2.0 * std::numbers::pi) -
                        0.5 * result.posterior.log_determinant();
  return result;
}

/// Laplace's method from N(start, I).
template <HasHessian L>
LaplaceResult laplace(const L& loss, const Vector& start, const LaplaceOptions& options = {},
                      const LaplaceObserver& observer = {}) {
  return laplace(loss, GaussianFull(start, Matrix(Matrix::Identity(start.size(), start.size()))),
                 options, observer);
}

}  // namespace blr
