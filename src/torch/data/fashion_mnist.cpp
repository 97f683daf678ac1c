#include "blr/torch/data/fashion_mnist.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "blr/core/error.hpp"
#include "blr/torch/data/batches.hpp"
#include "blr/torch/data/idx.hpp"
#include "blr/torch/data/split.hpp"

namespace blr::torch {
namespace {

constexpr const char* kPackageHint =
    "Fashion-MNIST comes from the Debian package dataset-fashion-mnist; install it with "
    "`apt-get install dataset-fashion-mnist` (or point BLR_FASHION_MNIST_DIR / --data-dir at a "
    "directory holding the four *-ubyte.gz files).";

std::string require_file(const std::string& directory, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path path = fs::path(directory) / name;
  if (!fs::exists(path)) {
    throw Error(
        fmt::format("The Fashion-MNIST file '{}' does not exist. {}", path.string(), kPackageHint));
  }
  return path.string();
}

at::Tensor standardise(const at::Tensor& raw, double mean, double std, bool invert) {
  auto x = raw.to(at::kFloat).div_(255.0);
  if (invert) x = 1.0 - x;
  return x.sub_(mean).div_(std).contiguous();
}

}  // namespace

void FashionMnistOptions::validate() const {
  check(train_limit >= 0, fmt::format("Option 'train-limit' must be >= 0; got {}.", train_limit));
  check(test_limit >= 0, fmt::format("Option 'test-limit' must be >= 0; got {}.", test_limit));
  check_range("validation", validation_fraction, 0.0, 1.0, false, true);
}

std::string default_fashion_mnist_directory() {
  if (const char* env = std::getenv("BLR_FASHION_MNIST_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return "/usr/share/datasets/fashion-mnist";
}

Split read_image_pair(const std::string& images_path, const std::string& labels_path) {
  const IdxArray images = read_idx_gz(images_path, 3);
  const IdxArray labels = read_idx_gz(labels_path, 1);
  if (images.dims[0] != labels.dims[0]) {
    throw Error(
        fmt::format("The image file '{}' holds {} images but the label file '{}' holds {} "
                    "labels.",
                    images_path, images.dims[0], labels_path, labels.dims[0]));
  }
  for (size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] > 9) {
      throw Error(fmt::format("The label file '{}' is corrupt: label {} is {} (expected 0..9).",
                              labels_path, i, labels.data[i]));
    }
  }
  const auto n = images.dims[0];
  auto x = at::empty({n, 1, images.dims[1], images.dims[2]}, at::kByte);
  std::memcpy(x.data_ptr<uint8_t>(), images.data.data(), images.data.size());
  auto y = at::empty({n}, at::kByte);
  std::memcpy(y.data_ptr<uint8_t>(), labels.data.data(), labels.data.size());
  return {x, y.to(at::kLong)};
}

Dataset load_fashion_mnist(const FashionMnistOptions& options) {
  options.validate();
  Dataset out;
  out.name = "fashion-mnist";
  out.task = Task::kClassification;
  out.outputs = 10;
  const std::string directory =
      options.directory.empty() ? default_fashion_mnist_directory() : options.directory;
  if (!std::filesystem::is_directory(directory)) {
    throw Error(fmt::format("The Fashion-MNIST directory '{}' does not exist. {}", directory,
                            kPackageHint));
  }
  // Checked in this order so that the first missing file is the one named.
  const auto train_images = require_file(directory, "train-images-idx3-ubyte.gz");
  const auto train_labels = require_file(directory, "train-labels-idx1-ubyte.gz");
  const auto test_images = require_file(directory, "t10k-images-idx3-ubyte.gz");
  const auto test_labels = require_file(directory, "t10k-labels-idx1-ubyte.gz");
  Split train = read_image_pair(train_images, train_labels);
  Split test = read_image_pair(test_images, test_labels);
  check(train.x.size(2) == test.x.size(2) && train.x.size(3) == test.x.size(3),
        fmt::format("The Fashion-MNIST training and test images in '{}' differ in size.",
                    directory));
  train = first(train, options.train_limit);
  test = first(test, options.test_limit);

  Split validation;
  if (options.validation_fraction > 0.0) {
    std::tie(train, validation) =
        hold_out(train, options.validation_fraction, options.seed, "validation");
  }

  // Pixel statistics of the training images in [0, 1], in double for accuracy.
  const auto pixels = train.x.to(at::kDouble).div_(255.0);
  const double pixel_mean = pixels.mean().item<double>();
  const double pixel_std = pixels.std(/*unbiased=*/false).item<double>();
  check(pixel_std > 0.0, "The Fashion-MNIST training images have zero variance.");

  out.train = {standardise(train.x, pixel_mean, pixel_std, false), train.y};
  if (validation.size() > 0) {
    out.validation = {standardise(validation.x, pixel_mean, pixel_std, false), validation.y};
  }
  out.test = {standardise(test.x, pixel_mean, pixel_std, false), test.y};
  out.test_shifted = {standardise(test.x, pixel_mean, pixel_std, true), test.y};
  out.ood_shift = "inverted";
  out.statistics = {{"pixel_mean", pixel_mean},
                    {"pixel_std", pixel_std},
                    {"directory", directory},
                    {"standardisation", "x <- (x/255 - pixel_mean)/pixel_std"}};
  return out;
}

}  // namespace blr::torch
