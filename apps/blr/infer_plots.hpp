// The pictures of `blr infer --out DIR` (issue 31, item 4), drawn by gnuplot (gnuplot.hpp) from
// data files written beside their script in DIR/plot-data/:
//
//   coefficients.png  linreg, logistic, poisson: a forest plot, each coefficient's posterior mean
//                     with its central credible interval at --level, and the line at zero (the
//                     intercept, on the response's scale, is left out)
//   series.png        kalman: the observations, the filtered mean and the smoothed mean with its
//                     band at --level (the first state)
//   gp.png            gpr, gpc on one input: the latent (gpr) or class-1 probability (gpc) posterior
//                     mean with its band over a grid, and the training data; gpr adds the band of
//                     the predictive of y (noise included). On two inputs: the posterior mean of f
//                     (gpr) or the class-1 probability (gpc) over the plane, its 0.5 contour (gpc),
//                     and the training points
//   mixture.png       gmm: the data on its first two columns with each component's mean and its
//                     1- and 2-standard-deviation ellipses (the marginal of those columns); on one
//                     column a histogram with the mixture density and its weighted components
//
// The runners fill an InferPlots with what the pictures need; write_infer_plots writes the data,
// the script and the images. Without gnuplot, a note on the log names what was not drawn.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "blr/core/types.hpp"

namespace blr::cli {

struct ForestPlot {
  std::vector<std::string> names;  ///< "(intercept)" is left out of the picture
  Vector mean, lower, upper;
  double level = 0.95;
  std::string title;
  std::string note;  ///< appended to the axis label (e.g. the scale of the coefficients)
};

struct SeriesPlot {
  Vector y;  ///< NaN where missing
  Vector filtered_mean, smoothed_mean, smoothed_lower, smoothed_upper;
  double level = 0.95;
  std::string title;
};

/// A GP on one input: curves over a grid; or on two: a surface over a grid.
struct GpPlot {
  bool classification = false;
  std::vector<std::string> inputs;  ///< the input columns' names (1 or 2)
  std::string response;
  Matrix x;  ///< training inputs (n×1 or n×2)
  Vector y;  ///< training responses (0/1 for classification)
  // One input: grid values, the mean (probability) and its band; gpr: the predictive band of y.
  Vector grid, mean, lower, upper, predictive_lower, predictive_upper;
  // Two inputs: axes and values (grid_y.size() × grid_x.size()).
  Vector grid_x, grid_y;
  Matrix surface;
  double level = 0.95;
  std::string title;
};

struct MixturePlot {
  std::vector<std::string> columns;  ///< the data's column names
  Matrix x;                          ///< the data
  Vector weights;
  Matrix means;                      ///< components × columns
  std::vector<Matrix> covariances;
  std::string title;
};

struct InferPlots {
  std::optional<ForestPlot> forest;
  std::optional<SeriesPlot> series;
  std::optional<GpPlot> gp;
  std::optional<MixturePlot> mixture;
  bool empty() const { return !forest && !series && !gp && !mixture; }
};

/// Writes every picture `plots` has into `dir` (data and scripts under dir/plot-data); returns the
/// images drawn (names relative to dir). A note on `log` for each one gnuplot could not draw.
std::vector<std::string> write_infer_plots(const std::string& dir, const InferPlots& plots,
                                           std::ostream& log);

/// `points` values evenly from the smallest to the largest of `values`, widened by 5 % of the
/// range on each side (a constant column: ± 1).
Vector plot_grid(const Vector& values, Index points);

}  // namespace blr::cli
