// The Gaussian BLR step: equality with the natural-parameter form, momentum, the positive-definite
// correction, rank-one updates, NaN reporting and exact save/restore.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <Eigen/Eigenvalues>

#include "blr/core/rng.hpp"
#include "blr/rule/gaussian_rule.hpp"
#include "blr/rule/natural_step.hpp"
#include "blr/rule/state_io.hpp"

namespace blr {
namespace {

Matrix random_spd(Rng& rng, Index d, double ridge) {
  Matrix a(d, d);
  for (Index i = 0; i < d * d; ++i) a.data()[i] = rng.normal();
  return a * a.transpose() + ridge * Matrix::Identity(d, d);
}

template <class... Stages>
Policy<Stages...> plain(double rho) {
  Policy<Stages...> p;
  p.mean_rate = Schedule::constant(rho);
  p.precision_rate = Schedule::constant(rho);
  return p;
}

// The natural parameter of GaussianFull, λ = (Sm, −½S_ii, −S_ij), is linear in the pair (Sm, S),
// and ∇_μ E_q[ℓ̄] = (ĝ − Ĥm, ½Ĥ) (eqs. 10–11) is −natural_from(Ĥm − ĝ, Ĥ) in its coordinates.
TEST(GaussianRule, FullStepEqualsNaturalParameterStep) {
  Rng rng(11);
  const Index d = 5;
  const Matrix s = random_spd(rng, d, 1.0);
  const Vector m = rng.normal_vector(d);
  const Matrix h = random_spd(rng, d, 0.5);
  const Vector g = rng.normal_vector(d);
  const double rho = 0.3;
  auto state = init(GaussianFull(m, s));
  GaussianEstimate e{g, Curvature::full(h)};
  step(state, e, plain<>(rho));

  const Vector grad_mu = -GaussianFull::natural_from(h * m - g, h);
  const Vector lambda = natural_step(GaussianFull(m, s).natural(), grad_mu, rho);
  const Matrix s_new = GaussianFull::precision_from_natural(lambda);
  const Vector m_new = GaussianFull::from_natural(lambda).mean;
  EXPECT_LT((state.q.precision.matrix() - s_new).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((state.q.mean - m_new).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(GaussianRule, DiagonalStepEqualsNaturalParameterStep) {
  Rng rng(12);
  const Index d = 7;
  const Vector s = (rng.normal_vector(d).array().square() + 0.5).matrix();
  const Vector m = rng.normal_vector(d);
  const Vector h = (rng.normal_vector(d).array().square() + 0.1).matrix();
  const Vector g = rng.normal_vector(d);
  const double rho = 0.25;
  auto state = init(GaussianDiag(m, s));
  step(state, GaussianEstimate{g, Curvature::diagonal(h)}, plain<>(rho));
  Vector lambda(2 * d), grad_mu(2 * d);
  lambda << s.cwiseProduct(m), s;
  grad_mu << g - h.cwiseProduct(m), -h;
  const Vector next = natural_step(lambda, grad_mu, rho);
  EXPECT_LT((state.q.precision - next.tail(d)).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_LT((state.q.mean - next.head(d).cwiseQuotient(next.tail(d))).cwiseAbs().maxCoeff(), 1e-13);
}

TEST(GaussianRule, NaturalMomentumEqualsEquation80) {
  // Three diagonal steps with γ > 0 against λ_{t+1} = (1−ρ)λ_t − ρ∇_μ + γ(λ_t − λ_{t−1}).
  Rng rng(13);
  const Index d = 4;
  Vector m = rng.normal_vector(d);
  Vector s = Vector::Constant(d, 2.0);
  auto p = plain<stage::NaturalMomentum>(0.2);
  p.get<stage::NaturalMomentum>().gamma = 0.6;
  auto state = init(GaussianDiag(m, s));
  Vector lambda(2 * d), lambda_prev(2 * d);
  lambda << s.cwiseProduct(m), s;
  lambda_prev = lambda;
  for (int t = 0; t < 3; ++t) {
    const Vector g = rng.normal_vector(d);
    const Vector h = (rng.normal_vector(d).array().square() + 1.0).matrix();
    step(state, GaussianEstimate{g, Curvature::diagonal(h)}, p);
    const Vector mt = lambda.head(d).cwiseQuotient(lambda.tail(d));
    Vector grad_mu(2 * d);
    grad_mu << g - h.cwiseProduct(mt), -h;
    const Vector next = natural_step(lambda, grad_mu, 0.2, t == 0 ? 0.0 : 0.6, &lambda_prev);
    lambda_prev = lambda;
    lambda = next;
    EXPECT_LT((state.q.precision - lambda.tail(d)).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LT((state.q.mean - lambda.head(d).cwiseQuotient(lambda.tail(d))).cwiseAbs().maxCoeff(),
              1e-12);
  }
}

TEST(GaussianRule, FixedCovarianceWithMomentumIsHeavyBall) {
  // Eq. 75: θ_{t+1} = θ_t − αĝ + γ(θ_t − θ_{t−1}), with S = I.
  Rng rng(14);
  const Index d = 3;
  auto p = plain<stage::NaturalMomentum>(0.1);
  p.get<stage::NaturalMomentum>().gamma = 0.9;
  Vector theta = rng.normal_vector(d), theta_prev = theta;
  auto state = init(GaussianFixed(theta));
  for (int t = 0; t < 10; ++t) {
    const Vector g = 2.0 * theta + Vector::Ones(d);
    step(state, GaussianEstimate{g, Curvature::none()}, p);
    const Vector next = theta - 0.1 * g + 0.9 * (theta - theta_prev);
    theta_prev = theta;
    theta = next;
    EXPECT_LT((state.q.mean - theta).cwiseAbs().maxCoeff(), 1e-13);
  }
}

TEST(GaussianRule, ImprovedRuleScalarOracle) {
  // research/algorithms.md §9 (a): S = 1, Ĥ = −10, ρ = 0.5: plain gives −4.5, iBLR 10.625.
  auto p = plain<stage::IblrCorrection>(0.5);
  p.get<stage::IblrCorrection>().enabled = false;
  auto plain_state = init(GaussianDiag(Vector::Zero(1), Vector::Ones(1)));
  GaussianEstimate e{Vector::Zero(1), Curvature::diagonal(Vector::Constant(1, -10.0))};
  EXPECT_THROW(step(plain_state, e, p), Error);  // −4.5 is not a precision
  EXPECT_THROW(step(plain_state, e, plain<>(0.5)), Error);  // nor without the stage
  p.get<stage::IblrCorrection>().enabled = true;
  auto state = init(GaussianDiag(Vector::Zero(1), Vector::Ones(1)));
  step(state, e, p);
  EXPECT_DOUBLE_EQ(state.q.precision[0], 10.625);
}

TEST(GaussianRule, PrecisionStaysPositiveDefiniteUnderAdversarialCurvature) {
  // 10^4 random draws of very negative Hessian estimates, diagonal and full (DESIGN §4.5).
  Rng rng(15);
  auto p = plain<stage::IblrCorrection>(0.9);
  auto diag = init(GaussianDiag(Vector::Zero(6), Vector::Ones(6)));
  auto full = init(GaussianFull(Vector::Zero(4), Matrix(Matrix::Identity(4, 4))));
  for (int k = 0; k < 10000; ++k) {
    p.precision_rate = Schedule::constant(rng.uniform());
    const Vector hd = -std::exp(6.0 * rng.uniform()) * (rng.normal_vector(6).array().abs() + 0.1).matrix();
    const Vector before = diag.q.precision;
    step(diag, GaussianEstimate{Vector::Zero(6), Curvature::diagonal(hd)}, p);
    ASSERT_TRUE((diag.q.precision.array() > 0).all()) << "draw " << k;
    // ½S is a lower bound of the corrected step.
    ASSERT_TRUE((diag.q.precision.array() >= 0.5 * before.array() * (1 - 1e-12)).all());
    if (k % 10 == 0) {
      Matrix a(4, 4);
      for (Index i = 0; i < 16; ++i) a.data()[i] = rng.normal();
      const Matrix hf = -std::exp(4.0 * rng.uniform()) * (a * a.transpose());
      step(full, GaussianEstimate{Vector::Zero(4), Curvature::full(hf)}, p);
      Eigen::SelfAdjointEigenSolver<Matrix> eig(full.q.precision.matrix());
      ASSERT_GT(eig.eigenvalues().minCoeff(), 0.0) << "draw " << k;
    }
    // keep the scale bounded so the test explores many halvings and recoveries
    if (diag.q.precision.maxCoeff() > 1e12 || diag.q.precision.minCoeff() < 1e-12)
      diag = init(GaussianDiag(Vector::Zero(6), Vector::Ones(6)));
    if (full.q.precision.matrix().norm() > 1e12 || full.q.precision.log_determinant() < -100)
      full = init(GaussianFull(Vector::Zero(4), Matrix(Matrix::Identity(4, 4))));
  }
}

TEST(GaussianRule, RankOneGaussNewtonEqualsDenseStep) {
  Rng rng(16);
  const Index d = 8, n = 5;
  const Matrix s = random_spd(rng, d, 1.0);
  const Vector m = rng.normal_vector(d), g = rng.normal_vector(d);
  Matrix rows(n, d);
  for (Index i = 0; i < n * d; ++i) rows.data()[i] = rng.normal();
  auto a = init(GaussianFull(m, s));
  auto b = init(GaussianFull(m, s));
  step(a, GaussianEstimate{g, Curvature::outer(rows, 2.5)}, plain<>(0.3));
  step(b, GaussianEstimate{g, Curvature::full(2.5 * rows.transpose() * rows)}, plain<>(0.3));
  EXPECT_LT((a.q.precision.matrix() - b.q.precision.matrix()).cwiseAbs().maxCoeff(), 1e-11);
  EXPECT_LT((a.q.mean - b.q.mean).cwiseAbs().maxCoeff(), 1e-11);
}

TEST(GaussianRule, NonFiniteGradientIsReportedWithTheStep) {
  auto state = init(GaussianDiag(Vector::Zero(2), Vector::Ones(2)));
  const auto p = plain<>(0.1);
  step(state, GaussianEstimate{Vector::Ones(2), Curvature::diagonal(Vector::Ones(2))}, p);
  Vector bad = Vector::Ones(2);
  bad[1] = std::nan("");
  try {
    step(state, GaussianEstimate{bad, Curvature::diagonal(Vector::Ones(2))}, p);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Step 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gradient"), std::string::npos) << e.what();
  }
}

TEST(GaussianRule, DivergingStepIsReported) {
  auto state = init(GaussianDiag(Vector::Constant(1, 1e300), Vector::Constant(1, 1e-300)));
  auto p = plain<>(0.5);
  p.precision_rate = Schedule::constant(0.0);
  EXPECT_THROW(step(state, GaussianEstimate{Vector::Constant(1, 1e300), Curvature::none()}, p),
               Error);
}

TEST(GaussianRule, SaveAndRestoreContinueBitForBit) {
  Rng rng(17);
  auto p = plain<stage::GradientAverage, stage::NaturalMomentum>(0.2);
  p.get<stage::NaturalMomentum>().gamma = 0.5;
  p.get<stage::GradientAverage>() = {0.9, /*debias=*/true};
  auto a = init(GaussianFull(rng.normal_vector(3), random_spd(rng, 3, 1.0)));
  auto run = [&](RuleState<GaussianFull>& st, Rng& r) {
    const Vector g = r.normal_vector(3);
    const Matrix h = random_spd(r, 3, 0.1);
    step(st, GaussianEstimate{g, Curvature::full(h)}, p);
  };
  for (int t = 0; t < 4; ++t) run(a, rng);
  auto b = load_state<GaussianFull>(save_state(a));
  Rng rng_b(0);
  rng_b.load(rng.save());
  for (int t = 0; t < 4; ++t) {
    run(a, rng);
    run(b, rng_b);
  }
  EXPECT_EQ(a.step, b.step);
  EXPECT_TRUE((a.q.mean.array() == b.q.mean.array()).all());
  EXPECT_TRUE((a.q.precision.lower().array() == b.q.precision.lower().array()).all());
}

TEST(GaussianRule, MalformedSavedStatesAreRefused) {
  EXPECT_THROW(load_state<GaussianDiag>("{"), Error);
  EXPECT_THROW(load_state<GaussianDiag>(R"({"format":"blr.rule_state","version":99})"), Error);
  auto s = init(GaussianDiag(Vector::Zero(2), Vector::Ones(2)));
  EXPECT_THROW(load_state<GaussianFull>(save_state(s)), Error);
}

// Found by the state fuzz harness (fuzz/corpus/state/): each was accepted or undefined behaviour.
TEST(GaussianRule, SavedStatesWithImpossibleValuesAreRefused) {
  const std::string good = save_state(init(GaussianDiag(Vector::Zero(2), Vector::Ones(2))));
  EXPECT_NO_THROW(load_state<GaussianDiag>(good));
  auto edited = [&](const char* key, const nlohmann::json& value) {
    auto j = nlohmann::json::parse(good);
    j[key] = value;
    return j.dump();
  };
  EXPECT_THROW(load_state<GaussianDiag>(edited("version", 1e300)), Error);  // float → int
  EXPECT_THROW(load_state<GaussianDiag>(edited("step", 1e300)), Error);     // float → long
  EXPECT_THROW(load_state<GaussianDiag>(edited("step", -1)), Error);
  EXPECT_THROW(load_state<GaussianDiag>(edited("gradient_average", {0.0, 0.0, 0.0})), Error);
  auto q = nlohmann::json::parse(good)["q"];
  q["precision"] = {1.0, 0.0};
  EXPECT_THROW(load_state<GaussianDiag>(edited("q", q)), Error);  // precision must be positive
  q["precision"] = {1.0, 1.0, 1.0};
  EXPECT_THROW(load_state<GaussianDiag>(edited("q", q)), Error);  // size differs from the mean
}

TEST(Policy, InvalidOptionsNameTheOption) {
  using P = Policy<stage::GradientAverage, stage::Clip>;
  P p;
  p.precision_rate = Schedule::constant(1.5);
  try {
    p.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("precision_rate"), std::string::npos);
  }
  p = P{};
  p.get<stage::GradientAverage>().beta = 1.0;
  EXPECT_THROW(p.validate(), Error);
  p = P{};
  p.get<stage::Clip>().radius = -1;
  EXPECT_THROW(p.validate(), Error);
}

}  // namespace
}  // namespace blr

namespace blr {
namespace {

TEST(GaussianRule, FailedStepLeavesTheStateUnchanged) {
  auto p = plain<stage::GradientAverage, stage::NaturalMomentum>(0.5);
  p.get<stage::GradientAverage>().beta = 0.9;
  p.get<stage::NaturalMomentum>().gamma = 0.5;
  auto state = init(GaussianDiag(Vector::Ones(3), Vector::Ones(3)));
  step(state, GaussianEstimate{Vector::Ones(3), Curvature::diagonal(Vector::Ones(3))}, p);
  const std::string before = save_state(state);
  Vector h = Vector::Ones(3);
  h[2] = -100.0;  // plain step makes the last precision negative
  EXPECT_THROW(step(state, GaussianEstimate{Vector::Ones(3), Curvature::diagonal(h)}, p), Error);
  EXPECT_EQ(save_state(state), before);
}

}  // namespace
}  // namespace blr
