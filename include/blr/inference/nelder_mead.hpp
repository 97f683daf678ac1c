// A small Nelder–Mead simplex minimiser (Nelder & Mead 1965; the standard reflection, expansion,
// contraction and shrink coefficients 1, 2, ½, ½) for a handful of unconstrained parameters, e.g.
// the log noise variances of a state-space model. Derivative-free, deterministic.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"

namespace blr::inference {

struct NelderMeadOptions {
  double initial_step = 0.5;  ///< simplex edge along each axis
  int max_evaluations = 4000;
  double f_tolerance = 1e-10;  ///< stop when the simplex values span less than this
  double x_tolerance = 1e-8;   ///< and the vertices lie this close together
  void validate() const;        ///< the table's ranges
  static const OptionTable<NelderMeadOptions>& table();
};

struct NelderMeadResult {
  Vector x;
  double value = 0;
  int evaluations = 0;
  bool converged = false;
};

/// Minimises f from x0. Non-finite values count as +∞ (the simplex moves away from them).
inline NelderMeadResult nelder_mead(const std::function<double(const Vector&)>& f, const Vector& x0,
                                    const NelderMeadOptions& options = {}) {
  options.validate();
  const Index n = x0.size();
  check(n >= 1, "Nelder–Mead needs at least one parameter.");
  NelderMeadResult r;
  auto eval = [&](const Vector& x) {
    ++r.evaluations;
    const double v = f(x);
    return std::isfinite(v) ? v : std::numeric_limits<double>::infinity();
  };
  std::vector<Vector> pts(n + 1, x0);
  std::vector<double> vals(n + 1);
  for (Index i = 0; i < n; ++i) pts[i + 1][i] += options.initial_step;
  for (Index i = 0; i <= n; ++i) vals[i] = eval(pts[i]);
  std::vector<Index> order(n + 1);
  while (r.evaluations < options.max_evaluations) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](Index a, Index b) { return vals[a] < vals[b]; });
    const Index best = order.front(), worst = order.back(), second = order[n - 1];
    double spread = 0;
    for (Index i = 0; i <= n; ++i)
      spread = std::max(spread, (pts[i] - pts[best]).cwiseAbs().maxCoeff());
    if (std::abs(vals[worst] - vals[best]) < options.f_tolerance && spread < options.x_tolerance) {
      r.converged = true;
      break;
    }
    Vector centroid = Vector::Zero(n);
    for (Index i = 0; i <= n; ++i)
      if (i != worst) centroid += pts[i];
    centroid /= static_cast<double>(n);
    const Vector xr = centroid + (centroid - pts[worst]);
    const double fr = eval(xr);
    if (fr < vals[best]) {
      const Vector xe = centroid + 2.0 * (centroid - pts[worst]);
      const double fe = eval(xe);
      if (fe < fr) {
        pts[worst] = xe;
        vals[worst] = fe;
      } else {
        pts[worst] = xr;
        vals[worst] = fr;
      }
    } else if (fr < vals[second]) {
      pts[worst] = xr;
      vals[worst] = fr;
    } else {
      const bool outside = fr < vals[worst];
      const Vector xc = outside ? Vector(centroid + 0.5 * (xr - centroid))
                                : Vector(centroid + 0.5 * (pts[worst] - centroid));
      const double fc = eval(xc);
      if (fc < (outside ? fr : vals[worst])) {
        pts[worst] = xc;
        vals[worst] = fc;
      } else {
        for (Index i = 0; i <= n; ++i) {
          if (i == best) continue;
          pts[i] = pts[best] + 0.5 * (pts[i] - pts[best]);
          vals[i] = eval(pts[i]);
        }
      }
    }
  }
  const auto it = std::min_element(vals.begin(), vals.end());
  r.x = pts[it - vals.begin()];
  r.value = *it;
  return r;
}

}  // namespace blr::inference
