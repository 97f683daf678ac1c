// The accuracy matrix of `blr continual` as a heat map drawn with gnuplot (Debian gnuplot-nox),
// like the training plots (plots.hpp): DIR/continual.png, rows the task just learnt, columns the
// task tested, each cell coloured and labelled with its accuracy in percent; the data and script
// go to DIR/plot-data/. Without gnuplot the image is skipped with a note.
#pragma once

#include <iosfwd>
#include <string>

#include "blr/torch/posterior/continual.hpp"

namespace blr::torch {

/// Writes DIR/continual.png; false (after a note on `log`) when gnuplot is missing or fails.
bool write_continual_heatmap(const std::string& dir, const ContinualResult& result,
                             std::ostream& log);

}  // namespace blr::torch
