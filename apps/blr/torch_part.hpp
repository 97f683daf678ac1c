// The LibTorch part of the `blr` tool is a second executable, `blr-torch`, next to `blr`: the
// Eigen commands (infer, table1, multimodal) start without loading LibTorch (about a second on a
// 2-core machine), and `blr <torch command> ...` runs `blr-torch <torch command> ...` in its place
// (exec, same arguments, same process id). The commands of the torch part are listed here once:
// the front shows them in `blr --help` and suggests them for misspellings; the torch part takes
// its commands' one-line summaries and help order from this list.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace blr::cli {

struct PartCommand {
  const char* name;
  int order;            ///< position in --help
  const char* summary;  ///< one line
};

inline constexpr PartCommand kTorchCommands[] = {
    {"optimizers", 39,
     "List every optimizer (BLR and baselines) with its options: key, CLI flag, type, default, "
     "allowed values, meaning."},
    {"train", 40,
     "Train a network (MLP, LeNet-5, ResNet-20, binary MLP, GPT or your TorchScript module) on "
     "Fashion-MNIST, a text corpus or your data (.pt, .csv) with a BLR optimizer or a baseline "
     "(`blr optimizers` lists them and the recipes); report accuracy, NLL, ECE, Brier and OOD "
     "AUROC at the mean and with the posterior predictive."},
    {"eval", 41,
     "Evaluate a checkpoint on its run's test set (Fashion-MNIST or the data it was trained on): "
     "accuracy, NLL, ECE, Brier, entropy and OOD AUROC at the mean and with the posterior "
     "predictive."},
    {"predict", 47,
     "Predict on new data with a checkpoint: per-row class probabilities and predictive entropy "
     "(Monte Carlo or linearised probit predictive), or a regression's predictive mean and sd, "
     "as CSV."},
    {"compare", 42,
     "Train several optimizers on the same task (same data, initialisation and minibatch order) "
     "and print one table: accuracy, NLL, ECE, Brier, OOD AUROC, time."},
    {"ensemble", 45,
     "Train a deep ensemble (M members of one optimizer from seeds s..s+M-1) and score the "
     "average of their predictive distributions: accuracy, NLL, ECE, Brier, OOD AUROC, time; "
     "with --temperature-scaling also after temperature scaling."},
    {"laplace", 43,
     "Fit the post-hoc Laplace posterior of a trained run (diagonal Gauss-Newton or empirical "
     "Fisher, all weights or the last layer, prior precision by the marginal likelihood), save "
     "it for `blr eval`, and score it."},
    {"continual", 46,
     "Learn Fashion-MNIST tasks one after another (split class pairs or permuted pixels): IVON "
     "with each task's posterior as the next prior, AdamW fine-tuning or retraining; accuracy "
     "matrix, average accuracy, forgetting, heat map."},
    {"merge", 44,
     "Merge fine-tuned checkpoints into their base: uncertainty-weighted (curvatures of IVON, "
     "VOGN, Vadam, Laplace, or a diagonal GGN for point estimates), task arithmetic or averaging; "
     "the result is a checkpoint that `blr eval` scores."},
    {"bench", 60, "Measure speed, as ratios to a baseline run in the same process."},
    {"launch", 61,
     "Run a blr command as N data-parallel processes on this machine (ranks over 127.0.0.1, as "
     "torchrun does); a rank that fails stops the others, or with --max-restarts N all restart "
     "from the newest valid checkpoint, as torchrun's elastic agent does."},
};

/// `blr sensitivity` is the front's command for GLMs (apps/blr/cmd_sensitivity.cpp); a command
/// line with `--checkpoint` is about a network and goes to the torch part's command of this name.
inline constexpr PartCommand kTorchSensitivity{
    "sensitivity", 25,
    "Sensitivity of a trained network to each training example (memory-perturbation equation "
    "under its IVON, VOGN, Vadam, Laplace or Adam posterior): scores, leave-one-out estimates, "
    "retraining check, pictures."};

/// True when `blr ARGS` is `blr sensitivity ... --checkpoint ...` (the torch part's command).
bool is_network_sensitivity(int argc, char** argv);

/// The entry of torch command `name` (a name not in the list is a bug: std::logic_error).
const PartCommand& torch_command(std::string_view name);

/// In the front: when argv[1] is a command of the torch part, replaces this process by
/// `blr-torch` (found next to this executable) with the same arguments; returns otherwise. When
/// the torch part is missing, says so in one sentence and exits with status 2.
void run_torch_part_if_asked(int argc, char** argv);

/// In the front: the torch part's commands as entries of `blr --help` (never run: the front
/// hands them over before parsing).
void add_torch_part_placeholders(CLI::App& app);

/// In the front: runs `blr-torch ARGS...` as a child process (stdout and stderr shared) and
/// returns its exit status; −1 when it could not be started (`why` then says why).
int run_torch_part_child(const std::vector<std::string>& args, std::string& why);

}  // namespace blr::cli
