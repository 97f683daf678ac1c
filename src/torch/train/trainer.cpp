#include "blr/torch/train/trainer.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "blr/core/error.hpp"
#include "blr/torch/data/batches.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "blr/torch/train/likelihood.hpp"

namespace blr::torch {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// FNV-1a, 64 bits (Fowler, Noll, Vo): a fingerprint for equality checks, not a cryptographic hash.
struct Fnv1a {
  uint64_t state = 14695981039346656037ull;
  void add(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) state = (state ^ p[i]) * 1099511628211ull;
  }
};

std::string parameter_digest(const std::vector<std::pair<std::string, at::Tensor>>& named) {
  Fnv1a h;
  for (const auto& [name, tensor] : named) {
    const auto t = tensor.detach().to(at::kCPU).contiguous();
    h.add(name.data(), name.size());
    const auto dtype = static_cast<int>(t.scalar_type());
    h.add(&dtype, sizeof dtype);
    for (const auto size : t.sizes()) h.add(&size, sizeof size);
    h.add(t.data_ptr(), t.numel() * t.element_size());
  }
  return fmt::format("{:016x}", h.state);
}

}  // namespace

std::string Trainer::parameter_digest() const {
  return ::blr::torch::parameter_digest(model_.named_parameters());
}

nlohmann::json epoch_to_json(const EpochRecord& r) {
  nlohmann::json j = {{"epoch", r.epoch},
                      {"seconds", r.seconds},
                      {"train_loss", r.train_loss},
                      {"learning_rate", r.learning_rate},
                      {"test_nll", r.test_nll}};
  if (std::isfinite(r.test_accuracy)) j["test_accuracy"] = r.test_accuracy;
  if (std::isfinite(r.test_rmse)) j["test_rmse"] = r.test_rmse;
  if (std::isfinite(r.validation_nll)) j["validation_nll"] = r.validation_nll;
  if (std::isfinite(r.validation_accuracy)) j["validation_accuracy"] = r.validation_accuracy;
  if (std::isfinite(r.validation_rmse)) j["validation_rmse"] = r.validation_rmse;
  if (std::isfinite(r.noise_std)) j["noise_std"] = r.noise_std;
  if (std::isfinite(r.clipped_share)) j["clipped_share"] = r.clipped_share;
  if (r.posterior) j["posterior"] = r.posterior->to_json();
  if (!r.warning.empty()) j["warning"] = r.warning;
  return j;
}

EpochRecord epoch_from_json(const nlohmann::json& j) {
  EpochRecord r;
  r.epoch = j.at("epoch").get<int64_t>();
  r.seconds = j.at("seconds").get<double>();
  r.train_loss = j.at("train_loss").get<double>();
  r.learning_rate = j.at("learning_rate").get<double>();
  r.test_nll = j.at("test_nll").get<double>();
  const auto optional = [&j](const char* key) {
    return j.contains(key) ? j.at(key).get<double>() : std::numeric_limits<double>::quiet_NaN();
  };
  r.test_accuracy = optional("test_accuracy");
  r.test_rmse = optional("test_rmse");
  r.validation_accuracy = optional("validation_accuracy");
  r.validation_nll = optional("validation_nll");
  r.validation_rmse = optional("validation_rmse");
  r.noise_std = optional("noise_std");
  r.clipped_share = optional("clipped_share");
  if (j.contains("posterior")) r.posterior = PosteriorDiagnostics::from_json(j.at("posterior"));
  r.warning = j.value("warning", std::string());
  return r;
}

namespace {

// The configuration fields that shape training (not where the data lives or how it is evaluated).
// The epoch count is left out: a run may be resumed with more epochs than it was started with.
nlohmann::json training_relevant(nlohmann::json config) {
  config.erase("epochs");
  config.erase("data_dir");
  config.erase("test_samples");
  config.erase("ece_bins");
  config.erase("test_limit");
  config.erase("test_data");
  config.erase("temperature_scaling");
  return config;
}

}  // namespace

namespace {

// The built-in models' input geometry from the training inputs: images (N, C, H, W) keep their
// channels and side; any other shape (N, ...) is a flat vector of prod(...) features (image side 1).
void fit_model_to_data(ModelSpec& spec, const Dataset& data) {
  const auto& x = data.train.x;
  if (x.dim() == 4 && x.size(2) == x.size(3)) {
    spec.input_channels = x.size(1);
    spec.image_size = x.size(2);
  } else {
    spec.input_channels = x.dim() > 1 ? x[0].numel() : 1;
    spec.image_size = 1;
  }
  spec.classes = data.outputs;
}

}  // namespace

