// The Kronecker-factored BLR optimizer (kfac.hpp): sampling, curvature, the step, saving, and its
// registration.
#include "blr/torch/optim/kfac.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/archive.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/optim/kronecker_gaussian.hpp"
#include "blr/torch/optim/registry.hpp"
#include "all_finite.hpp"
#include "kronecker_layout.hpp"
#include "noise_seed_option.hpp"
#include "state_archive.hpp"

namespace blr::torch {

using detail::all_finite;
using detail::param_key;
using detail::shape_string;

namespace {

constexpr int64_t kKfacFormatVersion = 1;

/// SplitMix64: the seed of draw `draw`'s generator (independent streams per draw, so that the
/// noise depends only on (seed, draw) and a resumed run draws what an uninterrupted one would).
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

const OptionTable<KfacOptions>& KfacOptions::table() {
  using O = KfacOptions;
  static const OptionTable<O> t = with_noise_seed(
      OptionTable<O>("K-FAC")
          .inherit(::blr::VognOptions::table())
          .integer("refresh", &O::refresh, Range::between(1, 1e9),
                   "steps T between eigendecompositions of the Kronecker factors",
                   OptionScope::kOptimizer)
          .integer("curvature_interval", &O::curvature_interval, Range::between(1, 1e9),
                   "steps T_c between curvature updates (the factors A, G and the diagonal P); "
                   "the steps between take a plain backward pass",
                   OptionScope::kOptimizer)
          .flag("damping_split", &O::damping_split,
                "split prior and damping between the factors with π (a matrix-normal posterior); "
                "off: exact A⊗G + (δ/N + γ)I"));
  return t;
}

Kfac::Kfac(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults)
    : VariationalOptimizer(param_groups, std::make_unique<Options>(defaults)) {
  for (size_t g = 0; g < param_groups.size(); ++g) {
    if (param_groups[g].has_options()) {
      param_groups_[g].set_options(param_groups[g].options().clone());
    }
  }
  validate();
  ensure_state();
}

Kfac::Kfac(std::vector<::at::Tensor> params, Options defaults)
    : Kfac(std::vector<::torch::optim::OptimizerParamGroup>{
               ::torch::optim::OptimizerParamGroup(std::move(params))},
           std::move(defaults)) {}

const KfacOptions& Kfac::options(size_t group) const {
  return group_options_as<Options>(param_groups_.at(group), group, name());
}

void Kfac::validate() const {
  validate_groups(param_groups_, options(), name());
  for (const auto& group : param_groups_) {
    for (const auto& p : group.params()) {
      check(p.is_floating_point() && p.dim() >= 1,
            fmt::format("{}: every parameter must be a floating-point tensor with at least one "
                        "dimension.",
                        name()));
    }
  }
}

size_t Kfac::parameter_count() const {
  size_t total = 0;
  for (const auto& group : param_groups_) total += group.params().size();
  return total;
}

Kfac::Slot& Kfac::slot_at(size_t index) {
  return const_cast<Slot&>(static_cast<const Kfac*>(this)->slot_at(index));
}

const Kfac::Slot& Kfac::slot_at(size_t index) const {
  for (const auto& group : slots_) {
    if (index < group.size()) return group[index];
    index -= group.size();
  }
  throw Error(fmt::format("{}: there is no parameter {}; the optimizer has {}.", name(), index,
                          parameter_count()));
}

void Kfac::ensure_state() {
  ::at::NoGradGuard no_grad;
  slots_.resize(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Options& o = options(g);
    const auto& params = param_groups_[g].params();
    slots_[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      Slot& s = slots_[g][i];
      if (s.average.defined()) continue;
      s.average = ::at::zeros(params[i].sizes(), params[i].options());
      s.precision = ::at::full(params[i].sizes(),
                               o.hess_init + o.prior_precision / o.ess + o.damping,
                               params[i].options());
    }
  }
}

bool Kfac::kronecker(size_t index) const { return slot_at(index).kind == Kind::kKronecker; }

KroneckerFactors Kfac::factors(size_t index) const {
  const Slot& s = slot_at(index);
  check(s.kind == Kind::kKronecker,
        fmt::format("{}: parameter {} is not Kronecker-factored.", name(), index));
  return {s.input_factor, s.output_factor};
}

::at::Tensor Kfac::eigen_precision(const Slot& s, const Options& o) const {
  const double gamma = o.prior_precision / o.ess + o.damping;
  if (o.damping_split) {
    const double root = std::sqrt(gamma);
    return s.output_eigen.add(root / s.pi).unsqueeze(1) * s.input_eigen.add(root * s.pi).unsqueeze(0);
  }
  return ::at::outer(s.output_eigen, s.input_eigen).add_(gamma);
}

void Kfac::prepare_split(Slot& s, const Options& o) {
  const double gamma = o.prior_precision / o.ess + o.damping;
  if (s.input_inverse.defined() && s.cached_gamma == gamma) return;
  const double root = std::sqrt(gamma);
  // Q·diag(1/(d + c))^½: R Rᵀ = (factor + c·I)⁻¹.
  s.input_root = s.input_basis * s.input_eigen.add(root * s.pi).rsqrt().unsqueeze(0);
  s.output_root = s.output_basis * s.output_eigen.add(root / s.pi).rsqrt().unsqueeze(0);
  s.input_inverse = s.input_root.mm(s.input_root.t());
  s.output_inverse = s.output_root.mm(s.output_root.t());
  s.cached_gamma = gamma;
}

void Kfac::sample_parameters(bool train) { sample(train, nullptr); }

void Kfac::sample_parameters(bool train, const std::vector<::at::Tensor>& standard_normal) {
  sample(train, &standard_normal);
}

void Kfac::sample(bool train, const std::vector<::at::Tensor>* eps) {
  check(!sampled_, fmt::format("{}: sample_parameters() was called twice without "
                               "restore_parameters() in between.",
                               name()));
  ensure_state();
  ::at::NoGradGuard no_grad;
  const size_t total = parameter_count();
  if (eps != nullptr) {
    check(eps->size() == total, fmt::format("{}: {} noise tensors were given for {} parameters.",
                                            name(), eps->size(), total));
  }
  auto generator = ::at::make_generator<::at::CPUGeneratorImpl>(mix(options().seed ^ mix(draws_)));
  size_t j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Options& o = options(g);
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      ::at::Tensor& p = params[i];
      Slot& s = slots_[g][i];
      ::at::Tensor e;
      if (eps != nullptr) {
        check((*eps)[j].sizes() == p.sizes(),
              fmt::format("{}: noise tensor {} has shape {} but the parameter has shape {}.",
                          name(), j, shape_string((*eps)[j].sizes()), shape_string(p.sizes())));
        e = (*eps)[j].to(p.options());
      } else {
        e = ::at::randn(p.sizes(), generator, p.options().device(::at::kCPU)).to(p.device());
      }
      s.mean = p.detach().clone();
      if (s.kind == Kind::kKronecker && o.damping_split) {
        prepare_split(s, o);
        p.add_(s.output_root.mm(detail::as_matrix(e))
                   .mm(s.input_root.t())
                   .mul_(1.0 / std::sqrt(o.ess))
                   .reshape(p.sizes()));
      } else if (s.kind == Kind::kKronecker) {
        p.add_(kronecker_draw(s.output_basis, s.input_basis, eigen_precision(s, o).mul(o.ess),
                              detail::as_matrix(e))
                   .reshape(p.sizes()));
      } else {
        p.add_(e.div(s.precision.mul(o.ess).sqrt_()));
      }
    }
  }
  ++draws_;
  sampled_ = true;
  train_sample_ = train;
  curvature_given_ = false;
}

