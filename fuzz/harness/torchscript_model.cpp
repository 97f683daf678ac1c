// Fuzz harness: the TorchScript model loader of `--model-file` (include/blr/torch/nn/script_file.hpp,
// load_script_module on bytes: what load_script_model wraps in a Model), the archive LibTorch's
// torch::jit::load parses: a zip, pickled constants and tensors, and TorchScript source that it
// compiles. Before LibTorch, the archive check (data/archive_check.hpp) reads the zip directory
// and every pickle; then a trial load runs in a capped child process.
//
// A blr::Error is an accepted rejection; a crash, a sanitizer report or another exception is a
// bug. Properties of an accepted module: it has parameters and a forward method, and every
// parameter's elements can be read (a sum over each; LibTorch is not instrumented, so an
// over-read there shows only if it crashes).
#include <torch/script.h>

#include <cstdint>
#include <string>

#include "blr/torch/nn/script_file.hpp"
#include "fuzz_check.hpp"

using blr::fuzz::accepted;
using blr::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  torch::jit::Module module;
  const bool ok = accepted([&] { module = blr::torch::load_script_module(bytes, "fuzz.pt"); });
  if (!ok) return 0;
  require(module.parameters(/*recurse=*/true).size() > 0, "an accepted module has no parameters");
  require(module.find_method("forward").has_value(), "an accepted module has no forward");
  for (const auto& p : module.parameters(/*recurse=*/true)) (void)p.sum().item<double>();
  return 0;
}
