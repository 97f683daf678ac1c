// A character-level language-modelling data set from plain text: the fortune files of Debian's
// `fortunes` package (/usr/share/games/fortunes, `--data fortunes`) or any text file or directory
// (`--data text:PATH`).
//
// Documents. A file is cut into documents at lines holding only "%" (the fortune/strfile format);
// a file without such lines is cut at blank lines (paragraphs). A directory contributes its
// regular files (recursively, sorted by path; symbolic links and strfile indexes — `X.dat` next to
// `X` — are skipped). Document i (0-based, in that order, those of white space only dropped) goes to
//     test if i mod 20 = 0,  validation if i mod 20 = 1,  train otherwise
// (a fixed rule over whole documents: 90 / 5 / 5 %; settings are chosen on validation, results
// reported on test). Each split's text is its documents in order, each followed by "%\n".
//
// Tokens are bytes (UTF-8 text is modelled byte by byte, so any file is accepted). The vocabulary
// is token 0 = "unknown" followed by the distinct bytes of the training split in increasing
// order; a byte that does not occur in the training split (possible in validation/test) maps to
// 0. Windows: split text s (token ids) is cut into consecutive, non-overlapping windows
//     x_j = s[jT .. jT+T),  y_j = s[jT+1 .. jT+T+1),   j = 0 .. ⌊(|s|−1)/T⌋ − 1,
// T = context, so y holds each position's next token: x, y are (N, T) int64 and the model's
// logits (N, T, vocabulary) (the Dataset's per-position classification, data/dataset.hpp).
// `statistics` records the source, the split rule, the context and the vocabulary (bytes), so an
// evaluation encodes new text the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/data/dataset.hpp"

namespace blr::torch {

/// Where Debian's `fortunes` package puts its fortune files.
inline constexpr const char* kFortunesDirectory = "/usr/share/games/fortunes";

struct TextCorpusOptions {
  std::string source = "fortunes";  ///< "fortunes" or "text:PATH" (a file or a directory)
  int64_t context = 64;             ///< T: tokens per window
  int64_t train_limit = 0;          ///< use only the first N training windows (0 = all)
  int64_t test_limit = 0;           ///< use only the first N validation and test windows (0 = all)
  /// Throws blr::Error with one sentence naming the bad option.
  void validate() const;
};

/// The documents of a file or a directory (see above), in order.
std::vector<std::string> read_documents(const std::string& path);

/// The byte vocabulary of `text`: the distinct bytes in increasing order (token k + 1 = byte k).
std::vector<unsigned char> byte_vocabulary(const std::string& text);

/// Token ids of `text` (unknown bytes → 0) under `vocabulary`.
std::vector<int64_t> encode(const std::string& text, const std::vector<unsigned char>& vocabulary);

/// The text of token ids (0 → '?').
std::string decode(const std::vector<int64_t>& tokens, const std::vector<unsigned char>& vocabulary);

/// Loads the corpus as a Dataset ("fortunes" or the path's name); throws blr::Error with one
/// sentence when the directory or file is missing (for fortunes, naming the package), holds no
/// text, or yields no training window.
Dataset load_text_corpus(const TextCorpusOptions& options);

}  // namespace blr::torch
