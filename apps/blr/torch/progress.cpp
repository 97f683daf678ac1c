#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>

namespace blr::torch {

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

ProgressReporter::ProgressReporter(std::ostream& out, bool live) : out_(out), live_(live) {}

void ProgressReporter::begin(const std::string& label, int64_t epochs, int64_t steps,
                             int64_t done_epochs) {
  label_ = label;
  epochs_ = epochs;
  steps_ = steps;
  done_epochs_ = done_epochs;
  done_steps_ = 0;
  start_ = Clock::now();
  last_draw_ = Clock::time_point{};
  loss_ema_ = 0.0;
  if (!live_) {
    out_ << fmt::format(
        "{}: {} epochs of {} steps{}\n", label_, epochs_, steps_,
        done_epochs_ > 0 ? fmt::format(" (resuming after epoch {})", done_epochs_) : std::string());
    out_.flush();
  }
}

void ProgressReporter::step(int64_t epoch, int64_t step, int64_t steps, double loss) {
  ++done_steps_;
  loss_ema_ = done_steps_ == 1 ? loss : 0.95 * loss_ema_ + 0.05 * loss;
  if (!live_) return;
  const auto now = Clock::now();
  if (step != steps && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const int64_t total = (epochs_ - done_epochs_) * steps_;
  const double eta =
      elapsed / static_cast<double>(done_steps_) * static_cast<double>(total - done_steps_);
  const double fraction = static_cast<double>(step) / static_cast<double>(steps);
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  out_ << fmt::format("\r\033[K{} epoch {}/{} [{}] {:3.0f}% loss {:.4f} ETA {}", label_, epoch,
                      epochs_, bar, 100.0 * fraction, loss_ema_, format_duration(eta));
  out_.flush();
  bar_shown_ = true;
}

void ProgressReporter::clear_bar() {
  if (bar_shown_) {
    out_ << "\r\033[K";
    bar_shown_ = false;
  }
}

void ProgressReporter::epoch(const EpochRecord& r) {
  clear_bar();
  std::string validation;
  if (std::isfinite(r.validation_accuracy)) {
    validation =
        fmt::format(", validation acc {:.4f} nll {:.4f}", r.validation_accuracy, r.validation_nll);
  } else if (std::isfinite(r.validation_rmse)) {
    validation =
        fmt::format(", validation rmse {:.4g} nll {:.4f}", r.validation_rmse, r.validation_nll);
  }
  const std::string test = std::isfinite(r.test_rmse)
                               ? fmt::format("test rmse {:.4g} nll {:.4f}", r.test_rmse, r.test_nll)
                               : fmt::format("test acc {:.4f} nll {:.4f}", r.test_accuracy, r.test_nll);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const int64_t left = epochs_ - r.epoch;
  const int64_t run = r.epoch - done_epochs_;
  const double eta = run > 0 ? elapsed / static_cast<double>(run) * static_cast<double>(left) : 0;
  out_ << fmt::format(
      "{} epoch {}/{}: loss {:.4f}, lr {:.3g}, {}{} "
      "({:.1f} s{})\n",
      label_, r.epoch, epochs_, r.train_loss, r.learning_rate, test, validation, r.seconds, left > 0 ? ", ETA " + format_duration(eta) : std::string());
  if (verbose_) {
    if (r.posterior) out_ << fmt::format("{}   {}\n", label_, describe_posterior(*r.posterior));
    if (std::isfinite(r.clipped_share)) {
      out_ << fmt::format("{}   gradient norm clipped in {:.1f} % of the gradients\n", label_,
                          100.0 * r.clipped_share);
    }
  }
  if (!r.warning.empty()) out_ << fmt::format("blr: warning: {}\n", r.warning);
  out_.flush();
}

std::string describe_posterior(const PosteriorDiagnostics& d) {
  const auto& h = d.curvature_quantiles;
  const auto& s = d.sigma_quantiles;
  std::string clipped;
  if (std::isfinite(d.share_decaying)) {
    clipped += fmt::format(", {:.1f} % at h₀β₂ᵗ", 100.0 * d.share_decaying);
  }
  if (std::isfinite(d.share_clipped)) {
    clipped += fmt::format(", {:.1f} % of the steps at the clip radius", 100.0 * d.share_clipped);
  }
  // levels 0, 1 %, 10 %, 50 %, 90 %, 99 %, 100 %
  return fmt::format(
      "posterior: h 1/50/99 % {:.3g} / {:.3g} / {:.3g}, σ 1/50/99 % {:.3g} / {:.3g} / {:.3g}, "
      "{:.1f} % of h within 1 % of h₀ = {:g}{}",
      h[1], h[3], h[5], s[1], s[3], s[5], 100.0 * d.share_at_initial, d.initial_curvature, clipped);
}

void ProgressReporter::message(const std::string& line) {
  clear_bar();
  out_ << line << '\n';
  out_.flush();
}

SampleProgress ProgressReporter::sample_progress(const std::string& label) {
  const auto start = std::make_shared<Clock::time_point>(Clock::now());
  const auto last = std::make_shared<Clock::time_point>();
  return [this, label, start, last](int done, int samples) {
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - *start).count();
    const double eta = elapsed / done * (samples - done);
    if (live_) {
      if (done != samples && now - *last < std::chrono::milliseconds(100)) return;
      *last = now;
      out_ << fmt::format("\r\033[K{}: predictive, sample {}/{} ETA {}", label, done, samples,
                          format_duration(eta));
      bar_shown_ = true;
      if (done == samples) clear_bar();
    } else {
      // Plain lines at each quarter of the draws (and the last).
      const int quarter = std::max(1, samples / 4);
      if (done % quarter != 0 && done != samples) return;
      out_ << fmt::format("{}: predictive, sample {}/{} ({:.1f} s{})\n", label, done, samples,
                          elapsed, done < samples ? ", ETA " + format_duration(eta) : "");
    }
    out_.flush();
  };
}

TrainHooks ProgressReporter::hooks() {
  TrainHooks h;
  h.on_step = [this](int64_t e, int64_t s, int64_t n, double loss) { step(e, s, n, loss); };
  h.on_epoch = [this](const EpochRecord& r) { epoch(r); };
  return h;
}

}  // namespace blr::torch
