// An optimizer's state as the bytes of a LibTorch archive, and back: what a checkpoint's
// "optimizer" part holds, for callers that carry the bytes themselves (the Python package's
// state_dict, python/src/optimizers.cpp).
//
// Bytes that come back may have been crafted: LibTorch 1.13's archive reader trusts the zip
// directory and the pickles, and its TorchScript type parser crashes on some inputs
// (fuzz/corpus/checkpoint/segv-*) or allocates gigabytes before refusing them (oom-*). So
// reading goes through the defences a checkpoint's payload gets (checkpoint.hpp): the archive
// check (data/archive_check.hpp), then a trial decode in a child process capped at this
// process's memory plus 4 × the bytes + 1 GiB, and only then LibTorch's reader here; every
// refusal is one blr::Error sentence.
#pragma once

#include <torch/optim/optimizer.h>

#include <string>

namespace blr::torch {

/// The state of `optimizer` (its save()) as the bytes of a LibTorch archive.
std::string save_optimizer_state(const ::torch::optim::Optimizer& optimizer);

/// Loads bytes written by save_optimizer_state into `optimizer` (its load()), after the archive
/// check and the trial decode. `what` names the bytes at the start of a sentence ("The IVON state
/// in this state dict"); every refusal is one blr::Error sentence: the checks of the bytes begin
/// with `what`, the optimizer's checks of the values it reads name the parameter.
void load_optimizer_state(::torch::optim::Optimizer& optimizer, const std::string& bytes,
                          const std::string& what);

}  // namespace blr::torch
