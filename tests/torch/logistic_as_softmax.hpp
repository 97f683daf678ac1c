// Binary logistic regression as a two-logit classifier, f(x) = [0, xᵀw]: softmax gives σ(xᵀw), so
// the LibTorch Laplace fits can be compared with the core's logistic regression (tests of the
// diagonal and the Kronecker-factored Laplace).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace blr::torch::testing {

struct LogisticAsSoftmaxImpl : ::torch::nn::Module {
  explicit LogisticAsSoftmaxImpl(int64_t dim)
      : linear(register_module(
            "linear", ::torch::nn::Linear(::torch::nn::LinearOptions(dim, 1).bias(false)))) {}
  ::at::Tensor forward(const ::at::Tensor& x) {
    const auto a = linear->forward(x);
    return ::torch::cat({::torch::zeros_like(a), a}, 1);
  }
  ::torch::nn::Linear linear;
};
// TORCH_MODULE(LogisticAsSoftmax) written out: the macro names `torch::nn` unqualified, which
// inside blr::torch means blr::torch::nn.
class LogisticAsSoftmax : public ::torch::nn::ModuleHolder<LogisticAsSoftmaxImpl> {
 public:
  using ::torch::nn::ModuleHolder<LogisticAsSoftmaxImpl>::ModuleHolder;
  using Impl = LogisticAsSoftmaxImpl;
};

}  // namespace blr::torch::testing
