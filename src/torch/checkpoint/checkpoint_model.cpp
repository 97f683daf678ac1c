// Checkpoints of any Model (checkpoint.hpp): a TorchScript model loaded from an archive has the
// archive embedded next to its parameters. Kept apart from checkpoint.cpp, which the libFuzzer
// build compiles alone (fuzz/libfuzzer/).
#include <nlohmann/json.hpp>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <fmt/format.h>

#include "blr/core/error.hpp"
#include "blr/torch/checkpoint/checkpoint.hpp"
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

void Checkpoint::restore_parameters(const Model& model) const {
  check(payload_ != nullptr,
        "Checkpoint::restore_parameters() needs a checkpoint read by load_checkpoint().");
  const auto parameters = model.parameters();
  try {
    ::torch::serialize::InputArchive archive;
    archive.load_from(payload_->data(), payload_->size(),
                      parameters.empty() ? at::Device(at::kCPU) : parameters.front().device());
    ::torch::serialize::InputArchive part;
    archive.read("model", part);
    model.load(part);
  } catch (const std::exception& e) {
    throw Error(fmt::format("The checkpoint '{}' does not fit this run's model: {}", path,
                            std::string(e.what()).substr(0, 300)));
  }
}

}  // namespace blr::torch
