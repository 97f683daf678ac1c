// No silent wrong answers: a command's result is checked before anything of it is shown.
//
// `HeldStdout` keeps what a command prints to stdout (its tables) in memory until the result has
// been checked; `release()` then writes it out, and an exception instead drops it, so a result that
// is not finite produces an error and a non-zero exit, never a table.
// `require_finite` walks a result (the command's JSON document) and throws a blr::Error naming the
// first entry that is NaN or infinite: its key, its position in an array and, for per-coefficient
// arrays (mean, sd, ...) with a "features" list beside them, the coefficient's name.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "result_document.hpp"

namespace blr::cli {

class HeldStdout {
 public:
  HeldStdout();
  ~HeldStdout();  ///< drops what was held unless released
  HeldStdout(const HeldStdout&) = delete;
  HeldStdout& operator=(const HeldStdout&) = delete;
  /// Writes what was held to the real stdout and stops holding.
  void release();

 private:
  void restore();
  std::FILE* saved_ = nullptr;
  std::FILE* memory_ = nullptr;
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
};

/// Throws blr::Error when `result` holds a number that is not finite; `what` names the command.
void require_finite(const nlohmann::json& result, const std::string& what);
/// The same for a document with long arrays beside its fields (result_document.hpp).
void require_finite(const ResultDocument& result, const std::string& what);

}  // namespace blr::cli
