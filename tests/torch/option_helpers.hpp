// Test helper: an optimizer's options from key → value pairs through its option table (the same
// path the CLI and the Python package take), e.g. make_options<IvonOptions>({{"lr", 0.1}}).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "blr/core/option_table.hpp"

namespace blr::torch {

template <class O>
O make_options(std::initializer_list<std::pair<std::string, OptionValue>> values) {
  O o;
  O::table().apply(o, OptionValues(values.begin(), values.end()));
  return o;
}

}  // namespace blr::torch
