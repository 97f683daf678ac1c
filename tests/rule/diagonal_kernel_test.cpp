// The fused diagonal step (rule/diagonal_kernel.hpp) against the step written plainly, for every
// combination of the policy's stages, and the diagnosis of invalid values at the right coordinate.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "blr/core/rng.hpp"
#include "blr/rule/gaussian_rule.hpp"

namespace blr {
namespace {

/// The stage switches the test enumerates (bit k of a combination).
enum Knob : unsigned {
  kAveraging = 1u << 0,
  kDebiasGradient = 1u << 1,
  kPriorInAverage = 1u << 2,
  kPdCorrection = 1u << 3,
  kMomentum = 1u << 4,
  kSqrt = 1u << 5,
  kDebiasPrecision = 1u << 6,
  kOldPrecision = 1u << 7,
  kClip = 1u << 8,
  kNoCurvature = 1u << 9,
  kKnobCombinations = 1u << 10
};

StepPolicy policy_of(unsigned knobs) {
  StepPolicy p;
  p.mean_rate = Schedule::constant(0.3);
  p.precision_rate = Schedule::constant(0.2);
  p.prior_precision = 0.05;
  p.gradient_averaging = (knobs & kAveraging) ? 0.8 : 0.0;
  p.debias_gradient = (knobs & kDebiasGradient) != 0u;
  p.prior_in_average = (knobs & kPriorInAverage) != 0u;
  p.pd_correction = (knobs & kPdCorrection) != 0u;
  p.natural_momentum = (knobs & kMomentum) ? 0.4 : 0.0;
  p.sqrt_scaling = (knobs & kSqrt) != 0u;
  p.sqrt_inner_offset = p.sqrt_scaling ? 1e-3 : 0.0;
  p.sqrt_outer_offset = p.sqrt_scaling ? 1e-2 : 0.0;
  p.debias_precision = (knobs & kDebiasPrecision) != 0u;
  p.use_new_precision = (knobs & kOldPrecision) == 0u;
  p.clip_radius = (knobs & kClip) ? 0.5 : std::numeric_limits<double>::infinity();
  return p;
}

/// The step as the equations read (StepPolicy's header, eqs. 12 and 80), one coordinate at a time.
struct PlainState {
  Vector m, s, u, m_prev, s_prev;
  bool has_prev = false;
  long t = 0;
};

void plain_step(PlainState& x, const Vector& g_hat, const Vector& h_hat, bool curvature,
                const StepPolicy& p) {
  const long t = ++x.t;
  const double rm = p.mean_rate.initial, rs = p.precision_rate.initial, delta = p.prior_precision;
  const double b1 = p.gradient_averaging, gamma = p.natural_momentum;
  const Index d = x.m.size();
  if (x.u.size() != d) x.u = Vector::Zero(d);
  Vector m = x.m, s = x.s, u = x.u;
  for (Index i = 0; i < d; ++i) {
    double g = g_hat[i] + (p.prior_in_average ? delta * x.m[i] : 0.0);
    double dir = g;
    if (b1 > 0.0) {
      u[i] = b1 * x.u[i] + (1.0 - b1) * g;
      dir = p.debias_gradient ? u[i] / (1.0 - std::pow(b1, t)) : u[i];
    }
    if (!p.prior_in_average) dir += delta * x.m[i];
    if (curvature) {
      const double h = h_hat[i] + delta;
      s[i] = (1.0 - rs) * x.s[i] + rs * h;
      if (p.pd_correction) s[i] += rs * rs / 2.0 * (x.s[i] - h) * (x.s[i] - h) / x.s[i];
      if (gamma > 0.0 && x.has_prev) s[i] += gamma * (x.s[i] - x.s_prev[i]);
    }
    double pre = p.use_new_precision ? s[i] : x.s[i];
    if (p.debias_precision) pre /= 1.0 - std::pow(1.0 - rs, t);
    if (p.sqrt_scaling) pre = std::sqrt(pre + p.sqrt_inner_offset) + p.sqrt_outer_offset;
    const double step = std::clamp(dir / pre, -p.clip_radius, p.clip_radius);
    m[i] = x.m[i] - rm * step;
    if (gamma > 0.0 && x.has_prev) m[i] += gamma * x.s_prev[i] * (x.m[i] - x.m_prev[i]) / pre;
  }
  if (gamma > 0.0) {
    x.m_prev = x.m;
    x.s_prev = x.s;
    x.has_prev = true;
  }
  x.m = m;
  x.s = s;
  x.u = u;
}

TEST(DiagonalKernel, EveryStageCombinationEqualsThePlainStep) {
  // d = 1037 is not a multiple of any vector width, so every vector loop also runs its scalar
  // remainder. Values are O(1) and each coordinate goes through ≤ 20 roundings per step whose
  // inputs the two versions compute identically up to the order of a product or a division
  // replaced by a multiplication with a reciprocal (≤ 2 ulp each); over 4 steps with factors
  // ≤ 1/0.05 (the smallest preconditioner) the differences stay below 4·20·2·2⁻⁵³·20 ≈ 7e-13.
  const Index d = 1037;
  const double tolerance = 1e-12;
  for (unsigned knobs = 0; knobs < kKnobCombinations; ++knobs) {
    const StepPolicy p = policy_of(knobs);
    const bool curvature = (knobs & kNoCurvature) == 0u;
    Rng rng(100 + knobs);
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
      ASSERT_LT((state.q.mean - plain.m).cwiseAbs().maxCoeff(), tolerance)
          << "stages " << knobs << ", step " << k + 1;
      ASSERT_LT((state.q.precision - plain.s).cwiseAbs().maxCoeff(), tolerance)
          << "stages " << knobs << ", step " << k + 1;
      if (p.gradient_averaging > 0.0) {
        ASSERT_LT((state.gradient_average - plain.u).cwiseAbs().maxCoeff(), tolerance)
            << "stages " << knobs << ", step " << k + 1;
      }
    }
  }
}

std::string error_of(const GaussianEstimate& e, const StepPolicy& p, RuleState<GaussianDiag> state) {
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
  StepPolicy p = policy_of(kAveraging | kPdCorrection);
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
  p.pd_correction = false;
  h_bad = h;
  h_bad[bad] = -1e3;
  what = error_of({g, Curvature::diagonal(h_bad)}, p, state);
  EXPECT_NE(what.find("non-positive at coordinate 777"), std::string::npos) << what;

  // With the correction the same estimate is a valid step.
  p.pd_correction = true;
  EXPECT_EQ(error_of({g, Curvature::diagonal(h_bad)}, p, state), "");
}

}  // namespace
}  // namespace blr
