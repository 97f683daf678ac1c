// LibTorch's own AdamW and SGD in the registry, with option tables, as the baselines every
// comparison runs against.
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "blr/torch/optim/registry.hpp"

namespace blr::torch {
namespace {

/// The options of torch::optim::AdamW as a table (Loshchilov & Hutter 2019).
struct AdamWSettings {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;

  static const OptionTable<AdamWSettings>& table() {
    using O = AdamWSettings;
    static const OptionTable<O> t =
        OptionTable<O>("AdamW")
            .number("lr", &O::lr, Range::at_least(0.0), "learning rate")
            .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true),
                    "first-moment average factor")
            .number("beta2", &O::beta2, Range::between(0.0, 1.0, false, true),
                    "second-moment average factor")
            .number("eps", &O::eps, Range::positive(), "denominator offset")
            .number("weight_decay", &O::weight_decay, Range::at_least(0.0),
                    "decoupled weight decay");
    return t;
  }
};

/// The options of torch::optim::SGD as a table.
struct SgdSettings {
  double lr = 0.01;
  double momentum = 0.9;
  double weight_decay = 0.0;
  bool nesterov = false;

  static const OptionTable<SgdSettings>& table() {
    using O = SgdSettings;
    static const OptionTable<O> t =
        OptionTable<O>("SGD")
            .number("lr", &O::lr, Range::at_least(0.0), "learning rate")
            .number("momentum", &O::momentum, Range::between(0.0, 1.0, false, true),
                    "heavy-ball momentum")
            .number("weight_decay", &O::weight_decay, Range::at_least(0.0), "L2 weight decay")
            .flag("nesterov", &O::nesterov, "Nesterov momentum");
    return t;
  }
  void check_consistency() const {
    check(!nesterov || momentum > 0.0, "Option 'nesterov' needs a positive 'momentum'.");
  }
};

template <class Settings>
Settings settings_from(const OptionValues& given) {
  Settings s;
  Settings::table().apply(s, given);
  validate_options(s);
  return s;
}

const bool adamw_registered = register_optimizer(
    {"adamw", "AdamW (LibTorch's torch::optim::AdamW): decoupled weight decay, a point estimate",
     false, &AdamWSettings::table(),
     [](std::vector<::torch::optim::OptimizerParamGroup> groups, const OptionValues& given,
        const OptimizerContext&) -> std::unique_ptr<::torch::optim::Optimizer> {
       const auto s = settings_from<AdamWSettings>(given);
       return std::make_unique<::torch::optim::AdamW>(
           std::move(groups), ::torch::optim::AdamWOptions(s.lr)
                                  .betas({s.beta1, s.beta2})
                                  .eps(s.eps)
                                  .weight_decay(s.weight_decay));
     }});

const bool sgd_registered = register_optimizer(
    {"sgd", "SGD with momentum (LibTorch's torch::optim::SGD), a point estimate", false,
     &SgdSettings::table(),
     [](std::vector<::torch::optim::OptimizerParamGroup> groups, const OptionValues& given,
        const OptimizerContext&) -> std::unique_ptr<::torch::optim::Optimizer> {
       const auto s = settings_from<SgdSettings>(given);
       return std::make_unique<::torch::optim::SGD>(
           std::move(groups), ::torch::optim::SGDOptions(s.lr)
                                  .momentum(s.momentum)
                                  .weight_decay(s.weight_decay)
                                  .nesterov(s.nesterov));
     }});

}  // namespace
}  // namespace blr::torch
