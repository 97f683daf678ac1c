// The data set a training configuration names (load_data.hpp).
#include "blr/torch/train/load_data.hpp"

#include "blr/torch/data/load.hpp"
#include "blr/torch/data/text_corpus.hpp"

namespace blr::torch {

bool is_text_data(const std::string& data) {
  return data == "fortunes" || data.rfind("text:", 0) == 0;
}

Dataset load_training_data(const TrainConfig& config) {
  if (is_text_data(config.data)) {
    TextCorpusOptions options;
    options.source = config.data;
    options.context = config.model.gpt.context;
    options.train_limit = config.data_options.train_limit;
    options.test_limit = config.data_options.test_limit;
    return load_text_corpus(options);
  }
  return load_dataset(config);  // Fashion-MNIST, a torch.save file or a CSV table
}

}  // namespace blr::torch
