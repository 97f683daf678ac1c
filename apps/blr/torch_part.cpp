// The hand-over from the `blr` front to its LibTorch part (torch_part.hpp).
#include "torch_part.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

namespace blr::cli {

const PartCommand& torch_command(std::string_view name) {
  for (const auto& c : kTorchCommands) {
    if (name == c.name) return c;
  }
  throw std::logic_error("torch_command: '" + std::string(name) + "' is not in kTorchCommands.");
}

#ifdef BLR_TORCH_FRONT

void run_torch_part_if_asked(int argc, char** argv) {
  if (argc < 2) return;
  bool ours = false;
  for (const auto& c : kTorchCommands) ours = ours || std::strcmp(argv[1], c.name) == 0;
  if (!ours) return;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path part =
      (error ? std::filesystem::path(argv[0]) : self).parent_path() / "blr-torch";
  ::execv(part.c_str(), argv);
  const int why = errno;
  std::cerr << "blr: error: The LibTorch part of blr (" << part.string()
            << ") could not be started (" << std::strerror(why)
            << "); build it with `cmake --build build --target blr-torch` or reinstall blr.\n";
  std::exit(2);
}

void add_torch_part_placeholders(CLI::App& app) {
  for (const auto& c : kTorchCommands) {
    app.add_subcommand(c.name, c.summary)->allow_extras()->prefix_command();
  }
}

#endif

}  // namespace blr::cli