void Kfac::restore_parameters() { restore(true); }

void Kfac::discard_sample() { restore(false); }

void Kfac::restore(bool collect) {
  check(sampled_, fmt::format("{}: restore_parameters() was called without a sample.", name()));
  ::at::NoGradGuard no_grad;
  collect = collect && train_sample_;
  const bool first = samples_ == 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      ::at::Tensor& p = params[i];
      Slot& s = slots_[g][i];
      p.copy_(s.mean);
      s.mean = ::at::Tensor();
      if (!collect) continue;
      // A parameter the loss did not reach has gradient zero.
      const ::at::Tensor grad = p.grad().defined() ? p.grad().to(p.options()) : ::at::zeros_like(p);
      s.grad_sum = first ? grad.clone() : s.grad_sum.add_(grad);
    }
  }
  if (collect) ++samples_;
  if (collect && curvature_given_) {  // the sample's curvature counts with its gradient
    const bool first_curvature = curvature_samples_ == 0;
    size_t j = 0;
    for (auto& group : slots_) {
      for (Slot& s : group) {
        const ParameterCurvature& c = pending_curvature_[j++];
        if (c.kronecker()) {
          s.input_sum = first_curvature ? c.factors.input : s.input_sum.add_(c.factors.input);
          s.output_sum = first_curvature ? c.factors.output : s.output_sum.add_(c.factors.output);
        } else {
          s.diagonal_sum = first_curvature ? c.diagonal : s.diagonal_sum.add_(c.diagonal);
        }
      }
    }
    ++curvature_samples_;
  }
  pending_curvature_.clear();
  sampled_ = false;
}

