// The Dataset shape and the loaders of users' files (torch.save dicts, CSV tables), the
// regression likelihood and its metrics, against values computed by hand.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/serialization/pickle.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <fmt/format.h>

#include "blr/core/error.hpp"
#include "blr/torch/data/csv_data.hpp"
#include "blr/torch/data/load.hpp"
#include "blr/torch/data/prepare.hpp"
#include "blr/torch/data/tensor_file.hpp"
#include "blr/torch/metrics/metrics.hpp"
#include "blr/torch/metrics/regression.hpp"
#include "blr/torch/train/likelihood.hpp"
#include "blr/torch/train/trainer.hpp"
#include "error_message.hpp"

namespace blr::torch {
namespace {
namespace fs = std::filesystem;

using blr::testing::error_of;

#define EXPECT_ERROR(statement, text)                                             \
  do {                                                                            \
    const std::string message_ = error_of([&] { statement; });                    \
    EXPECT_NE(message_.find(text), std::string::npos) << "message: " << message_; \
  } while (0)

std::string saved(const c10::Dict<std::string, at::Tensor>& dict) {
  const auto bytes = ::torch::jit::pickle_save(c10::IValue(dict));
  return std::string(bytes.begin(), bytes.end());
}

c10::Dict<std::string, at::Tensor> dict(
    std::initializer_list<std::pair<std::string, at::Tensor>> items) {
  c10::Dict<std::string, at::Tensor> d;
  for (const auto& [k, v] : items) d.insert(k, v);
  return d;
}

const double kLog2Pi = std::log(2 * M_PI);

TEST(Regression, MetricsMatchHandValues) {
  // y = (0, 1, 3), prediction 0, σ = 1: RMSE √(10/3); NLL ½log2π + (0 + 1 + 9)/6;
  // PIT Φ(0) = .5, Φ(1) = .8413, Φ(3) = .99865: inside the 50 % interval only y = 0, inside the
  // 80/90/95 % intervals y = 0 and 1 (Φ(1) ≤ (1 + p)/2 for p ≥ 0.6827).
  const auto y = at::tensor({0.0, 1.0, 3.0}, at::kDouble);
  const auto m = regression_metrics(at::zeros({3}, at::kDouble), y, {1.0}, false);
  EXPECT_NEAR(m.rmse, std::sqrt(10.0 / 3.0), 1e-12);
  EXPECT_NEAR(m.nll, 0.5 * kLog2Pi + 10.0 / 6.0, 1e-12);
  EXPECT_DOUBLE_EQ(m.coverage[0], 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.coverage[1], 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.coverage[3], 2.0 / 3.0);
  EXPECT_NEAR(m.miscalibration,
              (std::abs(1 / 3.0 - 0.5) + std::abs(2 / 3.0 - 0.8) + std::abs(2 / 3.0 - 0.9) +
               std::abs(2 / 3.0 - 0.95)) /
                  4,
              1e-12);
  EXPECT_DOUBLE_EQ(m.predictive_std, 1.0);
  // Mixture of N(−1, 1) and N(1, 1) at y = 0: both densities are φ(1), so the NLL is
  // ½log2π + ½; the mean is 0 (RMSE 0) and the predictive sd √(1 + 1) = √2.
  const auto two = at::tensor({-1.0, 1.0}, at::kDouble).reshape({2, 1});
  const auto mix = regression_metrics(two, at::zeros({1}, at::kDouble), {1.0}, true);
  EXPECT_NEAR(mix.nll, 0.5 * kLog2Pi + 0.5, 1e-12);
  EXPECT_NEAR(mix.rmse, 0.0, 1e-15);
  EXPECT_NEAR(mix.predictive_std, std::sqrt(2.0), 1e-12);
  // Not a moment match: the mixture of N(−3, 1) and N(3, 1) at 0 has density φ(3), while the
  // matched Gaussian N(0, 10) would give ½log(2π·10).
  const auto far = at::tensor({-3.0, 3.0}, at::kDouble).reshape({2, 1});
  EXPECT_NEAR(regression_metrics(far, at::zeros({1}, at::kDouble), {1.0}, true).nll,
              0.5 * kLog2Pi + 4.5, 1e-12);
  // σ scales: N(y; 0, 2²) at y = 2 has NLL ½log2π + log 2 + ½.
  EXPECT_NEAR(
      regression_metrics(at::zeros({1}, at::kDouble), at::tensor({2.0}, at::kDouble), {2.0}, false)
          .nll,
      0.5 * kLog2Pi + std::log(2.0) + 0.5, 1e-12);
  EXPECT_THROW(regression_metrics(at::zeros({3}), y, {0.0}, false), Error);
}

TEST(Regression, GaussianLossIsTheMeanNll) {
  const auto y = at::tensor({1.0f, -1.0f});
  const auto f = at::tensor({0.0f, 0.0f}).reshape({2, 1});  // (N, 1) outputs for (N) targets
  const double sigma = 0.5;
  // ½ (1/0.5)² + log 0.5 + ½ log 2π, the same for both targets.
  EXPECT_NEAR(gaussian_loss(f, y, sigma).item<double>(), 2.0 + std::log(0.5) + 0.5 * kLog2Pi, 1e-6);
  EXPECT_ERROR(gaussian_loss(at::zeros({2, 3}), y, 1.0), "returns shape [2, 3]");
}

TEST(Classification, LossAndMetricsPerLabel) {
  // (N, T) = (2, 3) labels: the loss and the metrics are those of the 6 flattened labels.
  at::manual_seed(1);
  const auto logits = at::randn({2, 3, 4}, at::kDouble);
  const auto labels = at::tensor({0, 3, 1, 2, 2, 0}, at::kLong).reshape({2, 3});
  const auto flat = at::nll_loss(at::log_softmax(logits.reshape({6, 4}), 1), labels.reshape(6));
  EXPECT_DOUBLE_EQ(classification_loss(logits, labels).item<double>(), flat.item<double>());
  const auto lp = at::log_softmax(logits, -1);
  const auto a = classification_metrics(lp, labels, 5);
  const auto b = classification_metrics(lp.reshape({6, 4}), labels.reshape(6), 5);
  EXPECT_EQ(a.count, 6);
  EXPECT_DOUBLE_EQ(a.nll, b.nll);
  EXPECT_DOUBLE_EQ(a.ece, b.ece);
  EXPECT_DOUBLE_EQ(a.brier, b.brier);
  EXPECT_ERROR(classification_loss(at::zeros({2, 4}), labels), "expected the labels' shape");
}

TEST(TensorFile, ReadsADictAndInfersTheTask) {
  const auto x = at::randn({10, 3});
  const auto y = at::tensor({0, 1, 2, 0, 1, 2, 0, 1, 2, 4}, at::kLong);
  auto d = parse_tensor_file(saved(dict({{"x", x}, {"y", y}})), "mem.pt");
  EXPECT_EQ(d.task, Task::kClassification);
  EXPECT_EQ(d.outputs, 5);  // the largest label + 1
  EXPECT_TRUE(at::equal(d.train.x, x));
  auto r = parse_tensor_file(saved(dict({{"x", x}, {"y", at::randn({10}, at::kDouble)}})), "r.pt");
  EXPECT_EQ(r.task, Task::kRegression);
  EXPECT_EQ(r.outputs, 1);
  // Half-precision labels too (LibTorch 1.13 has no CPU floor for them: the check is in float64).
  auto h = parse_tensor_file(saved(dict({{"x", x}, {"y", y.to(at::kHalf)}})), "h.pt",
                             "classification");
  EXPECT_TRUE(at::equal(h.train.y, y));
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x}, {"y", y.to(at::kHalf) + 0.5}})), "h.pt",
                                 "classification"),
               "class labels must be whole numbers");
  // Whole-number floats are labels when the task says so.
  auto c =
      parse_tensor_file(saved(dict({{"x", x}, {"y", y.to(at::kFloat)}})), "c.pt", "classification");
  EXPECT_TRUE(at::equal(c.train.y, y));
}

