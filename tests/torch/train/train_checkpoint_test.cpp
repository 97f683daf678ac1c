// Checkpoints: round trip, refusal of truncated/corrupt files, and bitwise resumption of training
// (tiny MLP, synthetic data, CPU, one thread).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/utils.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "blr/core/error.hpp"
#include "blr/torch/checkpoint/checkpoint.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "blr/torch/train/trainer.hpp"
#include "error_message.hpp"
#include "temp_dir.hpp"
#include "torch/synthetic_data.hpp"

namespace blr::torch {
namespace {
namespace fs = std::filesystem;

using blr::testing::TempDir;

using testing::synthetic_data;

TrainConfig tiny_config(const std::string& optimizer) {
  TrainConfig c;
  c.model = ModelSpec{"mlp", {16}};
  c.model.classes = 3;
  c.optimizer = optimizer;
  c.epochs = 4;
  c.batch_size = 32;
  c.schedule = "cosine";
  c.seed = 7;
  c.test_samples = 4;
  if (optimizer == "adamw") c.optimizer_options = {{"lr", 1e-2}};
  if (optimizer == "ivon") c.optimizer_options = {{"lr", 0.1}, {"hess_init", 0.5}};
  if (optimizer == "vogn") c.optimizer_options = {{"lr", 1e-2}};
  if (optimizer == "kfac") c.optimizer_options = {{"lr", 1e-2}, {"refresh", int64_t{3}}};
  return c;
}

using blr::testing::error_of;

bool has_optimizer(const std::string& name) {
  const auto names = optimizer_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

void expect_bitwise_resume(const std::string& optimizer, const std::string& precision = "float32") {
  at::set_num_threads(1);
  const auto data = synthetic_data(96, 30);
  TempDir dir("blr-train-ckpt");
  auto tiny_config = [&](const std::string& name) {
    TrainConfig c = ::blr::torch::tiny_config(name);
    c.precision = precision;
    return c;
  };
  // Uninterrupted.
  Trainer full(tiny_config(optimizer), data);
  full.train();
  // Interrupted after epoch 2, then resumed in a fresh trainer (the generator state is disturbed
  // in between, as a new process would have it).
  {
    Trainer first(tiny_config(optimizer), data);
    TrainHooks hooks;
    hooks.stop_after_epoch = 2;
    first.train(hooks);
    ASSERT_EQ(first.epoch(), 2);
    first.save(dir.file("mid.ckpt"));
  }
  ::torch::manual_seed(999);
  const auto checkpoint = load_checkpoint(dir.file("mid.ckpt"));
  Trainer resumed(tiny_config(optimizer), data);
  resumed.restore(checkpoint);
  EXPECT_EQ(resumed.epoch(), 2);
  resumed.train();
  const auto a = full.model().parameters();
  const auto b = resumed.model().parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(at::equal(a[i], b[i])) << optimizer << ": parameter " << i << " differs";
  }
  ASSERT_EQ(resumed.result().history.size(), 4u);
  EXPECT_EQ(full.result().history.back().train_loss, resumed.result().history.back().train_loss);
  // The optimizer state too: one more identical step gives identical parameters.
  // The same generator state for both predictives (the tensor path of bfloat16 parameters draws
  // from LibTorch's global generator, which the runs above have advanced differently).
  ::torch::manual_seed(4242);
  const auto e1 = full.evaluate(2);
  ::torch::manual_seed(4242);
  const auto e2 = resumed.evaluate(2);
  EXPECT_EQ(e1.mean.nll, e2.mean.nll);
  EXPECT_EQ(e1.predictive.nll, e2.predictive.nll);
}

TEST(TrainCheckpoint, ResumeIsBitwiseAdamW) {
  expect_bitwise_resume("adamw");
}

TEST(TrainCheckpoint, ResumeIsBitwiseIvon) {
  if (!has_optimizer("ivon")) GTEST_SKIP() << "IVON is not built";
  expect_bitwise_resume("ivon");
}

// bfloat16 parameters with float32 master weights (saved with the optimizer's state).
TEST(TrainCheckpoint, ResumeIsBitwiseIvonBfloat16) {
  if (!has_optimizer("ivon")) GTEST_SKIP() << "IVON is not built";
  expect_bitwise_resume("ivon", "bfloat16");
}

TEST(TrainCheckpoint, ResumeIsBitwiseVogn) {
  if (!has_optimizer("vogn")) GTEST_SKIP() << "VOGN is not built";
  expect_bitwise_resume("vogn");
}

TEST(TrainCheckpoint, ResumeIsBitwiseKfac) {
  expect_bitwise_resume("kfac");  // the factors and the eigenbases in force are saved
}

// AdaBayes scales lr_sgd and its drift by η/η₀ under the cosine schedule: a resumed run keeps η₀
// (the rate the optimizer is built with), not the rate in force when the checkpoint was written.
TEST(TrainCheckpoint, ResumeIsBitwiseAdaBayes) {
  if (!has_optimizer("adabayes")) GTEST_SKIP() << "AdaBayes is not built";
  expect_bitwise_resume("adabayes");
}

TEST(TrainCheckpoint, TruncatedCorruptAndForeignFilesAreRefused) {
  at::set_num_threads(1);
  const auto data = synthetic_data(40, 10);
  TempDir dir("blr-train-ckpt");
  Trainer t(tiny_config("adamw"), data);
  TrainHooks hooks;
  hooks.stop_after_epoch = 1;
  t.train(hooks);
  const auto path = dir.file("a.ckpt");
  t.save(path);
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
  const auto ok = load_checkpoint(path);
  EXPECT_EQ(ok.meta.at("epoch").get<int64_t>(), 1);

  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir.file(name), std::ios::binary) << content;
    return dir.file(name);
  };
  const auto truncated = write("t.ckpt", bytes.substr(0, bytes.size() - 100));
  auto message = error_of([&] { load_checkpoint(truncated); });
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  EXPECT_NE(message.find("t.ckpt"), std::string::npos) << message;
  EXPECT_NE(
      error_of([&] { load_checkpoint(write("h.ckpt", bytes.substr(0, 10))); }).find("truncated"),
      std::string::npos);

  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x20);
  message = error_of([&] { load_checkpoint(write("c.ckpt", flipped)); });
  EXPECT_NE(message.find("checksum"), std::string::npos) << message;

  message = error_of([&] { load_checkpoint(write("x.ckpt", "hello, this is not a checkpoint")); });
  EXPECT_NE(message.find("not a blr checkpoint"), std::string::npos) << message;
  message = error_of([&] { load_checkpoint(write("l.ckpt", bytes + "junk")); });
  EXPECT_NE(message.find("corrupt"), std::string::npos) << message;
  message = error_of([&] { load_checkpoint(dir.file("missing.ckpt")); });
  EXPECT_NE(message.find("missing.ckpt"), std::string::npos) << message;

  // A checkpoint of another configuration is refused by restore().
  auto other = tiny_config("adamw");
  other.batch_size = 16;
  Trainer u(other, data);
  message = error_of([&] { u.restore(ok); });
  EXPECT_NE(message.find("another configuration"), std::string::npos) << message;
}

