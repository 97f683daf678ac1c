// Reports of training runs: the human table on stdout and the JSON document of --json.
//
// JSON (train and compare alike):
//   { "command": ..., "data": ..., "model": ..., "seed": ..., "epochs": ..., ...,
//     "ood_shift": what the OOD set is (only with one: Fashion-MNIST or a file's x_ood),
//     "omp_wait_policy": "PASSIVE" (the environment's OMP_WAIT_POLICY; null if unset),
//     "optimizers": { "<name>": { "options": {...}, "train_size": N,
//         "epoch_seconds": [...], "step_ms": x, "steps": n,
//         "history": [{"epoch", "seconds", "train_loss", "learning_rate", "test_accuracy",
//                      "test_nll", ["validation_accuracy", "validation_nll"], ["clipped_share"],
//                      ["posterior": posterior/diagnostics.hpp's JSON], ["warning"]}, ...],
//         "test": { "mean": {accuracy, nll, ece, ece_bins, ece20, brier, entropy, count,
//                            adaptive_ece, classwise_ece, aurc},
//                   "predictive": {... same keys ..., "samples": K},
//                   "ood": {"shift": "inverted" | "x_ood", "auroc_mean": a,
//                           "auroc_predictive": b, "aupr_mean", "aupr_predictive",
//                           "fpr95_mean", "fpr95_predictive"},
//                   "posterior_std_mean": s (variational only) },
//         "checkpoint": path (if written) } } }
// For point-estimate optimizers (adamw, sgd) "predictive" repeats "mean" with "samples": 0.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

#include "blr/torch/predictive/ensemble.hpp"
#include "blr/torch/train/trainer.hpp"

namespace blr::torch {

nlohmann::json metrics_to_json(const ClassificationMetrics& m);
nlohmann::json run_to_json(const RunResult& run);
/// The whole document for a list of runs that share one configuration apart from the optimizer.
nlohmann::json report_to_json(const std::string& command, const std::vector<RunResult>& runs);

/// "ivon's predictive against adamw: NLL a vs b (lower), ECE ... (lower), accuracy x % vs y %
/// (+d points), r× the time per epoch.": a run with a posterior predictive (`v`) against a point
/// estimate (`p`) at its mean, in words.
std::string comparison_sentence(const RunResult& v, const RunResult& p);

/// One row per optimizer and prediction mode: accuracy, NLL, ECE, Brier, entropy, OOD AUROC,
/// seconds per epoch and milliseconds per step; then comparison_sentence for each pair of a run
/// with a predictive and a point estimate.
void print_table(std::ostream& out, const std::vector<RunResult>& runs);

/// `blr compare --seeds N`: `by_seed[k]` are the runs of seed k, one per optimizer in the same
/// order. One row per optimizer and prediction with the mean ± standard deviation (n − 1) over
/// the seeds of accuracy, NLL, ECE, Brier, entropy, OOD AUROC and s/epoch; then, for each run with
/// a predictive against each point estimate, the comparison in words with the number of seeds in
/// which it holds.
void print_seed_summary(std::ostream& out, const std::vector<std::vector<RunResult>>& by_seed);
/// {"count": N, "runs": {optimizer: [run_to_json per seed]}, "summary": {optimizer: {mean|predictive:
/// {metric: {"mean", "sd", "values"}}}}}.
nlohmann::json seeds_to_json(const std::vector<std::vector<RunResult>>& by_seed);

/// `blr ensemble`'s table: each member at its mean (seed, accuracy, NLL, ECE, Brier, entropy, OOD
/// AUROC, s/epoch), the members' average, then the ensemble (and after temperature scaling).
void print_ensemble(std::ostream& out, const std::vector<RunResult>& members,
                    const EnsembleEvaluation& ensemble);
nlohmann::json ensemble_to_json(const EnsembleEvaluation& ensemble);

/// Writes `document` to `path` (pretty-printed); "-" writes to stdout, "" writes nothing.
void write_json(const std::string& path, const nlohmann::json& document);

}  // namespace blr::torch
