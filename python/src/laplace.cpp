// The post-hoc Laplace posterior for Python (`blr.Laplace`, python/blr/laplace.py), laplace-torch's
// workflow over the C++ pipeline of `blr laplace`: the model arrives as the bytes of
// torch.jit.save (read behind the model file's defences, nn/script_file.hpp), the curvature is
// laplace_curvature (laplace_fit.hpp), the posterior the registry's "laplace" entry
// (optim/laplace.hpp), δ chosen by the marginal likelihood or on validation data
// (laplace_prior_search.hpp), and the predictive the linearised probit (laplace_predictive.hpp) or
// Monte Carlo draws (predictive.hpp): the same functions as the command, so the same numbers on
// the same model and data (python/tests/test_laplace.py compares them with `blr laplace`). A
// regression (Gaussian likelihood with noise σ) has σ as a property, chosen by the marginal
// likelihood on request, and a Gaussian predictive of f (the linearised one, or draws).
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/posterior/laplace_prior_search.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/predictive/predictive.hpp"

namespace blr::python {

namespace {

using ::blr::torch::LaplaceCurvature;
using ::blr::torch::LaplaceCurvatureOptions;
using ::blr::torch::LaplaceCurvatureResult;
using ::blr::torch::LaplaceLikelihood;
using ::blr::torch::LaplacePosterior;
using ::blr::torch::LaplaceStructure;
using ::blr::torch::LaplaceSubset;
using ::blr::torch::Model;

/// Inputs (N×…, floating point) and class labels (N, integers) that belong together.
void check_examples(const ::at::Tensor& x, const ::at::Tensor& y, const std::string& what) {
  check(x.defined() && x.dim() >= 1 && x.size(0) > 0,
        fmt::format("{}: the inputs must be a tensor with at least one example (N×…).", what));
  check(x.is_floating_point(),
        fmt::format("{}: the inputs must be floating point; got {}.", what,
                    c10::toString(x.scalar_type())));
  check(y.defined() && y.dim() == 1 && y.size(0) == x.size(0),
        fmt::format("{}: the labels must be a vector of {} class indices, one per input; got "
                    "shape {}.",
                    what, x.size(0), y.defined() ? c10::str(y.sizes()) : std::string("none")));
  check(!y.is_floating_point() && !y.is_complex() && y.scalar_type() != ::at::kBool,
        fmt::format("{}: the labels must be integer class indices; got {}.", what,
                    c10::toString(y.scalar_type())));
}

/// Inputs (N×…, floating point) and regression targets (N or N×D, floating point, finite).
void check_targets(const ::at::Tensor& x, const ::at::Tensor& y, const std::string& what) {
  check(x.defined() && x.dim() >= 1 && x.size(0) > 0 && x.is_floating_point(),
        fmt::format("{}: the inputs must be a floating-point tensor with at least one example "
                    "(N×…).",
                    what));
  check(y.defined() && y.dim() >= 1 && y.dim() <= 2 && y.size(0) == x.size(0) &&
            y.is_floating_point(),
        fmt::format("{}: the targets must be a floating-point tensor of {} rows (N or N×D), one "
                    "per input; got {}.",
                    what, x.size(0),
                    y.defined() ? fmt::format("{} of shape {}", c10::toString(y.scalar_type()),
                                              c10::str(y.sizes()))
                                : std::string("none")));
  check(y.isfinite().all().item<bool>(),
        fmt::format("{}: the targets contain a value that is not finite.", what));
}

class PyLaplace {
 public:
  PyLaplace(const py::bytes& model_archive, const std::string& origin, const std::string& subset,
            const std::string& curvature, const std::string& structure, int64_t seed,
            const std::string& likelihood, double noise_std)
      : seed_(seed) {
    check(likelihood == "classification" || likelihood == "regression",
          fmt::format("Laplace: the likelihood must be 'classification' or 'regression'; got "
                      "'{}'.",
                      likelihood));
    check(noise_std > 0 && std::isfinite(noise_std),
          fmt::format("Laplace: sigma_noise must be a positive finite number; got {}.",
                      noise_std));
    options_.likelihood = likelihood == "regression" ? LaplaceLikelihood::kRegression
                                                     : LaplaceLikelihood::kClassification;
    options_.noise_std = noise_std;
    // Read as blr laplace reads its flags: laplace-torch's "last_layer" is the earlier spelling
    // of "last-layer".
    const auto read = ::blr::torch::read_laplace_choices(
        {{"subset", subset}, {"curvature", curvature}, {"structure", structure}});
    check(seed >= 0, fmt::format("The seed must be ≥ 0; got {}.", seed));
    options_.subset = read.options.subset;
    options_.curvature = read.options.curvature;
    options_.structure = read.options.structure;
    subset_ = read.spelling("subset");
    curvature_name_ = read.spelling("curvature");
    structure_ = read.spelling("structure");
    auto bytes = std::make_shared<const std::string>(std::string(model_archive));
    model_ = ::blr::torch::load_script_model(std::move(bytes), origin);
  }

