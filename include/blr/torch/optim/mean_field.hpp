// Shared machinery of the diagonal-Gaussian BLR optimizers (IVON, VOGN/OGN, Vadam).
//
// Each parameter p holds the mean μ. Its state is a momentum m and a curvature c (IVON's h,
// VOGN's s, Vadam's s) that sets the posterior precision  π = a·c + b  per coordinate, with
// (a, b) = (λ, λδ) for IVON, (N, N(δ̃ + damping)) for VOGN and (N, λp) for Vadam, so that
// σ² = 1/π. Sampling writes θ = μ + σ⊙ε into p; restoring puts μ back and adds the gradient
// at θ (and, per optimizer, noise⊙gradient or gradient²) to running sums; step() turns the
// averages into the optimizer's update.
//
// On CPU, for contiguous float/double parameters, sampling (noise generation included),
// restoring and each optimizer's update are single fused passes over the buffers, parallel over
// chunks of 16 384 elements with a counter-based noise stream per (seed, draw, parameter, chunk):
// results do not depend on the thread count. θ is written into a second buffer that is swapped
// with μ's storage (Tensor::set_data) while sampled, so μ is never copied. IVON with one Monte
// Carlo sample per step (on every device) reads the gradient and the noise in its update
// directly (restore only remembers the gradient tensor), saving the pass that would copy them
// into the sums: the gradient is then the one p.grad holds at step(), as for torch optimizers
// (gradient clipping between restore and step takes effect). Should a second sample be drawn before step(), the
// remembered gradient is summed first; if it was modified in between (e.g. zeroed before the
// sample), that is refused with an error rather than summed wrongly. Elsewhere (CUDA, other dtypes, non-contiguous
// parameters) the same maths runs as tensor operations with noise from the device's default
// generator.
//
// Saved state (save/load): format version, optimizer name, step counter t, draw counter, the
// learning rate of every group and m and c of every parameter. Saving needs a step boundary (no
// sample pending).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

class MeanFieldOptimizer : public VariationalOptimizer {
 public:
  using VariationalOptimizer::VariationalOptimizer;

  void sample_parameters(bool train) override;
  /// Test and parity hook: samples with the given standard-normal draws ε (one tensor per
  /// parameter, same shapes, parameter order) instead of the internal generator, so that
  /// θ = μ + ε/sqrt(π) exactly. Everything else is as in sample_parameters(train).
  void sample_parameters(bool train, const std::vector<::at::Tensor>& standard_normal);
  void restore_parameters() override;
  void discard_sample() override;
  bool sampled() const override { return sampled_; }
  std::vector<::at::Tensor> posterior_variance() override;
  bool needs_squared_gradients() const override {
    return statistic() == Statistic::kExternalSquared;
  }
  void add_squared_gradients(const std::vector<::at::Tensor>& squared) override;

  /// One update from the samples collected since the last step. With a closure, runs
  /// training_samples() samples first, each calling the closure (which must zero the
  /// gradients, run forward and backward, and return the loss) inside SampledParameters, and
  /// returns the mean loss.
  ::at::Tensor step(LossClosure closure = nullptr) override;

  /// Number of updates made so far (t).
  int64_t step_count() const { return step_; }
  /// Curvature c of every parameter (IVON's h, VOGN's s, Vadam's s), parameter order.
  std::vector<::at::Tensor> curvature();
  /// Momentum m of every parameter, parameter order.
  std::vector<::at::Tensor> momentum();
  /// Adds a param group, keeping its own options object. (Recent LibTorch versions replace the
  /// options of a custom optimizer's group by the defaults in Optimizer::add_param_group, which is
  /// not virtual: call this one, on the optimizer's own type.)
  void add_param_group(const ::torch::optim::OptimizerParamGroup& param_group);

  /// Test hook: false forces the tensor-operation path (the non-CPU code) on CPU too.
  void set_fused_kernels(bool fused) { fused_ = fused; }

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 protected:
  /// Per-parameter state. `grad_sum`, `stat_sum`, `squared_sum` sum over the samples of a step;
  /// `noise` holds σ⊙ε of the current sample where the statistic needs it.
  struct Slot {
    ::at::Tensor mean, noise, grad_sum, stat_sum, squared_sum, momentum, curvature;
    ::at::Tensor theta;          ///< fused path: the buffer not currently held by the parameter
    bool swapped = false;        ///< fused path: the parameter holds θ's buffer, `mean` holds μ
    ::at::Tensor pending_grad;   ///< IVON, one sample: the gradient its update reads directly
    int64_t pending_version = 0; ///< version counter of pending_grad when it was remembered
  };
  /// What restore collects besides the gradient (VOGN: squared gradients come from outside).
  enum class Statistic { kNone, kNoiseTimesGradient, kSquaredGradient, kExternalSquared };
  /// The posterior precision of group g is a·c + b.
  struct Precision {
    double a = 1.0, b = 0.0;
  };

  /// Short name for messages and archives ("IVON").
  virtual std::string name() const = 0;
  virtual Statistic statistic() const = 0;
  /// False for OGN: no weight noise, gradients at μ.
  virtual bool perturbs() const { return true; }
  virtual uint64_t seed() const = 0;
  virtual Precision precision(size_t group) const = 0;
  virtual double initial_curvature(size_t group) const = 0;
  /// Checks the options of every group (called at construction and by step()).
  virtual void validate() const = 0;
  /// The update of one parameter after t = step_count() has been incremented. `samples`: number
  /// of samples collected; the averages are grad_sum/samples, stat_sum/samples,
  /// squared_sum/samples.
  virtual void update(size_t group, size_t index, ::at::Tensor& param, Slot& slot, int64_t samples,
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

  std::vector<std::vector<Slot>> slots_;
  int64_t step_ = 0;
  uint64_t draws_ = 0;
  int64_t samples_ = 0;          ///< train samples collected since the last step
  int64_t squared_samples_ = 0;  ///< add_squared_gradients calls since the last step
  bool sampled_ = false;
  bool train_sample_ = false;
  bool squared_given_ = false;  ///< add_squared_gradients called in the current sample
  bool fused_ = true;
};

}  // namespace blr::torch
