// The message of the error a call throws, for the tests of blr's sentence-long errors.
//
// `error_of(f)` runs `f` and returns the `what()` of the `blr::Error` it throws, or `kNoError` when
// it returns normally, so that a test compares the whole sentence (or a part of it) in one
// expectation and a call that wrongly succeeds fails that expectation with a readable value. Any
// other exception propagates, and gtest reports it as a failure of the test. `expect_error(run,
// parts)` expects a blr::Error whose message contains each of the parts.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "blr/core/error.hpp"

namespace blr::testing {

/// What `error_of` returns when the call throws nothing.
inline constexpr const char* kNoError = "(no error)";

template <class F>
std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    return e.what();
  }
  return kNoError;
}

/// Expects `run` to throw a blr::Error whose message contains every one of `parts`.
inline void expect_error(const std::function<void()>& run, const std::vector<std::string>& parts) {
  const std::string message = error_of(run);
  EXPECT_NE(message, kNoError) << "no blr::Error was thrown";
  for (const auto& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}
/// One part (a `const char*`, so that `{"a", "b"}` means the parts above, not a string).
inline void expect_error(const std::function<void()>& run, const char* part) {
  expect_error(run, std::vector<std::string>{part});
}

}  // namespace blr::testing
