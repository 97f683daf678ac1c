// Capabilities instead of types (blr/torch/optim/capabilities.hpp, issue 32, items 1 and 2):
//  - every registry entry's capability flags and kind say what its optimizer, built from the
//    registry, answers for itself (an invariant over every optimizer);
//  - the lists the messages print are the registry's, and the tools' refusals name them;
//  - the linearised predictive reads a posterior's covariance blocks: for a mean-field posterior
//    exactly the diagonal predictive of its marginal variances (bitwise), for a Laplace posterior
//    its own preference for the probit predictive;
//  - K-FAC's linearised predictive keeps its Kronecker blocks' correlations: v = J Σ Jᵀ equals the
//    one from its dense block covariances and one autograd gradient per example and class (float64,
//    1e-10 relative), where the diagonal reading of its marginal variances differs;
//  - given standard-normal draws reach every Gaussian posterior (K-FAC too), θ = μ at ε = 0.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/distributed/communicator.hpp"
#include "blr/torch/distributed/data_parallel.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/bayesbinn.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/optim/kfac.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/optim/laplace.hpp"
#include "blr/torch/optim/registry.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace capabilities_test {

using ::blr::torch::testing::kF64;

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Capabilities, EveryEntryAnswersForItsOptimizer) {
  for (const auto& entry : optimizers()) {
    EXPECT_EQ(entry.variational, entry.kind != OptimizerKind::kPointEstimate) << entry.name;
    EXPECT_EQ(entry.trains, entry.kind != OptimizerKind::kPosthocGaussian) << entry.name;
    if (!entry.trains) continue;  // Laplace is built by its command
    auto w = ::torch::zeros({2, 3}, kF64).requires_grad_();
    OptionValues given;
    if (entry.options != nullptr && entry.options->find("ess") != nullptr) given = {{"ess", 10.0}};
    const auto made = make_optimizer(entry.name, {w}, given, {10, 0, 0});
    EXPECT_EQ(capability<GaussianPosterior>(*made) != nullptr, entry.gaussian_posterior)
        << entry.name;
    EXPECT_EQ(capability<DiagonalGaussianPosterior>(*made) != nullptr,
              entry.diagonal_gaussian_posterior)
        << entry.name;
    EXPECT_EQ(capability<DataParallelStatistics>(*made) != nullptr, entry.data_parallel_statistics)
        << entry.name;
    if (entry.variational) {
      EXPECT_NE(capability<VariationalOptimizer>(*made), nullptr)
          << entry.name << " is registered as variational but does not sample";
    }
  }
}

TEST(Capabilities, TheKindsAndListsAreTheRegistrys) {
  EXPECT_EQ(find_optimizer("ivon").kind, OptimizerKind::kDiagonalGaussian);
  EXPECT_EQ(find_optimizer("bsam").kind, OptimizerKind::kDiagonalGaussian);
  EXPECT_EQ(find_optimizer("kfac").kind, OptimizerKind::kKroneckerGaussian);
  EXPECT_EQ(find_optimizer("bayesbinn").kind, OptimizerKind::kBernoulli);
  EXPECT_EQ(find_optimizer("mc-dropout").kind, OptimizerKind::kDropout);
  EXPECT_EQ(find_optimizer("laplace").kind, OptimizerKind::kPosthocGaussian);
  for (const char* point : {"adamw", "sgd", "sam", "ste", "adabayes-fp"})
    EXPECT_EQ(find_optimizer(point).kind, OptimizerKind::kPointEstimate) << point;
  EXPECT_EQ(kind_name(OptimizerKind::kKroneckerGaussian), "Kronecker Gaussian");

  const std::vector<std::string> mean_field{"adabayes", "adabayes-fp", "ivon",
                                            "ogn",      "vadam",       "vogn"};
  EXPECT_EQ(sorted(optimizer_names_with(&OptimizerEntry::diagonal_gaussian_posterior)), mean_field);
  EXPECT_EQ(sorted(optimizer_names_with(&OptimizerEntry::data_parallel_statistics)), mean_field);
  // Only optimizers that train are listed: Laplace has a Gaussian posterior but is not offered.
  const auto gaussian = optimizer_names_with(&OptimizerEntry::gaussian_posterior);
  EXPECT_EQ(std::count(gaussian.begin(), gaussian.end(), "laplace"), 0);
  EXPECT_EQ(std::count(gaussian.begin(), gaussian.end(), "kfac"), 1);
}

/// One rank alone: Σ_r weight_r · tensor_r is weight · tensor.
class AloneCommunicator final : public distributed::Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  void sum(const std::vector<::at::Tensor>& tensors, double weight) override {
    for (const auto& t : tensors) t.mul_(weight);
  }
  void barrier() override {}
};

