// The shape of blr's GPT-style language model (nn/gpt.hpp), declared once: context length,
// blocks, heads and width, with their ranges; `validate` adds that the width is a multiple of the
// heads. The vocabulary is not an option: it comes from the data (the corpus's characters).
#pragma once

#include <cstdint>

#include "blr/core/option_table.hpp"

namespace blr::torch {

/// The transformer's shape (`--gpt-<key>` flags; the vocabulary comes from the data).
struct GptOptions {
  int64_t context = 64;  ///< longest input sequence (position table size)
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t width = 128;  ///< embedding width (divisible by heads)

  static const OptionTable<GptOptions>& table();
  /// The table's ranges and width divisible by heads; throws blr::Error with one sentence.
  void validate() const;
};

}  // namespace blr::torch
