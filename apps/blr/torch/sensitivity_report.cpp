#include "sensitivity_report.hpp"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <chrono>

namespace blr::torch {
namespace {

nlohmann::json rows_json(const ::at::Tensor& t) {
  const auto c = t.to(::at::kDouble).contiguous().cpu();
  const double* v = c.data_ptr<double>();
  if (c.dim() == 1) return std::vector<double>(v, v + c.numel());
  nlohmann::json out = nlohmann::json::array();
  const int64_t k = c.size(1);
  for (int64_t i = 0; i < c.size(0); ++i) out.push_back(std::vector<double>(v + i * k, v + (i + 1) * k));
  return out;
}

}  // namespace

nlohmann::json ranked_json(const NetworkSensitivity& s, const ::at::Tensor& labels,
                           const std::vector<int64_t>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const int64_t i : rows) {
    out.push_back({{"index", i},
                   {"label", labels[i].item<int64_t>()},
                   {"score", s.score[i].item<double>()}});
  }
  return out;
}

nlohmann::json sensitivity_json(const NetworkSensitivity& s) {
  return {{"examples", s.score.size(0)},
          {"classes", s.logits.size(1)},
          {"error", rows_json(s.error)},
          {"variance", rows_json(s.variance)},
          {"deviation", rows_json(s.deviation)},
          {"score", rows_json(s.score)},
          {"loo", {{"nll", s.loo_nll}, {"accuracy", s.loo_accuracy}}},
          {"in_sample", {{"nll", s.train_nll}, {"accuracy", s.train_accuracy}}}};
}

void EpochSensitivity::attach(TrainHooks& hooks, Trainer& trainer, const ::at::Tensor& inputs,
                              const ::at::Tensor& labels) {
  auto inner = hooks.on_epoch;
  hooks.on_epoch = [this, inner, &trainer, inputs, labels](const EpochRecord& record) {
    if (inner) inner(record);
    if (record.epoch % every_ != 0) return;
    const auto start = std::chrono::steady_clock::now();
    const auto pv = posterior_variance(trainer.optimizer(), inputs.size(0));
    const auto s = network_sensitivity(trainer.model(), pv.variance, inputs, labels);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    source_ = pv.source;
    epochs_.push_back({{"epoch", record.epoch},
                       {"loo_nll", s.loo_nll},
                       {"loo_accuracy", s.loo_accuracy},
                       {"train_nll", s.train_nll},
                       {"train_accuracy", s.train_accuracy},
                       {"test_nll", record.test_nll},
                       {"test_accuracy", record.test_accuracy},
                       {"seconds", seconds},
                       {"epoch_seconds", record.seconds},
                       {"top", ranked_json(s, labels, ranked_examples(s.score, top_, true))}});
    points_.push_back({record.epoch, s.loo_nll, s.train_nll, record.test_nll});
  };
}

nlohmann::json EpochSensitivity::to_json() const {
  return {{"every", every_}, {"source", source_}, {"epochs", epochs_}};
}

}  // namespace blr::torch
