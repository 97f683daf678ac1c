// Declarations of the Table-1 reduction checks (one file each under src/core/algorithms/).
#pragma once

#include <array>

#include "blr/algorithms/table1.hpp"

namespace blr::detail {

using RowFactory = Table1Row (*)();

// Rows are added here, in the order of Table 1, as their checks land.
inline constexpr std::array<RowFactory, 0> kReductionRows{};

}  // namespace blr::detail
