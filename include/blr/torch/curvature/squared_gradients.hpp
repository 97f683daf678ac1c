// Exact per-example squared gradients of any LibTorch model, read from the autograd graph: the
// curvature statistic of VOGN/OGN (Osawa et al. 2019, §3; research/algorithms.md §3.3),
//
//   D = (1/M) Σ_i (∇_θ ℓ_i)²      (elementwise, one tensor per parameter; l̄ = (1/M) Σ_i ℓ_i),
//
// for a torch::nn::Module, a torch::jit::Module loaded from TorchScript, or any code that builds
// the mean minibatch loss l̄ with autograd. No hooks on modules are needed (LibTorch's C++
// modules have none): before running backward(), the engine walks l̄'s graph from
// loss.grad_fn(), finds the nodes that consume each parameter through its AccumulateGrad node
// (also through a transpose, as Linear's weight, and the broadcast matmul applies to inputs of
// rank ≥ 3), recognises them (AddmmBackward0, MmBackward0, BmmBackward0, ConvolutionBackward0,
// EmbeddingBackward0, NativeLayerNormBackward0, AddBackward0, SubBackward0, MulBackward0), keeps
// their saved inputs and captures the gradient flowing into them with a pre-hook. After backward()
// it turns each (saved input, output gradient) pair into per-example gradients with the formulas of
// per_example.hpp:
//
//   - a parameter with one use whose examples own one row each (Linear on M×in inputs, an
//     Embedding) takes a fast formula that materialises no per-example gradient
//     (Linear: D_W = M (e²)ᵀ(a²));
//   - otherwise (several rows per example: sequences, convolutions; a parameter used more than
//     once: weight tying, a layer applied twice) the per-example gradients of all its uses are
//     summed, then squared, in chunks of examples whose size `chunk_bytes` bounds.
//
// Supported uses: Linear (inputs of any rank), Conv1d and Conv2d (stride, padding, dilation,
// groups; not transposed), Embedding (not scale_grad_by_freq), LayerNorm (weight and bias), and a
// parameter added, subtracted or multiplied with broadcasting (a bias, a learned positional
// table, a learned scale such as RMSNorm's weight). A parameter used any other way is refused with
// a blr::Error naming it and the operation; so is a graph with a batch-coupling operation (batch
// norm in training mode), where per-example gradients do not exist. Parameters the loss does not
// depend on get D = 0.
//
// Requirements: `mean_loss` is the MEAN over the M examples of their losses, and example i's loss
// depends on example i's rows only (no statistics over the batch; batch norm in training mode is
// detected and refused, other mixing, e.g. a mean over the batch dimension, is not); every
// supported layer sees its examples along the leading dimension (batch first: a layer input
// M×...×in, or a flattened (M·k)×in whose rows [i·k, (i+1)·k) belong to example i); the engine
// checks what the graph shows (leading sizes, a transpose moving the batch dimension) but cannot
// tell a sequence-first layout whose sequence length happens to equal M. TorchScript modules must
// run their forward passes unoptimised (blr/torch/nn/script_module.hpp), else the executor fuses
// ops into differentiable graphs that hide the layers; such a graph is refused with that advice.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blr::torch {

/// Parameters with their module paths, e.g. `module->named_parameters().pairs()` or
/// `named_parameters(script_module)` (blr/torch/nn/script_module.hpp).
using NamedParameters = std::vector<std::pair<std::string, ::at::Tensor>>;

struct SquaredGradientOptions {
  /// Bound on the memory of the per-example gradients materialised at once (bytes); a chunk holds
  /// at least one example.
  int64_t chunk_bytes = int64_t{64} << 20;
  void validate() const;
};

/// Runs mean_loss.backward() (so p.grad holds the usual gradient, accumulated as by backward())
/// and returns D = (1/M) Σ_i (∇ℓ_i)² for every parameter, in the order given, exactly.
/// `examples` is M. Throws blr::Error when a parameter is used by an operation without an exact
/// per-example formula or the batch layout cannot be read: before backward() runs, except for a
/// parameter broadcast against an output whose leading dimension is not M (only the output
/// gradient shows it; p.grad then holds the gradient already).
std::vector<::at::Tensor> backward_with_squared_gradients(
    const ::at::Tensor& mean_loss, const NamedParameters& parameters, int64_t examples,
    const SquaredGradientOptions& options = {});

/// Per-example weighted squared gradient norms from the same graph reading:
///
///   r_i = Σ_j w_j (∂s_i/∂θ_j)²    for `total` = Σ_i s_i, a SUM of one scalar per example,
///
/// one entry per example (double). With s_i = f_ik (example i's logit of class k) and w = σ²,
/// r_i is the prediction variance v_ik = [J_i Σ J_iᵀ]_kk of a diagonal Gaussian posterior
/// (sensitivity.hpp). A Linear layer with one row per example materialises nothing: its
/// per-example gradient is δ_i a_iᵀ, so r_i gets (δ_i²)ᵀ W (a_i²); other uses go through their
/// per-example gradients in chunks. The gradients are taken with autograd::grad, so p.grad is not
/// touched; `retain_graph` keeps the graph for another call (one per class). The same
/// requirements and refusals as backward_with_squared_gradients.
///
/// `bases` (empty, or one per parameter): where entry j is defined, parameter j's Σ is not
/// diagonal but diagonal in a Kronecker eigenbasis, Σ_j = (U_out ⊗ U_in) diag(vec w_j)
/// (U_out ⊗ U_in)ᵀ on row-major vec (optim/kronecker_gaussian.hpp), and r_i gets
/// Σ w_j ⊙ (U_outᵀ G̃_i U_in)², G̃_i the per-example gradient viewed out×in: the exact
/// [J_i Σ J_iᵀ]_kk of a Kronecker-factored Laplace posterior. A Linear weight with one row per
/// example rotates its rank-one G̃_i = e_i a_iᵀ factor by factor (nothing materialised); other
/// uses rotate their per-example gradients in chunks.
struct GradientBasis {
  ::at::Tensor output, input;  ///< U_out (out×out), U_in (in×in)
  bool defined() const { return output.defined() && input.defined(); }
};
::at::Tensor weighted_squared_gradient_norms(const ::at::Tensor& total,
                                             const NamedParameters& parameters,
                                             const std::vector<::at::Tensor>& weights,
                                             int64_t examples, bool retain_graph = false,
                                             const SquaredGradientOptions& options = {},
                                             const std::vector<GradientBasis>& bases = {});

}  // namespace blr::torch
