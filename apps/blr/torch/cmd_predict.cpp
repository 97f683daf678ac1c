// `blr predict`: a trained network's predictive distribution on new data (a torch.save file
// with key x, or a CSV table with the training table's feature columns), one row per input:
//
//   classifier  row,p_0,…,p_{C−1},predicted,entropy
//   regression  row,mean_0,…,mean_{D−1},sd_0,…,sd_{D−1}
//
// p_k the predictive probabilities (blr/torch/predictive/new_data.hpp: the Monte Carlo predictive
// with K draws, the linearised probit predictive of a Gaussian posterior, or the prediction at
// the mean for a point estimate), `predicted` argmax_k p_k, `entropy` −Σ_k p_k log p_k in nats;
// for a regression, the predictive's mean and standard deviation per output in the targets'
// units (the fitted noise and the spread of the K draws).
// The inputs are transformed as the run's own (blr/torch/data/new_inputs.hpp). CSV on stdout, or
// in --out FILE.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "../command.hpp"
#include "../torch_part.hpp"
#include "blr/core/error.hpp"
#include "blr/io/output_file.hpp"
#include "blr/torch/data/new_inputs.hpp"
#include "blr/torch/predictive/new_data.hpp"
#include "blr/torch/train/trainer.hpp"
#include "commands.hpp"

