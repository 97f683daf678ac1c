// The data set a training configuration names (TrainConfig::data):
//
//   fashion-mnist   data/fashion_mnist.hpp (the Debian package's files)
//   FILE.pt         a dict of tensors written by Python's torch.save (data/tensor_file.hpp)
//   FILE.csv        a CSV table with --label, --task, optional --test-data (data/csv_data.hpp)
//
// The files' splits, limits, validation split and standardisation follow data/prepare.hpp.
#pragma once

#include "blr/torch/data/dataset.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch {

/// Loads, checks, splits and standardises the configuration's data set.
Dataset load_dataset(const TrainConfig& config);

}  // namespace blr::torch
