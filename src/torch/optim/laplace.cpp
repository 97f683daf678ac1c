// The post-hoc Laplace posterior (laplace.hpp): sampling through σ = (N Ĝ + δ)^(-1/2), saving,
// and its registration as a posterior that does not train.
#include "blr/torch/optim/laplace.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/ranges.h>
#include <torch/serialize/archive.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "gaussian_impl.hpp"

namespace blr::torch {

const OptionTable<LaplacePosteriorOptions>& LaplacePosteriorOptions::table() {
  using O = LaplacePosteriorOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("Laplace")
          .number("prior_precision", &O::prior_precision, Range::positive(),
                  "prior precision δ of N(0, δ⁻¹I) (blr laplace: chosen by the marginal "
                  "likelihood unless given)",
                  OptionScope::kOptimizer)
          .number("ess", &O::ess, Range::positive(),
                  "N, the number of training examples the curvature is summed over",
                  OptionScope::kOptimizer)
          .default_from(DefaultFrom::kTrainingSetSize)
          .choice("subset", &O::subset,
                  {{"all", LaplaceSubset::kAll}, {"last_layer", LaplaceSubset::kLastLayer}},
                  "weights with a posterior: all, or those of the last layer", OptionScope::kOptimizer)
          .choice("curvature", &O::curvature,
                  {{"ggn", LaplaceCurvature::kGaussNewton},
                   {"ef", LaplaceCurvature::kEmpiricalFisher}},
                  "diagonal Gauss–Newton (exact, C backward passes) or empirical Fisher",
                  OptionScope::kOptimizer));
  return t;
}

LaplacePosterior::LaplacePosterior(std::vector<::torch::optim::OptimizerParamGroup> param_groups,
                                   Options defaults)
    : VariationalOptimizer(param_groups, std::make_unique<Options>(defaults)),
      generator_(::at::make_generator<::at::CPUGeneratorImpl>(defaults.seed)) {
  for (size_t g = 0; g < param_groups.size(); ++g) {
    if (param_groups[g].has_options()) param_groups_[g].set_options(param_groups[g].options().clone());
  }
  validate_groups(param_groups_, options(), name());
  curvature_.resize(parameters().size());
}

LaplacePosterior::LaplacePosterior(std::vector<::at::Tensor> params, Options defaults)
    : LaplacePosterior(std::vector<::torch::optim::OptimizerParamGroup>{
                           ::torch::optim::OptimizerParamGroup(std::move(params))},
                       std::move(defaults)) {}

std::vector<::at::Tensor*> LaplacePosterior::parameters() {
  std::vector<::at::Tensor*> out;
  for (auto& group : param_groups_) {
    for (auto& p : group.params()) out.push_back(&p);
  }
  return out;
}

void LaplacePosterior::set_curvature(const std::vector<::at::Tensor>& curvature) {
  check(!sampled_, fmt::format("{}: the curvature cannot change while the parameters hold a sample.",
                               name()));
  const auto params = parameters();
  check(curvature.size() == params.size(),
        fmt::format("{}: {} curvature tensors were given for {} parameters.", name(),
                    curvature.size(), params.size()));
  std::vector<::at::Tensor> checked(params.size());
  bool any = false;
  for (size_t j = 0; j < params.size(); ++j) {
    if (!curvature[j].defined()) continue;
    const auto& c = curvature[j];
    check(c.sizes() == params[j]->sizes(),
          fmt::format("{}: the curvature of parameter {} has shape {} but the parameter has {}.",
                      name(), j, fmt::join(c.sizes(), "×"), fmt::join(params[j]->sizes(), "×")));
    check(c.isfinite().all().item<bool>() && c.min().item<double>() >= 0.0,
          fmt::format("{}: the curvature of parameter {} must be finite and non-negative.", name(),
                      j));
    checked[j] = c.detach().to(params[j]->options()).contiguous().clone();
    any = true;
  }
  check(any, fmt::format("{}: no parameter has a curvature (an empty subset).", name()));
  curvature_ = std::move(checked);
  fitted_ = true;
}

