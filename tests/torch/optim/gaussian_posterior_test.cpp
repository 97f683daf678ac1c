// The Gaussian-posterior capability (blr/torch/optim/gaussian_posterior.hpp, issue 32, item 2):
//  - the registry lists exactly the optimizers whose type has it (and AdaBayes-FP, registered by
//    hand), none of the point estimates or non-Gaussian posteriors;
//  - K-FAC, which had it in its state but was refused by the sensitivities and merging, now gets
//    both through it: its variances are its Kronecker blocks' exact marginal variances (bit for
//    bit what posterior_variance() returns), the per-example sensitivity variance v equals
//    Σ_j σ_j² (∂f_k/∂θ_j)² from one autograd gradient per example and class (float64: 1e-12
//    relative), and the merge curvature is 1/σ²;
//  - a posterior that is not Gaussian (BayesBiNN's Bernoulli) is refused in one sentence that names
//    the optimizers that would do, read from the registry.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/merge.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/bayesbinn.hpp"
#include "blr/torch/optim/kfac.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/posterior/sensitivity.hpp"
#include "option_helpers.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace gaussian_posterior_test {

namespace F = ::torch::nn::functional;
using ::blr::torch::testing::kF64;

TEST(GaussianPosteriorCapability, TheRegistryListsExactlyTheGaussianPosteriors) {
  auto names = gaussian_posterior_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"adabayes", "adabayes-fp", "ivon", "kfac", "laplace",
                                             "ogn", "vadam", "vogn"}));
  // Built from the registry, each says the same of itself.
  for (const auto& entry : optimizers()) {
    auto w = ::torch::zeros({2, 3}, kF64).requires_grad_();
    if (!entry.trains) continue;  // Laplace is built by its command
    OptionValues given;
    if (entry.options != nullptr && entry.options->find("ess") != nullptr) given = {{"ess", 10.0}};
    const auto made = make_optimizer(entry.name, {w}, given, {10, 0, 0});
    EXPECT_EQ(as_gaussian_posterior(*made) != nullptr, entry.gaussian_posterior) << entry.name;
  }
}

/// Linear(3 → 4) → tanh → Linear(4 → 2), float64, trained a few K-FAC steps on random labels.
struct KfacRun {
  ::torch::nn::Sequential net{::torch::nn::Linear(3, 4), ::torch::nn::Functional(::torch::tanh),
                              ::torch::nn::Linear(4, 2)};
  std::unique_ptr<Kfac> kfac;
  ::at::Tensor x, y;
  KfacRun() {
    ::torch::manual_seed(11);
    net->to(::torch::kFloat64);
    x = ::torch::randn({12, 3}, kF64);
    y = ::torch::randint(0, 2, {12}, ::torch::kLong);
    kfac = std::make_unique<Kfac>(net->parameters(),
                                  make_options<KfacOptions>({{"lr", 0.05}, {"ess", 12.0}}));
    NamedParameters named;
    for (const auto& p : net->named_parameters()) named.emplace_back(p.key(), p.value());
    for (int t = 0; t < 4; ++t) {
      kfac->sample_parameters(true);
      kfac->zero_grad();
      kfac->add_curvature(
          backward_with_kronecker_factors(F::cross_entropy(net->forward(x), y), named, 12));
      kfac->restore_parameters();
      kfac->step();
    }
  }
};

TEST(GaussianPosteriorCapability, KfacGetsSensitivitiesAndMerging) {
  KfacRun run;
  const Model model(run.net);
  const auto pv = posterior_variance(*run.kfac, 12);
  const auto own = run.kfac->posterior_variance();
  ASSERT_EQ(pv.variance.size(), own.size());
  for (size_t j = 0; j < own.size(); ++j) EXPECT_TRUE(pv.variance[j].equal(own[j])) << j;
  EXPECT_EQ(pv.source, "K-FAC posterior marginal variances (diagonal of the inverse)");

  // v_ik = Σ_j σ_j² (∂f_ik/∂θ_j)², one autograd gradient per example and class.
  const auto s = network_sensitivity(model, pv.variance, run.x, run.y);
  const auto params = run.net->parameters();
  for (int64_t i = 0; i < run.x.size(0); ++i) {
    for (int64_t k = 0; k < 2; ++k) {
      const auto f = run.net->forward(run.x.narrow(0, i, 1));
      const auto g = ::torch::autograd::grad({f[0][k]}, params);
      double v = 0;
      for (size_t j = 0; j < params.size(); ++j) v += (g[j].square() * own[j]).sum().item<double>();
      EXPECT_NEAR(s.variance[i][k].item<double>(), v, 1e-12 * v) << i << "," << k;
    }
  }

  std::string source;
  const auto c = merge_curvature(model, *run.kfac, run.x, run.y, source);
  ASSERT_EQ(c.size(), own.size());
  for (size_t j = 0; j < own.size(); ++j) EXPECT_TRUE(c[j].equal(own[j].reciprocal())) << j;
  EXPECT_NE(source.find("K-FAC posterior precision"), std::string::npos) << source;
}

TEST(GaussianPosteriorCapability, ANonGaussianPosteriorIsRefusedNamingTheOnesThatWould) {
  auto w = ::torch::zeros({2, 3}).requires_grad_();
  BayesBinn binn({w}, make_options<BayesBinnOptions>({{"ess", 10.0}}));
  EXPECT_EQ(as_gaussian_posterior(binn), nullptr);
  try {
    posterior_variance(binn, 10);
    ADD_FAILURE() << "BayesBiNN gave a posterior variance";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kfac"), std::string::npos) << m;
    EXPECT_NE(m.find("ivon"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace gaussian_posterior_test
}  // namespace blr::torch
