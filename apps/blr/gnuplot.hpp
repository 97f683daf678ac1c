// Running gnuplot (Debian gnuplot-nox) for the plots blr draws: the data files and a script go
// into DIR/plot-data/, and `gnuplot` runs there without a shell (no name is ever read as a
// command), its output to the script's .log. Without gnuplot a plot is skipped with a note naming
// it (the data and the script are still written). Every string of a script goes through
// gnuplot_text.hpp. Used by the training plots (torch/plots.hpp) and `blr infer --out`
// (infer_plots.hpp).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

namespace blr::cli {

/// True when a `gnuplot` executable is on PATH.
bool gnuplot_available();
/// Writes `text` to `path`; a blr::Error naming the file when it cannot.
void write_text_file(const std::filesystem::path& path, const std::string& text);
/// DIR/plot-data, created; a blr::Error naming it when it cannot be.
std::filesystem::path plot_data_dir(const std::string& dir);
/// Writes `text` to `script` and runs gnuplot on it, in the script's directory and without a shell
/// (its output to script.log); false after a note on `log` naming `what` when gnuplot is missing
/// or fails. The script names its files relative to its own directory.
bool run_gnuplot(const std::filesystem::path& script, const std::string& text,
                 const std::string& what, std::ostream& log);

}  // namespace blr::cli
