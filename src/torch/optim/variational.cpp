// The sampled-parameters guard of variational optimizers.
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

SampledParameters::SampledParameters(VariationalOptimizer& optimizer, bool train)
    : optimizer_(optimizer), uncaught_(std::uncaught_exceptions()) {
  optimizer_.sample_parameters(train);
}

SampledParameters::~SampledParameters() {
  if (std::uncaught_exceptions() > uncaught_) {
    // Unwinding: put μ back and drop the sample; a second exception must not escape here.
    try {
      optimizer_.discard_sample();
    } catch (...) {
    }
    return;
  }
  try {
    optimizer_.restore_parameters();
  } catch (...) {
    // A destructor cannot report; restore μ at least (collecting failed, e.g. a bad gradient).
    try {
      if (optimizer_.sampled()) optimizer_.discard_sample();
    } catch (...) {
    }
  }
}

}  // namespace blr::torch
