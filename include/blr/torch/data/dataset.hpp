// A supervised data set as the trainer, the predictive, the metrics and the checkpoints see it:
// tensors of inputs and targets split into train / validation / test, and what the targets are.
//
//   classification: y holds int64 class indices in [0, outputs); its shape is (N) for one label
//                   per example or (N, T, ...) for one label per position (a language model's
//                   next tokens); the model returns logits of shape y.shape + (outputs).
//                   Loss: mean cross-entropy over every label (categorical likelihood).
//   regression:     y holds floating targets of shape (N) or (N, outputs); the model returns the
//                   predictive means in the same shape (Gaussian likelihood, its noise model is the
//                   trainer's).
//
// x may have any shape (N, ...) and dtype the model accepts (float images, int64 token ids).
// Every loader (Fashion-MNIST, the user's `torch.save` file or CSV table, a text corpus) returns
// this struct, so each model trains on each data set with each optimizer. `statistics` records
// how the loader transformed the raw data (standardisation constants, vocabulary, split rule): it
// is stored in checkpoints, so `blr eval` applies the same transformation to new data.
#pragma once

#include <ATen/Tensor.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace blr::torch {

enum class Task { kClassification, kRegression };

/// "classification" / "regression", and back (throws blr::Error naming the text otherwise).
std::string task_name(Task task);
Task parse_task(const std::string& text);

/// Inputs and targets of one split (both undefined when the split is absent).
struct Split {
  ::at::Tensor x;
  ::at::Tensor y;
  /// Number of examples (the first dimension), 0 when absent.
  int64_t size() const;
  bool empty() const { return size() == 0; }
};

struct Dataset {
  std::string name;  ///< "fashion-mnist", "fortunes", or the user's file
  Task task = Task::kClassification;
  int64_t outputs = 0;  ///< number of classes (classification) or target dimension (regression)
  Split train;
  Split validation;    ///< empty without a validation split
  Split test;
  Split test_shifted;  ///< optional out-of-distribution inputs, else empty (see ood_shift)
  /// What test_shifted is: "inverted" (Fashion-MNIST's test images with inverted intensities,
  /// with test's targets) or "x_ood" (a tensor file's x_ood inputs; y holds zeros, never read:
  /// OOD detection uses only the inputs); "" without one.
  std::string ood_shift;
  nlohmann::json statistics = nlohmann::json::object();  ///< the loader's transformation

  /// Throws blr::Error with a sentence when shapes, dtypes, label ranges or sizes disagree.
  void validate() const;
};

}  // namespace blr::torch
