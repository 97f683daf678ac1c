// `blr table1`: runs every Table-1 reduction check and prints one row each — the core's rows here,
// and the LibTorch layer's rows (the deep-learning rows proven where networks are trained) in
// `blr-torch table1-torch`, started as a child process so that this front never loads LibTorch.
// The exit status is non-zero when any row fails or cannot be run.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "blr/algorithms/table1.hpp"
#include "blr/core/error.hpp"
#include "command.hpp"
#include "json_output.hpp"
#include "table1_report.hpp"
#include "torch_part.hpp"

namespace {

namespace fs = std::filesystem;

#ifdef BLR_TORCH_FRONT
// The torch rows from `blr-torch table1-torch`: they print their own lines; their JSON comes back
// through a temporary file.
blr::cli::Table1Outcome run_torch_rows(const std::string& only) {
  const fs::path json = fs::temp_directory_path() /
                        fmt::format("blr-table1-torch.{}.json", static_cast<long>(::getpid()));
  std::vector<std::string> args{"table1-torch", "--json", json.string()};
  if (!only.empty()) args.insert(args.end(), {"--row", only});
  std::string why;
  const int status = blr::cli::run_torch_part_child(args, why);
  blr::cli::Table1Outcome out;
  std::ifstream in(json);
  nlohmann::json rows;
  if (in) {
    try {
      in >> rows;
    } catch (const nlohmann::json::exception&) {
      rows = nlohmann::json();
    }
  }
  std::error_code ignored;
  fs::remove(json, ignored);
  blr::check(status >= 0, fmt::format("The LibTorch rows of Table 1 were not run: {}.", why));
  blr::check(status <= 1 && rows.is_array(),
             fmt::format("The LibTorch rows of Table 1 were not run: blr-torch table1-torch ended "
                         "with status {}.",
                         status));
  for (const auto& row : rows) {
    ++out.ran;
    out.failures += row.at("pass").get<bool>() ? 0 : 1;
    out.rows.push_back(row);
  }
  return out;
}
#endif

int run_table1(const std::string& json_path, const std::string& only, const std::string& layer) {
  const auto core_rows = blr::table1_rows();
  bool only_in_core = false;
  for (const auto& row : core_rows) only_in_core = only_in_core || row.row == only;
  blr::cli::print_table1_header();
  blr::cli::Table1Outcome all;
  if (layer != "torch") all = blr::cli::run_table1_rows(core_rows, "core", only);
  const bool want_torch = layer != "core" && !only_in_core;
#ifdef BLR_TORCH_FRONT
  if (want_torch) {
    const auto torch = run_torch_rows(only);
    all.ran += torch.ran;
    all.failures += torch.failures;
    for (const auto& row : torch.rows) all.rows.push_back(row);
  }
#else
  blr::check(layer != "torch", "This blr was built without LibTorch, so it has no torch rows.");
  (void)want_torch;
#endif
  if (!only.empty() && all.ran == 0) {
    throw blr::Error(fmt::format("No Table-1 row is named '{}'.", only));
  }
  blr::cli::print_table1_footer(all.ran, all.failures);
  if (!json_path.empty()) blr::cli::write_json_text(json_path, all.rows.dump(2));
  return all.failures == 0 ? 0 : 1;
}

void setup_table1(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("table1", "Check every Table-1 row of the BLR paper: reduction, "
                                           "deviation, PASS/FAIL (core and LibTorch layers).");
  auto json = std::make_shared<std::string>();
  auto only = std::make_shared<std::string>();
  auto layer = std::make_shared<std::string>("all");
  cmd->add_option("--json", *json, "Write the rows as a JSON array to this file ('-' = stdout).");
  cmd->add_option("--row", *only, "Run only the row with this name.");
  cmd->add_option("--layer", *layer,
                  "Which rows: core (the Eigen presets), torch (the LibTorch optimizers), all.")
      ->check(CLI::IsMember({"all", "core", "torch"}))
      ->capture_default_str();
  cmd->callback([json, only, layer, &exit_code] { exit_code = run_table1(*json, *only, *layer); });
}

BLR_REGISTER_COMMAND("table1", 10, setup_table1);

}  // namespace
