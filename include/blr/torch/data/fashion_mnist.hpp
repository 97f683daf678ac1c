// Fashion-MNIST (Xiao, Rasul & Vollgraf 2017): 60 000 training and 10 000 test 28×28 grey-scale
// images of clothing in 10 classes, read from the Debian package `dataset-fashion-mnist`
// (/usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz).
//
// Images are scaled to [0, 1] and standardised with the mean and standard deviation of the
// training pixels (one scalar each): x ← (x/255 − m)/s. A validation split, if asked for, is a
// seeded random subset of the training set and takes no part in the statistics.
//
// The shifted set used for out-of-distribution detection is the test set with inverted
// intensities (x/255 ← 1 − x/255, then the same standardisation): same classes and shapes, but
// the dark background becomes bright — a covariate shift the network never saw.
#pragma once

#include <ATen/Tensor.h>

#include "blr/torch/data/dataset.hpp"

#include <cstdint>
#include <string>

namespace blr::torch {

struct FashionMnistOptions {
  std::string directory;             ///< empty: default_fashion_mnist_directory()
  int64_t train_limit = 0;           ///< > 0: keep only the first N training examples
  int64_t test_limit = 0;            ///< > 0: keep only the first N test examples
  double validation_fraction = 0.0;  ///< in [0, 1): share of the training set held out
  uint64_t seed = 0;                 ///< seed of the validation split
  void validate() const;
};

/// $BLR_FASHION_MNIST_DIR if set, else /usr/share/datasets/fashion-mnist.
std::string default_fashion_mnist_directory();

/// Loads, checks, splits and standardises Fashion-MNIST as a Dataset (name "fashion-mnist",
/// classification with 10 classes; x: N×1×28×28 float32, standardised; y: N int64;
/// statistics: {"pixel_mean": m, "pixel_std": s, "directory": ...}). A missing directory or file
/// gives a blr::Error that names the file and the Debian package to install; a malformed file
/// gives one that names the file.
Dataset load_fashion_mnist(const FashionMnistOptions& options);

/// Reads one image/label file pair into raw tensors (images N×1×H×W uint8, labels int64) and
/// checks that the counts agree and every label lies in [0, 9].
Split read_image_pair(const std::string& images_path, const std::string& labels_path);

}  // namespace blr::torch
