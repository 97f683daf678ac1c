// Optimizers by name with string-keyed options (factory.hpp).
#include "blr/torch/optim/factory.hpp"

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/optim/vadam.hpp"
#include "blr/torch/optim/vogn.hpp"

namespace blr::torch {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const char* const kEssHelp = "effective sample size (N); 0: the training-set size";

std::vector<OptimizerOptionSpec> vogn_specs(bool sampling) {
  std::vector<OptimizerOptionSpec> specs = {
      {"lr", 1e-3, "learning rate α"},
      {"ess", 0.0, kEssHelp},
      {"prior-precision", 1.0, "prior precision δ (1/prior variance)"},
      {"damping", 0.0, "damping γ added to the curvature s"},
      {"beta1", 0.9, "heavy-ball momentum β1"},
      {"curvature-rate", 0.01, "weight w of the new squared gradients in s"},
      {"hess-init", 0.01, "initial curvature s0"},
  };
  if (sampling) {
    specs.push_back({"mc-samples", 1, "Monte Carlo weight samples per step"});
    specs.push_back({"seed", 0, "seed of the weight noise"});
  }
  return specs;
}

/// Reads options by key, with defaults from the specs.
class Reader {
 public:
  Reader(std::string name, const std::map<std::string, double>& options)
      : name_(std::move(name)), specs_(optimizer_options(name_)), options_(options) {
    for (const auto& [key, value] : options_) {
      bool known = false;
      for (const auto& spec : specs_) known = known || spec.key == key;
      if (!known) {
        std::string valid;
        for (const auto& spec : specs_) valid += (valid.empty() ? "" : ", ") + spec.key;
        throw Error(fmt::format("Unknown option '{}' for optimizer '{}'; valid options: {}.", key,
                                name_, valid));
      }
      check(!std::isnan(value), fmt::format("Option '{}' is NaN.", key));
    }
  }

  double get(const std::string& key) const {
    const auto it = options_.find(key);
    if (it != options_.end()) return it->second;
    for (const auto& spec : specs_) {
      if (spec.key == key) return spec.default_value;
    }
    throw Error(fmt::format("Internal: optimizer '{}' has no option '{}'.", name_, key));
  }

  /// A whole number in [lo, hi].
  int64_t integer(const std::string& key, double lo, double hi) const {
    const double v = get(key);
    check(std::floor(v) == v && v >= lo && v <= hi,
          fmt::format("Option '{}' must be a whole number in [{}, {}]; got {}.", key, lo, hi, v));
    return static_cast<int64_t>(v);
  }

  bool flag(const std::string& key) const { return integer(key, 0, 1) == 1; }

  /// The effective sample size: the option, or the training-set size when 0/unset.
  double ess(int64_t dataset_size) const {
    const double v = get("ess");
    if (v != 0.0) {
      check_positive("ess", v);
      return v;
    }
    check(dataset_size > 0,
          fmt::format("Optimizer '{}' needs 'ess' (the effective sample size) or a positive "
                      "training-set size; got {}.",
                      name_, dataset_size));
    return static_cast<double>(dataset_size);
  }

 private:
  std::string name_;
  std::vector<OptimizerOptionSpec> specs_;
  const std::map<std::string, double>& options_;
};

}  // namespace

std::vector<std::string> optimizer_names() {
  return {"ivon", "vogn", "ogn", "vadam", "adamw", "sgd"};
}

