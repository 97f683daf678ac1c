// The data set a training configuration names (`--data`): Fashion-MNIST (data/fashion_mnist.hpp)
// or a character-level text corpus, `fortunes` or `text:PATH` (data/text_corpus.hpp; windows of
// the language model's context, train/test limits counted in windows).
#pragma once

#include <cstdint>
#include <vector>

#include "blr/torch/data/dataset.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch {

/// True for "fortunes" and "text:PATH".
bool is_text_data(const std::string& data);

/// Loads the data set of `config` (its seed seeds Fashion-MNIST's validation split), then keeps
/// only the examples of `config.classes` when given (after --train-limit/--test-limit and the
/// validation hold-out, with the standardisation of the whole training set, so that every task of
/// a class split sees its inputs as the base model did). `scored_classes`, when given, replaces
/// `config.classes` for the validation and test splits (`blr eval --classes`: a checkpoint scored on
/// other classes than it was trained on, with one load of the data).
Dataset load_training_data(const TrainConfig& config,
                           const std::vector<int64_t>& scored_classes = {});

}  // namespace blr::torch
