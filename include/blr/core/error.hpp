// Errors and checks.
//
// Every failure the user can cause (a bad option, a malformed file, a step that produced NaN)
// is reported as a `blr::Error` whose message is a full sentence naming the culprit: the option
// and its allowed range, the file and line, or the step number and parameter block.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "blr/core/types.hpp"

namespace blr {

/// The one exception type of blr; `what()` is a sentence meant for the user.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Throws `Error(message)` unless `condition` holds.
inline void check(bool condition, const std::string& message) {
  if (!condition) throw Error(message);
}

/// Throws `Error(fmt::format(format, args...))` unless `condition` holds; the message is formatted
/// only on failure, so this form costs nothing in a hot loop.
template <class First, class... Rest>
void check(bool condition, fmt::format_string<First, Rest...> format, First&& first, Rest&&... rest) {
  if (!condition)
    throw Error(fmt::format(format, std::forward<First>(first), std::forward<Rest>(rest)...));
}

/// Throws unless lo <= value <= hi (or lo < value when `open_low`), naming the option.
inline void check_range(std::string_view option, double value, double lo, double hi,
                        bool open_low = false, bool open_high = false) {
  const bool low_ok = open_low ? value > lo : value >= lo;
  const bool high_ok = open_high ? value < hi : value <= hi;
  if (!(low_ok && high_ok) || std::isnan(value)) {
    throw Error(fmt::format("Option '{}' must lie in {}{}, {}{}; got {}.", option,
                            open_low ? "(" : "[", lo, hi, open_high ? ")" : "]", value));
  }
}

/// Throws unless value > 0 (and finite), naming the option.
inline void check_positive(std::string_view option, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw Error(fmt::format("Option '{}' must be a positive finite number; got {}.", option, value));
  }
}

/// Throws unless value >= 0 (and finite), naming the option.
inline void check_nonnegative(std::string_view option, double value) {
  if (!(value >= 0.0) || !std::isfinite(value)) {
    throw Error(
        fmt::format("Option '{}' must be a non-negative finite number; got {}.", option, value));
  }
}

/// True when every entry is finite.
template <class Derived>
bool all_finite(const Eigen::DenseBase<Derived>& x) {
  return x.allFinite();
}

/// Throws an Error naming the step and the block when `x` holds a NaN or an infinity.
template <class Derived>
void check_finite(const Eigen::DenseBase<Derived>& x, std::string_view block, long step) {
  if (!x.allFinite()) {
    Index bad = 0;
    for (Index i = 0; i < x.size(); ++i) {
      if (!std::isfinite(x.derived().data()[i])) {
        bad = i;
        break;
      }
    }
    throw Error(fmt::format("Step {} produced a non-finite value in '{}' (entry {} = {}).", step,
                            block, bad, x.derived().data()[bad]));
  }
}

}  // namespace blr
