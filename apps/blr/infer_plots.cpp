// The pictures of `blr infer --out DIR` (infer_plots.hpp).
#include "infer_plots.hpp"

#include <fmt/format.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <ostream>
#include <sstream>

#include "gnuplot.hpp"
#include "gnuplot_text.hpp"

namespace blr::cli {
namespace {

namespace fs = std::filesystem;

/// A name as a double-quoted field of a gnuplot data file (control bytes and '"' as '?').
std::string data_string(const std::string& text) {
  std::string out = without_control_bytes(text);
  for (char& c : out) {
    if (c == '"') c = '?';
  }
  return "\"" + out + "\"";
}

/// A number for a data file; NaN (missing) as gnuplot's "NaN".
std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.10g}", v) : "NaN"; }

std::string percent(double level) { return fmt::format("{:g} %", 100 * level); }

const char* kTerminal = "set terminal pngcairo size 900,600 noenhanced font ',10'\n";

bool draw(const fs::path& data, const std::string& name, const std::string& script,
          const std::string& what, std::ostream& log) {
  return run_gnuplot(data / (name + ".gp"), script, what, log);
}

bool forest(const fs::path& data, const ForestPlot& p, std::ostream& log) {
  // The intercept's scale is the response's, not a feature's: it would squeeze every other
  // interval to a dot, so it is left out (the tables and the JSON have it).
  std::vector<Index> shown;
  for (Index i = 0; i < p.mean.size(); ++i)
    if (p.names[static_cast<size_t>(i)] != "(intercept)") shown.push_back(i);
  if (shown.empty()) {
    log << "blr: note: the model has no coefficient but the intercept; coefficients.png not "
           "drawn.\n";
    return false;
  }
  std::ostringstream d;
  d << "# index name mean lower upper\n";
  const Index k = static_cast<Index>(shown.size());
  for (Index r = 0; r < k; ++r) {
    const Index i = shown[static_cast<size_t>(r)];
    d << (k - r) << ' ' << data_string(p.names[static_cast<size_t>(i)]) << ' ' << num(p.mean[i])
      << ' ' << num(p.lower[i]) << ' ' << num(p.upper[i]) << '\n';
  }
  write_text_file(data / "coefficients.dat", d.str());
  std::ostringstream s;
  s << kTerminal << "set output '../coefficients.png'\n"
    << "set title " << gnuplot_string(p.title) << "\n"
    << "set xlabel " << gnuplot_string(fmt::format("posterior mean and {} credible interval{}",
                                                   percent(p.level), p.note))
    << "\nset yrange [0.5:" << k + 0.5 << "]\nset grid xtics\nset key off\n"
    << "set arrow from 0, graph 0 to 0, graph 1 nohead dt 2 lc 'grey40'\n"
    << "plot 'coefficients.dat' using 3:1:4:5:ytic(2) with xerrorbars pt 7 ps 1 lc 'blue'\n";
  return draw(data, "coefficients", s.str(), "coefficients.png (forest plot)", log);
}

bool series(const fs::path& data, const SeriesPlot& p, std::ostream& log) {
  std::ostringstream d;
  d << "# t y filtered smoothed lower upper\n";
  for (Index t = 0; t < p.y.size(); ++t) {
    d << t + 1 << ' ' << num(p.y[t]) << ' ' << num(p.filtered_mean[t]) << ' '
      << num(p.smoothed_mean[t]) << ' ' << num(p.smoothed_lower[t]) << ' '
      << num(p.smoothed_upper[t]) << '\n';
  }
  write_text_file(data / "series.dat", d.str());
  std::ostringstream s;
  s << kTerminal << "set output '../series.png'\n"
    << "set title " << gnuplot_string(p.title) << "\nset xlabel 'step t'\nset grid\n"
    << "set key outside top center horizontal\n"
    << "plot 'series.dat' using 1:5:6 with filledcurves fs transparent solid 0.25 lc 'blue' title "
    << gnuplot_string(fmt::format("smoothed {} band", percent(p.level)))
    << ", '' using 1:4 with lines lw 2 lc 'blue' title 'smoothed mean'"
    << ", '' using 1:3 with lines dt 2 lc 'red' title 'filtered mean'"
    << ", '' using 1:2 with points pt 7 ps 0.5 lc 'black' title 'observed'\n";
  return draw(data, "series", s.str(), "series.png (filtered and smoothed series)", log);
}

bool gp_curve(const fs::path& data, const GpPlot& p, std::ostream& log) {
  std::ostringstream g;
  g << "# x mean lower upper predictive_lower predictive_upper\n";
  for (Index i = 0; i < p.grid.size(); ++i) {
    g << num(p.grid[i]) << ' ' << num(p.mean[i]) << ' ' << num(p.lower[i]) << ' '
      << num(p.upper[i]) << ' '
      << num(p.predictive_lower.size() ? p.predictive_lower[i] : NAN) << ' '
      << num(p.predictive_upper.size() ? p.predictive_upper[i] : NAN) << '\n';
  }
  write_text_file(data / "gp_grid.dat", g.str());
  std::ostringstream d;
  for (Index i = 0; i < p.x.rows(); ++i) d << num(p.x(i, 0)) << ' ' << num(p.y[i]) << '\n';
  write_text_file(data / "gp_data.dat", d.str());
  std::ostringstream s;
  s << kTerminal << "set output '../gp.png'\n"
    << "set title " << gnuplot_string(p.title) << "\nset xlabel " << gnuplot_string(p.inputs[0])
    << "\nset ylabel "
    << gnuplot_string(p.classification ? fmt::format("p({} = 1)", p.response) : p.response)
    << "\nset grid\nset key outside top center horizontal\n";
  if (p.classification) s << "set yrange [-0.05:1.05]\n";
  s << "plot ";
  if (!p.classification) {
    s << "'gp_grid.dat' using 1:5:6 with filledcurves fs transparent solid 0.12 lc 'blue' title "
      << gnuplot_string(fmt::format("predictive of y, {}", percent(p.level))) << ", ";
  }
  s << "'gp_grid.dat' using 1:3:4 with filledcurves fs transparent solid 0.3 lc 'blue' title "
    << gnuplot_string(fmt::format("{} band", percent(p.level)))
    << ", '' using 1:2 with lines lw 2 lc 'blue' title "
    << (p.classification ? "'predictive probability'" : "'posterior mean of f'")
    << ", 'gp_data.dat' using 1:2 with points pt 7 ps 0.6 lc 'black' title 'training data'\n";
  return draw(data, "gp", s.str(), "gp.png (GP posterior)", log);
}

bool gp_surface(const fs::path& data, const GpPlot& p, std::ostream& log) {
  std::ostringstream g;
  for (Index r = 0; r < p.grid_y.size(); ++r) {
    for (Index c = 0; c < p.grid_x.size(); ++c)
      g << num(p.grid_x[c]) << ' ' << num(p.grid_y[r]) << ' ' << num(p.surface(r, c)) << '\n';
    g << '\n';
  }
  write_text_file(data / "gp_surface.dat", g.str());
  std::ostringstream d;
  for (Index i = 0; i < p.x.rows(); ++i)
    d << num(p.x(i, 0)) << ' ' << num(p.x(i, 1)) << ' ' << num(p.y[i]) << '\n';
  write_text_file(data / "gp_data.dat", d.str());
  std::ostringstream s;
  s << kTerminal;
  if (p.classification) {
    // The 0.5 contour as a table first, then drawn over the map.
    s << "set contour base\nset cntrparam levels discrete 0.5\nunset surface\nset view map\n"
      << "set table 'gp_contour.dat'\nsplot 'gp_surface.dat' using 1:2:3 with lines\n"
      << "unset table\nunset contour\nset surface\n";
  }
  s << "set output '../gp.png'\nset title " << gnuplot_string(p.title) << "\nset xlabel "
    << gnuplot_string(p.inputs[0]) << "\nset ylabel " << gnuplot_string(p.inputs[1])
    << "\nset cblabel "
    << gnuplot_string(p.classification ? fmt::format("p({} = 1)", p.response)
                                       : fmt::format("posterior mean of f ({})", p.response))
    << "\nset palette defined (0 '#2166ac', 0.5 '#f7f7f7', 1 '#b2182b')\n"
    << "set key outside top center horizontal\nset size ratio -1\n";
  if (p.classification) s << "set cbrange [0:1]\n";
  s << "plot 'gp_surface.dat' using 1:2:3 with image notitle";
  if (p.classification) {
    s << ", 'gp_contour.dat' using 1:2 with lines lw 2 lc 'black' title 'p = 0.5'"
      << ", 'gp_data.dat' using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 0.6 lc 'black' "
         "title 'class 1', '' using 1:($3 == 1 ? 1/0 : $2) with points pt 6 ps 0.6 lc 'black' "
         "title 'class 0'\n";
  } else {
    s << ", 'gp_data.dat' using 1:2:3 with points pt 7 ps 0.8 lc palette title 'training data'\n";
  }
  return draw(data, "gp", s.str(), "gp.png (GP posterior)", log);
}

bool mixture(const fs::path& data, const MixturePlot& p, std::ostream& log) {
  const Index k = p.means.rows();
  std::ostringstream s;
  s << kTerminal << "set output '../mixture.png'\nset title " << gnuplot_string(p.title)
    << "\nset grid\nset key outside top center horizontal\n";
  if (p.x.cols() == 1) {
    // A density histogram of the data, the mixture density and its weighted components.
    const Vector v = p.x.col(0);
    const double lo = v.minCoeff(), hi = v.maxCoeff();
    const Index bins = std::clamp<Index>(static_cast<Index>(std::sqrt(v.size())), 5, 60);
    const double width = hi > lo ? (hi - lo) / static_cast<double>(bins) : 1.0;
    Vector counts = Vector::Zero(bins);
    for (Index i = 0; i < v.size(); ++i)
      counts[std::min<Index>(bins - 1, static_cast<Index>((v[i] - lo) / width))] += 1;
    std::ostringstream h;
    for (Index b = 0; b < bins; ++b)
      h << num(lo + (b + 0.5) * width) << ' '
        << num(counts[b] / (static_cast<double>(v.size()) * width)) << '\n';
    write_text_file(data / "mixture_histogram.dat", h.str());
    std::ostringstream c;
    const Vector grid = plot_grid(v, 400);
    for (Index i = 0; i < grid.size(); ++i) {
      double total = 0;
      std::string parts;
      for (Index j = 0; j < k; ++j) {
        const double sd = std::sqrt(p.covariances[static_cast<size_t>(j)](0, 0));
        const double z = (grid[i] - p.means(j, 0)) / sd;
        const double density =
            p.weights[j] * std::exp(-0.5 * z * z) / (sd * std::sqrt(2 * std::numbers::pi));
        total += density;
        parts += ' ' + num(density);
      }
      c << num(grid[i]) << ' ' << num(total) << parts << '\n';
    }
    write_text_file(data / "mixture_density.dat", c.str());
    s << "set xlabel " << gnuplot_string(p.columns[0]) << "\nset ylabel 'density'\n"
      << "set style fill transparent solid 0.3\n"
      << "plot 'mixture_histogram.dat' using 1:2:(" << num(width)
      << ") with boxes lc 'grey50' title 'data', 'mixture_density.dat' using 1:2 with lines lw 2 "
         "lc 'black' title 'mixture'";
    for (Index j = 0; j < k; ++j)
      s << ", '' using 1:" << j + 3 << " with lines dt 2 title "
        << gnuplot_string(fmt::format("component {} (weight {:.3f})", j + 1, p.weights[j]));
    s << '\n';
  } else {
    std::ostringstream d;
    for (Index i = 0; i < p.x.rows(); ++i) d << num(p.x(i, 0)) << ' ' << num(p.x(i, 1)) << '\n';
    write_text_file(data / "mixture_data.dat", d.str());
    std::ostringstream e, m;
    for (Index j = 0; j < k; ++j) {
      const Matrix c = p.covariances[static_cast<size_t>(j)].topLeftCorner(2, 2);
      const Eigen::SelfAdjointEigenSolver<Matrix> eig(c);
      const Vector root = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
      for (const double radius : {1.0, 2.0}) {
        for (int t = 0; t <= 120; ++t) {
          const double a = 2 * std::numbers::pi * t / 120.0;
          const Vector point = p.means.row(j).head(2).transpose() +
                               radius * (eig.eigenvectors().col(0) * root[0] * std::cos(a) +
                                         eig.eigenvectors().col(1) * root[1] * std::sin(a));
          e << num(point[0]) << ' ' << num(point[1]) << '\n';
        }
        e << "\n\n";  // one data block per ellipse
      }
      m << num(p.means(j, 0)) << ' ' << num(p.means(j, 1)) << ' ' << j + 1 << '\n';
    }
    write_text_file(data / "mixture_ellipses.dat", e.str());
    write_text_file(data / "mixture_means.dat", m.str());
    s << "set xlabel " << gnuplot_string(p.columns[0]) << "\nset ylabel "
      << gnuplot_string(p.columns[1])
      << "\nplot 'mixture_data.dat' using 1:2 with points pt 7 ps 0.4 lc 'grey50' title 'data'";
    for (Index j = 0; j < k; ++j) {
      s << ", 'mixture_ellipses.dat' index " << 2 * j << ":" << 2 * j + 1
        << " using 1:2 with lines lw 2 lc " << j + 1 << " title "
        << gnuplot_string(fmt::format("component {} (weight {:.3f}): 1 and 2 sd", j + 1,
                                      p.weights[j]));
    }
    s << ", 'mixture_means.dat' using 1:2 with points pt 2 ps 2 lw 2 lc 'black' title 'means'\n";
  }
  return draw(data, "mixture", s.str(), "mixture.png (mixture on its data)", log);
}

}  // namespace

Vector plot_grid(const Vector& values, Index points) {
  double lo = values.minCoeff(), hi = values.maxCoeff();
  const double pad = hi > lo ? 0.05 * (hi - lo) : 1.0;
  lo -= pad;
  hi += pad;
  return Vector::LinSpaced(points, lo, hi);
}

std::vector<std::string> write_infer_plots(const std::string& dir, const InferPlots& plots,
                                           std::ostream& log) {
  const fs::path data = plot_data_dir(dir);
  std::vector<std::string> drawn;
  if (plots.forest && forest(data, *plots.forest, log)) drawn.push_back("coefficients.png");
  if (plots.series && series(data, *plots.series, log)) drawn.push_back("series.png");
  if (plots.gp) {
    const bool ok = plots.gp->x.cols() == 1 ? gp_curve(data, *plots.gp, log)
                                            : gp_surface(data, *plots.gp, log);
    if (ok) drawn.push_back("gp.png");
  }
  if (plots.mixture && mixture(data, *plots.mixture, log)) drawn.push_back("mixture.png");
  return drawn;
}

}  // namespace blr::cli
