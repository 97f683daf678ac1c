// BayesBiNN's fused CPU passes (src/torch/optim/bernoulli_kernels.hpp): the accuracy of their
// tanh and log, the exactness of the saturated shortcut, the uniformity of the counter-based
// noise and its independence of the thread count, the fused path against the tensor path, a
// bitwise resume, and a non-finite step that leaves the state as it was.
//
// Tolerances. The kernels' tanh and log are measured against long-double references over dense
// sweeps: at most 2.7 units in the last place (ulp) in float and double; the test requires 4.
// The fused and tensor paths then evaluate the same formulas with functions that differ by a few
// ulp (ATen's vectorised tanh and log are within 1 ulp), so one step differs by rounding
// amplified by the relaxation's conditioning, as in bayesbinn_test.cpp's parity test: there
// 1/(1 − tanh²6) ≈ 4·10⁴ times a few 1e-16, below the 1e-10 required.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../../src/torch/optim/bernoulli_kernels.hpp"
#include "blr/torch/optim/bayesbinn.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace bayesbinn_fused_test {

using ::blr::torch::testing::kF64;
namespace detail = ::blr::torch::detail;

/// |got − want| in units of the last place of want rounded to T.
template <class T>
double ulps(T got, long double want) {
  const T rounded = static_cast<T>(want);
  const T next = std::nextafter(std::abs(rounded), std::numeric_limits<T>::infinity());
  return static_cast<double>(std::abs(static_cast<long double>(got) - want) /
                             (static_cast<long double>(next) - std::abs(rounded)));
}

template <class T>
void check_functions() {
  double tanh_worst = 0.0, log_worst = 0.0;
  constexpr int kPoints = 400000;
  for (int i = 0; i < kPoints; ++i) {
    // tanh: a uniform grid on [−30, 30] and magnitudes 10⁻³⁰ … 10² of both signs.
    const T grid = static_cast<T>(-30.0 + 60.0 * i / kPoints);
    const T tiny = static_cast<T>(std::pow(10.0, -30.0 + 32.0 * i / kPoints) * (i % 2 ? 1 : -1));
    for (const T x : {grid, tiny}) {
      tanh_worst = std::max(tanh_worst, ulps<T>(detail::tanh_kernel(x), std::tanh((long double)x)));
    }
    // log: 10⁻³⁰ … 10³⁰ (the sampling pass takes logs of u/(1 − u) ∈ (2⁻³², 2³²)).
    const T x = static_cast<T>(std::pow(10.0, -30.0 + 60.0 * i / kPoints));
    log_worst = std::max(log_worst, ulps<T>(detail::log_unit(x), std::log((long double)x)));
  }
  std::printf("[ kernels  ] %s: tanh within %.2f ulp, log within %.2f ulp\n",
              std::is_same_v<T, float> ? "float" : "double", tanh_worst, log_worst);
  EXPECT_LE(tanh_worst, 4.0);
  EXPECT_LE(log_worst, 4.0);
  EXPECT_TRUE(std::isnan(detail::tanh_kernel(std::numeric_limits<T>::quiet_NaN())));
  EXPECT_EQ(detail::tanh_kernel(std::numeric_limits<T>::infinity()), T(1));
  EXPECT_EQ(detail::tanh_kernel(-std::numeric_limits<T>::infinity()), T(-1));
  EXPECT_EQ(detail::tanh_kernel(T(0)), T(0));
}

TEST(BayesBinnKernels, TanhAndLogAreWithinFourUlps) {
  check_functions<float>();
  check_functions<double>();
}

template <class T>
void check_saturation() {
  // From the bound on, tanh_kernel is ±1 exactly: the passes' shortcut gives its values.
  const T bound = detail::kTanhSaturated<T>;
  int checked = 0;
  for (T x = bound; x < T(1e30);
       x = x < T(1e3) ? std::nextafter(x, T(2) * x) + T(1e-3) * x : x * T(1.5)) {
    ASSERT_EQ(detail::tanh_kernel(x), T(1)) << "x = " << x;
    ASSERT_EQ(detail::tanh_kernel(-x), T(-1)) << "x = " << -x;
    ++checked;
  }
  // … and not far below it: the bound is where the rounding reaches 1, not an arbitrary one.
  EXPECT_LT(detail::tanh_kernel(bound / T(3)), T(1));
  EXPECT_GT(checked, 1000);
}

TEST(BayesBinnKernels, TanhIsExactlyOneFromTheSaturationBound) {
  check_saturation<float>();
  check_saturation<double>();
}

