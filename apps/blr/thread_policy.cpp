// Idle threads and freed memory (thread_policy.hpp).
#include "thread_policy.hpp"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <limits>

namespace blr::cli {
namespace {

/// Sets `name` to `value` when it is unset; true when it did.
bool set_if_unset(const char* name, const char* value) {
  if (std::getenv(name) != nullptr) return false;
  return ::setenv(name, value, 1) == 0 && std::getenv(name) != nullptr;
}

}  // namespace

bool choose_omp_wait_policy() {
  return set_if_unset("OMP_WAIT_POLICY", "PASSIVE");
}

bool choose_openblas_thread_timeout() {
  return set_if_unset("OPENBLAS_THREAD_TIMEOUT", "4");
}

void keep_freed_memory() {
  ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  ::mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

void keep_freed_memory_unless_set() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "malloc.") != nullptr) return;
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"})
    if (std::getenv(name) != nullptr) return;
  keep_freed_memory();
}

}  // namespace blr::cli
