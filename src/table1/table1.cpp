// The registry of Table-1 rows: one line per implemented row, in the paper's order.
#include "blr/algorithms/table1.hpp"

#include "reductions.hpp"

namespace blr {

std::vector<Table1Row> table1_rows() {
  std::vector<Table1Row> rows;
  for (auto make : detail::kReductionRows) rows.push_back(make());
  return rows;
}

}  // namespace blr
