// A synthetic optimizer step for speed measurements (`blr bench step`, bench/torch/step_bench).
//
// One flat float32 parameter of n elements on the CPU with a fixed random gradient. A step of a
// variational optimizer is what training does around forward/backward: sample θ = μ + σ⊙ε,
// restore μ while collecting the gradient (VOGN: plus a squared-gradient tensor; K-FAC: the
// same as its diagonal curvature), as many times
// as the optimizer takes training samples (SAM, bSAM: 2), update. A step
// of AdamW or SGD is its update alone. Forward and backward are not part of it.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blr::torch {

class VariationalOptimizer;
class KroneckerCurvatureInput;

/// The optimizers `blr bench step` compares: every registered one (AdamW, the baseline, included).
std::vector<std::string> benchmark_optimizers();

class StepBenchmark {
 public:
  /// `optimizer`: a name from benchmark_optimizers(); options are the factory defaults with
  /// ess = 10⁴ (SGD: momentum 0.9).
  StepBenchmark(const std::string& optimizer, int64_t n, uint64_t seed = 0);
  ~StepBenchmark();
  /// One full step.
  void run();

 private:
  ::at::Tensor param_, squared_;
  std::unique_ptr<::torch::optim::Optimizer> optimizer_;
  VariationalOptimizer* variational_ = nullptr;
  KroneckerCurvatureInput* kronecker_ = nullptr;  ///< K-FAC: its curvature is the diagonal here
};

}  // namespace blr::torch
