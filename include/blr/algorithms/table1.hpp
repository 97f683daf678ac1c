// Table 1 of Khan & Rue (2023) as executable checks.
//
// Each row names a candidate family, the approximation of the natural gradient, the classical
// algorithm the BLR reduces to and a problem on which the reduction is checked: the preset is run
// beside the classical algorithm (written plainly in the check) and the largest deviation of their
// iterates is compared with a tolerance — ≤ 1e-10 for deterministic reductions, a bound derived
// from the estimator's standard error for stochastic ones. `blr table1` prints these rows; the
// test suite asserts that every row passes. Nothing is listed as done that this table does not show.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace blr {

struct ReductionResult {
  double max_deviation = 0.0;
  double tolerance = 0.0;
  std::string note;  ///< what was compared, e.g. "20 iterates of m"
  bool pass() const { return max_deviation <= tolerance; }
};

struct Table1Row {
  std::string row;            ///< short name, e.g. "newton"
  std::string family;         ///< candidate distribution
  std::string approximation;  ///< natural-gradient approximation
  std::string reduces_to;     ///< classical algorithm
  std::string problem;        ///< where it is checked
  std::string file;           ///< the preset's header
  std::function<ReductionResult()> check;
};

/// Every implemented row, in the order of Table 1.
std::vector<Table1Row> table1_rows();

}  // namespace blr
