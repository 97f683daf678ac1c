#include "blr/torch/nn/classifier.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/nn/binary_mlp.hpp"
#include "blr/torch/nn/gpt.hpp"
#include "blr/torch/nn/lenet.hpp"
#include "blr/torch/nn/mlp.hpp"
#include "blr/torch/nn/resnet.hpp"

namespace blr::torch {
namespace {

// "4.0 TB", "23.4 GB": a byte count for messages.
std::string human_bytes(double bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000 && u < 5) {
    bytes /= 1000;
    ++u;
  }
  return fmt::format("{:.3g} {}", bytes, units[u]);
}

// Refuses, before anything is allocated, a network whose parameters, gradients and optimizer state
// (about six float32 copies: parameters, gradients and up to four optimizer buffers) cannot fit in
// the machine's memory: `--hidden 1000000,1000000` asked for 4 TB after 15 s of trying.
void check_fits_in_memory(double parameters) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;  // unknown: nothing to compare with
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  constexpr double kCopies = 6, kBytesPerValue = 4;
  const double needed = parameters * kCopies * kBytesPerValue;
  check(needed <= memory,
        fmt::format("The model would have {:.4g} parameters, needing about {} for its parameters, "
                    "gradients and optimizer state, but this machine has {} of memory; use smaller "
                    "hidden widths.",
                    parameters, human_bytes(needed), human_bytes(memory)));
}

}  // namespace

void ModelSpec::validate() const {
  check(kind == "mlp" || kind == "lenet" || kind == "binary-mlp" || kind == "resnet20" ||
            kind == "gpt",
        fmt::format("Unknown model '{}'; choose mlp, lenet, binary-mlp, resnet20 or gpt.", kind));
  for (auto w : hidden) {
    check(w >= 1 && w <= 1'000'000,
          fmt::format("Hidden widths must lie in [1, 1000000]; got {}.", w));
  }
  check(input_channels >= 1, "A model needs at least one input channel.");
  check(classes >= 1, "A model needs at least one output.");
  if (kind == "lenet") {
    check(image_size >= 12,
          fmt::format("LeNet-5 needs images of at least 12×12 pixels; got {}.", image_size));
  } else if (kind == "gpt") {
    gpt.validate();
  } else if (kind == "resnet20") {
    check(image_size >= 4,
          fmt::format("ResNet-20 needs images of at least 4×4 pixels; got {}.", image_size));
  } else {
    double parameters = 0, width = static_cast<double>(input_channels * image_size * image_size);
    for (auto w : hidden) {
      parameters += (width + 1) * static_cast<double>(w);
      width = static_cast<double>(w);
    }
    parameters += (width + 1) * static_cast<double>(classes);
    check_fits_in_memory(parameters);
  }
}

std::shared_ptr<Classifier> make_classifier(const ModelSpec& spec) {
  spec.validate();
  if (spec.kind == "lenet") {
    return std::make_shared<LeNet5>(spec.input_channels, spec.image_size, spec.classes);
  }
  if (spec.kind == "gpt") return std::make_shared<Gpt>(spec.gpt, spec.classes);
  if (spec.kind == "resnet20") return std::make_shared<ResNet20>(spec.input_channels, spec.classes);
  if (spec.kind == "binary-mlp") {
    return std::make_shared<BinaryMlp>(spec.input_channels * spec.image_size * spec.image_size,
                                       spec.hidden, spec.classes);
  }
  return std::make_shared<Mlp>(spec.input_channels * spec.image_size * spec.image_size, spec.hidden,
                               spec.classes);
}

std::vector<int64_t> parse_widths(const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    check(used == item.size() && !item.empty() && value >= 1 && value <= 1'000'000,
          fmt::format("Hidden widths must be a comma-separated list of positive integers such as "
                      "500,300; got '{}'.",
                      text));
    out.push_back(value);
  }
  check(!text.empty() && text.back() != ',',
        fmt::format("Hidden widths must not end with a comma; got '{}'.", text));
  return out;
}

}  // namespace blr::torch
