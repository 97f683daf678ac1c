// `blr infer kalman|gmm|conjugate`: Kalman filter/smoother, EM/VMP/SVI for Gaussian mixtures,
// and one-step conjugate posteriors (with VMP/SVI for the Normal–Gamma model).
#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/kalman.hpp"
#include "blr/inference/vmp.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {
namespace {

io::CsvTable read_data(const Options& o) {
  check(!o.data.empty(), fmt::format("Model '{}' needs a data file: --data FILE.", o.model));
  return io::CsvTable::read(o.data);
}

std::string series_column(const Options& o, const io::CsvTable& t) {
  const std::string c = o.column.empty() ? t.columns().back() : o.column;
  t.column_index(c);
  return c;
}

}  // namespace

nlohmann::json run_kalman(const Options& o) {
  const std::string method = resolve_method(o, {"exact"});
  const auto table = read_data(o);
  const std::string col = series_column(o, table);
  const Matrix y = table.numeric_column(col);
  const bool trend = o.ssm == "local-linear-trend";
  check(
      trend || o.ssm == "local-level",
      fmt::format("Option '--model' must be local-level or local-linear-trend; got '{}'.", o.ssm));
  const double m0 = std::isnan(o.init_mean) ? y(0, 0) : o.init_mean;
  check(std::isfinite(m0), "Option '--init-mean' must be finite.");
  check_positive("init-var", o.init_var);
  auto build = [&](double v, double w, double z) {
    if (!trend) return inference::StateSpaceModel::local_level(v, w, m0, o.init_var);
    return inference::StateSpaceModel::local_linear_trend(
        v, w, z, (Vector(2) << m0, 0.0).finished(), o.init_var * Matrix::Identity(2, 2));
  };
  const bool has_v = !std::isnan(o.obs_var), has_w = !std::isnan(o.state_var);
  if (has_v) check_positive("obs-var", o.obs_var);
  if (has_w) check_nonnegative("state-var", o.state_var);
  check_nonnegative("slope-var", o.slope_var);
  double v = o.obs_var, w = o.state_var, z = o.slope_var;
  nlohmann::json j{{"method", method}, {"state_model", o.ssm}, {"column", col}};
  int evaluations = 0;
  bool converged = true;
  if (o.fit) {
    const double var_y = (y.array() - y.mean()).square().mean();
    check(var_y > 0,
          fmt::format("Column '{}' is constant; its noise variances cannot be fitted.", col));
    Vector start(trend ? 3 : 2);
    start[0] = has_v ? o.obs_var : var_y / 2;
    start[1] = has_w && o.state_var > 0 ? o.state_var : var_y / 10;
    if (trend) start[2] = o.slope_var > 0 ? o.slope_var : var_y / 1000;
    inference::NelderMeadOptions nm;
    if (o.max_iterations > 0) nm.max_evaluations = o.max_iterations;
    const auto fit = inference::fit_variances(
        [&](const Vector& p) { return build(p[0], p[1], trend ? p[2] : 0.0); }, y, start, nm);
    v = fit.variances[0];
    w = fit.variances[1];
    if (trend) z = fit.variances[2];
    evaluations = fit.evaluations;
    converged = fit.converged;
    fmt::print("maximum likelihood (Nelder–Mead on log variances): {} evaluations, converged: {}\n",
               fit.evaluations, fit.converged ? "yes" : "no");
  } else {
    check(has_v && has_w,
          "Model 'kalman' needs --obs-var V > 0 and --state-var W ≥ 0, or --fit to estimate them.");
  }
  const auto model = build(v, w, z);
  auto r = inference::kalman_filter(model, y);  // each update one ρ = 1 BLR step
  inference::kalman_smooth(model, y, r);
  const Index n = model.state_dim(), T = y.rows();
  const Vector fm = r.filtered_mean.col(0), fv = r.filtered_cov.col(0);
  const Vector sm = r.smoothed_mean.col(0), sv = r.smoothed_cov.col(0);
  fmt::print("blr infer kalman — {} on {} ('{}', {} steps); V = {:.6g}, W = {:.6g}{}\n", o.ssm,
             o.data, col, T, v, w, trend ? fmt::format(", slope variance {:.6g}", z) : "");
  fmt::print("log-likelihood (prediction-error decomposition) {:.9g}\n", r.log_likelihood);
  fmt::print("{:>6}  {:>12}  {:>12}  {:>10}  {:>12}  {:>10}\n", "t", "y", "filtered", "sd",
             "smoothed", "sd");
  for (Index t = 0; t < T; ++t) {
    if (T > 12 && t == 5) fmt::print("{:>6}\n", "...");
    if (T > 12 && t >= 5 && t < T - 5) continue;
    fmt::print("{:>6}  {:>12.6g}  {:>12.6g}  {:>10.4g}  {:>12.6g}  {:>10.4g}\n", t + 1, y(t, 0),
               fm[t], std::sqrt(fv[t]), sm[t], std::sqrt(sv[t]));
  }
  j.update({{"converged", converged},
            {"iterations", o.fit ? evaluations : 1},
            {"log_likelihood", r.log_likelihood},
            {"obs_var", v},
            {"state_var", w},
            {"init_mean", m0},
            {"init_var", o.init_var},
            {"filtered_mean", to_json(fm)},
            {"filtered_var", to_json(fv)},
            {"smoothed_mean", to_json(sm)},
            {"smoothed_var", to_json(sv)}});
  if (trend) {
    j["slope_var"] = z;
    j["smoothed_slope"] = to_json(Vector(r.smoothed_mean.col(1)));
  }
  (void)n;
  return j;
}

