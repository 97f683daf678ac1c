// Fuzz harness: the Python entry points of `blr.infer` (issue 34, item 3), through the C++
// functions their bindings call (python/src/inference.cpp):
//   glm    → inference::fit_glm (glm_fit.hpp): every likelihood, method, family, prior, noise
//            option, iteration cap and the sensitivities;
//   kalman → StateSpaceModel::validate, kalman_filter, kalman_smooth, KalmanSummary;
//   structural → structural_model (given or fitted variances) and its summary;
//   gp     → Kernel::parse (with ARD), fit_gp_regression / fit_gp_classification (given or learned
//            hyperparameters), GpSummary's bands, predictions, table and JSON;
//   gmm    → EmOptions::validate, fit_mixture (em), require_converged, MixtureSummary;
//   merge  → GaussianFull's natural parameters, merge_natural, GaussianFull::from_natural;
//   conjugate → fit_conjugate and its summary (conjugate_summary.hpp): every likelihood, method
//            and prior length, class counts and iteration caps.
// The first byte picks the entry (240–247: conjugate, 248–251: structural, 252–254: gp, added
// after the corpus was grown; any other byte b: the first four by b % 4, as the corpus was
// written); the rest are its sizes, options and numbers. Numbers are drawn
// from a table of hostile values (0, ±1, ±inf, NaN, 1e±300, denormals) or as a scaled 16-bit
// integer, so that singular, huge, tiny and non-finite inputs are common. A blr::Error is an
// accepted refusal; a crash, a sanitizer report, another exception, or an accepted result that
// is not finite (or a GLM fit reported as not converged, or mixture weights that do not sum to
// one) is a bug.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "blr/core/convergence.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/inference/conjugate_summary.hpp"
#include "blr/inference/glm_fit.hpp"
#include "blr/inference/glm_summary.hpp"
#include "blr/inference/gp_summary.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/kalman.hpp"
#include "blr/inference/kalman_summary.hpp"
#include "blr/inference/merge.hpp"
#include "blr/inference/mixture_summary.hpp"
#include "fuzz_check.hpp"

