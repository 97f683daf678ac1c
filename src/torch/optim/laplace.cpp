// The post-hoc Laplace posterior (laplace.hpp): sampling through σ = (N Ĝ + δ)^(-1/2) or the
// Kronecker eigenbasis (kronecker_gaussian.hpp), saving, and its registration as a posterior that
// does not train.
#include "blr/torch/optim/laplace.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/ranges.h>
#include <torch/serialize/archive.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "kronecker_layout.hpp"
#include "noise_seed_option.hpp"

namespace blr::torch {

namespace {

constexpr int64_t kLaplaceFormatVersion = 2;

}  // namespace

const OptionTable<LaplacePosteriorOptions>& LaplacePosteriorOptions::table() {
  using O = LaplacePosteriorOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("Laplace")
          .number("prior_precision", &O::prior_precision, Range::positive(),
                  "prior precision δ of N(0, δ⁻¹I) (blr laplace: chosen by the marginal "
                  "likelihood or by validation NLL unless given)",
                  OptionScope::kOptimizer)
          .number("ess", &O::ess, Range::positive(),
                  "N, the number of training examples the curvature is summed over",
                  OptionScope::kOptimizer)
          .default_from(DefaultFrom::kTrainingSetSize)
          .choice("subset", &O::subset,
                  {{"all", LaplaceSubset::kAll}, {"last-layer", LaplaceSubset::kLastLayer}},
                  "weights with a posterior: all, or those of the last layer", OptionScope::kOptimizer)
          .formerly("last_layer", "last-layer")  // laplace-torch's, and blr's before 2026-11-29
          .choice("curvature", &O::curvature,
                  {{"ggn", LaplaceCurvature::kGaussNewton},
                   {"ef", LaplaceCurvature::kEmpiricalFisher}},
                  "diagonal Gauss–Newton (exact, C backward passes) or empirical Fisher",
                  OptionScope::kOptimizer)
          .choice("structure", &O::structure,
                  {{"diag", LaplaceStructure::kDiagonal}, {"kron", LaplaceStructure::kKronecker}},
                  "diagonal precision, or Kronecker-factored N·(A⊗G) + δI per Linear/Conv2d weight",
                  OptionScope::kOptimizer)
          .choice("predictive", &O::predictive,
                  {{"monte-carlo", LaplacePredictive::kMonteCarlo},
                   {"probit", LaplacePredictive::kProbit}},
                  "Monte Carlo average over posterior draws, or the linearised probit approximation",
                  OptionScope::kOptimizer)
          .formerly("mc", "monte-carlo"));  // laplace-torch's, and blr's before 2026-11-29
  return t;
}

LaplaceChoices read_laplace_choices(const OptionValues& given) {
  const auto& table = LaplacePosteriorOptions::table();
  LaplaceChoices read;
  table.apply(read.options, given);
  for (const auto& entry : given)
    read.spelled.emplace_back(entry.first, table.value(read.options, entry.first));
  return read;
}