namespace {

/// The number of terms of the training log-likelihood, the default of `ess`: one per example,
/// or for a classification data set with one label per position (a language model's (N, T)
/// next tokens, whose loss is the mean over every label) one per label.
int64_t likelihood_terms(const Dataset& data) {
  return data.task == Task::kClassification ? data.train.y.numel() : data.train.size();
}

}  // namespace

Trainer::Trainer(TrainConfig config, std::shared_ptr<const Dataset> data, at::Device device)
    : config_(std::move(config)), data_(std::move(data)), device_(device) {
  config_.validate();
  check(data_ != nullptr && data_->train.size() > 0, "The training set is empty.");
  ::torch::manual_seed(config_.seed);
  if (!config_.model_file.empty()) {  // a TorchScript module (--model-file), read once
    if (!config_.model_archive) config_.model_archive = read_model_file(config_.model_file);
    model_ = load_script_model(config_.model_archive, config_.model_file);
    model_.to(device_);
  } else {
    fit_model_to_data(config_.model, *data_);
    classifier_ = make_classifier(config_.model);
    classifier_->to(device_);
    model_ = Model(classifier_);
  }
  const Precision precision = parse_precision(config_.precision);
  model_.set_precision(precision);
  named_parameters_ = model_.named_parameters();
  // ess defaults to the number of likelihood terms, the noise seed to the run's seed.
  const OptimizerContext context{likelihood_terms(*data_), config_.seed, config_.batch_size};
  optimizer_ =
      make_optimizer(config_.optimizer, model_.parameters(), config_.optimizer_options, context);
  check(parameter_dtype(precision) == at::kFloat ||
            capability<DiagonalGaussianPosterior>(*optimizer_) != nullptr,
        fmt::format("--precision {} stores the parameters in {}, and only the mean-field BLR "
                    "optimizers ({}) keep float32 master weights; {} would keep its state in {} "
                    "too: use --precision autocast-bfloat16.",
                    config_.precision, config_.precision,
                    fmt::join(optimizer_names_with(&OptimizerEntry::diagonal_gaussian_posterior),
                              ", "),
                    config_.optimizer, config_.precision));
  base_lr_ = learning_rate(*optimizer_);
  train_x_ = data_->train.x.to(device_);
  train_y_ = data_->train.y.to(device_);
  result_.config = config_;
  result_.model_description = classifier_ ? classifier_->describe() : describe_script_model(model_);
  result_.options = effective_options(config_.optimizer, config_.optimizer_options, context);
  result_.train_size = data_->train.size();
  if (data_->task == Task::kRegression) noise_std_ = config_.noise_std > 0 ? config_.noise_std : 1.0;
  check_model_output();
}

Trainer::~Trainer() = default;

void Trainer::check_model_output() const {
  // Two examples through the model (evaluation mode, no gradients, no random numbers drawn).
  const auto x = train_x_.slice(0, 0, std::min<int64_t>(2, train_x_.size(0)));
  const auto y = train_y_.slice(0, 0, x.size(0));
  const std::string name = model_.is_script() ? fmt::format("The model in '{}'", config_.model_file)
                                              : std::string("The model");
  const at::Tensor out = probe_model_output(model_, x, name);
  std::vector<int64_t> expected(y.sizes().begin(), y.sizes().end());
  if (data_->task == Task::kClassification) expected.push_back(data_->outputs);
  const bool ok = data_->task == Task::kClassification
                      ? out.sizes() == at::IntArrayRef(expected)
                      : out.sizes() == y.sizes() ||
                            (out.dim() == y.dim() + 1 && out.size(-1) == 1 &&
                             out.sizes().slice(0, y.dim()) == y.sizes());
  check(ok, "{} returns shape [{}] for inputs [{}]; expected [{}] ({}).", name,
        fmt::join(out.sizes(), ", "), fmt::join(x.sizes(), ", "), fmt::join(expected, ", "),
        data_->task == Task::kClassification ? "the labels' shape and the classes"
                                             : "the targets' shape");
}

at::Tensor Trainer::loss_of(const at::Tensor& outputs, const at::Tensor& y) const {
  return data_->task == Task::kClassification ? classification_loss(outputs, y)
                                              : gaussian_loss(outputs, y, noise_std_);
}

void Trainer::refit_noise() {
  const Split& s = data_->validation.size() > 0 ? data_->validation : data_->train;
  const auto f = match_targets(predict_outputs(model_, s.x.to(device_)), s.y).to(at::kDouble);
  const double mse = (s.y.to(f.device()).to(at::kDouble) - f).pow(2).mean().item<double>();
  noise_std_ = std::max(std::sqrt(mse), kMinNoiseStd);
}

