#include "report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <variant>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>

#include "../json_output.hpp"
#include "blr/core/error.hpp"
#include "blr/torch/train/load_data.hpp"

namespace blr::torch {

nlohmann::json metrics_to_json(const ClassificationMetrics& m) {
  return {{"count", m.count}, {"accuracy", m.accuracy}, {"nll", m.nll},
          {"ece", m.ece},     {"ece_bins", m.ece_bins}, {"ece20", m.ece20},
          {"brier", m.brier}, {"entropy", m.entropy}, {"adaptive_ece", m.adaptive_ece},
          {"classwise_ece", m.classwise_ece}, {"aurc", m.aurc}};
}

namespace {

// The OOD split in words: "inverted" (Fashion-MNIST's test set with inverted intensities) or
// "x_ood" (the data file's own OOD inputs).
std::string ood_shift_text(const std::string& shift) {
  return shift == "x_ood" ? "the data file's x_ood inputs"
                          : "test images with inverted intensities (1 - x)";
}

void add_ood_to_json(nlohmann::json& out, const OodMetrics& ood) {
  if (!std::isfinite(ood.auroc)) return;
  out["ood_auroc"] = ood.auroc;
  out["ood_aupr"] = ood.aupr;
  out["ood_fpr95"] = ood.fpr95;
}

}  // namespace

nlohmann::json regression_to_json(const RegressionMetrics& m) {
  nlohmann::json coverage = nlohmann::json::object();
  for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
    coverage[fmt::format("{:g}", kCoverageLevels[i])] = m.coverage[i];
  }
  return {{"count", m.count},       {"rmse", m.rmse},
          {"nll", m.nll},           {"coverage", coverage},
          {"miscalibration", m.miscalibration}, {"predictive_std", m.predictive_std}};
}

namespace {

double mean_epoch_seconds(const RunResult& run) {
  if (run.history.empty()) return 0.0;
  return std::accumulate(run.history.begin(), run.history.end(), 0.0,
                         [](double a, const EpochRecord& r) { return a + r.seconds; }) /
         static_cast<double>(run.history.size());
}

// How the predictive was formed: "probit" for a Laplace posterior with the linearised probit
// predictive (no draws), else "monte-carlo" (K posterior draws). A checkpoint written before
// 2026-11-29 spells the latter "mc".
std::string predictive_method(const RunResult& run) {
  if (run.config.optimizer == "laplace")
    for (const auto& [key, value] : run.config.optimizer_options)
      if (key == "predictive" && value == OptionValue(std::string("probit"))) return "probit";
  return "monte-carlo";
}

// A language model's figures: perplexity exp(mean NLL per token) at the mean and with the
// posterior predictive, next-token ECE (the classification ECE over all positions), and tokens per
// second — training: the training tokens of an epoch over its mean time; evaluation: the tokens
// scored by the final evaluation (test and validation, once at the mean and K times for the
// predictive) over its time.
// A prediction after temperature scaling: its test metrics, T and the validation NLL before and
// after (temperature_scaling.hpp), and its OOD metrics when there is an OOD split.
nlohmann::json scaled_to_json(const ClassificationMetrics& m, const TemperatureFit& fit,
                              const OodMetrics& ood) {
  nlohmann::json out = metrics_to_json(m);
  out["temperature"] = fit.temperature;
  out["validation_nll_before"] = fit.nll_before;
  out["validation_nll_after"] = fit.nll_after;
  out["temperature_at_bound"] = fit.at_bound;
  add_ood_to_json(out, ood);
  return out;
}

nlohmann::json language_model_json(const RunResult& run) {
  const auto& t = run.test;
  const double tokens_per_epoch =
      static_cast<double>(run.train_size) * static_cast<double>(run.config.model.gpt.context);
  const double scored = static_cast<double>(t.mean.count + (t.has_validation ? t.validation_mean.count : 0)) *
                        (1.0 + (t.has_predictive ? t.samples : 0));
  nlohmann::json j = {{"test_perplexity_mean", perplexity(t.mean)},
                      {"test_perplexity_predictive", perplexity(t.predictive)},
                      {"test_next_token_ece_mean", t.mean.ece},
                      {"test_next_token_ece_predictive", t.predictive.ece},
                      {"train_tokens_per_second", tokens_per_epoch / mean_epoch_seconds(run)},
                      {"evaluation_tokens_per_second", scored / t.seconds}};
  if (t.has_validation) {
    j["validation_perplexity_mean"] = perplexity(t.validation_mean);
    j["validation_perplexity_predictive"] = perplexity(t.validation_predictive);
  }
  return j;
}

}  // namespace

