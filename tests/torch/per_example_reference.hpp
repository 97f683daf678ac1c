// The reference for the per-example squared-gradient engine's tests: D = (1/M) Σ_i (∇ℓ_i)²
// computed plainly, one autograd::grad per example, from the per-example losses ℓ of one
// forward pass; and the check of the engine's D and p.grad against it.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "blr/torch/curvature/squared_gradients.hpp"

namespace blr::torch::testing {

/// A non-quadratic loss of each example's output: ℓ_i = Σ (tanh z + 0.3 z²) over its entries.
inline ::at::Tensor example_losses(const ::at::Tensor& z) {
  return (z.tanh() + 0.3 * z.square()).flatten(1).sum(1);
}

/// Cross-entropy of every token, averaged over each example's tokens: logits M×T×V, targets M×T.
inline ::at::Tensor token_losses(const ::at::Tensor& logits, const ::at::Tensor& targets) {
  return -::at::log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1).mean(1);
}

inline std::vector<::at::Tensor> tensors_of(const NamedParameters& parameters) {
  std::vector<::at::Tensor> out;
  for (const auto& [name, p] : parameters) out.push_back(p);
  return out;
}

/// (1/M) Σ_i (∇ℓ_i)², one backward per example; `losses` holds ℓ_1..ℓ_M (the graph is kept).
inline std::vector<::at::Tensor> brute_force_squared_gradients(const ::at::Tensor& losses,
                                                               const NamedParameters& parameters) {
  const auto inputs = tensors_of(parameters);
  std::vector<::at::Tensor> sum;
  for (const auto& p : inputs) sum.push_back(::at::zeros_like(p));
  const int64_t m = losses.size(0);
  for (int64_t i = 0; i < m; ++i) {
    const auto grads = ::torch::autograd::grad({losses[i]}, inputs, {}, /*retain_graph=*/true,
                                               /*create_graph=*/false, /*allow_unused=*/true);
    for (size_t k = 0; k < grads.size(); ++k) {
      if (grads[k].defined()) sum[k] += grads[k].square();
    }
  }
  for (auto& s : sum) s /= static_cast<double>(m);
  return sum;
}

/// max |a − b| ≤ relative · max |b| + floor for every pair, naming the parameter otherwise.
inline void expect_all_close(const std::vector<::at::Tensor>& got,
                             const std::vector<::at::Tensor>& expected,
                             const NamedParameters& parameters, double relative,
                             const std::string& what, double floor = 0.0) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const auto& name = parameters[k].first;
    ASSERT_TRUE(got[k].defined()) << what << " of " << name;
    ASSERT_EQ(got[k].sizes(), expected[k].sizes()) << what << " of " << name;
    const double scale = expected[k].abs().max().item<double>();
    EXPECT_LE((got[k] - expected[k]).abs().max().item<double>(), relative * scale + floor)
        << what << " of " << name << " (max |expected| = " << scale << ")";
  }
}

/// Float64 tolerance: each entry of D is a sum of at most a few thousand products, formed in a
/// different order by the engine and by the loop; the relative rounding error is then below
/// n·2⁻⁵³ ≈ 1e-12, and 1e-10 leaves a factor 100 for cancellation in the per-example sums.
inline constexpr double kFloat64Tolerance = 1e-10;
/// A parameter whose per-example gradients vanish analytically (an attention key bias: softmax
/// ignores a constant shift) has D at rounding level, (2⁻⁵³·n·|g|)² ≈ 1e-30·|g|²: compared with
/// an absolute floor of 1e-20 times the largest D of the model instead of its own scale.
inline constexpr double kFloat64Floor = 1e-20;

/// Runs the engine on the mean of `losses` (ℓ_i of one forward pass over M examples) and checks D
/// against the one-example-at-a-time reference and p.grad against the gradient of the mean.
inline void expect_engine_matches(const ::at::Tensor& losses, const NamedParameters& parameters,
                                  const SquaredGradientOptions& options = {}) {
  const int64_t m = losses.size(0);
  const auto expected = brute_force_squared_gradients(losses, parameters);
  const auto inputs = tensors_of(parameters);
  auto mean_grads = ::torch::autograd::grad({losses.mean()}, inputs, {}, /*retain_graph=*/true,
                                            /*create_graph=*/false, /*allow_unused=*/true);
  for (auto& p : tensors_of(parameters)) p.mutable_grad().reset();
  const auto got = backward_with_squared_gradients(losses.mean(), parameters, m, options);
  double largest = 0.0;
  for (const auto& e : expected) largest = std::max(largest, e.abs().max().item<double>());
  expect_all_close(got, expected, parameters, kFloat64Tolerance, "D", kFloat64Floor * largest);
  std::vector<::at::Tensor> grads;
  for (size_t k = 0; k < inputs.size(); ++k) {
    grads.push_back(inputs[k].grad().defined() ? inputs[k].grad() : ::at::zeros_like(inputs[k]));
    if (!mean_grads[k].defined()) mean_grads[k] = ::at::zeros_like(inputs[k]);
  }
  expect_all_close(grads, mean_grads, parameters, kFloat64Tolerance, "p.grad");
}

}  // namespace blr::torch::testing
