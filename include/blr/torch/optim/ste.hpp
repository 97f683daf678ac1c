// The straight-through estimator (STE) for binary weights, trained by Adam: the baseline of
// BayesBiNN (Meng, Bachmann & Khan 2020, "STE-Adam"; Khan & Rue 2023, eq. 48 is its BLR limit).
//
// Each parameter keeps a real latent w̃; the model computes with the binary w = sign(w̃) (w̃ ≤ 0 →
// −1), and the gradient at w is passed straight through to w̃:
//
//   g̃ = ∇_w ℓ̄(sign w̃),   w̃ ← Adam(w̃, g̃)   (LibTorch's torch::optim::Adam on the latents),
//   w̃ ← clip(w̃, −1, 1) when clip_latent (BinaryConnect, Courbariaux et al. 2015), w ← sign(w̃).
//
// Between steps the parameters hold the binary weights, so the model is the binary network; the
// latents start from the model's initial (real) weights. A point estimate: no posterior, no
// sampling. With Adam replaced by plain gradient steps and no clipping this is eq. 48's
// λ ← λ − α∇ℓ̄(sign λ) (the core's StraightThrough).
#pragma once

#include <torch/optim/adam.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

#include "blr/torch/optim/options.hpp"

namespace blr::torch {

struct SteOptions : OptimizerOptionsFor<SteOptions> {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool clip_latent = true;  ///< keep the latents in [−1, 1] (BinaryConnect)

  static const OptionTable<SteOptions>& table();
  void validate() const { validate_options(*this); }
};

class Ste : public ::torch::optim::Optimizer {
 public:
  using Options = SteOptions;

  Ste(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  Ste(std::vector<::at::Tensor> params, Options defaults);

  const Options& options() const { return static_cast<const Options&>(defaults()); }
  const Options& options(size_t group) const;

  /// Passes the gradients at the binary weights to the latents, takes Adam's step on them and
  /// writes the new binary weights into the parameters.
  ::at::Tensor step(LossClosure closure = nullptr) override;

  /// The real latents w̃, parameter order.
  std::vector<::at::Tensor> latent() const;
  /// Number of steps taken (saved with the state; 0 after loading a state saved before it was).
  int64_t step_count() const { return step_; }

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 private:
  std::vector<std::vector<::at::Tensor>> latent_;
  std::unique_ptr<::torch::optim::Adam> adam_;
  int64_t step_ = 0;
};

}  // namespace blr::torch