namespace {

using blr::Index;
using blr::Matrix;
using blr::Vector;
using blr::fuzz::accepted;
using blr::fuzz::require;

/// The input as a stream of choices; past its end every choice is 0.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  int pick(int n) { return u8() % n; }
  bool flag() { return (u8() & 1) != 0; }
  double number() {
    static const double kHostile[] = {0.0,
                                      -0.0,
                                      1.0,
                                      -1.0,
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(),
                                      1e300,
                                      -1e300,
                                      1e-300,
                                      4.9e-324,
                                      1e20,
                                      0.5,
                                      2.0,
                                      1e-8,
                                      100.0};
    const uint8_t tag = u8();
    if (tag < 40) return kHostile[tag % 16];
    const int16_t raw = static_cast<int16_t>(u8() | (u8() << 8));
    return raw / 256.0;
  }
  double positive() { return std::abs(number()); }
  Matrix matrix(Index rows, Index cols) {
    Matrix m(rows, cols);
    for (Index i = 0; i < rows; ++i)
      for (Index j = 0; j < cols; ++j) m(i, j) = number();
    return m;
  }
  Vector vector(Index n) { return matrix(n, 1).col(0); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

bool finite(const Matrix& m) { return m.allFinite(); }

void glm(Bytes& in) {
  const Index n = 1 + in.pick(24), d = 1 + in.pick(5);
  const Matrix x = in.matrix(n, d);
  Vector y = in.vector(n);
  if (in.flag()) y = y.array().round().abs().min(100.0);  // counts and labels that could pass
  blr::inference::GlmFitRequest r;
  static const char* kLikelihoods[] = {"logistic", "poisson", "gaussian", "probit"};
  static const char* kMethods[] = {"laplace", "cvi", "exact", "vi"};
  // The spellings of every door, an old one that is refused, and a mixture without components
  // (a mixture with components runs 2000 Monte Carlo steps: too slow to fuzz).
  static const char* kFamilies[] = {"gaussian-full", "gaussian-diag", "full", "mixture:0"};
  r.likelihood = kLikelihoods[in.pick(4)];
  r.method = kMethods[in.pick(4)];
  r.family = kFamilies[in.pick(4)];
  r.prior_precision = in.flag() ? Vector(in.vector(1)) : Vector(in.vector(in.flag() ? d : d + 1));
  if (in.flag()) r.prior_mean = in.vector(in.flag() ? d : 1);
  if (in.flag()) r.noise_precision = in.number();
  if (in.flag()) r.noise_prior = std::pair{in.number(), in.number()};
  // The method's options by key (blr.infer.glm's **options): in range, out of it, or a key the
  // method's table lacks.
  if (in.flag()) r.options.give("max_iterations", static_cast<int64_t>(in.pick(60)) - 5);
  if (in.flag()) r.options.give("tolerance", in.number());
  if (in.flag()) r.options.give(in.flag() ? "rho" : "iterations", in.number());
  r.sensitivities = in.flag();
  blr::inference::GlmFit f;
  if (!accepted([&] { f = blr::inference::fit_glm(x, y, r); })) return;
  require(f.converged, "glm: an accepted fit is not converged");
  require(f.mean.size() == d && finite(f.mean), "glm: the posterior mean is not finite");
  require(f.covariance.rows() == d && f.covariance.cols() == d && finite(f.covariance),
          "glm: the posterior covariance is not finite");
  if (f.sensitivity) {
    require(finite(f.sensitivity->variance) && finite(f.sensitivity->score),
            "glm: a sensitivity is not finite");
  }
  // The binding wraps every fit in the summary (glm_summary.hpp): statistics and WAIC at
  // construction, then intervals, the table, the JSON and predictions at hostile new rows (the
  // binding refuses what is not finite).
  std::optional<blr::inference::GlmSummary> s;
  if (!accepted([&] { s.emplace(x, y, f); })) return;
  const Matrix x_new = in.matrix(1 + in.pick(4), in.flag() ? d : d + 1);
  accepted([&] {
    s->coefficients(in.flag() ? 0.9 : in.number());
    s->table();
    s->to_json();
    s->predict(x_new, 0.95);
  });
}

void kalman(Bytes& in) {
  const Index m = 1 + in.pick(3), p = 1 + in.pick(3), steps = 1 + in.pick(20);
  const bool smooth = in.flag();
  blr::inference::StateSpaceModel model{in.matrix(m, m), in.matrix(p, m), in.matrix(m, m),
                                        in.matrix(p, p), in.vector(m),    in.matrix(m, m)};
  const Matrix y = in.matrix(steps, in.flag() ? p : p + 1);
  blr::inference::KalmanResult r;
  if (!accepted([&] {
        model.validate();
        blr::check(y.cols() == model.obs_dim(), "y's columns do not match the observation matrix.");
        r = blr::inference::kalman_filter(model, y);
        if (smooth) blr::inference::kalman_smooth(model, y, r);
      }))
    return;
  require(std::isfinite(r.log_likelihood), "kalman: the log-likelihood is not finite");
  require(finite(r.filtered_mean), "kalman: a filtered mean is not finite");
  if (smooth) require(finite(r.smoothed_mean), "kalman: a smoothed mean is not finite");
  // The binding wraps the run in the summary (kalman_summary.hpp): bands, forecasts, the table
  // and the JSON at a hostile level and horizon (read after the bytes above, so that the corpus
  // keeps its meaning).
  std::optional<blr::inference::KalmanSummary> s;
  if (!accepted([&] { s.emplace(model, y); })) return;
  accepted([&] {
    const double level = in.flag() ? 0.9 : in.number();
    s->smoothed(in.pick(4), level);
    s->forecast(in.pick(40) - 2, level);
    s->table(level);
    s->to_json(level);
  });
}

/// blr.infer.structural: a local-level or trend model of one series, given or fitted.
void structural(Bytes& in) {
  blr::inference::StructuralModelRequest r;
  static const char* kKinds[] = {"local-level", "local-linear-trend", "arima"};
  r.kind = kKinds[in.pick(3)];
  const Matrix y = in.matrix(1 + in.pick(20), in.flag() ? 1 : 2);
  if (in.flag()) r.obs_var = in.number();
  if (in.flag()) r.state_var = in.number();
  if (in.flag()) r.slope_var = in.number();
  if (in.flag()) r.init_mean = in.number();
  if (in.flag()) r.init_var = in.number();
  r.fit = in.flag();
  r.nelder_mead.max_evaluations = 1 + in.pick(200);
  std::optional<blr::inference::StructuralModel> m;
  std::optional<blr::inference::KalmanSummary> s;
  if (!accepted([&] {
        m.emplace(blr::inference::structural_model(r, y));
        if (m->fit) {
          blr::require_converged(m->fit->converged, "Nelder–Mead", m->fit->evaluations,
                                 r.nelder_mead.max_evaluations, "evaluations", "raise it");
        }
        s.emplace(m->model, y, m->states);
      }))
    return;
  require(std::isfinite(m->obs_var) && m->obs_var > 0, "structural: V is not positive and finite");
  require(finite(s->result().smoothed_mean) || !finite(y),
          "structural: finite data gave a smoothed mean that is not finite");
}

void gmm(Bytes& in) {
  const Index n = 1 + in.pick(30), d = 1 + in.pick(3);
  const Matrix x = in.matrix(n, d);
  blr::inference::EmOptions options;
  options.components = in.pick(6) - 1;
  options.covariance =
      in.flag() ? blr::inference::CovarianceType::full : blr::inference::CovarianceType::diagonal;
  options.max_iterations = in.pick(120) - 5;
  options.reg_covar = in.flag() ? in.number() : 1e-6;
  options.seed = in.u8();
  // The binding (python/src/inference.cpp): the options' table, then fit_mixture
  // (mixture_summary.hpp), which runs em.
  blr::inference::MixtureRequest request;
  request.em = options;
  std::optional<blr::inference::MixtureSummary> s;
  if (!accepted([&] {
        options.validate();
        s.emplace(blr::inference::fit_mixture(x, request));
        blr::require_converged(s->converged(), "EM", s->iterations(), options.max_iterations,
                               "iterations", "raise max_iterations");
      }))
    return;
  const auto& g = s->mixture();
  require(finite(g.weights) && finite(g.means), "gmm: the mixture is not finite");
  require(std::abs(g.weights.sum() - 1.0) < 1e-9, "gmm: the weights do not sum to one");
  require(std::isfinite(s->log_likelihood()), "gmm: the log-likelihood is not finite");
  // New rows, read after the bytes above so that the corpus keeps its meaning.
  const Matrix rows = in.matrix(1 + in.pick(4), in.flag() ? d : d + 1);
  accepted([&] {
    s->predict_proba(rows);
    s->predict(rows);
    s->log_density(rows);
    s->table();
    s->to_json();
  });
}

void merge(Bytes& in) {
  const Index d = 1 + in.pick(3);
  const int tasks = in.pick(4);
  const Vector prior_mean = in.vector(d);
  const Matrix prior_precision = in.matrix(d, d);
  std::vector<Vector> means;
  std::vector<Matrix> precisions;
  for (int t = 0; t < tasks; ++t) {
    means.push_back(in.vector(d));
    precisions.push_back(in.matrix(d, d));
  }
  const double scale = in.number();
  blr::GaussianFull merged;
  if (!accepted([&] {
        std::vector<Vector> naturals;
        for (int t = 0; t < tasks; ++t)
          naturals.push_back(blr::GaussianFull(means[t], precisions[t]).natural());
        merged = blr::GaussianFull::from_natural(blr::inference::merge_natural(
            blr::GaussianFull(prior_mean, prior_precision).natural(), naturals, scale));
      }))
    return;
  require(finite(merged.mean), "merge: the merged mean is not finite");
}

void conjugate(Bytes& in) {
  static const char* kLikelihoods[] = {"bernoulli", "poisson", "categorical", "normal", "beta"};
  static const char* kMethods[] = {"exact", "vmp", "svi", "laplace"};
  blr::inference::ConjugateProblem p;
  p.likelihood = kLikelihoods[in.pick(5)];
  p.method = kMethods[in.pick(4)];
  p.y = in.vector(in.pick(24));
  if (in.flag()) p.y = p.y.array().round().abs().min(3.0);  // labels and counts that could pass
  for (int k = in.pick(5); k > 0; --k) p.classes.push_back("c" + std::to_string(k));
  for (int k = in.pick(6); k > 0; --k) p.prior.push_back(in.number());
  p.vmp.max_iterations = 1 + in.pick(50);
  p.svi.iterations = 1 + in.pick(40);
  p.svi.batch_size = 1 + in.pick(8);
  std::optional<blr::inference::ConjugateSummary> s;
  if (!accepted([&] {
        // The binding's checks (python/src/inference.cpp) before the fit.
        if (p.method == "vmp") p.vmp.validate();
        if (p.method == "svi") p.svi.validate();
        s.emplace(blr::inference::fit_conjugate(p));
      }))
    return;
  require(s->marginals().size() >= 1, "conjugate: an accepted posterior has no marginal");
  // A finite prior and data may still overflow (1e300 concentrations): the doors refuse what is
  // not finite; here the summary must not crash on it.
  accepted([&] {
    s->parameters(in.flag() ? 0.9 : in.number());
    s->table();
    s->to_json();
  });
}

/// blr.infer.gp_regression / gp_classification: a small GP with a hostile kernel expression,
/// data and hyperparameters.
void gp(Bytes& in) {
  static const char* kExpressions[] = {"rbf",          "matern32*linear", "rbf(l=2)+white(v=0.1)",
                                       "matern52+constant", "linear",     "rbf*",
                                       "cubic"};
  const bool classification = in.flag();
  const Index n = 1 + in.pick(12), d = 1 + in.pick(3);
  const Matrix x = in.matrix(n, d);
  Vector y = in.vector(n);
  if (classification) y = y.array().round().abs().min(1.0);
  const std::string expression = kExpressions[in.pick(7)];
  const double lengthscale = in.positive(), variance = in.positive();
  const bool ard = in.flag(), learn = in.flag();
  const double noise = in.number();
  const auto method = in.flag() ? blr::inference::GpcMethod::laplace
                                : blr::inference::GpcMethod::cvi;
  // Small caps keep one input within a fraction of a second under the sanitizers (uncapped, a
  // learned CVI classification took 87 s); a fit that stops at them is reported, not refused.
  blr::inference::GpLearnOptions options;
  options.lbfgs.max_iterations = 1 + in.pick(5);
  options.lbfgs.max_evaluations = 2 * options.lbfgs.max_iterations + 2;
  options.laplace.max_iterations = 1 + in.pick(30);
  options.cvi.max_iterations = 1 + in.pick(30);
  std::optional<blr::inference::GpSummary> s;
  if (!accepted([&] {
        auto kernel = blr::inference::Kernel::parse(expression, lengthscale, variance);
        if (ard) kernel = kernel.with_ard(d);
        kernel.validate();
        if (classification) {
          s.emplace(blr::inference::fit_gp_classification(x, y, kernel, method, learn, options),
                    kernel);
        } else {
          blr::check_positive("noise_variance", noise);
          s.emplace(blr::inference::fit_gp_regression(x, y, kernel, noise, learn, options), kernel,
                    noise);
        }
      }))
    return;
  require(std::isfinite(s->objective()), "gp: an accepted fit has an objective that is not finite");
  require(finite(s->latent().mean), "gp: an accepted fit has a latent mean that is not finite");
  const Matrix x_new = in.matrix(1 + in.pick(4), in.flag() ? d : d + 1);
  accepted([&] {
    const double level = in.flag() ? 0.9 : in.number();
    s->latent(level);
    s->predict(x_new, level);
    s->table(level);
    s->to_json(level);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Bytes in(data + 1, size - 1);
  if (data[0] >= 240 && data[0] < 255) {
    if (data[0] < 248) conjugate(in);
    else if (data[0] < 252) structural(in);
    else gp(in);
    return 0;
  }
  switch (data[0] % 4) {
    case 0: glm(in); break;
    case 1: kalman(in); break;
    case 2: gmm(in); break;
    default: merge(in); break;
  }
  return 0;
}
