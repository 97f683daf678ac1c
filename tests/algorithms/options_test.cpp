// Invalid preset options are rejected with a blr::Error that names the option.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "blr/algorithms/bayesbinn.hpp"
#include "blr/algorithms/dropout.hpp"
#include "blr/algorithms/gradient_descent.hpp"
#include "blr/algorithms/ivon.hpp"
#include "blr/algorithms/multimodal.hpp"
#include "blr/algorithms/laplace.hpp"
#include "blr/algorithms/newton.hpp"
#include "blr/algorithms/ogn_vogn.hpp"
#include "blr/algorithms/rmsprop_adam.hpp"
#include "blr/algorithms/vadam.hpp"

namespace blr {
namespace {

void expect_error_naming(const std::function<void()>& make, const std::string& option) {
  try {
    make();
    ADD_FAILURE() << "no error for option " << option;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
  }
}

TEST(PresetOptions, InvalidValuesNameTheOption) {
  expect_error_naming([] { GradientDescentOptions o; o.lr = Schedule::constant(-1); make_gradient_descent(o); }, "lr");
  expect_error_naming([] { GradientDescentOptions o; o.momentum = 1.0; make_gradient_descent(o); }, "momentum");
  expect_error_naming([] { NewtonOptions o; o.step_size = 0.0; make_newton(o); }, "step_size");
  expect_error_naming([] { NewtonOptions o; o.prior_precision = -1; make_newton(o); }, "prior_precision");
  expect_error_naming([] { DiagonalNewtonOptions o; o.hessian_rate = Schedule::constant(2); make_diagonal_newton(o); }, "hessian_rate");
  expect_error_naming([] { RmspropOptions o; o.beta = 0.0; make_rmsprop(o); }, "beta");
  expect_error_naming([] { AdamOptions o; o.beta2 = 1.0; make_adam(o); }, "beta2");
  expect_error_naming([] { AdamOptions o; o.epsilon = 0.0; make_adam(o); }, "epsilon");
  expect_error_naming([] { VognOptions o; o.ess = 10; o.mc_samples = 0; make_vogn(o); }, "mc_samples");
  expect_error_naming([] { IvonOptions o; o.ess = 10; o.hess_init = 0.0; make_ivon(o); }, "hess_init");
  expect_error_naming([] { IvonOptions o; o.ess = -5; make_ivon(o); }, "ess");
  expect_error_naming([] { IvonOptions o; o.ess = 10; o.beta1 = 1.0; make_ivon(o); }, "beta1");
  expect_error_naming([] { IvonOptions o; o.ess = 10; o.mc_samples = 0; make_ivon(o); }, "mc_samples");
  expect_error_naming([] { IvonOptions o; o.ess = 10; o.clip_radius = 0; make_ivon(o); }, "clip_radius");
  expect_error_naming([] { VadamOptions o; o.ess = 10; o.prec_init = 0.5; make_vadam(o); }, "prec_init");
  expect_error_naming([] { BayesBinn b(BayesBinnOptions{0.1, 0.0, -1.0, 1, 0.0}); }, "temperature");
  expect_error_naming([] { DropoutOptions o; o.keep_probability = 0; make_dropout(o); }, "keep_probability");
  expect_error_naming([] { MultimodalOptions o; o.temperature = 0; o.validate(); }, "temperature");
}

TEST(PresetOptions, LaplaceReportsConvergence) {
  // Newton on a quadratic converges in one step; Laplace's precision is its Hessian.
  struct Bowl {
    Index dimension() const { return 2; }
    double value(const Vector& t) const { return 0.5 * (3 * t[0] * t[0] + t[1] * t[1]); }
    Vector gradient(const Vector& t) const { return (Vector(2) << 3 * t[0], t[1]).finished(); }
    Matrix hessian(const Vector&) const { return (Matrix(2, 2) << 3, 0, 0, 1).finished(); }
  };
  const LaplaceResult r = laplace(Bowl{}, Vector::Ones(2));
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.iterations, 3);
  EXPECT_NEAR(r.posterior.mean.norm(), 0.0, 1e-14);
  EXPECT_NEAR(r.posterior.precision.matrix()(0, 0), 3.0, 1e-14);
}

}  // namespace
}  // namespace blr

namespace blr {
namespace option_spelling_test {

// A message names a key as the door that reads it spells it: the table's key for Python and
// JSON, the flag inside a command whose flags are the keys with dashes (`blr infer`); the scope
// ends with its block, and nests.
TEST(OptionSpelling, MessagesNameTheKeyAsTheDoorSpellsIt) {
  const auto message = [] {
    try {
      IvonOptions o;
      o.ess = 10;
      o.hess_init = 0.0;
      o.validate();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message().find("Option 'hess_init' must be > 0"), std::string::npos) << message();
  {
    const OptionSpellingScope flags(OptionSpelling::kFlag);
    EXPECT_NE(message().find("Option '--hess-init' must be > 0"), std::string::npos) << message();
    {
      const OptionSpellingScope keys(OptionSpelling::kKey);
      EXPECT_NE(message().find("Option 'hess_init'"), std::string::npos) << message();
    }
    EXPECT_EQ(spelled("max_iterations"), "--max-iterations");
  }
  EXPECT_EQ(spelled("max_iterations"), "max_iterations");
}

}  // namespace option_spelling_test
}  // namespace blr