TEST(TensorFile, ErrorsAreSentencesNamingTheProblem) {
  const auto x = at::randn({6, 2});
  const auto y = at::tensor({0, 1, 0, 1, 0, 1}, at::kLong);
  EXPECT_ERROR(parse_tensor_file("not a zip", "junk.pt"),
               "is not a data set written by torch.save");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x}})), "a.pt"), "has no key 'y'");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x}, {"y", y}, {"w", y}})), "a.pt"),
               "key 'w' that blr does not read");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x}, {"y", y}, {"x_test", x}})), "a.pt"),
               "has x_test but not y_test");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x.slice(0, 0, 5)}, {"y", y}})), "a.pt"),
               "'x' has 5 examples but 'y' has 6");
  auto bad = x.clone();
  bad[4][1] = std::numeric_limits<float>::infinity();
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", bad}, {"y", y}})), "a.pt"),
               "key 'x' holds a non-finite value (inf) at flat index 9 (example 4)");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x}, {"y", y - 1}})), "a.pt"),
               "holds label -1 at flat index 0");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x}, {"y", y.to(at::kFloat) + 0.5}})), "a.pt",
                                 "classification"),
               "class labels must be whole numbers");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x.gt(0)}, {"y", y}})), "a.pt"),
               "inputs must be floating point or integer");
  EXPECT_ERROR(parse_tensor_file(saved(dict({{"x", x}, {"y", y.gt(0)}})), "a.pt"),
               "class labels must be integers");
  const auto list = ::torch::jit::pickle_save(c10::IValue(c10::List<at::Tensor>({x, y})));
  EXPECT_ERROR(parse_tensor_file(std::string(list.begin(), list.end()), "l.pt"), "not a dict");
  // The size limit is checked before anything is read.
  const auto path = (fs::temp_directory_path() / ("blr-tf-" + std::to_string(::getpid()) + ".pt"));
  std::ofstream(path, std::ios::binary) << saved(dict({{"x", x}, {"y", y}}));
  TensorFileOptions o{path.string(), "", 100};
  EXPECT_ERROR(read_tensor_file(o), "more than the limit of 100 bytes");
  o.max_bytes = kMaxTensorFileBytes;
  EXPECT_EQ(read_tensor_file(o).train.size(), 6);
  fs::remove(path);
  EXPECT_ERROR(read_tensor_file(o), "Cannot read the tensor file");
}

