#include "continual_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "blr/core/error.hpp"
#include "plots.hpp"

namespace blr::torch {
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  check(static_cast<bool>(f), fmt::format("Cannot write '{}'.", path.string()));
}

// A gnuplot string: single quotes, a single quote inside doubled.
std::string gp_text(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

// A shell word: single quotes, a single quote inside closed, escaped and reopened.
std::string shell_word(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

bool write_continual_heatmap(const std::string& dir, const ContinualResult& result,
                             std::ostream& log) {
  const fs::path out(dir);
  const fs::path data = out / "plot-data";
  std::error_code ec;
  fs::create_directories(data, ec);
  check(!ec, fmt::format("Cannot create the plot directory '{}': {}.", data.string(),
                         ec.message()));
  const size_t n = result.accuracy.size();
  // One line per cell: column (task tested), row (after task), accuracy in percent.
  std::ostringstream cells;
  cells << "# tested_task after_task accuracy_percent\n";
  for (size_t t = 0; t < n; ++t) {
    for (size_t j = 0; j <= t; ++j) {
      cells << fmt::format("{} {} {:.2f}\n", j + 1, t + 1, 100.0 * result.accuracy[t][j]);
    }
  }
  const fs::path cells_file = data / "continual-accuracy.dat";
  write_text(cells_file, cells.str());

  std::ostringstream gp;
  const int size = 220 + 90 * static_cast<int>(n);
  gp << fmt::format("set terminal pngcairo size {},{} font ',10'\n", size + 120, size);
  gp << "set output " << gp_text((out / "continual.png").string()) << "\n";
  gp << "set title " << gp_text(fmt::format("{}: {} tasks, accuracy (%) at the mean",
                                            result.config.method(), result.config.tasks))
     << "\n";
  gp << fmt::format("set xrange [0.5:{}.5]\nset yrange [{}.5:0.5]\n", n, n);
  gp << "set xlabel 'task tested'\nset ylabel 'after training on task'\n";
  // Colour range: from the lowest accuracy (rounded down to 10 %) to 100 %, red to white to blue.
  double lowest = 100.0;
  for (const auto& row : result.accuracy) {
    for (double a : row) lowest = std::min(lowest, 100.0 * a);
  }
  const double floor10 = std::max(0.0, 10.0 * std::floor(lowest / 10.0 - 1e-9));
  gp << fmt::format("set xtics 1\nset ytics 1\nset size ratio 1\nset cbrange [{}:100]\n", floor10);
  gp << "set cblabel 'accuracy (%)'\n";
  gp << "set palette defined (0 '#b2182b', 1 '#f7f7f7', 2 '#2166ac')\nunset key\n";
  gp << "set style fill solid 1.0 noborder\n";
  const std::string file = gp_text(cells_file.string());
  gp << "plot " << file << " using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, " << file
     << " using 1:2:(sprintf('%.1f', $3)) with labels font ',10'\n";
  const fs::path script = data / "continual.gp";
  write_text(script, gp.str());
  if (!gnuplot_available()) {
    log << "blr: note: gnuplot is not installed, so no heat map was drawn (the data and the "
           "script are in "
        << data.string() << "; install gnuplot-nox to get the PNG image).\n";
    return false;
  }
  const fs::path errors = data / "gnuplot-continual.log";
  const int status = std::system(
      ("gnuplot " + shell_word(script.string()) + " > " + shell_word(errors.string()) + " 2>&1")
          .c_str());
  if (status != 0) {
    log << "blr: note: gnuplot failed (see " << errors.string() << "); no heat map was drawn.\n";
    return false;
  }
  return true;
}

}  // namespace blr::torch
