// Self-registering subcommands of the `blr` executable.
//
// Each command lives in its own apps/blr/cmd_<name>.cpp (torch commands in apps/blr/torch/) and
// registers a setup function with `BLR_REGISTER_COMMAND`; main() builds the CLI11 app from the
// registry. A command's callback returns the process exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace blr::cli {

/// Adds a subcommand to `app`; the returned status is stored in `exit_code` when it runs.
using CommandSetup = std::function<void(CLI::App& app, int& exit_code)>;

struct CommandEntry {
  std::string name;
  int order;  ///< position in --help
  CommandSetup setup;
};

inline std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

inline bool register_command(std::string name, int order, CommandSetup setup) {
  command_registry().push_back({std::move(name), order, std::move(setup)});
  return true;
}

}  // namespace blr::cli

#define BLR_CONCAT_INNER(a, b) a##b
#define BLR_CONCAT(a, b) BLR_CONCAT_INNER(a, b)
#define BLR_REGISTER_COMMAND(name, order, setup) \
  static const bool BLR_CONCAT(blr_command_registered_, __COUNTER__) = \
      ::blr::cli::register_command(name, order, setup)
