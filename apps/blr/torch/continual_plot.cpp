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


bool write_continual_heatmap(const std::string& dir, const ContinualResult& result,
                             std::ostream& log) {
  const fs::path data = plot_data_dir(dir);
  const size_t n = result.accuracy.size();
  // One line per cell: column (task tested), row (after task), accuracy in percent.
  std::ostringstream cells;
  cells << "# tested_task after_task accuracy_percent\n";
  for (size_t t = 0; t < n; ++t) {
    for (size_t j = 0; j <= t; ++j) {
      cells << fmt::format("{} {} {:.2f}\n", j + 1, t + 1, 100.0 * result.accuracy[t][j]);
    }
  }
  const std::string cells_file = "continual-accuracy.dat";
  write_text_file(data / cells_file, cells.str());

  std::ostringstream gp;
  const int size = 220 + 90 * static_cast<int>(n);
  gp << fmt::format("set terminal pngcairo size {},{} font ',10'\n", size + 120, size);
  gp << "set output " << gnuplot_string("../continual.png") << "\n";
  gp << "set title " << gnuplot_string(fmt::format("{}: {} tasks, accuracy (%) at the mean",
                                            result.config.method(), result.config.tasks))
     << " noenhanced\n";
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
  const std::string file = gnuplot_string(cells_file);
  gp << "plot " << file << " using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, " << file
     << " using 1:2:(sprintf('%.1f', $3)) with labels font ',10'\n";
  return run_gnuplot(data / "continual.gp", gp.str(), "the heat map", log);
}

}  // namespace blr::torch
