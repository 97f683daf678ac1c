// IDX reading and Fashion-MNIST loading with small synthetic .gz files written here.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "blr/core/error.hpp"
#include "blr/torch/data/batches.hpp"
#include "blr/torch/data/fashion_mnist.hpp"
#include "blr/torch/data/idx.hpp"
#include "error_message.hpp"
#include "temp_dir.hpp"

namespace blr::torch {
namespace {
namespace fs = std::filesystem;

using blr::testing::TempDir;

IdxArray images(int64_t n, int64_t side, uint8_t offset) {
  IdxArray a{{n, side, side}, {}};
  for (int64_t i = 0; i < n * side * side; ++i)
    a.data.push_back(static_cast<uint8_t>((i * 7 + offset) % 256));
  return a;
}

IdxArray labels(int64_t n) {
  IdxArray a{{n}, {}};
  for (int64_t i = 0; i < n; ++i) a.data.push_back(static_cast<uint8_t>(i % 10));
  return a;
}

void write_set(const TempDir& dir, int64_t n_train, int64_t n_test) {
  write_idx_gz(dir.file("train-images-idx3-ubyte.gz"), images(n_train, 28, 3));
  write_idx_gz(dir.file("train-labels-idx1-ubyte.gz"), labels(n_train));
  write_idx_gz(dir.file("t10k-images-idx3-ubyte.gz"), images(n_test, 28, 11));
  write_idx_gz(dir.file("t10k-labels-idx1-ubyte.gz"), labels(n_test));
}

void write_gz_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(f);
}

using blr::testing::error_of;

TEST(TrainData, IdxRoundTrip) {
  TempDir dir("blr-train-data");
  const auto a = images(5, 4, 1);
  write_idx_gz(dir.file("a.gz"), a);
  const auto b = read_idx_gz(dir.file("a.gz"), 3);
  EXPECT_EQ(b.dims, a.dims);
  EXPECT_EQ(b.data, a.data);
}

TEST(TrainData, BadMagicNamesTheFile) {
  TempDir dir("blr-train-data");
  write_gz_bytes(dir.file("bad.gz"), {0, 0, 0x0d, 1, 0, 0, 0, 1, 5});  // type 0x0d = float
  const auto message = error_of([&] { read_idx_gz(dir.file("bad.gz"), 1); });
  EXPECT_NE(message.find("bad.gz"), std::string::npos) << message;
  EXPECT_NE(message.find("magic"), std::string::npos) << message;
  write_gz_bytes(dir.file("rank.gz"), {0, 0, 8, 1, 0, 0, 0, 1, 5});
  EXPECT_NE(error_of([&] { read_idx_gz(dir.file("rank.gz"), 3); }).find("dimensions"),
            std::string::npos);
}

TEST(TrainData, TruncatedDataNamesTheFile) {
  TempDir dir("blr-train-data");
  // Header says 10 labels, 4 are present.
  write_gz_bytes(dir.file("short.gz"), {0, 0, 8, 1, 0, 0, 0, 10, 1, 2, 3, 4});
  const auto message = error_of([&] { read_idx_gz(dir.file("short.gz"), 1); });
  EXPECT_NE(message.find("short.gz"), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  // Header cut short.
  write_gz_bytes(dir.file("header.gz"), {0, 0, 8, 3, 0, 0});
  EXPECT_NE(error_of([&] { read_idx_gz(dir.file("header.gz"), 3); }).find("truncated"),
            std::string::npos);
  // More data than declared.
  write_gz_bytes(dir.file("long.gz"), {0, 0, 8, 1, 0, 0, 0, 1, 1, 2});
  EXPECT_NE(error_of([&] { read_idx_gz(dir.file("long.gz"), 1); }).find("more data"),
            std::string::npos);
}

TEST(TrainData, CutGzipStreamIsRefused) {
  TempDir dir("blr-train-data");
  write_idx_gz(dir.file("full.gz"), images(50, 28, 0));
  std::ifstream in(dir.file("full.gz"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir.file("cut.gz"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const auto message = error_of([&] { read_idx_gz(dir.file("cut.gz"), 3); });
  EXPECT_NE(message.find("cut.gz"), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(TrainData, MissingDataNamesThePackage) {
  FashionMnistOptions o;
  o.directory = "/nonexistent/blr-fashion-mnist";
  const auto message = error_of([&] { load_fashion_mnist(o); });
  EXPECT_NE(message.find("apt-get install dataset-fashion-mnist"), std::string::npos) << message;
  TempDir dir("blr-train-data");  // directory present, files missing
  o.directory = dir.str();
  const auto message2 = error_of([&] { load_fashion_mnist(o); });
  EXPECT_NE(message2.find("train-images-idx3-ubyte.gz"), std::string::npos)
      << "[" << message2 << "]";
  EXPECT_NE(message2.find("dataset-fashion-mnist"), std::string::npos) << message2;
}

TEST(TrainData, LoadsStandardisesAndSplits) {
  TempDir dir("blr-train-data");
  write_set(dir, 40, 12);
  FashionMnistOptions o;
  o.directory = dir.str();
  const auto d = load_fashion_mnist(o);
  ASSERT_EQ(d.train.size(), 40);
  ASSERT_EQ(d.test.size(), 12);
  EXPECT_EQ(d.train.x.sizes(), (std::vector<int64_t>{40, 1, 28, 28}));
  EXPECT_EQ(d.train.x.scalar_type(), at::kFloat);
  EXPECT_NEAR(d.train.x.mean().item<double>(), 0.0, 1e-5);
  EXPECT_NEAR(d.train.x.to(at::kDouble).std(false).item<double>(), 1.0, 1e-5);
  EXPECT_EQ(d.train.y[13].item<int64_t>(), 3);
  // Inverted test images: x_shift = (1 − r − m)/s and x = (r − m)/s, so x + x_shift = (1 − 2m)/s.
  EXPECT_EQ(d.name, "fashion-mnist");
  EXPECT_EQ(d.task, Task::kClassification);
  EXPECT_EQ(d.outputs, 10);
  EXPECT_NO_THROW(d.validate());
  const double pixel_mean = d.statistics.at("pixel_mean").get<double>();
  const double pixel_std = d.statistics.at("pixel_std").get<double>();
  const double expected = (1.0 - 2.0 * pixel_mean) / pixel_std;
  EXPECT_NEAR((d.test.x + d.test_shifted.x).sub(expected).abs().max().item<double>(), 0.0, 1e-4);

  o.train_limit = 30;
  o.validation_fraction = 0.2;
  o.seed = 5;
  const auto s = load_fashion_mnist(o);
  EXPECT_EQ(s.train.size(), 24);
  EXPECT_EQ(s.validation.size(), 6);
  // The split is a partition of the first 30 examples (labels i % 10; check via pixel sums).
  const auto again = load_fashion_mnist(o);
  EXPECT_TRUE(at::equal(s.validation.y, again.validation.y));
  o.validation_fraction = 1.5;
  EXPECT_THROW(load_fashion_mnist(o), Error);
}

TEST(TrainData, LabelOutOfRangeIsRefused) {
  TempDir dir("blr-train-data");
  write_set(dir, 10, 10);
  IdxArray bad = labels(10);
  bad.data[4] = 12;
  write_idx_gz(dir.file("t10k-labels-idx1-ubyte.gz"), bad);
  FashionMnistOptions o;
  o.directory = dir.str();
  const auto message = error_of([&] { load_fashion_mnist(o); });
  EXPECT_NE(message.find("t10k-labels-idx1-ubyte.gz"), std::string::npos) << message;
}

TEST(TrainData, EpochPermutationsAreSeededPermutations) {
  const auto a = epoch_permutation(100, 3, 0);
  EXPECT_EQ(a, epoch_permutation(100, 3, 0));
  EXPECT_NE(a, epoch_permutation(100, 3, 1));
  EXPECT_NE(a, epoch_permutation(100, 4, 0));
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 100u);
  EXPECT_EQ(*std::min_element(a.begin(), a.end()), 0);
  EXPECT_EQ(*std::max_element(a.begin(), a.end()), 99);
  EXPECT_EQ(batch_count(100, 32), 4);
}

}  // namespace
}  // namespace blr::torch
