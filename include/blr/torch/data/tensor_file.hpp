// A data set from a file written by Python's `torch.save` (the default zip format of PyTorch ≥ 1.6;
// read with LibTorch's unpickler, torch::jit::pickle_load): a dict of tensors
//
//   {"x": inputs (N, ...), "y": targets (N) or (N, ...), "x_test": ..., "y_test": ...,
//    "x_ood": out-of-distribution inputs (M, ...)}
//
// x_test and y_test are optional (both or neither); without them data/prepare.hpp holds out a
// fixed share of the examples as the test set. x_ood is optional: inputs of x's shape and kind
// with no labels, the OOD set of the OOD AUROC, AUPR and FPR95 (predictive entropy, test set vs
// x_ood; Dataset::ood_shift = "x_ood").
//
// Targets: int64 (or another integer dtype) are class labels in [0, C) and make a classification
// task with C = the largest label + 1; floating targets make a regression task with outputs D = 1
// for y of shape (N) or D for (N, D) (standardised by data/prepare.hpp; metrics are reported in
// the original units). `task` overrides the inference: classification with floating targets requires whole
// numbers. Inputs: floating x becomes float32 (as it is, not standardised: the user's model
// expects its own inputs); integer x (token ids) int64; bool and complex x are refused.
//
// Every failure is one sentence naming the file: a file above `max_bytes` (kMaxTensorFileBytes,
// 2 GiB; checked before reading), not a torch.save archive, not a dict, a missing or unknown key,
// a value that is not a tensor, a wrong dtype, mismatched example counts, a non-finite value (its
// split, key and first flat index), labels out of range or not whole numbers.
#pragma once

#include <cstdint>
#include <string>

#include "blr/torch/data/dataset.hpp"

namespace blr::torch {

inline constexpr std::uintmax_t kMaxTensorFileBytes = std::uintmax_t{2} << 30;

struct TensorFileOptions {
  std::string path;
  std::string task;  ///< "" (infer from y's dtype), "classification" or "regression"
  std::uintmax_t max_bytes = kMaxTensorFileBytes;
};

/// Reads the file: its train (and test) split as it holds them, targets checked and converted
/// (data/prepare.hpp's prepare_targets); finish_dataset does the rest.
Dataset read_tensor_file(const TensorFileOptions& options);

/// Only the inputs of the file: key "x" of a dict written by torch.save (other keys are ignored,
/// so a training file serves too), float32 or int64, finite, at least one example (blr predict).
::at::Tensor read_tensor_file_inputs(const TensorFileOptions& options);

/// The same from bytes in memory (`source` names them in messages): the fuzz harness's entry.
Dataset parse_tensor_file(const std::string& bytes, const std::string& source,
                          const std::string& task = "");

}  // namespace blr::torch
