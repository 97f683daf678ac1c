// Limited-memory BFGS with a strong-Wolfe line search, for a handful of smooth unconstrained
// parameters (e.g. the log hyperparameters of a Gaussian process).
//
// Direction (Nocedal & Wright 2006, Algorithm 7.4, the two-loop recursion): p = −H∇f with H the
// L-BFGS inverse-Hessian built from the last m pairs s_k = x_{k+1} − x_k, y_k = ∇f_{k+1} − ∇f_k and
// H₀ = (sᵀy / yᵀy) I. Step (Algorithms 3.5 and 3.6): α satisfies the strong Wolfe conditions
//     f(x + αp) ≤ f(x) + c₁ α ∇fᵀp,       |∇f(x + αp)ᵀp| ≤ c₂ |∇fᵀp|,
// found by bracketing and zooming with safeguarded cubic interpolation. A value that is not finite
// (e.g. a Cholesky factorisation that failed) counts as too long a step. The first step has length
// min(1, 1/‖∇f‖) and every step is capped at `max_step` in Euclidean length. A line search spends
// at most 20 evaluations bracketing and 12 zooming; when it fails (typically because f is noisier
// than the decrease still available) the run stops at its best point and says so in `stop`. It
// counts as converged when the decrease the step predicted, |∇fᵀp|, was at most
// value_tolerance · max(1, |f|): no decrease is left that f can resolve (scipy's L-BFGS-B stops on
// (f_k − f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) ≤ ftol = 1e7·ε, the same default).
#pragma once

#include <functional>
#include <string>

#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"

namespace blr::inference {

struct LbfgsOptions {
  int memory = 10;                   ///< m, the number of stored (s, y) pairs
  int max_iterations = 200;          ///< line searches
  double gradient_tolerance = 1e-6;  ///< converged when max|∇f| ≤ this
  double max_step = 5.0;             ///< longest step ‖αp‖
  int max_evaluations = 2000;        ///< of f over the whole run
  double c1 = 1e-4, c2 = 0.9;        ///< Wolfe constants, 0 < c₁ < c₂ < 1
  double value_tolerance = 1e7 * 2.220446049250313e-16;  ///< see above; 0: only the gradient
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<LbfgsOptions>& table();
};

struct LbfgsResult {
  Vector x, gradient;
  double value = 0;
  int iterations = 0, evaluations = 0;
  bool converged = false;  ///< the gradient tolerance was met, or no decrease f resolves was left
  std::string stop;        ///< why it stopped, one sentence
};

/// f(x, gradient) returns f(x) and writes ∇f(x) (may return a non-finite value).
using Objective = std::function<double(const Vector& x, Vector& gradient)>;

/// Minimises f from x0.
LbfgsResult lbfgs(const Objective& f, const Vector& x0, const LbfgsOptions& options = {});

}  // namespace blr::inference
