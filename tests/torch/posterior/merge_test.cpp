// Model merging (blr/torch/posterior/merge.hpp): one model comes back exactly, equal curvatures give the
// average, a hand-computed two-coordinate example, the exact merge of diagonal Gaussians of the
// core (blr/inference/merge.hpp), and bad input.
#include "blr/torch/posterior/merge.hpp"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "blr/core/error.hpp"
#include "blr/inference/gaussian_natural.hpp"
#include "blr/inference/merge.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

using ::blr::torch::testing::kEps;

at::Tensor vec(std::vector<double> v, at::ScalarType type = at::kDouble) {
  return at::tensor(v, at::kDouble).to(type);
}

MergeOptions with(MergeMethod method, double scale = 1.0, double delta0 = 1e-12) {
  MergeOptions o;
  o.method = method;
  o.scale = scale;
  o.delta0 = delta0;
  return o;
}

TEST(TorchMerge, OneModelComesBackExactly) {
  at::manual_seed(3);
  const auto base = at::randn({7, 5});
  const auto tuned = base + 1e-3f * at::randn({7, 5});  // float: θ₀ + (θ₁ − θ₀) would round
  const auto c0 = at::rand({7, 5}), c1 = at::rand({7, 5}) * 100;
  for (auto method : {MergeMethod::kUncertainty, MergeMethod::kAverage,
                      MergeMethod::kTaskArithmetic}) {
    const auto merged = merge_tensor(base, {tuned}, c0, {c1}, with(method));
    EXPECT_EQ(merged.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::equal(merged, tuned)) << merge_method_name(method);
  }
}

TEST(TorchMerge, EqualCurvaturesGiveTheAverage) {
  at::manual_seed(4);
  const auto opts = at::TensorOptions().dtype(at::kDouble);
  const auto base = at::randn({3, 4}, opts);
  const std::vector<at::Tensor> tasks = {at::randn({3, 4}, opts), at::randn({3, 4}, opts),
                                         at::randn({3, 4}, opts)};
  const auto c = at::rand({3, 4}, opts) + 0.1;
  const auto average = merge_tensor(base, tasks, {}, {}, with(MergeMethod::kAverage));
  const auto mean = (tasks[0] + tasks[1] + tasks[2]) / 3.0;
  // C₀ = δ₀ = 0: Fisher-weighted averaging, w_t = c/(3c) = 1/3 up to one rounding.
  const auto fisher = merge_tensor(base, tasks, at::zeros_like(c), {c, c, c},
                                   with(MergeMethod::kUncertainty, 1.0, 0.0));
  const double scale = at::cat({base.abs().flatten(), tasks[0].abs().flatten(),
                                tasks[1].abs().flatten(), tasks[2].abs().flatten()})
                           .max()
                           .item<double>();
  EXPECT_LE((average - mean).abs().max().item<double>(), 8 * kEps * scale);
  EXPECT_LE((fisher - mean).abs().max().item<double>(), 16 * kEps * scale);
  // α = 1/T in task arithmetic is the average as well.
  const auto arithmetic =
      merge_tensor(base, tasks, {}, {}, with(MergeMethod::kTaskArithmetic, 1.0 / 3.0));
  EXPECT_LE((arithmetic - mean).abs().max().item<double>(), 16 * kEps * scale);
}

TEST(TorchMerge, HandComputedTwoCoordinates) {
  // θ₀ = (1, −2), θ₁ = (3, 0), θ₂ = (−1, 2); C₀ = (1, 0), C₁ = (2, 1), C₂ = (1, 3); α = ½, δ₀ = ½.
  // Coordinate 1: H̄ = ½(2+1) + 1 + ½ = 3, w = (½·3.5/3, ½·2.5/3) = (7/12, 5/12),
  //   θ = 1 + 7/12·2 − 5/12·2 = 4/3.
  // Coordinate 2: H̄ = ½(1+3) + 0 + ½ = 2.5, w = (½·1.5/2.5, ½·3.5/2.5) = (0.3, 0.7),
  //   θ = −2 + 0.3·2 + 0.7·4 = 1.4.
  const auto base = vec({1, -2});
  const std::vector<at::Tensor> tasks = {vec({3, 0}), vec({-1, 2})};
  const auto merged = merge_tensor(base, tasks, vec({1, 0}), {vec({2, 1}), vec({1, 3})},
                                   with(MergeMethod::kUncertainty, 0.5, 0.5));
  EXPECT_NEAR(merged[0].item<double>(), 4.0 / 3.0, 8 * kEps);
  EXPECT_NEAR(merged[1].item<double>(), 1.4, 8 * kEps);
  // Task arithmetic with α = ¼: θ₀ + ¼((2, 2) + (−2, 4)) = (1, −0.5); the average: (1, 1).
  const auto arithmetic =
      merge_tensor(base, tasks, {}, {}, with(MergeMethod::kTaskArithmetic, 0.25));
  EXPECT_NEAR(arithmetic[0].item<double>(), 1.0, 8 * kEps);
  EXPECT_NEAR(arithmetic[1].item<double>(), -0.5, 8 * kEps);
  const auto average = merge_tensor(base, tasks, {}, {}, with(MergeMethod::kAverage));
  EXPECT_NEAR(average[0].item<double>(), 1.0, 8 * kEps);
  EXPECT_NEAR(average[1].item<double>(), 1.0, 8 * kEps);
}

