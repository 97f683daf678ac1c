// MC dropout as the BLR (Khan & Rue 2023, §4.3, eqs. 39–43, App. G) for LibTorch: a spike-and-slab
// posterior per input unit of every weight matrix, trained with the Adam variant of eqs. 42–43
// ("by choosing S diagonal as in Sec. 4.2") and predicted with K dropout masks through the same
// sampling API as IVON.
//
// For a weight W of a layer (Linear [out, in], Conv [out, in, k…]) the units are its inputs
// (dimension 1): q(W_{·j}) = π₁ N(m_{·j}, S⁻¹) + (1 − π₁) δ₀, z_j ~ Bernoulli(π₁). Parameters of one
// dimension (biases, norms) have no units and are not dropped (z = 1). With the delta method at the
// dropout weights θ̃ = m⊙z (eq. 84):
//
//   training sample   W ← m⊙z                        (z drawn per input unit, one mask per sample)
//   restore           ĝ = z⊙∇ℓ̄(θ̃)/π₁,  Ĥ = z⊙(∇ℓ̄(θ̃))²/π₁   (eqs. 42–43's slab derivatives, with the
//                     squared gradient for the Hessian diagonal as RMSprop/Adam do)
//   step              the core's Adam policy (algorithms/rmsprop_adam.hpp: gradient average with
//                     debiasing, precision debiasing, √ scaling) on (ĝ, Ĥ), per coordinate
//   at rest           W = π₁·m = E_q[W]  (the weight-scaling rule of dropout's test time)
//   predictive sample W ← m⊙z  (MC dropout: K masks, probabilities averaged)
//
// The model's input is the first weight with units (parameter order: the first Linear or Conv of a
// sequential model). Its units are the data's features or channels; they are kept with their own
// probability, input_keep_probability, 1 by default: Gal & Ghahramani's Bayesian CNN (2016) drops
// after every hidden layer and keeps the image whole, and a first convolution of a grey image has
// one input channel, whose drop would blank the whole network's input for that minibatch.
//
// With keep_probability 1 nothing is dropped and the step is Adam's exactly (tested against
// torch::optim::Adam). One mask per minibatch, as eqs. 39–40 write it (z per unit, not per example).
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <string>
#include <utility>
#include <cstddef>
#include <vector>

#include "blr/torch/optim/options.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

struct McDropoutOptions : OptimizerOptionsFor<McDropoutOptions> {
  double lr = 1e-3;                ///< α
  double keep_probability = 0.8;   ///< π₁ ∈ (0, 1]
  double input_keep_probability = 1.0;  ///< π₁ of the model's input units (the first weight's)
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  int64_t mc_samples = 1;          ///< masks per step
  uint64_t seed = 0;               ///< seed of the masks

  static const OptionTable<McDropoutOptions>& table();
  void validate() const { validate_options(*this); }
};

class McDropout : public VariationalOptimizer {
 public:
  using Options = McDropoutOptions;

  McDropout(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  McDropout(std::vector<::at::Tensor> params, Options defaults);
  const Options& options() const { return static_cast<const Options&>(defaults()); }
  const Options& options(size_t group) const;
  std::string name() const { return "MC dropout"; }
  int training_samples() const override { return static_cast<int>(options().mc_samples); }

  /// W ← m⊙z for every weight with units (training and prediction alike).
  void sample_parameters(bool train) override;
  /// Test hook: the sample with the given masks (one tensor per parameter, shape [in] for a weight
  /// with units, undefined for the others; values 0 or 1).
  void sample_parameters(bool train, const std::vector<::at::Tensor>& masks);
  void restore_parameters() override { restore(true); }
  void discard_sample() override { restore(false); }
  bool sampled() const override { return sampled_; }
  /// Var_q[W] = π₁(1 − π₁)m² (π₁ of the parameter's units) (the spike-and-slab with a point slab); 0 for undropped parameters.
  std::vector<::at::Tensor> posterior_variance() override;
  ::at::Tensor step(LossClosure closure = nullptr) override;

  int64_t step_count() const { return step_; }
  /// The slab means m, parameter order.
  std::vector<::at::Tensor> slab_mean() const;

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 private:
  struct Slot {
    ::at::Tensor mean, average, precision, grad_sum, curvature_sum, mask;
  };
  void validate() const;
  void ensure_slots();
  void sample(const std::vector<::at::Tensor>* masks);
  void restore(bool collect);
  /// z broadcast to the parameter's shape ([1, in, 1, …]).
  static ::at::Tensor unit_mask(const ::at::Tensor& z, const ::at::Tensor& param);
  /// π₁ of parameter i of group g: input_keep_probability for the model's input weight.
  double keep_of(size_t group, size_t index) const;

  std::vector<std::vector<Slot>> slots_;
  /// (group, index) of the model's input weight: the first parameter with units.
  std::pair<size_t, size_t> input_weight_{SIZE_MAX, SIZE_MAX};
  ::at::Generator generator_;
  int64_t step_ = 0;
  int64_t samples_ = 0;
  bool sampled_ = false;
  bool train_sample_ = false;
};

}  // namespace blr::torch
