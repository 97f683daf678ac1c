// `blr table1`: runs every Table-1 reduction check and prints one row each.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "blr/algorithms/table1.hpp"
#include "blr/core/error.hpp"
#include "command.hpp"
#include "json_output.hpp"

namespace {

int run_table1(const std::string& json_path, const std::string& only) {
  const auto rows = blr::table1_rows();
  nlohmann::json out = nlohmann::json::array();
  int failures = 0, ran = 0;
  fmt::print("{:<19} {:<28} {:<37} {:<40} {:>9} {:>8}  {}\n", "row", "family", "approximation",
             "reduces to", "max dev", "tol", "result");
  fmt::print("{}\n", std::string(150, '-'));
  for (const auto& row : rows) {
    if (!only.empty() && row.row != only) continue;
    ++ran;
    blr::ReductionResult r;
    std::string error;
    try {
      r = row.check();
    } catch (const std::exception& e) {
      error = e.what();
      r.max_deviation = std::numeric_limits<double>::infinity();
    }
    const bool pass = error.empty() && r.pass();
    failures += pass ? 0 : 1;
    fmt::print("{:<19} {:<28} {:<37} {:<40} {:>9.1e} {:>8.0e}  {}\n", row.row, row.family,
               row.approximation, row.reduces_to, r.max_deviation, r.tolerance,
               pass ? "PASS" : "FAIL");
    if (!error.empty()) fmt::print(stderr, "  {}: {}\n", row.row, error);
    out.push_back({{"row", row.row},
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
  if (!only.empty() && ran == 0) throw blr::Error(fmt::format("No Table-1 row is named '{}'.", only));
  fmt::print("{}\n{} rows, {} passed, {} failed\n", std::string(150, '-'), ran, ran - failures,
             failures);
  if (!json_path.empty()) blr::cli::write_json_text(json_path, out.dump(2));
  return failures == 0 ? 0 : 1;
}

void setup(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("table1", "Check every Table-1 row of the BLR paper: reduction, "
                                           "deviation, PASS/FAIL.");
  auto json = std::make_shared<std::string>();
  auto only = std::make_shared<std::string>();
  cmd->add_option("--json", *json, "Write the rows as a JSON array to this file ('-' = stdout).");
  cmd->add_option("--row", *only, "Run only the row with this name.");
  cmd->callback([json, only, &exit_code] { exit_code = run_table1(*json, *only); });
}

BLR_REGISTER_COMMAND("table1", 10, setup);

}  // namespace
