// Plots of training runs drawn with gnuplot (Debian gnuplot-nox): blr writes the data files and a
// gnuplot script into DIR/plot-data/ and runs `gnuplot` on it.
//   DIR/curves.png       training loss, test accuracy and test NLL (at the mean) per epoch
//   DIR/reliability.png  reliability diagram per optimizer: accuracy per confidence bin, at the
//                        mean and with the posterior predictive, against the diagonal
// Without gnuplot the plots are skipped with a note on stderr (the data files are still written).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "blr/torch/train/trainer.hpp"

namespace blr::torch {

/// True when a `gnuplot` executable is on PATH.
bool gnuplot_available();

// The pieces every plot command shares (plots here, continual_plot, sensitivity_plots).
/// Writes `text` to `path`; a blr::Error naming the file when it cannot.
void write_text_file(const std::filesystem::path& path, const std::string& text);
/// A shell word: single quotes, a single quote inside closed, escaped and reopened.
std::string shell_word(const std::string& s);
/// A gnuplot string: single quotes, a single quote inside doubled.
std::string gnuplot_string(const std::string& s);
/// DIR/plot-data, created; a blr::Error naming it when it cannot be.
std::filesystem::path plot_data_dir(const std::string& dir);
/// Writes `text` to `script` and runs gnuplot on it (errors to script.log); false after a note on
/// `log` naming `what` when gnuplot is missing or fails.
bool run_gnuplot(const std::filesystem::path& script, const std::string& text,
                 const std::string& what, std::ostream& log);

/// Writes the plots of `runs` into `dir`; returns false (after a note on `log`) when gnuplot is
/// missing or fails. Throws blr::Error only when `dir` cannot be written.
bool write_plots(const std::string& dir, const std::vector<RunResult>& runs, std::ostream& log);

}  // namespace blr::torch
