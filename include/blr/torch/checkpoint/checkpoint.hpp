// Checkpoints of a training run: model parameters, optimizer state (including the step counters
// and the noise generators of the variational optimizers), LibTorch's CPU generator state, and a
// JSON block with the epoch, the run's options and its history.
//
// File layout (little-endian):
//   8 bytes   magic "BLRCKPT\n"
//   4 bytes   format version (1, or 2 when the payload embeds a TorchScript model)
//   8 bytes   payload length L
//   4 bytes   CRC-32 (zlib) of the payload
//   L bytes   payload: a LibTorch archive (keys "meta", "model", "optimizer", "rng/torch_cpu";
//             version 2 adds "model_script", the bytes of the TorchScript archive of a
//             --model-file run as a uint8 tensor, so the checkpoint rebuilds its model alone)
// Version 2 is written only when a model is embedded, so checkpoints of built-in models stay
// readable by blr versions that know version 1; this reader takes both. An embedded archive
// longer than nn/script_file.hpp's kMaxModelFileBytes or than the payload itself is refused
// before it is copied out.
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
#include <torch/serialize/output-archive.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <functional>
#include <vector>

namespace blr::torch {

class Model;  // nn/model.hpp (kept out of this header: fuzz/libfuzzer compiles it as C++17)

/// The newest format version (written when a TorchScript model is embedded; 1 otherwise).
inline constexpr uint32_t kCheckpointVersion = 2;

/// Writes a checkpoint atomically (temporary file + rename).
void save_checkpoint(const std::string& path, const nlohmann::json& meta,
                     const ::torch::nn::Module& model, const ::torch::optim::Optimizer& optimizer);
/// The same for any Model; a TorchScript model loaded from an archive (Model::script_archive())
/// has the archive embedded (src/torch/checkpoint/checkpoint_model.cpp).
void save_checkpoint(const std::string& path, const nlohmann::json& meta, const Model& model,
                     const ::torch::optim::Optimizer& optimizer);

namespace detail {
/// The one writer behind both: `save_model` fills the "model" archive; `script` (or nullptr) is
/// embedded as "model_script" and makes the file format 2.
void write_checkpoint(const std::string& path, const nlohmann::json& meta,
                      const std::function<void(::torch::serialize::OutputArchive&)>& save_model,
                      const std::string* script, const ::torch::optim::Optimizer& optimizer);
}  // namespace detail

/// A checkpoint read and verified; restore() loads it into a model and optimizer built from the
/// options in `meta`.
class Checkpoint {
 public:
  nlohmann::json meta;
  std::string path;

  /// Loads model parameters, optimizer state and the generator state (device: the model's).
  void restore(::torch::nn::Module& model, ::torch::optim::Optimizer& optimizer) const;
  void restore(const Model& model, ::torch::optim::Optimizer& optimizer) const;

  /// The embedded TorchScript archive (format 2), or nullptr when the checkpoint has none.
  std::shared_ptr<const std::string> model_archive() const;

  /// The one reader behind both restore()s: `load_model` reads the "model" archive into the model
  /// whose parameters are `parameters` (their device is where the tensors go).
  void restore(const std::vector<::at::Tensor>& parameters,
               const std::function<void(::torch::serialize::InputArchive&)>& load_model,
               ::torch::optim::Optimizer& optimizer) const;
  /// Loads only the model parameters (fine-tuning from another run, `--init`).
  void restore_parameters(const Model& model) const;

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