const std::string& LaplaceChoices::spelling(const std::string& key) const {
  for (const auto& entry : spelled)
    if (entry.first == key) return std::get<std::string>(entry.second);
  throw std::logic_error("LaplaceChoices: '" + key + "' was not read.");
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

void LaplacePosterior::set_curvature(const std::vector<::at::Tensor>& curvature,
                                     const std::vector<KroneckerFactors>& factors) {
  check(!sampled_, fmt::format("{}: the curvature cannot change while the parameters hold a sample.",
                               name()));
  const auto params = parameters();
  check(curvature.size() == params.size(),
        fmt::format("{}: {} curvature tensors were given for {} parameters.", name(),
                    curvature.size(), params.size()));
  check(factors.empty() || factors.size() == params.size(),
        fmt::format("{}: {} Kronecker factor pairs were given for {} parameters.", name(),
                    factors.size(), params.size()));
  const bool kron = options().structure == LaplaceStructure::kKronecker;
  auto valid = [](const ::at::Tensor& c) {
    return c.isfinite().all().item<bool>() && c.min().item<double>() >= 0.0;
  };
  std::vector<::at::Tensor> checked(params.size());
  std::vector<KroneckerFactors> checked_factors(params.size());
  std::vector<KroneckerEigen> eigen(params.size());
  bool any = false, any_factors = false;
  for (size_t j = 0; j < params.size(); ++j) {
    const auto& p = *params[j];
    if (!factors.empty() && factors[j].defined()) {
      check(kron, fmt::format("{}: parameter {} got Kronecker factors but the posterior's structure "
                              "is diagonal.",
                              name(), j));
      const int64_t out = p.size(0), in = p.numel() / p.size(0);
      const auto& f = factors[j];
      check(p.dim() >= 2 && f.input.sizes() == ::at::IntArrayRef({in, in}) &&
                f.output.sizes() == ::at::IntArrayRef({out, out}),
            fmt::format("{}: parameter {} of shape {} got Kronecker factors of shapes {} and {}; "
                        "expected {}×{} and {}×{}.",
                        name(), j, fmt::join(p.sizes(), "×"), fmt::join(f.input.sizes(), "×"),
                        fmt::join(f.output.sizes(), "×"), in, in, out, out));
      check(f.input.isfinite().all().item<bool>() && f.output.isfinite().all().item<bool>(),
            fmt::format("{}: the Kronecker factors of parameter {} must be finite.", name(), j));
      checked_factors[j] = {f.input.detach().to(p.options()).contiguous().clone(),
                            f.output.detach().to(p.options()).contiguous().clone()};
      eigen[j] = kronecker_eigen(checked_factors[j]);
      any = any_factors = true;
      continue;
    }
    if (!curvature[j].defined()) continue;
    const auto& c = curvature[j];
    check(c.sizes() == p.sizes(),
          fmt::format("{}: the curvature of parameter {} has shape {} but the parameter has {}.",
                      name(), j, fmt::join(c.sizes(), "×"), fmt::join(p.sizes(), "×")));
    check(valid(c), fmt::format("{}: the curvature of parameter {} must be finite and non-negative.",
                                name(), j));
    checked[j] = c.detach().to(p.options()).contiguous().clone();
    any = true;
  }
  check(any, fmt::format("{}: no parameter has a curvature (an empty subset).", name()));
  check(!kron || any_factors,
        fmt::format("{}: the structure is kron but no parameter has Kronecker factors (the subset "
                    "has no Linear or Conv2d weight).",
                    name()));
  curvature_ = std::move(checked);
  factors_ = std::move(checked_factors);
  eigen_ = std::move(eigen);
  fitted_ = true;
  // A weight without curvature from the data has the variance 1/δ: a δ below the parameters'
  // smallest number (1e-320 in float32 rounds to 0) leaves it infinite, and every draw NaN.
  for (const auto& v : posterior_variance()) {
    if (v.isfinite().all().item<bool>()) continue;
    fitted_ = false;
    throw Error(fmt::format("{}: the prior precision {} leaves weights with an infinite posterior "
                            "variance (the data give them no curvature, and 1/{} overflows); "
                            "choose a larger prior precision.",
                            name(), options().prior_precision, options().prior_precision));
  }
}

void LaplacePosterior::set_prior_precision(double delta) {
  check(!sampled_, fmt::format("{}: the prior precision cannot change while the parameters hold "
                               "a sample.",
                               name()));
  check(delta > 0 && std::isfinite(delta),
        fmt::format("{}: the prior precision must be a positive finite number; got {}.", name(),
                    delta));
  static_cast<Options&>(defaults()).prior_precision = delta;
  for (auto& group : param_groups_) {
    if (group.has_options()) static_cast<Options&>(group.options()).prior_precision = delta;
  }
  generator_ = ::at::make_generator<::at::CPUGeneratorImpl>(options().seed);
  if (!fitted_) return;
  for (const auto& v : posterior_variance()) {
    check(v.isfinite().all().item<bool>(),
          fmt::format("{}: the prior precision {} leaves weights with an infinite posterior "
                      "variance; choose a larger one.",
                      name(), delta));
  }
}

::at::Tensor LaplacePosterior::kronecker_precision(size_t j) const {
  check(j < factors_.size() && factors_[j].defined(),
        fmt::format("{}: parameter {} is not Kronecker-factored.", name(), j));
  return ::at::outer(eigen_[j].output_eigen, eigen_[j].input_eigen)
      .mul_(options().ess)
      .add_(options().prior_precision);
}

::at::Tensor LaplacePosterior::posterior_covariance(size_t j) {
  check(fitted_, fmt::format("{}: the posterior has no curvature yet (blr laplace fits it).", name()));
  if (j < factors_.size() && factors_[j].defined()) {
    return kronecker_covariance(eigen_[j].output_basis, eigen_[j].input_basis,
                                kronecker_precision(j));
  }
  return ::at::diag(posterior_variance().at(j).flatten());
}

std::vector<::at::Tensor> LaplacePosterior::posterior_variance() {
  check(fitted_, fmt::format("{}: the posterior has no curvature yet (blr laplace fits it).", name()));
  const double n = options().ess, delta = options().prior_precision;
  std::vector<::at::Tensor> out;
  const auto params = parameters();
  ::at::NoGradGuard no_grad;
  for (size_t j = 0; j < params.size(); ++j) {
    if (factors_[j].defined()) {
      out.push_back(kronecker_marginal_variance(eigen_[j].output_basis, eigen_[j].input_basis,
                                                kronecker_precision(j))
                        .reshape(params[j]->sizes()));
    } else {
      out.push_back(curvature_[j].defined() ? (curvature_[j] * n + delta).reciprocal()
                                            : ::at::zeros_like(*params[j]));
    }
  }
  return out;
}

std::vector<CovarianceBlock> LaplacePosterior::covariance_blocks() {
  check(fitted_, fmt::format("{}: the posterior has no curvature yet (blr laplace fits it).", name()));
  check(!sampled_, "The linearised predictive is taken at θ*, but the parameters hold a posterior "
                   "sample.");
  const double n = options().ess, delta = options().prior_precision;
  const auto params = parameters();
  ::at::NoGradGuard no_grad;
  std::vector<CovarianceBlock> out(params.size());
  for (size_t j = 0; j < params.size(); ++j) {
    if (factors_[j].defined()) {
      out[j] = {kronecker_precision(j).reciprocal().reshape(params[j]->sizes()),
                eigen_[j].output_basis, eigen_[j].input_basis};
    } else if (curvature_[j].defined()) {
      out[j].weights = (curvature_[j] * n + delta).reciprocal();
    }
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
  check(fitted_, fmt::format("{}: the posterior has no curvature yet (blr laplace fits it).", name()));
  const auto params = parameters();
  check(noise == nullptr || noise->size() == params.size(),
        fmt::format("{}: {} noise tensors were given for {} parameters.", name(),
                    noise == nullptr ? 0 : noise->size(), params.size()));
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> draws(params.size());
  for (size_t j = 0; j < params.size(); ++j) {
    if (!curvature_[j].defined() && !factors_[j].defined()) continue;
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
    if (factors_[j].defined()) {
      params[j]->add_(kronecker_draw(eigen_[j].output_basis, eigen_[j].input_basis,
                                     kronecker_precision(j), detail::as_matrix(draws[j]))
                          .reshape(params[j]->sizes()));
    } else {
      params[j]->add_(draws[j] *
                      (curvature_[j] * options().ess + options().prior_precision).rsqrt());
    }
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
  archive.write("blr/laplace_format", c10::IValue(kLaplaceFormatVersion));
  for (size_t j = 0; j < curvature_.size(); ++j) {
    if (curvature_[j].defined()) archive.write(fmt::format("param{}/curvature", j), curvature_[j]);
    if (factors_[j].defined()) {
      archive.write(fmt::format("param{}/input_factor", j), factors_[j].input);
      archive.write(fmt::format("param{}/output_factor", j), factors_[j].output);
    }
  }
}

void LaplacePosterior::load(::torch::serialize::InputArchive& archive) {
  check(!sampled_, fmt::format("{}: cannot load a state while the parameters hold a sample.", name()));
  c10::IValue value;
  check(archive.try_read("blr/optimizer", value) && value.isString() &&
            value.toStringRef() == name(),
        fmt::format("The archive holds no {} posterior.", name()));
  int64_t format = 1;  // format 1 (diagonal only) wrote no format key
  if (archive.try_read("blr/laplace_format", value)) {
    check(value.isInt() && value.toInt() >= 1 && value.toInt() <= kLaplaceFormatVersion,
          fmt::format("The saved {} posterior has format {}; this blr reads formats 1 to {}.",
                      name(), value.isInt() ? value.toInt() : -1, kLaplaceFormatVersion));
    format = value.toInt();
  }
  const auto params = parameters();
  std::vector<::at::Tensor> curvature(params.size());
  std::vector<KroneckerFactors> factors(params.size());
  for (size_t j = 0; j < params.size(); ++j) {
    ::at::Tensor t;
    if (archive.try_read(fmt::format("param{}/curvature", j), t)) curvature[j] = t;
    if (format < 2) continue;
    ::at::Tensor a, g;
    const bool has_a = archive.try_read(fmt::format("param{}/input_factor", j), a);
    const bool has_g = archive.try_read(fmt::format("param{}/output_factor", j), g);
    check(has_a == has_g,
          fmt::format("The saved {} posterior holds only one Kronecker factor of parameter {}.",
                      name(), j));
    if (has_a) factors[j] = {a, g};
  }
  set_curvature(curvature, factors);  // checks shapes, finiteness, sign and the structure
}

std::unique_ptr<LaplacePosterior> make_laplace_posterior(std::vector<::at::Tensor> params,
                                                         const OptionValues& options,
                                                         const OptimizerContext& context) {
  check_options("laplace", options);  // as make_optimizer("laplace", ...) checks them
  std::vector<::torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::move(params));
  return std::make_unique<LaplacePosterior>(
      std::move(groups), detail::options_from<LaplacePosterior::Options>(options, context));
}

BLR_REGISTER_OPTIMIZER(LaplacePosterior, "laplace",
                       "post-hoc Laplace posterior of a trained network (diagonal or Kronecker-"
                       "factored Gauss–Newton or empirical Fisher, all weights or the last layer), "
                       "fitted by blr laplace",
                       kPosthocGaussian);

}  // namespace blr::torch
