#include "blr/torch/train/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/nn/precision.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/train/load_data.hpp"

namespace blr::torch {

DataFormat data_format(const std::string& data) {
  const auto ends_with = [&](const std::string& tail) {
    return data.size() > tail.size() && data.compare(data.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (data == kFashionMnist) return DataFormat::kFashionMnist;
  if (is_text_data(data)) return DataFormat::kText;
  if (ends_with(".pt") || ends_with(".pth")) return DataFormat::kTensorFile;
  if (ends_with(".csv")) return DataFormat::kCsv;
  throw Error(fmt::format("Unknown data set '{}'; give fashion-mnist, a file written by "
                          "torch.save (.pt), a CSV table (.csv), fortunes or text:PATH.",
                          data));
}

void TrainConfig::validate() const {
  const DataFormat format = data_format(data);
  check(task.empty() || task == "classification" || task == "regression",
        "Option 'task' must be classification or regression; got '{}'.", task);
  check(format != DataFormat::kCsv || !task.empty(),
        "A CSV data set needs --task classification or --task regression.");
  check(format != DataFormat::kFashionMnist || task.empty() || task == "classification",
        "Fashion-MNIST is a classification data set; drop --task {}.", task);
  check(format != DataFormat::kText || task.empty() || task == "classification",
        "A text corpus is next-token classification; drop --task {}.", task);
  if (format != DataFormat::kCsv) {
    check(label.empty() && test_data.empty() && categorical.empty() && missing == "error",
          "Options --label, --test-data, --categorical and --missing apply to CSV data "
          "(--data FILE.csv).");
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    check(classes[i] >= 0, "Option 'classes' takes class labels, which are >= 0; got {}.",
          classes[i]);
    for (size_t k = 0; k < i; ++k) {
      check(classes[k] != classes[i], "Option 'classes' names class {} twice.", classes[i]);
    }
  }
  check(classes.empty() || (format != DataFormat::kText && task != "regression"),
        "Option 'classes' selects classes of a classification data set; it does not apply to {}.",
        format == DataFormat::kText ? "a text corpus" : "regression");
  check(missing == "error" || missing == "drop",
        "Option 'missing' must be error or drop; got '{}'.", missing);
  check(noise_std >= 0 && std::isfinite(noise_std),
        "Option 'noise-std' must be 0 (fitted) or a positive finite number; got {}.", noise_std);
  data_options.validate();
  if (!model_file.empty()) {
    // These change blr's own layers (dropout units of its MLP, binary weights of binary-mlp).
    for (const char* builtin : {"mc-dropout", "bayesbinn", "ste"}) {
      check(optimizer != builtin,
            fmt::format("The optimizer {} needs one of blr's own models (--model), not a "
                        "TorchScript module (--model-file {}).",
                        optimizer, model_file));
    }
  } else {
    model.validate();
    if (is_text_data(data)) {
      check(model.kind == "gpt",
            fmt::format("The text corpus '{}' trains the language model: use --model gpt (not {}).",
                        data, model.kind));
    } else {
      check(model.kind != "gpt",
            fmt::format("The language model (--model gpt) trains on a text corpus: use --data "
                        "fortunes or --data text:PATH (not {}).",
                        data));
    }
  }
  if (is_text_data(data)) {
    check(data_options.validation_fraction == 0,
          "A text corpus has a fixed validation split (documents i mod 20 = 1); --validation does "
          "not apply to it.");
  }
  check_options(optimizer, optimizer_options);
  check(epochs >= 1 && epochs <= 100000,
        fmt::format("Option 'epochs' must lie in [1, 100000]; got {}.", epochs));
  check(batch_size >= 1 && batch_size <= 1'000'000,
        fmt::format("Option 'batch-size' must lie in [1, 1000000]; got {}.", batch_size));
  check(micro_batches >= 1 && micro_batches <= batch_size,
        fmt::format("Option 'micro-batches' must lie in [1, batch-size] = [1, {}]; got {}.",
                    batch_size, micro_batches));
  (void)parse_precision(precision);  // one sentence naming the choices
  check(schedule == "constant" || schedule == "cosine" || schedule == "warmup-cosine",
        fmt::format("Unknown schedule '{}'; choose constant, cosine or warmup-cosine.", schedule));
  check(std::isfinite(warmup_epochs) && warmup_epochs >= 0 &&
            (schedule != "warmup-cosine" || warmup_epochs < static_cast<double>(epochs)),
        fmt::format("Option 'warmup-epochs' must lie in [0, epochs) = [0, {}); got {}.", epochs,
                    warmup_epochs));
  check(warmup_epochs == 0 || schedule == "warmup-cosine",
        "Option 'warmup-epochs' needs --schedule warmup-cosine.");
  check(std::isfinite(grad_clip) && grad_clip >= 0,
        fmt::format("Option 'grad-clip' must be a finite number ≥ 0 (0 = no clipping); got {}.",
                    grad_clip));
  check(!temperature_scaling || data_options.validation_fraction > 0 || is_text_data(data),
        "--temperature-scaling fits its temperature on the validation split; add --validation "
        "FRACTION (e.g. 0.1).");
  check(test_samples >= 1 && test_samples <= 100000,
        fmt::format("Option 'test-samples' must lie in [1, 100000]; got {}.", test_samples));
  check(ece_bins >= 1 && ece_bins <= 10000,
        fmt::format("Option 'ece-bins' must lie in [1, 10000]; got {}.", ece_bins));
}

void TrainConfig::validate_for_training() const {
  validate();
  check(find_optimizer(optimizer).trains,
        fmt::format("'{}' is a posterior fitted after training, not an optimizer that trains: "
                    "train with one of {}, then fit it with `blr {} --checkpoint FILE`.",
                    optimizer, fmt::join(optimizer_names(), ", "), optimizer));
}

Schedule TrainConfig::learning_rate_schedule(double base_lr, int64_t steps_per_epoch) const {
  const long total = static_cast<long>(epochs * steps_per_epoch);
  if (schedule == "cosine") return Schedule::cosine(base_lr, total);
  if (schedule == "warmup-cosine") {
    Schedule s = Schedule::cosine(base_lr, total);
    s.kind = Schedule::Kind::warmup_cosine;
    s.warmup_steps = static_cast<long>(warmup_epochs * steps_per_epoch);
    s.warmup_start = 0.2;
    return s;
  }
  return Schedule::constant(base_lr);
}

nlohmann::json TrainConfig::to_json() const {
  nlohmann::json j;
  j["data"] = data;
  j["data_dir"] = data_options.directory;
  j["task"] = task;
  j["label"] = label;
  j["test_data"] = test_data;
  j["categorical"] = categorical;
  j["missing"] = missing;
  j["noise_std"] = noise_std;
  j["classes"] = classes;
  j["init"] = init;
  j["train_limit"] = data_options.train_limit;
  j["test_limit"] = data_options.test_limit;
  j["validation"] = data_options.validation_fraction;
  if (!model_file.empty()) {
    j["model"] = "torchscript";
    j["model_file"] = model_file;
    j["hidden"] = nlohmann::json::array();
  } else {
    j["model"] = model.kind;
    j["hidden"] = model.hidden;
  }
  if (model_file.empty() && model.kind == "gpt") j["gpt"] = options_to_json(GptOptions::table().values(model.gpt));
  j["optimizer"] = optimizer;
  j["optimizer_options"] = options_to_json(optimizer_options);
  j["epochs"] = epochs;
  j["batch_size"] = batch_size;
  j["micro_batches"] = micro_batches;
  j["precision"] = precision;
  j["schedule"] = schedule;
  j["warmup_epochs"] = warmup_epochs;
  j["grad_clip"] = grad_clip;
  j["recipe"] = recipe;
  if (!origin.empty()) j["origin"] = origin;
  j["seed"] = seed;
  j["test_samples"] = test_samples;
  j["temperature_scaling"] = temperature_scaling;
  j["ece_bins"] = ece_bins;
  return j;
}

TrainConfig TrainConfig::from_json(const nlohmann::json& j) {
  TrainConfig c;
  try {
    c.data = j.at("data").get<std::string>();
    c.data_options.directory = j.at("data_dir").get<std::string>();
    // Absent in configurations written before data files existed: the defaults.
    c.task = j.value("task", std::string());
    c.label = j.value("label", std::string());
    c.test_data = j.value("test_data", std::string());
    c.categorical = j.value("categorical", std::vector<std::string>());
    c.missing = j.value("missing", std::string("error"));
    c.noise_std = j.value("noise_std", 0.0);
    c.classes = j.value("classes", std::vector<int64_t>());
    c.init = j.value("init", std::string());
    c.data_options.train_limit = j.at("train_limit").get<int64_t>();
    c.data_options.test_limit = j.at("test_limit").get<int64_t>();
    c.data_options.validation_fraction = j.at("validation").get<double>();
    c.model_file = j.value("model_file", std::string());  // absent before --model-file existed
    if (c.model_file.empty()) {
      c.model.kind = j.at("model").get<std::string>();
      c.model.hidden = j.at("hidden").get<std::vector<int64_t>>();
    }
    if (j.contains("gpt")) GptOptions::table().apply(c.model.gpt, options_from_json(j.at("gpt")));
    c.optimizer = j.at("optimizer").get<std::string>();
    // Format 1 spelled keys with dashes (hess-init) and every value as a number.
    for (auto [key, value] : options_from_json(j.at("optimizer_options"))) {
      std::replace(key.begin(), key.end(), '-', '_');
      c.optimizer_options.emplace_back(key, value);
    }
    c.epochs = j.at("epochs").get<int64_t>();
    c.batch_size = j.at("batch_size").get<int64_t>();
    c.micro_batches = j.value("micro_batches", int64_t{1});  // absent before it existed
    c.precision = j.value("precision", std::string("float32"));
    c.schedule = j.at("schedule").get<std::string>();
    c.warmup_epochs = j.at("warmup_epochs").get<double>();  // whole epochs before recipes
    c.grad_clip = j.value("grad_clip", 0.0);                  // absent before it existed
    c.recipe = j.value("recipe", std::string());
    c.origin = j.value("origin", std::string());
    c.seed = j.at("seed").get<uint64_t>();
    c.test_samples = j.at("test_samples").get<int>();
    c.temperature_scaling = j.value("temperature_scaling", false);  // absent before it existed
    c.ece_bins = j.at("ece_bins").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("The stored training configuration is incomplete: {}", e.what()));
  }
  c.data_options.seed = c.seed;
  return c;
}

}  // namespace blr::torch
