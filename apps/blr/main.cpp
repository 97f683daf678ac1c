// The `blr` command line: subcommands registered by apps/blr/cmd_*.cpp.
#include <algorithm>
#include <iostream>

#include "blr/core/error.hpp"
#include "command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"blr — the Bayesian learning rule: derive, run and verify learning algorithms."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "blr 0.1.0");
  int exit_code = 0;
  auto& registry = blr::cli::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& entry : registry) entry.setup(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const blr::Error& e) {
    std::cerr << "blr: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "blr: unexpected error: " << e.what() << '\n';
    return 3;
  }
  return exit_code;
}
