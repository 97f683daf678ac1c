// Sampling, restoring, stepping and saving of the diagonal-Gaussian optimizers (mean_field.hpp).
#include "blr/torch/optim/mean_field.hpp"

#include <ATen/ATen.h>
#include <torch/serialize/archive.h>

#include "blr/core/error.hpp"
#include "blr/torch/distributed/communicator.hpp"
#include "all_finite.hpp"
#include "dispatch.hpp"
#include "state_archive.hpp"
#include "kernels.hpp"

namespace blr::torch {

using detail::param_key;
using detail::shape_string;

namespace {

constexpr int64_t kMeanFieldFormatVersion = 2;  // 1: the optimizer's own curvature instead of P
constexpr int64_t kPriorFormatVersion = 3;  // 2 + m₀ and p₀ of the parameters with a prior

// The sampling pass is compute-bound (noise generation): one clone per ISA (kernels.hpp).

BLR_CPU_CLONES void sample_chunk_of(const detail::SampleArgs<float>& s, int64_t chunk,
                                    int64_t begin, int64_t end) {
  detail::sample_chunk(s, chunk, begin, end);
}

BLR_CPU_CLONES void sample_chunk_of(const detail::SampleArgs<double>& s, int64_t chunk,
                                    int64_t begin, int64_t end) {
  detail::sample_chunk(s, chunk, begin, end);
}

BLR_CPU_CLONES void restore_chunk_of(const detail::RestoreArgs<float>& a, int64_t begin,
                                     int64_t end) {
  detail::restore_chunk(a, begin, end);
}

BLR_CPU_CLONES void restore_chunk_of(const detail::RestoreArgs<double>& a, int64_t begin,
                                     int64_t end) {
  detail::restore_chunk(a, begin, end);
}

/// True for the reduced-precision floating types whose parameters get float32 master weights.
bool reduced_precision(const ::at::Tensor& param) {
  return param.scalar_type() == ::at::kHalf || param.scalar_type() == ::at::kBFloat16;
}

/// The options of a parameter's optimizer state: float32 for half/bfloat16 parameters (master
/// weights), the parameter's own otherwise.
::at::TensorOptions state_options(const ::at::Tensor& param) {
  return reduced_precision(param) ? param.options().dtype(::at::kFloat) : param.options();
}

/// `t` converted to the state's dtype and device of `param`.
::at::Tensor conform_state(const ::at::Tensor& t, const ::at::Tensor& param) {
  return t.to(state_options(param)).contiguous();
}

}  // namespace

void detail::sample_pass(const detail::SampleArgs<float>& s, int64_t n) {
  detail::for_each_chunk(n, [&](int64_t chunk, int64_t b, int64_t e) { sample_chunk_of(s, chunk, b, e); });
}

void detail::sample_pass(const detail::SampleArgs<double>& s, int64_t n) {
  detail::for_each_chunk(n, [&](int64_t chunk, int64_t b, int64_t e) { sample_chunk_of(s, chunk, b, e); });
}

void MeanFieldOptimizer::keep_group_options(
    const std::vector<::torch::optim::OptimizerParamGroup>& param_groups) {
  check(param_groups.size() == param_groups_.size(),
        "Internal: the param groups changed while the optimizer was built.");
  for (size_t g = 0; g < param_groups.size(); ++g) {
    if (param_groups[g].has_options()) {
      param_groups_[g].set_options(param_groups[g].options().clone());
    }
  }
  record_initial_lrs();
}

void MeanFieldOptimizer::record_initial_lrs() {
  while (initial_lrs_.size() < param_groups_.size()) {
    initial_lrs_.push_back(param_groups_[initial_lrs_.size()].options().get_lr());
  }
}

double MeanFieldOptimizer::initial_lr(size_t group) const {
  check(group < initial_lrs_.size(),
        fmt::format("Internal: the learning rate of param group {} was not recorded when it was "
                    "added.", group));
  return initial_lrs_[group];
}

void MeanFieldOptimizer::add_param_group(const ::torch::optim::OptimizerParamGroup& param_group) {
  // The samples collected since the last step have no statistics for the new group's parameters
  // (found by fuzz/harness/python_optim.cpp: step() then read past the slots).
  check(samples_ == 0,
        fmt::format("{}: add_param_group() was called after a training sample and before step(); "
                    "add param groups between steps.",
                    name()));
  ::torch::optim::Optimizer::add_param_group(param_group);
  if (param_group.has_options()) param_groups_.back().set_options(param_group.options().clone());
  record_initial_lrs();
  try {
    validate();
  } catch (...) {
    param_groups_.pop_back();  // a refused group leaves the optimizer as it was
    initial_lrs_.pop_back();
    throw;
  }
}

bool MeanFieldOptimizer::fused_for(const ::at::Tensor& param) const {
  return detail::fused_layout(param);
}

void MeanFieldOptimizer::ensure_slots() {
  ::at::NoGradGuard no_grad;
  slots_.resize(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    slots_[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      if (s.precision.defined()) continue;
      const auto options = state_options(params[i]);
      s.average = ::at::zeros(params[i].sizes(), options);
      s.precision = ::at::full(params[i].sizes(), initial_precision(g), options);
      if (reduced_precision(params[i]) && !s.master.defined()) {
        s.master = params[i].detach().to(options).contiguous();
      }
    }
  }
}

size_t MeanFieldOptimizer::parameter_count() const {
  size_t total = 0;
  for (const auto& group : param_groups_) total += group.params().size();
  return total;
}

MeanFieldOptimizer::Slot& MeanFieldOptimizer::slot(size_t group, size_t index) {
  return slots_.at(group).at(index);
}

void MeanFieldOptimizer::sample_parameters(bool train) {
  sample(train, nullptr);
}

void MeanFieldOptimizer::sample_parameters(bool train,
                                           const std::vector<::at::Tensor>& standard_normal) {
  sample(train, &standard_normal);
}

void MeanFieldOptimizer::sample(bool train, const std::vector<::at::Tensor>* eps) {
  check(!sampled_, fmt::format("{}: sample_parameters() was called twice without "
                               "restore_parameters() in between.",
                               name()));
  ensure_slots();
  ::at::NoGradGuard no_grad;
  if (train) materialise_pending();  // a second sample before step(): sum the first one now
  const size_t total = parameter_count();
  if (eps != nullptr) {
    check(eps->size() == total, fmt::format("{}: {} noise tensors were given for {} parameters.",
                                            name(), eps->size(), total));
  }
  const bool keep_noise = train && statistic() == Statistic::kNoiseTimesGradient;
  // OGN takes its training gradients at μ, but its posterior predictive samples like the others.
  perturbed_ = perturbs() || !train;
  // Data parallel: this rank's training draws follow those of the ranks before it.
  const uint64_t draw =
      train ? draws_ + static_cast<uint64_t>(noise_rank_) * training_samples() : draws_;
  if (perturbed_) {
    size_t j = 0;
    for (size_t g = 0; g < param_groups_.size(); ++g) {
      const Affine prec = posterior(g);
      auto& params = param_groups_[g].params();
      for (size_t i = 0; i < params.size(); ++i, ++j) {
        ::at::Tensor& p = params[i];
        Slot& s = slot(g, i);
        ::at::Tensor e;
        if (eps != nullptr) {
          check((*eps)[j].sizes() == p.sizes(),
                fmt::format("{}: noise tensor {} has shape {} but the parameter has shape {}.",
                            name(), j, shape_string((*eps)[j].sizes()), shape_string(p.sizes())));
          e = conform_state((*eps)[j], p);
        }
        if (fused_ && fused_for(p)) {
          if (!s.theta.defined()) s.theta = ::at::empty(p.sizes(), p.options());
          if (keep_noise && !s.noise.defined()) s.noise = ::at::empty(p.sizes(), p.options());
          blr_dispatch::floating_types(p.scalar_type(), [&](auto tag) {
            using scalar_t = decltype(tag);
            const detail::SampleArgs<scalar_t> args{
                p.data_ptr<scalar_t>(),
                s.theta.data_ptr<scalar_t>(),
                s.precision.data_ptr<scalar_t>(),
                static_cast<scalar_t>(prec.a),
                static_cast<scalar_t>(prec.b),
                keep_noise ? s.noise.data_ptr<scalar_t>() : nullptr,
                e.defined() ? e.data_ptr<scalar_t>() : nullptr,
                detail::NoiseSource{seed(), draw, j}};
            detail::sample_pass(args, p.numel());
          });
          // Swap storages: p holds θ, s.mean keeps μ's buffer (no copy).
          s.mean = p.detach();
          p.set_data(s.theta);
          s.theta = ::at::Tensor();
          s.swapped = true;
        } else if (s.master.defined()) {
          // Master weights: θ = μ + noise in float32, written into the parameter's own dtype.
          s.mean = s.master;
          if (!e.defined()) e = ::at::randn(p.sizes(), state_options(p));
          ::at::Tensor noise = e.mul(s.precision.mul(prec.a).add_(prec.b).rsqrt_());
          p.copy_(s.master.add(noise));
          if (keep_noise) s.noise = noise;
        } else {
          if (s.mean.defined()) {
            s.mean.copy_(p);
          } else {
            s.mean = p.detach().clone();
          }
          if (!e.defined()) e = ::at::randn(p.sizes(), p.options());
          ::at::Tensor noise = e.mul(s.precision.mul(prec.a).add_(prec.b).rsqrt_());
          p.add_(noise);
          if (keep_noise) s.noise = noise;
        }
      }
    }
    ++draws_;
  }
  sampled_ = true;
  train_sample_ = train;
  squared_given_ = false;
}

void MeanFieldOptimizer::restore_parameters() {
  restore(true);
}

void MeanFieldOptimizer::discard_sample() {
  restore(false);
}

void MeanFieldOptimizer::restore(bool collect) {
  check(sampled_, fmt::format("{}: restore_parameters() was called without a sample.", name()));
  ::at::NoGradGuard no_grad;
  collect = collect && train_sample_;
  const bool first = samples_ == 0;
  const Statistic stat = statistic();
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      ::at::Tensor& p = params[i];
      Slot& s = slot(g, i);
      const bool swapped = s.swapped;
      if (swapped) {  // μ back by swapping the storages; θ's buffer is kept for the next sample
        s.theta = p.detach();
        p.set_data(s.mean);
        s.mean = ::at::Tensor();
        s.swapped = false;
      } else if (perturbed_) {  // tensor-operation path: μ was copied aside
        p.copy_(s.mean);
      }
      if (!collect) continue;
      // A parameter the loss did not reach has gradient zero.
      ::at::Tensor grad = p.grad().defined() ? conform_state(p.grad(), p)
                                             : ::at::zeros(p.sizes(), state_options(p));
      if (first && training_samples() == 1) {
        // The update reads the gradient (and the noise) itself (see mean_field.hpp).
        s.pending_grad = grad;
        s.pending_version = grad._version();
        continue;
      }
      const Statistic collected = perturbs() ? stat : Statistic::kNone;
      if (swapped) {
        if (!s.grad_sum.defined()) s.grad_sum = ::at::empty(p.sizes(), p.options());
        if (collected == Statistic::kSquaredGradient && !s.stat_sum.defined()) {
          s.stat_sum = ::at::empty(p.sizes(), p.options());
        }
        blr_dispatch::floating_types(p.scalar_type(), [&](auto tag) {
          using scalar_t = decltype(tag);
          const int64_t n = p.numel();
          const scalar_t* gp = grad.data_ptr<scalar_t>();
          scalar_t* gs = s.grad_sum.data_ptr<scalar_t>();
          using detail::Collect;
          detail::RestoreArgs<scalar_t> args{gp, gs, nullptr, nullptr, Collect::kGradient, first};
          if (collected == Statistic::kNoiseTimesGradient) {
            // First sample: noise⊙g is written over the noise, which becomes the sum.
            scalar_t* noise = s.noise.data_ptr<scalar_t>();
            args.collect = Collect::kNoiseTimesGradient;
            args.noise = noise;
            args.stat_sum = first ? noise : s.stat_sum.data_ptr<scalar_t>();
          } else if (collected == Statistic::kSquaredGradient) {
            args.collect = Collect::kSquaredGradient;
            args.stat_sum = s.stat_sum.data_ptr<scalar_t>();
          }
          detail::for_each_chunk(n, [&](int64_t, int64_t begin, int64_t end) {
            restore_chunk_of(args, begin, end);
          });
        });
        if (collected == Statistic::kNoiseTimesGradient && first) std::swap(s.noise, s.stat_sum);
      } else {
        if (first) {
          s.grad_sum = grad.clone();
        } else {
          s.grad_sum.add_(grad);
        }
        if (collected == Statistic::kNoiseTimesGradient) {
          if (first) {
            s.stat_sum = s.noise.mul(grad);
          } else {
            s.stat_sum.addcmul_(s.noise, grad);
          }
        } else if (collected == Statistic::kSquaredGradient) {
          if (first) {
            s.stat_sum = grad.square();
          } else {
            s.stat_sum.addcmul_(grad, grad);
          }
        }
      }
    }
  }
  if (collect) ++samples_;
  sampled_ = false;
}

