// The key of a parameter in a LibTorch optimizer's state map (torch::optim::Optimizer::state()):
// the TensorImpl's address as text in LibTorch 1.x, the address itself in 2.x. Used to read
// AdamW's second moment (posterior/sensitivity.cpp) under both.
#pragma once

#include <ATen/core/Tensor.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace blr::torch {

template <class StateMap>
typename StateMap::key_type libtorch_state_key(const StateMap&, const at::Tensor& parameter) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;
    text << parameter.unsafeGetTensorImpl();
    return text.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

}  // namespace blr::torch
