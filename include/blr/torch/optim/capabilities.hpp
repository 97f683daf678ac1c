// Capabilities, not types: what the tools outside the optimizers (the trainer, data parallel,
// continual learning, the diagnostics, the Python package) may ask of an optimizer. Each is a small
// interface; an optimizer implements the ones it has, and a tool asks the registry
// (registry.hpp: capability<C>(optimizer), optimizer_names_with(&OptimizerEntry::flag)) instead of
// naming a type. Messages that say which optimizers would do list the registry's entries that have
// the capability, so they never go stale.
//
//   GaussianPosterior         q(θ) = N(μ, Σ): marginal variances, covariance blocks
//                             (gaussian_posterior.hpp)
//   KroneckerCurvatureInput   takes Kronecker factors A, G from the backward pass
//                             (kronecker_factors.hpp)
//   DiagonalGaussianPosterior a mean-field state μ, u, P per coordinate, with its own prior
//                             N(m₀, diag(1/(λp₀))) and float32 master weights (below)
//   DataParallelStatistics    all-reduces its step's statistics and shards its noise (below)
//   ParamGroupOptionsKept     adds a param group keeping the group's own options and checks it
//   FusedKernelsSwitch        a test hook that turns its fused CPU passes off
//
// Implemented by the mean-field optimizers (mean_field.hpp: IVON, VOGN, OGN, Vadam, AdaBayes) for
// the diagonal state and data parallel, and by every optimizer with fused passes for the switch.
#pragma once

#include <ATen/Tensor.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <vector>

namespace blr::torch {

namespace distributed {
class Communicator;
}

/// A diagonal Gaussian posterior kept as a per-coordinate state: the mean μ (the parameters, or
/// their float32 master weights for half/bfloat16 parameters), the gradient average u and the
/// precision-like P whose posterior precision is a·P + b (mean_field.hpp), with a prior of its own.
class DiagonalGaussianPosterior {
 public:
  virtual ~DiagonalGaussianPosterior() = default;
  /// Number of updates made so far (t).
  virtual int64_t step_count() const = 0;
  /// The optimizer's curvature in its own units, parameter order (IVON's h, VOGN's s, Vadam's s).
  virtual std::vector<::at::Tensor> curvature() = 0;
  /// The curvature every coordinate of param group `group` starts from (IVON's h₀, VOGN's s₀).
  virtual double initial_curvature(size_t group) const = 0;
  /// μ per parameter, parameter order, in the state's precision.
  virtual std::vector<::at::Tensor> posterior_mean() = 0;
  /// The posterior precision a·P + b per parameter, parameter order.
  virtual std::vector<::at::Tensor> posterior_precision() = 0;
  /// The gradient average u per parameter, parameter order.
  virtual std::vector<::at::Tensor> momentum() = 0;
  /// True when a general prior (set_prior) enters the update (IVON).
  virtual bool supports_prior() const = 0;
  /// The prior N(m₀, diag(1/(λ·p₀))) per coordinate (mean_field.hpp's set_prior).
  virtual void set_prior(const std::vector<::at::Tensor>& means,
                         const std::vector<::at::Tensor>& precisions) = 0;
  /// The current posterior as the prior (continual learning: m₀ = μ, p₀ = P).
  virtual void set_prior_from_posterior() = 0;
  /// Back to the options' prior N(0, 1/(λδ)).
  virtual void clear_prior() = 0;
  /// True when some parameter has a prior of its own.
  virtual bool has_prior() const = 0;
};

/// Data parallel (distributed/data_parallel.hpp): the optimizer's step reads sums over its Monte
/// Carlo samples, which the ranks all-reduce before step(), and its noise can be drawn as one
/// process holding every rank's samples would draw it.
class DataParallelStatistics {
 public:
  virtual ~DataParallelStatistics() = default;
  /// This process is rank `rank` of `world_size`; call before the first sample.
  virtual void set_noise_shard(int rank, int world_size) = 0;
  /// Sums the statistics collected since the last step over the ranks, this rank's weighted by
  /// `weight`; every rank calls it after its samples and before step().
  virtual void reduce_statistics(distributed::Communicator& communicator, double weight) = 0;
};

/// Adds a param group keeping the group's own options object and checking it, with the
/// optimizer's per-group bookkeeping (LibTorch's Optimizer::add_param_group is not virtual, and
/// LibTorch 2.x replaces a custom optimizer's group options by the defaults there).
class ParamGroupOptionsKept {
 public:
  virtual ~ParamGroupOptionsKept() = default;
  virtual void add_param_group_keeping_options(
      const ::torch::optim::OptimizerParamGroup& group) = 0;
};

/// Test hook of the optimizers with fused CPU passes: false forces the tensor-operation path (the
/// non-CPU code) on the CPU too.
class FusedKernelsSwitch {
 public:
  virtual ~FusedKernelsSwitch() = default;
  virtual void set_fused_kernels(bool fused) = 0;
};

}  // namespace blr::torch
