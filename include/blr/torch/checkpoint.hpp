// Checkpoints of a training run: model parameters, optimizer state (including the step counters
// and the noise generators of the variational optimizers), LibTorch's CPU generator state, and a
// JSON block with the epoch, the run's options and its history.
//
// File layout (little-endian):
//   8 bytes   magic "BLRCKPT\n"
//   4 bytes   format version (1)
//   8 bytes   payload length L
//   4 bytes   CRC-32 (zlib) of the payload
//   L bytes   payload: a LibTorch archive (keys "meta", "model", "optimizer", "rng/torch_cpu")
// Files are written to a temporary file in the same directory, flushed and renamed into place, so
// a crash never leaves a half-written checkpoint under the final name. A file that is too short,
// too long, has another magic or version, or whose checksum does not match is refused with a
// blr::Error naming the file.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace blr::torch {

inline constexpr uint32_t kCheckpointVersion = 1;

/// Writes a checkpoint atomically (temporary file + rename).
void save_checkpoint(const std::string& path, const nlohmann::json& meta,
                     const ::torch::nn::Module& model, const ::torch::optim::Optimizer& optimizer);

/// A checkpoint read and verified; restore() loads it into a model and optimizer built from the
/// options in `meta`.
class Checkpoint {
 public:
  nlohmann::json meta;
  std::string path;

  /// Loads model parameters, optimizer state and the generator state (device: the model's).
  void restore(::torch::nn::Module& model, ::torch::optim::Optimizer& optimizer) const;

 private:
  friend Checkpoint load_checkpoint(const std::string& path);
  std::shared_ptr<std::string> payload_;
};

/// Reads and verifies a checkpoint; throws blr::Error for a missing, truncated or corrupt file.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace blr::torch