nlohmann::json run_to_json(const RunResult& run) {
  nlohmann::json j;
  j["options"] = options_to_json(run.options);
  j["model"] = run.model_description;
  j["train_size"] = run.train_size;
  std::vector<double> seconds;
  nlohmann::json history = nlohmann::json::array();
  for (const auto& r : run.history) {
    seconds.push_back(r.seconds);
    history.push_back(epoch_to_json(r));
  }
  j["epoch_seconds"] = seconds;
  j["step_ms"] = run.step_ms;
  j["steps"] = run.steps;
  j["history"] = history;
  const auto& t = run.test;
  nlohmann::json test;
  if (t.task == Task::kRegression) {
    test["mean"] = regression_to_json(t.regression_mean);
    test["predictive"] = regression_to_json(t.regression_predictive);
    test["predictive"]["samples"] = t.has_predictive ? t.samples : 0;
    test["noise_std"] = t.noise_std;
    if (std::isfinite(t.posterior_std_mean)) test["posterior_std_mean"] = t.posterior_std_mean;
    test["seconds"] = t.seconds;
    j["test"] = test;
    if (t.has_validation) {
      j["validation"] = {{"mean", regression_to_json(t.validation_regression_mean)},
                         {"predictive", regression_to_json(t.validation_regression_predictive)}};
    }
  } else {
    test["mean"] = metrics_to_json(t.mean);
    test["predictive"] = metrics_to_json(t.predictive);
    const bool probit = t.has_predictive && predictive_method(run) == "probit";
    test["predictive"]["samples"] = t.has_predictive && !probit ? t.samples : 0;
    if (t.has_predictive) test["predictive"]["method"] = probit ? "probit" : "monte-carlo";
    if (std::isfinite(t.ood_mean.auroc)) {
      test["ood"] = {{"shift", t.ood_shift},
                     {"auroc_mean", t.ood_mean.auroc},
                     {"auroc_predictive", t.ood_predictive.auroc},
                     {"aupr_mean", t.ood_mean.aupr},
                     {"aupr_predictive", t.ood_predictive.aupr},
                     {"fpr95_mean", t.ood_mean.fpr95},
                     {"fpr95_predictive", t.ood_predictive.fpr95}};
    }
    if (std::isfinite(t.posterior_std_mean)) test["posterior_std_mean"] = t.posterior_std_mean;
    if (t.temperature_scaled) {
      test["temperature_scaled"] = {
          {"mean", scaled_to_json(t.scaled_mean, t.temperature_mean, t.ood_scaled_mean)},
          {"predictive", scaled_to_json(t.scaled_predictive, t.temperature_predictive,
                                        t.ood_scaled_predictive)}};
    }
    test["seconds"] = t.seconds;
    j["test"] = test;
    if (t.has_validation) {
      j["validation"] = {{"mean", metrics_to_json(t.validation_mean)},
                         {"predictive", metrics_to_json(t.validation_predictive)}};
    }
  }
  if (is_text_data(run.config.data)) j["language_model"] = language_model_json(run);
  if (!run.config.origin.empty()) j["origin"] = run.config.origin;
  if (!run.checkpoint.empty()) j["checkpoint"] = run.checkpoint;
  if (std::isfinite(run.initial_loss)) j["initial_loss"] = run.initial_loss;
  if (!run.parameter_digest.empty()) j["parameter_digest"] = run.parameter_digest;
  j["diverged"] = run.diverged;
  if (run.diverged) j["divergence"] = run.divergence;
  return j;
}

