// Fuzz harness: the torch.save tensor-file reader (include/blr/torch/data/tensor_file.hpp,
// parse_tensor_file on bytes, then data/prepare.hpp's finish_dataset: test hold-out, limits,
// standardisation, Dataset::validate).
//
// The first byte picks the task argument ("", classification, regression); the rest is the file.
// A blr::Error is an accepted rejection; a crash, a sanitizer report or another exception is a
// bug. Properties of an accepted data set: it validates, its splits are non-empty, and every
// floating input and target is finite.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "blr/torch/data/prepare.hpp"
#include "blr/torch/data/tensor_file.hpp"
#include "fuzz_check.hpp"

using blr::fuzz::accepted;
using blr::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kTasks[] = {"", "classification", "regression"};
  const std::string task = kTasks[data[0] % 3];
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  blr::torch::Dataset d;
  const bool ok = accepted([&] {
    d = blr::torch::parse_tensor_file(bytes, "fuzz.pt", task);
    blr::torch::finish_dataset(d, {});
  });
  if (!ok) return 0;
  require(d.train.size() > 0 && d.test.size() > 0, "an accepted data set has an empty split");
  for (const auto* s : {&d.train, &d.test}) {
    for (const auto& t : {s->x, s->y}) {
      if (at::isFloatingType(t.scalar_type())) {
        require(at::isfinite(t).all().item<bool>(), "an accepted data set holds a non-finite value");
      }
    }
  }
  return 0;
}
