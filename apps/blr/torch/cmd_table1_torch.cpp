// `blr-torch table1-torch`: the Table-1 rows of the LibTorch layer (blr/torch/checks/table1_rows.hpp),
// printed line by line like the core's; `blr table1` starts it as a child process and merges its
// rows and JSON (apps/blr/cmd_table1.cpp). Not listed in --help: run `blr table1 --layer torch`.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

#include "../command.hpp"
#include "../json_output.hpp"
#include "../table1_report.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/checks/table1_rows.hpp"

namespace {

void setup_table1_torch(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("table1-torch", "The LibTorch rows of `blr table1`.");
  cmd->group("");  // internal: `blr table1` runs it
  auto json = std::make_shared<std::string>();
  auto only = std::make_shared<std::string>();
  cmd->add_option("--json", *json, "Write the rows as a JSON array to this file.");
  cmd->add_option("--row", *only, "Run only the row with this name.");
  cmd->callback([json, only, &exit_code] {
    const auto out = blr::cli::run_table1_rows(blr::torch::torch_table1_rows(), "torch", *only);
    if (!json->empty()) blr::cli::write_json_text(*json, out.rows.dump(2));
    exit_code = out.failures == 0 ? 0 : 1;
  });
}

BLR_REGISTER_COMMAND("table1-torch", 99, setup_table1_torch);

}  // namespace
