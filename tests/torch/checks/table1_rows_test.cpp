// The deep-learning rows of Table 1 at the LibTorch layer (blr/torch/checks/table1_rows.hpp): SGD
// with momentum, RMSprop and Adam from the BLR driver equal LibTorch's optimizers step by step.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>

#include "blr/torch/checks/table1_rows.hpp"

namespace blr::torch {
namespace {

TEST(TorchTable1Rows, EveryRowPasses) {
  const auto rows = torch_table1_rows();
  std::set<std::string> names;
  for (const auto& row : rows) {
    names.insert(row.row);
    const ReductionResult r = row.check();
    std::cout << row.row << ": deviation " << r.max_deviation << " (tolerance " << r.tolerance
              << ", " << r.note << ")\n";
    EXPECT_TRUE(r.pass()) << row.row << ": deviation " << r.max_deviation << " > " << r.tolerance;
    EXPECT_LE(r.tolerance, 1e-12) << row.row;
  }
  for (const char* name : {"torch-sgd-momentum", "torch-rmsprop", "torch-adam"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

}  // namespace
}  // namespace blr::torch
