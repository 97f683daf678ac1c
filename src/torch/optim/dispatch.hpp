// The floating-point dtype dispatch of the fused CPU passes, outside namespace blr::torch.
//
// LibTorch 2.x's AT_DISPATCH_* macros name `torch::headeronly::...` unqualified; expanded inside
// namespace blr::torch, `torch` finds blr::torch and the code does not compile (LibTorch 1.13's
// macros name only `at::` and `c10::`). The macro is therefore expanded here, in a namespace that
// no `torch` shadows, and calls back with a value of the element type (the name LibTorch 2.x
// wants is a compile-time constant, so it is this file's, not the caller's):
//
//   blr_dispatch::floating_types(t.scalar_type(), [&](auto tag) {
//     using scalar_t = decltype(tag);
//     ...
//   });
#pragma once

#include <ATen/Dispatch.h>

namespace blr_dispatch {

template <class F>
void floating_types(::at::ScalarType type, F&& function) {
  AT_DISPATCH_FLOATING_TYPES(type, "blr_fused_pass", [&] { function(scalar_t{}); });
}

}  // namespace blr_dispatch
