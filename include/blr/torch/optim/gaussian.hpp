// A diagonal-Gaussian BLR optimizer from a rule: its options, its estimate of (ĝ, Ĥ) per
// coordinate, and the core's policy — the driver (mean_field.hpp) does the rest.
//
// A rule is a small struct (see ivon.hpp, vadam.hpp, vogn.hpp):
//
//   struct IvonRule {
//     using Options = IvonOptions;                 // option table, validation
//     using Policy = blr::IvonPolicy;              // the core's stage list (blr/rule/policy.hpp)
//     static constexpr const char* kName = "IVON";
//     static constexpr bool kPerturbs = true;       // false: gradients at μ (OGN)
//     static constexpr int kVariants = 2;          // compile-time variants of the estimate
//     static int variant(const Options&);          // which one these options use
//     static Statistic statistic(const Options&);  // what restore collects
//     static Policy policy(const Options&);        // the core policy, in this optimizer's units
//     static double precision_keep(const Options&);   // weight of P in its average (β₂ exactly)
//     static Affine posterior(const Options&);     // posterior precision a·P + b
//     static double initial_precision(const Options&);
//     static double curvature_offset(const Options&);   // own curvature = P − offset
//     static constexpr bool kGeneralPrior = true;   // optional: takes set_prior (δ only in stages)
//     static Options at_learning_rate(const Options&, double initial_lr);  // optional: the options
//                                                  // in force when a schedule has moved lr from
//                                                  // the group's initial_lr (AdaBayes)
//     struct Estimate { ... };  static Estimate estimate_coefficients(const Options&);
//     template <int kVariant, class V, class T>
//     static void estimate(const Estimate&, const V& g, const V& stat, stage::Coordinate<V>& c);
//   };
//
// `estimate` turns the averaged gradient and statistic of the step into c.gradient and
// c.curvature (a rule that takes them as they are derives from DirectEstimate<statistic>, which
// supplies kVariants … estimate); the core's coordinate_step then does the BLR step. One function template per
// rule is compiled into the fused CPU loops (float, double; AVX-512/AVX2/baseline) and into the
// tensor-operation path: each equation is written once, for both layers and every device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blr/rule/policy.hpp"
#include "blr/torch/optim/mean_field.hpp"
#include "blr/torch/optim/options.hpp"

namespace blr::torch {

/// The part of a rule whose gradient and curvature estimates are the step's gradient and one
/// statistic as they are (ĝ = g, Ĥ = stat; Vadam, VOGN, OGN): one variant, no coefficients.
template <Statistic kStatistic>
struct DirectEstimate {
  static constexpr int kVariants = 1;
  static constexpr Statistic kStatistics[kVariants] = {kStatistic};
  template <class O>
  static int variant(const O&) {
    return 0;
  }
  template <class O>
  static Statistic statistic(const O&) {
    return kStatistic;
  }
  template <class T>
  struct Estimate {};
  template <class T, class O>
  static Estimate<T> estimate_coefficients(const O&) {
    return {};
  }
  template <int kVariant, class V, class T>
  static void estimate(const Estimate<T>&, const V& g, const V& stat, stage::Coordinate<V>& c) {
    c.gradient = g;
    c.curvature = stat;
  }
};

template <class Rule>
class GaussianOptimizer : public MeanFieldOptimizer {
 public:
  using Options = typename Rule::Options;

  GaussianOptimizer(std::vector<::torch::optim::OptimizerParamGroup> param_groups,
                    Options defaults);
  GaussianOptimizer(std::vector<::at::Tensor> params, Options defaults);

  /// The optimizer's options (the defaults of its param groups).
  const Options& options() const { return static_cast<const Options&>(defaults()); }
  /// The options in force for param group `group`.
  const Options& options(size_t group) const {
    return group_options_as<Options>(param_groups_.at(group), group, name());
  }
  /// A param group whose options are `defaults` with `overrides` applied through the option
  /// table (the per-group merge: what a group does not set, it takes from the defaults).
  static ::torch::optim::OptimizerParamGroup group(std::vector<::at::Tensor> params,
                                                   const Options& defaults,
                                                   const OptionValues& overrides) {
    auto options = std::make_unique<Options>(defaults);
    Options::table().apply(*options, overrides);
    return ::torch::optim::OptimizerParamGroup(std::move(params), std::move(options));
  }

  std::string name() const override { return Rule::kName; }
  int training_samples() const override {
    if constexpr (!Rule::kPerturbs) return 1;
    return static_cast<int>(options().mc_samples);
  }

 protected:
  Statistic statistic() const override { return Rule::statistic(options()); }
  bool perturbs() const override { return Rule::kPerturbs; }
  uint64_t seed() const override {
    if constexpr (requires { options().seed; }) return options().seed;
    return 0;
  }
  Affine posterior(size_t group) const override { return Rule::posterior(options(group)); }
  double initial_precision(size_t group) const override {
    return Rule::initial_precision(options(group));
  }
  double curvature_offset(size_t group) const override {
    return Rule::curvature_offset(options(group));
  }
  void validate() const override {
    validate_groups(param_groups_, options(), name());
    if constexpr (requires { Rule::at_learning_rate(options(), 1.0); }) {
      for (size_t g = 0; g < param_groups_.size(); ++g) {  // the options a schedule puts in force
        Rule::at_learning_rate(options(g), initial_lr(g));
      }
    }
  }
  bool supports_prior() const override {
    if constexpr (requires { Rule::kGeneralPrior; }) return Rule::kGeneralPrior;
    return false;
  }
  bool update(size_t group, ::at::Tensor& param, Slot& slot, const UpdateInput& in,
              bool fused) override;

 private:
  bool update_with(const Options& o, ::at::Tensor& param, Slot& slot, const UpdateInput& in,
                   bool fused);
};

}  // namespace blr::torch
