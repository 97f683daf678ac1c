// IVON in place of torch::optim::AdamW, from a program built against the installed blr: once on a
// torch::nn::Sequential and once on a TorchScript module written in Python (argv[1], optional).
// Each learns a two-class problem; exits non-zero unless the posterior predictive of both
// reaches 90% accuracy on held-out points.
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/predictive/predictive.hpp"

namespace {

/// Two Gaussian blobs in 4 dimensions, labels 0/1, separable up to a few percent.
std::pair<at::Tensor, at::Tensor> blobs(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  const auto y = torch::randint(0, 2, {n}, torch::kLong);
  const auto x = torch::randn({n, 4}) + (2.0 * y.to(torch::kFloat) - 1.0).unsqueeze(1) * 1.5;
  return {x, y};
}

double train_and_score(const blr::torch::Model& model, const char* what) {
  const auto [x, y] = blobs(512, 1);
  const auto [x_test, y_test] = blobs(1000, 2);
  blr::torch::IvonOptions options;
  options.lr = 0.2;
  options.ess = 512;
  options.hess_init = 0.5;
  options.seed = 7;
  blr::torch::Ivon optimizer(model.parameters(), options);
  for (int epoch = 0; epoch < 30; ++epoch) {
    for (int64_t start = 0; start < 512; start += 64) {
      const auto xb = x.slice(0, start, start + 64), yb = y.slice(0, start, start + 64);
      {
        blr::torch::SampledParameters sample(optimizer, /*train=*/true);  // θ = μ + σ⊙ε
        optimizer.zero_grad();
        torch::nll_loss(torch::log_softmax(model.forward(xb), 1), yb).backward();
      }  // μ restored, the sample's gradient kept
      optimizer.step();
    }
  }
  const auto log_p = blr::torch::predictive_log_probs(model, optimizer, x_test, 32);
  const double accuracy = log_p.argmax(1).eq(y_test).to(torch::kDouble).mean().item<double>();
  std::printf("%s: predictive accuracy %.3f\n", what, accuracy);
  return accuracy;
}

}  // namespace

int main(int argc, char** argv) {
  auto sequential = torch::nn::Sequential(torch::nn::Linear(4, 16), torch::nn::Tanh(),
                                          torch::nn::Linear(16, 2));
  bool ok = train_and_score(blr::torch::Model(sequential), "torch::nn::Sequential") > 0.9;
  if (argc > 1) {
    auto scripted = torch::jit::load(argv[1]);
    ok = train_and_score(blr::torch::Model::script(scripted), "TorchScript module") > 0.9 && ok;
  }
  return ok ? 0 : 1;
}
