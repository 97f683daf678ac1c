// Internal: per-group option merging and the non-finite check shared by the optimizers.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <string>

#include "blr/core/error.hpp"

namespace blr::torch::detail {

/// The options object of param group `g`, which must be of the optimizer's own type.
template <class Options>
const Options& group_options_as(const ::torch::optim::OptimizerParamGroup& group, size_t g,
                                const std::string& optimizer) {
  const auto* options = dynamic_cast<const Options*>(&group.options());
  check(options != nullptr,
        fmt::format("{}: param group {} carries the options of another optimizer.", optimizer, g));
  return *options;
}

/// "[2, 3]" for a shape.
inline std::string shape_string(::at::IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

/// A group's own value, else the optimizer's default, else the built-in value.
inline double merged(const c10::optional<double>& own, const c10::optional<double>& fallback,
                     double builtin) {
  if (own.has_value()) return *own;
  if (fallback.has_value()) return *fallback;
  return builtin;
}

/// Throws the sentence error of a step that produced NaN or ±∞.
[[noreturn]] inline void throw_non_finite(const std::string& optimizer, int64_t step, size_t group,
                                          size_t index) {
  throw Error(
      fmt::format("{} step {} produced a non-finite value in parameter {} of param group "
                  "{} (learning rate too large, or NaN/Inf in the gradients?).",
                  optimizer, step, index, group));
}

/// True when every entry of t is finite (the tensor-operation path).
inline bool all_finite(const ::at::Tensor& t) {
  return ::at::isfinite(t).all().item<bool>();
}

}  // namespace blr::torch::detail
