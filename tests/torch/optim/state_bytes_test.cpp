// An optimizer's state as bytes and back (include/blr/torch/optim/state_bytes.hpp, the Python
// package's state_dict): a round trip gives the same bytes, and a state that does not fit the
// optimizer is one blr::Error sentence, never LibTorch's or TorchScript's own exception (issue 34:
// fuzz/harness/python_optim.cpp found a state lacking a param group's entry escaping as a
// std::runtime_error naming "__torch__.Module (of Python compilation unit at: 0x...)").
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "blr/core/error.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/state_bytes.hpp"
#include "blr/torch/optim/variational.hpp"

namespace {

std::unique_ptr<::torch::optim::Optimizer> ivon(const std::vector<::at::Tensor>& params) {
  return blr::torch::make_optimizer("ivon", params, {{"ess", 10.0}}, {10, 0, 0});
}

TEST(StateBytes, RoundTripGivesTheSameBytes) {
  ::torch::manual_seed(0);
  auto w = ::torch::randn({3}).requires_grad_(true);
  auto a = ivon({w});
  auto* v = dynamic_cast<blr::torch::VariationalOptimizer*>(a.get());
  ASSERT_NE(v, nullptr);
  v->sample_parameters(true);
  w.mutable_grad() = ::torch::ones({3});
  v->restore_parameters();
  a->step();
  const std::string bytes = blr::torch::save_optimizer_state(*a);
  auto copy = w.detach().clone().requires_grad_(true);
  auto b = ivon({copy});
  blr::torch::load_optimizer_state(*b, bytes, "The IVON state");
  EXPECT_EQ(blr::torch::save_optimizer_state(*b), bytes);
}

TEST(StateBytes, AStateOfAnotherGroupCountIsOneSentence) {
  auto w = ::torch::randn({3}).requires_grad_(true);
  const std::string one_group = blr::torch::save_optimizer_state(*ivon({w}));
  auto x = ::torch::randn({3}).requires_grad_(true);
  auto two = ivon({x});
  ::torch::optim::OptimizerParamGroup group({::torch::randn({2}).requires_grad_(true)});
  group.set_options(two->defaults().clone());
  two->add_param_group(group);
  EXPECT_THROW(blr::torch::load_optimizer_state(*two, one_group, "The IVON state"), blr::Error);
}

// A state whose archive lacks an entry the optimizer reads (the fuzzer's mutant, which escaped
// as TorchScript's std::runtime_error) is replayed by fuzz.replay.python_optim
// (fuzz/corpus/python_optim/state-missing-entry), whose harness requires a blr::Error that
// begins with the name of the bytes.

}  // namespace
