// Fuzz harness: the TorchScript model loader of `--model-file` (include/blr/torch/nn/script_file.hpp,
// load_script_model on bytes), the archive LibTorch's torch::jit::load parses: a zip, pickled
// constants and tensors, and TorchScript source that it compiles.
//
// A blr::Error is an accepted rejection; a crash, a sanitizer report or another exception is a
// bug. Properties of an accepted module: it has parameters, and the Model keeps the very bytes it
// was loaded from (what a checkpoint embeds).
#include <cstdint>
#include <memory>
#include <string>

#include "blr/torch/nn/model.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "fuzz_check.hpp"

using blr::fuzz::accepted;
using blr::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes =
      std::make_shared<const std::string>(reinterpret_cast<const char*>(data), size);
  blr::torch::Model model;
  const bool ok = accepted([&] { model = blr::torch::load_script_model(bytes, "fuzz.pt"); });
  if (!ok) return 0;
  require(!model.parameters().empty(), "an accepted module has no parameters");
  require(model.script_archive() != nullptr && *model.script_archive() == *bytes,
          "an accepted module does not keep the bytes it was loaded from");
  return 0;
}
