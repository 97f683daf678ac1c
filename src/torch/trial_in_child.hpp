// A decode that LibTorch may crash in, tried first in a child process (private to src/torch).
//
// LibTorch's readers of TorchScript archives (checkpoints, --model-file) can crash on crafted input
// (SIGSEGV in its TorchScript type parser) or allocate gigabytes before refusing it (reproducers in
// fuzz/corpus/checkpoint/ and fuzz/corpus/torchscript_model/). So the decode runs first in a forked
// child whose address space is capped at what this process uses plus `extra_bytes`; the caller
// decodes in-process only when the child decoded the bytes. A refusal in the child (an exception)
// comes back through a pipe as its message, and the caller reports it without decoding in-process:
// LibTorch's type parser crashes on some inputs only some of the time (fuzz/corpus/checkpoint/,
// docs/reliability.md), so an input that merely failed in the child could still crash here. A
// child that has not finished after `timeout` (it should never hang) is stopped, and the outcome
// is kUnknown, as when no process can be forked: the caller then decodes in-process as it would
// without the trial.
// Callers decode onto the CPU in the child (a forked child must not initialise CUDA). Used by the
// checkpoint reader, the --model-file loader and the torch.save tensor-file reader (whose
// unpickler grew to 24 GB on fuzz/corpus/tensor_file/oom-unpickler-long-binput, which the pickle
// check, blr/torch/data/pickle_check.hpp, now refuses first).
// Header-only, so that fuzz/libfuzzer can compile checkpoint.cpp alone (C++17).
#pragma once

#include <c10/util/Exception.h>
#include <fcntl.h>
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

#include "blr/core/error.hpp"

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
  enum Kind { kFine, kRefused, kCrashed, kOutOfMemory, kUnknown } kind = kUnknown;
  int signal = 0;         ///< kCrashed: the signal that ended the child
  std::string message;    ///< kRefused: the exception's message (LibTorch's without backtrace)
  bool sentence = false;  ///< kRefused: the message is a blr::Error's whole sentence
};

/// Runs `decode()` in a child process capped at this process's memory + `extra_bytes`.
template <class Decode>
TrialOutcome trial_in_child(Decode&& decode, uint64_t extra_bytes, std::chrono::seconds timeout) {
  const uint64_t budget = virtual_memory() + extra_bytes;
  int channel[2];
  if (::pipe(channel) != 0) return {};
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(channel[0]);
    ::close(channel[1]);
    return {};  // no process to spare
  }
  if (child == 0) {
    ::close(channel[0]);
    // A crash ends the child by its signal, whatever handlers the parent installed (Python's
    // faulthandler, a sanitizer's or libFuzzer's reporter), so that it is told apart as a crash.
    for (const int crash : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(crash, SIG_DFL);
    const rlimit cap{budget, budget};
    if (virtual_memory() > 0) ::setrlimit(RLIMIT_AS, &cap);
    int status = 0;
    std::string message;
    try {
      decode();
    } catch (const std::bad_alloc&) {
      status = 3;
    } catch (const Error& e) {
      status = 2;
      message = e.what();
    } catch (const std::exception& e) {
      const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
      message = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
      status = reports_allocation_failure(message) ? 3 : 1;
    } catch (...) {
      status = 1;
      message = "unknown error";
    }
    // Less than a pipe's atomic size: the write never blocks.
    message.resize(std::min<size_t>(message.size(), 4000));
    if (!message.empty() && ::write(channel[1], message.data(), message.size()) < 0) status = 4;
    ::_exit(status);
  }
  ::close(channel[1]);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (useconds_t pause = 100;; pause = std::min<useconds_t>(2 * pause, 10'000)) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 || std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      ::close(channel[0]);
      return {};
    }
    ::usleep(pause);
  }
  std::string message;
  ::fcntl(channel[0], F_SETFL, O_NONBLOCK);
  char buffer[4096];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) > 0;) message.append(buffer, n);
  ::close(channel[0]);
  if (WIFSIGNALED(status)) return {TrialOutcome::kCrashed, WTERMSIG(status), "", false};
  if (!WIFEXITED(status)) return {};
  switch (WEXITSTATUS(status)) {
    case 0: return {TrialOutcome::kFine, 0, "", false};
    case 1: return {TrialOutcome::kRefused, 0, message, false};
    case 2: return {TrialOutcome::kRefused, 0, message, true};
    case 3: return {TrialOutcome::kOutOfMemory, 0, "", false};
    default: return {};  // the message was lost: decode in-process, as without the trial
  }
}

}  // namespace blr::torch::detail