void MeanFieldOptimizer::materialise_pending() {
  const Statistic stat = perturbs() ? statistic() : Statistic::kNone;
  for (auto& group : slots_) {
    for (Slot& s : group) {
      if (!s.pending_grad.defined()) continue;
      check(s.pending_grad._version() == s.pending_version,
            fmt::format("{}: the gradient of the previous sample was modified before the next "
                        "sample was drawn (e.g. zero_grad() before sample_parameters()); with "
                        "more samples than mc_samples per step, zero the gradients after "
                        "sampling, or set mc_samples to the number of samples.",
                        name()));
      const ::at::Tensor& g = s.pending_grad;
      if (!fused_ || !fused_for(g)) {
        s.grad_sum = g.clone();
        if (stat == Statistic::kNoiseTimesGradient) s.stat_sum = s.noise.mul(g);
        if (stat == Statistic::kSquaredGradient) s.stat_sum = g.square();
        s.pending_grad = ::at::Tensor();
        continue;
      }
      if (!s.grad_sum.defined()) s.grad_sum = ::at::empty_like(g);
      if (stat == Statistic::kSquaredGradient && !s.stat_sum.defined()) {
        s.stat_sum = ::at::empty_like(g);
      }
      blr_dispatch::floating_types(g.scalar_type(), [&](auto tag) {
        using scalar_t = decltype(tag);
        // As the first sample's restore: Σg = g, and noise⊙g written over the noise (or g²).
        using detail::Collect;
        detail::RestoreArgs<scalar_t> args{g.data_ptr<scalar_t>(), s.grad_sum.data_ptr<scalar_t>(),
                                           nullptr, nullptr, Collect::kGradient, true};
        if (stat == Statistic::kNoiseTimesGradient) {
          scalar_t* noise = s.noise.data_ptr<scalar_t>();
          args.collect = Collect::kNoiseTimesGradient;
          args.noise = noise;
          args.stat_sum = noise;
        } else if (stat == Statistic::kSquaredGradient) {
          args.collect = Collect::kSquaredGradient;
          args.stat_sum = s.stat_sum.data_ptr<scalar_t>();
        }
        detail::for_each_chunk(g.numel(), [&](int64_t, int64_t begin, int64_t end) {
          restore_chunk_of(args, begin, end);
        });
      });
      if (stat == Statistic::kNoiseTimesGradient) std::swap(s.noise, s.stat_sum);
      s.pending_grad = ::at::Tensor();
    }
  }
}

