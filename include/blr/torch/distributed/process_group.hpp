// Data-parallel processes on c10d, the engine under PyTorch's DistributedDataParallel: rendezvous
// through a TCPStore (rank 0 serves it) and collectives through ProcessGroupGloo (TCP; loopback
// for local runs), found from the environment variables torchrun and `blr launch` set:
//
//   RANK, WORLD_SIZE (both or neither), LOCAL_RANK, MASTER_ADDR (default 127.0.0.1), MASTER_PORT.
//
// `blr launch` sets BLR_RENDEZVOUS_FILE instead of MASTER_ADDR/MASTER_PORT: its ranks share one
// machine and meet through a c10d FileStore in a private directory (mode 0700), so no port is
// opened for the rendezvous. LibTorch's TCPStore, used across machines, has no bind address in
// 1.13: rank 0's store listens on every interface of its machine, without authentication, for
// the whole run (docs/distributed.md says how to keep it on a private network).
//
// Every rank must run the same configuration: agree() compares a list of named values across
// ranks through the store, so that ranks started with different models, optimizers, data or
// seeds stop with one sentence before the first collective instead of aborting inside Gloo.
//
// Without RANK and WORLD_SIZE (or with WORLD_SIZE=1) a run is one process, unchanged.
//
// Bucketing (Li et al. 2020, "PyTorch Distributed: Experiences on Accelerating Data Parallel
// Training", §3.2.2): the tensors of one sum() are flattened, in order and per dtype, into
// buckets of at most `bucket_bytes` (4 MiB by default; a larger tensor is a bucket of its own),
// each multiplied by this rank's weight, and all buckets are all-reduced (SUM) asynchronously
// before the results are copied back; one call per bucket instead of one per tensor. Gloo's ring
// all-reduce gives every rank the same bits.
//
// Failure: every rendezvous and collective waits at most `timeout`; a rank that died (its sockets
// close) or hangs (no answer) makes the others throw blr::Error naming the operation, this rank
// and the timeout — never a silent hang. After a failed collective the Gloo group is abandoned,
// not destroyed (its threads may still wait on the lost peer), so the process can exit.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blr/torch/distributed/communicator.hpp"

namespace blr::torch::distributed {

/// The launcher's environment variables.
struct Environment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string store_file;  ///< BLR_RENDEZVOUS_FILE (blr launch): a FileStore, no port
  /// torchrun's static rendezvous (TORCHELASTIC_USE_AGENT_STORE=True): its agent on node 0
  /// already serves the TCPStore at MASTER_ADDR:MASTER_PORT, so every rank is a client, under
  /// the prefix /worker/attempt_<TORCHELASTIC_RESTART_COUNT> (as torch.distributed does).
  bool agent_store = false;
  int restart_count = 0;
};

/// The environment of this process: nullopt when neither RANK nor WORLD_SIZE is set; a
/// blr::Error with one sentence when one is missing or a value is out of range.
std::optional<Environment> environment_from_variables();

/// Whether this build can form a process group of several ranks: false when it was built against
/// a LibTorch without Gloo's headers (PyTorch's wheels), and then ProcessGroup's constructors
/// refuse with a blr::Error.
bool distributed_available();

/// Counters of the collectives, for reports and benchmarks.
struct CollectiveStats {
  int64_t calls = 0;          ///< sum() calls
  int64_t buckets = 0;        ///< all-reduce operations
  int64_t bytes = 0;          ///< bytes all-reduced by this rank (payload, not wire traffic)
  double seconds = 0.0;       ///< wall time inside sum()
};

class ProcessGroup final : public Communicator {
 public:
  static constexpr int64_t kDefaultBucketBytes = int64_t{4} << 20;

  /// Rendezvous of `env.world_size` processes at MASTER_ADDR:MASTER_PORT (TCPStore, rank 0 the
  /// server), then a Gloo group; both within `timeout`.
  ProcessGroup(const Environment& env, std::chrono::milliseconds timeout,
               int64_t bucket_bytes = kDefaultBucketBytes);
  /// The same over a FileStore at `store_path` (tests: no ports).
  ProcessGroup(const std::string& store_path, int rank, int world_size,
               std::chrono::milliseconds timeout, int64_t bucket_bytes = kDefaultBucketBytes);
  ~ProcessGroup() override;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  void sum(const std::vector<::at::Tensor>& tensors, double weight = 1.0) override;
  void barrier() override;

  /// Every rank publishes its (name, value) pairs and compares them with rank 0's; a difference
  /// throws blr::Error naming the first differing name and both values. Collective: every rank
  /// calls it once per `topic`, with the same names in the same order.
  void agree(const std::string& topic, const std::vector<std::pair<std::string, std::string>>& values);

  /// sum() without counting it in stats(): bookkeeping (losses), not the training traffic.
  void sum_uncounted(const std::vector<::at::Tensor>& tensors, double weight = 1.0);

  const CollectiveStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  int64_t bucket_bytes() const { return bucket_bytes_; }

 private:
  struct Impl;
  [[noreturn]] void fail(const std::string& operation, const std::exception& e);

  std::unique_ptr<Impl> impl_;
  int rank_ = 0;
  int world_size_ = 1;
  std::chrono::milliseconds timeout_;
  int64_t bucket_bytes_;
  CollectiveStats stats_;
  bool counting_ = true;
};

/// The process group of this process from its environment (see above), or nullptr for a
/// single-process run; `timeout_seconds` > 0 bounds the rendezvous and every collective.
std::shared_ptr<ProcessGroup> process_group_from_environment(double timeout_seconds);

}  // namespace blr::torch::distributed
