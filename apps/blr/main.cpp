// The `blr` command line: subcommands registered by apps/blr/cmd_*.cpp.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "command.hpp"
#include "did_you_mean.hpp"
#include "error_boundary.hpp"
#include "json_output.hpp"
#include "preflight.hpp"
#include "thread_policy.hpp"
#include "torch_part.hpp"

namespace {

// Commands that never run worker threads (and --help, --version): starting them again would only
// cost a second start (for the torch part, a second load of LibTorch: about a second on the
// 2-core machine). Of the Eigen commands, only `infer` and `sensitivity` run threaded products.
bool runs_no_workers(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return true;
#ifdef BLR_TORCH_PART
  if (std::strcmp(argv[1], "optimizers") == 0) return true;
#else
  if (std::strcmp(argv[1], "infer") != 0 && std::strcmp(argv[1], "sensitivity") != 0) return true;
#endif
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

// The idle-thread policies (thread_policy.hpp): libgomp and OpenBLAS read their variables when
// they are loaded, before main(), so when this process had to set one, it starts itself again so
// that they see it. The started image finds the variable set and goes on: no loop. Started by the
// front, the torch part finds its policy set by the front. If exec fails (no /proc), the run goes
// on with the libraries' defaults.
void default_thread_policies(int argc, char** argv) {
  if (runs_no_workers(argc, argv)) return;
#ifdef BLR_TORCH_PART
  const bool set = blr::cli::choose_omp_wait_policy();
#else
  const bool set = blr::cli::choose_openblas_thread_timeout();
#endif
  if (set) ::execv("/proc/self/exe", argv);
}

// When the command's --json is "-", stdout is the JSON document's alone (json_output.hpp).
void reserve_stdout_if_json_goes_there(const CLI::App& app) {
  for (const CLI::App* cmd = &app; !cmd->get_subcommands().empty();) {
    cmd = cmd->get_subcommands().front();
    const CLI::Option* json = cmd->get_option_no_throw("--json");
    if (json != nullptr && json->count() > 0 && json->results().back() == "-") {
      blr::cli::reserve_stdout_for_json();
    }
  }
}

}  // namespace

namespace {

int run(int argc, char** argv) {
#ifdef BLR_TORCH_FRONT
  blr::cli::run_torch_part_if_asked(argc, argv);  // `blr train ...` becomes `blr-torch train ...`
#endif
  default_thread_policies(argc, argv);
#ifdef BLR_TORCH_PART
  // Freed memory is kept for reuse (thread_policy.hpp); `blr bench` chooses for itself (`bench step
  // --allocator default` measures glibc's own rules).
  if (argc < 2 || std::strcmp(argv[1], "bench") != 0) blr::cli::keep_freed_memory_unless_set();
#endif
  // Past a file-size limit (ulimit -f) a write then fails with EFBIG, reported like a full disk,
  // instead of the signal killing the process in the middle of a file.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"blr — the Bayesian learning rule: derive, run and verify learning algorithms."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "blr 0.1.0");
  int exit_code = 0;
  auto& registry = blr::cli::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& entry : registry) entry.setup(app, exit_code);
#ifdef BLR_TORCH_FRONT
  blr::cli::add_torch_part_placeholders(app);
#endif
  blr::cli::add_common_option_checks(app);
  app.parse_complete_callback([&app] {
    reserve_stdout_if_json_goes_there(app);
    blr::cli::check_no_control_characters(app);
    blr::cli::check_no_empty_values(app);
    blr::cli::check_output_paths(app);
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
        dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      const std::string hint = blr::cli::did_you_mean(app);
      if (!hint.empty()) {
        std::cerr << "blr: error: " << hint << '\n';
        return e.get_exit_code();
      }
    }
    return app.exit(e);
  } catch (...) {
    const auto failure = blr::cli::describe_failure(std::current_exception());
    std::cerr << "blr: error: " << failure.message << '\n';
    return failure.exit_code;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  blr::cli::reserve_standard_descriptors();
  const int exit_code = run(argc, argv);
  // A lost table is a failure (error_boundary.hpp); an earlier failure keeps its own sentence.
  const std::string lost = blr::cli::close_standard_output();
  if (!lost.empty() && exit_code == 0) {
    std::cerr << "blr: error: " << lost << '\n';
    return blr::cli::kExitError;
  }
  return exit_code;
}
