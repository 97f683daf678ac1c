#include "isolated_decode.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <new>
#include <string>

namespace blr::torch::detail {
namespace {

// Virtual memory of this process in bytes (/proc/self/statm), 0 when unknown.
uint64_t virtual_memory() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return statm ? pages * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE)) : 0;
}

// LibTorch reports a failed allocation as c10::Error ("DefaultCPUAllocator: can't allocate
// memory", "not enough memory") as well as std::bad_alloc.
bool reports_allocation_failure(const std::string& what) {
  for (const char* phrase : {"bad_alloc", "can't allocate memory", "not enough memory",
                             "out of memory", "Cannot allocate memory"}) {
    if (what.find(phrase) != std::string::npos) return true;
  }
  return false;
}

constexpr int kFinished = 0;
constexpr int kOutOfMemory = 3;

}  // namespace

TrialDecode decode_in_child(const std::function<void()>& decode, uint64_t input_bytes) {
  TrialDecode result;
  result.extra_bytes = 4 * input_bytes + (1ull << 30);
  const uint64_t parent = virtual_memory();
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return result;  // no process to spare: the caller decodes in-process
  if (child == 0) {
    if (parent > 0) {
      const rlimit cap{parent + result.extra_bytes, parent + result.extra_bytes};
      ::setrlimit(RLIMIT_AS, &cap);
    }
    int status = kFinished;
    try {
      decode();
    } catch (const std::bad_alloc&) {
      status = kOutOfMemory;
    } catch (const std::exception& e) {
      status = reports_allocation_failure(e.what()) ? kOutOfMemory : kFinished;
    } catch (...) {
    }
    ::_exit(status);
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(60 + static_cast<long>(input_bytes / 10'000'000));
  int status = 0;
  for (useconds_t pause = 100;; pause = std::min<useconds_t>(2 * pause, 10'000)) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 || std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return result;  // kNotRun: the caller decodes in-process
    }
    ::usleep(pause);
  }
  if (WIFSIGNALED(status)) {
    result.outcome = TrialDecode::Outcome::kCrashed;
    result.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kOutOfMemory) {
    result.outcome = TrialDecode::Outcome::kOutOfMemory;
  } else {
    result.outcome = TrialDecode::Outcome::kFinished;
  }
  return result;
}

}  // namespace blr::torch::detail
