// One coordinate of the diagonal-Gaussian BLR step, and the phases a stage can act in.
//
// The BLR step for q = N(m, S⁻¹) (Khan & Rue 2023, eq. 12, in the coordinates of eqs. 10–11)
// taken one coordinate at a time, in six phases. A Policy (rule/policy.hpp) is a list of stages;
// each stage is a small type that acts in one or more phases:
//
//   1 gradient        g ← ĝ                          PriorInGradient   g ← g + δ(m − m₀)
//   2 direction       d ← g                          GradientAverage   u' = βu + w·g,  d = c·u'
//                                                    PriorInDirection  d ← d + δ(m − m₀)
//   3 precision       H ← Ĥ                          PriorInCurvature  H ← H + δ
//                     S' = keep·S + rate·H           IblrCorrection    S' += (ρ²/2)(S − H)²/S
//                                                    NaturalMomentum   S' += γ(S − S_{t−1})
//   4 preconditioner  P ← S'                         OldPrecision      P ← S
//                                                    PrecisionDebias   P ← κP
//                                                    SqrtScaling       P ← √(P + c_in) + c_out
//   5 step            Δ ← d / P                      Clip              Δ ← clip(Δ, −r, r)
//   6 mean            m' = m − α·Δ                   NaturalMomentum   m' += γ S_{t−1}(m − m_{t−1})/P
//
// The value type V is float or double (the fused loops of the core and of the LibTorch
// optimizers), an Eigen array (the elementwise phases of the full-Gaussian step), or a tensor
// (the LibTorch tensor-operation path on other devices): stage code uses only +, −, ×, ÷ and the
// functions sqrt_of and clip below, which a tensor type provides by argument-dependent lookup.
// So each equation is written once for every layer and device.
#pragma once

#include <algorithm>
#include <cmath>

namespace blr::stage {

/// The values of one coordinate (or of a whole vector, for array and tensor value types).
/// Inputs are read-only for the stages; the results start as copies (see rule/policy.hpp).
template <class V>
struct Coordinate {
  // Inputs.
  V gradient;        ///< ĝ (the estimator's gradient); phase 1 may add the prior
  V curvature;       ///< Ĥ (the estimator's curvature); phase 3 may add the prior
  V mean;            ///< m_t
  V precision;       ///< S_t
  V average;         ///< u_t (GradientAverage)
  V mean_prev;       ///< m_{t−1} (NaturalMomentum)
  V precision_prev;  ///< S_{t−1} (NaturalMomentum)
  // Results.
  V direction;       ///< d
  V new_average;     ///< u_{t+1}
  V new_precision;   ///< S_{t+1}
  V preconditioner;  ///< P
  V step;            ///< Δ = d/P (clipped)
  V new_mean;        ///< m_{t+1}
};

/// What the step needs to know of "now": the 1-based step number and the rates of this step.
struct StepContext {
  long t = 1;                   ///< the step being taken, 1-based
  double mean_rate = 0.0;       ///< α_t (ρ_m)
  double precision_rate = 0.0;  ///< ρ_S of this step (weight of Ĥ)
  double precision_keep = 1.0;  ///< weight of S_t (1 − ρ_S, or β₂ given exactly)
};

inline float sqrt_of(float x) { return std::sqrt(x); }
inline double sqrt_of(double x) { return std::sqrt(x); }
inline float clip(float x, float r) { return std::min(r, std::max(-r, x)); }
inline double clip(double x, double r) { return std::min(r, std::max(-r, x)); }

/// The phase a stage acts in first; a Policy lists its stages in this order.
enum Order : int {
  kGradientPhase = 10,
  kAverageOrder = 20,
  kDirectionPhase = 30,
  kCurvaturePhase = 40,
  kCorrectionOrder = 50,
  kMomentumOrder = 60,
  kOldPrecisionOrder = 70,
  kDebiasOrder = 80,
  kSqrtOrder = 90,
  kClipOrder = 100,
};

}  // namespace blr::stage