void Trainer::set_noise_std(double noise_std) {
  check(data_->task == Task::kRegression, "Only a regression run has an observation noise σ.");
  check(noise_std > 0 && std::isfinite(noise_std),
        "The observation noise must be a positive finite number; got {}.", noise_std);
  noise_std_ = noise_std;
}

std::pair<at::Tensor, at::Tensor> Trainer::target_scale() const {
  const auto& st = data_->statistics;
  const auto d = data_->outputs;
  return {st.contains("target_mean")
              ? at::tensor(st.at("target_mean").get<std::vector<double>>(), at::kDouble)
              : at::zeros({d}, at::kDouble),
          st.contains("target_std")
              ? at::tensor(st.at("target_std").get<std::vector<double>>(), at::kDouble)
              : at::ones({d}, at::kDouble)};
}

RegressionMetrics Trainer::regression_score(const std::pair<at::Tensor, at::Tensor>& linearised,
                                            const at::Tensor& y) const {
  const auto d = data_->outputs;
  const auto [mean, sd] = target_scale();
  const int64_t n = y.size(0);
  const auto targets = y.detach().to(at::kCPU, at::kDouble).reshape({n, d}) * sd + mean;
  const auto f = linearised.first.detach().to(at::kCPU, at::kDouble).reshape({n, d});
  const auto v = linearised.second.detach().to(at::kCPU, at::kDouble).reshape({n, d});
  return gaussian_regression_metrics(f * sd + mean, (v + noise_std_ * noise_std_).sqrt() * sd,
                                     targets);
}

RegressionMetrics Trainer::regression_score(const at::Tensor& means, const at::Tensor& y,
                                            bool sampled) const {
  const auto d = data_->outputs;
  const auto [mean, sd] = target_scale();
  const int64_t n = y.size(0);
  const auto targets = y.detach().to(at::kCPU, at::kDouble).reshape({n, d}) * sd + mean;
  auto m = means.detach().to(at::kCPU, at::kDouble);
  m = (sampled ? m.reshape({m.size(0), n, d}) : m.reshape({n, d})) * sd + mean;
  std::vector<double> sigma;
  for (int64_t k = 0; k < d; ++k) sigma.push_back(noise_std_ * sd[k].item<double>());
  return regression_metrics(m, targets, sigma, sampled);
}

void Trainer::start_from(const Checkpoint& checkpoint) {
  check(epoch_ == 0, "A run that has trained cannot start from another checkpoint.");
  const auto theirs = checkpoint.meta.value("model_description", std::string());
  if (classifier_) {
    check(theirs == result_.model_description,
          "The checkpoint '{}' given by --init holds the model '{}', but this run builds '{}'; "
          "give the same --model and --hidden.",
          checkpoint.path, theirs, result_.model_description);
  } else {
    // A TorchScript model's description names its file, which may have moved: restoring compares
    // the parameters and buffers themselves, by name and shape, both ways (Model::load).
    check(theirs.rfind("torchscript ", 0) == 0,
          "The checkpoint '{}' given by --init holds the built-in model '{}', but this run trains "
          "the TorchScript model '{}'.",
          checkpoint.path, theirs, config_.model_file);
  }
  checkpoint.restore_parameters(model_);
  replace_optimizer(config_.optimizer, config_.optimizer_options);  // over the new parameters
}

OptimizerContext Trainer::optimizer_context() const {
  return {likelihood_terms(*data_), config_.seed, config_.batch_size};
}

void Trainer::replace_optimizer(const std::string& optimizer, const OptionValues& options,
                                const std::string& origin) {
  replace_optimizer(optimizer, options, nullptr, origin);
}

void Trainer::replace_optimizer(const std::string& optimizer, const OptionValues& options,
                                std::unique_ptr<::torch::optim::Optimizer> made,
                                const std::string& origin) {
  TrainConfig config = config_;
  config.optimizer = optimizer;
  config.optimizer_options = options;
  config.origin = origin;
  config.validate();
  const OptimizerContext context = optimizer_context();
  optimizer_ = made ? std::move(made)
                    : make_optimizer(config.optimizer, model_.parameters(),
                                     config.optimizer_options, context);
  config_ = std::move(config);
  base_lr_ = learning_rate(*optimizer_);
  result_.config = config_;
  result_.options = effective_options(config_.optimizer, config_.optimizer_options, context);
}

