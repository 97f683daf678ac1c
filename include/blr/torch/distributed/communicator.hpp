// What data-parallel training needs from the processes it runs in: their number, this one's rank,
// a weighted sum over them and a barrier. The optimizer driver and the trainer see only this
// interface; `ProcessGroup` (process_group.hpp) implements it on c10d's Gloo process group.
//
// sum(tensors, w) replaces every tensor t by  Σ_r w_r · t_r  over the ranks r, where w_r is the
// weight this rank passes: the mean gradient of a global minibatch of M examples split into shares
// of M_r is  Σ_r (M_r/M) · ∇ℓ̄_r  (ℓ̄_r: the mean loss of rank r's share), which equals the
// one-process gradient whatever the split (Goyal et al. 2017, "Accurate, large minibatch SGD",
// §2; the all-reduce of Li et al. 2020, "PyTorch Distributed", §3).
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace blr::torch::distributed {

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// This process's rank in [0, world_size()).
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// In place on every rank: each tensor becomes Σ_r weight_r · tensor_r. Every rank passes
  /// tensors of the same shapes, dtypes and order. A blr::Error when another rank died or did not
  /// answer within the timeout.
  virtual void sum(const std::vector<::at::Tensor>& tensors, double weight = 1.0) = 0;
  /// Returns when every rank has called it (or throws as sum does).
  virtual void barrier() = 0;
};

}  // namespace blr::torch::distributed
