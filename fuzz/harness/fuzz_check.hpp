// What every fuzz harness shares: a blr::Error is an accepted rejection of bad input; anything
// else — another exception, a result that breaks a stated property (a non-finite value after an
// accepted parse, a round trip that changes the data) — is a bug, reported and ended with
// abort() so that libFuzzer (and the replay runner) records the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "blr/core/error.hpp"

namespace blr::fuzz {

/// Ends the run: `what` names the broken property.
[[noreturn]] inline void bug(const std::string& what) {
  std::fprintf(stderr, "blr fuzz: BUG: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// A property that must hold for every accepted input.
inline void require(bool condition, const std::string& what) {
  if (!condition) bug(what);
}

/// Runs `f`; a blr::Error is an accepted rejection (returns false), any other exception a bug.
template <class F>
bool accepted(F&& f) {
  try {
    f();
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    bug(std::string("an exception from outside blr escaped: ") + e.what());
  } catch (...) {
    bug("an exception of unknown type escaped");
  }
}

}  // namespace blr::fuzz
