// How text goes into the gnuplot scripts blr writes (torch/plots.hpp, torch/sensitivity_plots.hpp,
// torch/continual_plot.hpp, infer_plots.hpp): every string passes through here, so that no name — a path, a data set's
// or a model's description, an optimizer's name, all of which a checkpoint stores and a crafted
// checkpoint can set — runs anything when gnuplot reads the script.
//
// gnuplot reads a script line by line: a line break inside a string ends the command, and a next
// line that starts with `!` runs in a shell (the reliability audit's D1). Inside single quotes
// gnuplot substitutes nothing — no backslash escapes, no `backquoted` commands, no @macros — and a
// single quote is written twice. So text goes in single-quoted with every control byte (0x00–0x1f,
// 0x7f) replaced by '?'. File names stay out of the scripts: gnuplot runs in DIR/plot-data, started
// without a shell (run_gnuplot, plots.hpp), the scripts name their files relative to it, and a name
// that becomes part of a file's name (an optimizer's) goes through plot_file_stem first.
#pragma once

#include <string>
#include <string_view>

namespace blr::cli {

/// `text` with every control byte (0x00–0x1f, 0x7f) replaced by '?'.
std::string without_control_bytes(std::string_view text);

/// A gnuplot string literal of `text`: single quotes, control bytes replaced by '?', a single
/// quote inside doubled.
std::string gnuplot_string(std::string_view text);

/// `name` as part of a file name: letters, digits, '.', '-', '+' and '_' kept, every other byte
/// replaced by '_' (so no '/', no control byte, no quote), cut to 64 bytes; "_" when `name` is
/// empty.
std::string plot_file_stem(std::string_view name);

}  // namespace blr::cli
