// BayesBiNN for LibTorch: binary weights w ∈ {−1, +1} with a mean-field Bernoulli posterior
// (Meng, Bachmann & Khan, ICML 2020; Khan & Rue 2023, §4.5, eqs. 47–52), the BLR of a
// non-Gaussian family on the family-neutral VariationalOptimizer interface (variational.hpp).
//
// q(w_j = +1) = σ(2λ_j), natural parameter λ, mean μ = tanh λ, variance 1 − μ². With N the
// training-set size (ess), the mean minibatch loss ℓ̄ and K samples per step:
//
//   training sample   ε ~ U(0,1), δ = ½log(ε/(1−ε)),  w ← θ̂ = tanh((λ + δ)/τ)     (eq. 50)
//   restore           Σ ← Σ + s⊙∇ℓ̄(θ̂),  s = (1 − θ̂² + 10⁻¹⁰)/(τ(1 − μ² + 10⁻¹⁰))   (eq. 51)
//   step              ĝ = N·Σ/K;  u ← βu + (1−β)(ĝ + λ − λ₀);  λ ← λ − α·u/(1 − βᵗ)   (eq. 52)
//   at rest           w = sign(λ) (λ ≤ 0 → −1): the binary network, the reference's "mean mode"
//   predictive sample w = 2r − 1, r ~ Bernoulli(σ(2λ))  (the reference's test_samples = K)
//
// The relaxation's formulas and the step are the core's (estimator/concrete.hpp,
// algorithms/bayesbinn.hpp), written once for Eigen arrays and tensors; a parity test runs both
// on the same draws. Every parameter of the param groups is binary: give the optimizer only the
// weights of bias-free binary layers (nn/binary_mlp.hpp) — batch norm without affine parameters
// has none. Device-agnostic: contiguous float/double parameters on the CPU take fused passes
// (src/torch/optim/bernoulli_kernels.hpp: one pass each for the sample, the restore and the
// step's two halves, with the counter-based noise of the Gaussian optimizers, keyed by the draw
// count that the state saves); every other parameter takes tensor operations (CPU noise from the
// optimizer's seeded generator, other devices from their default generator).
//
// Reference quirks (research/algorithms.md §4) and what this optimizer does:
//  * λ starts at ±(init_natural + √init_std·N(0,1)) with a random sign per coordinate (as the
//    reference; the model's own initial weights are replaced by sign(λ) at construction).
//  * The reference refreshes μ from the λ of the start of the step, so its μ lags λ by one step;
//    here μ = tanh λ of the current λ (the core preset and eq. 51). With τ = 10⁻¹⁰ and |λ| ≈ 10
//    the two differ only where a coordinate is about to flip.
//  * The reference's `reweight` (a factor on λ − λ₀ inside the momentum) is fixed at 1 (its default).
//  * Float32 saturates 1 − tanh²(10) to 0, so s ≈ 10¹⁰ where float64 gives ≈ 1.2·10⁸ (the reference
//    runs float32): the learning rate's scale depends on the dtype, as in the reference.
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blr/algorithms/bayesbinn.hpp"
#include "blr/torch/optim/capabilities.hpp"
#include "blr/torch/optim/options.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

/// BayesBiNN's options: the core preset's (lr, beta1, temperature, mc_samples, prior_natural),
/// the training-set size, the initialisation of λ and the noise seed.
struct BayesBinnOptions : OptimizerOptionsFor<BayesBinnOptions>, ::blr::BayesBinnOptions {
  double ess = 0.0;            ///< N > 0 (the training-set size; the gradient is N·∇ℓ̄)
  double init_natural = 10.0;  ///< |λ| at initialisation (the reference's lamda_init)
  double init_std = 0.0;       ///< variance of the noise added to |λ| (the reference's lamda_std)
  uint64_t seed = 0;           ///< seed of the initial signs and of the relaxation's noise

  static const OptionTable<BayesBinnOptions>& table();
  void validate() const { validate_options(*this); }
};