  /// The curvature over (x, y) at the model's parameters, then δ by the marginal likelihood.
  void fit(const ::at::Tensor& x, const ::at::Tensor& y, int64_t batch_size) {
    check_data(x, y, "Laplace.fit");
    check(batch_size >= 1, fmt::format("The batch size must be ≥ 1; got {}.", batch_size));
    options_.batch_size = batch_size;
    {
      py::gil_scoped_release release;
      fit_ = ::blr::torch::laplace_curvature(model_, x, targets(y), options_);
    }
    make_posterior(::blr::torch::laplace_optimal_prior_precision(*fit_), "probit");
  }

  /// Regression: σ of the Gaussian likelihood (the fit's, or the one the fit will use).
  double noise_std() const { return fit_ ? fit_->noise_std : options_.noise_std; }
  /// Regression: σ; a fitted posterior is rescaled to it (no pass over the data), δ kept.
  void set_noise_std(double sigma) {
    check(regression(), "Laplace: sigma_noise belongs to a regression likelihood.");
    check(sigma > 0 && std::isfinite(sigma),
          fmt::format("Laplace: sigma_noise must be a positive finite number; got {}.", sigma));
    options_.noise_std = sigma;
    if (!fit_) return;
    const double delta = prior_precision();
    fit_ = ::blr::torch::laplace_with_noise_std(*fit_, sigma);
    make_posterior(delta, link_);
  }
  /// Regression: the σ that maximises log Z at δ (or jointly with δ when none is given).
  double optimal_noise_std(std::optional<double> delta) {
    fitted();
    check(regression(), "Laplace: sigma_noise belongs to a regression likelihood.");
    return ::blr::torch::laplace_optimal_noise_std(*fit_, delta ? *delta : 0.0);
  }

  double prior_precision() { return fitted().options().prior_precision; }
  void set_prior_precision(double delta) {
    check(delta > 0 && std::isfinite(delta),
          fmt::format("The prior precision must be a positive finite number; got {}.", delta));
    fitted().set_prior_precision(delta);
  }
  double optimal_prior_precision() {
    fitted();
    return ::blr::torch::laplace_optimal_prior_precision(*fit_);
  }
  double log_marginal_likelihood(std::optional<double> delta, std::optional<double> sigma) {
    fitted();
    const double d = delta ? *delta : prior_precision();
    check(d > 0 && std::isfinite(d),
          fmt::format("The prior precision must be a positive finite number; got {}.", d));
    if (!sigma) return ::blr::torch::laplace_log_marginal_likelihood(*fit_, d);
    check(regression(), "Laplace: sigma_noise belongs to a regression likelihood.");
    return ::blr::torch::laplace_log_marginal_likelihood(
        ::blr::torch::laplace_with_noise_std(*fit_, *sigma), d);
  }

