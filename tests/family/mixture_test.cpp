// Invariants of the Gaussian mixture (§3.2, App. E) and the spike-and-slab (§4.3, eq. 41), which
// are not exponential families: the density integrates to one, sample moments match, the
// responsibilities (eq. 71) sum to one, and ∇ log q (eq. 69) and ∇² log q (eq. 70) match finite
// differences; the joint expectation parameters of eq. 27 add up to E_q[T(θ)].
#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/rng.hpp"
#include "blr/family/families.hpp"
#include "stats.hpp"

namespace blr {
namespace {

using testing::RunningStats;

using testing::kEps;

Matrix random_spd(Rng& rng, Index d, double ridge) {
  Matrix a(d, d);
  for (Index i = 0; i < d * d; ++i) a.data()[i] = rng.normal();
  return 0.5 * a * a.transpose() + ridge * Matrix::Identity(d, d);
}

MixtureOfGaussians three_component_mixture(Rng& rng, Index d) {
  std::vector<GaussianFull> components;
  for (int k = 0; k < 3; ++k)
    components.emplace_back(2.0 * rng.normal_vector(d), random_spd(rng, d, 0.8));
  return MixtureOfGaussians(components, Vector{{0.5, 0.3, 0.2}});
}

MixtureOfDiagonalGaussians diagonal_mixture(Rng& rng, Index d) {
  std::vector<GaussianDiag> components;
  for (int k = 0; k < 2; ++k)
    components.emplace_back(rng.normal_vector(d),
                            (rng.normal_vector(d).array().square() + 0.5).matrix());
  return MixtureOfDiagonalGaussians(components, Vector{{0.35, 0.65}});
}

/// Composite Simpson rule of f on [a, b] with n (even) intervals.
template <class Fn>
double simpson(const Fn& f, double a, double b, int n) {
  const double h = (b - a) / n;
  double s = f(a) + f(b);
  for (int i = 1; i < n; ++i) s += (i % 2 == 1 ? 4.0 : 2.0) * f(a + i * h);
  return s * h / 3.0;
}

/// Gradient of f by central differences (step ε^{1/3}·max(1,|x_i|)), with the Richardson +
/// rounding error bound of invariants_test.cpp.
template <class Fn>
std::pair<Matrix, Matrix> jacobian_by_differences(const Fn& f, const Vector& x) {
  const Index n = x.size();
  const Index m = f(x).size();
  Matrix jac(m, n), tol(m, n);
  for (Index i = 0; i < n; ++i) {
    const double h = std::cbrt(kEps) * std::max(1.0, std::abs(x[i]));
    auto diff = [&](double step) {
      Vector p = x, q = x;
      p[i] += step;
      q[i] -= step;
      const Vector fp = f(p), fq = f(q);
      return std::pair<Vector, Vector>{(fp - fq) / (2 * step),
                                       fp.cwiseAbs().cwiseMax(fq.cwiseAbs())};
    };
    const auto [d1, scale] = diff(h);
    const auto [d2, unused] = diff(2 * h);
    (void)unused;
    jac.col(i) = d1;
    tol.col(i) =
        (4.0 / 3.0) * (d2 - d1).cwiseAbs() + ((64.0 * kEps / h) * (1.0 + scale.array())).matrix();
  }
  return {jac, tol};
}

void expect_within(const Matrix& a, const Matrix& b, const Matrix& tol, const char* what) {
  for (Index i = 0; i < a.rows(); ++i)
    for (Index j = 0; j < a.cols(); ++j)
      EXPECT_NEAR(a(i, j), b(i, j), tol(i, j)) << what << " entry " << i << "," << j;
}

// ---- mixture ---------------------------------------------------------------------------------

TEST(GaussianMixture, DensityIntegratesToOneIn1D) {
  const MixtureOfGaussians q({GaussianFull(Vector{{-2.0}}, Matrix::Constant(1, 1, 4.0)),
                              GaussianFull(Vector{{1.5}}, Matrix::Constant(1, 1, 0.5))},
                             Vector{{0.3, 0.7}});
  const double integral =
      simpson([&](double x) { return std::exp(q.log_density(Vector{{x}})); }, -20.0, 20.0, 20000);
  EXPECT_NEAR(integral, 1.0, 1e-9);
}

TEST(GaussianMixture, DensityIntegratesToOneIn2D) {
  Rng rng(21);
  const MixtureOfGaussians q = three_component_mixture(rng, 2);
  // Iterated Simpson over a box holding all but ~1e-12 of the mass.
  const double lo = -14.0, hi = 14.0;
  const double integral = simpson(
      [&](double x) {
        return simpson(
            [&](double y) {
              return std::exp(q.log_density(Vector{{x, y}}));
            },
            lo, hi, 400);
      },
      lo, hi, 400);
  EXPECT_NEAR(integral, 1.0, 1e-6);
}

TEST(GaussianMixture, ResponsibilitiesArePosteriorsOverComponents) {
  Rng rng(22);
  const MixtureOfGaussians q = three_component_mixture(rng, 3);
  for (int i = 0; i < 20; ++i) {
    const Vector theta = q.sample(rng);
    const Vector r = q.responsibilities(theta);
    EXPECT_NEAR(r.sum(), 1.0, 1e-14);
    EXPECT_TRUE((r.array() >= 0).all());
    for (Index k = 0; k < q.size(); ++k) {
      const double direct =
          q.weights()[k] * std::exp(q.component(k).log_density(theta) - q.log_density(theta));
      EXPECT_NEAR(r[k], direct, 1e-12);
    }
  }
  // Far out in the tails the log-sum-exp keeps them finite.
  const Vector far = Vector::Constant(3, 1e3);
  EXPECT_TRUE(q.responsibilities(far).allFinite());
  EXPECT_NEAR(q.responsibilities(far).sum(), 1.0, 1e-14);
}

TEST(GaussianMixture, GradientAndHessianMatchFiniteDifferences) {
  Rng rng(23);
  const MixtureOfGaussians q = three_component_mixture(rng, 3);
  const MixtureOfDiagonalGaussians qd = diagonal_mixture(rng, 3);
  for (int i = 0; i < 5; ++i) {
    // Points between components, where several responsibilities are non-trivial.
    const Vector theta =
        0.5 * (q.component(0).mean + q.component(i % 3).mean) + 0.3 * rng.normal_vector(3);
    {
      const auto [g, tg] = jacobian_by_differences(
          [&](const Vector& x) { return Vector::Constant(1, q.log_density(x)); }, theta);
      expect_within(q.grad_log_density(theta).transpose(), g, tg, "full gradient");
      const auto [h, th] =
          jacobian_by_differences([&](const Vector& x) { return q.grad_log_density(x); }, theta);
      const Matrix analytic = q.hessian_log_density(theta);
      expect_within(analytic, h, th, "full Hessian");
      EXPECT_LT((analytic - analytic.transpose()).cwiseAbs().maxCoeff(), 1e-12);
    }
    {
      const Vector t = qd.sample(rng);
      const auto [g, tg] = jacobian_by_differences(
          [&](const Vector& x) { return Vector::Constant(1, qd.log_density(x)); }, t);
      expect_within(qd.grad_log_density(t).transpose(), g, tg, "diagonal gradient");
      const auto [h, th] =
          jacobian_by_differences([&](const Vector& x) { return qd.grad_log_density(x); }, t);
      expect_within(qd.hessian_log_density(t), h, th, "diagonal Hessian");
    }
  }
}

TEST(GaussianMixture, OneComponentIsTheGaussian) {
  Rng rng(24);
  const GaussianFull g(rng.normal_vector(3), random_spd(rng, 3, 1.0));
  const MixtureOfGaussians q({g}, Vector::Ones(1));
  const Vector theta = rng.normal_vector(3);
  EXPECT_NEAR(q.log_density(theta), g.log_density(theta), 1e-13);
  EXPECT_LT((q.grad_log_density(theta) - g.precision_matrix() * (g.mean - theta)).norm(), 1e-12);
  EXPECT_LT((q.hessian_log_density(theta) + g.precision_matrix()).norm(), 1e-12);
}

TEST(GaussianMixture, SampleMomentsAndComponentFrequencies) {
  Rng rng(25);
  const MixtureOfGaussians q = three_component_mixture(rng, 2);
  const long n = 40000;
  RunningStats theta_stats, second, freq;
  for (long i = 0; i < n; ++i) {
    const auto [z, theta] = q.sample_with_component(rng);
    theta_stats.add(theta);
    Vector outer(3);
    outer << theta[0] * theta[0], theta[1] * theta[1], theta[0] * theta[1];
    second.add(outer);
    Vector onehot = Vector::Zero(3);
    onehot[z] = 1.0;
    freq.add(onehot);
  }
  const Vector mean = q.mean();
  const Matrix cov = q.covariance();
  const Vector expected_second{{cov(0, 0) + mean[0] * mean[0], cov(1, 1) + mean[1] * mean[1],
                                cov(0, 1) + mean[0] * mean[1]}};
  for (Index i = 0; i < 2; ++i)
    EXPECT_NEAR(theta_stats.mean()[i], mean[i], 5 * theta_stats.standard_error()[i]);
  for (Index i = 0; i < 3; ++i) {
    EXPECT_NEAR(second.mean()[i], expected_second[i], 5 * second.standard_error()[i]);
    EXPECT_NEAR(freq.mean()[i], q.weights()[i], 5 * freq.standard_error()[i]);
  }
}

TEST(GaussianMixture, JointExpectationParametersOfEquation27) {
  Rng rng(26);
  const MixtureOfGaussians q = three_component_mixture(rng, 2);
  // μ_k = E_q[1{z=k} T(θ)] = π_k μ(component k); summed over k it is E_q[T(θ)].
  const long n = 40000;
  std::vector<RunningStats> joint(3);
  for (long i = 0; i < n; ++i) {
    const auto [z, theta] = q.sample_with_component(rng);
    for (Index k = 0; k < 3; ++k) {
      joint[k].add(k == z ? q.component(k).sufficient_statistic(theta)
                          : Vector(Vector::Zero(q.component(k).natural_size())));
    }
  }
  Vector total = Vector::Zero(q.component(0).natural_size());
  for (Index k = 0; k < 3; ++k) {
    const Vector mu = q.component_expectation(k);
    total += mu;
    EXPECT_LT((mu - q.weights()[k] * q.component(k).expectation()).norm(), 1e-14);
    for (Index i = 0; i < mu.size(); ++i)
      EXPECT_NEAR(joint[k].mean()[i], mu[i], 5 * joint[k].standard_error()[i])
          << "k=" << k << " i=" << i;
    // λ_k is the component's natural parameter, and setting it back is the identity.
    MixtureOfGaussians copy = q;
    copy.set_component_natural(k, q.component_natural(k));
    EXPECT_LT((copy.component(k).mean - q.component(k).mean).norm(), 1e-12);
  }
  EXPECT_LT((total.head(2) - q.mean()).norm(), 1e-12);
}

TEST(GaussianMixture, EntropyEstimateIsBoundedByTheGaussianOfSameCovariance) {
  Rng rng(27);
  const MixtureOfGaussians q = three_component_mixture(rng, 2);
  double se = 0;
  const double h = q.entropy_estimate(rng, 20000, &se);
  EXPECT_GT(se, 0.0);
  // Among densities with a given covariance the Gaussian has the largest entropy; and
  // H(q) ≥ Σ π_k H(q_k) (concavity of entropy).
  const GaussianFull moment_matched(q.mean(), Matrix(q.covariance().inverse()));
  EXPECT_LT(h, moment_matched.entropy() + 5 * se);
  double lower = 0;
  for (Index k = 0; k < q.size(); ++k) lower += q.weights()[k] * q.component(k).entropy();
  EXPECT_GT(h, lower - 5 * se);
}

TEST(GaussianMixture, InvalidConstructionIsRejected) {
  const GaussianDiag a(Vector::Zero(2), Vector::Ones(2));
  const GaussianDiag b(Vector::Zero(3), Vector::Ones(3));
  EXPECT_THROW(MixtureOfDiagonalGaussians({a, a}, Vector{{0.5, 0.6}}), Error);
  EXPECT_THROW(MixtureOfDiagonalGaussians({a, a}, Vector{{1.0, 0.0}}), Error);
  EXPECT_THROW(MixtureOfDiagonalGaussians({a, b}, Vector{{0.5, 0.5}}), Error);
  EXPECT_THROW(MixtureOfDiagonalGaussians({a}, Vector{{0.5, 0.5}}), Error);
  EXPECT_THROW(MixtureOfDiagonalGaussians({}, Vector(0)), Error);
  MixtureOfDiagonalGaussians q({a, a}, Vector{{0.5, 0.5}});
  EXPECT_THROW(q.set_component_natural(0, Vector{{0.0, 0.0, 0.5, -0.5}}), Error);
  EXPECT_THROW(q.log_density(Vector::Zero(3)), Error);
}

// ---- spike and slab --------------------------------------------------------------------------

TEST(SpikeAndSlab, DensityIsTheTwoComponentMixture) {
  Rng rng(31);
  const SpikeAndSlab q(rng.normal_vector(4), Vector::Constant(4, 3.0), 0.7, 100.0);
  for (int i = 0; i < 10; ++i) {
    const Vector theta = q.sample(rng);
    const double slab = std::log(0.7) + q.slab().log_density(theta);
    const double spike = std::log(0.3) + q.spike().log_density(theta);
    const double expected = std::max(slab, spike) + std::log1p(std::exp(-std::abs(slab - spike)));
    EXPECT_NEAR(q.log_density(theta), expected, 1e-12 * (1 + std::abs(expected)));
    const Vector r = q.responsibilities(theta);
    EXPECT_NEAR(r.sum(), 1.0, 1e-14);
    EXPECT_NEAR(r[0], std::exp(slab - expected), 1e-12);
  }
}

TEST(SpikeAndSlab, DensityIntegratesToOneWithANarrowSpike) {
  const SpikeAndSlab q(Vector{{1.2}}, Vector{{2.0}}, 0.6, 1e4);  // spike sd 0.01
  auto f = [&](double x) { return std::exp(q.log_density(Vector{{x}})); };
  // Split at the spike so that each Simpson panel sees a smooth integrand on its scale.
  const double integral =
      simpson(f, -12.0, -0.2, 4000) + simpson(f, -0.2, 0.2, 4000) + simpson(f, 0.2, 12.0, 4000);
  EXPECT_NEAR(integral, 1.0, 1e-9);
}

TEST(SpikeAndSlab, SampleMomentsAndKeepFrequency) {
  Rng rng(32);
  const SpikeAndSlab q(Vector{{1.0, -2.0, 0.5}}, Vector{{1.0, 4.0, 0.5}}, 0.3, 0.5);
  RunningStats x, centred2, keep;
  const long n = 40000;
  std::vector<Vector> draws;
  for (long i = 0; i < n; ++i) {
    const auto [kept, theta] = q.sample_with_indicator(rng);
    keep.add(kept ? 1.0 : 0.0);
    x.add(theta);
    draws.push_back(theta);
  }
  const Vector mean = q.expected_value();
  for (const Vector& d : draws) centred2.add((d - mean).cwiseAbs2());
  EXPECT_NEAR(keep.mean()[0], 0.3, 5 * keep.standard_error()[0]);
  for (Index i = 0; i < 3; ++i) {
    EXPECT_NEAR(x.mean()[i], mean[i], 5 * x.standard_error()[i]);
    EXPECT_NEAR(centred2.mean()[i], q.variance()[i], 5 * centred2.standard_error()[i]);
  }
}

TEST(SpikeAndSlab, SlabResponsibilityIsOneAwayFromZero) {
  // App. G (eqs. 85–86) approximates q(z = 1 | θ) by 1 when θ is far from 0 relative to the spike.
  const SpikeAndSlab q(Vector{{2.0, -1.5}}, Vector{{1.0, 1.0}}, 0.5, 1e6);
  EXPECT_GT(q.slab_responsibility(Vector{{2.0, -1.5}}), 1.0 - 1e-12);
  EXPECT_LT(q.slab_responsibility(Vector{{0.0, 0.0}}), 1e-3);
}

TEST(SpikeAndSlab, GradientAndHessianMatchFiniteDifferences) {
  Rng rng(33);
  const SpikeAndSlab q(Vector{{0.4, -0.3}}, Vector{{2.0, 3.0}}, 0.6, 8.0);
  for (int i = 0; i < 5; ++i) {
    const Vector theta = 0.4 * rng.normal_vector(2);
    const auto [g, tg] = jacobian_by_differences(
        [&](const Vector& x) { return Vector::Constant(1, q.log_density(x)); }, theta);
    expect_within(q.grad_log_density(theta).transpose(), g, tg, "gradient");
    const auto [h, th] =
        jacobian_by_differences([&](const Vector& x) { return q.grad_log_density(x); }, theta);
    expect_within(q.hessian_log_density(theta), h, th, "Hessian");
  }
}

TEST(SpikeAndSlab, FixedNoiseAndTheDropoutLimit) {
  const SpikeAndSlab q(Vector{{1.0, 2.0}}, Vector{{4.0, 1.0}}, 0.5, 1e12);
  const Vector eps{{0.5, -1.0}};
  EXPECT_LT((q.sample_from_noise(true, eps) - Vector{{1.25, 1.0}}).norm(), 1e-15);
  EXPECT_LT(q.sample_from_noise(false, eps).norm(), 2e-6);  // s₀ → ∞: the dropped block is 0
  EXPECT_EQ(
      SpikeAndSlab(Vector{{1.0}}, Vector{{1.0}}, 1.0, 10.0).responsibilities(Vector{{0.0}})[0],
      1.0);
}

TEST(SpikeAndSlab, InvalidConstructionIsRejected) {
  EXPECT_THROW(SpikeAndSlab(Vector{{1.0}}, Vector{{1.0}}, 0.0, 10.0), Error);
  EXPECT_THROW(SpikeAndSlab(Vector{{1.0}}, Vector{{1.0}}, 1.5, 10.0), Error);
  EXPECT_THROW(SpikeAndSlab(Vector{{1.0}}, Vector{{1.0}}, 0.5, 0.0), Error);
  EXPECT_THROW(SpikeAndSlab(Vector{{1.0}}, Vector{{-1.0}}, 0.5, 10.0), Error);
  EXPECT_THROW(SpikeAndSlab(Vector{{1.0, 2.0}}, Vector{{1.0}}, 0.5, 10.0), Error);
}

}  // namespace
}  // namespace blr
