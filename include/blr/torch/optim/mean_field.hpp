// The shared driver of the mean-field BLR optimizers (IVON, VOGN/OGN, Vadam, ...): everything but
// the optimizer's own equations.
//
// Each parameter p holds the mean μ of its coordinates' posterior. Its state is an average u
// (momentum) and a precision-like P that sets the posterior precision  a·P + b  per coordinate
// ((a, b) per group from the optimizer: (λ, 0) for IVON with P = h + δ, (N, 0) for VOGN with
// P = s + δ/N + γ, (N, λp) for Vadam with P = s). Sampling writes θ = μ + ε/√(a·P + b) into p;
// restoring puts μ back and adds the gradient at θ (and, per optimizer, noise⊙gradient or
// gradient²) to running sums; step() turns the averages into the optimizer's update — the
// per-coordinate BLR step of the core (blr/rule/policy.hpp) with the optimizer's estimate of
// (ĝ, Ĥ) in front (blr/torch/optim/gaussian.hpp).
//
// The driver produces, from that one per-coordinate update:
//  * fused CPU passes for contiguous float/double parameters (sampling with its noise generation,
//    restoring, updating: one pass each, parallel over chunks of 16 384 elements, compiled for
//    AVX-512/AVX2/baseline), with a counter-based noise stream per (seed, draw, parameter, chunk)
//    so that results do not depend on the thread count; θ goes into a second buffer that is
//    swapped with μ's storage (Tensor::set_data) while sampled, so μ is never copied;
//  * the same maths as tensor operations everywhere else (CUDA, other dtypes, non-contiguous
//    parameters), with noise from the device's default generator.
// With one training sample per step, restore only remembers the gradient tensor and the update
// reads it (and the noise) directly, saving the pass that would copy them into the sums: the
// gradient is then the one p.grad holds at step(), as for torch optimizers (gradient clipping
// between restore and step takes effect). A second sample before step() sums the remembered one
// first; if it was modified in between (zeroed before the sample), that is refused.
//
// Precision and placement: each parameter keeps its state on its own device, so one optimizer
// takes parameters of several dtypes and devices. Half and bfloat16 parameters get float32
// master weights: μ, u, P (and m₀, p₀) are float32 in the state, the sample θ = μ + noise is
// formed in float32 and rounded into the parameter, gradients are read in float32, and after each
// update the parameter holds μ rounded to its dtype (the tensor-operation path; saved as
// "master" with the state). Updates smaller than the parameter's resolution therefore accumulate.
//
// Gradient accumulation: inside one sample, any number of forward/backward passes may add to
// p.grad (micro-batches, each loss scaled by its share of the batch); restore reads the sum, so k
// micro-batches make the step of the whole batch. add_squared_gradients may likewise be called
// once per micro-batch, each with its share of the batch's mean, and the calls of one sample add.
//
// A general prior (set_prior, set_prior_from_posterior; optimizers whose prior enters only through
// the core's prior stages, IVON): N(m₀, diag(1/(λ·p₀))) per coordinate instead of N(0, 1/(λδ)),
// with m₀ and p₀ held per parameter next to u and P. The update then runs on a
// stage::PriorCoordinate (blr/stage/prior.hpp), whose prior stages read δ = p₀ and m₀ from it; the
// default (no prior set) runs the step as before, bitwise. Continual learning: after task t,
// set_prior_from_posterior() makes q_t = N(μ, 1/(λP)) the prior of task t + 1 (m₀ = μ, p₀ = P).
//
// Saved state (save/load): format version, optimizer name, step counter t, draw counter, the
// learning rate of every group, and u and P of every parameter (version 2), and m₀ and p₀ of every
// parameter that has its own prior (version 3, written only then). Saving needs a step boundary.
// Version-1 archives (which held the optimizer's own curvature h or s) are converted on load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/optim/capabilities.hpp"
#include "blr/torch/optim/gaussian_posterior.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

/// What restore collects per sample besides the gradient (VOGN: squared gradients come from
/// outside, through add_squared_gradients).
enum class Statistic { kNone, kNoiseTimesGradient, kSquaredGradient, kExternalSquared };

/// The posterior precision of a param group as a·P + b of the optimizer's state P.
struct Affine {
  double a = 1.0, b = 0.0;
};