void Trainer::check_per_example_support() {
  auto* v = as_variational(*optimizer_);
  const bool factors = dynamic_cast<KroneckerCurvatureInput*>(optimizer_.get()) != nullptr;
  if (v == nullptr || !(factors || v->needs_squared_gradients())) return;
  const auto x = train_x_.slice(0, 0, std::min<int64_t>(2, train_x_.size(0)));
  const auto y = train_y_.slice(0, 0, x.size(0));
  optimizer_->zero_grad();  // the graph at the mean: the engine's refusals depend on layers only
  const auto loss = loss_of(model_.forward(x), y);
  if (factors) {
    backward_with_kronecker_factors(loss, named_parameters_, x.size(0));
  } else {
    backward_with_squared_gradients(loss, named_parameters_, x.size(0));
  }
  optimizer_->zero_grad();
}

void Trainer::clip_gradients() {
  if (config_.grad_clip <= 0.0) return;
  ++gradients_;
  std::vector<at::Tensor> gradients;
  for (const auto& p : model_.parameters()) {
    if (p.grad().defined()) gradients.push_back(p.grad());
  }
  if (gradients.empty()) return;
  // ‖g‖₂ over every parameter's gradient, then g ← g·min(1, c/(‖g‖₂ + 1e-6)), as
  // torch.nn.utils.clip_grad_norm_ does (its 1e-6 keeps a zero gradient zero).
  std::vector<at::Tensor> norms;
  norms.reserve(gradients.size());
  for (const auto& g : gradients) norms.push_back(g.detach().to(at::kDouble).norm());
  const double total = at::stack(norms).norm().item<double>();
  check(std::isfinite(total),
        fmt::format("The gradient norm is {} at step {}: the loss or the model produced a "
                    "non-finite gradient.",
                    total, global_step_ + 1));
  const double scale = config_.grad_clip / (total + 1e-6);
  if (scale < 1.0) {
    ::at::NoGradGuard no_grad;
    for (auto& g : gradients) g.mul_(scale);
    ++clipped_steps_;
  }
}

double Trainer::train_step(const at::Tensor& x, const at::Tensor& y) {
  auto& opt = *optimizer_;
  // Gradient accumulation: part j of the minibatch (M_j of M rows) contributes its mean loss
  // times c_j = M_j/M, so the gradients of the parts add up to the minibatch's. One part: c = 1
  // and nothing is scaled (bitwise the plain step).
  const int64_t m = x.size(0);
  const int64_t parts = std::min(config_.micro_batches, m);
  auto for_each_part = [&](const auto& f) {  // f(x_j, y_j, c_j) → loss of the part, scaled
    double loss = 0.0;
    for (int64_t j = 0; j < parts; ++j) {
      const int64_t begin = j * m / parts, end = (j + 1) * m / parts;
      if (parts == 1) {
        loss += f(x, y, 1.0);
      } else {
        loss += f(x.slice(0, begin, end), y.slice(0, begin, end),
                  static_cast<double>(end - begin) / static_cast<double>(m));
      }
    }
    return loss;
  };
  if (auto* v = as_variational(opt)) {
    const bool squared = v->needs_squared_gradients();
    auto* factors = dynamic_cast<KroneckerCurvatureInput*>(&opt);
    check(factors == nullptr || parts == 1,
          fmt::format("{} takes its Kronecker factors from whole minibatches; --micro-batches "
                      "must be 1 with it.",
                      config_.optimizer));
    const int samples = training_samples(opt);
    double loss_sum = 0.0;
    for (int s = 0; s < samples; ++s) {
      SampledParameters sampled(*v, /*train=*/true);
      opt.zero_grad();
      loss_sum += for_each_part([&](const at::Tensor& xj, const at::Tensor& yj, double c) {
        auto loss = loss_of(model_.forward(xj), yj);
        const double value = loss.item<double>() * c;
        if (c != 1.0) loss = loss * c;
        if (factors != nullptr && factors->wants_curvature()) {
          // K-FAC: Kronecker factors of Linear/Conv2d weights, else the diagonal (a plain
          // backward on the steps between its curvature updates)
          factors->add_curvature(
              backward_with_kronecker_factors(loss, named_parameters_, xj.size(0)));
        } else if (squared) {  // VOGN/OGN: exact per-example squared gradients of any model
          // The engine reads the scaled loss as the mean of c·ℓ_i and returns
          // c²·(1/M_j)Σ(∇ℓ_i)²; the minibatch's (1/M)Σ(∇ℓ_i)² is the sum over parts of that / c.
          auto sq = backward_with_squared_gradients(loss, named_parameters_, xj.size(0));
          if (c != 1.0) {
            for (auto& t : sq) {
              if (t.defined()) t = t / c;
            }
          }
          v->add_squared_gradients(sq);
        } else {
          loss.backward();
        }
        return value;
      });
      clip_gradients();  // this sample's gradient, before restore hands it to the optimizer
    }
    if (parallel_) parallel_->reduce(opt, share_);
    opt.step();
    return loss_sum / samples;
  }
  opt.zero_grad();
  const double loss = for_each_part([&](const at::Tensor& xj, const at::Tensor& yj, double c) {
    auto part = loss_of(model_.forward(xj), yj);
    const double value = part.item<double>() * c;
    if (c != 1.0) part = part * c;
    part.backward();
    return value;
  });
  clip_gradients();
  if (parallel_) parallel_->reduce(opt, share_);
  opt.step();
  return loss;
}

