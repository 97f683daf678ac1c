// TorchScript modules (torch::jit::load of a model scripted in Python with
// torch.jit.script(model).save(path)) as inputs of blr's optimizers and of the per-example
// squared-gradient engine (blr/torch/curvature/squared_gradients.hpp).
//
// LibTorch 1.13's profiling executor runs a scripted function plainly on its first call, records
// tensor types, and from the second call on runs an optimised plan in which runs of
// differentiable ops become one DifferentiableGraph node of the autograd graph: the layers, their
// saved inputs and output gradients are no longer visible there. The optimised plan, once built,
// is kept by the function's executor and reused whatever the setting is later. So the forward
// passes whose loss goes to backward_with_squared_gradients() must run unoptimised
// (torch::jit::setGraphExecutorOptimize(false), a thread-local switch) from the module's first
// call on: UnoptimizedScriptExecution does that for a scope. Plain training (IVON, Vadam, AdamW)
// needs nothing: the optimisers swap parameter storage with Tensor::set_data, which the module's
// attributes share.
#pragma once

#include "blr/torch/curvature/squared_gradients.hpp"

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace blr::torch {

/// While alive, TorchScript functions called on this thread run unoptimised, so every aten op
/// records its own autograd node. Restores the previous setting on destruction.
class UnoptimizedScriptExecution {
 public:
  UnoptimizedScriptExecution();
  ~UnoptimizedScriptExecution();
  UnoptimizedScriptExecution(const UnoptimizedScriptExecution&) = delete;
  UnoptimizedScriptExecution& operator=(const UnoptimizedScriptExecution&) = delete;

 private:
  bool previous_;
};

/// The parameters of a scripted module (and its submodules) with their paths, e.g.
/// "blocks.0.attn.q.weight", in the module's parameters() order.
NamedParameters named_parameters(const ::torch::jit::Module& module);

}  // namespace blr::torch