void MeanFieldOptimizer::set_noise_shard(int rank, int world_size) {
  check(world_size >= 1 && rank >= 0 && rank < world_size,
        fmt::format("{}: rank {} of {} processes is not a valid noise shard.", name(), rank,
                    world_size));
  check(samples_ == 0 && !sampled_,
        fmt::format("{}: the noise shard is set between steps.", name()));
  noise_rank_ = rank;
  noise_world_ = world_size;
}

void MeanFieldOptimizer::reduce_statistics(distributed::Communicator& communicator,
                                           double weight) {
  check(!sampled_ && samples_ > 0,
        fmt::format("{}: reduce_statistics() belongs after the step's samples and before step().",
                    name()));
  ::at::NoGradGuard no_grad;
  materialise_pending();  // the single-sample shortcut's gradient becomes a sum to reduce
  const Statistic stat = perturbs() ? statistic() : Statistic::kNone;
  std::vector<::at::Tensor> tensors;
  for (auto& group : slots_) {
    for (Slot& s : group) {
      tensors.push_back(s.grad_sum);
      if (stat == Statistic::kNoiseTimesGradient || stat == Statistic::kSquaredGradient) {
        tensors.push_back(s.stat_sum);
      }
      if (statistic() == Statistic::kExternalSquared) tensors.push_back(s.squared_sum);
    }
  }
  communicator.sum(tensors, weight);
  const int64_t world = communicator.world_size();
  // The other ranks' draws of this step were theirs; the counter moves past all of them.
  if (perturbs()) draws_ += static_cast<uint64_t>((world - 1) * samples_);
  samples_ *= world;
  squared_samples_ *= world;
}

