// The Laplace fit (laplace_fit.hpp): diagonal GGN / empirical Fisher over the training set, the
// marginal likelihood of the prior precision and its maximiser.
#include "blr/torch/posterior/laplace_fit.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/math/tools/minima.hpp>

#include <cmath>
#include <cstdint>

#include "blr/core/error.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/optim/kronecker_gaussian.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "blr/torch/train/likelihood.hpp"

namespace blr::torch {

namespace {

// Σ_i ℓ_i of a Gaussian likelihood at σ: RSS/(2σ²) + N·D (log σ + ½ log 2π).
double gaussian_nll_sum(const LaplaceCurvatureResult& fit, double sigma) {
  return fit.residual_sum_squares / (2 * sigma * sigma) +
         static_cast<double>(fit.target_values) * (std::log(sigma) + 0.5 * std::log(2 * M_PI));
}

std::string module_path(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? std::string() : name.substr(0, dot);
}

// Turns gradients off for the parameters outside the subset for a scope (nothing flows into
// layers whose curvature is not wanted), and restores every flag and clears the gradients after.
class SubsetGradients {
 public:
  SubsetGradients(std::vector<::at::Tensor> params, const std::vector<bool>& in)
      : params_(std::move(params)) {
    for (size_t j = 0; j < params_.size(); ++j) {
      flags_.push_back(params_[j].requires_grad());
      params_[j].requires_grad_(in[j]);
    }
  }
  ~SubsetGradients() {
    for (size_t j = 0; j < params_.size(); ++j) {
      params_[j].requires_grad_(flags_[j]);
      params_[j].mutable_grad().reset();
    }
  }
  SubsetGradients(const SubsetGradients&) = delete;
  SubsetGradients& operator=(const SubsetGradients&) = delete;

