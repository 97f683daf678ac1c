// The deep-learning rows of Table 1 at the LibTorch layer (table1_rows.hpp): three rules on the
// mean-field driver, built from the core's policies, against LibTorch's own optimizers.
#include "blr/torch/checks/table1_rows.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "blr/algorithms/rmsprop_adam.hpp"
#include "../optim/gaussian_impl.hpp"

namespace blr::torch {
namespace {

// ---- options and rules: the core's policy, gradients at μ (no weight noise) ----------------

struct SgdRowOptions : OptimizerOptionsFor<SgdRowOptions> {
  static constexpr int64_t mc_samples = 1;  ///< gradients at μ: one per step
  double lr = 0.05;
  double momentum = 0.9;
  static const OptionTable<SgdRowOptions>& table() {
    using O = SgdRowOptions;
    static const OptionTable<O> t =
        OptionTable<O>("SGD row")
            .number("lr", &O::lr, Range::positive(), "learning rate α")
            .number("momentum", &O::momentum, Range::between(0.0, 1.0, false, true),
                    "heavy-ball momentum β");
    return t;
  }
  void validate() const { validate_options(*this); }
};

struct RmspropRowOptions : OptimizerOptionsFor<RmspropRowOptions> {
  static constexpr int64_t mc_samples = 1;  ///< gradients at μ: one per step
  double lr = 0.01;
  double alpha = 0.99;  ///< PyTorch's smoothing constant: weight of the old average (1 − β)
  double eps = 1e-8;
  static const OptionTable<RmspropRowOptions>& table() {
    using O = RmspropRowOptions;
    static const OptionTable<O> t =
        OptionTable<O>("RMSprop row")
            .number("lr", &O::lr, Range::positive(), "learning rate α")
            .number("alpha", &O::alpha, Range::between(0.0, 1.0, false, true), "smoothing constant")
            .number("eps", &O::eps, Range::positive(), "denominator offset");
    return t;
  }
  void validate() const { validate_options(*this); }
};

struct AdamRowOptions : OptimizerOptionsFor<AdamRowOptions> {
  static constexpr int64_t mc_samples = 1;  ///< gradients at μ: one per step
  double lr = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  static const OptionTable<AdamRowOptions>& table() {
    using O = AdamRowOptions;
    static const OptionTable<O> t =
        OptionTable<O>("Adam row")
            .number("lr", &O::lr, Range::positive(), "learning rate α")
            .number("beta1", &O::beta1, Range::between(0.0, 1.0, false, true), "β₁")
            .number("beta2", &O::beta2, Range::between(0.0, 1.0, false, true), "β₂")
            .number("eps", &O::eps, Range::positive(), "denominator offset");
    return t;
  }
  void validate() const { validate_options(*this); }
};

/// Gradients at μ, no curvature: the precision stays at its initial value.
struct GradientOnly {
  static constexpr int kVariants = 1;
  static constexpr Statistic kStatistics[kVariants] = {Statistic::kNone};
  template <class O>
  static int variant(const O&) { return 0; }
  template <class O>
  static Statistic statistic(const O&) { return Statistic::kNone; }
  template <class T>
  struct Estimate {};
  template <class T, class O>
  static Estimate<T> estimate_coefficients(const O&) { return {}; }
  template <int kVariant, class V, class T>
  static void estimate(const Estimate<T>&, const V& g, const V&, stage::Coordinate<V>& c) {
    c.gradient = g;
    c.curvature = g * T(0);
  }
};

/// SGD with heavy-ball momentum: q = N(μ, I) (S = 1 throughout), u ← βu + ĝ, μ ← μ − αu
/// (the gradient-average stage with weight 1, App. F eq. 77's momentum).
struct SgdRowRule : GradientOnly {
  using Options = SgdRowOptions;
  using Policy = ::blr::Policy<stage::GradientAverage>;
  static constexpr const char* kName = "SGD (BLR)";
  static constexpr bool kPerturbs = false;
  static Policy policy(const Options& o) {
    Policy p;
    p.mean_rate = Schedule::constant(o.lr);
    p.precision_rate = Schedule::constant(0.0);
    p.get<stage::GradientAverage>() = {o.momentum, /*debias=*/false, /*heavy_ball=*/true};
    return p;
  }
  static double precision_keep(const Options&) { return 1.0; }
  static Affine posterior(const Options&) { return {1.0, 0.0}; }
  static double initial_precision(const Options&) { return 1.0; }
  static double curvature_offset(const Options&) { return 0.0; }
};

/// RMSprop: the core preset (make_rmsprop) with PyTorch's ε outside the square root.
struct RmspropRowRule : DirectEstimate<Statistic::kSquaredGradient> {
  using Options = RmspropRowOptions;
  using Policy = ::blr::RmspropPolicy;
  static constexpr const char* kName = "RMSprop (BLR)";
  static constexpr bool kPerturbs = false;
  static Policy policy(const Options& o) {
    RmspropOptions core;
    core.lr = Schedule::constant(o.lr);
    core.beta = 1.0 - o.alpha;
    core.epsilon = o.eps;
    return make_rmsprop(core).policy;
  }
  static double precision_keep(const Options& o) { return o.alpha; }
  static Affine posterior(const Options&) { return {1.0, 0.0}; }
  static double initial_precision(const Options&) { return 0.0; }
  static double curvature_offset(const Options&) { return 0.0; }
};

/// Adam: the core preset (make_adam).
struct AdamRowRule : DirectEstimate<Statistic::kSquaredGradient> {
  using Options = AdamRowOptions;
  using Policy = ::blr::AdamPolicy;
  static constexpr const char* kName = "Adam (BLR)";
  static constexpr bool kPerturbs = false;
  static Policy policy(const Options& o) {
    AdamOptions core;
    core.lr = Schedule::constant(o.lr);
    core.beta1 = o.beta1;
    core.beta2 = o.beta2;
    core.epsilon = o.eps;
    return make_adam(core).policy;
  }
  static double precision_keep(const Options& o) { return o.beta2; }
  static Affine posterior(const Options&) { return {1.0, 0.0}; }
  static double initial_precision(const Options&) { return 0.0; }
  static double curvature_offset(const Options&) { return 0.0; }
};

}  // namespace

template class GaussianOptimizer<SgdRowRule>;
template class GaussianOptimizer<RmspropRowRule>;
template class GaussianOptimizer<AdamRowRule>;

namespace {

constexpr int kSteps = 60;
constexpr int kBatch = 16;
constexpr double kTolerance = 1e-12;

/// A 5–8–3 tanh MLP in float64 with fixed initial weights.
::torch::nn::Sequential row_model() {
  ::torch::manual_seed(0);
  ::torch::nn::Sequential m(::torch::nn::Linear(5, 8), ::torch::nn::Functional(::torch::tanh),
                            ::torch::nn::Linear(8, 3));
  m->to(::torch::kFloat64);
  return m;
}

/// Runs `blr_opt` on one copy of the model and `reference` on another over the same minibatches
/// (cross-entropy on synthetic 3-class data of 200 points); the largest parameter difference.
template <class Blr>
ReductionResult compare(typename Blr::Options options,
                        const std::function<std::unique_ptr<::torch::optim::Optimizer>(
                            std::vector<::at::Tensor>)>& make_reference) {
  auto blr_model = row_model();
  auto ref_model = row_model();
  ::torch::manual_seed(1);
  const ::at::Tensor x = ::torch::randn({200, 5}, ::torch::kFloat64);
  const ::at::Tensor y = ::torch::randint(0, 3, {200}, ::torch::kLong);
  const ::at::Tensor order = ::torch::randint(0, 200, {kSteps, kBatch}, ::torch::kLong);
  Blr blr_opt(blr_model->parameters(), options);
  auto ref_opt = make_reference(ref_model->parameters());
  const auto blr_params = blr_model->parameters();
  const auto ref_params = ref_model->parameters();
  double deviation = 0.0;
  for (int t = 0; t < kSteps; ++t) {
    const ::at::Tensor rows = order[t];
    const ::at::Tensor xb = x.index_select(0, rows), yb = y.index_select(0, rows);
    {
      SampledParameters sample(blr_opt, /*train=*/true);  // no weight noise: θ = μ
      blr_opt.zero_grad();
      ::torch::nn::functional::cross_entropy(blr_model->forward(xb), yb).backward();
    }
    blr_opt.step();
    ref_opt->zero_grad();
    ::torch::nn::functional::cross_entropy(ref_model->forward(xb), yb).backward();
    ref_opt->step();
    for (size_t i = 0; i < blr_params.size(); ++i) {
      deviation = std::max(deviation, (blr_params[i] - ref_params[i]).abs().max().item<double>());
    }
  }
  return {deviation, kTolerance,
          fmt::format("{} steps of every parameter of a 5-8-3 MLP, float64", kSteps)};
}

const char* const kProblem = "float64 MLP 5-8-3, cross-entropy, n=200, M=16, 60 steps";

}  // namespace

std::vector<Table1Row> torch_table1_rows() {
  std::vector<Table1Row> rows;
  rows.push_back({"torch-sgd-momentum", "Gaussian, fixed covariance",
                  "delta (1st order), heavy-ball gradient average",
                  "torch::optim::SGD (momentum 0.9)", kProblem,
                  "src/torch/optim/table1_rows.cpp", [] {
                    SgdRowOptions o;
                    return compare<GaussianOptimizer<SgdRowRule>>(o, [&](auto params) {
                      return std::make_unique<::torch::optim::SGD>(
                          params, ::torch::optim::SGDOptions(o.lr).momentum(o.momentum));
                    });
                  }});
  rows.push_back({"torch-rmsprop", "Gaussian, diagonal", "delta, Ĥ ≈ ĝ², √ scaling",
                  "torch::optim::RMSprop", kProblem, "include/blr/algorithms/rmsprop_adam.hpp",
                  [] {
                    RmspropRowOptions o;
                    return compare<GaussianOptimizer<RmspropRowRule>>(o, [&](auto params) {
                      return std::make_unique<::torch::optim::RMSprop>(
                          params, ::torch::optim::RMSpropOptions(o.lr).alpha(o.alpha).eps(o.eps));
                    });
                  }});
  rows.push_back({"torch-adam", "Gaussian, diagonal", "delta, Ĥ ≈ ĝ², √ scaling, debiasing",
                  "torch::optim::Adam", kProblem, "include/blr/algorithms/rmsprop_adam.hpp", [] {
                    AdamRowOptions o;
                    return compare<GaussianOptimizer<AdamRowRule>>(o, [&](auto params) {
                      return std::make_unique<::torch::optim::Adam>(
                          params, ::torch::optim::AdamOptions(o.lr)
                                      .betas(std::make_tuple(o.beta1, o.beta2))
                                      .eps(o.eps));
                    });
                  }});
  return rows;
}

}  // namespace blr::torch
