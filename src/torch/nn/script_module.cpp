// TorchScript modules for the optimizers and the squared-gradient engine (see script_module.hpp).
#include "blr/torch/nn/script_module.hpp"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>

namespace blr::torch {

UnoptimizedScriptExecution::UnoptimizedScriptExecution()
    : previous_(::torch::jit::getGraphExecutorOptimize()) {
  ::torch::jit::setGraphExecutorOptimize(false);
}

UnoptimizedScriptExecution::~UnoptimizedScriptExecution() {
  ::torch::jit::setGraphExecutorOptimize(previous_);
}

NamedParameters named_parameters(const ::torch::jit::Module& module) {
  NamedParameters out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) out.emplace_back(p.name, p.value);
  return out;
}

}  // namespace blr::torch
