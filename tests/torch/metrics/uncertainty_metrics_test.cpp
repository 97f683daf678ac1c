// The uncertainty metrics (metrics/uncertainty.hpp) against hand computations, and the input
// checks every metric entry shares (audit 2026-11-28, D14).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/torch/metrics/metrics.hpp"
#include "blr/torch/metrics/temperature_scaling.hpp"
#include "blr/torch/metrics/uncertainty.hpp"

namespace blr::torch {
namespace {

// The four examples of train_metrics_test.cpp:
//   p1 = (.7, .2, .1)   y = 0  correct, confidence .7
//   p2 = (.1, .6, .3)   y = 2  wrong,   confidence .6
//   p3 = (.25,.25,.5)   y = 2  correct, confidence .5
//   p4 = (.05,.9, .05)  y = 1  correct, confidence .9
at::Tensor four_log_probs() {
  return at::tensor({.7, .2, .1, .1, .6, .3, .25, .25, .5, .05, .9, .05}, at::kDouble)
      .reshape({4, 3})
      .log();
}
at::Tensor four_labels() { return at::tensor({0, 2, 2, 1}, at::kLong); }

TEST(UncertaintyMetrics, AdaptiveEceByHand) {
  // Sorted by confidence: .5 (right), .6 (wrong), .7 (right), .9 (right).
  // 2 bins of two: |1 − (.5+.6)| + |2 − (.7+.9)| = .1 + .4 = .5; /4
  EXPECT_NEAR(adaptive_calibration_error(four_log_probs(), four_labels(), 2), 0.125, 1e-12);
  // 3 bins: ranks ⌊4b/3⌋: {.5}, {.6}, {.7, .9}: .5 + .6 + |2 − 1.6| = 1.5; /4
  EXPECT_NEAR(adaptive_calibration_error(four_log_probs(), four_labels(), 3), 0.375, 1e-12);
  // 1 bin: |3 − 2.7| / 4 (the plain ECE with one bin)
  EXPECT_NEAR(adaptive_calibration_error(four_log_probs(), four_labels(), 1), 0.075, 1e-12);
}

TEST(UncertaintyMetrics, ClasswiseEceByHand) {
  // 3 equal-width bins per class, [0,⅓), [⅓,⅔), [⅔,1]; per bin |hits − Σ p|:
  //   class 0: p = .7 .1 .25 .05, hit at .7:   bin 0 |0 − .4| + bin 2 |1 − .7|          = .7
  //   class 1: p = .2 .6 .25 .9,  hit at .9:   bin 0 .45 + bin 1 .6 + bin 2 |1 − .9|     = 1.15
  //   class 2: p = .1 .3 .5 .05,  hits at .3, .5: bin 0 |1 − .45| + bin 1 |1 − .5|       = 1.05
  // (.7 + 1.15 + 1.05) / (N·C = 12)
  EXPECT_NEAR(classwise_calibration_error(four_log_probs(), four_labels(), 3), 2.9 / 12, 1e-12);
  const auto m = classification_metrics(four_log_probs(), four_labels(), 3);
  EXPECT_NEAR(m.classwise_ece, 2.9 / 12, 1e-12);
  EXPECT_NEAR(m.adaptive_ece, 0.375, 1e-12);
}

TEST(UncertaintyMetrics, AurcByHand) {
  // Most confident first: .9 right, .7 right, .6 wrong, .5 right: errors 0, 0, 1, 1;
  // risk 0/1, 0/2, 1/3, 1/4; AURC = (1/3 + 1/4)/4 = 7/48.
  EXPECT_NEAR(area_under_risk_coverage(four_log_probs(), four_labels()), 7.0 / 48, 1e-12);
  EXPECT_NEAR(classification_metrics(four_log_probs(), four_labels()).aurc, 7.0 / 48, 1e-12);
  // Two tied predictions, one right, one wrong: the orders give (0 + ½)/2 and (1 + ½)/2; the
  // metric is their mean, ½, whichever comes first in the input.
  const auto tied = at::tensor({.6, .4, .6, .4}, at::kDouble).reshape({2, 2}).log();
  EXPECT_NEAR(area_under_risk_coverage(tied, at::tensor({0, 1}, at::kLong)), 0.5, 1e-12);
  EXPECT_NEAR(area_under_risk_coverage(tied, at::tensor({1, 0}, at::kLong)), 0.5, 1e-12);
}

TEST(UncertaintyMetrics, AuprByHand) {
  // Thresholds, highest first (flagged = score ≥ t): 0.9: TP 1 of 1 flagged, recall ⅓, precision
  // 1; 0.8: recall unchanged; 0.5: TP 2 of 3, recall ⅔, precision ⅔; 0.4 (one in, one out): TP 3
  // of 5, recall 1, precision ⅗. AP = ⅓·1 + ⅓·⅔ + ⅓·⅗ = 34/45.
  EXPECT_NEAR(aupr({0.1, 0.4, 0.35, 0.8}, {0.9, 0.4, 0.5}), 34.0 / 45, 1e-12);
  EXPECT_DOUBLE_EQ(aupr({0, 1}, {2, 3}), 1.0);
  // Reversed: at 1, TP 1 of 3 (recall ½, precision ⅓); at 0, TP 2 of 4 (precision ½): 5/12.
  EXPECT_NEAR(aupr({2, 3}, {0, 1}), 5.0 / 12, 1e-12);
  EXPECT_THROW(aupr({}, {1}), Error);
  EXPECT_THROW(aupr({std::nan("")}, {1}), Error);
}

TEST(UncertaintyMetrics, Fpr95ByHand) {
  // n_in = 20 scores 1..20: t* = the ⌈19⌉-th smallest = 19; OOD scores ≤ 19: {5} → ¼.
  std::vector<double> in;
  for (int i = 1; i <= 20; ++i) in.push_back(i);
  EXPECT_DOUBLE_EQ(fpr_at_95_tpr(in, {5, 19.5, 20, 21}), 0.25);
  // A tie at t* counts as accepted: 19 → 2 of 4.
  EXPECT_DOUBLE_EQ(fpr_at_95_tpr(in, {5, 19, 20, 21}), 0.5);
  // n_in = 4: ⌈3.8⌉ = 4, t* = 4 (the largest); {3, 5} → ½.
  EXPECT_DOUBLE_EQ(fpr_at_95_tpr({1, 2, 3, 4}, {3, 5}), 0.5);
  const auto all = ood_metrics({1, 2, 3, 4}, {3, 5});
  EXPECT_DOUBLE_EQ(all.fpr95, 0.5);
  EXPECT_DOUBLE_EQ(all.auroc, auroc({1, 2, 3, 4}, {3, 5}));
  EXPECT_DOUBLE_EQ(all.aupr, aupr({1, 2, 3, 4}, {3, 5}));
}

TEST(UncertaintyMetrics, EntropyOodMetricsSeparateConfidentFromUniform) {
  const auto confident =
      at::tensor({.98, .01, .01, .01, .98, .01}, at::kDouble).reshape({2, 3}).log();
  const auto uniform = at::full({2, 3}, 1.0 / 3, at::kDouble).log();
  const auto m = entropy_ood_metrics(confident, uniform);
  EXPECT_DOUBLE_EQ(m.auroc, 1.0);
  EXPECT_DOUBLE_EQ(m.aupr, 1.0);
  EXPECT_DOUBLE_EQ(m.fpr95, 0.0);
}

// D14: what is not log-probabilities and integer labels is one sentence, from every entry.
TEST(UncertaintyMetrics, InputThatIsNotLogProbabilitiesIsRefused) {
  at::manual_seed(3);
  const auto y = at::randint(0, 3, {20}, at::kLong);
  const auto logits = at::randn({20, 3}) * 10;
  const auto lp = at::log_softmax(at::randn({20, 3}), 1);
  auto with_nan = lp.clone();
  with_nan[0][0] = std::numeric_limits<float>::quiet_NaN();
  auto with_inf = lp.clone();
  with_inf[4][1] = std::numeric_limits<float>::infinity();
  const auto halved = lp - std::log(2.0);  // probabilities summing to ½
  for (const auto& bad : {logits, with_nan, with_inf, halved}) {
    EXPECT_THROW(classification_metrics(bad, y), Error);
    EXPECT_THROW(expected_calibration_error(bad, y, 15), Error);
    EXPECT_THROW(reliability_bins(bad, y, 15), Error);
    EXPECT_THROW(adaptive_calibration_error(bad, y, 15), Error);
    EXPECT_THROW(classwise_calibration_error(bad, y, 15), Error);
    EXPECT_THROW(area_under_risk_coverage(bad, y), Error);
    EXPECT_THROW(fit_temperature(bad, y), Error);
    EXPECT_THROW(entropy_auroc(lp, bad), Error);
    EXPECT_THROW(entropy_ood_metrics(bad, lp), Error);
  }
  // Labels: float, bool, out of range, a different count.
  EXPECT_THROW(classification_metrics(lp, y.to(at::kFloat)), Error);
  EXPECT_THROW(classification_metrics(lp, y > 0), Error);
  EXPECT_THROW(classification_metrics(lp, y + 3), Error);
  EXPECT_THROW(classification_metrics(lp, y.slice(0, 0, 19)), Error);
  EXPECT_THROW(classification_metrics(lp.to(at::kLong), y), Error);
  try {
    classification_metrics(logits, y);
    FAIL() << "logits were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("log_softmax"), std::string::npos) << e.what();
  }
}

// The tolerance accepts what blr and its users compute: float32 log-softmaxes averaged over 256
// posterior draws by a running float32 logaddexp (the least accurate way), for 2 and 1000 classes,
// and the same in double; and log 0 = −∞.
TEST(UncertaintyMetrics, RoundedLogProbabilitiesAreAccepted) {
  at::manual_seed(5);
  for (const int64_t classes : {2, 1000}) {
    const int draws = 256;
    at::Tensor total;
    for (int k = 0; k < draws; ++k) {
      const auto lp = at::log_softmax(at::randn({500, classes}) * 3, 1);
      total = k == 0 ? lp : at::logaddexp(total, lp);
    }
    total = total - std::log(static_cast<double>(draws));
    const auto y = at::randint(0, classes, {500}, at::kLong);
    EXPECT_NO_THROW(classification_metrics(total, y));
    EXPECT_NO_THROW(classification_metrics(total.to(at::kDouble), y));
    EXPECT_NO_THROW(classification_metrics(total, y.to(at::kInt)));
  }
  const auto certain = at::tensor({0.0, -INFINITY}, at::kDouble).reshape({1, 2});
  EXPECT_NO_THROW(classification_metrics(certain, at::tensor({1}, at::kLong)));
}

}  // namespace
}  // namespace blr::torch