void Trainer::train(const TrainHooks& hooks) {
  config_.validate_for_training();
  check(hooks.checkpoint_every == 0 || !hooks.checkpoint_dir.empty(),
        "Periodic checkpoints need an output directory (--out DIR).");
  check(hooks.divergence_factor > 1 && std::isfinite(hooks.divergence_factor),
        fmt::format("Option 'divergence-factor' must be a finite number above 1; got {}.",
                    hooks.divergence_factor));
  const int64_t n = train_x_.size(0);
  const int64_t bs = std::min(config_.batch_size, n);
  const int64_t steps = batch_count(n, bs);
  const Schedule schedule = config_.learning_rate_schedule(base_lr_, steps);
  schedule.validate("learning rate schedule");
  if (parallel_) parallel_->check_batches(n, bs);
  const bool root = !parallel_ || parallel_->is_root();  // evaluates and writes checkpoints
  const auto test_x = data_->test.x.to(device_);
  const auto validation_x =
      data_->validation.size() > 0 ? data_->validation.x.to(device_) : at::Tensor();
  for (const auto& record : result_.history) {  // a resumed run flags what it flagged before
    check_divergence(record, hooks.divergence_factor);
  }
  while (epoch_ < config_.epochs) {
    model_.train();
    const auto order = epoch_permutation(n, config_.seed, epoch_);
    const auto perm = at::tensor(order, at::kLong).to(device_);
    const auto t0 = Clock::now();
    double loss_sum = 0.0;
    double lr = base_lr_;
    for (int64_t b = 0; b < steps; ++b) {
      auto index = perm.slice(0, b * bs, std::min(n, (b + 1) * bs));
      if (parallel_) {  // this rank's share of the global minibatch
        share_ = parallel_->share(index.size(0));
        index = index.slice(0, share_.begin, share_.end);
      }
      const auto x = train_x_.index_select(0, index);
      const auto y = train_y_.index_select(0, index);
      lr = schedule.at(static_cast<long>(global_step_));
      set_learning_rate(*optimizer_, lr);
      const double loss = train_step(x, y);
      if (!std::isfinite(loss)) {
        throw Error(fmt::format(
            "Training diverged: the loss of {} at epoch {}, step {} is {}; try a smaller "
            "learning rate (--{}-lr).",
            config_.optimizer, epoch_ + 1, b + 1, loss, config_.optimizer));
      }
      if (global_step_ == 0) {
        result_.initial_loss = parallel_ ? parallel_->sum(loss, share_.weight) : loss;
      }
      loss_sum += parallel_ ? share_.weight * loss : loss;
      ++global_step_;
      if (hooks.on_step) hooks.on_step(epoch_ + 1, b + 1, steps, loss);
    }
    EpochRecord record;
    record.seconds = seconds_since(t0);
    step_seconds_ += record.seconds;
    ++epoch_;
    record.epoch = epoch_;
    if (parallel_) loss_sum = parallel_->sum(loss_sum, 1.0);  // Σ over steps of Σ_r w_r ℓ_r
    record.train_loss = loss_sum / static_cast<double>(steps);
    record.learning_rate = lr;
    if (data_->task == Task::kRegression) {
      // Every rank refits σ (their parameters are equal, so is σ): the training loss uses it.
      if (!(config_.noise_std > 0)) refit_noise();
      record.noise_std = noise_std_;
    }
    if (root && data_->task == Task::kRegression) {
      const auto t = regression_score(predict_outputs(model_, test_x), data_->test.y, false);
      record.test_accuracy = std::numeric_limits<double>::quiet_NaN();
      record.test_nll = t.nll;
      record.test_rmse = t.rmse;
      if (validation_x.defined()) {
        const auto v =
            regression_score(predict_outputs(model_, validation_x), data_->validation.y, false);
        record.validation_nll = v.nll;
        record.validation_rmse = v.rmse;
      }
    } else if (root) {
      const auto lp = predict_log_probs(model_, test_x);
      const auto m = classification_metrics(lp, data_->test.y, config_.ece_bins);
      record.test_accuracy = m.accuracy;
      record.test_nll = m.nll;
      if (validation_x.defined()) {
        const auto lpv = predict_log_probs(model_, validation_x);
        const auto mv = classification_metrics(lpv, data_->validation.y, config_.ece_bins);
        record.validation_accuracy = mv.accuracy;
        record.validation_nll = mv.nll;
      }
    }
    if (config_.grad_clip > 0.0 && gradients_ > 0) {
      record.clipped_share = static_cast<double>(clipped_steps_) / static_cast<double>(gradients_);
    }
    clipped_steps_ = gradients_ = 0;
    if (root) diagnose_posterior(record);
    result_.history.push_back(record);
    check_divergence(record, hooks.divergence_factor);
    result_.steps = global_step_;
    result_.step_ms = 1000.0 * step_seconds_ / static_cast<double>(global_step_);
    if (hooks.on_epoch) hooks.on_epoch(record);
    if (hooks.checkpoint_every > 0 && epoch_ % hooks.checkpoint_every == 0) {
      if (root) {
        save((std::filesystem::path(hooks.checkpoint_dir) /
              fmt::format("{}-epoch-{}.ckpt", config_.optimizer, epoch_))
                 .string());
      }
      if (parallel_) parallel_->communicator().barrier();  // the others wait for the file
    }
    if (hooks.stop_after_epoch > 0 && epoch_ >= hooks.stop_after_epoch) break;
  }
}

