// The data set a training configuration names (load_data.hpp).
#include "blr/torch/train/load_data.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "blr/core/error.hpp"
#include "blr/torch/data/load.hpp"
#include "blr/torch/data/text_corpus.hpp"

namespace blr::torch {

bool is_text_data(const std::string& data) {
  return data == "fortunes" || data.rfind("text:", 0) == 0;
}

namespace {

// The examples of `split` whose label is one of `classes`.
Split only_classes(const Split& split, const at::Tensor& classes) {
  if (split.empty()) return split;
  const auto keep = at::isin(split.y, classes.to(split.y.device())).nonzero().squeeze(1);
  return {split.x.index_select(0, keep), split.y.index_select(0, keep)};
}

// The examples of `train_classes` in the training split and of `scored_classes` in the
// validation and test splits.
void keep_classes(Dataset& d, const std::vector<int64_t>& train_classes,
                  const std::vector<int64_t>& scored_classes) {
  check(d.task == Task::kClassification,
        "Option 'classes' selects classes of a classification data set; '{}' is a regression "
        "data set.",
        d.name);
  check(d.train.y.dim() == 1,
        "Option 'classes' needs one label per example; '{}' has labels of shape [{}] per example.",
        d.name, fmt::join(d.train.y.sizes().slice(1), ", "));
  for (const auto* classes : {&train_classes, &scored_classes}) {
    for (const int64_t c : *classes) {
      check(c < d.outputs, "Option 'classes' names class {}, but '{}' has classes 0 to {}.", c,
            d.name, d.outputs - 1);
    }
  }
  if (!train_classes.empty()) {
    d.train = only_classes(d.train, at::tensor(train_classes, at::kLong));
    check(d.train.size() > 0, "No training example of '{}' has a label in --classes {}.", d.name,
          fmt::join(train_classes, ","));
  }
  if (!scored_classes.empty()) {
    const auto wanted = at::tensor(scored_classes, at::kLong);
    d.validation = only_classes(d.validation, wanted);
    d.test = only_classes(d.test, wanted);
    // x_ood has no labels to select by: it stays whole.
    if (d.ood_shift != "x_ood") d.test_shifted = only_classes(d.test_shifted, wanted);
    check(d.test.size() > 0, "No test example of '{}' has a label in --classes {}.", d.name,
          fmt::join(scored_classes, ","));
  }
}

}  // namespace

Dataset load_training_data(const TrainConfig& config, const std::vector<int64_t>& scored_classes) {
  if (is_text_data(config.data)) {
    TextCorpusOptions options;
    options.source = config.data;
    options.context = config.model.gpt.context;
    options.train_limit = config.data_options.train_limit;
    options.test_limit = config.data_options.test_limit;
    return load_text_corpus(options);
  }
  Dataset d = load_dataset(config);  // Fashion-MNIST, a torch.save file or a CSV table
  const auto& scored = scored_classes.empty() ? config.classes : scored_classes;
  if (!config.classes.empty() || !scored.empty()) keep_classes(d, config.classes, scored);
  return d;
}

}  // namespace blr::torch
