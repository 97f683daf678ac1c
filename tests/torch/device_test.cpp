// The torch layer on every device LibTorch offers here: "cpu" always, "cuda" when LibTorch sees
// a CUDA device (otherwise those cases are reported as skipped, not passed). On a device the
// optimizers use their tensor-op path (on the CPU it is forced), and each case compares it with the
// fused CPU kernels fed the same standard-normal draws; per-example squared gradients are compared
// with the CPU's; a short training run must learn; a checkpoint written on one device must resume
// on the CPU. scripts/device_check.sh runs these on a lent GPU.
//
// Tolerances: float64 throughout; the two paths evaluate the same formulas in a different order,
// so they differ by a few roundings per step (~1e-15 relative), far below the 1e-10 asserted.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "blr/torch/checkpoint/checkpoint.hpp"
#include "blr/torch/optim/ivon.hpp"
#include "blr/torch/curvature/per_example.hpp"
#include "blr/torch/optim/vadam.hpp"
#include "blr/torch/train/trainer.hpp"
#include "torch/option_helpers.hpp"
#include "torch/synthetic_data.hpp"
#include "tensor_helpers.hpp"

namespace blr::torch {
namespace {

class OnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() != "cpu" && !::torch::cuda::is_available())
      GTEST_SKIP() << "LibTorch sees no CUDA device";
  }
  /// "cuda" means the current device, cuda:0 here: tensors report the index, so name it.
  ::at::Device device() const {
    ::at::Device d(GetParam());
    if (d.is_cuda() && !d.has_index()) d.set_index(0);
    return d;
  }
};

using ::blr::torch::testing::max_abs_diff;

using ::blr::torch::testing::quadratic;

/// Runs `steps` steps of `opt` (over parameter `theta`) with the given draws (2 per step).
void run_with_draws(MeanFieldOptimizer& opt, ::at::Tensor& theta,
                    const std::vector<::at::Tensor>& draws) {
  for (size_t k = 0; k < draws.size(); ++k) {
    opt.sample_parameters(true, {draws[k]});
    opt.zero_grad();
    quadratic(theta).backward();
    opt.restore_parameters();
    if (k % 2 == 1) opt.step();
  }
}

/// Builds two optimizers by `make`, one on the CPU with fused kernels and one on the device with
/// tensor ops, runs both on the same draws and returns the largest difference of μ and of the
/// posterior variance.
double fused_cpu_vs_device(
    const ::at::Device& device,
    const std::function<std::unique_ptr<MeanFieldOptimizer>(::at::Tensor&)>& make) {
  ::torch::manual_seed(5);
  std::vector<::at::Tensor> draws;
  for (int k = 0; k < 10; ++k) draws.push_back(::torch::randn({5000}, ::torch::kFloat64));
  ::at::Tensor cpu = ::torch::zeros({5000}, ::torch::kFloat64).requires_grad_();
  ::at::Tensor dev = ::torch::zeros({5000}, ::torch::dtype(::torch::kFloat64).device(device))
                         .requires_grad_();
  auto fused = make(cpu);
  auto ops = make(dev);
  ops->set_fused_kernels(false);
  run_with_draws(*fused, cpu, draws);
  run_with_draws(*ops, dev, draws);
  EXPECT_EQ(dev.device(), device);
  return std::max(max_abs_diff(cpu, dev),
                  max_abs_diff(fused->posterior_variance()[0], ops->posterior_variance()[0]));
}

TEST_P(OnDevice, IvonMatchesTheFusedCpuKernels) {
  for (IvonHessian approx : {IvonHessian::kPrice, IvonHessian::kGradSquared}) {
    const double diff = fused_cpu_vs_device(device(), [&](::at::Tensor& p) {
      return std::make_unique<Ivon>(
          std::vector<::at::Tensor>{p},
          make_options<IvonOptions>({{"lr", 0.1}, {"ess", 100.0}, {"hess_init", 0.5}, {"beta2", 0.99}, {"mc_samples", 2.0}, {"hess_approx", std::string(approx == IvonHessian::kPrice ? "price" : "gradsq")}}));
    });
    EXPECT_LT(diff, 1e-10);
  }
}