// LibTorch sizes a storage by the element count its pickle states, not by its record's bytes.
// Here x's record (30 floats, 120 bytes) is renamed away, y's (10 int64, 80 bytes) takes its name
// data/0, and y's storage key becomes 0 too: x's storage of 30 floats is then read from the 80-byte
// record (the libFuzzer harness's finding, fuzz/corpus/tensor_file/overflow-storage-longer-than-
// record). The archive check refuses it (archive_check.hpp); before, x was read 40 bytes beyond
// the record.
TEST(TensorFile, AStorageLongerThanItsRecordIsRefused) {
  std::string bytes = saved(dict({{"x", at::randn({10, 3})}, {"y", at::arange(10, at::kLong)}}));
  auto replace_all = [&](const std::string& from, const std::string& to) {
    int count = 0;
    for (auto at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + 1)) {
      bytes.replace(at, from.size(), to);
      ++count;
    }
    return count;
  };
  ASSERT_EQ(replace_all("archive/data/0", "archive/data/9"), 2);  // local header, directory
  ASSERT_EQ(replace_all("archive/data/1", "archive/data/0"), 2);
  const std::string key_one("X\x01\0\0\0" "1", 6), key_zero("X\x01\0\0\0" "0", 6);  // pickled '1'
  ASSERT_EQ(replace_all(key_one, key_zero), 1);
  EXPECT_ERROR(parse_tensor_file(bytes, "short.pt"),
               "its record 'data.pkl' is malformed: opcode 0x51 at byte");
  EXPECT_ERROR(parse_tensor_file(bytes, "short.pt"),
               "gives storage '0' 120 bytes, but its record holds 80");
}