std::vector<OptimizerOptionSpec> optimizer_options(const std::string& name) {
  if (name == "ivon") {
    return {
        {"lr", 0.1, "learning rate α (the first step is an SGD step of size α)"},
        {"ess", 0.0, kEssHelp},
        {"hess-init", 1.0, "initial Hessian estimate h0"},
        {"beta1", 0.9, "momentum EMA factor β1"},
        {"beta2", 0.99999, "Hessian EMA factor β2"},
        {"weight-decay", 1e-4, "weight decay δ (prior precision per example)"},
        {"mc-samples", 1, "Monte Carlo weight samples per step"},
        {"clip-radius", kInf, "elementwise clip of the preconditioned step"},
        {"debias", 1, "debias the momentum (0/1)"},
        {"rescale-lr", 1, "step size α·(h0 + δ) (0/1)"},
        {"hess-approx", 0, "Hessian estimator: 0 = price (reparameterisation), 1 = gradsq"},
        {"seed", 0, "seed of the weight noise"},
    };
  }
  if (name == "vogn") return vogn_specs(true);
  if (name == "ogn") return vogn_specs(false);
  if (name == "vadam") {
    return {
        {"lr", 1e-3, "learning rate α"},
        {"ess", 0.0, kEssHelp},
        {"beta1", 0.9, "momentum EMA factor β1"},
        {"beta2", 0.999, "squared-gradient EMA factor β2"},
        {"prior-precision", 1.0, "prior precision λp"},
        {"prec-init", 1.0, "initial posterior precision (≥ prior precision)"},
        {"mc-samples", 1, "Monte Carlo weight samples per step"},
        {"seed", 0, "seed of the weight noise"},
    };
  }
  if (name == "adamw") {
    return {
        {"lr", 1e-3, "learning rate"},
        {"beta1", 0.9, "first-moment EMA factor"},
        {"beta2", 0.999, "second-moment EMA factor"},
        {"eps", 1e-8, "denominator offset"},
        {"weight-decay", 1e-2, "decoupled weight decay"},
    };
  }
  if (name == "sgd") {
    return {
        {"lr", 0.01, "learning rate"},
        {"momentum", 0.9, "heavy-ball momentum"},
        {"weight-decay", 0.0, "L2 weight decay"},
        {"nesterov", 0, "Nesterov momentum (0/1)"},
    };
  }
  std::string valid;
  for (const auto& n : optimizer_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw Error(fmt::format("Unknown optimizer '{}'; known optimizers: {}.", name, valid));
}

std::unique_ptr<::torch::optim::Optimizer> make_optimizer(
    const std::string& name, std::vector<::at::Tensor> parameters,
    const std::map<std::string, double>& options, int64_t dataset_size) {
  const Reader r(name, options);
  if (name == "ivon") {
    IvonOptions o(r.get("lr"));
    o.ess(r.ess(dataset_size))
        .hess_init(r.get("hess-init"))
        .beta1(r.get("beta1"))
        .beta2(r.get("beta2"))
        .weight_decay(r.get("weight-decay"))
        .clip_radius(r.get("clip-radius"))
        .mc_samples(r.integer("mc-samples", 1, 1e6))
        .debias(r.flag("debias"))
        .rescale_lr(r.flag("rescale-lr"))
        .hess_approx(r.integer("hess-approx", 0, 1) == 0 ? IvonHessian::kPrice
                                                         : IvonHessian::kGradSquared)
        .seed(static_cast<uint64_t>(r.integer("seed", 0, 9007199254740992.0)));
    return std::make_unique<Ivon>(std::move(parameters), o);
  }
  if (name == "vogn" || name == "ogn") {
    VognOptions o(r.get("lr"));
    o.ess(r.ess(dataset_size))
        .prior_precision(r.get("prior-precision"))
        .damping(r.get("damping"))
        .beta1(r.get("beta1"))
        .curvature_rate(r.get("curvature-rate"))
        .hess_init(r.get("hess-init"));
    if (name == "ogn") return std::make_unique<Ogn>(std::move(parameters), o);
    o.mc_samples(r.integer("mc-samples", 1, 1e6))
        .seed(static_cast<uint64_t>(r.integer("seed", 0, 9007199254740992.0)));
    return std::make_unique<Vogn>(std::move(parameters), o);
  }
  if (name == "vadam") {
    VadamOptions o(r.get("lr"));
    o.ess(r.ess(dataset_size))
        .beta1(r.get("beta1"))
        .beta2(r.get("beta2"))
        .prior_precision(r.get("prior-precision"))
        .prec_init(r.get("prec-init"))
        .mc_samples(r.integer("mc-samples", 1, 1e6))
        .seed(static_cast<uint64_t>(r.integer("seed", 0, 9007199254740992.0)));
    return std::make_unique<Vadam>(std::move(parameters), o);
  }
  if (name == "adamw") {
    const double lr = r.get("lr"), b1 = r.get("beta1"), b2 = r.get("beta2");
    const double eps = r.get("eps"), wd = r.get("weight-decay");
    check_nonnegative("lr", lr);
    check_range("beta1", b1, 0.0, 1.0, false, true);
    check_range("beta2", b2, 0.0, 1.0, false, true);
    check_positive("eps", eps);
    check_nonnegative("weight-decay", wd);
    return std::make_unique<::torch::optim::AdamW>(
        std::move(parameters),
        ::torch::optim::AdamWOptions(lr).betas({b1, b2}).eps(eps).weight_decay(wd));
  }
  // sgd (optimizer_options() has rejected unknown names)
  const double lr = r.get("lr"), momentum = r.get("momentum"), wd = r.get("weight-decay");
  const bool nesterov = r.flag("nesterov");
  check_nonnegative("lr", lr);
  check_range("momentum", momentum, 0.0, 1.0, false, true);
  check_nonnegative("weight-decay", wd);
  check(!nesterov || momentum > 0.0, "Option 'nesterov' needs a positive 'momentum'.");
  return std::make_unique<::torch::optim::SGD>(
      std::move(parameters),
      ::torch::optim::SGDOptions(lr).momentum(momentum).weight_decay(wd).nesterov(nesterov));
}

void set_learning_rate(::torch::optim::Optimizer& optimizer, double lr) {
  check_nonnegative("lr", lr);
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

double learning_rate(const ::torch::optim::Optimizer& optimizer) {
  check(!optimizer.param_groups().empty(), "The optimizer has no param groups.");
  return optimizer.param_groups().front().options().get_lr();
}

int training_samples(const ::torch::optim::Optimizer& optimizer) {
  const auto* v = dynamic_cast<const VariationalOptimizer*>(&optimizer);
  return v != nullptr ? v->training_samples() : 1;
}

}  // namespace blr::torch