void MeanFieldOptimizer::add_squared_gradients(const std::vector<::at::Tensor>& squared) {
  if (statistic() != Statistic::kExternalSquared) return;
  check(sampled_ && train_sample_,
        fmt::format("{}: add_squared_gradients() belongs inside a training sample, after "
                    "backward() and before restore_parameters().",
                    name()));
  ::at::NoGradGuard no_grad;
  const size_t total = parameter_count();
  check(squared.size() == total,
        fmt::format("{}: {} squared-gradient tensors were given for {} parameters.", name(),
                    squared.size(), total));
  // The first call of the step starts the sum; later calls (more samples, or more micro-batches
  // of one sample) add to it.
  const bool first = squared_samples_ == 0;
  size_t j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      const ::at::Tensor& p = params[i];
      Slot& s = slot(g, i);
      // An undefined entry (a parameter without a squared gradient) counts as zero.
      ::at::Tensor sq = squared[j].defined() ? conform_state(squared[j].detach(), p)
                                             : ::at::zeros(p.sizes(), state_options(p));
      check(sq.sizes() == p.sizes(),
            fmt::format("{}: squared gradient {} has shape {} but the parameter has shape {}.",
                        name(), j, shape_string(sq.sizes()), shape_string(p.sizes())));
      // Never written in place: the first tensor may be the caller's.
      s.squared_sum = first ? sq : s.squared_sum + sq;
    }
  }
  if (!squared_given_) ++squared_samples_;  // samples that had squared gradients
  squared_given_ = true;
}

