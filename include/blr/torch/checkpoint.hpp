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
// Files are written to a temporary file `<path>.tmp.<pid>` in the same directory, flushed, synced
// and renamed into place (and the directory synced), so a crash or a full disk never leaves a
// half-written checkpoint under the final name; a write that fails removes its temporary file, and
// the next write into a directory removes the temporaries of processes that no longer run (what
// `kill -9` leaves behind). A file that is too short, too long, has another magic or version, or
// whose checksum does not match is refused with a blr::Error naming the file; its size is checked
// against the header before the payload is read, so memory is bounded by the file's real size.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

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
  /// Loads only the model parameters (fine-tuning from another run, `--init`).
  void restore_parameters(::torch::nn::Module& model) const;

 private:
  friend Checkpoint load_checkpoint(const std::string& path);
  std::shared_ptr<std::string> payload_;
};

/// Reads and verifies a checkpoint; throws blr::Error for a missing, truncated or corrupt file.
Checkpoint load_checkpoint(const std::string& path);

/// The newest checkpoint of a directory that loads and verifies: the `*.ckpt` files are tried by
/// the epoch in their metadata (ties: the newer file) from the newest down. Each file refused on
/// the way is listed in `skipped` with the sentence saying why. Throws blr::Error when the
/// directory holds no valid checkpoint.
Checkpoint newest_valid_checkpoint(const std::string& directory,
                                   std::vector<std::string>* skipped = nullptr);

/// Removes `<name>.tmp.<pid>` files in `directory` whose process no longer runs; returns how many.
int remove_stale_temporaries(const std::string& directory);

}  // namespace blr::torch
