// Progress of a training run on stderr: a live bar with the ETA when stderr is a terminal, plain
// one-line-per-epoch reports otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "blr/torch/train/trainer.hpp"

namespace blr::torch {

/// True when stderr is a terminal.
bool stderr_is_terminal();

/// One line: the posterior's h and σ quantiles, the share at h₀ and at the clip radius.
std::string describe_posterior(const PosteriorDiagnostics& d);

/// "1:05:03" / "4:07" for a duration in seconds.
std::string format_duration(double seconds);

class ProgressReporter {
 public:
  /// `live`: redraw a bar in place (terminals); otherwise print one line per epoch.
  ProgressReporter(std::ostream& out, bool live);

  /// After each epoch line, a line with what the posterior has learned (posterior/diagnostics.hpp)
  /// and the share of clipped gradients. A run's warning that its posterior has not moved is
  /// printed in any case.
  void set_verbose(bool verbose) { verbose_ = verbose; }

  /// Starts a run of `epochs` epochs of `steps` minibatches, resuming after `done_epochs`.
  void begin(const std::string& label, int64_t epochs, int64_t steps, int64_t done_epochs);
  void step(int64_t epoch, int64_t step, int64_t steps, double loss);
  void epoch(const EpochRecord& record);
  /// A message line (clears the bar first).
  void message(const std::string& line);

  /// Progress of a posterior predictive's draws, with an ETA: a live bar on a terminal, plain
  /// lines at each quarter otherwise. `label` names the run.
  SampleProgress sample_progress(const std::string& label);

  /// Hooks that feed this reporter.
  TrainHooks hooks();

 private:
  using Clock = std::chrono::steady_clock;
  void clear_bar();
  std::ostream& out_;
  bool live_;
  std::string label_;
  int64_t epochs_ = 0, steps_ = 0, done_epochs_ = 0, done_steps_ = 0;
  Clock::time_point start_, last_draw_;
  bool bar_shown_ = false;
  bool verbose_ = false;
  double loss_ema_ = 0.0;
};

}  // namespace blr::torch