bool Kfac::wants_curvature() const { return step_ % options().curvature_interval == 0; }

void Kfac::add_curvature(const std::vector<ParameterCurvature>& curvature) {
  check(sampled_ && train_sample_,
        fmt::format("{}: add_curvature() belongs inside a training sample, after backward() and "
                    "before restore_parameters().",
                    name()));
  check(!curvature_given_,
        fmt::format("{}: add_curvature() was called twice in one sample.", name()));
  check(curvature.size() == parameter_count(),
        fmt::format("{}: {} curvature statistics were given for {} parameters.", name(),
                    curvature.size(), parameter_count()));
  ::at::NoGradGuard no_grad;
  // Check everything before anything changes.
  size_t j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      const ParameterCurvature& c = curvature[j];
      const ::at::Tensor& p = params[i];
      const Slot& s = slots_[g][i];
      if (c.kronecker()) {
        const int64_t out = p.size(0), in = p.numel() / p.size(0);
        check(c.factors.input.sizes() == ::at::IntArrayRef({in, in}) &&
                  c.factors.output.sizes() == ::at::IntArrayRef({out, out}),
              fmt::format("{}: parameter {} of shape {} got Kronecker factors of shapes {} and {}; "
                          "expected {}×{} and {}×{}.",
                          name(), j, shape_string(p.sizes()),
                          shape_string(c.factors.input.sizes()),
                          shape_string(c.factors.output.sizes()), in, in, out, out));
        check(s.kind != Kind::kDiagonal,
              fmt::format("{}: parameter {} had a diagonal curvature and now gets Kronecker "
                          "factors; its use in the model changed.",
                          name(), j));
      } else {
        check(c.diagonal.defined() && c.diagonal.sizes() == p.sizes(),
              fmt::format("{}: parameter {} of shape {} got no Kronecker factors and a diagonal "
                          "of shape {}.",
                          name(), j, shape_string(p.sizes()),
                          c.diagonal.defined() ? shape_string(c.diagonal.sizes()) : "none"));
        check(s.kind != Kind::kKronecker,
              fmt::format("{}: parameter {} had Kronecker factors and now gets a diagonal "
                          "curvature; its use in the model changed.",
                          name(), j));
      }
    }
  }
  // Kept until the sample is restored (a discarded sample's curvature does not count); copies,
  // since the sums are then accumulated in place.
  pending_curvature_.assign(curvature.size(), {});
  j = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i, ++j) {
      const ParameterCurvature& c = curvature[j];
      const auto options = params[i].options();
      ParameterCurvature& mine = pending_curvature_[j];
      if (c.kronecker()) {
        mine.factors.input = c.factors.input.detach().to(options).clone();
        mine.factors.output = c.factors.output.detach().to(options).clone();
      } else {
        mine.diagonal = c.diagonal.detach().to(options).clone();
      }
    }
  }
  curvature_given_ = true;
}

