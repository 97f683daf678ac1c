// Decoding untrusted bytes with LibTorch in a child process first.
//
// LibTorch's readers (the checkpoint archive, torch::jit::pickle_load of a torch.save file) trust
// what they read: a crafted file with a valid checksum can crash them (SIGSEGV in the TorchScript
// type parser) or make them grow memory until the machine runs out (the unpickler reproducer in
// fuzz/known/tensor_file took 24 GB). Neither can be caught in-process. So the caller's decode is
// run first in a forked child whose address space is capped at
//
//     cap = the parent's virtual memory + 4 × input bytes + 1 GiB,
//
// and the caller decodes in its own process only when the child finished (with success or an
// ordinary error, which the in-process decode then reports with its own message). A child that
// has not finished after 60 s + 1 s per 10 MB is killed and the decode goes on in-process, as it
// does when no process can be forked. The child decodes with every tensor on the CPU (a forked
// child must not initialise CUDA).
#pragma once

#include <cstdint>
#include <functional>

namespace blr::torch::detail {

struct TrialDecode {
  enum class Outcome { kFinished, kCrashed, kOutOfMemory, kNotRun };
  Outcome outcome = Outcome::kNotRun;
  int signal = 0;             // the signal that ended the child (kCrashed)
  uint64_t extra_bytes = 0;   // 4 × input bytes + 1 GiB: the memory the child was allowed to add
};

/// Runs `decode` in a child process capped as above; `input_bytes` sizes the cap and the time
/// limit. An exception from `decode` that reports an allocation failure counts as out of memory;
/// any other exception as finished (the caller's own decode reports it).
TrialDecode decode_in_child(const std::function<void()>& decode, uint64_t input_bytes);

}  // namespace blr::torch::detail