nlohmann::json report_to_json(const std::string& command, const std::vector<RunResult>& runs) {
  nlohmann::json doc;
  doc["command"] = command;
  if (!runs.empty()) {
    const auto& c = runs.front().config;
    doc["data"] = c.data;
    doc["model"] = runs.front().model_description;
    doc["seed"] = c.seed;
    doc["epochs"] = c.epochs;
    doc["batch_size"] = c.batch_size;
    doc["schedule"] = c.schedule;
    doc["warmup_epochs"] = c.warmup_epochs;
    doc["grad_clip"] = c.grad_clip;
    doc["recipe"] = c.recipe;
    // The run's whole configuration but the optimizer (each run's options are under its name).
    nlohmann::json config = c.to_json();
    config.erase("optimizer");
    config.erase("optimizer_options");
    doc["config"] = config;
    doc["train_limit"] = c.data_options.train_limit;
    doc["test_samples"] = c.test_samples;
    doc["task"] = task_name(runs.front().test.task);
    if (std::isfinite(runs.front().test.ood_mean.auroc)) {
      doc["ood_shift"] = ood_shift_text(runs.front().test.ood_shift);
    }
  }
  // What libgomp ran with (main() sets PASSIVE when the user did not choose); null if unset.
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  doc["omp_wait_policy"] = policy != nullptr ? nlohmann::json(policy) : nlohmann::json(nullptr);
  nlohmann::json optimizers = nlohmann::json::object();
  for (const auto& run : runs) optimizers[run.config.optimizer] = run_to_json(run);
  doc["optimizers"] = optimizers;
  return doc;
}

namespace {

void print_regression_table(std::ostream& out, const std::vector<RunResult>& runs) {
  out << fmt::format("{:<9} {:<18} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10}\n",
                     "optimizer", "prediction", "RMSE", "NLL", "cov50", "cov90", "cov95",
                     "miscal", "pred-sd", "ms/step");
  for (const auto& run : runs) {
    const auto row = [&](const std::string& mode, const RegressionMetrics& m) {
      out << fmt::format(
          "{:<9} {:<18} {:>10.4g} {:>9.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>9.4g} "
          "{:>10.2f}\n",
          run.config.optimizer, mode, m.rmse, m.nll, m.coverage[0], m.coverage[2], m.coverage[3],
          m.miscalibration, m.predictive_std, run.step_ms);
    };
    row("mean", run.test.regression_mean);
    if (run.test.has_predictive) {
      row(predictive_method(run) == "probit" ? std::string("predictive (linear)")
                                             : fmt::format("predictive (K={})", run.test.samples),
          run.test.regression_predictive);
    }
  }
  out << "Regression, in the targets' units: RMSE; NLL per target value; cov50/90/95: share of "
         "test targets inside the central 50/90/95 % predictive interval; miscal: mean "
         "|coverage - level| over 50/80/90/95 %.\n";
}

}  // namespace

std::string comparison_sentence(const RunResult& v, const RunResult& p) {
  const auto& a = v.test.predictive;
  const auto& b = p.test.mean;
  const auto word = [](double mine, double theirs) {
    return mine < theirs ? "lower" : mine > theirs ? "higher" : "equal";
  };
  const double points = 100.0 * (a.accuracy - b.accuracy);
  const double pe = mean_epoch_seconds(p);
  const std::string time =
      pe > 0 ? fmt::format(", {:.2f}× the time per epoch", mean_epoch_seconds(v) / pe) : "";
  return fmt::format(
      "{}'s predictive against {}: NLL {:.4f} vs {:.4f} ({}), ECE {:.4f} vs {:.4f} ({}), accuracy "
      "{:.2f} % vs {:.2f} % ({:+.2f} points){}.",
      v.config.optimizer, p.config.optimizer, a.nll, b.nll, word(a.nll, b.nll), a.ece, b.ece,
      word(a.ece, b.ece), 100.0 * a.accuracy, 100.0 * b.accuracy, points, time);
}