::at::Tensor Kfac::step(LossClosure closure) {
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
                    "forward and backward inside SampledParameters(optimizer, true).",
                    name()));
  // Between curvature updates a step takes none (its samples may still bring some: it is used).
  const bool curvature = curvature_samples_ > 0;
  check(curvature_samples_ == samples_ || (!curvature && !wants_curvature()),
        fmt::format("{}: add_curvature() must be called in every training sample of this step "
                    "(with backward_with_kronecker_factors); it was called in {} of {}.",
                    name(), curvature_samples_, samples_));
  validate();
  const int64_t t = step_ + 1;
  const double inv = 1.0 / static_cast<double>(samples_);
  ::at::NoGradGuard no_grad;
  // Compute every new state first, so that a non-finite mean leaves the optimizer unchanged.
  std::vector<std::vector<std::pair<Slot, ::at::Tensor>>> updated(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Options& o = options(g);
    const double w = o.curvature_rate, delta = o.prior_precision / o.ess;
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      const ::at::Tensor& p = params[i];
      Slot s = slots_[g][i];  // tensors shared; replaced, never written in place
      const ::at::Tensor mu = p.detach();
      s.average = s.average.mul(o.beta1).add_(s.grad_sum.mul(inv)).add_(mu, delta);
      ::at::Tensor direction;
      if (s.input_sum.defined() || (!curvature && s.kind == Kind::kKronecker)) {
        if (curvature && s.kind != Kind::kKronecker) {  // first curvature: A₀ = G₀ = √s₀·I
          const double root = std::sqrt(o.hess_init);
          s.input_factor = ::at::eye(s.input_sum.size(0), p.options()).mul_(root);
          s.output_factor = ::at::eye(s.output_sum.size(0), p.options()).mul_(root);
          s.kind = Kind::kKronecker;
          s.precision = ::at::Tensor();
        }
        if (curvature) {
          s.input_factor = s.input_factor.mul(1.0 - w).add_(s.input_sum, w * inv);
          s.output_factor = s.output_factor.mul(1.0 - w).add_(s.output_sum, w * inv);
        }
        if (!s.input_basis.defined() || (t - 1) % o.refresh == 0) {
          const KroneckerEigen eigen = kronecker_eigen({s.input_factor, s.output_factor});
          s.input_eigen = eigen.input_eigen;
          s.input_basis = eigen.input_basis;
          s.output_eigen = eigen.output_eigen;
          s.output_basis = eigen.output_basis;
          const double ta = s.input_eigen.mean().item<double>();
          const double tg = s.output_eigen.mean().item<double>();
          const double pi = std::sqrt(ta / tg);
          s.pi = std::isfinite(pi) && pi > 0.0 ? pi : 1.0;
          s.input_inverse = ::at::Tensor();  // the split inverses follow the new decomposition
        }
        const ::at::Tensor u = detail::as_matrix(s.average);
        if (o.damping_split) {
          prepare_split(s, o);
          direction = s.output_inverse.mm(u).mm(s.input_inverse).reshape(p.sizes());
        } else {
          const ::at::Tensor rotated =
              s.output_basis.t().mm(u).mm(s.input_basis).div_(eigen_precision(s, o));
          direction = s.output_basis.mm(rotated).mm(s.input_basis.t()).reshape(p.sizes());
        }
      } else {
        if (curvature) {
          s.kind = Kind::kDiagonal;
          s.precision =
              s.precision.mul(1.0 - w).add_(s.diagonal_sum.mul(inv).add_(delta + o.damping), w);
        }
        direction = s.average.div(s.precision);
      }
      ::at::Tensor mean = mu.sub(direction, o.lr);
      if (!all_finite(mean)) {
        samples_ = curvature_samples_ = 0;
        throw Error(fmt::format(
            "{} step {} produced a non-finite value in parameter {} of param group {} (learning "
            "rate too large, or NaN/Inf in the gradients?).",
            name(), t, i, g));
      }
      s.grad_sum = s.input_sum = s.output_sum = s.diagonal_sum = ::at::Tensor();
      updated[g].emplace_back(std::move(s), std::move(mean));
    }
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      slots_[g][i] = std::move(updated[g][i].first);
      params[i].copy_(updated[g][i].second);
    }
  }
  step_ = t;
  samples_ = curvature_samples_ = 0;
  return loss;
}