void Trainer::diagnose_posterior(EpochRecord& record) {
  record.posterior = posterior_diagnostics(*optimizer_, config_.optimizer);
  if (!record.posterior) return;
  for (const auto& earlier : result_.history) {
    if (!earlier.warning.empty()) return;  // once per run (a resumed run keeps its history)
  }
  record.warning = posterior_warning(
      *record.posterior, static_cast<double>(epoch_) / static_cast<double>(config_.epochs),
      config_.optimizer);
}

void Trainer::set_data_parallel(std::shared_ptr<distributed::DataParallel> parallel) {
  if (parallel) parallel->attach(*optimizer_);
  parallel_ = std::move(parallel);
}

void Trainer::check_divergence(const EpochRecord& record, double factor) {
  if (result_.diverged || !(result_.initial_loss > 0)) return;
  // The reference is the first step's loss, but never below ln C for C classes, the loss of the
  // uniform prediction: a first minibatch of a few examples can start far below it by chance (one
  // training example at loss 0.06 made a sound test NLL of 1.09 "diverge").
  const bool classification = data_->task == Task::kClassification;  // NLL in the loss's units
  const double floor = classification && data_->outputs > 1
                           ? std::log(static_cast<double>(data_->outputs))
                           : 0.0;
  const double reference = std::max(result_.initial_loss, floor);
  const double limit = factor * reference;
  const char* what = record.train_loss > limit                    ? "mean training loss"
                     : classification && record.test_nll > limit ? "test NLL"
                                                                   : nullptr;
  if (what == nullptr) return;
  const double value = record.train_loss > limit ? record.train_loss : record.test_nll;
  result_.diverged = true;
  const std::string against =
      reference > result_.initial_loss
          ? fmt::format("ln {} = {:.4g}, the loss of the uniform prediction", data_->outputs,
                        reference)
          : fmt::format("the first step's loss {:.4g}", result_.initial_loss);
  result_.divergence = fmt::format(
      "{} diverged at epoch {}: the {} is {:.4g}, more than {} times {}; try a smaller learning "
      "rate (--{}-lr)",
      config_.optimizer, record.epoch, what, value, factor, against, config_.optimizer);
}