namespace {

void print_comparisons(std::ostream& out, const std::vector<RunResult>& runs) {
  for (const auto& v : runs) {
    if (!v.test.has_predictive) continue;
    for (const auto& p : runs) {
      if (p.test.has_predictive) continue;
      out << comparison_sentence(v, p) << '\n';
    }
  }
}

}  // namespace

void print_table(std::ostream& out, const std::vector<RunResult>& runs) {
  if (!runs.empty() && runs.front().test.task == Task::kRegression) {
    print_regression_table(out, runs);
    return;
  }
  out << fmt::format("{:<9} {:<18} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}\n", "optimizer",
                     "prediction", "accuracy", "NLL", "ECE", "Brier", "entropy", "OOD-AUROC",
                     "s/epoch", "ms/step");
  std::vector<std::string> uncertainty;  // the second table's rows
  for (const auto& run : runs) {
    const double mean_epoch = mean_epoch_seconds(run);
    const auto row = [&](const std::string& mode, const ClassificationMetrics& m,
                         const OodMetrics& ood) {
      // No OOD split (text, tensor and CSV data without x_ood): a dash, not "nan".
      const auto ood_text = [](double v) {
        return std::isfinite(v) ? fmt::format("{:.4f}", v) : std::string("-");
      };
      const auto auroc_text = ood_text(ood.auroc);
      uncertainty.push_back(fmt::format(
          "{:<9} {:<18} {:>8.4f} {:>8.4f} {:>8.4f} {:>8} {:>8}\n",
          run.config.origin.empty() ? run.config.optimizer : std::string("merged"), mode,
          m.adaptive_ece, m.classwise_ece, m.aurc, ood_text(ood.aupr), ood_text(ood.fpr95)));
      out << fmt::format(
          "{:<9} {:<18} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>9} "
          "{:>9.2f} {:>8.2f}\n",
          run.config.origin.empty() ? run.config.optimizer : std::string("merged"), mode,
          m.accuracy, m.nll, m.ece, m.brier, m.entropy, auroc_text, mean_epoch, run.step_ms);
    };
    const std::string predictive = predictive_method(run) == "probit"
                                       ? std::string("predictive (probit)")
                                       : fmt::format("predictive (K={})", run.test.samples);
    row("mean", run.test.mean, run.test.ood_mean);
    if (run.test.has_predictive) row(predictive, run.test.predictive, run.test.ood_predictive);
    if (run.test.temperature_scaled) {  // the post-hoc baseline, T from the validation split
      row(fmt::format("mean, T={:.3g}", run.test.temperature_mean.temperature),
          run.test.scaled_mean, run.test.ood_scaled_mean);
      if (run.test.has_predictive) {
        row(fmt::format("{}, T={:.3g}", predictive, run.test.temperature_predictive.temperature),
            run.test.scaled_predictive, run.test.ood_scaled_predictive);
      }
    }
  }
  out << fmt::format("{:<9} {:<18} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "optimizer", "prediction",
                     "aECE", "cwECE", "AURC", "OOD-AUPR", "FPR95");
  for (const auto& line : uncertainty) out << line;
  for (const auto& run : runs) {
    if (!is_text_data(run.config.data)) continue;
    const auto lm = language_model_json(run);
    out << fmt::format(
        "{:<9} perplexity test {:.4f} (mean) {:.4f} (predictive), validation {:.4f} / {:.4f}; "
        "{:.0f} training tokens/s, {:.0f} evaluation tokens/s\n",
        run.config.optimizer, lm["test_perplexity_mean"].get<double>(),
        lm["test_perplexity_predictive"].get<double>(),
        lm.value("validation_perplexity_mean", std::nan("")),
        lm.value("validation_perplexity_predictive", std::nan("")),
        lm["train_tokens_per_second"].get<double>(),
        lm["evaluation_tokens_per_second"].get<double>());
  }
  for (const auto& run : runs) {
    if (!run.config.origin.empty()) out << fmt::format("merged: {}.\n", run.config.origin);
  }
  print_comparisons(out, runs);
  if (!runs.empty()) {
    const auto& first = runs.front().test;
    out << fmt::format(
        "ECE with {} equal-width bins, aECE with as many equal-mass bins, cwECE classwise; AURC: "
        "area under the risk-coverage curve; OOD-AUROC, OOD-AUPR (OOD positive) and FPR95: "
        "predictive entropy, test set vs {}.\n",
        runs.front().config.ece_bins,
        std::isfinite(first.ood_mean.auroc) ? ood_shift_text(first.ood_shift)
                                            : std::string("none (no OOD split)"));
  }
}