std::vector<::at::Tensor> Kfac::posterior_variance() {
  ensure_state();
  ::at::NoGradGuard no_grad;
  std::vector<::at::Tensor> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Options& o = options(g);
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      const Slot& s = slots_[g][i];
      if (s.kind == Kind::kKronecker) {
        // Var(W_ij) = Σ_kl Q_G[i,k]² Q_A[j,l]² / (N·D_kl)
        out.push_back(kronecker_marginal_variance(s.output_basis, s.input_basis,
                                                  eigen_precision(s, o).mul(o.ess))
                          .reshape(params[i].sizes()));
      } else {
        out.push_back(s.precision.mul(o.ess).reciprocal_());
      }
    }
  }
  return out;
}

std::vector<CovarianceBlock> Kfac::covariance_blocks() {
  check(!sampled_, fmt::format("{}: the linearised predictive is taken at the posterior mean, but "
                               "the parameters hold a sample.",
                               name()));
  ensure_state();
  ::at::NoGradGuard no_grad;
  std::vector<CovarianceBlock> out;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const Options& o = options(g);
    const auto& params = param_groups_[g].params();
    for (size_t i = 0; i < params.size(); ++i) {
      const Slot& s = slots_[g][i];
      if (s.kind == Kind::kKronecker) {
        out.push_back({eigen_precision(s, o).mul(o.ess).reciprocal_().reshape(params[i].sizes()),
                       s.output_basis, s.input_basis});
      } else {
        out.push_back({s.precision.mul(o.ess).reciprocal_(), {}, {}});
      }
    }
  }
  return out;
}

::at::Tensor Kfac::posterior_covariance(size_t index) const {
  const Slot& s = slot_at(index);
  size_t group = 0, k = index;
  while (k >= slots_[group].size()) k -= slots_[group++].size();
  const Options& o = options(group);
  ::at::NoGradGuard no_grad;
  if (s.kind != Kind::kKronecker) return ::at::diag(s.precision.mul(o.ess).reciprocal().flatten());
  return kronecker_covariance(s.output_basis, s.input_basis, eigen_precision(s, o).mul(o.ess));
}

