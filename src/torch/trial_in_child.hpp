// A decode that LibTorch may crash in, tried first in a child process (private to src/torch).
//
// LibTorch's readers of TorchScript archives (checkpoints, --model-file) can crash on crafted input
// (SIGSEGV in its TorchScript type parser) or allocate gigabytes before refusing it (reproducers in
// fuzz/corpus/checkpoint/ and fuzz/corpus/torchscript_model/). So the decode runs first in a forked
// child whose address space is capped at what this process uses plus `extra_bytes`; the caller
// decodes in-process only when the child neither crashed nor ran out of memory. A child that has
// not finished after `timeout` (it should never hang) is stopped, and the outcome is kUnknown, as
// when no process can be forked: the caller then decodes in-process as it would without the trial.
// Callers decode onto the CPU in the child (a forked child must not initialise CUDA). Used by the
// checkpoint reader, the --model-file loader and the torch.save tensor-file reader (whose
// unpickler grew to 24 GB on fuzz/corpus/tensor_file/oom-unpickler-long-binput, which the pickle
// check, blr/torch/data/pickle_check.hpp, now refuses first).
// Header-only, so that fuzz/libfuzzer can compile checkpoint.cpp alone (C++17).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <new>
#include <string>

namespace blr::torch::detail {

/// Virtual memory of this process in bytes (/proc/self/statm), 0 when unknown.
inline uint64_t virtual_memory() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return statm ? pages * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE)) : 0;
}

/// LibTorch reports a failed allocation as c10::Error ("DefaultCPUAllocator: can't allocate
/// memory", "not enough memory") as well as std::bad_alloc; other errors are ordinary refusals.
inline bool reports_allocation_failure(const std::string& what) {
  for (const char* phrase : {"bad_alloc", "can't allocate memory", "not enough memory",
                             "out of memory", "Cannot allocate memory"}) {
    if (what.find(phrase) != std::string::npos) return true;
  }
  return false;
}

struct TrialOutcome {
  enum Kind { kFine, kCrashed, kOutOfMemory, kUnknown } kind = kUnknown;
  int signal = 0;  ///< kCrashed: the signal that ended the child
};

/// Runs `decode()` in a child process capped at this process's memory + `extra_bytes`. kFine also
/// covers an ordinary exception in the child (the in-process decode reports it with its message).
template <class Decode>
TrialOutcome trial_in_child(Decode&& decode, uint64_t extra_bytes, std::chrono::seconds timeout) {
  const uint64_t budget = virtual_memory() + extra_bytes;
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return {};  // no process to spare
  if (child == 0) {
    const rlimit cap{budget, budget};
    if (virtual_memory() > 0) ::setrlimit(RLIMIT_AS, &cap);
    int status = 0;
    try {
      decode();
    } catch (const std::bad_alloc&) {
      status = 3;
    } catch (const std::exception& e) {
      status = reports_allocation_failure(e.what()) ? 3 : 1;
    } catch (...) {
      status = 1;
    }
    ::_exit(status);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (useconds_t pause = 100;; pause = std::min<useconds_t>(2 * pause, 10'000)) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 || std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return {};
    }
    ::usleep(pause);
  }
  if (WIFSIGNALED(status)) return {TrialOutcome::kCrashed, WTERMSIG(status)};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return {TrialOutcome::kOutOfMemory, 0};
  return {TrialOutcome::kFine, 0};
}

}  // namespace blr::torch::detail