TEST(Capabilities, DataParallelRefusesWithTheRegistrysList) {
  distributed::DataParallel parallel(std::make_shared<AloneCommunicator>(),
                                     distributed::Split::kData);
  auto w = ::torch::zeros({2, 3}).requires_grad_();
  BayesBinn binn({w}, make_options<BayesBinnOptions>({{"ess", 10.0}}));
  try {
    parallel.attach(binn);
    ADD_FAILURE() << "BayesBiNN was accepted for data-parallel training";
  } catch (const Error& e) {
    const std::string m = e.what();
    for (const auto& name : optimizer_names_with(&OptimizerEntry::data_parallel_statistics))
      EXPECT_NE(m.find(name), std::string::npos) << name << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  Ivon ivon({w}, make_options<IvonOptions>({{"ess", 10.0}}));
  EXPECT_NO_THROW(parallel.attach(ivon));
}

/// Linear(3 → 4) → tanh → Linear(4 → 2), float64.
::torch::nn::Sequential small_net() {
  ::torch::manual_seed(5);
  ::torch::nn::Sequential net{::torch::nn::Linear(3, 4), ::torch::nn::Functional(::torch::tanh),
                              ::torch::nn::Linear(4, 2)};
  net->to(::torch::kFloat64);
  return net;
}

TEST(Capabilities, TheLinearisedPredictiveOfAMeanFieldPosteriorIsItsDiagonalOne) {
  auto net = small_net();
  Ivon ivon(net->parameters(), make_options<IvonOptions>({{"ess", 7.0}, {"hess_init", 0.3}}));
  const auto x = ::torch::randn({9, 3}, kF64);
  const Model model(net);
  const auto via_blocks = linearised_probit_log_probs(model, ivon, x, 4);
  const auto diagonal = diagonal_probit_log_probs(model, ivon.posterior_variance(), x, 4);
  EXPECT_TRUE(via_blocks.equal(diagonal));
  const auto blocks = ivon.covariance_blocks();
  const auto variance = ivon.marginal_variance();
  ASSERT_EQ(blocks.size(), variance.size());
  for (size_t j = 0; j < blocks.size(); ++j) {
    EXPECT_TRUE(blocks[j].weights.equal(variance[j])) << j;
    EXPECT_FALSE(blocks[j].kronecker()) << j;
  }
  EXPECT_FALSE(ivon.linearised_predictive());
}

TEST(Capabilities, ALaplacePosteriorSaysWhichPredictiveItTakes) {
  auto net = small_net();
  // "mc" is the spelling before 2026-11-29 (a checkpoint's options may hold it): read as
  // monte-carlo, never as probit.
  for (const char* predictive : {"probit", "monte-carlo", "mc"}) {
    const auto laplace = make_laplace_posterior(
        net->parameters(), {{"ess", 9.0}, {"predictive", predictive}}, OptimizerContext{});
    EXPECT_EQ(laplace->linearised_predictive(), std::string(predictive) == "probit");
    // Before the fit there is no covariance to read, and the sentence says so.
    EXPECT_THROW(laplace->covariance_blocks(), Error);
  }
  EXPECT_THROW(make_laplace_posterior(net->parameters(), {{"predictive", "exact"}}, {}), Error);
}

TEST(Capabilities, KfacsLinearisedPredictiveKeepsItsKroneckerCorrelations) {
  auto net = small_net();
  const auto x = ::torch::randn({6, 3}, kF64);
  const auto y = ::torch::randint(0, 2, {6}, ::torch::kLong);
  Kfac kfac(net->parameters(), make_options<KfacOptions>({{"lr", 0.05}, {"ess", 6.0}}));
  NamedParameters named;
  for (const auto& p : net->named_parameters()) named.emplace_back(p.key(), p.value());
  for (int t = 0; t < 3; ++t) {
    kfac.sample_parameters(true);
    kfac.zero_grad();
    kfac.add_curvature(backward_with_kronecker_factors(
        ::torch::nn::functional::cross_entropy(net->forward(x), y), named, 6));
    kfac.restore_parameters();
    kfac.step();
  }
  ASSERT_TRUE(kfac.kronecker(0));
  const Model model(net);
  const auto v = linearised_logit_variance(model, kfac, x, 4);
  const auto diagonal = diagonal_linearised_outputs(model, kfac.marginal_variance(), x, 4).second;
  const auto params = net->parameters();
  double largest_gap = 0.0;
  for (int64_t i = 0; i < x.size(0); ++i) {
    for (int64_t k = 0; k < 2; ++k) {
      const auto f = net->forward(x.narrow(0, i, 1));
      const auto g = ::torch::autograd::grad({f[0][k]}, params);
      double expected = 0.0;
      for (size_t j = 0; j < params.size(); ++j) {
        const auto flat = g[j].reshape(-1);
        expected += flat.dot(kfac.posterior_covariance(j).matmul(flat)).item<double>();
      }
      EXPECT_NEAR(v[i][k].item<double>(), expected, 1e-10 * expected) << i << "," << k;
      largest_gap =
          std::max(largest_gap, std::abs(diagonal[i][k].item<double>() - expected) / expected);
    }
  }
  // The blocks matter: the diagonal reading misses the correlations by more than the tolerance.
  EXPECT_GT(largest_gap, 1e-6);
}

TEST(Capabilities, GivenNoiseReachesEveryGaussianPosterior) {
  auto net = small_net();
  const auto params = net->parameters();
  std::vector<::at::Tensor> before, zeros;
  for (const auto& p : params) {
    before.push_back(p.detach().clone());
    zeros.push_back(::torch::zeros_like(p));
  }
  Kfac kfac(params, make_options<KfacOptions>({{"ess", 12.0}}));
  GaussianPosterior& posterior = kfac;
  posterior.sample_given_noise(/*train=*/false, zeros);  // θ = μ + Σ^{1/2}·0
  for (size_t j = 0; j < params.size(); ++j) EXPECT_TRUE(params[j].equal(before[j])) << j;
  kfac.restore_parameters();
  for (size_t j = 0; j < params.size(); ++j) EXPECT_TRUE(params[j].equal(before[j])) << j;
}

}  // namespace capabilities_test
}  // namespace blr::torch
