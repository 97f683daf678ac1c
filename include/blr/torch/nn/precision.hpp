// The numeric precision of a model's computation (`blr train --precision`):
//
//   float32           parameters and arithmetic in float32 (the default);
//   bfloat16, float16 parameters stored and computed in that type; floating inputs are cast to it
//                     and the outputs returned as float32 (losses and metrics stay in float32).
//                     The mean-field BLR optimizers keep float32 master weights (optim/mean_field.hpp);
//                     optimizers whose state would take the parameters' type are refused;
//   autocast-bfloat16 parameters in float32, forward passes under LibTorch's CPU autocast
//                     (matrix products and convolutions in bfloat16, the rest in float32), outputs
//                     as float32; any optimizer.
#pragma once

#include <c10/core/ScalarType.h>

#include <string>
#include <vector>

namespace blr::torch {

enum class Precision { kFloat32, kBFloat16, kFloat16, kAutocastBFloat16 };

/// "float32", "bfloat16", "float16", "autocast-bfloat16", and back (blr::Error naming the text).
std::string precision_name(Precision precision);
Precision parse_precision(const std::string& text);
const std::vector<std::string>& precision_names();

/// The dtype of the parameters under `precision` (float32 for float32 and autocast).
::c10::ScalarType parameter_dtype(Precision precision);

/// Runs the forward passes of a scope under LibTorch's CPU autocast to bfloat16 and restores the
/// previous state (and clears autocast's weight cache) at its end.
class CpuAutocast {
 public:
  CpuAutocast();
  ~CpuAutocast();
  CpuAutocast(const CpuAutocast&) = delete;
  CpuAutocast& operator=(const CpuAutocast&) = delete;

 private:
  bool was_enabled_;
  ::c10::ScalarType previous_dtype_;
};

}  // namespace blr::torch