 private:
  std::vector<::at::Tensor> params_;
  std::vector<bool> flags_;
};

}  // namespace

std::vector<bool> laplace_subset(const std::vector<std::string>& names, LaplaceSubset subset) {
  check(!names.empty(), "The model has no parameters, so it has no Laplace posterior.");
  std::vector<bool> in(names.size(), true);
  if (subset == LaplaceSubset::kLastLayer) {
    const std::string last = module_path(names.back());
    for (size_t j = 0; j < names.size(); ++j) in[j] = module_path(names[j]) == last;
  }
  return in;
}

LaplaceCurvatureResult laplace_curvature(const Model& model, const ::at::Tensor& inputs,
                                         const ::at::Tensor& labels,
                                         const LaplaceCurvatureOptions& options) {
  check(options.batch_size >= 1,
        fmt::format("The Laplace batch size must be at least 1; got {}.", options.batch_size));
  const int64_t n = inputs.size(0);
  const bool regression = options.likelihood == LaplaceLikelihood::kRegression;
  if (regression) {
    check(n >= 1 && labels.dim() >= 1 && labels.dim() <= 2 && labels.size(0) == n &&
              labels.is_floating_point(),
          fmt::format("The Laplace fit of a regression needs N ≥ 1 inputs and N floating-point "
                      "targets (N or N×D); got {} inputs and targets of shape [{}].",
                      n, fmt::join(labels.sizes(), ", ")));
    check(options.noise_std > 0 && std::isfinite(options.noise_std),
          fmt::format("The regression noise σ must be a positive finite number; got {}.",
                      options.noise_std));
  } else {
    check(n >= 1 && labels.dim() == 1 && labels.size(0) == n,
          fmt::format("The Laplace fit needs N ≥ 1 inputs and N labels; got {} inputs and {} "
                      "labels.",
                      n, labels.numel()));
  }
  const auto named = model.named_parameters();
  LaplaceCurvatureResult fit;
  std::vector<::at::Tensor> params;
  for (const auto& [name, p] : named) {
    fit.names.push_back(name);
    params.push_back(p);
  }
  const auto in = laplace_subset(fit.names, options.subset);
  NamedParameters subset;
  std::vector<::at::Tensor> sums, input_sums, output_sums;  // per subset parameter
  for (size_t j = 0; j < named.size(); ++j) {
    if (!in[j]) continue;
    subset.push_back(named[j]);
    sums.emplace_back();
    input_sums.emplace_back();
    output_sums.emplace_back();
    fit.subset_size += params[j].numel();
    fit.subset_norm_squared += params[j].detach().to(::at::kDouble).square().sum().item<double>();
  }
  const bool kron = options.structure == LaplaceStructure::kKronecker;
  // Adds m × the batch means of the curvature of `mean_loss` (a mean over the batch); `first`: the
  // batch's first pass, the one whose input factor A counts (all passes see the same inputs).
  auto add_into = [&](const ::at::Tensor& mean_loss, int64_t m, bool first) {
    for (const auto& [name, p] : subset) p.mutable_grad().reset();
    auto accumulate = [&](::at::Tensor& sum, const ::at::Tensor& x) {
      const auto term = x.to(::at::kDouble).mul(static_cast<double>(m));
      sum = sum.defined() ? sum.add_(term) : term;
    };
    if (!kron) {
      const auto squared = backward_with_squared_gradients(mean_loss, subset, m);
      for (size_t s = 0; s < sums.size(); ++s) accumulate(sums[s], squared[s]);
      return;
    }
    const auto curvature = backward_with_kronecker_factors(mean_loss, subset, m);
    for (size_t s = 0; s < sums.size(); ++s) {
      const auto& c = curvature[s];
      check(c.kronecker() == input_sums[s].defined() || (!sums[s].defined() && !input_sums[s].defined()),
            fmt::format("The use of parameter '{}' changed between batches (Kronecker factors in "
                        "one, a diagonal in another).",
                        subset[s].first));
      if (!c.kronecker()) {
        accumulate(sums[s], c.diagonal);
        continue;
      }
      if (first) accumulate(input_sums[s], c.factors.input);
      accumulate(output_sums[s], c.factors.output);
    }
  };
  // Regression: Σ_ik (y − f)² and, per output k, the pseudo-loss f_ik/σ (ggn) or the loss (ef).
  const double sigma = options.noise_std;
  auto add_regression_batch = [&](const ::at::Tensor& x, const ::at::Tensor& y, int64_t m) {
    auto outputs = [&] { return match_targets(model.forward(x), y).reshape({m, -1}); };
    const auto targets = y.reshape({m, -1});
    {
      const auto f = outputs();
      const auto residual = targets.to(f.scalar_type()) - f;
      fit.residual_sum_squares += residual.detach().to(::at::kDouble).square().sum().item<double>();
      fit.target_values += residual.numel();
      if (options.curvature == LaplaceCurvature::kEmpiricalFisher) {
        add_into(residual.square().sum(1).mean() / (2 * sigma * sigma), m, true);
      }
    }
    if (options.curvature == LaplaceCurvature::kGaussNewton) {
      const int64_t d = targets.size(1);
      for (int64_t k = 0; k < d; ++k) add_into(outputs().select(1, k).mean() / sigma, m, k == 0);
    }
  };
  EvalMode eval(model);
  SubsetGradients gradients(params, in);
  ::at::AutoGradMode grad_mode(true);
  for (int64_t begin = 0; begin < n; begin += options.batch_size) {
    const int64_t end = std::min(n, begin + options.batch_size), m = end - begin;
    const auto x = inputs.slice(0, begin, end);
    const auto y = labels.slice(0, begin, end);
    if (regression) {
      add_regression_batch(x, y, m);
      continue;
    }
    {
      const auto log_p = ::at::log_softmax(model.forward(x), 1);
      const auto nll = ::at::nll_loss(log_p, y);
      fit.nll_sum += nll.item<double>() * static_cast<double>(m);
      if (options.curvature == LaplaceCurvature::kEmpiricalFisher) add_into(nll, m, true);
    }
    if (options.curvature == LaplaceCurvature::kGaussNewton) {
      // Σ_k (J_iᵀ v_ik)², v_ik = √p_ik (e_k − p_i): one forward/backward per class.
      ::at::Tensor p;
      {
        ::at::NoGradGuard no_grad;
        p = ::at::softmax(model.forward(x), 1).to(::at::kDouble);
      }
      const int64_t classes = p.size(1);
      for (int64_t k = 0; k < classes; ++k) {
        auto v = -p * p.select(1, k).sqrt().unsqueeze(1);
        v.select(1, k).add_(p.select(1, k).sqrt());
        const auto logits = model.forward(x);
        add_into((logits * v.to(logits.scalar_type())).sum(1).mean(), m, k == 0);
      }
    }
  }
  fit.examples = n;
  fit.likelihood = options.likelihood;
  fit.curvature_kind = options.curvature;
  if (regression) {
    fit.noise_std = sigma;
    fit.nll_sum = gaussian_nll_sum(fit, sigma);
  }
  check(std::isfinite(fit.nll_sum),
        "The trained model's training loss is not finite, so it has no Laplace posterior.");
  size_t s = 0;
  fit.curvature.resize(named.size());
  fit.factors.resize(named.size());
  fit.eigenvalues.resize(named.size());
  bool any_factors = false;
  const double inv_n = 1.0 / static_cast<double>(n);
  for (size_t j = 0; j < named.size(); ++j) {
    if (!in[j]) continue;
    if (input_sums[s].defined()) {
      fit.factors[j] = {input_sums[s].mul_(inv_n), output_sums[s].mul_(inv_n)};
      check(fit.factors[j].input.isfinite().all().item<bool>() &&
                fit.factors[j].output.isfinite().all().item<bool>(),
            fmt::format("The Kronecker factors of parameter '{}' are not finite.", fit.names[j]));
      const auto eigen = kronecker_eigen(fit.factors[j]);
      fit.eigenvalues[j] = ::at::outer(eigen.output_eigen, eigen.input_eigen);
      any_factors = true;
    } else {
      fit.curvature[j] = sums[s].defined() ? sums[s].mul_(inv_n)
                                           : ::at::zeros(params[j].sizes(),
                                                         params[j].options().dtype(::at::kDouble));
      check(fit.curvature[j].isfinite().all().item<bool>(),
            fmt::format("The curvature of parameter '{}' is not finite.", fit.names[j]));
      fit.eigenvalues[j] = fit.curvature[j];
    }
    ++s;
  }
  if (kron && !any_factors) {
    std::vector<std::string> subset_names;
    for (const auto& [name, p] : subset) subset_names.push_back(name);
    throw Error(fmt::format(
        "The Kronecker-factored Laplace needs a Linear or Conv2d weight in the subset, but its "
        "parameters ({}) have none; use the diagonal structure.",
        fmt::join(subset_names, ", ")));
  }
  return fit;
}

namespace {

// Σ_j N Ĝ_j / (δ (N Ĝ_j + δ)) over the subset: the trace term of d log Z / dδ (times 2).
double trace_term(const LaplaceCurvatureResult& fit, double delta) {
  double total = 0.0;
  const double n = static_cast<double>(fit.examples);
  for (const auto& c : fit.eigenvalues) {
    if (!c.defined()) continue;
    const auto h = c * n;
    total += (h / ((h + delta) * delta)).sum().item<double>();
  }
  return total;
}

}  // namespace

double laplace_log_marginal_likelihood(const LaplaceCurvatureResult& fit, double prior_precision) {
  check(prior_precision > 0 && std::isfinite(prior_precision),
        fmt::format("The prior precision must be a positive finite number; got {}.",
                    prior_precision));
  double log_det = 0.0;
  const double n = static_cast<double>(fit.examples);
  for (const auto& c : fit.eigenvalues) {
    if (c.defined()) log_det += (c * n + prior_precision).log().sum().item<double>();
  }
  return -fit.nll_sum - 0.5 * prior_precision * fit.subset_norm_squared +
         0.5 * static_cast<double>(fit.subset_size) * std::log(prior_precision) - 0.5 * log_det;
}

double laplace_optimal_prior_precision(const LaplaceCurvatureResult& fit) {
  check(fit.subset_size > 0 && fit.examples > 0, "The Laplace fit holds no curvature.");
  check(fit.subset_norm_squared > 0,
        "The weights of the subset are all zero, so the marginal likelihood grows without bound "
        "in the prior precision; give --prior-precision.");
  // g(δ) = trace_term(δ) − ‖θ*‖² falls strictly; bracket its root in log δ, then bisect.
  auto g = [&](double delta) { return trace_term(fit, delta) - fit.subset_norm_squared; };
  double lo = 1.0, hi = 1.0;
  for (int i = 0; i < 200 && g(lo) <= 0; ++i) lo /= 10;
  for (int i = 0; i < 200 && g(hi) >= 0; ++i) hi *= 10;
  check(g(lo) > 0 && g(hi) < 0,
        "The marginal likelihood has no maximiser in (1e-200, 1e200): the curvature is zero.");
  for (int i = 0; i < 200 && hi / lo > 1 + 1e-12; ++i) {
    const double mid = std::sqrt(lo * hi);
    (g(mid) > 0 ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

LaplaceCurvatureResult laplace_with_noise_std(const LaplaceCurvatureResult& fit, double noise_std) {
  check(fit.likelihood == LaplaceLikelihood::kRegression && fit.noise_std > 0,
        "Only the Laplace fit of a regression has a noise σ to change.");
  check(noise_std > 0 && std::isfinite(noise_std),
        fmt::format("The regression noise σ must be a positive finite number; got {}.", noise_std));
  LaplaceCurvatureResult out = fit;
  const double ratio = fit.noise_std / noise_std;
  const double scale = fit.curvature_kind == LaplaceCurvature::kGaussNewton
                           ? ratio * ratio
                           : ratio * ratio * ratio * ratio;
  for (size_t j = 0; j < out.eigenvalues.size(); ++j) {
    if (out.curvature[j].defined()) out.curvature[j] = fit.curvature[j] * scale;
    if (out.eigenvalues[j].defined()) out.eigenvalues[j] = fit.eigenvalues[j] * scale;
    if (out.factors[j].defined()) out.factors[j].output = fit.factors[j].output * scale;
  }
  out.noise_std = noise_std;
  out.nll_sum = gaussian_nll_sum(out, noise_std);
  return out;
}

double laplace_optimal_noise_std(const LaplaceCurvatureResult& fit, double prior_precision) {
  check(fit.likelihood == LaplaceLikelihood::kRegression && fit.target_values > 0,
        "The noise σ is chosen for the Laplace fit of a regression only.");
  check(prior_precision == 0 || (prior_precision > 0 && std::isfinite(prior_precision)),
        fmt::format("The prior precision must be a positive finite number (or 0: chosen with σ); "
                    "got {}.",
                    prior_precision));
  check(fit.residual_sum_squares > 0,
        "The network fits its training targets exactly (zero residuals), so the marginal "
        "likelihood grows without bound as σ → 0; give the noise σ.");
  const double ml = std::sqrt(fit.residual_sum_squares / static_cast<double>(fit.target_values));
  const double span = std::log(1e4);
  auto negative_log_z = [&](double log_sigma) {
    const auto at = laplace_with_noise_std(fit, std::exp(log_sigma));
    const double delta = prior_precision > 0 ? prior_precision : laplace_optimal_prior_precision(at);
    return -laplace_log_marginal_likelihood(at, delta);
  };
  const double lo = std::log(ml) - span, hi = std::log(ml) + span;
  const auto [best, value] = boost::math::tools::brent_find_minima(negative_log_z, lo, hi, 40);
  (void)value;
  check(best - lo > 1e-6 * span && hi - best > 1e-6 * span,
        fmt::format("The marginal likelihood is largest at the edge of the noise range searched "
                    "(σ = {:.6g}, {} the maximum-likelihood σ {:.6g}); give the noise σ.",
                    std::exp(best), best - lo <= 1e-6 * span ? "1e-4 times" : "1e4 times", ml));
  return std::exp(best);
}

}  // namespace blr::torch