TEST(TrainCheckpoint, EvaluationOfPointEstimateRepeatsTheMean) {
  at::set_num_threads(1);
  const auto data = synthetic_data(60, 30);
  auto c = tiny_config("adamw");
  c.epochs = 3;
  Trainer t(c, data);
  t.train();
  const auto ev = t.evaluate();
  EXPECT_FALSE(ev.has_predictive);
  EXPECT_EQ(ev.predictive.nll, ev.mean.nll);
  EXPECT_GT(ev.mean.accuracy, 0.9);  // the synthetic classes are easy
  EXPECT_EQ(t.result().history.size(), 3u);
  EXPECT_GT(t.result().step_ms, 0.0);
}

TEST(TrainCheckpoint, EvaluationCoversTheValidationSplit) {
  at::set_num_threads(1);
  auto data = synthetic_data(60, 30);
  data->validation = synthetic_data(20, 20)->test;
  auto c = tiny_config("ivon");
  c.epochs = 2;
  Trainer t(c, data);
  t.train();
  const auto ev = t.evaluate();
  ASSERT_TRUE(ev.has_validation);
  const auto direct = classification_metrics(predict_log_probs(t.model(), data->validation.x),
                                             data->validation.y, c.ece_bins);
  EXPECT_EQ(ev.validation_mean.count, 20);
  EXPECT_EQ(ev.validation_mean.nll, direct.nll);
  EXPECT_EQ(ev.validation_predictive.count, 20);
  EXPECT_NE(ev.validation_predictive.nll, ev.validation_mean.nll);  // σ > 0: samples differ from μ

  Trainer without(tiny_config("ivon"), synthetic_data(60, 30));
  EXPECT_FALSE(without.evaluate().has_validation);
}

}  // namespace
}  // namespace blr::torch
