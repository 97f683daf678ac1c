// Printing and collecting Table-1 rows (table1_report.hpp).
#include "table1_report.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <limits>

namespace blr::cli {

namespace {
constexpr int kWidth = 157;
}

void print_table1_header() {
  fmt::print("{:<19} {:<6} {:<28} {:<37} {:<40} {:>9} {:>8}  {}\n", "row", "layer", "family",
             "approximation", "reduces to", "max dev", "tol", "result");
  fmt::print("{}\n", std::string(kWidth, '-'));
}

Table1Outcome run_table1_rows(const std::vector<Table1Row>& rows, const std::string& layer,
                              const std::string& only) {
  Table1Outcome out;
  for (const auto& row : rows) {
    if (!only.empty() && row.row != only) continue;
    ++out.ran;
    ReductionResult r;
    std::string error;
    try {
      r = row.check();
    } catch (const std::exception& e) {
      error = e.what();
      r.max_deviation = std::numeric_limits<double>::infinity();
    }
    const bool pass = error.empty() && r.pass();
    out.failures += pass ? 0 : 1;
    fmt::print("{:<19} {:<6} {:<28} {:<37} {:<40} {:>9.1e} {:>8.0e}  {}\n", row.row, layer,
               row.family, row.approximation, row.reduces_to, r.max_deviation, r.tolerance,
               pass ? "PASS" : "FAIL");
    std::fflush(stdout);
    if (!error.empty()) fmt::print(stderr, "  {}: {}\n", row.row, error);
    out.rows.push_back({{"row", row.row},
                        {"layer", layer},
                        {"family", row.family},
                        {"approximation", row.approximation},
                        {"reduces_to", row.reduces_to},
                        {"problem", row.problem},
                        {"file", row.file},
                        {"max_deviation", r.max_deviation},
                        {"tolerance", r.tolerance},
                        {"note", error.empty() ? r.note : error},
                        {"pass", pass}});
  }
  return out;
}

void print_table1_footer(int ran, int failures) {
  fmt::print("{}\n{} rows, {} passed, {} failed\n", std::string(kWidth, '-'), ran, ran - failures,
             failures);
}

}  // namespace blr::cli