class MeanFieldOptimizer : public VariationalOptimizer,
                           public GaussianPosterior,
                           public DiagonalGaussianPosterior,
                           public DataParallelStatistics,
                           public ParamGroupOptionsKept,
                           public FusedKernelsSwitch {
 public:
  using VariationalOptimizer::VariationalOptimizer;

  void sample_parameters(bool train) override;
  /// Test and parity hook: samples with the given standard-normal draws ε (one tensor per
  /// parameter, same shapes, parameter order) instead of the internal generator, so that
  /// θ = μ + ε/√(a·P + b) exactly. Everything else is as in sample_parameters(train).
  void sample_parameters(bool train, const std::vector<::at::Tensor>& standard_normal);
  void sample_given_noise(bool train, const std::vector<::at::Tensor>& standard_normal) override {
    sample_parameters(train, standard_normal);
  }
  void restore_parameters() override;
  void discard_sample() override;
  bool sampled() const override { return sampled_; }
  std::vector<::at::Tensor> posterior_variance() override;
  /// GaussianPosterior: σ², its own precision λ(h + δ) per coordinate, "NAME posterior".
  std::vector<::at::Tensor> marginal_variance() override { return posterior_variance(); }
  std::vector<::at::Tensor> marginal_precision() override { return posterior_precision(); }
  std::string posterior_name() const override { return name() + " posterior"; }
  bool needs_squared_gradients() const override {
    return statistic() == Statistic::kExternalSquared;
  }
  void add_squared_gradients(const std::vector<::at::Tensor>& squared) override;

  /// One update from the samples collected since the last step. With a closure, runs
  /// training_samples() samples first, each calling the closure (which must zero the
  /// gradients, run forward and backward, and return the loss) inside SampledParameters, and
  /// returns the mean loss.
  ::at::Tensor step(LossClosure closure = nullptr) override;

  /// Short name for messages and archives ("IVON").
  virtual std::string name() const = 0;
  /// Number of updates made so far (t).
  int64_t step_count() const override { return step_; }
  /// The optimizer's curvature in its own units, parameter order (IVON's h, VOGN's s, Vadam's s).
  std::vector<::at::Tensor> curvature() override;
  /// The curvature every coordinate of param group `group` starts from (IVON's h₀, VOGN's s₀).
  double initial_curvature(size_t group) const override {
    return initial_precision(group) - curvature_offset(group);
  }
  /// The posterior mean μ of every parameter, parameter order, in the state's precision (the
  /// float32 master weights of half/bfloat16 parameters; the parameter itself otherwise).
  std::vector<::at::Tensor> posterior_mean() override;
  /// The posterior precision a·P + b of every parameter, parameter order.
  std::vector<::at::Tensor> posterior_precision() override;
  /// The gradient average u (momentum) of every parameter, parameter order.
  std::vector<::at::Tensor> momentum() override;

  /// True when this optimizer takes a general prior (set_prior): its prior enters only through
  /// the core's prior stages with δ per example (IVON), not through its posterior map or damping.
  bool supports_prior() const override { return false; }
  /// Replaces the prior N(0, 1/(λδ)) by N(m₀, diag(1/(λ·p₀))): `means` m₀ and `precisions` p₀
  /// (per example, as δ; finite, ≥ 0), one tensor per parameter in parameter order with its
  /// shape. The state P is kept, except before the first step, where P = h₀ + p₀ (the initial
  /// candidate then includes the prior as it does δ). Not while a sample is held.
  void set_prior(const std::vector<::at::Tensor>& means,
                 const std::vector<::at::Tensor>& precisions) override;
  /// The current posterior as the prior: m₀ = μ, p₀ = P (so the prior precision λ·p₀ is the
  /// posterior precision); the "posterior of task t is the prior of task t + 1" of continual
  /// learning.
  void set_prior_from_posterior() override;
  /// Back to the options' prior N(0, 1/(λδ)).
  void clear_prior() override;
  /// True when some parameter has a prior of its own.
  bool has_prior() const override;
  /// m₀ and p₀ of every parameter, parameter order (without a prior of its own: 0 and δ as
  /// tensors, i.e. the options' prior).
  std::vector<::at::Tensor> prior_means();
  std::vector<::at::Tensor> prior_precisions();
  /// Adds a param group, keeping its own options object (LibTorch 2.x would replace the options
  /// of a custom optimizer's group by the defaults in Optimizer::add_param_group, which is not
  /// virtual: call this one, on the optimizer's own type).
  void add_param_group(const ::torch::optim::OptimizerParamGroup& param_group);
  void add_param_group_keeping_options(const ::torch::optim::OptimizerParamGroup& group) override {
    add_param_group(group);
  }
  /// The learning rate param group `group` had when it joined the optimizer (construction or
  /// add_param_group): the η₀ against which a rule scales its options under a learning-rate
  /// schedule (AdaBayes, adabayes.hpp). Setting a group's lr or its options later leaves it.
  double initial_lr(size_t group) const;

  /// Data parallel (blr/torch/distributed/): this process is rank `rank` of `world_size`, each
  /// taking mc_samples draws per step. Its training sample s of a step is drawn from the counter
  /// stream that sample rank·mc_samples + s has in one process with world_size·mc_samples samples
  /// (fused CPU path; the tensor path draws from the device generator), so that the ranks
  /// together draw what that one process draws. Call before the first sample.
  void set_noise_shard(int rank, int world_size) override;
  /// Data parallel: sums the gradients and statistics collected since the last step over the
  /// ranks, this rank's weighted by `weight` (distributed/communicator.hpp), and counts the
  /// samples of all ranks, so that step() updates as one process holding every rank's samples.
  /// Call after the step's samples, before step(); every rank calls it.
  void reduce_statistics(distributed::Communicator& communicator, double weight) override;

  /// Test hook: false forces the tensor-operation path (the non-CPU code) on CPU too.
  void set_fused_kernels(bool fused) override { fused_ = fused; }

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

  // ---- for the optimizers built on the driver (gaussian.hpp) ----------------------------------
  /// Per-parameter state. `grad_sum`, `stat_sum`, `squared_sum` sum over the samples of a step;
  /// `noise` holds ε/√(a·P + b) of the current sample where the statistic needs it.
  struct Slot {
    ::at::Tensor mean, noise, grad_sum, stat_sum, squared_sum, average, precision;
    ::at::Tensor prior_mean, prior_precision;  ///< m₀, p₀ (undefined: the options' prior)
    ::at::Tensor master;  ///< half/bfloat16 parameters: μ in float32 (the parameter holds it rounded)
    ::at::Tensor theta;          ///< fused path: the buffer not currently held by the parameter
    bool swapped = false;        ///< fused path: the parameter holds θ's buffer, `mean` holds μ
    ::at::Tensor pending_grad;   ///< one sample: the gradient the update reads directly
    int64_t pending_version = 0; ///< version counter of pending_grad when it was remembered
  };
  /// What the update of one parameter reads: the sums over `samples` samples, or with `direct`
  /// the gradient (`grad`) and the noise of the only sample.
  struct UpdateInput {
    const ::at::Tensor* grad;     ///< Σ gradients, or the gradient itself when direct
    const ::at::Tensor* stat;     ///< Σ statistic, or the noise when direct (noise⊙g)
    const ::at::Tensor* squared;  ///< Σ squared gradients given from outside (VOGN)
    int64_t samples = 1;
    bool direct = false;
  };

 protected:

  virtual Statistic statistic() const = 0;
  /// False for OGN: no weight noise, gradients at μ.
  virtual bool perturbs() const { return true; }
  virtual uint64_t seed() const = 0;
  virtual Affine posterior(size_t group) const = 0;
  virtual double initial_precision(size_t group) const = 0;
  /// The optimizer's own curvature from P (curvature()), and P from it (loading version 1).
  virtual double curvature_offset(size_t group) const = 0;
  /// Checks the options of every group (called at construction and by step()).
  virtual void validate() const = 0;
  /// The update of one parameter after t = step_count() has been incremented; returns false when
  /// a new mean is not finite.
  virtual bool update(size_t group, ::at::Tensor& param, Slot& slot, const UpdateInput& in,
                      bool fused) = 0;

  /// Puts back the options objects the groups were constructed with (see add_param_group).
  void keep_group_options(const std::vector<::torch::optim::OptimizerParamGroup>& param_groups);

  /// True when the fused CPU kernels apply to `param`.
  bool fused_for(const ::at::Tensor& param) const;

 private:
  Slot& slot(size_t group, size_t index);
  void ensure_slots();
  void sample(bool train, const std::vector<::at::Tensor>* standard_normal);
  void restore(bool collect);
  /// Sums a remembered single-sample gradient (and noise⊙gradient) into grad_sum/stat_sum.
  void materialise_pending();
  size_t parameter_count() const;

  /// Appends the current lr of every group not yet recorded (initial_lr).
  void record_initial_lrs();

  std::vector<std::vector<Slot>> slots_;
  std::vector<double> initial_lrs_;  ///< per group, initial_lr()
  int64_t step_ = 0;
  uint64_t draws_ = 0;
  int64_t samples_ = 0;          ///< train samples collected since the last step
  int64_t squared_samples_ = 0;  ///< add_squared_gradients calls since the last step
  bool sampled_ = false;
  bool train_sample_ = false;
  bool perturbed_ = false;       ///< the current sample moved the parameters away from μ
  bool squared_given_ = false;  ///< add_squared_gradients called in the current sample
  bool fused_ = true;
  int noise_rank_ = 0, noise_world_ = 1;  ///< set_noise_shard
};

}  // namespace blr::torch