std::vector<::at::Tensor> MeanFieldOptimizer::posterior_variance() {
  std::vector<::at::Tensor> out = posterior_precision();
  for (auto& t : out) t.reciprocal_();
  return out;
}

std::vector<::at::Tensor> MeanFieldOptimizer::posterior_mean() {
  check(!sampled_, fmt::format("{}: the posterior mean is not readable while the parameters hold "
                               "a sample.",
                               name()));
  ensure_slots();
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      const Slot& s = slots_[g][i];
      out.push_back(s.master.defined() ? s.master : params[i].detach());
    }
  }
  return out;
}

std::vector<::at::Tensor> MeanFieldOptimizer::posterior_precision() {
  ensure_slots();
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Affine prec = posterior(g);
    for (const Slot& s : slots_[g]) out.push_back(s.precision.mul(prec.a).add_(prec.b));
  }
  return out;
}

std::vector<::at::Tensor> MeanFieldOptimizer::curvature() {
  ensure_slots();
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const double offset = curvature_offset(g);
    for (const Slot& s : slots_[g]) {
      // With a prior of its own, P = h + p₀ (only optimizers whose offset is δ take one).
      out.push_back(s.prior_precision.defined() ? s.precision.sub(s.prior_precision)
                                                : s.precision.sub(offset));
    }
  }
  return out;
}

