// Kronecker factors of the per-layer Gauss–Newton (empirical Fisher) of Linear and Conv2d
// weights: K-FAC (Martens & Grosse 2015) and KFC for convolutions (Grosse & Martens 2016), the
// curvature of the Kronecker-factored BLR optimizer (kfac.hpp) and read from the autograd graph by
// the same engine as the per-example squared gradients (squared_gradients.hpp).
//
// With the mean minibatch loss l̄ = (1/M) Σ_i ℓ_i, a Linear layer s_i = W a_i (+ b) and the
// per-example output gradient g_i = ∂ℓ_i/∂s_i = M·∂l̄/∂s_i, example i's weight gradient is
// ∇_W ℓ_i = g_i a_iᵀ, so (column-stacking vec)
//
//   vec(∇_W ℓ_i) vec(∇_W ℓ_i)ᵀ = (a_i a_iᵀ) ⊗ (g_i g_iᵀ)                     (exact, one example)
//   (1/M) Σ_i (a_i a_iᵀ) ⊗ (g_i g_iᵀ)  ≈  A ⊗ G,  A = (1/M) Σ_i a_i a_iᵀ,  G = (1/M) Σ_i g_i g_iᵀ
//
// (the K-FAC approximation: E[aaᵀ ⊗ ggᵀ] ≈ E[aaᵀ] ⊗ E[ggᵀ]). A is in×in (input side), G out×out
// (output side). For a Conv2d weight (O×C×kh×kw, viewed O×(C·kh·kw)) with unfolded input patches
// a_{i,l} (C·kh·kw, channel-major as im2col) and output gradients g_{i,l} at the L output
// positions l (KFC, eq. for Ω and Γ under spatial homogeneity and spatially uncorrelated
// derivatives):
//
//   A = (1/M) Σ_i Σ_l a_{i,l} a_{i,l}ᵀ,   G = (1/(M·L)) Σ_i Σ_l g_{i,l} g_{i,l}ᵀ
//
// which for L = 1 (a kernel covering the input) is the Linear case. The diagonal of A ⊗ G is
// therefore the K-FAC counterpart of VOGN's D = (1/M) Σ_i (∇ℓ_i)²; a 1×1 Linear layer with one
// example per batch has A·G = D exactly.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

#include "blr/torch/curvature/per_example.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"

namespace blr::torch {

struct KroneckerFactors {
  ::at::Tensor input;   ///< A, in×in (Conv: (C·kh·kw)×(C·kh·kw))
  ::at::Tensor output;  ///< G, out×out
  bool defined() const { return input.defined() && output.defined(); }
};

/// A Linear weight's factors from its input (M×in, one row per example) and the gradient of the
/// MEAN minibatch loss w.r.t. its output (M×out).
KroneckerFactors linear_kronecker_factors(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output);

/// A Conv2d weight's factors (groups = 1) from its input (M×C×H×W), the gradient of the MEAN loss
/// w.r.t. its output (M×O×H'×W'), the weight's shape and the geometry.
KroneckerFactors conv2d_kronecker_factors(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output,
                                          ::at::IntArrayRef weight_shape,
                                          const ConvGeometry& geometry);

/// The curvature statistic of one parameter: Kronecker factors for a Linear weight with one row
/// per example or an ungrouped Conv2d weight used once; otherwise (biases, norms, embeddings,
/// shared or sequence weights) the diagonal D = (1/M) Σ_i (∇ℓ_i)² of squared_gradients.hpp.
struct ParameterCurvature {
  KroneckerFactors factors;  ///< defined for a Kronecker-factored weight
  ::at::Tensor diagonal;     ///< defined otherwise
  bool kronecker() const { return factors.defined(); }
};

/// What the trainer feeds an optimizer with Kronecker-factored curvature (kfac.hpp): inside every
/// training sample, after backward_with_kronecker_factors(), each parameter's statistic (a
/// separate interface, found by dynamic_cast, so that the other optimizers are untouched).
class KroneckerCurvatureInput {
 public:
  virtual ~KroneckerCurvatureInput() = default;
  virtual void add_curvature(const std::vector<ParameterCurvature>& curvature) = 0;
  /// True when the current step takes curvature (add_curvature in each of its samples); false on
  /// the steps between two curvature updates, whose samples need only a plain backward().
  virtual bool wants_curvature() const { return true; }
};

/// Runs mean_loss.backward() (p.grad as by backward()) and returns each parameter's curvature
/// statistic, in the order given; the same requirements and refusals as
/// backward_with_squared_gradients.
std::vector<ParameterCurvature> backward_with_kronecker_factors(
    const ::at::Tensor& mean_loss, const NamedParameters& parameters, int64_t examples,
    const SquaredGradientOptions& options = {});

}  // namespace blr::torch