TEST(TorchMerge, DiagonalGaussiansMatchTheCoreMerge) {
  // Posteriors N(θ_t, P_t⁻¹) from the prior N(θ₀, P₀⁻¹): C₀ = P₀, C_t = P_t − P₀, δ₀ = 0, α = 1
  // must give the mean of the core's exact natural-parameter merge.
  at::manual_seed(5);
  const auto opts = at::TensorOptions().dtype(at::kDouble);
  const int64_t d = 6, tasks_n = 3;
  const auto theta0 = at::randn({d}, opts), p0 = at::rand({d}, opts) + 0.5;
  std::vector<at::Tensor> thetas, data_curv;
  std::vector<Vector> naturals;
  const auto to_eigen = [](const at::Tensor& x) {
    return Vector(Eigen::Map<const Vector>(x.contiguous().data_ptr<double>(), x.numel()));
  };
  for (int64_t t = 0; t < tasks_n; ++t) {
    thetas.push_back(at::randn({d}, opts));
    data_curv.push_back(at::rand({d}, opts) * 3);
    const auto p = p0 + data_curv.back();
    naturals.push_back(inference::pack_diag(to_eigen(p * thetas.back()), to_eigen(p)));
  }
  const Vector merged_natural = inference::merge_natural(
      inference::pack_diag(to_eigen(p0 * theta0), to_eigen(p0)), naturals);
  const Vector core_mean =
      merged_natural.head(d).array() / merged_natural.tail(d).array();
  const auto merged = merge_tensor(theta0, thetas, p0, data_curv,
                                   with(MergeMethod::kUncertainty, 1.0, 0.0));
  // Both are ratios of sums of T + 2 terms of size ≤ max|Pθ|; relative error a few (T+2)ε each,
  // amplified by Σ|P_tθ_t|/|Σ P_tθ_t| (the cancellation in the numerator).
  for (int64_t j = 0; j < d; ++j) {
    double abs_sum = (p0[j] * theta0[j]).abs().item<double>() * (tasks_n - 1);
    for (int64_t t = 0; t < tasks_n; ++t) {
      abs_sum += ((p0[j] + data_curv[t][j]) * thetas[t][j]).abs().item<double>();
    }
    const double p_total = merged_natural[d + j];
    const double tol = 4.0 * (tasks_n + 2) * kEps * (abs_sum / p_total + std::abs(core_mean[j]));
    EXPECT_NEAR(merged[j].item<double>(), core_mean[j], tol) << "coordinate " << j;
  }
}

TEST(TorchMerge, RefusesBadInput) {
  const auto base = vec({1, 2}), other = vec({1, 2, 3});
  EXPECT_THROW(merge_tensor(base, {other}, {}, {}, with(MergeMethod::kAverage)), Error);
  EXPECT_THROW(merge_tensor(base, {}, {}, {}, with(MergeMethod::kAverage)), Error);
  EXPECT_THROW(merge_tensor(base, {base}, {}, {}, with(MergeMethod::kTaskArithmetic, 0.0)), Error);
  EXPECT_THROW(merge_tensor(base, {base}, {}, {}, with(MergeMethod::kTaskArithmetic, -1.0)), Error);
  EXPECT_THROW(merge_tensor(base, {base}, {}, {}, with(MergeMethod::kUncertainty, 1.0, -1.0)),
               Error);
  // Uncertainty needs curvatures, and an H̄ that is positive everywhere.
  EXPECT_THROW(merge_tensor(base, {base}, {}, {}, with(MergeMethod::kUncertainty)), Error);
  const auto zero = vec({0, 0});
  EXPECT_THROW(merge_tensor(base, {base}, zero, {zero}, with(MergeMethod::kUncertainty, 1.0, 0.0)),
               Error);
  EXPECT_THROW(parse_merge_method("median"), Error);
  EXPECT_EQ(parse_merge_method("task-arithmetic"), MergeMethod::kTaskArithmetic);
}

}  // namespace
}  // namespace blr::torch
