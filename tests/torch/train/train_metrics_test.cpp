// Metrics against values computed by hand (see the comments for the arithmetic).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/metrics/metrics.hpp"

namespace blr::torch {
namespace {

// Four examples, three classes:
//   p1 = (.7, .2, .1)   y = 0  correct, confidence .7
//   p2 = (.1, .6, .3)   y = 2  wrong,   confidence .6
//   p3 = (.25,.25,.5)   y = 2  correct, confidence .5
//   p4 = (.05,.9, .05)  y = 1  correct, confidence .9
at::Tensor example_log_probs() {
  return at::tensor({.7, .2, .1, .1, .6, .3, .25, .25, .5, .05, .9, .05}, at::kDouble)
      .reshape({4, 3})
      .log();
}
at::Tensor example_labels() {
  return at::tensor({0, 2, 2, 1}, at::kLong);
}

TEST(TrainMetrics, HandComputedValues) {
  const auto m = classification_metrics(example_log_probs(), example_labels(), 10);
  EXPECT_EQ(m.count, 4);
  EXPECT_DOUBLE_EQ(m.accuracy, 0.75);
  // NLL = −(ln .7 + ln .3 + ln .5 + ln .9)/4
  EXPECT_NEAR(m.nll, -(std::log(.7) + std::log(.3) + std::log(.5) + std::log(.9)) / 4, 1e-12);
  EXPECT_NEAR(m.nll, 0.58978886112061, 1e-12);
  // Brier: (.09+.04+.01) + (.01+.36+.49) + (.0625+.0625+.25) + (.0025+.01+.0025) = 1.39; /4
  EXPECT_NEAR(m.brier, 0.3475, 1e-12);
  // ECE, 10 bins: each example alone in its bin: (.3 + .6 + .5 + .1)/4 = .375
  EXPECT_NEAR(m.ece, 0.375, 1e-12);
  // 20 bins: the same, each example alone: .375
  EXPECT_NEAR(m.ece20, 0.375, 1e-12);
  // entropy: mean of −Σ p log p per row
  EXPECT_NEAR(m.entropy, 0.7834706849218696, 1e-12);
}

TEST(TrainMetrics, EceWithCoarseBins) {
  // 2 bins: every confidence ≥ .5 falls into bin 1; |3 − (.7+.6+.5+.9)|/4 = .075.
  EXPECT_NEAR(expected_calibration_error(example_log_probs(), example_labels(), 2), 0.075, 1e-12);
  // 1 bin: the same.
  EXPECT_NEAR(expected_calibration_error(example_log_probs(), example_labels(), 1), 0.075, 1e-12);
  const auto bins = reliability_bins(example_log_probs(), example_labels(), 2);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins[0].count, 0);
  EXPECT_EQ(bins[1].count, 4);
  EXPECT_NEAR(bins[1].confidence, 2.7 / 4, 1e-12);
  EXPECT_NEAR(bins[1].accuracy, 0.75, 1e-12);
}

TEST(TrainMetrics, ConfidenceOneLandsInTheLastBin) {
  const auto lp = at::tensor({0.0, -INFINITY}, at::kDouble).reshape({1, 2});
  const auto m = classification_metrics(lp, at::tensor({0}, at::kLong), 15);
  EXPECT_DOUBLE_EQ(m.ece, 0.0);
  EXPECT_DOUBLE_EQ(m.entropy, 0.0);  // 0·log 0 = 0
  EXPECT_DOUBLE_EQ(m.brier, 0.0);
  const auto bins = reliability_bins(lp, at::tensor({0}, at::kLong), 15);
  EXPECT_EQ(bins.back().count, 1);
}

TEST(TrainMetrics, AurocWithTies) {
  // out > in pairs: 0.9 beats all 4; 0.4 beats 0.1 and 0.35 and ties 0.4 (½); 0.5 beats 3.
  // (4 + 2.5 + 3)/12
  EXPECT_NEAR(auroc({0.1, 0.4, 0.35, 0.8}, {0.9, 0.4, 0.5}), 9.5 / 12, 1e-12);
  EXPECT_DOUBLE_EQ(auroc({0, 1}, {2, 3}), 1.0);
  EXPECT_DOUBLE_EQ(auroc({2, 3}, {0, 1}), 0.0);
  EXPECT_DOUBLE_EQ(auroc({1, 1}, {1}), 0.5);
  EXPECT_THROW(auroc({}, {1}), Error);
}

TEST(TrainMetrics, EntropyAurocSeparatesConfidentFromUniform) {
  const auto confident =
      at::tensor({.98, .01, .01, .01, .98, .01}, at::kDouble).reshape({2, 3}).log();
  const auto uniform = at::full({2, 3}, 1.0 / 3, at::kDouble).log();
  EXPECT_DOUBLE_EQ(entropy_auroc(confident, uniform), 1.0);
  const auto h = predictive_entropy(uniform);
  EXPECT_NEAR(h[0].item<double>(), std::log(3.0), 1e-12);
}

TEST(TrainMetrics, BadInputIsRefused) {
  EXPECT_THROW(classification_metrics(example_log_probs(), at::tensor({0, 1}, at::kLong)), Error);
  EXPECT_THROW(classification_metrics(example_log_probs(), at::tensor({0, 1, 2, 3}, at::kLong)),
               Error);
  EXPECT_THROW(classification_metrics(example_log_probs(), example_labels(), 0), Error);
}

}  // namespace
}  // namespace blr::torch
