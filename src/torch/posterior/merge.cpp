#include "blr/torch/posterior/merge.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/predictive/predictive.hpp"

namespace blr::torch {
namespace {

std::string shape_text(const ::at::Tensor& x) {
  return fmt::format("[{}]", fmt::join(x.sizes(), ", "));
}

}  // namespace

MergeMethod parse_merge_method(const std::string& name) {
  if (name == "uncertainty") return MergeMethod::kUncertainty;
  if (name == "average") return MergeMethod::kAverage;
  if (name == "task-arithmetic") return MergeMethod::kTaskArithmetic;
  throw Error(fmt::format(
      "Unknown merge method '{}'; use uncertainty, average or task-arithmetic.", name));
}

const char* merge_method_name(MergeMethod method) {
  switch (method) {
    case MergeMethod::kUncertainty: return "uncertainty";
    case MergeMethod::kAverage: return "average";
    case MergeMethod::kTaskArithmetic: return "task-arithmetic";
  }
  return "?";
}

void MergeOptions::validate() const {
  check(scale > 0 && std::isfinite(scale),
        fmt::format("Option 'scale' must be a positive finite number; got {}.", scale));
  check(delta0 >= 0 && std::isfinite(delta0),
        fmt::format("Option 'delta0' must be a non-negative finite number; got {}.", delta0));
}

::at::Tensor merge_tensor(const ::at::Tensor& base, const std::vector<::at::Tensor>& tasks,
                          const ::at::Tensor& base_curvature,
                          const std::vector<::at::Tensor>& task_curvatures,
                          const MergeOptions& options) {
  options.validate();
  check(!tasks.empty(), "Merging needs at least one fine-tuned model.");
  for (size_t t = 0; t < tasks.size(); ++t) {
    check(tasks[t].sizes() == base.sizes(),
          fmt::format("Model {} has a tensor of shape {} where the base has {}.", t + 1,
                      shape_text(tasks[t]), shape_text(base)));
  }
  const auto dbl = [](const ::at::Tensor& x) { return x.detach().to(::at::kDouble); };
  const double n_tasks = static_cast<double>(tasks.size());
  std::vector<::at::Tensor> weights;  // w_t, scalars or per coordinate
  const auto in_double = base.options().dtype(::at::kDouble);
  switch (options.method) {
    case MergeMethod::kAverage:
      weights.assign(tasks.size(), ::at::scalar_tensor(1.0 / n_tasks, in_double));
      break;
    case MergeMethod::kTaskArithmetic:
      weights.assign(tasks.size(), ::at::scalar_tensor(options.scale, in_double));
      break;
    case MergeMethod::kUncertainty: {
      check(base_curvature.defined() && task_curvatures.size() == tasks.size(),
            "Uncertainty-weighted merging needs a curvature for the base and for every model.");
      const auto c0 = dbl(base_curvature);
      check(c0.sizes() == base.sizes(), "The base curvature has another shape than the base.");
      // The prior part C₀ + δ₀ is added once, in the same order in H̄ and in every numerator, so
      // that T = 1, α = 1 gives w = 1 exactly.
      const auto prior = c0 + options.delta0;
      auto h_bar = ::at::zeros_like(prior);
      std::vector<::at::Tensor> c(tasks.size());
      for (size_t t = 0; t < tasks.size(); ++t) {
        check(task_curvatures[t].defined() && task_curvatures[t].sizes() == base.sizes(),
              fmt::format("The curvature of model {} has another shape than its parameters.",
                          t + 1));
        c[t] = dbl(task_curvatures[t]);
        h_bar = h_bar + options.scale * c[t];
      }
      h_bar = h_bar + prior;
      check((h_bar > 0).all().item<bool>() && ::at::isfinite(h_bar).all().item<bool>(),
            "The merged precision H̄ = αΣC_t + C₀ + δ₀ is not positive and finite everywhere; "
            "give --delta0 > 0.");
      for (size_t t = 0; t < tasks.size(); ++t) {
        weights.push_back(options.scale * (c[t] + prior) / h_bar);
      }
      break;
    }
  }
  auto sum_w = ::at::zeros_like(weights[0]);
  auto out = ::at::zeros_like(dbl(base));
  for (size_t t = 0; t < tasks.size(); ++t) {
    sum_w = sum_w + weights[t];
    out = out + weights[t] * dbl(tasks[t]);
  }
  out = out + (1.0 - sum_w) * dbl(base);
  return out.to(base.scalar_type());
}

std::vector<::at::Tensor> merge_curvature(const Model& model, ::torch::optim::Optimizer& optimizer,
                                          const ::at::Tensor& inputs, const ::at::Tensor& labels,
                                          std::string& source) {
  if (auto* gaussian = as_gaussian_posterior(optimizer)) {
    check(gaussian->posterior_ready(),
          "This Laplace posterior has no curvature yet; fit it with blr laplace.");
    auto precision = gaussian->marginal_precision();
    for (const auto& p : precision) {
      check(p.isfinite().all().item<bool>(),
            "A last-layer Laplace posterior has no curvature for the other weights; merging "
            "needs one fitted on all weights (blr laplace --subset all).");
    }
    source = gaussian->posterior_name() +
             (gaussian->kronecker() ? " precision (1/σ², σ² the diagonal of the inverse)"
                                    : " precision");
    return precision;
  }
  if (auto* variational = as_variational(optimizer)) {
    check(!variational->has_posterior(),
          fmt::format("This checkpoint holds a posterior that is not Gaussian (e.g. BayesBiNN's "
                      "Bernoulli); merging needs a Gaussian posterior ({}) or a point estimate.",
                      fmt::join(gaussian_posterior_names(), ", ")));
  }
  const LaplaceCurvatureResult fit = laplace_curvature(model, inputs, labels);
  const double n = static_cast<double>(fit.examples);
  std::vector<::at::Tensor> out;
  for (const auto& g : fit.curvature) out.push_back(g * n);
  source = fmt::format("N·diag GGN over {} training examples", fit.examples);
  return out;
}

}  // namespace blr::torch
