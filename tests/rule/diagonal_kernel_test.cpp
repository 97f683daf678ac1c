// The fused diagonal step (rule/diagonal_kernel.hpp) against the step written plainly from the
// equations, for the stage lists presets use, each stage alone and every stage at once, and the
// diagnosis of invalid values at the right coordinate.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "blr/algorithms/ivon.hpp"
#include "blr/algorithms/newton.hpp"
#include "blr/algorithms/ogn_vogn.hpp"
#include "blr/algorithms/rmsprop_adam.hpp"
#include "blr/algorithms/vadam.hpp"
#include "blr/core/rng.hpp"
#include "blr/rule/gaussian_rule.hpp"

namespace blr {
namespace {

using namespace stage;

/// Every stage, with values that make each term visible.
template <class... S>
Policy<S...> test_policy() {
  Policy<S...> p;
  p.mean_rate = Schedule::constant(0.3);
  p.precision_rate = Schedule::constant(0.2);
  if constexpr (Policy<S...>::template has<PriorInGradient>) p.template get<PriorInGradient>().precision = 0.05;
  if constexpr (Policy<S...>::template has<PriorInDirection>) p.template get<PriorInDirection>().precision = 0.07;
  if constexpr (Policy<S...>::template has<PriorInCurvature>) p.template get<PriorInCurvature>().precision = 0.05;
  if constexpr (Policy<S...>::template has<GradientAverage>) p.template get<GradientAverage>() = {0.8, true};
  if constexpr (Policy<S...>::template has<NaturalMomentum>) p.template get<NaturalMomentum>().gamma = 0.4;
  if constexpr (Policy<S...>::template has<SqrtScaling>) p.template get<SqrtScaling>() = {1e-3, 1e-2};
  if constexpr (Policy<S...>::template has<Clip>) p.template get<Clip>().radius = 0.5;
  return p;
}

/// The step as the equations read (stage/coordinate.hpp), one coordinate at a time.
struct PlainState {
  Vector m, s, u, m_prev, s_prev;
  bool has_prev = false;
  long t = 0;
};

template <class... S>
void plain_step(PlainState& x, const Vector& g_hat, const Vector& h_hat, bool curvature,
                const Policy<S...>& p) {
  using P = Policy<S...>;
  const long t = ++x.t;
  const double rm = p.mean_rate.initial, rs = p.precision_rate.initial;
  const Index d = x.m.size();
  if (x.u.size() != d) x.u = Vector::Zero(d);
  Vector m = x.m, s = x.s, u = x.u;
  for (Index i = 0; i < d; ++i) {
    double g = g_hat[i];
    if constexpr (P::template has<PriorInGradient>) g += p.template get<PriorInGradient>().precision * x.m[i];
    double dir = g;
    if constexpr (P::template has<GradientAverage>) {
      const auto& a = p.template get<GradientAverage>();
      u[i] = a.beta * x.u[i] + (a.heavy_ball ? 1.0 : 1.0 - a.beta) * g;
      dir = a.debias ? u[i] / (1.0 - std::pow(a.beta, t)) : u[i];
    }
    if constexpr (P::template has<PriorInDirection>) dir += p.template get<PriorInDirection>().precision * x.m[i];
    double gamma = 0.0;
    if constexpr (P::template has<NaturalMomentum>) gamma = x.has_prev ? p.template get<NaturalMomentum>().gamma : 0.0;
    if (curvature) {
      double h = h_hat[i];
      if constexpr (P::template has<PriorInCurvature>) h += p.template get<PriorInCurvature>().precision;
      s[i] = (1.0 - rs) * x.s[i] + rs * h;
      if constexpr (P::template has<IblrCorrection>) s[i] += rs * rs / 2.0 * (x.s[i] - h) * (x.s[i] - h) / x.s[i];
      s[i] += gamma * (x.has_prev ? x.s[i] - x.s_prev[i] : 0.0);
    }
    double pre = P::template has<OldPrecision> ? x.s[i] : s[i];
    if constexpr (P::template has<PrecisionDebias>) pre /= 1.0 - std::pow(1.0 - rs, t);
    if constexpr (P::template has<SqrtScaling>) {
      const auto& q = p.template get<SqrtScaling>();
      pre = std::sqrt(pre + q.inner) + q.outer;
    }
    double step = dir / pre;
    if constexpr (P::template has<Clip>) {
      const double r = p.template get<Clip>().radius;
      step = std::clamp(step, -r, r);
    }
    m[i] = x.m[i] - rm * step;
    if (x.has_prev) m[i] += gamma * x.s_prev[i] * (x.m[i] - x.m_prev[i]) / pre;
  }
  if constexpr (P::template has<NaturalMomentum>) {
    x.m_prev = x.m;
    x.s_prev = x.s;
    x.has_prev = true;
  }
  x.m = m;
  x.s = s;
  x.u = u;
}

template <class P>
void expect_fused_equals_plain(const P& p, bool curvature, unsigned seed, const std::string& name) {
  // d = 1037 is not a multiple of any vector width, so every vector loop also runs its scalar
  // remainder. Values are O(1); each coordinate goes through ≤ 25 roundings per step, which the
  // two versions order differently only within a product or a sum of two products (≤ 2 ulp each);
  // over 4 steps with factors ≤ 1/0.05 (the smallest preconditioner) the differences stay below
  // 4·25·2·2⁻⁵³·20 ≈ 5e-13.
  const Index d = 1037;
  const double tolerance = 1e-12;
  Rng rng(seed);
  const Vector m0 = rng.normal_vector(d);
  const Vector s0 = (rng.normal_vector(d).array().square() + 0.5).matrix();
  auto state = init(GaussianDiag(m0, s0));
  PlainState plain{m0, s0, Vector(), Vector(), Vector()};
  for (int k = 0; k < 4; ++k) {
    const Vector g = rng.normal_vector(d);
    // Curvature below, around and above the precision, so the correction matters.
    const Vector h = (rng.normal_vector(d).array().square() * 2.0).matrix();
    const GaussianEstimate e{g, curvature ? Curvature::diagonal(h) : Curvature::none()};
    step(state, e, p);
    plain_step(plain, g, h, curvature, p);
    ASSERT_LT((state.q.mean - plain.m).cwiseAbs().maxCoeff(), tolerance) << name << ", step " << k + 1;
    ASSERT_LT((state.q.precision - plain.s).cwiseAbs().maxCoeff(), tolerance) << name << ", step " << k + 1;
    if constexpr (P::template has<GradientAverage>) {
      ASSERT_LT((state.gradient_average - plain.u).cwiseAbs().maxCoeff(), tolerance)
          << name << ", step " << k + 1;
    }
  }
}

template <class P>
void check_both(const P& p, unsigned seed, const std::string& name) {
  expect_fused_equals_plain(p, true, seed, name + " (with curvature)");
  expect_fused_equals_plain(p, false, seed + 1000, name + " (no curvature)");
}

TEST(DiagonalKernel, PresetPoliciesEqualThePlainStep) {
  IvonOptions ivon;
  ivon.ess = 10;
  ivon.beta2 = 0.8;
  ivon.clip_radius = 0.5;
  check_both(ivon_policy(ivon, 3.0), 1, "IVON");
  VadamOptions vadam;
  vadam.ess = 20;
  vadam.beta2 = 0.8;
  check_both(vadam_policy(vadam), 2, "Vadam");
  VognOptions vogn;
  vogn.ess = 20;
  vogn.damping = 0.1;
  vogn.curvature_rate = 0.3;
  check_both(vogn_policy(vogn, 20.0), 3, "VOGN");
  check_both(test_policy<GradientAverage, PrecisionDebias, SqrtScaling>(), 4, "Adam");
  check_both(test_policy<SqrtScaling>(), 5, "RMSprop");
  check_both(test_policy<PriorInDirection, PriorInCurvature, IblrCorrection>(), 6, "Newton");
  check_both(test_policy<>(), 7, "plain BLR");
}

TEST(DiagonalKernel, EachStageAloneEqualsThePlainStep) {
  check_both(test_policy<PriorInGradient>(), 11, "PriorInGradient");
  check_both(test_policy<GradientAverage>(), 12, "GradientAverage");
  auto heavy = test_policy<GradientAverage>();
  heavy.get<GradientAverage>() = {0.6, false, true};
  check_both(heavy, 13, "GradientAverage (heavy ball)");
  check_both(test_policy<PriorInDirection>(), 14, "PriorInDirection");
  check_both(test_policy<PriorInCurvature>(), 15, "PriorInCurvature");
  check_both(test_policy<IblrCorrection>(), 16, "IblrCorrection");
  check_both(test_policy<NaturalMomentum>(), 17, "NaturalMomentum");
  check_both(test_policy<OldPrecision>(), 18, "OldPrecision");
  check_both(test_policy<PrecisionDebias>(), 19, "PrecisionDebias");
  check_both(test_policy<SqrtScaling>(), 20, "SqrtScaling");
  check_both(test_policy<Clip>(), 21, "Clip");
}

TEST(DiagonalKernel, EveryStageAtOnceEqualsThePlainStep) {
  check_both(test_policy<PriorInGradient, GradientAverage, PriorInDirection, PriorInCurvature,
                         IblrCorrection, NaturalMomentum, OldPrecision, PrecisionDebias,
                         SqrtScaling, Clip>(),
             31, "every stage");
  check_both(test_policy<PriorInGradient, GradientAverage, PriorInDirection, PriorInCurvature,
                         IblrCorrection, NaturalMomentum, PrecisionDebias, SqrtScaling, Clip>(),
             32, "every stage, new precision");
}

template <class P>
std::string error_of(const GaussianEstimate& e, const P& p, RuleState<GaussianDiag> state) {
  try {
    step(state, e, p);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(DiagonalKernel, InvalidValuesAreDiagnosedAtTheirCoordinate) {
  const Index d = 1037, bad = 777;
  Rng rng(5);
  const auto state = init(GaussianDiag(rng.normal_vector(d), Vector::Ones(d)));
  auto p = test_policy<GradientAverage, PriorInDirection, PriorInCurvature, IblrCorrection>();
  const Vector g = rng.normal_vector(d);
  const Vector h = Vector::Ones(d);

  Vector g_bad = g;
  g_bad[bad] = std::numeric_limits<double>::infinity();
  std::string what = error_of({g_bad, Curvature::diagonal(h)}, p, state);
  EXPECT_NE(what.find("gradient estimate"), std::string::npos) << what;
  EXPECT_NE(what.find("entry 777"), std::string::npos) << what;

  Vector h_bad = h;
  h_bad[bad] = std::nan("");
  what = error_of({g, Curvature::diagonal(h_bad)}, p, state);
  EXPECT_NE(what.find("curvature estimate"), std::string::npos) << what;
  EXPECT_NE(what.find("entry 777"), std::string::npos) << what;

  // Very negative curvature without the correction: the precision turns negative there.
  p.get<IblrCorrection>().enabled = false;
  h_bad = h;
  h_bad[bad] = -1e3;
  what = error_of({g, Curvature::diagonal(h_bad)}, p, state);
  EXPECT_NE(what.find("non-positive at coordinate 777"), std::string::npos) << what;

  // With the correction the same estimate is a valid step.
  p.get<IblrCorrection>().enabled = true;
  EXPECT_EQ(error_of({g, Curvature::diagonal(h_bad)}, p, state), "");
}

}  // namespace
}  // namespace blr
