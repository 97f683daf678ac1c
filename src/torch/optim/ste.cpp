// The straight-through estimator trained by Adam (ste.hpp), and its registration.
#include "blr/torch/optim/ste.hpp"

#include <ATen/ATen.h>
#include <torch/serialize/archive.h>

#include "blr/core/error.hpp"
#include "binary_sign.hpp"
#include "blr/torch/optim/registry.hpp"
#include "state_archive.hpp"

namespace blr::torch {

namespace {

/// Version 1: the versioned header (state_archive.hpp) with the step counter; unversioned states
/// (the name, learning rates and latents only) still load.
constexpr int64_t kSteFormatVersion = 1;

using detail::binary_sign;

::torch::optim::AdamOptions adam_options(const SteOptions& o) {
  return ::torch::optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps);
}

}  // namespace

const OptionTable<SteOptions>& SteOptions::table() {
  using O = SteOptions;
  static const OptionTable<O> t =
      OptionTable<O>("STE")
          .number("lr", &O::lr, Range::at_least(0.0), "Adam's learning rate on the latents")
          .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                  "Adam's first-moment average factor")
          .number("beta2", &O::beta2, Range::between(0.0, 1.0, false, true),
                  "Adam's second-moment average factor")
          .number("eps", &O::eps, Range::positive(), "Adam's denominator offset")
          .flag("clip_latent", &O::clip_latent, "clip the latents to [−1, 1] after each step");
  return t;
}

Ste::Ste(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults)
    : ::torch::optim::Optimizer(param_groups, std::make_unique<Options>(defaults)) {
  for (size_t g = 0; g < param_groups.size(); ++g) {
    if (param_groups[g].has_options()) {
      param_groups_[g].set_options(param_groups[g].options().clone());
    }
  }
  validate_groups(param_groups_, options(), "STE");
  ::at::NoGradGuard no_grad;
  std::vector<::torch::optim::OptimizerParamGroup> latent_groups;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    latent_.emplace_back();
    for (auto& p : param_groups_[g].params()) {
      check(p.is_floating_point(),
            "STE: every parameter must be a floating-point tensor (binary weights are stored as ±1).");
      latent_[g].push_back(p.detach().clone().requires_grad_(true));
      p.copy_(binary_sign(latent_[g].back()));
    }
    latent_groups.emplace_back(latent_[g], std::make_unique<::torch::optim::AdamOptions>(
                                               adam_options(options(g))));
  }
  adam_ = std::make_unique<::torch::optim::Adam>(latent_groups, adam_options(options()));
}

Ste::Ste(std::vector<::at::Tensor> params, Options defaults)
    : Ste(std::vector<::torch::optim::OptimizerParamGroup>{
              ::torch::optim::OptimizerParamGroup(std::move(params))},
          std::move(defaults)) {}

const SteOptions& Ste::options(size_t group) const {
  return group_options_as<Options>(param_groups_.at(group), group, "STE");
}

::at::Tensor Ste::step(LossClosure closure) {
  ::at::Tensor loss;
  if (closure) {
    ::at::AutoGradMode grad_mode(true);
    loss = closure();
  }
  validate_groups(param_groups_, options(), "STE");
  check(param_groups_.size() == latent_.size(),
        "STE: param groups cannot be added after construction.");
  ::at::NoGradGuard no_grad;
  auto& adam_groups = adam_->param_groups();
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    // Schedules set the outer groups' learning rate; Adam follows.
    adam_groups[g].options().set_lr(param_groups_[g].options().get_lr());
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      ::at::Tensor& w = latent_[g][i];
      const ::at::Tensor& grad = params[i].grad();
      if (!grad.defined()) {
        if (w.grad().defined()) w.mutable_grad() = ::at::Tensor();
        continue;
      }
      check(::at::isfinite(grad).all().item<bool>(),
            fmt::format("STE: the gradient of parameter {} of param group {} is not finite.", i, g));
      w.mutable_grad() = grad.detach().to(w.options()).clone();
    }
  }
  adam_->step();
  ++step_;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      ::at::Tensor& w = latent_[g][i];
      if (options(g).clip_latent) w.clamp_(-1.0, 1.0);
      params[i].copy_(binary_sign(w));
    }
  }
  return loss;
}

std::vector<::at::Tensor> Ste::latent() const {
  std::vector<::at::Tensor> out;
  for (const auto& group : latent_) {
    for (const auto& w : group) out.push_back(w.detach().clone());
  }
  return out;
}

void Ste::save(::torch::serialize::OutputArchive& archive) const {
  detail::write_state_header(archive, "STE", kSteFormatVersion, step_, param_groups_);
  for (size_t g = 0; g < latent_.size(); ++g) {
    for (size_t i = 0; i < latent_[g].size(); ++i) {
      archive.write(fmt::format("group{}/param{}/latent", g, i), latent_[g][i]);
    }
  }
  ::torch::serialize::OutputArchive adam;
  adam_->save(adam);
  archive.write("adam", adam);
}

void Ste::load(::torch::serialize::InputArchive& archive) {
  c10::IValue value;
  int64_t step = 0;
  if (archive.try_read("blr/format_version", value)) {
    detail::check_state_header(archive, "STE", kSteFormatVersion, param_groups_);
    archive.read("blr/step", value);
    step = value.toInt();
  } else {
    // A state saved before the versioned header (2026-11-29): the name, the learning rates and
    // the latents, no step counter.
    check(archive.try_read("blr/optimizer", value) && value.isString() &&
              value.toStringRef() == "STE",
          "The archive holds no STE optimizer state.");
  }
  std::vector<std::vector<::at::Tensor>> latent(latent_.size());
  for (size_t g = 0; g < latent_.size(); ++g) {
    for (size_t i = 0; i < latent_[g].size(); ++i) {
      ::at::Tensor w;
      archive.read(fmt::format("group{}/param{}/latent", g, i), w);
      check(w.sizes() == latent_[g][i].sizes() && ::at::isfinite(w).all().item<bool>(),
            fmt::format("The saved STE latent of parameter {} in group {} has the wrong shape or is "
                        "not finite.",
                        i, g));
      latent[g].push_back(w.to(latent_[g][i].options()));
    }
  }
  ::torch::serialize::InputArchive adam;
  archive.read("adam", adam);
  ::at::NoGradGuard no_grad;
  for (size_t g = 0; g < latent_.size(); ++g) {
    archive.read(fmt::format("group{}/lr", g), value);
    param_groups_[g].options().set_lr(value.toDouble());
    for (size_t i = 0; i < latent_[g].size(); ++i) {
      latent_[g][i].copy_(latent[g][i]);  // in place: Adam's param groups hold these tensors
      param_groups_[g].params()[i].copy_(binary_sign(latent_[g][i]));
    }
  }
  adam_->load(adam);
  step_ = step;
}

BLR_REGISTER_OPTIMIZER(Ste, "ste",
                       "straight-through estimator with Adam on real latents of binary weights (the "
                       "BayesBiNN baseline), a point estimate",
                       kPointEstimate);

}  // namespace blr::torch