std::vector<::at::Tensor> LaplacePosterior::posterior_variance() {
  check(fitted_, fmt::format("{}: the posterior has no curvature yet (blr laplace fits it).", name()));
  const double n = options().ess, delta = options().prior_precision;
  std::vector<::at::Tensor> out;
  const auto params = parameters();
  for (size_t j = 0; j < params.size(); ++j) {
    out.push_back(curvature_[j].defined() ? (curvature_[j] * n + delta).reciprocal()
                                          : ::at::zeros_like(*params[j]));
  }
  return out;
}

void LaplacePosterior::sample_parameters(bool /*train: nothing is collected*/) { sample(nullptr); }

void LaplacePosterior::sample_parameters(bool /*train*/, const std::vector<::at::Tensor>& noise) {
  sample(&noise);
}

void LaplacePosterior::sample(const std::vector<::at::Tensor>* noise) {
  check(!sampled_, fmt::format("{}: sample_parameters() was called twice without "
                               "restore_parameters() in between.",
                               name()));
  const auto variance = posterior_variance();
  const auto params = parameters();
  check(noise == nullptr || noise->size() == params.size(),
        fmt::format("{}: {} noise tensors were given for {} parameters.", name(),
                    noise == nullptr ? 0 : noise->size(), params.size()));
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> draws(params.size());
  for (size_t j = 0; j < params.size(); ++j) {
    if (!curvature_[j].defined()) continue;
    if (noise != nullptr) {
      check((*noise)[j].sizes() == params[j]->sizes(),
            fmt::format("{}: noise {} has the wrong shape.", name(), j));
      draws[j] = (*noise)[j].to(params[j]->options());
    } else {
      draws[j] = params[j]->is_cpu() ? ::at::normal(0.0, 1.0, params[j]->sizes(), generator_,
                                                    params[j]->options())
                                     : ::at::randn_like(*params[j]);
    }
  }
  mode_.assign(params.size(), ::at::Tensor());
  for (size_t j = 0; j < params.size(); ++j) {
    if (!draws[j].defined()) continue;
    mode_[j] = params[j]->detach().clone();
    params[j]->add_(draws[j] * variance[j].sqrt());
  }
  sampled_ = true;
}

void LaplacePosterior::restore_parameters() {
  check(sampled_, fmt::format("{}: restore_parameters() was called without a sample.", name()));
  ::at::NoGradGuard no_grad;
  const auto params = parameters();
  for (size_t j = 0; j < params.size(); ++j) {
    if (mode_[j].defined()) params[j]->copy_(mode_[j]);
  }
  mode_.clear();
  sampled_ = false;
}

::at::Tensor LaplacePosterior::step(LossClosure /*closure*/) {
  throw Error(
      "The Laplace posterior is fitted after training and does not train: train with an "
      "optimizer (e.g. adamw or sgd), then run `blr laplace --checkpoint FILE` on the result.");
}

void LaplacePosterior::save(::torch::serialize::OutputArchive& archive) const {
  check(!sampled_, fmt::format("{}: the state can only be saved at θ* (no sample pending).", name()));
  check(fitted_, fmt::format("{}: an unfitted posterior has nothing to save.", name()));
  archive.write("blr/optimizer", c10::IValue(name()));
  for (size_t j = 0; j < curvature_.size(); ++j) {
    if (curvature_[j].defined()) archive.write(fmt::format("param{}/curvature", j), curvature_[j]);
  }
}

void LaplacePosterior::load(::torch::serialize::InputArchive& archive) {
  check(!sampled_, fmt::format("{}: cannot load a state while the parameters hold a sample.", name()));
  c10::IValue value;
  check(archive.try_read("blr/optimizer", value) && value.isString() &&
            value.toStringRef() == name(),
        fmt::format("The archive holds no {} posterior.", name()));
  const auto params = parameters();
  std::vector<::at::Tensor> curvature(params.size());
  for (size_t j = 0; j < params.size(); ++j) {
    ::at::Tensor t;
    if (archive.try_read(fmt::format("param{}/curvature", j), t)) curvature[j] = t;
  }
  set_curvature(curvature);  // checks shapes, finiteness and sign
}

BLR_REGISTER_POSTERIOR(LaplacePosterior, "laplace",
                       "post-hoc Laplace posterior of a trained network (diagonal Gauss–Newton or "
                       "empirical Fisher, all weights or the last layer), fitted by blr laplace");

}  // namespace blr::torch