nlohmann::json run_gmm(const Options& o) {
  const std::string method = resolve_method(o, {"em", "vmp", "svi"});
  const auto table = read_data(o);
  const auto cols = o.features.empty() ? table.columns() : split_list(o.features);
  Matrix x = table.numeric_columns(cols);
  if (o.standardize) x = io::Standardizer::fit(x, cols).transform(x);
  check(o.components >= 1,
        fmt::format("Option '--components' must be at least 1; got {}.", o.components));
  check(o.components <= x.rows(),
        fmt::format("Option '--components' ({}) exceeds the number of data rows ({}).",
                    o.components, x.rows()));
  check(o.covariance == "full" || o.covariance == "diag",
        fmt::format("Option '--covariance' must be full or diag; got '{}'.", o.covariance));
  check(o.covariance == "full" || method == "em",
        "Methods vmp and svi use Normal–Wishart components: --covariance full.");
  const Index k = o.components, d = x.cols();
  Vector weights;
  Matrix means(k, d);
  std::vector<Matrix> covs;
  nlohmann::json j{
      {"method", method}, {"columns", cols}, {"components", k}, {"covariance", o.covariance}};
  if (method == "em") {
    inference::EmOptions eo;
    eo.components = o.components;
    eo.covariance = o.covariance == "full" ? inference::CovarianceType::full
                                           : inference::CovarianceType::diagonal;
    eo.reg_covar = o.reg_covar;
    eo.seed = o.seed;
    if (o.max_iterations > 0) eo.max_iterations = o.max_iterations;
    if (o.tolerance > 0) eo.tolerance = o.tolerance;
    const auto r = inference::em(x, eo);
    weights = r.mixture.weights;
    means = r.mixture.means;
    covs = r.mixture.covariances;
    j.update({{"log_likelihood", r.log_likelihood},
              {"iterations", r.iterations},
              {"converged", r.converged}});
    fmt::print(
        "blr infer gmm — EM (coordinate-wise BLR, ρ = 1) on {}: {} components, {} covariances\n",
        o.data, k, o.covariance);
    fmt::print("{} iterations, converged: {}; log-likelihood {:.9g}\n", r.iterations,
               r.converged ? "yes" : "no", r.log_likelihood);
  } else {
    inference::BayesGmmPrior prior;
    prior.alpha0 = o.alpha0;
    inference::BayesGmmResult r;
    if (method == "vmp") {
      inference::VmpOptions vo;
      if (o.max_iterations > 0) vo.max_iterations = o.max_iterations;
      if (o.tolerance > 0) vo.tolerance = o.tolerance;
      r = inference::bayes_gmm_vmp(x, o.components, prior, vo, o.seed);
      j["converged"] = r.converged;
    } else {
      inference::SviOptions so;
      so.batch_size = o.batch_size;
      so.iterations = o.iterations;
      so.seed = o.seed;
      r = inference::bayes_gmm_svi(x, o.components, prior, so);
      j["converged"] = false;
      j["note"] = "SVI runs a fixed number of minibatch steps (--iterations).";
      j["batch_size"] = o.batch_size;
    }
    weights = r.q.expected_weights();
    for (Index c = 0; c < k; ++c) {
      means.row(c) = r.q.mean(c).transpose();
      covs.push_back(r.q.expected_covariance(c));
    }
    j.update({{"elbo", r.elbo}, {"iterations", r.iterations}});
    fmt::print(
        "blr infer gmm — {} for a Bayesian mixture (Dirichlet weights, Normal–Wishart "
        "components) on {}: {} components\n",
        method == "vmp" ? "VMP" : "SVI", o.data, k);
    fmt::print("{} {}, ELBO {:.9g}\n", r.iterations, method == "vmp" ? "sweeps" : "minibatch steps",
               r.elbo);
  }
  fmt::print("{:>9}  {:>8}  {}\n", "component", "weight", "mean (sd) per column");
  nlohmann::json jm = nlohmann::json::array(), jc = nlohmann::json::array();
  for (Index c = 0; c < k; ++c) {
    std::string row;
    for (Index q = 0; q < d; ++q)
      row += fmt::format("  {}: {:.5g} ({:.4g})", cols[q], means(c, q), std::sqrt(covs[c](q, q)));
    fmt::print("{:>9}  {:>8.4f}{}\n", c + 1, weights[c], row);
    jm.push_back(to_json(Vector(means.row(c).transpose())));
    jc.push_back(to_json(covs[c]));
  }
  j.update({{"weights", to_json(weights)}, {"means", jm}, {"covariances", jc}});
  return j;
}

