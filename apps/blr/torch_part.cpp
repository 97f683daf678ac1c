// The hand-over from the `blr` front to its LibTorch part (torch_part.hpp).
#include "torch_part.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include "thread_policy.hpp"

namespace blr::cli {

const PartCommand& torch_command(std::string_view name) {
  for (const auto& c : kTorchCommands) {
    if (name == c.name) return c;
  }
  throw std::logic_error("torch_command: '" + std::string(name) + "' is not in kTorchCommands.");
}

bool is_network_sensitivity(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], kTorchSensitivity.name) != 0) return false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a == "--") return false;
    if (a == "--checkpoint" || a.starts_with("--checkpoint=")) return true;
  }
  return false;
}

#ifdef BLR_TORCH_FRONT

namespace {

// `blr-torch` in the directory of this executable (of argv[0] where /proc is missing).
std::filesystem::path torch_part_path(const char* argv0) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path(argv0) : self).parent_path() / "blr-torch";
}

}  // namespace

int run_torch_part_child(const std::vector<std::string>& args, std::string& why) {
  const std::filesystem::path part = torch_part_path("blr");
  std::vector<std::string> storage{part.string()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  choose_omp_wait_policy();
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  const int failed = ::posix_spawn(&pid, part.c_str(), nullptr, nullptr, argv.data(), environ);
  if (failed != 0) {
    why = fmt::format("{} could not be started ({})", part.string(), std::strerror(failed));
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      why = fmt::format("waiting for {} failed ({})", part.string(), std::strerror(errno));
      return -1;
    }
  }
  if (WIFSIGNALED(status)) {
    why = fmt::format("{} was killed by signal {}", part.string(), WTERMSIG(status));
    return -1;
  }
  return WEXITSTATUS(status);
}

void run_torch_part_if_asked(int argc, char** argv) {
  if (argc < 2) return;
  bool ours = is_network_sensitivity(argc, argv);
  for (const auto& c : kTorchCommands) ours = ours || std::strcmp(argv[1], c.name) == 0;
  if (!ours) return;
  const std::filesystem::path part = torch_part_path(argv[0]);
  choose_omp_wait_policy();  // here, so that the part need not start itself again to set it
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
