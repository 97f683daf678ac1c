// Checkpoints of any Model (checkpoint.hpp): a TorchScript model loaded from an archive has the
// archive embedded next to its parameters. Kept apart from checkpoint.cpp, which the libFuzzer
// build compiles alone (fuzz/libfuzzer/).
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "blr/torch/checkpoint.hpp"
#include "blr/torch/nn/model.hpp"

namespace blr::torch {

void save_checkpoint(const std::string& path, const nlohmann::json& meta, const Model& model,
                     const ::torch::optim::Optimizer& optimizer) {
  detail::write_checkpoint(
      path, meta, [&model](::torch::serialize::OutputArchive& a) { model.save(a); },
      model.script_archive().get(), optimizer);
}

void Checkpoint::restore(const Model& model, ::torch::optim::Optimizer& optimizer) const {
  restore(model.parameters(), [&model](::torch::serialize::InputArchive& a) { model.load(a); },
          optimizer);
}

}  // namespace blr::torch