TEST(Prepare, HoldsOutTestThenValidationAndStandardisesWithTrainingRowsOnly) {
  Dataset d;
  d.name = "m";
  d.task = Task::kRegression;
  d.outputs = 1;
  d.train = {at::arange(100, at::kDouble).reshape({50, 2}), at::arange(50, at::kDouble) * 3 + 1};
  PrepareOptions o;
  o.validation_fraction = 0.25;
  o.seed = 9;
  o.standardise_columns = {1};
  o.column_names = {"b"};
  finish_dataset(d, o);
  EXPECT_EQ(d.test.size(), 10);        // ⌊50 · 0.2⌋, fixed seed
  EXPECT_EQ(d.validation.size(), 10);  // ⌊40 · 0.25⌋, the run's seed
  EXPECT_EQ(d.train.size(), 30);
  EXPECT_EQ(d.train.x.scalar_type(), at::kFloat);
  // The training rows' column b and targets have mean 0 and population sd 1; column a is as is.
  const auto b = d.train.x.select(1, 1).to(at::kDouble);
  EXPECT_NEAR(b.mean().item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(b.std(false).item<double>(), 1.0, 1e-6);
  EXPECT_NEAR(d.train.y.to(at::kDouble).std(false).item<double>(), 1.0, 1e-6);
  const double a0 = d.train.x[0][0].item<double>();
  EXPECT_EQ(std::fmod(a0, 2.0), 0.0);  // even numbers 0, 2, ..., unchanged
  EXPECT_EQ(d.statistics.at("target_mean").size(), 1u);
  // The test split does not depend on the run's seed (column a is not standardised, so its test
  // values are the raw ones; the targets' scaling depends on the validation split).
  Dataset e;
  e.name = "m";
  e.task = Task::kRegression;
  e.outputs = 1;
  e.train = {at::arange(100, at::kDouble).reshape({50, 2}), at::arange(50, at::kDouble) * 3 + 1};
  o.seed = 10;
  finish_dataset(e, o);
  EXPECT_TRUE(at::equal(e.test.x.select(1, 0), d.test.x.select(1, 0)));
  // A constant target cannot be standardised.
  Dataset f = e;
  f.train = {at::randn({20, 2}, at::kDouble), at::ones({20}, at::kDouble)};
  f.test = {};
  f.validation = {};
  f.statistics = nlohmann::json::object();
  EXPECT_ERROR(finish_dataset(f, {}), "is constant");
}

class CsvDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("blr-csv-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

TEST_F(CsvDir, ClassificationRegressionAndErrors) {
  std::string text = "a,kind,label\n";
  for (int i = 0; i < 20; ++i) {
    text += fmt::format("{},{},{}\n", i, i % 2 ? "x" : "y", i % 3 == 0 ? "cat" : "dog");
  }
  const auto path = write("c.csv", text);
  auto c = read_csv_data({path, "", "", "classification", {"kind"}, "error"});
  EXPECT_EQ(c.data.outputs, 2);
  EXPECT_EQ(c.data.statistics.at("classes"), (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(c.data.train.y[0].item<int64_t>(), 0);  // "cat", the first class in sorted order
  EXPECT_EQ(c.data.train.y[1].item<int64_t>(), 1);
  EXPECT_EQ(c.numeric_columns, (std::vector<int64_t>{0}));
  EXPECT_EQ(c.data.train.x.size(1), 2);  // a and the indicator kind=y
  EXPECT_ERROR(read_csv_data({path, "", "", "classification", {}, "error"}), "kind");
  EXPECT_ERROR(read_csv_data({path, "", "", "", {"kind"}, "error"}), "needs --task");
  EXPECT_ERROR(read_csv_data({path, "", "label", "regression", {"kind"}, "error"}), "label");
  const auto missing = write("m.csv", "a,y\n1,2\nNA,3\n4,5\n");
  EXPECT_ERROR(read_csv_data({missing, "", "", "regression", {}, "error"}), "line 3");
  EXPECT_EQ(read_csv_data({missing, "", "", "regression", {}, "drop"}).data.train.size(), 2);
}

TEST(TrainRegression, ALinearModelOnLinearDataReachesTheNoiseLevel) {
  // y = 2·x1 − x2 + ε, ε ~ N(0, 0.3²): the linear model (no hidden layer) recovers it, so the
  // test RMSE and the fitted σ approach 0.3. Tolerances: the RMSE over 400 test targets has sd
  // 0.3/√800 ≈ 0.011 and the fitted coefficients add ≈ 0.3·√(3/1600) ≈ 0.013, so 0.05 is > 2.5
  // times both together; the 90 % coverage over 400 targets has sd √(0.09/400) = 0.015, 0.07 is
  // over 4 of them plus σ's error.
  at::manual_seed(3);
  const auto make = [](int64_t n) {
    const auto x = at::randn({n, 2}, at::kDouble);
    const auto y = 2 * x.select(1, 0) - x.select(1, 1) + 0.3 * at::randn({n}, at::kDouble);
    return Split{x, y};
  };
  auto d = std::make_shared<Dataset>();
  d->name = "linear";
  d->task = Task::kRegression;
  d->outputs = 1;
  d->train = make(1600);
  d->test = make(400);
  finish_dataset(*d, {});
  TrainConfig c;
  c.data = "linear.pt";
  c.model.hidden = {};
  c.optimizer = "adamw";
  c.optimizer_options = {{"lr", 0.01}};
  c.epochs = 20;
  c.batch_size = 64;
  Trainer t(c, d);
  t.train();
  const auto ev = t.evaluate();
  EXPECT_EQ(ev.task, Task::kRegression);
  EXPECT_NEAR(ev.regression_mean.rmse, 0.3, 0.05);
  ASSERT_EQ(ev.noise_std.size(), 1u);
  EXPECT_NEAR(ev.noise_std[0], 0.3, 0.05);
  EXPECT_NEAR(ev.regression_mean.coverage[2], 0.9, 0.07);
  EXPECT_LT(ev.regression_mean.miscalibration, 0.07);
  // A fixed σ ten times too large makes every interval cover everything.
  c.noise_std = 10.0 / d->statistics.at("target_std")[0].get<double>() * 0.3;
  Trainer wide(c, d);
  wide.train();
  EXPECT_GT(wide.evaluate().regression_mean.coverage[0], 0.99);
}

TEST(TrainRegression, AWrongOutputShapeIsNamedBeforeTraining) {
  auto d = std::make_shared<Dataset>();
  d->name = "two";
  d->task = Task::kRegression;
  d->outputs = 1;
  d->train = {at::randn({8, 3}), at::randn({8, 2})};  // (N, 2) targets but outputs = 1
  d->test = d->train;
  TrainConfig c;
  c.data = "two.pt";
  c.model.hidden = {};
  EXPECT_ERROR(Trainer(c, d), "The model returns shape [2, 1] for inputs [2, 3]; expected [2, 2]");
}

}  // namespace
}  // namespace blr::torch
