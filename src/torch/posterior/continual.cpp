// Continual learning with the posterior as the next prior (blr/torch/posterior/continual.hpp).
#include "blr/torch/posterior/continual.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "blr/core/error.hpp"
#include "blr/torch/data/batches.hpp"
#include "blr/torch/nn/model.hpp"
#include "blr/torch/nn/script_file.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/predictive/predictive.hpp"

namespace blr::torch {

namespace {

constexpr int64_t kSplitTasks = 5;
constexpr int64_t kPixels = 28 * 28;

/// One task's data on the device. `heads` (split) holds, per example, the two output units of its
/// task (N×2); labels are then 0/1 within the task. Undefined heads: all ten units (permuted).
struct TaskData {
  ::at::Tensor x, y, heads;
  int64_t size() const { return x.size(0); }
};

struct ContinualTask {
  std::string name;
  TaskData train, test;
};

/// The first `limit` (0: all) examples of `data` whose label is in `classes` (empty: all),
/// with labels made local to the task (split) and the images permuted by `pixels` (if defined).
TaskData make_task_data(const Split& data, const std::vector<int64_t>& classes,
                        int64_t limit, const ::at::Tensor& pixels) {
  TaskData out;
  ::at::Tensor x = data.x, y = data.y;
  if (!classes.empty()) {
    const ::at::Tensor keep = (y == classes[0]).logical_or(y == classes[1]);
    const ::at::Tensor index = keep.nonzero().view({-1});
    x = x.index_select(0, index);
    y = y.index_select(0, index);
  }
  if (limit > 0 && limit < x.size(0)) {
    x = x.slice(0, 0, limit);
    y = y.slice(0, 0, limit);
  }
  if (pixels.defined()) {
    x = x.reshape({x.size(0), kPixels}).index_select(1, pixels).reshape(x.sizes());
  }
  out.x = x.contiguous();
  if (!classes.empty()) {
    out.y = (y == classes[1]).to(::at::kLong);
    out.heads = ::at::tensor(classes, ::at::kLong).repeat({y.size(0), 1});
  } else {
    out.y = y.contiguous();
  }
  return out;
}

TaskData to_device(const TaskData& d, ::at::Device device) {
  return {d.x.to(device), d.y.to(device), d.heads.defined() ? d.heads.to(device) : ::at::Tensor()};
}

std::vector<ContinualTask> make_tasks(const ContinualConfig& c, const Dataset& data,
                             ::at::Device device) {
  std::vector<ContinualTask> tasks;
  for (int64_t t = 0; t < c.task_count; ++t) {
    ContinualTask task;
    std::vector<int64_t> classes;
    ::at::Tensor pixels;
    if (c.tasks == "split") {
      classes = {2 * t, 2 * t + 1};
      task.name = fmt::format("classes {}/{}", classes[0], classes[1]);
    } else {
      task.name = t == 0 ? "identity" : fmt::format("permutation {}", t + 1);
      if (t > 0) {
        pixels = ::at::tensor(seeded_permutation(kPixels, c.seed * 1000003ULL + uint64_t(t)),
                              ::at::kLong);
      }
    }
    task.train = to_device(make_task_data(data.train, classes, c.data_options.train_limit, pixels),
                           device);
    task.test = to_device(make_task_data(data.test, classes, c.data_options.test_limit, pixels),
                          device);
    check(task.train.size() > 0 && task.test.size() > 0,
          fmt::format("Task {} ({}) has no training or no test examples.", t + 1, task.name));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

TaskData concatenate(const std::vector<ContinualTask>& tasks, size_t count) {
  std::vector<::at::Tensor> x, y, heads;
  for (size_t t = 0; t < count; ++t) {
    x.push_back(tasks[t].train.x);
    y.push_back(tasks[t].train.y);
    if (tasks[t].train.heads.defined()) heads.push_back(tasks[t].train.heads);
  }
  return {::at::cat(x), ::at::cat(y), heads.empty() ? ::at::Tensor() : ::at::cat(heads)};
}

/// The logits a task's examples are scored on: their own two units (split) or all ten.
::at::Tensor task_logits(const ::at::Tensor& logits, const ::at::Tensor& heads) {
  return heads.defined() ? logits.gather(1, heads) : logits;
}

/// A model and its optimizer, built from the seed (a --model-file model from its archive).
struct Learner {
  Model model;
  std::string description;
  std::unique_ptr<::torch::optim::Optimizer> optimizer;
};

Learner make_learner(const ContinualConfig& c, const std::shared_ptr<const std::string>& archive,
                     int64_t train_size, ::at::Device device) {
  Learner l;
  ::torch::manual_seed(c.seed);
  if (c.model_file.empty()) {
    const auto classifier = make_classifier(c.model);
    l.description = classifier->describe();
    l.model = Model(classifier);
  } else {
    l.model = load_script_model(archive, c.model_file);
    l.description = describe_script_model(l.model);
  }
  l.model.to(device);
  l.optimizer = make_optimizer(c.optimizer, l.model.parameters(), c.optimizer_options,
                               OptimizerContext{train_size, c.seed, c.batch_size});
  return l;
}

/// A --model-file model must map a batch of images to 10 logits per image.
void check_ten_logits(const Model& model, const ContinualConfig& c, const ::at::Tensor& images) {
  const auto x = images.slice(0, 0, std::min<int64_t>(2, images.size(0)));
  const std::string name = fmt::format("The model in '{}'", c.model_file);
  const auto out = probe_model_output(model, x, name);
  check(out.dim() == 2 && out.size(0) == x.size(0) && out.size(1) == 10,
        "{} returns shape [{}] for inputs [{}]; continual learning on Fashion-MNIST needs [{}, 10] "
        "(10 logits per image).",
        name, fmt::join(out.sizes(), ", "), fmt::join(x.sizes(), ", "), x.size(0));
}

/// `epochs` epochs over `data`; the minibatch order of epoch e depends on (seed, stream, e).
void train(Learner& l, const TaskData& data, const ContinualConfig& c, uint64_t stream,
           const std::function<void(const std::string&)>& progress, const std::string& label) {
  auto& opt = *l.optimizer;
  VariationalOptimizer* v = as_variational(opt);
  const int64_t n = data.size();
  const int64_t bs = std::min(c.batch_size, n);
  const int64_t steps = batch_count(n, bs);
  for (int64_t epoch = 0; epoch < c.epochs; ++epoch) {
    l.model.train(true);
    const auto order = epoch_permutation(n, c.seed * 1000003ULL + stream, epoch);
    const auto perm = ::at::tensor(order, ::at::kLong).to(data.x.device());
    double loss_sum = 0.0;
    for (int64_t b = 0; b < steps; ++b) {
      const auto index = perm.slice(0, b * bs, std::min(n, (b + 1) * bs));
      const auto x = data.x.index_select(0, index);
      const auto y = data.y.index_select(0, index);
      const auto heads = data.heads.defined() ? data.heads.index_select(0, index) : ::at::Tensor();
      auto loss_at = [&] {
        opt.zero_grad();
        auto loss = ::at::nll_loss(::at::log_softmax(task_logits(l.model.forward(x), heads), 1), y);
        loss.backward();
        return loss.item<double>();
      };
      double loss = 0.0;
      if (v != nullptr) {
        const int samples = training_samples(opt);
        for (int s = 0; s < samples; ++s) {
          SampledParameters sampled(*v, /*train=*/true);
          loss += loss_at() / samples;
        }
      } else {
        loss = loss_at();
      }
      check(std::isfinite(loss),
            fmt::format("Training diverged: the loss of {} on {} at epoch {}, step {} is {}; try a "
                        "smaller learning rate (--{}-lr).",
                        c.optimizer, label, epoch + 1, b + 1, loss, c.optimizer));
      opt.step();
      loss_sum += loss;
    }
    if (progress) {
      progress(fmt::format("{}: epoch {}/{}, training loss {:.4f}", label, epoch + 1, c.epochs,
                           loss_sum / static_cast<double>(steps)));
    }
  }
}

/// Test accuracy at the mean on one task.
double accuracy(Learner& l, const TaskData& test) {
  ::at::NoGradGuard no_grad;
  EvalMode eval(l.model);
  int64_t correct = 0;
  const int64_t n = test.size(), chunk = 2000;
  for (int64_t b = 0; b < n; b += chunk) {
    const int64_t e = std::min(n, b + chunk);
    const auto heads = test.heads.defined() ? test.heads.slice(0, b, e) : ::at::Tensor();
    const auto logits = task_logits(l.model.forward(test.x.slice(0, b, e)), heads);
    correct += logits.argmax(1).eq(test.y.slice(0, b, e)).sum().item<int64_t>();
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

}  // namespace

void ContinualConfig::validate() const {
  check(tasks == "split" || tasks == "permuted",
        fmt::format("Option 'tasks' must be split or permuted; got '{}'.", tasks));
  if (tasks == "split") {
    check(task_count >= 1 && task_count <= kSplitTasks,
          fmt::format("Option 'task-count' must be between 1 and {} for split tasks (class pairs "
                      "0/1 … 8/9); got {}.",
                      kSplitTasks, task_count));
  } else {
    check(task_count >= 1 && task_count <= 100,
          fmt::format("Option 'task-count' must be between 1 and 100; got {}.", task_count));
  }
  check(optimizer == "ivon" || optimizer == "adamw",
        fmt::format("Option 'optimizer' must be ivon or adamw for continual learning; got '{}'.",
                    optimizer));
  check(prior.empty() || prior == "posterior" || prior == "initial",
        fmt::format("Option 'prior' must be posterior or initial; got '{}'.", prior));
  check(prior != "posterior" || optimizer == "ivon",
        fmt::format("Option 'prior posterior' needs --optimizer ivon ({} has no posterior).",
                    optimizer));
  check(prior.empty() || !retrain,
        "Option 'prior' does not apply with --retrain (each retraining starts from the options' "
        "prior).");
  check(epochs >= 1, fmt::format("Option 'epochs' must be at least 1; got {}.", epochs));
  check(batch_size >= 1,
        fmt::format("Option 'batch-size' must be at least 1; got {}.", batch_size));
  check(data_options.train_limit >= 0 && data_options.test_limit >= 0,
        "Options 'train-limit' and 'test-limit' must be >= 0.");
  check(data_options.validation_fraction == 0.0,
        "Continual learning takes no validation split.");
  if (model_file.empty()) {
    model.validate();
    check(model.classes == 10, "Continual learning on Fashion-MNIST needs 10 output classes.");
  }
  check_options(optimizer, optimizer_options);
}

bool ContinualConfig::posterior_as_prior() const {
  return optimizer == "ivon" && !retrain && prior != "initial";
}

std::string ContinualConfig::method() const {
  if (retrain) return fmt::format("{} (retraining on all tasks so far)", optimizer);
  if (posterior_as_prior()) return "ivon (posterior as the next prior)";
  return fmt::format("{} (fine-tuning)", optimizer);
}

nlohmann::json ContinualConfig::to_json() const {
  nlohmann::json j = {{"tasks", tasks},
                      {"task_count", task_count},
                      {"optimizer", optimizer},
                      {"optimizer_options", options_to_json(optimizer_options)},
                      {"prior", posterior_as_prior() ? "posterior" : "initial"},
                      {"retrain", retrain},
                      {"heads", tasks == "split" ? "multi-head (two units per task)" : "single head"},
                      {"epochs_per_task", epochs},
                      {"batch_size", batch_size},
                      {"train_limit", data_options.train_limit},
                      {"test_limit", data_options.test_limit},
                      {"seed", seed}};
  if (!model_file.empty()) j["model_file"] = model_file;
  return j;
}

nlohmann::json ContinualResult::to_json() const {
  nlohmann::json forgetting_json = nlohmann::json::array();
  for (double f : forgetting) forgetting_json.push_back(f);
  return {{"command", "continual"},
          {"method", config.method()},
          {"config", config.to_json()},
          {"model", model_description},
          {"task_names", task_names},
          {"train_sizes", train_sizes},
          {"test_sizes", test_sizes},
          {"accuracy", accuracy},
          {"average_accuracy", average_accuracy},
          {"forgetting", forgetting_json},
          {"seconds", seconds}};
}

void continual_summary(const std::vector<std::vector<double>>& accuracy,
                       std::vector<double>& average_accuracy, std::vector<double>& forgetting) {
  average_accuracy.clear();
  forgetting.clear();
  for (size_t t = 0; t < accuracy.size(); ++t) {
    check(accuracy[t].size() == t + 1, "Internal: row t of the accuracy matrix needs t + 1 entries.");
    double sum = 0.0;
    for (double a : accuracy[t]) sum += a;
    average_accuracy.push_back(sum / static_cast<double>(t + 1));
    double drop = 0.0;
    for (size_t j = 0; j < t; ++j) {
      double best = accuracy[j][j];
      for (size_t l = j; l < t; ++l) best = std::max(best, accuracy[l][j]);
      drop += best - accuracy[t][j];
    }
    forgetting.push_back(t == 0 ? 0.0 : drop / static_cast<double>(t));
  }
}

ContinualResult run_continual(const ContinualConfig& config, ::at::Device device,
                              const std::function<void(const std::string&)>& progress) {
  config.validate();
  const auto t0 = std::chrono::steady_clock::now();
  FashionMnistOptions data_options = config.data_options;
  data_options.train_limit = 0;  // the limits apply per task
  data_options.test_limit = 0;
  const Dataset data = load_fashion_mnist(data_options);
  const std::vector<ContinualTask> tasks = make_tasks(config, data, device);

  ContinualResult result;
  result.config = config;
  for (const ContinualTask& t : tasks) {
    result.task_names.push_back(t.name);
    result.train_sizes.push_back(t.train.size());
    result.test_sizes.push_back(t.test.size());
  }
  // A --model-file is read once; every fresh model is loaded from the same bytes.
  const std::shared_ptr<const std::string> archive =
      config.model_file.empty() ? nullptr : read_model_file(config.model_file);
  auto new_learner = [&](int64_t train_size) {
    auto l = std::make_unique<Learner>(make_learner(config, archive, train_size, device));
    if (archive) check_ten_logits(l->model, config, tasks.front().train.x);
    return l;
  };
  std::unique_ptr<Learner> learner;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const std::string label = fmt::format("task {}/{} ({})", t + 1, tasks.size(), tasks[t].name);
    if (config.retrain) {
      const TaskData all = concatenate(tasks, t + 1);
      learner = new_learner(all.size());
      train(*learner, all, config, t, progress, label + ", retraining on all tasks so far");
    } else {
      if (!learner) {
        learner = new_learner(tasks[t].train.size());
      } else if (config.posterior_as_prior()) {
        auto* posterior = capability<DiagonalGaussianPosterior>(*learner->optimizer);
        check(posterior != nullptr,
              "Internal: the continual learner's optimizer has no mean-field posterior.");
        posterior->set_prior_from_posterior();
      }
      train(*learner, tasks[t].train, config, t, progress, label);
    }
    std::vector<double> row;
    for (size_t j = 0; j <= t; ++j) row.push_back(accuracy(*learner, tasks[j].test));
    result.accuracy.push_back(std::move(row));
    if (t == 0) result.model_description = learner->description;
  }
  continual_summary(result.accuracy, result.average_accuracy, result.forgetting);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace blr::torch