void MeanFieldOptimizer::set_prior(const std::vector<::at::Tensor>& means,
                                   const std::vector<::at::Tensor>& precisions) {
  check(supports_prior(),
        fmt::format("{} takes no general prior: its prior precision enters through its posterior "
                    "map or with its damping, not only through the prior stages (IVON does).",
                    name()));
  check(!sampled_, fmt::format("{}: cannot set the prior while the parameters hold a sample.",
                               name()));
  const size_t count = parameter_count();
  check(means.size() == count && precisions.size() == count,
        fmt::format("{}: set_prior needs one prior mean and one prior precision per parameter "
                    "({}); got {} and {}.",
                    name(), count, means.size(), precisions.size()));
  ensure_slots();
  ::at::NoGradGuard no_grad;
  // Everything is checked before anything changes.
  std::vector<std::pair<::at::Tensor, ::at::Tensor>> conformed;
  size_t k = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++k) {
      for (const ::at::Tensor* t : {&means[k], &precisions[k]}) {
        check(t->defined() && t->sizes() == params[i].sizes(),
              fmt::format("{}: the prior of parameter {} in group {} has shape {}; the "
                          "parameter has shape {}.",
                          name(), i, g, t->defined() ? shape_string(t->sizes()) : "none",
                          shape_string(params[i].sizes())));
      }
      ::at::Tensor m0 = conform_state(means[k], params[i]);
      ::at::Tensor p0 = conform_state(precisions[k], params[i]);
      check(::at::isfinite(m0).all().item<bool>(),
            fmt::format("{}: the prior mean of parameter {} in group {} is not finite.", name(),
                        i, g));
      check(::at::isfinite(p0).all().item<bool>() && (p0 >= 0).all().item<bool>(),
            fmt::format("{}: the prior precision of parameter {} in group {} must be finite and "
                        ">= 0.",
                        name(), i, g));
      conformed.emplace_back(std::move(m0), std::move(p0));
    }
  }
  k = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    // Before the first step the initial candidate includes the prior: P = h₀ + p₀.
    const double h0 = initial_precision(g) - curvature_offset(g);
    for (Slot& s : slots_[g]) {
      s.prior_mean = std::move(conformed[k].first);
      s.prior_precision = std::move(conformed[k].second);
      if (step_ == 0) s.precision = s.prior_precision.add(h0);
      ++k;
    }
  }
}

void MeanFieldOptimizer::set_prior_from_posterior() {
  check(!sampled_, fmt::format("{}: cannot take the posterior as the prior while the parameters "
                               "hold a sample.",
                               name()));
  ensure_slots();
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> means, precisions;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    check(posterior(g).b == 0.0,
          fmt::format("{}: the posterior precision is not a multiple of the state P, so it "
                      "cannot become the prior per example.",
                      name()));
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      const Slot& s = slots_[g][i];
      means.push_back(s.master.defined() ? s.master.clone() : params[i].detach().clone());
      precisions.push_back(slots_[g][i].precision.clone());
    }
  }
  set_prior(means, precisions);
}

void MeanFieldOptimizer::clear_prior() {
  for (auto& group : slots_) {
    for (Slot& s : group) {
      s.prior_mean = ::at::Tensor();
      s.prior_precision = ::at::Tensor();
    }
  }
}

bool MeanFieldOptimizer::has_prior() const {
  for (const auto& group : slots_) {
    for (const Slot& s : group) {
      if (s.prior_precision.defined()) return true;
    }
  }
  return false;
}

std::vector<::at::Tensor> MeanFieldOptimizer::prior_means() {
  ensure_slots();
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      const Slot& s = slots_[g][i];
      out.push_back(s.prior_mean.defined() ? s.prior_mean
                                           : ::at::zeros(params[i].sizes(), state_options(params[i])));
    }
  }
  return out;
}

std::vector<::at::Tensor> MeanFieldOptimizer::prior_precisions() {
  ensure_slots();
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    const double delta = curvature_offset(g);
    for (size_t i = 0; i < params.size(); ++i) {
      const Slot& s = slots_[g][i];
      out.push_back(s.prior_precision.defined()
                        ? s.prior_precision
                        : ::at::full(params[i].sizes(), delta, state_options(params[i])));
    }
  }
  return out;
}

std::vector<::at::Tensor> MeanFieldOptimizer::momentum() {
  ensure_slots();
  std::vector<::at::Tensor> out;
  for (const auto& group : slots_) {
    for (const Slot& s : group) out.push_back(s.average);
  }
  return out;
}

