// The step policy of a Gaussian BLR step: the rates, and the stages the step is composed of.
//
// algorithm = family × estimator × step policy (DESIGN §1). A policy holds the mean rate α_t (ρ_m)
// and the precision rate ρ_S of eq. 12 as schedules, and a list of stages — small types, each
// acting in some phases of the step (stage/coordinate.hpp shows the phases):
//
//     Policy<GradientAverage, PriorInDirection, PriorInCurvature, IblrCorrection, Clip>   (IVON)
//
// Which stages a preset uses is part of its type, so the fused loops are compiled for exactly the
// combinations that presets use, without branches; the stages' values (β₁, δ, r, ...) are set at
// run time. A new stage is one small type (stage/*.hpp) with an order and its phase functions.
//
// `coordinate_step` is the one per-coordinate step. The core's diagonal kernel
// (rule/diagonal_kernel.hpp), the LibTorch optimizers' fused CPU loops and their tensor-operation
// path all call it, so each equation is written once for every layer.
#pragma once

#include <tuple>
#include <type_traits>

#include "blr/core/error.hpp"
#include "blr/stage/clip.hpp"
#include "blr/stage/coordinate.hpp"
#include "blr/stage/gradient_averaging.hpp"
#include "blr/stage/momentum.hpp"
#include "blr/stage/pd_correction.hpp"
#include "blr/stage/preconditioning.hpp"
#include "blr/stage/prior.hpp"
#include "blr/stage/schedule.hpp"

namespace blr {

namespace detail {

template <class... S>
constexpr bool stages_in_order() {
  constexpr int orders[] = {0, S::kOrder...};
  for (std::size_t i = 1; i + 1 < sizeof...(S) + 1; ++i) {
    if (orders[i] >= orders[i + 1]) return false;
  }
  return true;
}

}  // namespace detail

template <class... Stages>
struct Policy {
  static_assert(detail::stages_in_order<Stages...>(),
                "A Policy lists its stages once each, in the order of their phases "
                "(stage/coordinate.hpp: prior-in-gradient, average, prior-in-direction, "
                "prior-in-curvature, iBLR correction, momentum, old precision, debias, sqrt, clip).");

  Schedule mean_rate = Schedule::constant(0.1);       ///< α_t (ρ_m) ≥ 0
  Schedule precision_rate = Schedule::constant(0.1);  ///< ρ_S ∈ [0, 1]; 0 keeps S fixed
  std::tuple<Stages...> stages;
  bool check_finite = true;  ///< report a non-finite new mean as an error

  template <class S>
  static constexpr bool has = (std::is_same_v<S, Stages> || ...);
  static constexpr bool diagonal_only = (Stages::kDiagonalOnly || ...);

  template <class S>
  S& get() { return std::get<S>(stages); }
  template <class S>
  const S& get() const { return std::get<S>(stages); }

  void validate() const {
    mean_rate.validate("mean_rate");
    precision_rate.validate("precision_rate");
    check(mean_rate.initial > 0.0, "Option 'mean_rate' must be positive.");
    check_range("precision_rate", precision_rate.initial, 0.0, 1.0);
    if constexpr (has<stage::PrecisionDebias>) {
      check(precision_rate.kind == Schedule::Kind::constant && precision_rate.initial > 0.0,
            "Precision debiasing needs a constant, positive precision_rate.");
    }
    std::apply([](const auto&... s) { (s.validate(), ...); }, stages);
  }

  /// The rates of step `t_completed + 1`.
  stage::StepContext context(long t_completed) const {
    const double rho = precision_rate.at(t_completed);
    return {t_completed + 1, mean_rate.at(t_completed), rho, 1.0 - rho};
  }
};

/// The per-step constants of a policy in the scalar type T of a loop: the rates and each stage's.
template <class T, class... Stages>
struct StepCoefficients {
  T mean_rate, precision_rate, precision_keep;
  std::tuple<typename Stages::template Step<T>...> stages;
};

template <class T, class... Stages>
StepCoefficients<T, Stages...> coefficients(const std::tuple<Stages...>& stages,
                                            const stage::StepContext& s) {
  return {static_cast<T>(s.mean_rate), static_cast<T>(s.precision_rate),
          static_cast<T>(s.precision_keep),
          std::apply([&](const auto&... st) { return std::make_tuple(st.template at<T>(s)...); },
                     stages)};
}

template <class T, class... Stages>
StepCoefficients<T, Stages...> coefficients(const Policy<Stages...>& policy,
                                            const stage::StepContext& s) {
  return coefficients<T>(policy.stages, s);
}

namespace detail {

#define BLR_STAGE_PHASE(phase)                                              \
  template <class Step, class C>                                            \
  [[gnu::always_inline]] inline void phase##_phase(const Step& k, C& c) {   \
    if constexpr (requires { k.phase(c); }) k.phase(c);                     \
  }
BLR_STAGE_PHASE(gradient)
BLR_STAGE_PHASE(direction)
BLR_STAGE_PHASE(curvature)
BLR_STAGE_PHASE(precision)
BLR_STAGE_PHASE(preconditioner)
BLR_STAGE_PHASE(step)
BLR_STAGE_PHASE(mean)
#undef BLR_STAGE_PHASE

}  // namespace detail

/// The BLR step of one coordinate (stage/coordinate.hpp). On entry the inputs of `c` are set; on
/// exit its results are. With `kLearnPrecision` false S stays as it is (S' = S). `c` is a
/// stage::Coordinate<V>, or a stage::PriorCoordinate<V> that brings its own prior (stage/prior.hpp).
template <bool kLearnPrecision, class T, class... Stages, class C>
[[gnu::always_inline]] inline void coordinate_step(const StepCoefficients<T, Stages...>& k, C& c) {
  std::apply([&](const auto&... s) { (detail::gradient_phase(s, c), ...); }, k.stages);
  c.direction = c.gradient;
  std::apply([&](const auto&... s) { (detail::direction_phase(s, c), ...); }, k.stages);
  if constexpr (kLearnPrecision) {
    std::apply([&](const auto&... s) { (detail::curvature_phase(s, c), ...); }, k.stages);
    c.new_precision = k.precision_keep * c.precision + k.precision_rate * c.curvature;  // eq. 12
    std::apply([&](const auto&... s) { (detail::precision_phase(s, c), ...); }, k.stages);
  } else {
    c.new_precision = c.precision;
  }
  c.preconditioner = c.new_precision;
  std::apply([&](const auto&... s) { (detail::preconditioner_phase(s, c), ...); }, k.stages);
  c.step = c.direction / c.preconditioner;
  std::apply([&](const auto&... s) { (detail::step_phase(s, c), ...); }, k.stages);
  c.new_mean = c.mean - k.mean_rate * c.step;
  std::apply([&](const auto&... s) { (detail::mean_phase(s, c), ...); }, k.stages);
}

}  // namespace blr
