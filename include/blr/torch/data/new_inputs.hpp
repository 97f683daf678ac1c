// New inputs for a trained network (blr predict): a file read and transformed exactly as the
// run's own inputs were, so the model sees what it was trained on.
//
//   FILE.csv  the training table's feature columns by name (others, the label among them, are
//             ignored): categorical columns one-hot coded with the training levels, numeric ones
//             standardised with the training rows' mean and sd (Dataset::statistics
//             "feature_mean", "feature_std"; data/csv_data.hpp, data/prepare.hpp);
//   other     a torch.save dict with key "x" (data/tensor_file.hpp): float inputs as they are, as
//             in training; for a Fashion-MNIST run raw pixel values 0–255, standardised with the
//             run's pixel mean and sd ("x <- (x/255 - pixel_mean)/pixel_std").
//
// The result must match the training inputs' example shape and kind (float or integer), and be
// finite; otherwise one sentence naming the file (blr::Error).
#pragma once

#include <ATen/Tensor.h>

#include <string>

#include "blr/torch/data/dataset.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch {

/// The inputs of `path`, transformed as `config`'s training data `training` was.
::at::Tensor read_new_inputs(const std::string& path, const TrainConfig& config,
                             const Dataset& training);

}  // namespace blr::torch
