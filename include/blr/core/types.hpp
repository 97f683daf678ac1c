// Basic linear-algebra types of the blr core.
//
// The core works in double precision on Eigen column vectors and matrices. A parameter vector θ,
// a mean m and a diagonal precision s are all `Vector`; dense precisions, Hessians and
// per-example gradient tables (one row per example) are `Matrix`.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace blr {

using Vector = Eigen::VectorXd;
using Matrix = Eigen::MatrixXd;
using Index = Eigen::Index;

}  // namespace blr