  /// laplace-torch's gridsearch: leaves the posterior at the δ with the lowest validation NLL.
  /// The predictive compared is `link`'s ("probit" or "monte-carlo" with `samples` draws).
  py::dict gridsearch(const ::at::Tensor& x, const ::at::Tensor& y, const std::string& link,
                      int samples, double min, double max, int points) {
    fitted();
    check_data(x, y, "Laplace.optimize_prior_precision");
    check_link(link);
    check(samples >= 1, fmt::format("The number of samples must be ≥ 1; got {}.", samples));
    ::blr::torch::PriorPrecisionGrid grid{min, max, points};
    grid.validate();
    if (link != link_) make_posterior(prior_precision(), link);
    LaplacePosterior& posterior = fitted();
    ::blr::torch::PriorPrecisionSearch search;
    {
      py::gil_scoped_release release;
      search = ::blr::torch::laplace_prior_precision_search(
          model_, posterior, x, targets(y), samples, grid, regression() ? fit_->noise_std : 0.0);
    }
    py::dict out;
    out["prior_precision"] = search.best;
    out["validation_nll"] = search.best_nll;
    out["grid"] = search.grid;
    out["nll"] = search.nll;
    out["at_edge"] = search.at_edge();
    return out;
  }

  /// Log-probabilities N×C of the predictive: the linearised probit, or `samples` Monte Carlo draws.
  ::at::Tensor log_probs(const ::at::Tensor& x, const std::string& link, int samples,
                         int64_t batch_size) {
    LaplacePosterior& posterior = fitted();
    check(!regression(),
          "Laplace: a regression's predictive is Gaussian; call the posterior (la(x)) for its "
          "mean and variance.");
    check_predictive(x, link, samples, batch_size);
    py::gil_scoped_release release;
    if (link == "probit") {
      return ::blr::torch::linearised_probit_log_probs(model_, posterior, x, batch_size);
    }
    return ::blr::torch::predictive_log_probs(model_, posterior, x, samples, batch_size)
        .to(::at::kDouble);
  }

  /// Regression: the predictive of f, mean and variance (N×D each, without σ²): the linearised
  /// N(f*, diag(JΣJᵀ)) ("probit"), or the mean and the variance over `samples` draws
  /// ("monte-carlo").
  std::pair<::at::Tensor, ::at::Tensor> regression_predictive(const ::at::Tensor& x,
                                                              const std::string& link, int samples,
                                                              int64_t batch_size) {
    LaplacePosterior& posterior = fitted();
    check(regression(), "Laplace: the predictive mean and variance are a regression's; a "
                        "classifier's predictive is predictive_log_probs(x).");
    check_predictive(x, link, samples, batch_size);
    py::gil_scoped_release release;
    if (link == "probit") {
      return ::blr::torch::linearised_outputs(model_, posterior, x, batch_size);
    }
    const auto draws =
        ::blr::torch::predictive_outputs(model_, posterior, {x}, samples, batch_size)[0]
            .to(::at::kDouble);
    const auto f = draws.reshape({draws.size(0), x.size(0), -1});
    return {f.mean(0), f.var(0, /*unbiased=*/false)};
  }

  std::vector<::at::Tensor> posterior_variance() { return fitted().posterior_variance(); }
  /// Ĝ per parameter (None outside the subset and for Kronecker-factored weights).
  std::vector<std::optional<::at::Tensor>> curvature() {
    fitted();
    std::vector<std::optional<::at::Tensor>> out;
    for (const auto& c : fit_->curvature) {
      out.push_back(c.defined() ? std::optional<::at::Tensor>(c) : std::nullopt);
    }
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, p] : model_.named_parameters()) out.push_back(name);
    return out;
  }
  std::vector<::at::Tensor> mean() const { return model_.parameters(); }
  int64_t weights() {
    fitted();
    return fit_->subset_size;
  }
  int64_t examples() {
    fitted();
    return fit_->examples;
  }
  double train_nll_sum() {
    fitted();
    return fit_->nll_sum;
  }

 private:
  bool regression() const { return options_.likelihood == LaplaceLikelihood::kRegression; }
  /// Targets as the curvature takes them: class indices, or the regression's floats as given.
  ::at::Tensor targets(const ::at::Tensor& y) const {
    return regression() ? y : y.to(::at::kLong);
  }
  void check_data(const ::at::Tensor& x, const ::at::Tensor& y, const std::string& what) const {
    if (regression()) {
      check_targets(x, y, what);
    } else {
      check_examples(x, y, what);
    }
  }

  /// A predictive's arguments: inputs, link, draws and batch size.
  static void check_predictive(const ::at::Tensor& x, const std::string& link, int samples,
                               int64_t batch_size) {
    check(x.defined() && x.dim() >= 1 && x.size(0) > 0 && x.is_floating_point(),
          "Laplace.predictive: the inputs must be a floating-point tensor with at least one "
          "example (N×…).");
    check_link(link);
    check(samples >= 1, fmt::format("The number of samples must be ≥ 1; got {}.", samples));
    check(batch_size >= 1, fmt::format("The batch size must be ≥ 1; got {}.", batch_size));
  }