TEST_P(OnDevice, VadamMatchesTheFusedCpuKernels) {
  const double diff = fused_cpu_vs_device(device(), [](::at::Tensor& p) {
    return std::make_unique<Vadam>(std::vector<::at::Tensor>{p},
                                   make_options<VadamOptions>({{"lr", 1e-2}, {"ess", 100.0}, {"prec_init", 10.0}, {"mc_samples", 2.0}}));
  });
  EXPECT_LT(diff, 1e-10);
}

TEST_P(OnDevice, PerExampleSquaredGradientsMatchTheCpu) {
  ::torch::manual_seed(8);
  const auto to = [&](const ::at::Tensor& t) { return t.to(device()); };
  const auto a = ::torch::randn({6, 5}, ::torch::kFloat64), g = ::torch::randn({6, 4}, ::torch::kFloat64);
  const auto lin_cpu = linear_squared_gradients(a, g, true);
  const auto lin_dev = linear_squared_gradients(to(a), to(g), true);
  EXPECT_EQ(lin_dev.weight.device(), device());
  EXPECT_LT(max_abs_diff(lin_cpu.weight, lin_dev.weight), 1e-12);
  EXPECT_LT(max_abs_diff(lin_cpu.bias, lin_dev.bias), 1e-12);
  const auto x = ::torch::randn({3, 2, 7, 7}, ::torch::kFloat64);
  const auto go = ::torch::randn({3, 4, 3, 3}, ::torch::kFloat64);  // 3×3 kernel, stride 2, pad 0
  const auto conv_cpu = conv2d_squared_gradients(x, go, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true);
  const auto conv_dev = conv2d_squared_gradients(to(x), to(go), {3, 3}, {2, 2}, {0, 0}, {1, 1}, true);
  EXPECT_LT(max_abs_diff(conv_cpu.weight, conv_dev.weight), 1e-12);
  EXPECT_LT(max_abs_diff(conv_cpu.bias, conv_dev.bias), 1e-12);
}

TrainConfig easy_config(const std::string& optimizer) {
  TrainConfig c;
  c.model = ModelSpec{"mlp", {16}};
  c.model.classes = 3;
  c.optimizer = optimizer;
  c.epochs = 4;
  c.batch_size = 32;
  c.schedule = "cosine";
  c.seed = 7;
  c.test_samples = 4;
  c.optimizer_options = {{"ess", 96.0}};
  if (optimizer == "ivon") c.optimizer_options.emplace_back("lr", 0.2);
  if (optimizer == "vogn") c.optimizer_options.emplace_back("lr", 0.05);
  if (optimizer == "vadam") {  // its large initial noise and debiased s need more steps
    c.optimizer_options.emplace_back("lr", 0.2);
    c.epochs = 20;
  }
  return c;
}

TEST_P(OnDevice, TrainingLearnsWithEveryVariationalOptimizer) {
  const auto data = testing::synthetic_data(96, 60);
  for (const std::string optimizer : {"ivon", "vogn", "vadam"}) {
    Trainer trainer(easy_config(optimizer), data, device());
    trainer.train();
    for (const auto& p : trainer.model().parameters()) EXPECT_EQ(p.device(), device());
    const Evaluation e = trainer.evaluate();
    EXPECT_GT(e.mean.accuracy, 0.9) << optimizer;
    EXPECT_GT(e.predictive.accuracy, 0.9) << optimizer;
    EXPECT_TRUE(std::isfinite(e.predictive.nll)) << optimizer;
  }
}

TEST_P(OnDevice, CheckpointResumesOnTheCpu) {
  namespace fs = std::filesystem;
  const auto data = testing::synthetic_data(96, 60);
  const fs::path file =
      fs::temp_directory_path() / ("blr-device-" + std::to_string(::getpid()) + ".ckpt");
  Trainer first(easy_config("ivon"), data, device());
  TrainHooks hooks;
  hooks.stop_after_epoch = 2;
  first.train(hooks);
  first.save(file.string());
  Trainer resumed(easy_config("ivon"), data, ::at::kCPU);
  resumed.restore(load_checkpoint(file.string()));
  fs::remove(file);
  const auto a = first.model().parameters(), b = resumed.model().parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(::at::equal(a[i].cpu(), b[i])) << i;
  resumed.train();
  EXPECT_EQ(resumed.epoch(), 4);
  EXPECT_GT(resumed.evaluate().predictive.accuracy, 0.9);
}

INSTANTIATE_TEST_SUITE_P(Devices, OnDevice, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace blr::torch