/// A BayesBiNN on one flat parameter of n elements at λ = 0 and τ = 1, where the training sample
/// tanh(½log(u/(1 − u))) = 2u − 1 is uniform on (−1, 1).
struct FlatProblem {
  ::at::Tensor w;
  std::unique_ptr<blr::torch::BayesBinn> opt;
  FlatProblem(int64_t n, ::at::ScalarType dtype, uint64_t seed) {
    w = ::torch::zeros({n}, ::torch::TensorOptions().dtype(dtype)).requires_grad_();
    opt = std::make_unique<blr::torch::BayesBinn>(
        std::vector<::at::Tensor>{w},
        blr::torch::make_options<blr::torch::BayesBinnOptions>(
            {{"ess", 100.0}, {"temperature", 1.0}, {"seed", static_cast<double>(seed)}}));
    opt->set_natural({::torch::zeros({n}, ::torch::TensorOptions().dtype(dtype))});
  }
  ::at::Tensor sample() {
    opt->sample_parameters(true);
    ::at::Tensor out = w.detach().clone();
    opt->discard_sample();
    return out;
  }
};

TEST(BayesBinnFused, NoiseIsUniformAndIndependentOfTheThreadCount) {
  constexpr int64_t kN = 3 * detail::kChunk + 77;  // several chunks and a ragged end
  for (const auto dtype : {::at::kFloat, ::at::kDouble}) {
    const int threads = ::at::get_num_threads();
    ::at::set_num_threads(1);
    FlatProblem one(kN, dtype, 7);
    const ::at::Tensor a = one.sample(), b = one.sample();
    ::at::set_num_threads(2);
    FlatProblem two(kN, dtype, 7);
    const ::at::Tensor a2 = two.sample();
    ::at::set_num_threads(threads);
    EXPECT_TRUE(a.equal(a2)) << "the noise depends on the number of threads";
    EXPECT_FALSE(a.equal(b)) << "two draws gave the same noise";
    // 2u − 1 ~ U(−1, 1): mean 0 (sd 1/√(3n)), variance 1/3 (sd √(4/45n)), every value inside.
    const auto x = a.to(::at::kDouble);
    const double n = static_cast<double>(kN);
    EXPECT_NEAR(x.mean().item<double>(), 0.0, 5.0 / std::sqrt(3.0 * n));
    EXPECT_NEAR(x.square().mean().item<double>(), 1.0 / 3.0, 5.0 * std::sqrt(4.0 / (45.0 * n)));
    EXPECT_LT(x.abs().max().item<double>(), 1.0);
    // Kolmogorov–Smirnov against U(−1, 1): sup |F̂ − F| below 1.63/√n (the 1 % point).
    const auto sorted = std::get<0>(x.sort());
    const auto empirical = ::torch::arange(1, kN + 1, kF64).div(n);
    const double ks = (empirical - (sorted + 1.0) / 2.0).abs().max().item<double>();
    EXPECT_LT(ks, 1.63 / std::sqrt(n));
    // Consecutive draws and neighbouring coordinates are uncorrelated (5 standard errors).
    const auto y = b.to(::at::kDouble);
    EXPECT_NEAR((x * y).mean().item<double>() * 3.0, 0.0, 5.0 / std::sqrt(n));
    EXPECT_NEAR((x.slice(0, 1) * x.slice(0, 0, kN - 1)).mean().item<double>() * 3.0, 0.0,
                5.0 / std::sqrt(n));
  }
}

/// Sample, a gradient, restore and step with the given uniforms.
void cycle(blr::torch::BayesBinn& opt, ::at::Tensor& w, const ::at::Tensor& target,
           const ::at::Tensor& u) {
  opt.sample_parameters(true, {u});
  opt.zero_grad();
  (w - target).square().sum().backward();
  opt.restore_parameters();
  opt.step();
}

TEST(BayesBinnFused, FusedStepsEqualTheTensorPathWithinRounding) {
  // τ = 1 and |λ| ≲ 4, the well-conditioned regime of the parity test; float64.
  constexpr int64_t kN = 5000;
  auto options = blr::torch::make_options<blr::torch::BayesBinnOptions>(
      {{"ess", 2.0}, {"temperature", 1.0}, {"lr", 0.003}, {"beta1", 0.5}, {"prior_natural", 0.2}});
  ::at::Tensor wf = ::torch::zeros({kN}, kF64).requires_grad_();
  ::at::Tensor wt = ::torch::zeros({kN}, kF64).requires_grad_();
  blr::torch::BayesBinn fused({wf}, options), tensor({wt}, options);
  tensor.set_fused_kernels(false);
  auto gen = ::at::detail::createCPUGenerator(3);
  const ::at::Tensor lambda = ::at::randn({kN}, gen, kF64).mul_(1.5);
  const ::at::Tensor target = ::at::randn({kN}, gen, kF64).mul_(0.3);
  const ::at::Tensor prior = ::at::randn({kN}, gen, kF64).mul_(0.5);
  fused.set_natural({lambda});
  tensor.set_natural({lambda});
  fused.set_prior({prior});  // per coordinate (the parity test covers the scalar λ₀)
  tensor.set_prior({prior});
  double deviation = 0.0;
  for (int t = 0; t < 20; ++t) {
    const ::at::Tensor u = ::at::rand({kN}, gen, kF64).clamp_(1e-12, 1.0 - 1e-12);
    cycle(fused, wf, target, u);
    cycle(tensor, wt, target, u);
    const auto a = fused.natural()[0], b = tensor.natural()[0];
    deviation = std::max(deviation, ((a - b).abs() / b.abs().clamp_min(1.0)).max().item<double>());
    ASSERT_TRUE(wf.equal(wt)) << "the binary weights differ at step " << t;
    ASSERT_LT(b.abs().max().item<double>(), 6.0) << "the test's regime was left";
  }
  std::printf("[ fused    ] fused against tensor operations, 20 steps: %.1e relative\n", deviation);
  EXPECT_LT(deviation, 1e-10);
  EXPECT_GT(deviation, 0.0) << "the two paths were not both run";
}

