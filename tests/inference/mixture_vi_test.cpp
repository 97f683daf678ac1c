// Mixture-of-Gaussians VI (eqs. 29–30 with 69–70, Monte Carlo) on a bimodal posterior: the
// label-switching posterior of a two-component location mixture, whose two modes are mirror
// images. A single Gaussian captures one mode (ELBO ≈ log Z − log 2); two components capture both
// (ELBO ≈ log Z). log Z is computed by a fine grid here.
#include "blr/inference/mixture_vi.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"

namespace blr::inference {
namespace {

/// −log p(y, θ): y_i ~ ½N(θ₁, 1) + ½N(θ₂, 1), θ ~ N(0, 10² I).
struct LabelSwitching {
  Vector y;
  Index dimension() const { return 2; }
  double value(const Vector& t) const {
    double out = 0;
    for (Index i = 0; i < y.size(); ++i) {
      const double a = -0.5 * (y[i] - t[0]) * (y[i] - t[0]),
                   b = -0.5 * (y[i] - t[1]) * (y[i] - t[1]);
      const double mx = std::max(a, b);
      out -= mx + std::log(0.5 * std::exp(a - mx) + 0.5 * std::exp(b - mx)) -
             0.5 * std::log(2 * std::numbers::pi);
    }
    return out + 0.5 * t.squaredNorm() / 100.0 + std::log(2 * std::numbers::pi * 100.0);
  }
  double weight(double yi, const Vector& t) const {
    const double a = -0.5 * (yi - t[0]) * (yi - t[0]), b = -0.5 * (yi - t[1]) * (yi - t[1]);
    return 1.0 / (1.0 + std::exp(b - a));
  }
  Vector gradient(const Vector& t) const {
    Vector g = t / 100.0;
    for (Index i = 0; i < y.size(); ++i) {
      const double w = weight(y[i], t);
      g[0] -= w * (y[i] - t[0]);
      g[1] -= (1 - w) * (y[i] - t[1]);
    }
    return g;
  }
  Matrix hessian(const Vector& t) const {
    Matrix h = Matrix::Identity(2, 2) / 100.0;
    for (Index i = 0; i < y.size(); ++i) {
      const double w = weight(y[i], t), d1 = y[i] - t[0], d2 = y[i] - t[1];
      h(0, 0) -= w * (d1 * d1 - 1) - w * w * d1 * d1;
      h(1, 1) -= (1 - w) * (d2 * d2 - 1) - (1 - w) * (1 - w) * d2 * d2;
      h(0, 1) -= -w * (1 - w) * d1 * d2;
    }
    h(1, 0) = h(0, 1);
    return h;
  }
};

LabelSwitching make_problem() {
  Rng rng(8);
  LabelSwitching p;
  p.y.resize(40);
  for (Index i = 0; i < 40; ++i) p.y[i] = (i < 20 ? -2.0 : 2.0) + rng.normal();
  return p;
}

double grid_log_z(const LabelSwitching& p) {
  const double h = 0.01;
  double mx = -1e300;
  std::vector<double> v;
  for (double a = -6; a <= 6; a += h)
    for (double b = -6; b <= 6; b += h) {
      v.push_back(-p.value((Vector(2) << a, b).finished()));
      mx = std::max(mx, v.back());
    }
  double s = 0;
  for (double x : v) s += std::exp(x - mx);
  return mx + std::log(s * h * h);
}

TEST(MixtureVi, LogDensityDerivativesMatchFiniteDifferences) {
  const Vector w = (Vector(2) << 0.3, 0.7).finished();
  std::vector<GaussianComponent> c{
      {(Vector(2) << 0.0, 1.0).finished(), (Matrix(2, 2) << 2, 0.5, 0.5, 1).finished()},
      {(Vector(2) << 1.0, -1.0).finished(), (Matrix(2, 2) << 1, -0.2, -0.2, 3).finished()}};
  const Vector theta = (Vector(2) << 0.4, 0.1).finished();
  Vector g;
  Matrix h;
  mixture_log_density_derivatives(w, c, theta, g, h);
  const double e = 1e-5;
  for (int j = 0; j < 2; ++j) {
    Vector tp = theta, tm = theta;
    tp[j] += e;
    tm[j] -= e;
    EXPECT_NEAR(g[j], (mixture_log_density(w, c, tp) - mixture_log_density(w, c, tm)) / (2 * e),
                1e-8);
    Vector gp, gm;
    Matrix hp, hm;
    mixture_log_density_derivatives(w, c, tp, gp, hp);
    mixture_log_density_derivatives(w, c, tm, gm, hm);
    EXPECT_LT(((gp - gm) / (2 * e) - h.col(j)).cwiseAbs().maxCoeff(), 1e-7);
  }
}

TEST(MixtureVi, TwoComponentsCaptureBothModesOfABimodalPosterior) {
  const LabelSwitching problem = make_problem();
  const LossFunctions loss = LossFunctions::wrap(problem);
  const double log_z = grid_log_z(problem);
  MixtureViOptions opt;
  opt.iterations = 1500;
  opt.seed = 3;
  // Both runs start from the same first component; the mixture adds a second, also near the origin.
  const GaussianComponent a{(Vector(2) << 0.5, -0.3).finished(), Matrix::Identity(2, 2)};
  const GaussianComponent b{(Vector(2) << -0.4, 0.6).finished(), Matrix::Identity(2, 2)};
  const MixtureViResult single = mixture_vi(loss, Vector::Ones(1), {a}, opt);
  const MixtureViResult mix = mixture_vi(loss, Vector::Constant(2, 0.5), {a, b}, opt);
  // The modes are near (−2, 2) and (2, −2) (the sample means of the two halves of the data).
  const double lo = problem.y.head(20).mean(), hi = problem.y.tail(20).mean();
  const Vector mode1 = (Vector(2) << hi, lo).finished(), mode2 = (Vector(2) << lo, hi).finished();
  const Vector m0 = mix.components[0].mean, m1 = mix.components[1].mean;
  const double err = std::min(std::max((m0 - mode1).norm(), (m1 - mode2).norm()),
                              std::max((m0 - mode2).norm(), (m1 - mode1).norm()));
  EXPECT_LT(err, 0.3);
  // The single Gaussian sits on one mode.
  EXPECT_LT(std::min((single.components[0].mean - mode1).norm(),
                     (single.components[0].mean - mode2).norm()),
            0.3);
  // ELBOs: the mixture reaches log Z; one Gaussian only log Z − log 2.
  EXPECT_LT(mix.elbo_se, 0.01);
  EXPECT_GT(mix.elbo, single.elbo + 0.5);
  EXPECT_NEAR(mix.elbo, log_z, 0.05);
  EXPECT_NEAR(single.elbo, log_z - std::log(2.0), 0.05);
  EXPECT_LT(mix.elbo, log_z + 4 * mix.elbo_se);  // a lower bound
}

TEST(MixtureVi, BadInputIsAnError) {
  const LabelSwitching problem = make_problem();
  const LossFunctions loss = LossFunctions::wrap(problem);
  const GaussianComponent a{Vector::Zero(2), Matrix::Identity(2, 2)};
  EXPECT_THROW(mixture_vi(loss, Vector::Constant(2, 0.4), {a, a}, {}), Error);
  EXPECT_THROW(mixture_vi(loss, Vector::Ones(1),
                          {GaussianComponent{Vector::Zero(3), Matrix::Identity(3, 3)}}, {}),
               Error);
  MixtureViOptions bad;
  bad.rho = 0;
  EXPECT_THROW(mixture_vi(loss, Vector::Ones(1), {a}, bad), Error);
}

}  // namespace
}  // namespace blr::inference
