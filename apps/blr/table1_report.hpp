// The rows of `blr table1`, printed and collected the same way for the core's rows (run in the
// `blr` front) and the LibTorch layer's (run in `blr-torch table1-torch`, which the front starts as
// a child process so that it never loads LibTorch itself): one line per row with its layer,
// family, approximation, what it reduces to, the measured maximum deviation, the tolerance and
// PASS/FAIL; the JSON holds the same fields.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "blr/algorithms/table1.hpp"

namespace blr::cli {

struct Table1Outcome {
  int ran = 0;
  int failures = 0;
  nlohmann::json rows = nlohmann::json::array();
};

void print_table1_header();
/// Runs the rows of `rows` (only the one named `only`, if not empty) and prints one line each.
Table1Outcome run_table1_rows(const std::vector<Table1Row>& rows, const std::string& layer,
                              const std::string& only);
void print_table1_footer(int ran, int failures);

}  // namespace blr::cli