void Kfac::save(::torch::serialize::OutputArchive& archive) const {
  check(!sampled_ && samples_ == 0,
        fmt::format("{}: the state can only be saved between steps (no sample pending).", name()));
  detail::write_state_header(archive, name(), kKfacFormatVersion, step_, param_groups_);
  archive.write("blr/draws", c10::IValue(static_cast<int64_t>(draws_)));
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    for (size_t i = 0; g < slots_.size() && i < slots_[g].size(); ++i) {
      const Slot& s = slots_[g][i];
      archive.write(param_key(g, i, "kind"), c10::IValue(static_cast<int64_t>(s.kind)));
      archive.write(param_key(g, i, "average"), s.average);
      if (s.kind != Kind::kKronecker) {
        archive.write(param_key(g, i, "precision"), s.precision);
        continue;
      }
      archive.write(param_key(g, i, "input_factor"), s.input_factor);
      archive.write(param_key(g, i, "output_factor"), s.output_factor);
      archive.write(param_key(g, i, "input_basis"), s.input_basis);
      archive.write(param_key(g, i, "input_eigen"), s.input_eigen);
      archive.write(param_key(g, i, "output_basis"), s.output_basis);
      archive.write(param_key(g, i, "output_eigen"), s.output_eigen);
      archive.write(param_key(g, i, "pi"), c10::IValue(s.pi));
    }
  }
}

void Kfac::load(::torch::serialize::InputArchive& archive) {
  check(!sampled_, fmt::format("{}: cannot load a state while the parameters hold a sample.", name()));
  detail::check_state_header(archive, name(), kKfacFormatVersion, param_groups_);
  c10::IValue value;
  std::vector<std::vector<Slot>> slots(param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = param_groups_[g].params();
    slots[g].resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      Slot& s = slots[g][i];
      archive.read(param_key(g, i, "kind"), value);
      check(value.isInt() && value.toInt() >= 0 && value.toInt() <= 2,
            fmt::format("The saved {} state of parameter {} in group {} has an unknown kind.",
                        name(), i, g));
      s.kind = static_cast<Kind>(value.toInt());
      archive.read(param_key(g, i, "average"), s.average);
      check(s.average.sizes() == p.sizes(),
            fmt::format("The saved {} state of parameter {} in group {} has shape {}; the "
                        "parameter has shape {}.",
                        name(), i, g, shape_string(s.average.sizes()), shape_string(p.sizes())));
      s.average = s.average.to(p.options()).contiguous();
      if (s.kind != Kind::kKronecker) {
        archive.read(param_key(g, i, "precision"), s.precision);
        check(s.precision.sizes() == p.sizes(),
              fmt::format("The saved {} precision of parameter {} in group {} has the wrong shape.",
                          name(), i, g));
        s.precision = s.precision.to(p.options()).contiguous();
        continue;
      }
      const int64_t out = p.size(0), in = p.numel() / p.size(0);
      const auto read_matrix = [&](const char* key, int64_t rows, int64_t cols) {
        ::at::Tensor t;
        archive.read(param_key(g, i, key), t);
        const bool vector = cols == 0;
        check(vector ? t.sizes() == ::at::IntArrayRef({rows})
                     : t.sizes() == ::at::IntArrayRef({rows, cols}),
              fmt::format("The saved {} {} of parameter {} in group {} has shape {}.", name(), key,
                          i, g, shape_string(t.sizes())));
        return t.to(p.options()).contiguous();
      };
      s.input_factor = read_matrix("input_factor", in, in);
      s.output_factor = read_matrix("output_factor", out, out);
      s.input_basis = read_matrix("input_basis", in, in);
      s.input_eigen = read_matrix("input_eigen", in, 0);
      s.output_basis = read_matrix("output_basis", out, out);
      s.output_eigen = read_matrix("output_eigen", out, 0);
      archive.read(param_key(g, i, "pi"), value);
      s.pi = value.toDouble();
    }
  }
  step_ = detail::read_state_step(archive, param_groups_);
  archive.read("blr/draws", value);
  draws_ = static_cast<uint64_t>(value.toInt());
  slots_ = std::move(slots);
  samples_ = curvature_samples_ = 0;
}

BLR_REGISTER_OPTIMIZER(Kfac, "kfac",
                       "Noisy K-FAC (Zhang et al. 2018) in VOGN's form: a matrix-normal posterior "
                       "per Linear/Conv2d weight with Kronecker-factored Gauss-Newton curvature",
                       kKroneckerGaussian);

}  // namespace blr::torch
