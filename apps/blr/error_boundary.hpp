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
//
// Standard output is part of the result (the tables of `blr infer`): as coreutils' close_stdout
// does, main() flushes and closes it before exiting, and a write that failed there or earlier (a
// full disk, /dev/full, a closed descriptor) turns a success into exit 2 with one sentence.
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

/// Opens /dev/null on each of the descriptors 0, 1, 2 that is closed (stdout read-only, so that
/// writes to it fail with EBADF): no file blr opens later takes a standard descriptor and
/// receives the table. Call first in main().
void reserve_standard_descriptors();

/// Flushes std::cout and stdout and closes stdout; "" when every write reached its destination,
/// otherwise the sentence "Cannot write to standard output: <reason>."
std::string close_standard_output();

}  // namespace blr::cli
