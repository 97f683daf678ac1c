// Data-parallel training: what the trainer does differently when it runs as one of several ranks
// (processes started by `blr launch` or torchrun; process_group.hpp).
//
// Every rank holds the same model and optimizer state (same seed, same updates) and walks the same
// permutation of the training set each epoch. Per step, with a global minibatch of M examples:
//
//  * split "data" (default): rank r trains on rows [⌊rM/W⌋, ⌊(r+1)M/W⌋) of the global batch, so
//    W ranks with --batch-size B compute the step of one process with batch B; its share's weight
//    is w_r = M_r/M;
//  * split "samples": every rank trains on the whole global batch and draws its own Monte Carlo
//    samples (variational optimizers only); w_r = 1/W, so W ranks with mc_samples S step as one
//    process with mc_samples W·S on the same draws (MeanFieldOptimizer::set_noise_shard).
//
// Before the update, gradients (point-estimate optimizers: p.grad, summed as Σ_r w_r ∇ℓ̄_r) or the
// BLR optimizers' gradient and curvature statistics (IVON: Σg and Σ noise⊙g; VOGN/OGN: Σg and the
// per-example squared gradients; Vadam: Σg and Σg², each summed as Σ_r W·w_r · stat_r with the
// sample count multiplied by W; MeanFieldOptimizer::reduce_statistics) are all-reduced in buckets.
// Losses are reduced the same way, once per epoch. Evaluation and checkpoints are rank 0's; the
// other ranks wait at a barrier while a checkpoint is written.
//
// Optimizers that take part: every point-estimate optimizer (AdamW, SGD, Adam, STE, ...) and the
// mean-field BLR optimizers (IVON, VOGN, OGN, Vadam, AdaBayes). Others (BayesBiNN, MC dropout, SAM,
// bSAM) are refused with a sentence.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <string>

#include "blr/torch/distributed/communicator.hpp"

namespace blr::torch::distributed {

enum class Split { kData, kSamples };

/// "data" or "samples"; a blr::Error naming the option otherwise.
Split parse_split(const std::string& text);
const char* split_name(Split split);

class DataParallel {
 public:
  DataParallel(std::shared_ptr<Communicator> communicator, Split split);

  int rank() const { return communicator_->rank(); }
  int world_size() const { return communicator_->world_size(); }
  bool is_root() const { return rank() == 0; }
  Split split() const { return split_; }
  Communicator& communicator() { return *communicator_; }

  /// Checks that `optimizer` can train data-parallel with this split (a blr::Error naming it
  /// otherwise) and shards its weight noise.
  void attach(::torch::optim::Optimizer& optimizer);

  /// This rank's rows of a global batch of `rows` examples and its weight w_r.
  struct Share {
    int64_t begin = 0, end = 0;
    double weight = 1.0;
  };
  Share share(int64_t rows) const;
  /// A blr::Error when some minibatch of an epoch (n examples, batch size `batch`) would leave a
  /// rank without examples.
  void check_batches(int64_t n, int64_t batch) const;

  /// After the step's samples (or backward) and before optimizer.step(): the all-reduce.
  void reduce(::torch::optim::Optimizer& optimizer, const Share& share);
  /// Σ_r weight_r · value_r.
  double sum(double value, double weight);

 private:
  std::shared_ptr<Communicator> communicator_;
  Split split_;
};

}  // namespace blr::torch::distributed
