// Saving and restoring a rule state exactly (DESIGN §4.6).
//
// The state is written as versioned JSON: {"format": "blr.rule_state", "version": 1, "family": …,
// "step", "mean", "precision" (vector, or the lower Cholesky factor row by row), "gradient_average",
// "previous"…}. Doubles are written in their shortest round-trip form, so a restored run continues
// bit for bit. Unknown versions, families or sizes are refused with a clear error.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "blr/rule/gaussian_rule.hpp"

namespace blr {

namespace detail {

inline nlohmann::json vector_to_json(const Vector& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

inline Vector vector_from_json(const nlohmann::json& j, const char* what) {
  check(j.is_array(), fmt::format("Saved state: '{}' must be an array of numbers.", what));
  const auto values = j.get<std::vector<double>>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    check(std::isfinite(values[i]),
          fmt::format("Saved state: entry {} of '{}' is not a finite number.", i, what));
  }
  return Eigen::Map<const Vector>(values.data(), static_cast<Index>(values.size()));
}

/// A JSON integer in [lowest, highest] (lowest ≥ 0); a float, a string or an integer out of range
/// is refused (get<long>() of a float out of range would be undefined behaviour).
inline long integer_from_json(const nlohmann::json& j, const char* what, long lowest, long highest) {
  const bool ok = j.is_number_unsigned() && j.get<std::uint64_t>() >= static_cast<std::uint64_t>(lowest) &&
                  j.get<std::uint64_t>() <= static_cast<std::uint64_t>(highest);
  check(ok, fmt::format("Saved state: '{}' must be an integer in [{}, {}]; got {}.", what, lowest,
                        highest, j.dump()));
  return static_cast<long>(j.get<std::uint64_t>());
}

template <class Q>
constexpr const char* family_name() {
  if constexpr (std::is_same_v<Q, GaussianFixed>) return "gaussian_fixed";
  if constexpr (std::is_same_v<Q, GaussianDiag>) return "gaussian_diag";
  return "gaussian_full";
}

template <class Q>
nlohmann::json q_to_json(const Q& q) {
  nlohmann::json j;
  j["mean"] = vector_to_json(q.mean);
  if constexpr (std::is_same_v<Q, GaussianFull>) {
    const Matrix& l = q.precision.lower();
    std::vector<double> rows;
    for (Index i = 0; i < l.rows(); ++i)
      for (Index k = 0; k <= i; ++k) rows.push_back(l(i, k));
    j["precision_lower"] = rows;
  } else {
    j["precision"] = vector_to_json(q.precision);
  }
  return j;
}

template <class Q>
Q q_from_json(const nlohmann::json& j) {
  Vector mean = vector_from_json(j.at("mean"), "mean");
  if constexpr (std::is_same_v<Q, GaussianFull>) {
    const Vector packed = vector_from_json(j.at("precision_lower"), "precision_lower");
    const Index d = mean.size();
    check(packed.size() == d * (d + 1) / 2,
          "Saved state: 'precision_lower' does not match the dimension of 'mean'.");
    Matrix l = Matrix::Zero(d, d);
    Index n = 0;
    for (Index i = 0; i < d; ++i)
      for (Index k = 0; k <= i; ++k) l(i, k) = packed[n++];
    for (Index i = 0; i < d; ++i) {
      check(l(i, i) > 0, fmt::format("Saved state: the Cholesky factor of the precision has a "
                                     "non-positive diagonal entry {} ({}).",
                                     i, l(i, i)));
    }
    return Q(std::move(mean), CholeskyFactor::from_lower(std::move(l)));
  } else {
    Vector precision = vector_from_json(j.at("precision"), "precision");
    check(precision.size() == mean.size(),
          "Saved state: 'precision' does not match the dimension of 'mean'.");
    for (Index i = 0; i < precision.size(); ++i) {
      check(precision[i] > 0,
            fmt::format("Saved state: precision entry {} must be positive; got {}.", i,
                        precision[i]));
    }
    return Q(std::move(mean), std::move(precision));
  }
}

}  // namespace detail

inline constexpr int kRuleStateVersion = 1;

template <GaussianCandidate Q>
std::string save_state(const RuleState<Q>& state) {
  nlohmann::json j;
  j["format"] = "blr.rule_state";
  j["version"] = kRuleStateVersion;
  j["family"] = detail::family_name<Q>();
  j["step"] = state.step;
  j["q"] = detail::q_to_json(state.q);
  j["gradient_average"] = detail::vector_to_json(state.gradient_average);
  j["has_previous"] = state.has_previous;
  if (state.has_previous) j["previous"] = detail::q_to_json(state.previous);
  return j.dump();
}

template <GaussianCandidate Q>
RuleState<Q> load_state(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("Saved state is not valid JSON: {}", e.what()));
  }
  try {
    check(j.value("format", "") == "blr.rule_state", "Saved state: not a blr rule state.");
    check(j.at("version") == kRuleStateVersion,  // compared as JSON: no conversion of a float
          fmt::format("Saved state: version {} is not supported (this blr reads version {}).",
                      j.at("version").dump(), kRuleStateVersion));
    check(j.at("family").get<std::string>() == detail::family_name<Q>(),
          fmt::format("Saved state holds family '{}' but '{}' was expected.",
                      j.at("family").get<std::string>(), detail::family_name<Q>()));
    RuleState<Q> state;
    state.step = detail::integer_from_json(j.at("step"), "step", 0,
                                           std::numeric_limits<long>::max());
    state.q = detail::q_from_json<Q>(j.at("q"));
    state.gradient_average = detail::vector_from_json(j.at("gradient_average"), "gradient_average");
    check(state.gradient_average.size() == 0 ||  // empty until the first step
              state.gradient_average.size() == state.q.mean.size(),
          "Saved state: 'gradient_average' does not match the dimension of the mean.");
    state.has_previous = j.at("has_previous").get<bool>();
    if (state.has_previous) {
      state.previous = detail::q_from_json<Q>(j.at("previous"));
      check(state.previous.mean.size() == state.q.mean.size(),
            "Saved state: 'previous' does not match the dimension of the mean.");
    }
    return state;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("Saved state is incomplete or malformed: {}", e.what()));
  }
}

}  // namespace blr
