// SAM and Bayesian SAM for LibTorch (Foret et al., ICLR 2021; Möllenhoff & Khan, ICLR 2023, "SAM
// as an optimal relaxation of Bayes"; research/algorithms.md §8.2). Both take two gradients per
// step on the same minibatch, expressed as two training samples of the sampling protocol
// (variational.hpp), so the trainer, the guard and checkpoints drive them unchanged:
//
//   sample 1   θ₁ = first point          g  = ∇ℓ̄(θ₁)
//   sample 2   θ₂ = μ + ascent(g)        g̃ = ∇ℓ̄(θ₂)
//   step()     the update from g and g̃
//
// SAM (a point estimate):    θ₁ = μ,  θ₂ = μ + ρ·g/‖g‖₂ (‖·‖ over all parameters),
//                            m ← β·m + g̃ + δ·μ,  μ ← μ − α·m            (SGD with heavy-ball momentum)
// bSAM (posterior N(μ, 1/(N·s))):
//                            θ₁ = μ + ε/√(N·s),  θ₂ = μ + ρ·g/s,  c = √s·|g|,
//                            m ← β₁·m + (1 − β₁)(g̃ + δ·μ),  μ ← μ − α·m/s,
//                            s ← β₂·s + (1 − β₂)(c + damping + δ),   δ = prior_precision/N
// (the reference's m-sharpness split is 1: one sub-batch, the whole minibatch; its dafactor is
// folded into ess). bSAM's predictive draws θ = μ + ε/√(N·s).
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/optim/capabilities.hpp"
#include "blr/torch/optim/options.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

/// The two-gradient protocol of SAM and bSAM: keeps μ aside while a point is sampled, collects
/// the gradient of each of the two training samples and calls the optimizer's update at step().
class TwoPointOptimizer : public VariationalOptimizer, public FusedKernelsSwitch {
 public:
  using VariationalOptimizer::VariationalOptimizer;

  /// Training: the first point, then the ascent point; prediction: a posterior draw (μ itself
  /// without a posterior).
  void sample_parameters(bool train) override;
  void restore_parameters() override { restore(true); }
  void discard_sample() override { restore(false); }
  bool sampled() const override { return sampled_; }
  int training_samples() const override { return 2; }
  ::at::Tensor step(LossClosure closure = nullptr) override;

  virtual std::string name() const = 0;
  int64_t step_count() const { return step_; }

  /// Fused CPU passes on (the default) or tensor operations everywhere (tests compare the two).
  void set_fused_kernels(bool fused) override { fused_ = fused; }

  /// Step counter and each parameter's m (and bSAM's s); saving needs a step boundary.
  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 protected:
  struct Slot {
    ::at::Tensor mean;     ///< μ while the parameter holds a sample (the parameter's own buffer)
    ::at::Tensor theta;    ///< the spare buffer a sample is written into, then swapped in
    ::at::Tensor first_grad, second_grad;  ///< g and g̃ of this step (buffers kept between steps)
    ::at::Tensor average, precision;       ///< the optimizer's state (m; bSAM's s)
    bool swapped = false;  ///< the parameter holds `theta`'s buffer and `mean` holds μ's
  };
  /// Writes θ₁ of a parameter into `out` (μ is `s.mean`; `index` counts parameters across
  /// groups); false when θ₁ is μ itself (nothing written).
  virtual bool first_point(size_t group, size_t index, Slot& s, ::at::Tensor& out) = 0;
  /// Called once before the ascent points are made (SAM: the global gradient norm).
  virtual void prepare_ascent() {}
  virtual void ascent_point(size_t group, Slot& s, ::at::Tensor& out) = 0;
  /// A predictive draw into `out`; false when the prediction is at μ (no posterior).
  virtual bool posterior_draw(size_t group, size_t index, Slot& s, ::at::Tensor& out) {
    (void)group, (void)index, (void)s, (void)out;
    return false;
  }
  /// The update of one parameter from s.first_grad, s.second_grad (t = step_count()); false
  /// when it wrote a non-finite value.
  virtual bool update(size_t group, ::at::Tensor& param, Slot& s) = 0;
  virtual void validate() const = 0;
  virtual void init_slot(size_t group, const ::at::Tensor& param, Slot& s) = 0;