Evaluation Trainer::evaluate(int samples, const SampleProgress& progress) {
  if (samples <= 0) samples = config_.test_samples;
  const auto t0 = Clock::now();
  Evaluation ev;
  if (data_->task == Task::kRegression) {
    evaluate_regression(ev, samples, progress);
    ev.seconds = seconds_since(t0);
    result_.test = ev;
    result_.parameter_digest = parameter_digest();
    return ev;
  }
  const auto& labels = data_->test.y;
  const auto test_x = data_->test.x.to(device_);
  const bool has_shifted = data_->test_shifted.size() > 0;
  const auto shifted_x = has_shifted ? data_->test_shifted.x.to(device_) : at::Tensor();
  const int bins = config_.ece_bins;
  const auto lp_mean = predict_log_probs(model_, test_x);
  const auto lp_shifted_mean = has_shifted ? predict_log_probs(model_, shifted_x) : at::Tensor();
  const OodMetrics kNoShift;  // NaN
  ev.mean = classification_metrics(lp_mean, labels, bins);
  ev.reliability_mean = reliability_bins(lp_mean, labels, bins);
  ev.ood_mean = has_shifted ? entropy_ood_metrics(lp_mean, lp_shifted_mean) : kNoShift;
  ev.ood_shift = has_shifted ? data_->ood_shift : std::string();
  ev.has_validation = data_->validation.size() > 0;
  const auto validation_x =
      ev.has_validation ? data_->validation.x.to(device_) : at::Tensor();
  at::Tensor lp_validation_mean;
  if (ev.has_validation) {
    lp_validation_mean = predict_log_probs(model_, validation_x);
    ev.validation_mean = classification_metrics(lp_validation_mean, data_->validation.y, bins);
  }
  // T from the validation split, applied to the test (and shifted) predictions.
  ev.temperature_scaled = config_.temperature_scaling && ev.has_validation;
  const auto scale = [&](const at::Tensor& lp_validation, const at::Tensor& lp_test,
                         const at::Tensor& lp_shifted, TemperatureFit& fit,
                         ClassificationMetrics& metrics, OodMetrics& ood) {
    fit = fit_temperature(lp_validation, data_->validation.y);
    const auto scaled = scale_temperature(lp_test, fit.temperature);
    metrics = classification_metrics(scaled, labels, bins);
    ood = has_shifted
              ? entropy_ood_metrics(scaled, scale_temperature(lp_shifted, fit.temperature))
              : kNoShift;
  };
  if (ev.temperature_scaled) {
    scale(lp_validation_mean, lp_mean, lp_shifted_mean, ev.temperature_mean, ev.scaled_mean,
          ev.ood_scaled_mean);
  }
  if (auto* v = as_variational(*optimizer_); v != nullptr && v->has_posterior()) {
    // One set of draws for all sets, so their comparison is not blurred by different samples.
    std::vector<at::Tensor> sets = {test_x};
    if (has_shifted) sets.push_back(shifted_x);
    if (ev.has_validation) sets.push_back(validation_x);
    const auto lp = predictive_log_probs(model_, *v, sets, samples, 1000, progress);
    ev.has_predictive = true;
    ev.samples = samples;
    ev.predictive = classification_metrics(lp[0], labels, bins);
    ev.reliability_predictive = reliability_bins(lp[0], labels, bins);
    ev.ood_predictive = has_shifted ? entropy_ood_metrics(lp[0], lp[1]) : kNoShift;
    if (ev.has_validation) {
      ev.validation_predictive = classification_metrics(lp.back(), data_->validation.y, bins);
    }
    if (ev.temperature_scaled) {
      scale(lp.back(), lp[0], has_shifted ? lp[1] : at::Tensor(), ev.temperature_predictive,
            ev.scaled_predictive, ev.ood_scaled_predictive);
    }
    double sum = 0.0;
    int64_t count = 0;
    for (const auto& var : v->posterior_variance()) {
      sum += var.detach().to(at::kDouble).sqrt().sum().item<double>();
      count += var.numel();
    }
    if (count > 0) ev.posterior_std_mean = sum / static_cast<double>(count);
  } else {
    ev.predictive = ev.mean;
    ev.reliability_predictive = ev.reliability_mean;
    ev.ood_predictive = ev.ood_mean;
    ev.validation_predictive = ev.validation_mean;
    ev.temperature_predictive = ev.temperature_mean;
    ev.scaled_predictive = ev.scaled_mean;
    ev.ood_scaled_predictive = ev.ood_scaled_mean;
  }
  ev.seconds = seconds_since(t0);
  result_.test = ev;
  result_.parameter_digest = parameter_digest();
  return ev;
}

MemberPredictions Trainer::mean_predictions() {
  check(data_->task == Task::kClassification,
        "An ensemble of regression networks is not supported; ensembles average classifiers' "
        "predictive distributions.");
  MemberPredictions p;
  p.test = predict_log_probs(model_, data_->test.x.to(device_));
  if (data_->test_shifted.size() > 0) {
    p.shifted = predict_log_probs(model_, data_->test_shifted.x.to(device_));
  }
  if (data_->validation.size() > 0) {
    p.validation = predict_log_probs(model_, data_->validation.x.to(device_));
  }
  return p;
}

