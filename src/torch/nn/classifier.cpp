#include "blr/torch/nn/classifier.hpp"

#include <fmt/format.h>

#include <sstream>

#include "blr/core/error.hpp"
#include "blr/torch/nn/lenet.hpp"
#include "blr/torch/nn/mlp.hpp"

namespace blr::torch {

void ModelSpec::validate() const {
  check(kind == "mlp" || kind == "lenet",
        fmt::format("Unknown model '{}'; choose mlp or lenet.", kind));
  for (auto w : hidden) {
    check(w >= 1 && w <= 1'000'000,
          fmt::format("Hidden widths must lie in [1, 1000000]; got {}.", w));
  }
  check(input_channels >= 1, "A model needs at least one input channel.");
  check(classes >= 2, "A classifier needs at least two classes.");
  if (kind == "lenet") {
    check(image_size >= 12,
          fmt::format("LeNet-5 needs images of at least 12×12 pixels; got {}.", image_size));
  }
}

std::shared_ptr<Classifier> make_classifier(const ModelSpec& spec) {
  spec.validate();
  if (spec.kind == "lenet") {
    return std::make_shared<LeNet5>(spec.input_channels, spec.image_size, spec.classes);
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
