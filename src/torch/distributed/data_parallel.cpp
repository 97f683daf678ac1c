// The trainer's data-parallel steps (blr/torch/distributed/data_parallel.hpp).
#include "blr/torch/distributed/data_parallel.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "blr/core/error.hpp"
#include "blr/torch/distributed/process_group.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch::distributed {

Split parse_split(const std::string& text) {
  if (text == "data") return Split::kData;
  if (text == "samples") return Split::kSamples;
  throw Error(fmt::format("Option '--dist-split' must be data or samples; got '{}'.", text));
}

const char* split_name(Split split) { return split == Split::kData ? "data" : "samples"; }

DataParallel::DataParallel(std::shared_ptr<Communicator> communicator, Split split)
    : communicator_(std::move(communicator)), split_(split) {
  check(communicator_ != nullptr, "Internal: data-parallel training without a communicator.");
}

void DataParallel::attach(::torch::optim::Optimizer& optimizer) {
  auto* variational = capability<VariationalOptimizer>(optimizer);
  auto* statistics = capability<DataParallelStatistics>(optimizer);
  if (variational != nullptr && statistics == nullptr) {
    throw Error(fmt::format(
        "This optimizer does not train data-parallel yet: only the point-estimate optimizers and "
        "the BLR optimizers that all-reduce their statistics ({}) do.",
        fmt::join(optimizer_names_with(&OptimizerEntry::data_parallel_statistics), ", ")));
  }
  if (split_ == Split::kSamples) {
    check(statistics != nullptr,
          "--dist-split samples splits the Monte Carlo samples of a BLR optimizer over the ranks; "
          "this optimizer draws none (use --dist-split data).");
  }
  if (statistics != nullptr) statistics->set_noise_shard(rank(), world_size());
}

DataParallel::Share DataParallel::share(int64_t rows) const {
  const int64_t w = world_size();
  if (split_ == Split::kSamples) return {0, rows, 1.0 / static_cast<double>(w)};
  Share s;
  s.begin = rows * rank() / w;
  s.end = rows * (rank() + 1) / w;
  s.weight = static_cast<double>(s.end - s.begin) / static_cast<double>(rows);
  return s;
}

void DataParallel::check_batches(int64_t n, int64_t batch) const {
  if (split_ == Split::kSamples) return;
  const int64_t last = n % batch == 0 ? batch : n % batch;
  check(std::min(batch, last) >= world_size(),
        fmt::format("With {} ranks every minibatch needs at least {} examples, but the batch size "
                    "{} on {} training examples leaves a last minibatch of {}; change "
                    "--batch-size or --train-limit.",
                    world_size(), world_size(), batch, n, last));
}

void DataParallel::reduce(::torch::optim::Optimizer& optimizer, const Share& share) {
  if (auto* statistics = capability<DataParallelStatistics>(optimizer)) {
    // The statistics are sums over this rank's samples; weighted by W·w_r and counted W times,
    // their mean is Σ_r w_r · (this rank's mean).
    statistics->reduce_statistics(*communicator_, share.weight * world_size());
    return;
  }
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> grads;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (!p.grad().defined()) p.mutable_grad() = ::at::zeros_like(p);
      grads.push_back(p.grad());
    }
  }
  communicator_->sum(grads, share.weight);
}

double DataParallel::sum(double value, double weight) {
  auto t = ::at::scalar_tensor(value, ::at::kDouble);
  // A loss is bookkeeping: the process group's counters keep to the training traffic.
  if (auto* group = dynamic_cast<ProcessGroup*>(communicator_.get())) {
    group->sum_uncounted({t}, weight);
  } else {
    communicator_->sum({t}, weight);
  }
  return t.item<double>();
}

}  // namespace blr::torch::distributed
