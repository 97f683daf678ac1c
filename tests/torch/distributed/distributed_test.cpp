// Data parallel on c10d (blr/torch/distributed/): the bucketed, weighted all-reduce, the failure of
// a collective when a rank is silent, and the two equalities the trainer relies on — IVON/Vadam on
// two ranks (each its own draws) = one process with twice the Monte Carlo samples, and AdamW on
// two ranks with half the batch each = one process with the whole batch. Two ranks are two
// threads of this process, each with its own Gloo group over a FileStore (no ports).
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/optim/adamw.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

#include "blr/core/error.hpp"
#include "blr/torch/distributed/data_parallel.hpp"
#include "blr/torch/distributed/process_group.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/optim/vadam.hpp"
#include "option_helpers.hpp"

namespace blr::torch::distributed {
namespace {

using std::chrono::milliseconds;

/// A fresh FileStore path for one test (removed before and after).
std::string store_path(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("blr-dist-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove(p);
  return p.string();
}

/// Runs f(rank group) on `world` threads, each with its own process group; rethrows the first
/// exception.
void run_ranks(const std::string& name, int world, milliseconds timeout, int64_t bucket_bytes,
               const std::function<void(ProcessGroup&)>& f) {
  const auto path = store_path(name);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        ProcessGroup group(path, r, world, timeout, bucket_bytes);
        f(group);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::filesystem::remove(path);
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

std::vector<::at::Tensor> rank_tensors(int rank) {
  auto gen = ::at::make_generator<::at::CPUGeneratorImpl>(100 + rank);
  std::vector<::at::Tensor> out;
  for (const auto& [sizes, dtype] : std::vector<std::pair<std::vector<int64_t>, ::at::ScalarType>>{
           {{3}, ::at::kFloat}, {{5, 7}, ::at::kDouble}, {{1000}, ::at::kFloat},
           {{2}, ::at::kDouble}, {{40}, ::at::kFloat}}) {
    out.push_back(::at::randn(sizes, gen, ::at::TensorOptions().dtype(dtype)));
  }
  return out;
}

// Each rank multiplies its tensors by its weight (one rounding) and the two products are added
// (one rounding, commutative): the same two operations as the reference below, so the result is
// bitwise equal on both ranks. A bucket of 256 bytes splits the tensors as the rule in
// process_group.hpp says: per dtype, consecutive, at most 256 bytes unless one tensor is larger.
TEST(Distributed, AllReduceSumsWeightedTensorsInBuckets) {
  if (!distributed_available()) GTEST_SKIP() << "built without Gloo's headers";
  const double w[2] = {0.25, 0.75};
  std::vector<::at::Tensor> expected;
  const auto t0 = rank_tensors(0), t1 = rank_tensors(1);
  for (size_t i = 0; i < t0.size(); ++i) expected.push_back(t0[i] * w[0] + t1[i] * w[1]);
  run_ranks("sum", 2, milliseconds(30000), 256, [&](ProcessGroup& g) {
    auto mine = rank_tensors(g.rank());
    g.sum(mine, w[g.rank()]);
    for (size_t i = 0; i < mine.size(); ++i) {
      EXPECT_TRUE(::at::equal(mine[i], expected[i])) << "tensor " << i << " on rank " << g.rank();
    }
    // float: [3] (12 B) opens a bucket, [1000] (4000 B) does not fit: its own, [40] (160 B) does
    // not fit after it: a third; double: [5,7] (280 B) alone, [2] (16 B) does not fit: a fourth
    // and fifth bucket.
    EXPECT_EQ(g.stats().buckets, 5);
    EXPECT_EQ(g.stats().bytes, 12 + 280 + 4000 + 16 + 160);
    EXPECT_EQ(g.stats().calls, 1);
  });
}

// A rank that never joins the collective: the other throws a blr::Error naming the timeout within
// it (plus the time to notice), never a silent hang.
TEST(Distributed, ASilentRankMakesTheOtherFailWithinTheTimeout) {
  if (!distributed_available()) GTEST_SKIP() << "built without Gloo's headers";
  std::atomic<bool> done{false};
  std::string message;
  double seconds = 0;
  run_ranks("silent", 2, milliseconds(1500), ProcessGroup::kDefaultBucketBytes,
            [&](ProcessGroup& g) {
              if (g.rank() == 1) {  // hangs until rank 0 has given up
                const auto start = std::chrono::steady_clock::now();
                while (!done && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
                  std::this_thread::sleep_for(milliseconds(10));
                }
                return;
              }
              auto t = ::at::ones({4});
              const auto start = std::chrono::steady_clock::now();
              try {
                g.sum({t});
              } catch (const Error& e) {
                message = e.what();
              }
              seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                            .count();
              done = true;
            });
  EXPECT_NE(message.find("did not answer within 1.5 s"), std::string::npos) << message;
  EXPECT_LT(seconds, 1.5 + 10.0);
}

// A nonlinear loss of θ whose gradient depends on where the sample is.
::at::Tensor loss_of(const ::at::Tensor& theta) {
  const auto target = ::at::linspace(-1.0, 1.0, theta.numel(), ::at::kDouble);
  return (theta - target).square().sum() + 0.1 * theta.pow(4).sum();
}

template <class Optimizer, class Options>
::at::Tensor blr_steps(int mc, const Options& options, ProcessGroup* group, int steps) {
  ::at::Tensor theta = ::at::linspace(0.5, -0.5, 37, ::at::kDouble).requires_grad_();
  Options o = options;
  o.mc_samples = mc;
  Optimizer opt({theta}, o);
  std::unique_ptr<DataParallel> parallel;
  if (group != nullptr) {
    parallel = std::make_unique<DataParallel>(std::shared_ptr<Communicator>(group, [](auto*) {}),
                                              Split::kSamples);
    parallel->attach(opt);
  }
  for (int t = 0; t < steps; ++t) {
    for (int s = 0; s < mc; ++s) {
      SampledParameters sampled(opt, true);
      opt.zero_grad();
      loss_of(theta).backward();
    }
    if (parallel) parallel->reduce(opt, parallel->share(1));
    opt.step();
  }
  return theta.detach().clone();
}

// One process with 2 samples sums g₀ + g₁ (and noise⊙g or g² likewise) over draws 2t and 2t + 1;
// rank r with 1 sample draws 2t + r (set_noise_shard) and the all-reduce adds the same two numbers
// (weights W·w_r = 1: no rounding): every operation is the same, so the parameters are bitwise
// equal.
TEST(Distributed, IvonOnTwoRanksEqualsOneProcessWithTwoSamples) {
  if (!distributed_available()) GTEST_SKIP() << "built without Gloo's headers";
  const auto o = make_options<IvonOptions>({{"lr", 0.05}, {"ess", 200.0}, {"hess_init", 0.3}, {"seed", 11}});
  const auto one = blr_steps<Ivon>(2, o, nullptr, 4);
  std::vector<::at::Tensor> ranks(2);
  run_ranks("ivon", 2, milliseconds(30000), ProcessGroup::kDefaultBucketBytes,
            [&](ProcessGroup& g) { ranks[g.rank()] = blr_steps<Ivon>(1, o, &g, 4); });
  EXPECT_TRUE(::at::equal(ranks[0], one)) << (ranks[0] - one).abs().max();
  EXPECT_TRUE(::at::equal(ranks[1], one));
  // And the draws matter: one sample per process (without the shard) is another run.
  EXPECT_FALSE(::at::equal(blr_steps<Ivon>(1, o, nullptr, 4), one));
}

TEST(Distributed, VadamOnTwoRanksEqualsOneProcessWithTwoSamples) {
  if (!distributed_available()) GTEST_SKIP() << "built without Gloo's headers";
  const auto o = make_options<VadamOptions>({{"lr", 0.01}, {"ess", 200.0}, {"seed", 5}});
  const auto one = blr_steps<Vadam>(2, o, nullptr, 4);
  std::vector<::at::Tensor> ranks(2);
  run_ranks("vadam", 2, milliseconds(30000), ProcessGroup::kDefaultBucketBytes,
            [&](ProcessGroup& g) { ranks[g.rank()] = blr_steps<Vadam>(1, o, &g, 4); });
  EXPECT_TRUE(::at::equal(ranks[0], one));
  EXPECT_TRUE(::at::equal(ranks[1], one));
}

// Softmax regression, B = 64 examples, one AdamW step: one process on the whole batch vs two
// ranks on 32 rows each with their gradients all-reduced as ½∇ℓ̄₀ + ½∇ℓ̄₁.
struct LinearRegressionData {
  ::at::Tensor x, y;
  static constexpr int64_t kB = 64, kD = 5, kK = 3;
  LinearRegressionData() {
    auto gen = ::at::make_generator<::at::CPUGeneratorImpl>(7);
    x = ::at::randn({kB, kD}, gen, ::at::kDouble);
    y = ::at::randint(kK, {kB}, gen, ::at::kLong);
  }
};

std::vector<::at::Tensor> adamw_step(const LinearRegressionData& data, ProcessGroup* group) {
  auto w = (::at::arange(LinearRegressionData::kK * LinearRegressionData::kD, ::at::kDouble) * 0.05 - 0.3)
               .reshape({LinearRegressionData::kK, LinearRegressionData::kD})
               .requires_grad_();
  auto b = ::at::zeros({LinearRegressionData::kK}, ::at::kDouble).requires_grad_();
  const double lr = 0.01, eps = 1e-3;
  ::torch::optim::AdamW opt({w, b}, ::torch::optim::AdamWOptions(lr).eps(eps));
  ::at::Tensor x = data.x, y = data.y;
  DataParallel::Share share;
  std::unique_ptr<DataParallel> parallel;
  if (group != nullptr) {
    parallel = std::make_unique<DataParallel>(std::shared_ptr<Communicator>(group, [](auto*) {}),
                                              Split::kData);
    parallel->attach(opt);
    share = parallel->share(LinearRegressionData::kB);
    x = x.slice(0, share.begin, share.end);
    y = y.slice(0, share.begin, share.end);
  }
  opt.zero_grad();
  ::at::nll_loss(::at::log_softmax(::at::addmm(b, x, w.t()), 1), y).backward();
  if (parallel) parallel->reduce(opt, share);
  opt.step();
  return {w.detach().clone(), b.detach().clone()};
}

// The bound. The exact mean gradient is G = (1/B) Σ_i (p_i − e_{y_i}) x_iᵀ (and Σ_i (p_i − e_{y_i})/B
// for b). Each run computes the logits z_i (D products), the softmax, p_i − e_{y_i} (absolute
// error a few u·(p_i + e_{y_i}) with cancellation, and the logits' error moves p_i by at most
// p_i·2|δz_i|) and a sum of B per-example terms in its own order, so (Higham, "Accuracy and
// Stability of Numerical Algorithms", §3.1, γ_n = nu/(1 − nu))
//   |ĝ − G| ≤ γ_n · S,  S = (1/B) Σ_i (1 + 2‖z_i‖_∞)(p_i + e_{y_i}) |x_i|ᵀ,  n = B + D + 16
// (16 operations per term and for the ½ + ½ weighting: a generous count); the two runs'
// gradients differ by |δg| ≤ 2γ_n · S. Adam's first step is θ ← θ(1 − lr·wd) − lr·g/(|g| + ε)
// (m̂ = g, v̂ = g²) and |d/dg g/(|g| + ε)| = ε/(|g| + ε)² ≤ 1/ε, so the parameters differ by at most
// lr·|δg|/ε, plus the rounding of the same ~10 operations on each side: 2 · 10u · (lr + |θ|).
TEST(Distributed, AdamWOnTwoRanksWithHalfTheBatchEqualsOneProcessWithAll) {
  if (!distributed_available()) GTEST_SKIP() << "built without Gloo's headers";
  const LinearRegressionData data;
  const auto one = adamw_step(data, nullptr);
  std::vector<std::vector<::at::Tensor>> ranks(2);
  run_ranks("adamw", 2, milliseconds(30000), ProcessGroup::kDefaultBucketBytes,
            [&](ProcessGroup& g) { ranks[g.rank()] = adamw_step(data, &g); });
  // S from the initial parameters (as adamw_step sets them).
  const auto w0 = (::at::arange(LinearRegressionData::kK * LinearRegressionData::kD, ::at::kDouble) * 0.05 - 0.3)
                      .reshape({LinearRegressionData::kK, LinearRegressionData::kD});
  const auto z = data.x.matmul(w0.t());
  const auto p = ::at::softmax(z, 1);
  const auto r = (p + ::at::one_hot(data.y, LinearRegressionData::kK).to(::at::kDouble)) *
                 (1 + 2 * std::get<0>(z.abs().max(1, true)));
  const double u = std::ldexp(1.0, -53);
  const double n = LinearRegressionData::kB + LinearRegressionData::kD + 16;
  const double gamma = n * u / (1 - n * u);
  const double lr = 0.01, eps = 1e-3;
  const std::vector<::at::Tensor> s = {r.t().matmul(data.x.abs()) / LinearRegressionData::kB,
                                       r.sum(0) / LinearRegressionData::kB};
  for (size_t k = 0; k < 2; ++k) {
    const auto bound = lr * 2 * gamma * s[k] / eps + 20 * u * (lr + one[k].abs());
    for (int rank = 0; rank < 2; ++rank) {
      const auto diff = (ranks[rank][k] - one[k]).abs();
      EXPECT_TRUE((diff <= bound).all().item<bool>())
          << "parameter " << k << " rank " << rank << ": max difference "
          << diff.max().item<double>() << ", bound " << bound.min().item<double>();
    }
    EXPECT_TRUE(::at::equal(ranks[0][k], ranks[1][k]));  // the ranks agree bitwise
  }
  // The bound has power: one rank's half of the batch alone moves the parameters far outside it.
  const auto half = [&] {
    LinearRegressionData h = data;
    h.x = data.x.slice(0, 0, LinearRegressionData::kB / 2).repeat({2, 1});
    h.y = data.y.slice(0, 0, LinearRegressionData::kB / 2).repeat({2});
    return adamw_step(h, nullptr);
  }();
  EXPECT_GT((half[0] - one[0]).abs().max().item<double>(), 1e3 * lr * 2 * gamma / eps);
}

// torchrun's static rendezvous: TORCHELASTIC_USE_AGENT_STORE=True makes every rank a client of
// the agent's store (no server on rank 0) under the restart count's prefix; any other value, or
// none, leaves rank 0 the server; a restart count that is not an integer is one sentence.
TEST(Distributed, TorchrunAgentStoreIsReadFromTheEnvironment) {
  const std::vector<std::string> names = {"RANK", "WORLD_SIZE", "MASTER_PORT",
                                          "TORCHELASTIC_USE_AGENT_STORE",
                                          "TORCHELASTIC_RESTART_COUNT", "BLR_RENDEZVOUS_FILE"};
  std::vector<std::optional<std::string>> saved;
  for (const auto& n : names) {
    const char* v = std::getenv(n.c_str());
    saved.push_back(v ? std::optional<std::string>(v) : std::nullopt);
  }
  ::unsetenv("BLR_RENDEZVOUS_FILE");
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_PORT", "29400", 1);
  ::setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  ::setenv("TORCHELASTIC_RESTART_COUNT", "3", 1);
  auto env = environment_from_variables();
  ASSERT_TRUE(env.has_value());
  EXPECT_TRUE(env->agent_store);
  EXPECT_EQ(env->restart_count, 3);
  EXPECT_EQ(env->master_port, 29400);
  ::setenv("TORCHELASTIC_USE_AGENT_STORE", "False", 1);
  EXPECT_FALSE(environment_from_variables()->agent_store);
  ::unsetenv("TORCHELASTIC_USE_AGENT_STORE");
  ::unsetenv("TORCHELASTIC_RESTART_COUNT");
  EXPECT_FALSE(environment_from_variables()->agent_store);
  ::setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  ::setenv("TORCHELASTIC_RESTART_COUNT", "x", 1);
  try {
    environment_from_variables();
    ADD_FAILURE() << "a restart count of 'x' was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TORCHELASTIC_RESTART_COUNT must be an integer"),
              std::string::npos)
        << e.what();
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (saved[i]) {
      ::setenv(names[i].c_str(), saved[i]->c_str(), 1);
    } else {
      ::unsetenv(names[i].c_str());
    }
  }
}

}  // namespace
}  // namespace blr::torch::distributed
