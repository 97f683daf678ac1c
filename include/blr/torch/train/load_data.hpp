// The data set a training configuration names (`--data`): Fashion-MNIST (data/fashion_mnist.hpp)
// or a character-level text corpus, `fortunes` or `text:PATH` (data/text_corpus.hpp; windows of
// the language model's context, train/test limits counted in windows).
#pragma once

#include "blr/torch/data/dataset.hpp"
#include "blr/torch/train/config.hpp"

namespace blr::torch {

/// True for "fortunes" and "text:PATH".
bool is_text_data(const std::string& data);

/// Loads the data set of `config` (its seed seeds Fashion-MNIST's validation split), then keeps
/// only the examples of `config.classes` when given (after --train-limit/--test-limit and the
/// validation hold-out, with the standardisation of the whole training set, so that every task of
/// a class split sees its inputs as the base model did).
Dataset load_training_data(const TrainConfig& config);

}  // namespace blr::torch
