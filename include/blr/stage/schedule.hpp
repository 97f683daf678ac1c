// Step-size schedules ρ_t for the BLR (Khan & Rue 2023, eq. 6; Robbins–Monro conditions in §2).
//
//   constant          ρ_t = ρ₀
//   inverse_power     ρ_t = ρ₀ / (1 + t/t₀)^κ          (κ ∈ (0.5, 1] satisfies Robbins–Monro)
//   cosine            ρ_t = ρ_min + ½(ρ₀ − ρ_min)(1 + cos(π·min(t, T)/T))
//   warmup_cosine     linear warm-up from ρ₀·w₀ to ρ₀ over W steps, then cosine over T − W
// t counts completed steps (0 for the first step).
#pragma once

#include <cmath>
#include <numbers>
#include <string>

#include "blr/core/error.hpp"

namespace blr {

struct Schedule {
  enum class Kind { constant, inverse_power, cosine, warmup_cosine };
  Kind kind = Kind::constant;
  double initial = 0.1;      ///< ρ₀
  double final_value = 0.0;  ///< ρ_min (cosine kinds)
  double t0 = 1.0;           ///< inverse_power: time scale
  double power = 1.0;        ///< inverse_power: κ
  long total_steps = 1;      ///< cosine kinds: T
  long warmup_steps = 0;     ///< warmup_cosine: W
  double warmup_start = 0.2;  ///< warmup_cosine: w₀ (fraction of ρ₀ at t = 0)

  static Schedule constant(double rho) { return Schedule{Kind::constant, rho}; }
  static Schedule inverse_power(double rho0, double t0, double power) {
    Schedule s{Kind::inverse_power, rho0};
    s.t0 = t0;
    s.power = power;
    return s;
  }
  static Schedule cosine(double rho0, long total, double rho_min = 0.0) {
    Schedule s{Kind::cosine, rho0, rho_min};
    s.total_steps = total;
    return s;
  }

  double at(long t) const {
    switch (kind) {
      case Kind::constant:
        return initial;
      case Kind::inverse_power:
        return initial / std::pow(1.0 + static_cast<double>(t) / t0, power);
      case Kind::cosine:
        return cosine_at(static_cast<double>(t), static_cast<double>(total_steps));
      case Kind::warmup_cosine: {
        if (t < warmup_steps) {
          const double f = static_cast<double>(t) / static_cast<double>(warmup_steps);
          return initial * (warmup_start + (1.0 - warmup_start) * f);
        }
        return cosine_at(static_cast<double>(t - warmup_steps),
                         static_cast<double>(total_steps - warmup_steps));
      }
    }
    return initial;
  }

  void validate(const std::string& name) const {
    check_nonnegative(name, initial);
    check_nonnegative(name + ".final", final_value);
    if (kind == Kind::inverse_power) {
      check_positive(name + ".t0", t0);
      check_range(name + ".power", power, 0.0, 1.0, true, false);
    }
    if (kind == Kind::cosine || kind == Kind::warmup_cosine) {
      check(total_steps >= 1, "Schedule '" + name + "' needs total_steps >= 1.");
      check(warmup_steps >= 0 && warmup_steps < total_steps,
            "Schedule '" + name + "' needs 0 <= warmup_steps < total_steps.");
      check_range(name + ".warmup_start", warmup_start, 0.0, 1.0);
    }
  }

 private:
  double cosine_at(double t, double total) const {
    const double x = std::min(t, total) / total;
    return final_value + 0.5 * (initial - final_value) * (1.0 + std::cos(std::numbers::pi * x));
  }
};

}  // namespace blr
