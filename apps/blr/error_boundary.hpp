// The CLI boundary: every exception that reaches main() becomes one sentence on stderr and an
// exit status, so that nothing foreign (a LibTorch backtrace, "basic_filebuf::underflow",
// "std::bad_alloc") reaches the user.
//
// Exit statuses (docs/reliability.md):
//   0  success
//   2  the input, the options or the environment are wrong (blr::Error, and everything from
//      outside blr: out of memory, file-system and stream errors, LibTorch's c10::Error and the
//      plain std::runtime_error it also throws, malformed JSON)
//   3  a bug in blr (std::logic_error and any other exception); the fuzz harnesses treat it as one
//   4  training diverged and --fail-on-divergence was given
// CLI11's own parse errors keep CLI11's statuses (non-zero) and messages.
#pragma once

#include <exception>
#include <string>

namespace blr::cli {

inline constexpr int kExitError = 2;
inline constexpr int kExitBug = 3;
inline constexpr int kExitDiverged = 4;

/// The message and exit status for an exception caught at the boundary.
struct Failure {
  std::string message;  ///< one sentence, no newline, ending in a full stop
  int exit_code = kExitBug;
};

/// Classifies the exception `error` (pass std::current_exception()).
Failure describe_failure(std::exception_ptr error);

}  // namespace blr::cli