nlohmann::json run_conjugate(const Options& o) {
  const std::string& lik = o.likelihood;
  check(
      lik == "bernoulli" || lik == "poisson" || lik == "normal" || lik == "categorical",
      fmt::format("Model 'conjugate' needs --likelihood bernoulli, poisson, normal or categorical; "
                  "got '{}'.",
                  lik));
  const std::string method =
      lik == "normal" ? resolve_method(o, {"exact", "vmp", "svi"}) : resolve_method(o, {"exact"});
  const auto table = read_data(o);
  const std::string col = series_column(o, table);
  std::vector<double> prior =
      o.prior.empty() ? std::vector<double>{} : parse_numbers(o.prior, "prior");
  auto need = [&](std::size_t n, std::vector<double> def, const char* what) {
    if (prior.empty()) prior = std::move(def);
    check(prior.size() == n,
          fmt::format("Option '--prior' for {} needs {} numbers ({}).", lik, n, what));
  };
  nlohmann::json j{{"method", method}, {"likelihood", lik}, {"column", col}};
  Vector mean, sd;
  std::vector<std::string> names;
  if (lik == "bernoulli") {
    need(2, {1, 1}, "a,b of Beta(a, b)");
    const auto classes = table.distinct(col, 2);  // stops at a third class
    const std::string positive = o.positive.empty() ? "1" : o.positive;
    const std::vector<std::string> declared =
        o.positive.empty() ? std::vector<std::string>{"0", "1"} : classes;
    check(classes.size() <= 2, fmt::format("Column '{}' must hold at most two classes.", col));
    const Vector y = table.binary_labels(col, positive, declared);
    std::vector<int> data(y.data(), y.data() + y.size());
    const inference::BetaBernoulli m{prior[0], prior[1]};
    const Vector post = inference::conjugate_posterior(m, data, m.prior_natural());
    const double a = m.a(post), b = m.b(post);
    mean = Vector::Constant(1, m.mean(post));
    sd = Vector::Constant(1, std::sqrt(m.variance(post)));
    names = {"theta"};
    j.update({{"log_evidence", inference::conjugate_log_evidence(m, data, post)},
              {"posterior", {{"a", a}, {"b", b}}}});
    fmt::print(
        "blr infer conjugate — Beta–Bernoulli on '{}' ({} observations, {} successes): "
        "posterior Beta({:.6g}, {:.6g})\n",
        col, y.size(), y.sum(), a, b);
  } else if (lik == "poisson") {
    need(2, {1, 1}, "shape,rate of the Gamma prior");
    const Vector y = table.count_column(col);
    std::vector<double> data(y.data(), y.data() + y.size());
    const inference::GammaPoisson m{prior[0], prior[1]};
    const Vector post = inference::conjugate_posterior(m, data, m.prior_natural());
    mean = Vector::Constant(1, m.mean(post));
    sd = Vector::Constant(1, std::sqrt(m.variance(post)));
    names = {"rate"};
    j.update({{"log_evidence", inference::conjugate_log_evidence(m, data, post)},
              {"posterior", {{"shape", m.a(post)}, {"rate", m.b(post)}}}});
    fmt::print(
        "blr infer conjugate — Gamma–Poisson on '{}' ({} counts): posterior Gamma({:.6g}, "
        "rate {:.6g})\n",
        col, y.size(), m.a(post), m.b(post));
  } else if (lik == "categorical") {
    const auto classes = table.distinct(col);
    need(classes.size(), std::vector<double>(classes.size(), 1.0), "one concentration per class");
    const auto idx = table.class_labels(col, classes);
    const inference::DirichletCategorical m{Eigen::Map<Vector>(prior.data(), prior.size())};
    const Vector post = inference::conjugate_posterior(m, idx, m.prior_natural());
    const Vector alpha = m.alpha(post);
    const double a0 = alpha.sum();
    mean = alpha / a0;
    sd = (alpha.array() * (a0 - alpha.array()) / (a0 * a0 * (a0 + 1))).sqrt();
    names = classes;
    j.update({{"log_evidence", inference::conjugate_log_evidence(m, idx, post)},
              {"posterior", {{"alpha", to_json(alpha)}}},
              {"classes", classes}});
    fmt::print(
        "blr infer conjugate — Dirichlet–categorical on '{}' ({} observations, {} classes)\n", col,
        idx.size(), classes.size());
  } else {  // normal
    need(4, {0, 1, 1, 1}, "mu0,kappa0,alpha0,beta0 of the Normal–Gamma prior");
    const Vector y = table.numeric_column(col);
    names = {"mu", "tau"};
    if (method == "exact") {
      std::vector<double> data(y.data(), y.data() + y.size());
      const inference::NormalGamma m{prior[0], prior[1], prior[2], prior[3]};
      const Vector post = inference::conjugate_posterior(m, data, m.prior_natural());
      const auto p = inference::NormalGamma::params(post);
      mean = (Vector(2) << p.mu, p.alpha / p.beta).finished();
      sd = (Vector(2) << (p.alpha > 1 ? std::sqrt(p.beta / ((p.alpha - 1) * p.kappa)) : INFINITY),
            std::sqrt(p.alpha) / p.beta)
               .finished();
      j.update({{"log_evidence", inference::conjugate_log_evidence(m, data, post)},
                {"posterior",
                 {{"mu", p.mu}, {"kappa", p.kappa}, {"alpha", p.alpha}, {"beta", p.beta}}}});
      fmt::print(
          "blr infer conjugate — Normal–Gamma on '{}' ({} observations): posterior NG(μ = {:.6g}, "
          "κ = {:.6g}, α = {:.6g}, β = {:.6g})\n",
          col, y.size(), p.mu, p.kappa, p.alpha, p.beta);
    } else {
      const inference::NormalGammaPrior np{prior[0], prior[1], prior[2], prior[3]};
      inference::NormalGammaResult r;
      if (method == "vmp") {
        inference::VmpOptions vo;
        if (o.max_iterations > 0) vo.max_iterations = o.max_iterations;
        if (o.tolerance > 0) vo.tolerance = o.tolerance;
        r = inference::normal_gamma_vmp(np, y, vo);
        j["converged"] = r.converged;
      } else {
        inference::SviOptions so;
        so.batch_size = o.batch_size;
        so.iterations = o.iterations;
        so.seed = o.seed;
        r = inference::normal_gamma_svi(np, y, so);
        j["converged"] = false;
        j["note"] = "SVI runs a fixed number of minibatch steps (--iterations).";
      }
      const double a = r.q.shape(), b = r.q.rate();
      mean = (Vector(2) << r.q.mean(), a / b).finished();
      sd = (Vector(2) << std::sqrt(r.q.mean_variance()), std::sqrt(a) / b).finished();
      j.update({{"elbo", r.elbo},
                {"iterations", r.iterations},
                {"posterior",
                 {{"mu_mean", r.q.mean()},
                  {"mu_var", r.q.mean_variance()},
                  {"tau_shape", a},
                  {"tau_rate", b}}}});
      fmt::print(
          "blr infer conjugate — Normal–Gamma, mean-field {} on '{}' ({} observations): {} "
          "iterations, ELBO {:.9g}\n",
          method == "vmp" ? "VMP" : "SVI", col, y.size(), r.iterations, r.elbo);
    }
  }
  if (method == "exact") {
    j.update({{"converged", true}, {"iterations", 1}});
    fmt::print("log evidence {:.12g} (one BLR step with ρ = 1)\n", j["log_evidence"].get<double>());
  }
  print_table(names, mean, sd, "posterior:");
  j.update({{"mean", to_json(mean)}, {"sd", to_json(sd)}, {"names", names}});
  return j;
}

}  // namespace blr::cli::infer
