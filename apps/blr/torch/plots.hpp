// Plots of training runs drawn with gnuplot (Debian gnuplot-nox): blr writes the data files and a
// gnuplot script into DIR/plot-data/ and runs `gnuplot` on it.
//   DIR/curves.png       training loss, test accuracy and test NLL (at the mean) per epoch
//   DIR/reliability.png  reliability diagram per optimizer: accuracy per confidence bin, at the
//                        mean and with the posterior predictive, against the diagonal
// Without gnuplot the plots are skipped with a note on stderr (the data files are still written).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "blr/torch/train/trainer.hpp"

namespace blr::torch {

/// True when a `gnuplot` executable is on PATH.
bool gnuplot_available();

/// Writes the plots of `runs` into `dir`; returns false (after a note on `log`) when gnuplot is
/// missing or fails. Throws blr::Error only when `dir` cannot be written.
bool write_plots(const std::string& dir, const std::vector<RunResult>& runs, std::ostream& log);

}  // namespace blr::torch
