// Shared by the GP tests: Ripley's synthetic data (data/synth_*.csv) and central finite
// differences with an error bound derived from the step.
#pragma once

#include <cmath>
#include <functional>
#include <string>

#include "blr/io/csv.hpp"

namespace blr::inference::testing {

struct SynthData {
  Matrix x_train, x_test;
  Vector y_train, y_test;
};

/// Ripley's synthetic two-class data: 250 training and 1000 test points in 2-D, labels 0/1.
/// `every` > 1 keeps every `every`-th training row (the file is sorted by class).
inline SynthData load_synth(Index every = 1) {
  const auto train = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/synth_train.csv");
  const auto test = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/synth_test.csv");
  const Matrix x = train.numeric_columns({"xs", "ys"});
  const Vector y = train.binary_labels("yc", "1", {"0", "1"});
  SynthData d;
  const Index n = (x.rows() + every - 1) / every;
  d.x_train.resize(n, 2);
  d.y_train.resize(n);
  for (Index i = 0; i < n; ++i) {
    d.x_train.row(i) = x.row(i * every);
    d.y_train[i] = y[i * every];
  }
  d.x_test = test.numeric_columns({"xs", "ys"});
  d.y_test = test.binary_labels("yc", "1", {"0", "1"});
  return d;
}

/// A central difference D(h) = (f(x + h) − f(x − h)) / 2h and a bound on |D(h) − f′(x)|.
/// Truncation: D(h) = f′ + h²f‴/6 + O(h⁴) and D(2h) − D(h) = h²f‴/2 + O(h⁴), so the truncation
/// error h²f‴/6 is |D(2h) − D(h)|/3; the bound takes |D(2h) − D(h)| (three times that, which also
/// covers the O(h⁴) terms and the rounding in the estimate). Rounding: each value of f is accurate
/// to `value_error`, which moves D(h) by at most value_error/h; the bound adds twice that.
struct CentralDifference {
  double derivative = 0, error_bound = 0;
};
inline CentralDifference central_difference(const std::function<double(double)>& f, double x,
                                            double h, double value_error) {
  const double d1 = (f(x + h) - f(x - h)) / (2 * h);
  const double d2 = (f(x + 2 * h) - f(x - 2 * h)) / (4 * h);
  return {d1, std::abs(d2 - d1) + 2 * value_error / h};
}

}  // namespace blr::inference::testing