namespace {

// One metric over seeds.
struct Spread {
  std::vector<double> values;
  double mean() const {
    double sum = 0.0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
  double sd() const {  // n − 1; 0 for one value
    if (values.size() < 2) return 0.0;
    const double m = mean();
    double ss = 0.0;
    for (double v : values) ss += (v - m) * (v - m);
    return std::sqrt(ss / static_cast<double>(values.size() - 1));
  }
  std::string text(int digits) const {
    return fmt::format("{:.{}f} ± {:.{}f}", mean(), digits, sd(), digits);
  }
};

const std::vector<std::string>& summary_metrics() {
  // The first seven are the table's (by index); the rest are in the JSON summary only.
  static const std::vector<std::string> names = {
      "accuracy",     "nll",           "ece",  "brier",    "entropy",  "ood_auroc",
      "s_epoch",      "adaptive_ece",  "classwise_ece", "aurc", "ood_aupr", "ood_fpr95"};
  return names;
}

// The metrics of one run in one prediction mode, by summary_metrics()'s names.
std::vector<double> metric_values(const RunResult& r, bool predictive) {
  const auto& m = predictive ? r.test.predictive : r.test.mean;
  const auto& ood = predictive ? r.test.ood_predictive : r.test.ood_mean;
  return {m.accuracy,       m.nll,  m.ece,     m.brier,    m.entropy, ood.auroc,
          mean_epoch_seconds(r), m.adaptive_ece, m.classwise_ece, m.aurc, ood.aupr, ood.fpr95};
}

// spreads[metric] over the seeds for optimizer index i.
std::vector<Spread> spreads_of(const std::vector<std::vector<RunResult>>& by_seed, size_t i,
                               bool predictive) {
  std::vector<Spread> out(summary_metrics().size());
  for (const auto& runs : by_seed) {
    const auto v = metric_values(runs[i], predictive);
    for (size_t k = 0; k < v.size(); ++k) out[k].values.push_back(v[k]);
  }
  return out;
}

}  // namespace

void print_seed_summary(std::ostream& out, const std::vector<std::vector<RunResult>>& by_seed) {
  const auto& first = by_seed.front();
  out << fmt::format("{} seeds ({}…{}), mean ± sd\n", by_seed.size(), first.front().config.seed,
                     by_seed.back().front().config.seed);
  out << fmt::format("{:<9} {:<18} {:>17} {:>17} {:>17} {:>17} {:>17} {:>8}\n", "optimizer",
                     "prediction", "accuracy", "NLL", "ECE", "Brier", "OOD-AUROC", "s/epoch");
  for (size_t i = 0; i < first.size(); ++i) {
    for (const bool predictive : {false, true}) {
      if (predictive && !first[i].test.has_predictive) continue;
      const auto sp = spreads_of(by_seed, i, predictive);
      const std::string mode =
          predictive ? fmt::format("predictive (K={})", first[i].test.samples) : "mean";
      const std::string auroc = std::isfinite(sp[5].mean()) ? sp[5].text(4) : "-";
      out << fmt::format("{:<9} {:<18} {:>17} {:>17} {:>17} {:>17} {:>17} {:>8.2f}\n",
                         first[i].config.optimizer, mode, sp[0].text(4), sp[1].text(4),
                         sp[2].text(4), sp[3].text(4), auroc, sp[6].mean());
    }
  }
  // The uncertainty toolkit's metrics (summary_metrics() 7–11), as in train's second table.
  out << fmt::format("{:<9} {:<18} {:>17} {:>17} {:>17} {:>17} {:>17}\n", "optimizer",
                     "prediction", "aECE", "cwECE", "AURC", "OOD-AUPR", "FPR95");
  for (size_t i = 0; i < first.size(); ++i) {
    for (const bool predictive : {false, true}) {
      if (predictive && !first[i].test.has_predictive) continue;
      const auto sp = spreads_of(by_seed, i, predictive);
      const auto text = [](const Spread& s) {
        return std::isfinite(s.mean()) ? s.text(4) : std::string("-");
      };
      out << fmt::format("{:<9} {:<18} {:>17} {:>17} {:>17} {:>17} {:>17}\n",
                         first[i].config.optimizer,
                         predictive ? fmt::format("predictive (K={})", first[i].test.samples)
                                    : std::string("mean"),
                         text(sp[7]), text(sp[8]), text(sp[9]), text(sp[10]), text(sp[11]));
    }
  }
  const size_t n = by_seed.size();
  for (size_t v = 0; v < first.size(); ++v) {
    if (!first[v].test.has_predictive) continue;
    for (size_t p = 0; p < first.size(); ++p) {
      if (first[p].test.has_predictive) continue;
      const auto a = spreads_of(by_seed, v, true), b = spreads_of(by_seed, p, false);
      const auto lower_in = [&](size_t k) {
        size_t count = 0;
        for (size_t s = 0; s < n; ++s) count += a[k].values[s] < b[k].values[s] ? 1 : 0;
        return count;
      };
      out << fmt::format(
          "{}'s predictive against {} over {} seeds: NLL {:.4f} vs {:.4f} (lower in {} of {}), "
          "ECE {:.4f} vs {:.4f} (lower in {} of {}), accuracy {:.2f} % vs {:.2f} % ({:+.2f} "
          "points, mean), {:.2f}× the time per epoch.\n",
          first[v].config.optimizer, first[p].config.optimizer, n, a[1].mean(), b[1].mean(),
          lower_in(1), n, a[2].mean(), b[2].mean(), lower_in(2), n, 100.0 * a[0].mean(),
          100.0 * b[0].mean(), 100.0 * (a[0].mean() - b[0].mean()), a[6].mean() / b[6].mean());
    }
  }
  out << fmt::format("ECE with {} equal-width bins.\n", first.front().config.ece_bins);
}

nlohmann::json seeds_to_json(const std::vector<std::vector<RunResult>>& by_seed) {
  nlohmann::json runs = nlohmann::json::object(), summary = nlohmann::json::object();
  const auto& first = by_seed.front();
  for (size_t i = 0; i < first.size(); ++i) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& seed_runs : by_seed) list.push_back(run_to_json(seed_runs[i]));
    runs[first[i].config.optimizer] = list;
    nlohmann::json modes = nlohmann::json::object();
    for (const bool predictive : {false, true}) {
      if (predictive && !first[i].test.has_predictive) continue;
      const auto sp = spreads_of(by_seed, i, predictive);
      nlohmann::json metrics = nlohmann::json::object();
      for (size_t k = 0; k < sp.size(); ++k) {
        if (!std::isfinite(sp[k].mean())) continue;
        metrics[summary_metrics()[k]] = {
            {"mean", sp[k].mean()}, {"sd", sp[k].sd()}, {"values", sp[k].values}};
      }
      modes[predictive ? "predictive" : "mean"] = metrics;
    }
    summary[first[i].config.optimizer] = modes;
  }
  return {{"count", by_seed.size()}, {"runs", runs}, {"summary", summary}};
}

