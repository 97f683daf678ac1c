// `--precision` in the trainer (nn/precision.hpp): bfloat16 parameters with IVON's float32 master
// weights train as well as float32 on the synthetic task; an optimizer without master weights is
// refused in one sentence; CPU autocast trains any optimizer with float32 parameters.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/optim/mean_field.hpp"
#include "blr/torch/train/trainer.hpp"
#include "synthetic_data.hpp"

namespace blr::torch {
namespace {

TrainConfig config(const std::string& optimizer, const std::string& precision) {
  TrainConfig c;
  c.model = ModelSpec{"mlp", {16}};
  c.optimizer = optimizer;
  c.precision = precision;
  c.epochs = 3;
  c.batch_size = 30;
  c.seed = 5;
  c.test_samples = 4;
  if (optimizer == "adamw") c.optimizer_options = {{"lr", 1e-2}};
  if (optimizer == "ivon") c.optimizer_options = {{"lr", 0.1}, {"hess_init", 0.5}};
  return c;
}

// The synthetic task (a bright row per class) is learnt to full accuracy in float32; bfloat16's
// 8-bit mantissa perturbs logits by ~0.4 % and may flip a few of its 60 borderline test images,
// so the reduced runs must come within 5 points of float32's accuracy.
constexpr double kAccuracyMargin = 0.05;

TEST(TrainPrecision, Bfloat16ParametersTrainOnMasterWeights) {
  at::set_num_threads(1);
  const auto data = testing::synthetic_data(150, 60);
  Trainer reference(config("ivon", "float32"), data);
  reference.train();
  Trainer reduced(config("ivon", "bfloat16"), data);
  reduced.train();
  for (const auto& p : reduced.model().parameters()) EXPECT_EQ(p.scalar_type(), at::kBFloat16);
  auto* mean_field = dynamic_cast<MeanFieldOptimizer*>(&reduced.optimizer());
  ASSERT_NE(mean_field, nullptr);
  const auto means = mean_field->posterior_mean();
  const auto params = reduced.model().parameters();
  for (size_t k = 0; k < params.size(); ++k) {
    EXPECT_EQ(means[k].scalar_type(), at::kFloat);
    EXPECT_TRUE(at::equal(params[k], means[k].to(at::kBFloat16))) << "parameter " << k;
  }
  const auto a = reference.evaluate(4), b = reduced.evaluate(4);
  EXPECT_GE(b.mean.accuracy, a.mean.accuracy - kAccuracyMargin);
  EXPECT_GE(b.predictive.accuracy, a.predictive.accuracy - kAccuracyMargin);
  EXPECT_LT(reduced.result().history.back().train_loss, reduced.result().initial_loss);
}

TEST(TrainPrecision, AnOptimizerWithoutMasterWeightsIsRefused) {
  const auto data = testing::synthetic_data(30, 10);
  try {
    Trainer t(config("adamw", "bfloat16"), data);
    FAIL() << "AdamW on bfloat16 parameters was accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("float32 master weights"), std::string::npos) << message;
    EXPECT_NE(message.find("autocast-bfloat16"), std::string::npos) << message;
  }
}

TEST(TrainPrecision, UnknownPrecisionIsOneSentence) {
  TrainConfig c = config("adamw", "fp8");
  try {
    c.validate();
    FAIL() << "precision fp8 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Unknown precision 'fp8'"), std::string::npos)
        << e.what();
  }
}

TEST(TrainPrecision, CpuAutocastTrainsAnyOptimizer) {
  at::set_num_threads(1);
  const auto data = testing::synthetic_data(150, 60);
  Trainer reference(config("adamw", "float32"), data);
  reference.train();
  Trainer autocast(config("adamw", "autocast-bfloat16"), data);
  autocast.train();
  for (const auto& p : autocast.model().parameters()) EXPECT_EQ(p.scalar_type(), at::kFloat);
  const auto a = reference.evaluate(), b = autocast.evaluate();
  EXPECT_GE(b.mean.accuracy, a.mean.accuracy - kAccuracyMargin);
  // The forward really ran in bfloat16: the parameters differ from the float32 run's.
  bool differs = false;
  const auto pa = reference.model().parameters(), pb = autocast.model().parameters();
  for (size_t k = 0; k < pa.size(); ++k) differs = differs || !at::equal(pa[k], pb[k]);
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace blr::torch