::at::Tensor MeanFieldOptimizer::step(LossClosure closure) {
  check(!sampled_, fmt::format("{}: step() was called while the parameters hold a sample; "
                               "restore them first.",
                               name()));
  ::at::Tensor loss;
  if (closure) {
    double total = 0.0;
    const int samples = training_samples();
    for (int k = 0; k < samples; ++k) {
      SampledParameters sampled(*this, true);
      ::at::AutoGradMode grad_mode(true);
      total += closure().item<double>();
    }
    loss = ::at::scalar_tensor(total / samples, ::at::kDouble);
  }
  check(samples_ > 0,
        fmt::format("{}: step() needs at least one training sample since the last step: run "
                    "forward and backward inside SampledParameters(optimizer, true) (or between "
                    "sample_parameters(true) and restore_parameters()).",
                    name()));
  if (statistic() == Statistic::kExternalSquared) {
    check(squared_samples_ == samples_,
          fmt::format("{}: add_squared_gradients() must be called in every training sample; it "
                      "was called in {} of {}.",
                      name(), squared_samples_, samples_));
  }
  validate();
  ++step_;
  ::at::NoGradGuard no_grad;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slot(g, i);
      UpdateInput in{&s.grad_sum, &s.stat_sum, &s.squared_sum, samples_, false};
      if (s.pending_grad.defined()) in = {&s.pending_grad, &s.noise, &s.squared_sum, 1, true};
      const bool ok = update(g, params[i], s, in, fused_ && fused_for(params[i]));
      s.pending_grad = ::at::Tensor();
      if (!ok) {
        throw Error(fmt::format(
            "{} step {} produced a non-finite value in parameter {} of param group {} (learning "
            "rate too large, or NaN/Inf in the gradients?).",
            name(), step_, i, g));
      }
    }
  }
  samples_ = 0;
  squared_samples_ = 0;
  return loss;
}

void MeanFieldOptimizer::save(::torch::serialize::OutputArchive& archive) const {
  check(!sampled_ && samples_ == 0,
        fmt::format("{}: the state can only be saved between steps (no sample pending).", name()));
  archive.write("blr/format_version",
                c10::IValue(has_prior() ? kPriorFormatVersion : kMeanFieldFormatVersion));
  archive.write("blr/optimizer", c10::IValue(name()));
  archive.write("blr/step", c10::IValue(step_));
  archive.write("blr/draws", c10::IValue(static_cast<int64_t>(draws_)));
  archive.write("blr/groups", c10::IValue(static_cast<int64_t>(param_groups_.size())));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    archive.write(fmt::format("group{}/lr", g), c10::IValue(param_groups_[g].options().get_lr()));
    archive.write(fmt::format("group{}/params", g),
                  c10::IValue(static_cast<int64_t>(param_groups_[g].params().size())));
    if (g >= slots_.size()) continue;
    for (size_t i = 0; i < slots_[g].size(); ++i) {
      const Slot& s = slots_[g][i];
      if (!s.precision.defined()) continue;
      archive.write(param_key(g, i, "average"), s.average);
      archive.write(param_key(g, i, "precision"), s.precision);
      if (s.master.defined()) archive.write(param_key(g, i, "master"), s.master);
      if (s.prior_precision.defined()) {
        archive.write(param_key(g, i, "prior_mean"), s.prior_mean);
        archive.write(param_key(g, i, "prior_precision"), s.prior_precision);
      }
    }
  }
}