  static void check_link(const std::string& link) {
    // "mc" is laplace-torch's spelling (and blr's before 2026-11-29) of "monte-carlo".
    check(link == "probit" || link == "monte-carlo" || link == "mc",
          fmt::format("The predictive link must be 'probit' or 'monte-carlo'; got '{}'.", link));
  }

  /// The registry's "laplace" posterior at prior precision `delta` with the predictive `link`
  /// (what a prior-precision search compares), over the fitted curvature: the posterior
  /// `blr laplace` builds (apps/blr/torch/commands.cpp, run_laplace).
  void make_posterior(double delta, const std::string& link) {
    const ::blr::torch::OptimizerContext context{fit_->examples, static_cast<uint64_t>(seed_), 0};
    posterior_ = ::blr::torch::make_laplace_posterior(
        model_.parameters(),
        {{"prior_precision", delta},
         {"ess", static_cast<double>(fit_->examples)},
         {"subset", subset_},
         {"curvature", curvature_name_},
         {"structure", structure_},
         {"predictive", link == "probit" ? "probit" : "monte-carlo"}},
        context);
    posterior_->set_curvature(fit_->curvature, fit_->factors);
    link_ = link;
  }

  LaplacePosterior& fitted() {
    check(posterior_ != nullptr && fit_.has_value(),
          "The Laplace posterior is not fitted yet; call fit(...) first.");
    return *posterior_;
  }

  int64_t seed_;
  LaplaceCurvatureOptions options_;
  std::string subset_, curvature_name_, structure_;
  std::string link_;  // the posterior's predictive, for a prior-precision search
  Model model_;
  std::optional<LaplaceCurvatureResult> fit_;
  std::unique_ptr<LaplacePosterior> posterior_;
};

}  // namespace

void bind_laplace(py::module_& m) {
  py::class_<PyLaplace>(m, "Laplace")
      .def(py::init<const py::bytes&, const std::string&, const std::string&, const std::string&,
                    const std::string&, int64_t, const std::string&, double>(),
           py::arg("model_archive"), py::arg("origin"), py::arg("subset"), py::arg("curvature"),
           py::arg("structure"), py::arg("seed"), py::arg("likelihood"), py::arg("noise_std"))
      .def("fit", &PyLaplace::fit, py::arg("x"), py::arg("y"), py::arg("batch_size"))
      .def_property("prior_precision", &PyLaplace::prior_precision,
                    &PyLaplace::set_prior_precision)
      .def("optimal_prior_precision", &PyLaplace::optimal_prior_precision)
      .def_property("noise_std", &PyLaplace::noise_std, &PyLaplace::set_noise_std)
      .def("optimal_noise_std", &PyLaplace::optimal_noise_std,
           py::arg("prior_precision") = py::none())
      .def("log_marginal_likelihood", &PyLaplace::log_marginal_likelihood,
           py::arg("prior_precision") = py::none(), py::arg("noise_std") = py::none())
      .def("regression_predictive", &PyLaplace::regression_predictive, py::arg("x"),
           py::arg("link"), py::arg("samples"), py::arg("batch_size"))
      .def("gridsearch", &PyLaplace::gridsearch, py::arg("x"), py::arg("y"), py::arg("link"),
           py::arg("samples"),
           py::arg("min"), py::arg("max"), py::arg("points"))
      .def("log_probs", &PyLaplace::log_probs, py::arg("x"), py::arg("link"), py::arg("samples"),
           py::arg("batch_size"))
      .def("posterior_variance", &PyLaplace::posterior_variance)
      .def("curvature", &PyLaplace::curvature)
      .def("names", &PyLaplace::names)
      .def("mean", &PyLaplace::mean)
      .def_property_readonly("weights", &PyLaplace::weights)
      .def_property_readonly("examples", &PyLaplace::examples)
      .def_property_readonly("train_nll_sum", &PyLaplace::train_nll_sum);
}

}  // namespace blr::python