void print_ensemble(std::ostream& out, const std::vector<RunResult>& members,
                    const EnsembleEvaluation& e) {
  out << fmt::format("{:<24} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9}\n", "prediction",
                     "accuracy", "NLL", "ECE", "Brier", "entropy", "OOD-AUROC", "s/epoch");
  const auto row = [&out](const std::string& label, const ClassificationMetrics& m, double auroc,
                          double seconds) {
    const auto auroc_text = std::isfinite(auroc) ? fmt::format("{:.4f}", auroc) : "-";
    const auto seconds_text = std::isfinite(seconds) ? fmt::format("{:.2f}", seconds) : "-";
    out << fmt::format("{:<24} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>9} {:>9}\n",
                       label, m.accuracy, m.nll, m.ece, m.brier, m.entropy, auroc_text,
                       seconds_text);
  };
  ClassificationMetrics average;
  double auroc_sum = 0.0, seconds_sum = 0.0;
  for (const auto& r : members) {
    row(fmt::format("{} seed {} (mean)", r.config.optimizer, r.config.seed), r.test.mean,
        r.test.ood_mean.auroc, mean_epoch_seconds(r));
    average.accuracy += r.test.mean.accuracy / members.size();
    average.nll += r.test.mean.nll / members.size();
    average.ece += r.test.mean.ece / members.size();
    average.brier += r.test.mean.brier / members.size();
    average.entropy += r.test.mean.entropy / members.size();
    auroc_sum += r.test.ood_mean.auroc;
    seconds_sum += mean_epoch_seconds(r);
  }
  row("members' average", average, auroc_sum / members.size(), seconds_sum / members.size());
  row(fmt::format("ensemble (M={})", e.members), e.test, e.ood.auroc, seconds_sum);
  if (e.temperature_scaled) {
    row(fmt::format("ensemble, T={:.3g}", e.temperature.temperature), e.scaled,
        e.ood_scaled.auroc, seconds_sum);
  }
  // The uncertainty toolkit's metrics of the ensemble, as in train's second table.
  out << fmt::format("{:<24} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "prediction", "aECE", "cwECE",
                     "AURC", "OOD-AUPR", "FPR95");
  const auto ood_text = [](double v) {
    return std::isfinite(v) ? fmt::format("{:.4f}", v) : std::string("-");
  };
  const auto second = [&](const std::string& label, const ClassificationMetrics& m,
                          const OodMetrics& ood) {
    out << fmt::format("{:<24} {:>8.4f} {:>8.4f} {:>8.4f} {:>8} {:>8}\n", label, m.adaptive_ece,
                       m.classwise_ece, m.aurc, ood_text(ood.aupr), ood_text(ood.fpr95));
  };
  second(fmt::format("ensemble (M={})", e.members), e.test, e.ood);
  if (e.temperature_scaled) {
    second(fmt::format("ensemble, T={:.3g}", e.temperature.temperature), e.scaled, e.ood_scaled);
  }
  out << fmt::format(
      "ECE with {} equal-width bins; the ensemble's s/epoch is the members' sum.\n",
      e.test.ece_bins);
}

nlohmann::json ensemble_to_json(const EnsembleEvaluation& e) {
  nlohmann::json j = {{"members", e.members}, {"test", metrics_to_json(e.test)}};
  add_ood_to_json(j, e.ood);
  if (e.has_validation) j["validation"] = metrics_to_json(e.validation);
  if (e.temperature_scaled) {
    j["temperature_scaled"] = scaled_to_json(e.scaled, e.temperature, e.ood_scaled);
  }
  nlohmann::json bins = nlohmann::json::array();
  for (const auto& b : e.reliability) {
    bins.push_back({{"lower", b.lower}, {"upper", b.upper}, {"count", b.count},
                    {"confidence", b.confidence}, {"accuracy", b.accuracy}});
  }
  j["reliability"] = bins;
  return j;
}

void write_json(const std::string& path, const nlohmann::json& document) {
  if (!path.empty()) blr::cli::write_json_text(path, document.dump(2));
}

}  // namespace blr::torch