class BayesBinn : public VariationalOptimizer, public FusedKernelsSwitch {
 public:
  using Options = BayesBinnOptions;

  BayesBinn(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  BayesBinn(std::vector<::at::Tensor> params, Options defaults);

  /// The optimizer's options (the defaults of its param groups).
  const Options& options() const { return static_cast<const Options&>(defaults()); }
  /// The options in force for param group `group`.
  const Options& options(size_t group) const;

  std::string name() const { return "BayesBiNN"; }
  int training_samples() const override { return static_cast<int>(options().mc_samples); }

  /// Training: w ← θ̂ (relaxed sample); prediction: w ← a Bernoulli sample on {−1, +1}.
  void sample_parameters(bool train) override;
  /// Test and parity hook: the training sample from the given uniforms ε ∈ (0, 1) (one tensor
  /// per parameter, same shapes, parameter order) instead of the generator.
  void sample_parameters(bool train, const std::vector<::at::Tensor>& uniforms);
  void restore_parameters() override;
  void discard_sample() override;
  bool sampled() const override { return sampled_; }
  /// Var_q[w] = 1 − tanh²λ per parameter.
  std::vector<::at::Tensor> posterior_variance() override;

  /// One update from the samples collected since the last step (with a closure, runs
  /// training_samples() samples first, as the Gaussian optimizers do).
  ::at::Tensor step(LossClosure closure = nullptr) override;

  int64_t step_count() const { return step_; }
  /// λ of every parameter, parameter order.
  std::vector<::at::Tensor> natural() const;
  /// μ = tanh λ of every parameter.
  std::vector<::at::Tensor> mean() const;
  /// Replaces λ (e.g. a parity test's start, or a saved posterior); the parameters become sign(λ).
  void set_natural(const std::vector<::at::Tensor>& natural);
  /// A prior per coordinate, λ₀ (continual learning: the previous task's λ); replaces the scalar
  /// option prior_natural for these parameters.
  void set_prior(const std::vector<::at::Tensor>& prior_natural);

  /// Fused CPU passes on (the default) or tensor operations everywhere (tests compare the two).
  void set_fused_kernels(bool fused) override { fused_ = fused; }

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 private:
  /// λ and the momentum u, with what is fixed between steps cached for the tensor path: the
  /// binary weights sign(λ) and the scale's denominator τ(1 − tanh²λ + 10⁻¹⁰) (for the
  /// temperature it was made with); the fused passes make both from λ and leave them undefined.
  struct Slot {
    ::at::Tensor natural, average, grad_sum, prior, binary, denominator;
    ::at::Tensor next_natural, next_average;  ///< fused step: λ' and u' before they are accepted
    double denominator_temperature = 0.0;
  };
  /// Sets λ of a slot and refreshes its cache; the parameter becomes sign(λ).
  static void set_slot_natural(Slot& s, ::at::Tensor natural, ::at::Tensor& param);
  void validate() const;
  void ensure_state();
  Slot& slot(size_t group, size_t index) { return slots_.at(group).at(index); }
  void sample(bool train, const std::vector<::at::Tensor>* uniforms);
  void restore(bool collect);
  size_t parameter_count() const;
  /// True when the fused CPU passes apply to parameter `p` (and so to its slot's tensors).
  bool fused_for(const ::at::Tensor& p) const;
  /// The tensor path's denominator of the slot's scale for temperature τ, made once per λ (the
  /// fused restore makes it from λ on the fly).
  static void ensure_denominator(Slot& s, double tau);
  /// The binary weights sign(λ) of a slot, made from λ when the fused step left them unmade.
  static const ::at::Tensor& binary(Slot& s);

  std::vector<std::vector<Slot>> slots_;
  ::at::Generator generator_;
  int64_t step_ = 0;
  int64_t samples_ = 0;
  uint64_t draws_ = 0;  ///< training samples drawn: the fused noise stream's counter
  bool fused_ = true;
  bool sampled_ = false;
  bool train_sample_ = false;
};

}  // namespace blr::torch