namespace {

struct PredictFlags {
  std::string checkpoint;
  std::string data;
  std::string out;
  int samples = 0;            ///< 0 when --samples is absent: the checkpoint's K
  bool samples_given = false;
  std::string predictive = "monte-carlo";
  blr::torch::RunSettings settings;
};

// The predictions as CSV text, 17 significant digits (a double read back is the same double).
std::string prediction_csv(const blr::torch::NewDataPrediction& p) {
  const auto lp = p.log_probs;
  const int64_t n = lp.size(0), c = lp.size(1);
  const double* v = lp.data_ptr<double>();
  const double* h = p.entropy.data_ptr<double>();
  std::ostringstream out;
  out << "row";
  for (int64_t k = 0; k < c; ++k) out << ",p_" << k;
  out << ",predicted,entropy\n";
  for (int64_t i = 0; i < n; ++i) {
    out << i;
    int64_t best = 0;
    for (int64_t k = 0; k < c; ++k) {
      out << fmt::format(",{:.17g}", std::exp(v[i * c + k]));
      if (v[i * c + k] > v[i * c + best]) best = k;
    }
    out << fmt::format(",{},{:.17g}\n", best, h[i]);
  }
  std::string text = out.str();
  text.pop_back();  // the writers add the last newline
  return text;
}

// The regression predictions as CSV text, 17 significant digits.
std::string regression_csv(const blr::torch::NewDataRegression& p) {
  const int64_t n = p.mean.size(0), d = p.mean.size(1);
  const double* m = p.mean.data_ptr<double>();
  const double* s = p.sd.data_ptr<double>();
  std::ostringstream out;
  out << "row";
  for (int64_t k = 0; k < d; ++k) out << ",mean_" << k;
  for (int64_t k = 0; k < d; ++k) out << ",sd_" << k;
  out << '\n';
  for (int64_t i = 0; i < n; ++i) {
    out << i;
    for (int64_t k = 0; k < d; ++k) out << fmt::format(",{:.17g}", m[i * d + k]);
    for (int64_t k = 0; k < d; ++k) out << fmt::format(",{:.17g}", s[i * d + k]);
    out << '\n';
  }
  std::string text = out.str();
  text.pop_back();  // the writers add the last newline
  return text;
}

std::string describe(const std::string& method, int samples) {
  return method == "monte-carlo" ? fmt::format("Monte Carlo predictive (K={})", samples)
         : method == "probit" ? std::string("linearised probit predictive")
                              : std::string("at the mean (no posterior)");
}

void write_predictions(const PredictFlags& f, const std::string& csv) {
  if (f.out.empty()) {
    std::cout << csv << '\n';  // main() checks stdout's writes at its close
  } else {
    blr::io::write_output_file(f.out, csv + '\n', "the predictions file");
  }
}

// A regression run: the targets' standardisation from the data set's statistics.
int predict_regression(const PredictFlags& f, const blr::torch::LoadedRun& run,
                       blr::torch::Trainer& trainer, const at::Tensor& inputs) {
  using namespace blr::torch;
  const auto d = static_cast<size_t>(run.data->outputs);
  const auto& st = run.data->statistics;
  const auto mean = st.value("target_mean", std::vector<double>(d, 0.0));
  const auto sd = st.value("target_std", std::vector<double>(d, 1.0));
  const auto p = predict_new_regression(trainer.model(), trainer.optimizer(), inputs,
                                        run.config.test_samples,
                                        parse_predictive_method(f.predictive), mean, sd,
                                        trainer.noise_std());
  if (!f.settings.quiet) {
    std::cerr << fmt::format("blr predict: {} with {}: {} rows of '{}', {} outputs, {}\n",
                             trainer.result().model_description, run.config.optimizer,
                             p.mean.size(0), f.data, p.mean.size(1), describe(p.method, p.samples));
  }
  write_predictions(f, regression_csv(p));
  return 0;
}

int run_predict(const PredictFlags& f) {
  using namespace blr::torch;
  apply_run_settings(f.settings);
  const auto method = parse_predictive_method(f.predictive);
  blr::check(!f.samples_given || (f.samples >= 1 && f.samples <= 100000),
             fmt::format("Option '--samples' must lie in [1, 100000]; got {}.", f.samples));
  const auto device = parse_device(f.settings.device);
  const LoadedRun run = load_run(f.checkpoint, f.samples, "", 0);
  const auto inputs = read_new_inputs(f.data, run.config, *run.data);
  Trainer trainer(run.config, run.data, device);
  trainer.restore(run.checkpoint);
  if (run.data->task == Task::kRegression) return predict_regression(f, run, trainer, inputs.to(device));
  const auto p = predict_new_data(trainer.model(), trainer.optimizer(), inputs.to(device),
                                  run.config.test_samples, method);
  if (!f.settings.quiet) {
    std::cerr << fmt::format("blr predict: {} with {}: {} rows of '{}', {} classes, {}\n",
                             trainer.result().model_description, run.config.optimizer,
                             p.log_probs.size(0), f.data, p.log_probs.size(1),
                             describe(p.method, p.samples));
  }
  write_predictions(f, prediction_csv(p));
  return 0;
}

void setup_predict(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("predict", blr::cli::torch_command("predict").summary);
  auto f = std::make_shared<PredictFlags>();
  cmd->add_option("--checkpoint", f->checkpoint, "Checkpoint (.ckpt) of blr train (required).");
  cmd->add_option("--data", f->data,
                  "New inputs: a torch.save file with key x, or a CSV table with the training "
                  "table's feature columns (required).");
  cmd->add_option("--out", f->out, "Write the predictions (CSV) to this file (default: stdout).")
      ->type_name("FILE");  // one file, not a directory (preflight.hpp)
  cmd->add_option("--samples", f->samples,
                  "Posterior draws K of the Monte Carlo predictive (default: the checkpoint's).");
  cmd->add_option("--predictive", f->predictive,
                  "monte-carlo (K posterior draws) or probit (linearised probit predictive of a "
                  "Gaussian posterior of a classifier: IVON, VOGN, Vadam, Laplace).")
      ->capture_default_str();
  cmd->add_option("--threads", f->settings.threads, "LibTorch threads (0 = all cores).");
  cmd->add_option("--device", f->settings.device, "cpu, cuda or cuda:N.")->capture_default_str();
  cmd->add_flag("--quiet", f->settings.quiet, "No summary line on stderr.");
  cmd->callback([f, cmd, &exit_code] {
    f->samples_given = cmd->count("--samples") > 0;  // absent: the checkpoint's K (0 below)
    blr::check(!f->checkpoint.empty(), "blr predict needs --checkpoint FILE (a .ckpt of blr train).");
    blr::check(!f->data.empty(),
               "blr predict needs --data FILE (a torch.save file with key x, or a CSV table).");
    exit_code = run_predict(*f);
  });
}

BLR_REGISTER_COMMAND("predict", blr::cli::torch_command("predict").order, setup_predict);

}  // namespace
