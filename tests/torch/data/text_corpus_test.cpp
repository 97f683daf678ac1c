// Character-level text corpora (data/text_corpus.hpp): documents cut at "%" lines or blank lines,
// the index-mod-20 split of whole documents, the byte vocabulary with its unknown token, windows
// whose targets are the next tokens, clear errors, and the Debian fortune files when installed.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/data/text_corpus.hpp"
#include "temp_dir.hpp"
#include "error_message.hpp"

namespace blr::torch {
namespace {

namespace fs = std::filesystem;

using blr::testing::TempDir;

using ::blr::testing::expect_error;

std::vector<int64_t> row(const at::Tensor& t, int64_t i) {
  const auto r = t[i].contiguous();
  return {r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel()};
}

TEST(TextCorpus, DocumentsAtPercentLinesOrBlankLines) {
  TempDir dir("blr-text");
  const auto fortunes = dir.write("f", "one\nline two\n%\n\nthree\n%\n%\nfour");
  EXPECT_EQ(read_documents(fortunes),
            (std::vector<std::string>{"one\nline two\n", "\nthree\n", "four\n"}));
  const auto prose = dir.write("p.txt", "first para\nstill\n\n \nsecond\r\n");
  EXPECT_EQ(read_documents(prose), (std::vector<std::string>{"first para\nstill\n", "second\n"}));
  // A directory: its files in path order; a strfile index X.dat next to X and links are skipped.
  dir.write("f.dat", std::string("\0\x01binary", 8));
  fs::create_symlink(dir.path / "f", dir.path / "f.u8");
  EXPECT_EQ(read_documents(dir.path.string()).size(), 5u);
}

TEST(TextCorpus, SplitRuleVocabularyAndWindows) {
  TempDir dir("blr-text");
  std::string text;
  for (int i = 0; i < 40; ++i) text += "doc " + std::to_string(i) + (i == 1 ? " ~" : "") + "\n%\n";
  const auto file = dir.write("corpus", text);
  TextCorpusOptions o;
  o.source = "text:" + file;
  o.context = 5;
  const auto d = load_text_corpus(o);
  EXPECT_EQ(d.name, "corpus");
  EXPECT_EQ(d.statistics["documents"]["train"], 36);
  EXPECT_EQ(d.statistics["documents"]["validation"], 2);
  EXPECT_EQ(d.statistics["documents"]["test"], 2);
  // Training text: documents 2..19, 22..39, each followed by "%\n".
  std::string train;
  for (int i = 0; i < 40; ++i) {
    if (i % 20 > 1) train += "doc " + std::to_string(i) + "\n%\n";
  }
  const auto vocabulary = d.statistics["vocabulary"].get<std::vector<unsigned char>>();
  EXPECT_EQ(vocabulary, byte_vocabulary(train));
  EXPECT_EQ(d.outputs, static_cast<int64_t>(vocabulary.size()) + 1);
  const int64_t windows = (static_cast<int64_t>(train.size()) - 1) / 5;
  ASSERT_EQ(d.train.x.sizes(), (at::IntArrayRef{windows, 5}));
  ASSERT_EQ(d.train.y.sizes(), (at::IntArrayRef{windows, 5}));
  EXPECT_EQ(d.train.x.scalar_type(), at::kLong);
  for (int64_t j : {int64_t{0}, int64_t{3}, windows - 1}) {
    EXPECT_EQ(decode(row(d.train.x, j), vocabulary), train.substr(5 * j, 5));
    EXPECT_EQ(decode(row(d.train.y, j), vocabulary), train.substr(5 * j + 1, 5));
  }
  // Document 1 (validation) holds '~', absent from the training text: token 0 (unknown).
  EXPECT_EQ(train.find('~'), std::string::npos);
  EXPECT_EQ(decode(row(d.validation.x, 0), vocabulary), "doc 1");
  EXPECT_EQ(row(d.validation.x, 1)[1], 0);  // " ~\n%\n..." → '~' is the second token
  EXPECT_EQ(d.test.x.size(1), 5);
  // Limits cut the number of windows.
  o.train_limit = 3;
  o.test_limit = 1;
  const auto small = load_text_corpus(o);
  EXPECT_EQ(small.train.x.size(0), 3);
  EXPECT_EQ(small.validation.x.size(0), 1);
}

TEST(TextCorpus, ClearErrors) {
  TempDir dir("blr-text");
  TextCorpusOptions o;
  o.source = "text:" + (dir.path / "absent").string();
  expect_error([&] { load_text_corpus(o); }, "does not exist");
  o.source = "text:" + dir.write("empty", "\n\n%\n");
  expect_error([&] { load_text_corpus(o); }, "holds no text");
  o.source = "text:" + dir.write("one", "just one document\n");
  expect_error([&] { load_text_corpus(o); }, "too few for a training split");
  o.source = "text:" + dir.write("short", "a\n%\nb\n%\nc\n");
  o.context = 64;
  expect_error([&] { load_text_corpus(o); }, "too few for one window");
  o.source = "books";
  expect_error([&] { load_text_corpus(o); }, "Unknown text corpus 'books'");
  o.source = "fortunes";
  o.context = 0;
  expect_error([&] { load_text_corpus(o); }, "'context'");
}

TEST(TextCorpus, DebianFortunes) {
  if (!fs::is_directory(kFortunesDirectory)) GTEST_SKIP() << "package fortunes not installed";
  TextCorpusOptions o;
  o.context = 64;
  const auto d = load_text_corpus(o);
  EXPECT_EQ(d.name, "fortunes");
  const auto documents = d.statistics["documents"];
  const int64_t total = documents["train"].get<int64_t>() + documents["validation"].get<int64_t>() +
                        documents["test"].get<int64_t>();
  EXPECT_GT(total, 1000);
  EXPECT_NEAR(documents["test"].get<double>() / static_cast<double>(total), 0.05, 0.001);
  EXPECT_GT(d.outputs, 60);  // letters, digits, punctuation
  EXPECT_LE(d.outputs, 257);
  EXPECT_GT(d.train.x.size(0), 10 * d.validation.x.size(0));
  EXPECT_TRUE(at::equal(d.train.x.flatten().slice(0, 1), d.train.y.flatten().slice(0, 0, -1)));
}

}  // namespace
}  // namespace blr::torch
