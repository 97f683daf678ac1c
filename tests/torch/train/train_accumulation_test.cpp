// Gradient accumulation in the trainer (`--micro-batches K`): each minibatch runs in K parts whose
// gradients (and, for VOGN, per-example squared gradients) add up inside each sample, so a run
// with K parts makes the steps of the run with one part, up to the rounding of the sums.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/train/trainer.hpp"
#include "synthetic_data.hpp"

namespace blr::torch {
namespace {

TrainConfig config(const std::string& optimizer, int64_t micro_batches) {
  TrainConfig c;
  c.model = ModelSpec{"mlp", {16}};
  c.optimizer = optimizer;
  c.epochs = 2;
  c.batch_size = 30;
  c.micro_batches = micro_batches;
  c.seed = 3;
  c.test_samples = 2;
  if (optimizer == "adamw") c.optimizer_options = {{"lr", 1e-2}};
  if (optimizer == "ivon") c.optimizer_options = {{"lr", 0.1}, {"hess_init", 0.5}};
  if (optimizer == "vogn") c.optimizer_options = {{"lr", 1e-2}};
  return c;
}

/// Largest |Δθ| between two trainers' parameters, relative to the largest |θ|.
double relative_difference(const Trainer& a, const Trainer& b) {
  double diff = 0.0, scale = 0.0;
  const auto pa = a.model().parameters(), pb = b.model().parameters();
  for (size_t k = 0; k < pa.size(); ++k) {
    diff = std::max(diff, (pa[k] - pb[k]).abs().max().item<double>());
    scale = std::max(scale, pa[k].abs().max().item<double>());
  }
  return diff / scale;
}

// Bound: the two runs differ only in how float32 sums over a minibatch of 30 rows are grouped;
// each gradient differs by at most 30·u·Σ|terms| (u = 2⁻²⁴ ≈ 6e-8), ≈ 2e-6 of its size, and the
// 8 steps of these runs (lr ≤ 0.1, curvature ≥ 0.5) do not amplify a relative perturbation by
// more than 10×: 2e-5. The test's bound is 5× that.
constexpr double kBound = 1e-4;

class Accumulation : public ::testing::TestWithParam<std::string> {};

TEST_P(Accumulation, ThreePartsMakeTheStepsOfTheWholeMinibatch) {
  const std::string optimizer = GetParam();
  const auto names = optimizer_names();
  if (std::find(names.begin(), names.end(), optimizer) == names.end()) {
    GTEST_SKIP() << optimizer << " is not built";
  }
  at::set_num_threads(1);
  const auto data = testing::synthetic_data(120, 30);
  Trainer whole(config(optimizer, 1), data);
  whole.train();
  Trainer parts(config(optimizer, 3), data);
  parts.train();
  const double d = relative_difference(whole, parts);
  EXPECT_LE(d, kBound);
  EXPECT_NEAR(whole.result().history.back().train_loss, parts.result().history.back().train_loss,
              kBound * std::abs(whole.result().history.back().train_loss));
}

INSTANTIATE_TEST_SUITE_P(Optimizers, Accumulation, ::testing::Values("adamw", "ivon", "vogn"));

TEST(Accumulation, MorePartsThanRowsAreRefused) {
  TrainConfig c = config("adamw", 31);
  try {
    c.validate();
    FAIL() << "31 parts of a batch of 30 were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Option 'micro-batches' must lie in [1, batch-size]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace blr::torch