  /// Noise draws so far: the counter of the fused passes' noise streams (saved with the state).
  uint64_t draw_count() const { return draws_; }
  /// True when the fused CPU passes apply to `t` (contiguous float/double on the CPU).
  bool fused_for(const ::at::Tensor& t) const;

  std::vector<std::vector<Slot>>& slots() { return slots_; }
  void ensure_slots();

 private:
  void restore(bool collect);

  std::vector<std::vector<Slot>> slots_;
  int64_t step_ = 0;
  uint64_t draws_ = 0;
  bool fused_ = true;
  int collected_ = 0;  ///< gradients collected since the last step (0, 1, 2)
  bool sampled_ = false;
  bool train_sample_ = false;
};

struct SamOptions : OptimizerOptionsFor<SamOptions> {
  double lr = 0.03;           ///< α
  double momentum = 0.9;      ///< β (heavy ball)
  double weight_decay = 5e-4;  ///< δ (L2, inside the momentum)
  double rho = 0.05;          ///< ρ, the radius of the ascent step

  static const OptionTable<SamOptions>& table();
  void validate() const { validate_options(*this); }
};

class Sam : public TwoPointOptimizer {
 public:
  using Options = SamOptions;
  Sam(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  Sam(std::vector<::at::Tensor> params, Options defaults);
  const Options& options() const { return static_cast<const Options&>(defaults()); }
  const Options& options(size_t group) const;
  std::string name() const override { return "SAM"; }
  bool has_posterior() const override { return false; }
  std::vector<::at::Tensor> posterior_variance() override { return {}; }

 protected:
  bool first_point(size_t group, size_t index, Slot& s, ::at::Tensor& out) override;
  void prepare_ascent() override;
  void ascent_point(size_t group, Slot& s, ::at::Tensor& out) override;
  bool update(size_t group, ::at::Tensor& param, Slot& s) override;
  void validate() const override;
  void init_slot(size_t group, const ::at::Tensor& param, Slot& s) override;

 private:
  double inverse_norm_ = 0.0;  ///< 1/‖g‖₂ of the first gradient (0 when g = 0)
};

struct BsamOptions : OptimizerOptionsFor<BsamOptions> {
  double lr = 0.5;                ///< α
  double ess = 0.0;               ///< N (training-set size × data-augmentation factor)
  double beta1 = 0.9;
  double beta2 = 0.999;
  double rho = 0.01;              ///< ρ
  double prior_precision = 40.0;  ///< λp; δ = λp/N
  double damping = 0.1;
  double hess_init = 1.0;         ///< s₀ (the reference's custominit)
  uint64_t seed = 0;              ///< seed of the weight noise

  static const OptionTable<BsamOptions>& table();
  void validate() const { validate_options(*this); }
};

class Bsam : public TwoPointOptimizer {
 public:
  using Options = BsamOptions;
  Bsam(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  Bsam(std::vector<::at::Tensor> params, Options defaults);
  const Options& options() const { return static_cast<const Options&>(defaults()); }
  const Options& options(size_t group) const;
  std::string name() const override { return "bSAM"; }
  /// 1/(N·s) per parameter.
  std::vector<::at::Tensor> posterior_variance() override;
  /// s per parameter (the precision per example).
  std::vector<::at::Tensor> precision();
  /// Test and parity hook: the next first point uses these standard-normal draws (one tensor per
  /// parameter, parameter order) instead of the generator.
  void set_next_noise(std::vector<::at::Tensor> standard_normal) { next_noise_ = std::move(standard_normal); }

 protected:
  bool first_point(size_t group, size_t index, Slot& s, ::at::Tensor& out) override;
  void ascent_point(size_t group, Slot& s, ::at::Tensor& out) override;
  bool posterior_draw(size_t group, size_t index, Slot& s, ::at::Tensor& out) override;
  bool update(size_t group, ::at::Tensor& param, Slot& s) override;
  void validate() const override;
  void init_slot(size_t group, const ::at::Tensor& param, Slot& s) override;

 private:
  /// θ = μ + ε/√(N·s) into `out`: ε from set_next_noise, else the counter-based stream (fused)
  /// or the generator (tensor operations).
  void draw(size_t group, size_t index, Slot& s, ::at::Tensor& out);
  ::at::Generator generator_;
  std::vector<::at::Tensor> next_noise_;
};

}  // namespace blr::torch
