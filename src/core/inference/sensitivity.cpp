#include "blr/inference/sensitivity.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/inference/quadrature.hpp"

namespace blr::inference {

const OptionTable<SensitivityOptions>& SensitivityOptions::table() {
  using O = SensitivityOptions;
  static const OptionTable<O> t =
      OptionTable<O>("the sensitivities")
          .choice("sites", &O::sites,
                  {{"at-mean", SiteEvaluation::at_mean}, {"expected", SiteEvaluation::expected}},
                  "the per-example terms at the posterior mean (Laplace) or expected under it "
                  "(CVI)")
          .integer("quadrature_nodes", &O::quadrature_nodes, Range::between(1, 200),
                   "Gauss–Hermite nodes of the expected logistic terms");
  return t;
}

void SensitivityOptions::validate() const { table().validate(*this); }

SensitivityOptions SensitivityOptions::after(std::string_view glm_method) {
  SensitivityOptions o;
  if (glm_method == "cvi") o.sites = SiteEvaluation::expected;
  return o;
}

Sensitivity glm_sensitivity(const Glm& model, const Vector& mean, const Matrix& covariance,
                            const SensitivityOptions& options) {
  model.validate();
  options.validate();
  const Index n = model.x.rows(), d = model.dimension();
  check(mean.size() == d && covariance.rows() == d && covariance.cols() == d,
        "Sensitivity: the posterior has dimension {} (covariance {}×{}) but the design has {} "
        "columns.",
        mean.size(), covariance.rows(), covariance.cols(), d);
  check(mean.allFinite() && covariance.allFinite(),
        "Sensitivity: the posterior holds a non-finite number.");
  Sensitivity s;
  s.latent_mean = model.x * mean;
  // v_i = x_iᵀΣx_i = |Lᵀx_i|² with Σ = LLᵀ: the squared row norms of XL, a triangular product
  // (half the work of XΣ).
  const Eigen::LLT<Matrix> chol(covariance);
  check(chol.info() == Eigen::Success, "Sensitivity: the covariance is not positive definite.");
  s.variance = (model.x * chol.matrixL()).rowwise().squaredNorm();
  s.error.resize(n);
  s.curvature.resize(n);
  s.deviation.resize(n);
  s.deviation_first_order.resize(n);
  s.loo_variance.resize(n);
  s.score.resize(n);
  const GaussHermite quadrature(
      options.sites == SiteEvaluation::expected ? options.quadrature_nodes : 1);
  for (Index i = 0; i < n; ++i) {
    const double eta = s.latent_mean[i], v = s.variance[i];
    check(v >= 0, "Sensitivity: the prediction variance of example {} is {}; the covariance is not "
                 "positive definite.", i + 1, v);
    // site_terms are of log p; the loss ℓ_i = −log p flips both signs.
    const SiteTerms t =
        options.sites == SiteEvaluation::expected
            ? expected_site_terms(model.likelihood, model.y[i], eta, v, quadrature,
                                  model.noise_precision)
            : site_terms(model.likelihood, model.y[i], eta, model.noise_precision);
    const double e = -t.gradient, h = -t.hessian;
    const double keep = 1.0 - h * v;  // 1 − h_i v_i ∈ (0, 1] when S contains example i's site
    check(keep > 0,
          "Sensitivity: example {} has curvature × variance h·v = {} ≥ 1, so the posterior does "
          "not contain its site; was the fit converged?",
          i + 1, h * v);
    s.error[i] = e;
    s.curvature[i] = h;
    s.deviation_first_order[i] = v * e;
    s.deviation[i] = v * e / keep;
    s.loo_variance[i] = v / keep;
    const double slope = model.likelihood == Likelihood::gaussian ? 1.0 : h;  // dE[y|η]/dη
    s.score[i] = std::abs(slope * s.deviation[i]);
  }
  return s;
}

TestMetrics loo_estimate(const Glm& model, const Sensitivity& s,
                         const PredictiveOptions& options) {
  check(s.latent_mean.size() == model.y.size() && s.deviation.size() == model.y.size() &&
            s.loo_variance.size() == model.y.size(),
        "Leave-one-out estimate: the sensitivities and the responses differ in length.");
  const Vector loo_mean = s.latent_mean + s.deviation;
  const Predictive p = predict_latent(model.likelihood, loo_mean, s.loo_variance, model.y,
                                      options, model.noise_precision);
  return test_metrics(model.likelihood, p, model.y);
}

}  // namespace blr::inference
