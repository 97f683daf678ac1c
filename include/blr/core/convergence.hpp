// Iterative fits that stop without converging: one refusal for every door.
//
// An iterative fit (Newton to a Laplace mode, CVI, EM, VMP, L-BFGS, Nelder–Mead) reports
// `converged = false` when it stopped before its stopping rule held, normally at its cap on
// iterations or evaluations. Its result is then not the fit it names (a posterior far from the mode
// looks like any other), so the doors that hand results to users — `blr infer` and `blr.infer` —
// refuse it with `require_converged`: one sentence naming the fit, the cap and what to change, and
// no result. A run asked for a fixed number of steps (EM's fixed_iterations, SVI's iterations) is
// not refused: its count is the stopping rule. The library functions themselves still return the
// unconverged result, which tests and the Table-1 checks inspect.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "blr/core/error.hpp"

namespace blr {

/// Throws blr::Error unless `converged`: "<fit> stopped at its cap of <cap> <unit> without
/// converging; <remedy>." — or, when it stopped before the cap (`steps` < `cap`, e.g. a line search
/// that found no lower value), "<fit> stopped after <steps> of at most <cap> <unit> without
/// converging; <remedy>." `remedy` names the option to change, in the door's spelling.
inline void require_converged(bool converged, std::string_view fit, long steps, long cap,
                              std::string_view unit, std::string_view remedy) {
  if (converged) return;
  if (steps < cap) {
    throw Error(fmt::format("{} stopped after {} of at most {} {} without converging; {}.", fit,
                            steps, cap, unit, remedy));
  }
  throw Error(
      fmt::format("{} stopped at its cap of {} {} without converging; {}.", fit, cap, unit, remedy));
}

}  // namespace blr
