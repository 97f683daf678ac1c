// Character-level text corpora (text_corpus.hpp).
#include "blr/torch/data/text_corpus.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "blr/core/error.hpp"

namespace blr::torch {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSplitModulus = 20;  // document i: test if i % 20 == 0, validation if == 1

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), fmt::format("Cannot read the text file '{}'.", path.string()));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Lines of `text` (without their '\n'), the last one kept even without a newline.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// Cuts a file's text at "%" lines, or at blank lines when it has none; documents of white space
// only are dropped.
void cut_documents(const std::string& text, std::vector<std::string>& out) {
  auto lines = lines_of(text);
  for (auto& l : lines) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
  }
  const bool fortune = std::find(lines.begin(), lines.end(), "%") != lines.end();
  std::string document;
  auto flush = [&] {
    if (document.find_first_not_of(" \t\n") != std::string::npos) out.push_back(document);
    document.clear();
  };
  for (const auto& l : lines) {
    const bool cut = fortune ? l == "%" : l.find_first_not_of(" \t") == std::string::npos;
    if (cut) {
      flush();
    } else {
      document += l;
      document += '\n';
    }
  }
  flush();
}

bool is_strfile_index(const fs::path& path) {
  if (path.extension() != ".dat") return false;
  auto text = path;
  text.replace_extension();
  return fs::is_regular_file(fs::symlink_status(text));
}

std::string source_path(const std::string& source) {
  if (source == "fortunes") return kFortunesDirectory;
  return source.substr(5);  // "text:"
}

// Windows x_j = s[jT, jT+T), y_j = s[jT+1, jT+T+1) of a token stream, at most `limit` (0 = all).
Split windows(const std::vector<int64_t>& stream, int64_t context, int64_t limit) {
  const auto size = static_cast<int64_t>(stream.size());
  int64_t count = size >= 1 ? (size - 1) / context : 0;
  if (limit > 0) count = std::min(count, limit);
  Split split;
  if (count == 0) return split;
  const auto s = at::from_blob(const_cast<int64_t*>(stream.data()), {size}, at::kLong);
  split.x = s.slice(0, 0, count * context).view({count, context}).clone();
  split.y = s.slice(0, 1, count * context + 1).view({count, context}).clone();
  return split;
}

}  // namespace

void TextCorpusOptions::validate() const {
  check(source == "fortunes" || (source.rfind("text:", 0) == 0 && source.size() > 5),
        fmt::format("Unknown text corpus '{}'; use fortunes or text:PATH (a text file or a "
                    "directory of them).",
                    source));
  check(context >= 1 && context <= 65536,
        fmt::format("Option 'context' must lie in [1, 65536]; got {}.", context));
  check(train_limit >= 0, fmt::format("Option 'train-limit' must be at least 0; got {}.", train_limit));
  check(test_limit >= 0, fmt::format("Option 'test-limit' must be at least 0; got {}.", test_limit));
}

std::vector<std::string> read_documents(const std::string& path) {
  std::vector<std::string> documents;
  const fs::path root(path);
  std::error_code ec;
  const auto status = fs::status(root, ec);
  check(fs::exists(status), fmt::format("The text corpus '{}' does not exist.", path));
  if (fs::is_regular_file(status)) {
    cut_documents(read_file(root), documents);
    return documents;
  }
  check(fs::is_directory(status),
        fmt::format("The text corpus '{}' is neither a file nor a directory.", path));
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_symlink() || !entry.is_regular_file()) continue;
    if (is_strfile_index(entry.path())) continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) cut_documents(read_file(f), documents);
  return documents;
}

std::vector<unsigned char> byte_vocabulary(const std::string& text) {
  std::array<bool, 256> seen{};
  for (const char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::vector<unsigned char> vocabulary;
  for (int b = 0; b < 256; ++b) {
    if (seen[b]) vocabulary.push_back(static_cast<unsigned char>(b));
  }
  return vocabulary;
}

std::vector<int64_t> encode(const std::string& text, const std::vector<unsigned char>& vocabulary) {
  std::array<int64_t, 256> id{};  // 0 = unknown
  for (size_t k = 0; k < vocabulary.size(); ++k) id[vocabulary[k]] = static_cast<int64_t>(k) + 1;
  std::vector<int64_t> out;
  out.reserve(text.size());
  for (const char c : text) out.push_back(id[static_cast<unsigned char>(c)]);
  return out;
}

std::string decode(const std::vector<int64_t>& tokens, const std::vector<unsigned char>& vocabulary) {
  std::string out;
  for (const auto t : tokens) {
    const bool known = t >= 1 && t <= static_cast<int64_t>(vocabulary.size());
    out += known ? static_cast<char>(vocabulary[static_cast<size_t>(t - 1)]) : '?';
  }
  return out;
}

Dataset load_text_corpus(const TextCorpusOptions& options) {
  options.validate();
  const std::string path = source_path(options.source);
  if (options.source == "fortunes") {
    check(fs::is_directory(path),
          fmt::format("The fortune files are not in '{}'; install Debian's package 'fortunes' "
                      "(scripts/setup.sh lists it) or use --data text:PATH.",
                      path));
  }
  const auto documents = read_documents(path);
  check(!documents.empty(), fmt::format("The text corpus '{}' holds no text.", path));
  std::string text[3];  // train, validation, test
  int64_t counts[3] = {0, 0, 0};
  for (size_t i = 0; i < documents.size(); ++i) {
    const auto r = static_cast<int64_t>(i) % kSplitModulus;
    const int which = r == 0 ? 2 : r == 1 ? 1 : 0;
    text[which] += documents[i];
    text[which] += "%\n";
    ++counts[which];
  }
  check(counts[0] > 0,
        fmt::format("The text corpus '{}' has {} document(s), too few for a training split: "
                    "documents 0 and 1 of every 20 are held out for test and validation.",
                    path, documents.size()));
  const auto vocabulary = byte_vocabulary(text[0]);
  Dataset d;
  d.name = options.source == "fortunes" ? "fortunes" : fs::path(path).filename().string();
  if (d.name.empty()) d.name = path;
  d.task = Task::kClassification;
  d.outputs = static_cast<int64_t>(vocabulary.size()) + 1;
  d.train = windows(encode(text[0], vocabulary), options.context, options.train_limit);
  d.validation = windows(encode(text[1], vocabulary), options.context, options.test_limit);
  d.test = windows(encode(text[2], vocabulary), options.context, options.test_limit);
  check(d.train.x.defined(),
        fmt::format("The training text of '{}' has {} bytes, too few for one window of {} tokens "
                    "plus its next token; use a smaller --gpt-context.",
                    path, text[0].size(), options.context));
  std::vector<int> bytes(vocabulary.begin(), vocabulary.end());
  d.statistics = {{"source", options.source},
                  {"path", path},
                  {"tokens", "bytes; token 0 = unknown, token k+1 = vocabulary[k]"},
                  {"vocabulary", bytes},
                  {"context", options.context},
                  {"split", "document i: test if i mod 20 = 0, validation if i mod 20 = 1, else train"},
                  {"documents", {{"train", counts[0]}, {"validation", counts[1]}, {"test", counts[2]}}},
                  {"bytes", {{"train", text[0].size()}, {"validation", text[1].size()}, {"test", text[2].size()}}}};
  return d;
}

}  // namespace blr::torch
