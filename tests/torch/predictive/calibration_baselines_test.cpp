// The calibration baselines (temperature_scaling.hpp, ensemble.hpp): temperature scaling's T is
// the stationary point of the validation NLL in β = 1/T (checked against the derivative written
// plainly), leaves accuracy alone and recovers a known temperature; a deep ensemble's
// log-probabilities are the log of the averaged probabilities; the trainer reports both.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/predictive/ensemble.hpp"
#include "blr/torch/metrics/metrics.hpp"
#include "blr/torch/metrics/temperature_scaling.hpp"
#include "blr/torch/train/trainer.hpp"
#include "synthetic_data.hpp"

namespace blr::torch {
namespace {

// dNLL/dβ = (1/N) Σ_i [Σ_c softmax(βℓ_i)_c ℓ_ic − ℓ_iy_i], written plainly.
double nll_derivative(const at::Tensor& lp, const at::Tensor& y, double beta) {
  const auto l = lp.to(at::kDouble);
  const auto p = at::softmax(beta * l, 1);
  return ((p * l).sum(1) - l.gather(1, y.unsqueeze(1)).squeeze(1)).mean().item<double>();
}

// Labels drawn from softmax(z / T*) for random logits z, with the "model" reporting log_softmax(z):
// a model over-confident by T* = 2. The fitted T is the NLL's stationary point and, with
// N = 200 000 draws, close to T*.
TEST(TemperatureScaling, TheFittedTemperatureIsTheStationaryPoint) {
  at::manual_seed(7);
  const int64_t n = 200000, c = 5;
  const auto z = at::randn({n, c}, at::kDouble) * 3.0;
  const double true_t = 2.0;
  const auto y = at::multinomial(at::softmax(z / true_t, 1), 1).squeeze(1);
  const auto lp = at::log_softmax(z, 1);
  const auto fit = fit_temperature(lp, y);
  EXPECT_FALSE(fit.at_bound);
  // Brent's tolerance on β (52 bits) leaves the derivative at round-off of the mean: ≤ 1e-7.
  EXPECT_LE(std::abs(nll_derivative(lp, y, 1.0 / fit.temperature)), 1e-7);
  // Statistical error of T from 2·10⁵ labels is about 0.01; 0.05 is five of them.
  EXPECT_NEAR(fit.temperature, true_t, 0.05);
  EXPECT_LT(fit.nll_after, fit.nll_before);
  // Scaling keeps the argmax (accuracy) and gives the NLL the fit reported.
  const auto scaled = scale_temperature(lp, fit.temperature);
  EXPECT_TRUE(scaled.argmax(1).equal(lp.argmax(1)));
  const auto m = classification_metrics(scaled, y);
  EXPECT_NEAR(m.nll, fit.nll_after, 1e-12);
  // T = 1 changes nothing.
  EXPECT_TRUE(at::allclose(scale_temperature(lp, 1.0), lp, 1e-12, 1e-12));
}

TEST(TemperatureScaling, BadInputIsOneSentence) {
  const auto lp = at::log_softmax(at::randn({4, 3}, at::kDouble), 1);
  const auto y = at::tensor({0, 1, 2, 0}, at::kLong);
  auto bad = lp.clone();
  bad[1][1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(fit_temperature(bad, y), Error);
  EXPECT_THROW(fit_temperature(lp, at::tensor({0, 1, 5, 0}, at::kLong)), Error);
  EXPECT_THROW(fit_temperature(lp, at::tensor({0, 1}, at::kLong)), Error);
  EXPECT_THROW(scale_temperature(lp, 0.0), Error);
  EXPECT_THROW(scale_temperature(lp, std::numeric_limits<double>::infinity()), Error);
}

TEST(Ensemble, LogProbabilitiesAreTheLogOfTheAveragedProbabilities) {
  at::manual_seed(3);
  std::vector<at::Tensor> members;
  for (int m = 0; m < 4; ++m) members.push_back(at::log_softmax(at::randn({6, 3}, at::kDouble), 1));
  const auto out = ensemble_log_probs(members);
  auto average = at::zeros({6, 3}, at::kDouble);
  for (const auto& lp : members) average += lp.exp() / 4.0;
  EXPECT_TRUE(at::allclose(out, average.log(), 1e-14, 1e-14));
  EXPECT_TRUE(ensemble_log_probs({members[0]}).equal(members[0]));
  EXPECT_THROW(ensemble_log_probs({}), Error);
  EXPECT_THROW(ensemble_log_probs({members[0], members[1].slice(0, 0, 3)}), Error);
}

TEST(Ensemble, EvaluateScoresTheAverageAndScalesOnValidation) {
  at::manual_seed(4);
  const auto y = at::tensor({0, 1, 2, 0, 1, 2}, at::kLong);
  std::vector<MemberPredictions> members(3);
  std::vector<at::Tensor> tests;
  for (auto& m : members) {
    m.test = at::log_softmax(at::randn({6, 3}, at::kDouble) * 2, 1);
    m.validation = at::log_softmax(at::randn({6, 3}, at::kDouble) * 2, 1);
    tests.push_back(m.test);
  }
  const auto e = evaluate_ensemble(members, y, y, 15, true);
  const auto expected = classification_metrics(ensemble_log_probs(tests), y);
  EXPECT_EQ(e.members, 3);
  EXPECT_DOUBLE_EQ(e.test.nll, expected.nll);
  EXPECT_TRUE(std::isnan(e.ood.auroc));
  ASSERT_TRUE(e.temperature_scaled);
  EXPECT_DOUBLE_EQ(e.scaled.accuracy, e.test.accuracy);
  // No validation split: no temperature scaling, in one sentence.
  for (auto& m : members) m.validation = at::Tensor();
  EXPECT_THROW(evaluate_ensemble(members, y, at::Tensor(), 15, true), Error);
}

TrainConfig small_run(const std::string& optimizer) {
  TrainConfig c;
  c.model = ModelSpec{"mlp", {8}};
  c.optimizer = optimizer;
  c.optimizer_options = optimizer == "ivon" ? OptionValues{{"lr", 0.1}, {"hess_init", 0.5}}
                                            : OptionValues{{"lr", 1e-2}};
  c.epochs = 2;
  c.batch_size = 30;
  c.test_samples = 4;
  c.data_options.validation_fraction = 0.25;
  c.temperature_scaling = true;
  return c;
}

// The trainer's scaled rows: T fitted on the validation split, accuracy unchanged, the
// validation NLL not above the unscaled one (T = 1 is in the search range).
TEST(TemperatureScaling, TheTrainerReportsScaledPredictions) {
  at::set_num_threads(1);
  auto data = testing::synthetic_data(160, 40);
  // The loader holds the validation split out of the training set; here it is made by hand.
  data->validation = {data->train.x.slice(0, 120), data->train.y.slice(0, 120)};
  data->train = {data->train.x.slice(0, 0, 120), data->train.y.slice(0, 0, 120)};
  for (const std::string optimizer : {"ivon", "adamw"}) {
    Trainer t(small_run(optimizer), data);
    t.train();
    const auto ev = t.evaluate();
    ASSERT_TRUE(ev.temperature_scaled) << optimizer;
    EXPECT_DOUBLE_EQ(ev.scaled_mean.accuracy, ev.mean.accuracy) << optimizer;
    EXPECT_DOUBLE_EQ(ev.scaled_predictive.accuracy, ev.predictive.accuracy) << optimizer;
    EXPECT_LE(ev.temperature_mean.nll_after, ev.temperature_mean.nll_before + 1e-12) << optimizer;
    // The fit renormalises the float32 log-probabilities (logsumexp of a float32 log_softmax is
    // 0 only to about 10 classes × 2⁻²⁴ ≈ 6e-7): the NLL at T = 1 agrees to that.
    EXPECT_NEAR(ev.temperature_mean.nll_before, ev.validation_mean.nll, 1e-6) << optimizer;
  }
}

TEST(TemperatureScaling, NeedsAValidationSplit) {
  TrainConfig c = small_run("adamw");
  c.data_options.validation_fraction = 0.0;
  try {
    c.validate();
    FAIL() << "temperature scaling without a validation split was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--temperature-scaling fits its temperature on the "
                                         "validation split"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace blr::torch
