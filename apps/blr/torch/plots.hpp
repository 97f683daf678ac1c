// Plots of training runs drawn with gnuplot (Debian gnuplot-nox): blr writes the data files and a
// gnuplot script into DIR/plot-data/ and runs `gnuplot` on it.
//   DIR/curves.png       training loss, test accuracy and test NLL (at the mean) per epoch
//   DIR/reliability.png  reliability diagram per optimizer: accuracy per confidence bin, at the
//                        mean and with the posterior predictive, against the diagonal
// Without gnuplot the plots are skipped with a note on stderr (the data files are still written).
// gnuplot runs in DIR/plot-data without a shell, and every string goes into a script through
// gnuplot_text.hpp (no path, no control byte; see there why).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "blr/torch/train/trainer.hpp"
#include "gnuplot_text.hpp"

namespace blr::torch {

/// True when a `gnuplot` executable is on PATH.
bool gnuplot_available();

// The pieces every plot command shares (plots here, continual_plot, sensitivity_plots).
/// Writes `text` to `path`; a blr::Error naming the file when it cannot.
void write_text_file(const std::filesystem::path& path, const std::string& text);
/// DIR/plot-data, created; a blr::Error naming it when it cannot be.
std::filesystem::path plot_data_dir(const std::string& dir);
/// Writes `text` to `script` and runs gnuplot on it, in the script's directory and without a shell
/// (its output to script.log); false after a note on `log` naming `what` when gnuplot is missing
/// or fails. The script names its files relative to its own directory.
bool run_gnuplot(const std::filesystem::path& script, const std::string& text,
                 const std::string& what, std::ostream& log);

/// Writes the plots of `runs` into `dir`; returns false (after a note on `log`) when gnuplot is
/// missing or fails. Throws blr::Error only when `dir` cannot be written.
bool write_plots(const std::string& dir, const std::vector<RunResult>& runs, std::ostream& log);

}  // namespace blr::torch