TEST(BayesBinnFused, ResumeFromASavedStateIsBitwise) {
  // The generator's draws continue from the saved draw count.
  auto options = blr::torch::make_options<blr::torch::BayesBinnOptions>(
      {{"ess", 100.0}, {"temperature", 1e-10}, {"lr", 1e-4}, {"seed", 11}, {"mc_samples", 2}});
  const ::at::Tensor target = ::torch::linspace(-1.0, 1.0, 3000);
  auto run = [&](blr::torch::BayesBinn& opt, ::at::Tensor& w, int steps) {
    for (int t = 0; t < steps; ++t) {
      opt.step([&] {
        opt.zero_grad();
        ::at::Tensor loss = (w - target).square().mean();
        loss.backward();
        return loss;
      });
    }
  };
  ::at::Tensor w = ::torch::zeros({3000}).requires_grad_();
  blr::torch::BayesBinn straight({w}, options);
  const ::at::Tensor initial = straight.natural()[0];
  run(straight, w, 3);
  std::stringstream buffer;
  {
    ::torch::serialize::OutputArchive out;
    straight.save(out);
    out.save_to(buffer);
  }
  run(straight, w, 4);
  ::at::Tensor v = ::torch::zeros({3000}).requires_grad_();
  blr::torch::BayesBinn resumed({v}, options);
  ::torch::serialize::InputArchive in;
  in.load_from(buffer);
  resumed.load(in);
  run(resumed, v, 4);
  EXPECT_TRUE(resumed.natural()[0].equal(straight.natural()[0]));
  EXPECT_TRUE(v.equal(w));
  EXPECT_FALSE(straight.natural()[0].equal(initial)) << "the run did not move λ";
}

TEST(BayesBinnFused, AStridedNaturalParameterIsReadInTheParametersOrder) {
  // set_natural with a transposed view: the fused passes index λ as the parameter's buffer.
  auto options = blr::torch::make_options<blr::torch::BayesBinnOptions>(
      {{"ess", 2.0}, {"temperature", 1.0}, {"lr", 0.01}});
  ::at::Tensor wf = ::torch::zeros({30, 20}, kF64).requires_grad_();
  ::at::Tensor wt = ::torch::zeros({30, 20}, kF64).requires_grad_();
  blr::torch::BayesBinn fused({wf}, options), tensor({wt}, options);
  tensor.set_fused_kernels(false);
  auto gen = ::at::detail::createCPUGenerator(8);
  const ::at::Tensor lambda = ::at::randn({20, 30}, gen, kF64).t();
  ASSERT_FALSE(lambda.is_contiguous());
  fused.set_natural({lambda});
  tensor.set_natural({lambda});
  const ::at::Tensor target = ::at::randn({30, 20}, gen, kF64);
  const ::at::Tensor u = ::at::rand({30, 20}, gen, kF64).clamp_(1e-12, 1.0 - 1e-12);
  cycle(fused, wf, target, u);
  cycle(tensor, wt, target, u);
  const auto a = fused.natural()[0], b = tensor.natural()[0];
  EXPECT_LT(((a - b).abs() / b.abs().clamp_min(1.0)).max().item<double>(), 1e-10);
  EXPECT_TRUE(wf.equal(wt));
}

TEST(BayesBinnFused, NonFiniteStepLeavesTheStateAsItWas) {
  for (const bool fused : {true, false}) {
    ::at::Tensor w = ::torch::zeros({40}).requires_grad_();
    blr::torch::BayesBinn opt(
        {w}, blr::torch::make_options<blr::torch::BayesBinnOptions>({{"ess", 10.0}, {"seed", 2}}));
    opt.set_fused_kernels(fused);
    const auto before = opt.natural()[0];
    opt.sample_parameters(true);
    opt.zero_grad();
    (w * ::torch::full({40}, NAN)).sum().backward();
    opt.restore_parameters();
    try {
      opt.step();
      ADD_FAILURE() << "no error for a NaN gradient";
    } catch (const blr::Error& e) {
      EXPECT_NE(std::string(e.what()).find("non-finite natural parameter"), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(opt.natural()[0].equal(before));
    EXPECT_TRUE(w.equal(before.gt(0).to(::at::kFloat).mul(2).sub(1)));
    EXPECT_EQ(opt.step_count(), 0);
  }
}

}  // namespace bayesbinn_fused_test
