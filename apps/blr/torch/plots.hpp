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
#include "../gnuplot.hpp"
#include "../gnuplot_text.hpp"

namespace blr::torch {

// The pieces every plot command shares (gnuplot.hpp, gnuplot_text.hpp), by their short names.
using blr::cli::gnuplot_available;
using blr::cli::gnuplot_string;
using blr::cli::plot_data_dir;
using blr::cli::plot_file_stem;
using blr::cli::run_gnuplot;
using blr::cli::without_control_bytes;
using blr::cli::write_text_file;

/// Writes the plots of `runs` into `dir`; returns false (after a note on `log`) when gnuplot is
/// missing or fails. Throws blr::Error only when `dir` cannot be written.
bool write_plots(const std::string& dir, const std::vector<RunResult>& runs, std::ostream& log);

}  // namespace blr::torch
