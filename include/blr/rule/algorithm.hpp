// An algorithm is a family × an estimator × a step policy (DESIGN §1), and `run` is its loop.
//
//     algorithm = Q (GaussianFixed | GaussianDiag | GaussianFull)
//               × estimator (how ĝ ≈ E_q[∇ℓ̄] and Ĥ ≈ E_q[∇²ℓ̄] are obtained)
//               × Policy<Stages...> (rates, and the stages: prior, averaging, momentum,
//                 corrections; rule/policy.hpp).
//
// `step` asks the estimator for (ĝ, Ĥ) at the current q and applies the one Gaussian BLR step
// (gaussian_rule.hpp). `run` repeats it with callbacks that may record or stop; non-finite values
// are reported by the step itself with the step number.
#pragma once

#include <functional>
#include <vector>

#include "blr/core/rng.hpp"
#include "blr/rule/gaussian_rule.hpp"

namespace blr {

template <GaussianCandidate Q, class Estimator, class StepPolicy>
struct Algorithm {
  using Candidate = Q;
  Estimator estimator;
  StepPolicy policy;

  template <class L>
  StepInfo step(RuleState<Q>& state, const L& loss, Rng& rng) const {
    return blr::step(state, estimator.estimate(state.q, loss, rng), policy);
  }
};

struct RunOptions {
  long max_steps = 100;
  double tolerance = 0.0;  ///< stop once max|m_{t+1} − m_t| ≤ tolerance (0: never)
  void validate() const {
    check(max_steps >= 1, "Option 'max_steps' must be at least 1.");
    check_nonnegative("tolerance", tolerance);
  }
};

struct RunResult {
  long steps = 0;
  bool converged = false;
  std::vector<double> losses;  ///< the estimator's loss at each step
};

/// Called after every step; return false to stop.
template <GaussianCandidate Q>
using StepCallback = std::function<bool(const StepInfo&, const RuleState<Q>&)>;

template <GaussianCandidate Q, class Estimator, class StepPolicy, class L>
RunResult run(const Algorithm<Q, Estimator, StepPolicy>& algorithm, RuleState<Q>& state, const L& loss,
              Rng& rng, const RunOptions& options, const StepCallback<Q>& callback = {}) {
  options.validate();
  algorithm.policy.validate();
  RunResult result;
  for (long t = 0; t < options.max_steps; ++t) {
    const StepInfo info = algorithm.step(state, loss, rng);
    result.losses.push_back(info.loss);
    ++result.steps;
    if (callback && !callback(info, state)) break;
    if (options.tolerance > 0.0 && info.mean_change <= options.tolerance) {
      result.converged = true;
      break;
    }
  }
  return result;
}

}  // namespace blr
