// The synthetic optimizer step of the benchmarks (step_benchmark.hpp).
#include "blr/torch/checks/step_benchmark.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "blr/core/error.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

std::vector<std::string> benchmark_optimizers() {
  std::vector<std::string> names;
  for (const auto& entry : optimizers()) {
    if (entry.trains) names.push_back(entry.name);  // every registered one that steps
  }
  return names;
}

StepBenchmark::StepBenchmark(const std::string& optimizer, int64_t n, uint64_t seed) {
  check(n >= 1, fmt::format("The benchmark needs at least one parameter; got {}.", n));
  auto generator = ::at::detail::createCPUGenerator(seed);
  param_ = ::at::randn({n}, generator, ::at::kFloat).mul_(0.1).requires_grad_();
  param_.mutable_grad() = ::at::randn({n}, generator, ::at::kFloat).mul_(1e-3);
  // Default options (SGD: momentum 0.9), ess = 10⁴.
  optimizer_ = make_optimizer(optimizer, {param_}, {}, OptimizerContext{10000, seed});
  variational_ = dynamic_cast<VariationalOptimizer*>(optimizer_.get());
  kronecker_ = dynamic_cast<KroneckerCurvatureInput*>(optimizer_.get());
  if (variational_ != nullptr && (variational_->needs_squared_gradients() || kronecker_)) {
    squared_ = param_.grad().square();
  }
}

StepBenchmark::~StepBenchmark() = default;

void StepBenchmark::run() {
  if (variational_ != nullptr) {
    // SAM/bSAM take two samples (the point and the ascent point) per step.
    for (int s = 0; s < variational_->training_samples(); ++s) {
      variational_->sample_parameters(true);
      if (squared_.defined() && kronecker_ != nullptr) {
        kronecker_->add_curvature({ParameterCurvature{{}, squared_}});  // a flat parameter
      } else if (squared_.defined()) {
        variational_->add_squared_gradients({squared_});
      }
      variational_->restore_parameters();
    }
  }
  optimizer_->step();
}

}  // namespace blr::torch