void MeanFieldOptimizer::load(::torch::serialize::InputArchive& archive) {
  check(!sampled_,
        fmt::format("{}: cannot load a state while the parameters hold a sample.", name()));
  c10::IValue value;
  check(archive.try_read("blr/format_version", value),
        fmt::format("The archive holds no blr optimizer state (no format version); {} cannot "
                    "load it.",
                    name()));
  const int64_t version = value.toInt();
  check(version >= 1 && version <= kPriorFormatVersion,
        fmt::format("The optimizer state has format version {}; this build reads versions 1 to {}.",
                    version, kPriorFormatVersion));
  archive.read("blr/optimizer", value);
  check(value.toStringRef() == name(),
        fmt::format("The archive holds the state of a {} optimizer, not of {}.",
                    value.toStringRef(), name()));
  archive.read("blr/groups", value);
  check(value.toInt() == static_cast<int64_t>(param_groups_.size()),
        fmt::format("The saved {} state has {} param groups; this optimizer has {}.", name(),
                    value.toInt(), param_groups_.size()));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    archive.read(fmt::format("group{}/params", g), value);
    check(value.toInt() == static_cast<int64_t>(param_groups_[g].params().size()),
          fmt::format("The saved {} state has {} parameters in group {}; this optimizer has {}.",
                      name(), value.toInt(), g, param_groups_[g].params().size()));
  }
  // Everything checked that can be without reading tensors; now replace the state.
  std::vector<std::vector<Slot>> slots(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    slots[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      // Version 1 held the optimizer's own curvature (IVON's h, VOGN's s): P = curvature + offset.
      ::at::Tensor average, precision;
      if (!archive.try_read(param_key(g, i, version == 1 ? "momentum" : "average"), average)) continue;
      archive.read(param_key(g, i, version == 1 ? "curvature" : "precision"), precision);
      check(average.sizes() == params[i].sizes() && precision.sizes() == params[i].sizes(),
            fmt::format("The saved {} state of parameter {} in group {} has shape {}; the "
                        "parameter has shape {}.",
                        name(), i, g, shape_string(precision.sizes()),
                        shape_string(params[i].sizes())));
      if (version == 1) precision = precision.to(::at::kDouble).add(curvature_offset(g));
      slots[g][i].average = conform_state(average, params[i]);
      slots[g][i].precision = conform_state(precision, params[i]);
      // The values too: a crafted state with a negative or NaN precision would load and sample
      // NaN (√ of a negative posterior precision), reported much later as a diverged step.
      const Affine prec = posterior(g);
      const Slot& loaded = slots[g][i];
      check(detail::all_finite(loaded.average) && detail::all_finite(loaded.precision) &&
                (loaded.precision.mul(prec.a).add(prec.b) > 0).all().item<bool>(),
            fmt::format("The saved {} state of parameter {} in group {} is corrupt: its gradient "
                        "average and precision must be finite and its posterior precision "
                        "positive.",
                        name(), i, g));
      if (reduced_precision(params[i])) {
        // The float32 mean; a state saved without it (or by a float32 run) starts from p.
        ::at::Tensor master;
        if (archive.try_read(param_key(g, i, "master"), master)) {
          check(master.sizes() == params[i].sizes(),
                fmt::format("The saved {} master weights of parameter {} in group {} have shape "
                            "{}; the parameter has shape {}.",
                            name(), i, g, shape_string(master.sizes()),
                            shape_string(params[i].sizes())));
          slots[g][i].master = conform_state(master, params[i]);
          check(detail::all_finite(slots[g][i].master),
                fmt::format("The saved {} master weights of parameter {} in group {} are not "
                            "finite; the state is corrupt.",
                            name(), i, g));
        } else {
          slots[g][i].master = conform_state(params[i].detach(), params[i]);
        }
      }
      ::at::Tensor prior_mean, prior_precision;
      if (version >= kPriorFormatVersion &&
          archive.try_read(param_key(g, i, "prior_precision"), prior_precision)) {
        check(supports_prior(), fmt::format("The saved {} state holds a prior per coordinate, "
                                            "which {} does not take.",
                                            name(), name()));
        archive.read(param_key(g, i, "prior_mean"), prior_mean);
        check(prior_mean.sizes() == params[i].sizes() &&
                  prior_precision.sizes() == params[i].sizes(),
              fmt::format("The saved {} prior of parameter {} in group {} has shape {}; the "
                          "parameter has shape {}.",
                          name(), i, g, shape_string(prior_precision.sizes()),
                          shape_string(params[i].sizes())));
        slots[g][i].prior_mean = conform_state(prior_mean, params[i]);
        slots[g][i].prior_precision = conform_state(prior_precision, params[i]);
        check(detail::all_finite(slots[g][i].prior_mean) &&
                  detail::all_finite(slots[g][i].prior_precision) &&
                  (slots[g][i].prior_precision >= 0).all().item<bool>(),
              fmt::format("The saved {} prior of parameter {} in group {} is corrupt: its mean "
                          "must be finite and its precision finite and >= 0.",
                          name(), i, g));
      }
    }
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    archive.read(fmt::format("group{}/lr", g), value);
    param_groups_[g].options().set_lr(value.toDouble());
  }
  archive.read("blr/step", value);
  step_ = value.toInt();
  archive.read("blr/draws", value);
  draws_ = static_cast<uint64_t>(value.toInt());
  slots_ = std::move(slots);
  samples_ = 0;
  squared_samples_ = 0;
}

}  // namespace blr::torch