void Trainer::evaluate_regression(Evaluation& ev, int samples, const SampleProgress& progress) {
  ev.task = Task::kRegression;
  ev.ood_mean = ev.ood_predictive = OodMetrics{};
  const auto test_x = data_->test.x.to(device_);
  ev.has_validation = data_->validation.size() > 0;
  const auto validation_x = ev.has_validation ? data_->validation.x.to(device_) : at::Tensor();
  ev.regression_mean = regression_score(predict_outputs(model_, test_x), data_->test.y, false);
  if (ev.has_validation) {
    ev.validation_regression_mean =
        regression_score(predict_outputs(model_, validation_x), data_->validation.y, false);
  }
  const auto sd = data_->statistics.value("target_std", std::vector<double>(
                                                            static_cast<size_t>(data_->outputs), 1.0));
  for (double s : sd) ev.noise_std.push_back(noise_std_ * s);
  if (auto* v = as_variational(*optimizer_); v != nullptr && v->has_posterior()) {
    std::vector<at::Tensor> sets = {test_x};
    if (ev.has_validation) sets.push_back(validation_x);
    ev.has_predictive = true;
    ev.samples = samples;
    if (const auto linearised = linearised_regression_outputs(model_, *v, sets);
        !linearised.empty()) {
      ev.regression_predictive = regression_score(linearised[0], data_->test.y);
      if (ev.has_validation) {
        ev.validation_regression_predictive =
            regression_score(linearised.back(), data_->validation.y);
      }
    } else {
      const auto draws = predictive_outputs(model_, *v, sets, samples, 1000, progress);
      ev.regression_predictive = regression_score(draws[0], data_->test.y, true);
      if (ev.has_validation) {
        ev.validation_regression_predictive =
            regression_score(draws.back(), data_->validation.y, true);
      }
    }
    double sum = 0.0;
    int64_t count = 0;
    for (const auto& var : v->posterior_variance()) {
      sum += var.detach().to(at::kDouble).sqrt().sum().item<double>();
      count += var.numel();
    }
    if (count > 0) ev.posterior_std_mean = sum / static_cast<double>(count);
  } else {
    ev.regression_predictive = ev.regression_mean;
    ev.validation_regression_predictive = ev.validation_regression_mean;
  }
}

nlohmann::json Trainer::checkpoint_meta() const {
  nlohmann::json history = nlohmann::json::array();
  for (const auto& r : result_.history) history.push_back(epoch_to_json(r));
  return {{"format", "blr-train"},
          {"config", config_.to_json()},
          {"model_description", result_.model_description},
          {"epoch", epoch_},
          {"global_step", global_step_},
          {"step_seconds", step_seconds_},
          {"initial_loss", result_.initial_loss},
          {"noise_std", noise_std_},
          {"train_size", data_->train.size()},
          {"dataset",
           {{"name", data_->name},
            {"task", task_name(data_->task)},
            {"outputs", data_->outputs},
            {"statistics", data_->statistics}}},
          {"history", history}};
}

void Trainer::save(const std::string& path) const {
  save_checkpoint(path, checkpoint_meta(), model_, *optimizer_);
}

void Trainer::restore(const Checkpoint& checkpoint) {
  const auto& meta = checkpoint.meta;
  try {
    check(meta.at("format").get<std::string>() == "blr-train",
          fmt::format("The checkpoint '{}' was not written by blr train.", checkpoint.path));
    const auto saved = TrainConfig::from_json(meta.at("config"));
    if (training_relevant(saved.to_json()) != training_relevant(config_.to_json())) {
      throw Error(fmt::format(
          "The checkpoint '{}' was written by a run with another configuration ({}); this run has "
          "{}.",
          checkpoint.path, training_relevant(saved.to_json()).dump(),
          training_relevant(config_.to_json()).dump()));
    }
    check(meta.at("train_size").get<int64_t>() == data_->train.size(),
          fmt::format("The checkpoint '{}' was trained on {} examples, but the training set now "
                      "has {}.",
                      checkpoint.path, meta.at("train_size").get<int64_t>(), data_->train.size()));
    const auto done = meta.at("epoch").get<int64_t>();
    check(done <= config_.epochs,
          fmt::format("The checkpoint '{}' has finished {} epochs, more than this run's {}.",
                      checkpoint.path, done, config_.epochs));
    checkpoint.restore(model_, *optimizer_);
    epoch_ = done;
    global_step_ = meta.at("global_step").get<int64_t>();
    step_seconds_ = meta.at("step_seconds").get<double>();
    // Absent in checkpoints written before divergence flags existed (and null when unknown).
    if (meta.contains("initial_loss") && meta.at("initial_loss").is_number()) {
      result_.initial_loss = meta.at("initial_loss").get<double>();
    }
    if (meta.contains("noise_std") && meta.at("noise_std").is_number()) {
      noise_std_ = meta.at("noise_std").get<double>();
    }
    result_.history.clear();
    for (const auto& r : meta.at("history")) result_.history.push_back(epoch_from_json(r));
  } catch (const nlohmann::json::exception& e) {
    throw Error(
        fmt::format("The checkpoint '{}' has incomplete metadata: {}", checkpoint.path, e.what()));
  }
  result_.steps = global_step_;
  result_.step_ms =
      global_step_ > 0 ? 1000.0 * step_seconds_ / static_cast<double>(global_step_) : 0.0;
}

}  // namespace blr::torch
