// The deep-learning rows of Table 1 (Khan & Rue 2023: SGD with momentum, RMSprop, Adam) at the
// LibTorch layer: the BLR driver (GaussianOptimizer, mean_field.hpp) running the core's policies
// (gradient descent with a heavy-ball gradient average on a fixed-covariance Gaussian;
// blr/algorithms/rmsprop_adam.hpp for RMSprop and Adam), without weight noise, checked step by
// step against torch::optim::SGD, RMSprop and Adam on a small float64 MLP and minibatches drawn
// with a fixed seed. The tolerance is 1e-12 on the largest parameter difference over all steps:
// both sides compute the same operations in another order, so each step differs by a few
// rounding errors (~1e-16 relative) that the contraction of the iteration keeps from growing; a
// wrong coefficient (e.g. β₂ for 1 − β₂, a missing debias) gives differences of 1e-4 or more.
//
// The rows have the core rows' form (blr/algorithms/table1.hpp), so `blr table1` can print them
// beside the core's; tests/torch/checks/table1_rows_test.cpp asserts that each passes.
#pragma once

#include <vector>

#include "blr/algorithms/table1.hpp"

namespace blr::torch {

/// The torch-layer rows: "torch-sgd-momentum", "torch-rmsprop", "torch-adam".
std::vector<Table1Row> torch_table1_rows();

}  // namespace blr::torch
