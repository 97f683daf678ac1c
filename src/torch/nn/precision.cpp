// Numeric precision of a model's computation (precision.hpp).
#include "blr/torch/nn/precision.hpp"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <torch/version.h>

#include "blr/core/error.hpp"

namespace blr::torch {

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = {"float32", "bfloat16", "float16",
                                                 "autocast-bfloat16"};
  return names;
}

std::string precision_name(Precision precision) {
  return precision_names().at(static_cast<size_t>(precision));
}

Precision parse_precision(const std::string& text) {
  const auto& names = precision_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<Precision>(i);
  }
  throw Error(fmt::format(
      "Unknown precision '{}'; choose float32, bfloat16, float16 or autocast-bfloat16.", text));
}

::c10::ScalarType parameter_dtype(Precision precision) {
  switch (precision) {
    case Precision::kBFloat16: return ::c10::ScalarType::BFloat16;
    case Precision::kFloat16: return ::c10::ScalarType::Half;
    default: return ::c10::ScalarType::Float;
  }
}

// LibTorch 2.x names the device in its autocast API; 1.13 has per-device functions.
#if TORCH_VERSION_MAJOR >= 2
CpuAutocast::CpuAutocast()
    : was_enabled_(::at::autocast::is_autocast_enabled(::at::kCPU)),
      previous_dtype_(::at::autocast::get_autocast_dtype(::at::kCPU)) {
  ::at::autocast::set_autocast_enabled(::at::kCPU, true);
  ::at::autocast::set_autocast_dtype(::at::kCPU, ::at::kBFloat16);
  ::at::autocast::increment_nesting();
}

CpuAutocast::~CpuAutocast() {
  if (::at::autocast::decrement_nesting() == 0) ::at::autocast::clear_cache();
  ::at::autocast::set_autocast_enabled(::at::kCPU, was_enabled_);
  ::at::autocast::set_autocast_dtype(::at::kCPU, previous_dtype_);
}
#else
CpuAutocast::CpuAutocast()
    : was_enabled_(::at::autocast::is_cpu_enabled()),
      previous_dtype_(::at::autocast::get_autocast_cpu_dtype()) {
  ::at::autocast::set_cpu_enabled(true);
  ::at::autocast::set_autocast_cpu_dtype(::at::kBFloat16);
  ::at::autocast::increment_nesting();
}

CpuAutocast::~CpuAutocast() {
  // The cache holds bfloat16 copies of the weights; they change at every step.
  if (::at::autocast::decrement_nesting() == 0) ::at::autocast::clear_cache();
  ::at::autocast::set_cpu_enabled(was_enabled_);
  ::at::autocast::set_autocast_cpu_dtype(previous_dtype_);
}
#endif

}  // namespace blr::torch
