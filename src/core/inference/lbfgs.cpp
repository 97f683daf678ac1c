#include "blr/inference/lbfgs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "blr/core/error.hpp"

namespace blr::inference {
namespace {

/// f and its directional derivative at x + αp.
struct Trial {
  double alpha = 0, value = 0, slope = 0;
  Vector x, gradient;
  bool finite() const { return std::isfinite(value) && std::isfinite(slope); }
};

/// Minimiser of the cubic through (a, fa, da) and (b, fb, db) (Nocedal & Wright eq. 3.59), kept in
/// the middle 80% of [a, b]; bisection when the cubic has no minimiser there.
double interpolate(const Trial& a, const Trial& b) {
  const double lo = std::min(a.alpha, b.alpha), hi = std::max(a.alpha, b.alpha);
  const double mid = 0.5 * (lo + hi);
  if (!a.finite() || !b.finite()) return mid;
  const double d1 = a.slope + b.slope - 3.0 * (a.value - b.value) / (a.alpha - b.alpha);
  const double disc = d1 * d1 - a.slope * b.slope;
  if (disc < 0) return mid;
  const double d2 = std::copysign(std::sqrt(disc), b.alpha - a.alpha);
  const double t =
      b.alpha - (b.alpha - a.alpha) * (b.slope + d2 - d1) / (b.slope - a.slope + 2.0 * d2);
  const double margin = 0.1 * (hi - lo);
  if (!std::isfinite(t) || t < lo + margin || t > hi - margin) return mid;
  return t;
}

class LineSearch {
 public:
  LineSearch(const Objective& f, const Vector& x, const Vector& p, double value, double slope,
             const LbfgsOptions& o, int& evaluations)
      : f_(f), x_(x), p_(p), value0_(value), slope0_(slope), o_(o), evaluations_(evaluations) {}

  /// A strong-Wolfe step starting from α = `alpha` (at most `alpha_max`); false when none was
  /// found within the evaluation budget (`best` then holds the lowest finite trial, if any).
  bool run(double alpha, double alpha_max, Trial& out) {
    Trial prev;
    prev.alpha = 0;
    prev.value = value0_;
    prev.slope = slope0_;
    for (int i = 0; i < 20 && budget(); ++i) {
      Trial t = evaluate(alpha);
      if (!t.finite()) {  // too long: shrink towards the last good point
        alpha = prev.alpha + 0.5 * (alpha - prev.alpha);
        if (alpha - prev.alpha < 1e-16 * std::max(1.0, alpha)) return false;
        continue;
      }
      if (t.value > value0_ + o_.c1 * t.alpha * slope0_ || (i > 0 && t.value >= prev.value))
        return zoom(prev, t, out);
      if (std::abs(t.slope) <= -o_.c2 * slope0_) {
        out = std::move(t);
        return true;
      }
      if (t.slope >= 0) return zoom(t, prev, out);
      if (alpha >= alpha_max) {  // the cap: accept a sufficient decrease that is still falling
        out = std::move(t);
        return true;
      }
      prev = std::move(t);
      alpha = std::min(2.0 * alpha, alpha_max);
    }
    return false;
  }

  const Trial& best() const { return best_; }

 private:
  bool budget() const { return evaluations_ < o_.max_evaluations; }

  Trial evaluate(double alpha) {
    Trial t;
    t.alpha = alpha;
    t.x = x_ + alpha * p_;
    t.value = f_(t.x, t.gradient);
    ++evaluations_;
    t.slope = t.gradient.size() == p_.size() ? t.gradient.dot(p_)
                                             : std::numeric_limits<double>::quiet_NaN();
    if (t.finite() && (best_.x.size() == 0 || t.value < best_.value)) best_ = t;
    return t;
  }

  /// Algorithm 3.6: `lo` satisfies sufficient decrease and has the lower value.
  bool zoom(Trial lo, Trial hi, Trial& out) {
    for (int i = 0; i < 12 && budget(); ++i) {
      const double alpha = interpolate(lo, hi);
      if (std::abs(hi.alpha - lo.alpha) < 1e-16 * std::max(1.0, std::abs(lo.alpha))) break;
      Trial t = evaluate(alpha);
      if (!t.finite() || t.value > value0_ + o_.c1 * alpha * slope0_ || t.value >= lo.value) {
        hi = std::move(t);
        hi.alpha = alpha;
        continue;
      }
      if (std::abs(t.slope) <= -o_.c2 * slope0_) {
        out = std::move(t);
        return true;
      }
      if (t.slope * (hi.alpha - lo.alpha) >= 0) hi = lo;
      lo = std::move(t);
    }
    // The interval collapsed: a point with sufficient decrease still makes progress.
    if (lo.alpha > 0) {
      out = std::move(lo);
      return true;
    }
    return false;
  }

  const Objective& f_;
  const Vector& x_;
  const Vector& p_;
  double value0_, slope0_;
  const LbfgsOptions& o_;
  int& evaluations_;
  Trial best_;
};

}  // namespace

const OptionTable<LbfgsOptions>& LbfgsOptions::table() {
  using O = LbfgsOptions;
  static const OptionTable<O> t =
      OptionTable<O>("L-BFGS")
          .integer("memory", &O::memory, Range::between(1, 1e6), "stored (s, y) pairs m")
          .integer("max_iterations", &O::max_iterations, Range::between(1, 1e9),
                   "line searches at most")
          .number("gradient_tolerance", &O::gradient_tolerance, Range::positive(),
                  "converged when max|∇f| ≤ this")
          .number("max_step", &O::max_step, Range::positive(), "longest step ‖αp‖")
          .integer("max_evaluations", &O::max_evaluations, Range::between(1, 1e9),
                   "evaluations of f over the whole run")
          .number("c1", &O::c1, Range::between(0, 1, true, true), "Wolfe's sufficient-decrease c₁")
          .number("c2", &O::c2, Range::between(0, 1, true, true), "Wolfe's curvature c₂ (> c₁)")
          .number("value_tolerance", &O::value_tolerance, Range::at_least(0),
                  "also converged when a line search finds no decrease and the step's predicted "
                  "decrease |∇fᵀp| ≤ this · max(1, |f|) (scipy L-BFGS-B's ftol; 0: never)");
  return t;
}

void LbfgsOptions::validate() const {
  table().validate(*this);
  check(c1 < c2, "The Wolfe constants must satisfy 0 < c1 < c2 < 1.");
}

LbfgsResult lbfgs(const Objective& f, const Vector& x0, const LbfgsOptions& options) {
  options.validate();
  LbfgsResult r;
  r.x = x0;
  r.value = f(r.x, r.gradient);
  r.evaluations = 1;
  check(std::isfinite(r.value) && r.gradient.size() == x0.size() && r.gradient.allFinite(),
        "L-BFGS: the objective or its gradient is not finite at the starting point.");
  std::deque<Vector> s_hist, y_hist;
  std::deque<double> rho_hist;
  for (int it = 1;; ++it) {
    if (r.gradient.cwiseAbs().maxCoeff() <= options.gradient_tolerance) {
      r.converged = true;
      r.stop = "The gradient tolerance was met.";
      break;
    }
    if (it > options.max_iterations) {
      r.stop = "The iteration limit was reached.";
      break;
    }
    // Two-loop recursion.
    Vector q = r.gradient;
    std::vector<double> a(s_hist.size());
    for (std::size_t k = s_hist.size(); k-- > 0;) {
      a[k] = rho_hist[k] * s_hist[k].dot(q);
      q -= a[k] * y_hist[k];
    }
    if (!s_hist.empty()) q *= s_hist.back().dot(y_hist.back()) / y_hist.back().squaredNorm();
    for (std::size_t k = 0; k < s_hist.size(); ++k) {
      const double b = rho_hist[k] * y_hist[k].dot(q);
      q += (a[k] - b) * s_hist[k];
    }
    Vector p = -q;
    double slope = r.gradient.dot(p);
    if (!(slope < 0)) {  // not a descent direction: restart from steepest descent
      s_hist.clear();
      y_hist.clear();
      rho_hist.clear();
      p = -r.gradient;
      slope = r.gradient.dot(p);
    }
    const double alpha_max = options.max_step / p.norm();
    const double alpha0 = std::min(s_hist.empty() ? std::min(1.0, 1.0 / p.norm()) : 1.0, alpha_max);
    LineSearch ls(f, r.x, p, r.value, slope, options, r.evaluations);
    Trial t;
    if (!ls.run(alpha0, alpha_max, t)) {
      if (ls.best().x.size() && ls.best().value < r.value) {
        t = ls.best();  // take the progress made, then stop
        r.x = t.x;
        r.value = t.value;
        r.gradient = t.gradient;
        r.iterations = it;
      }
      if (r.evaluations < options.max_evaluations &&
          std::abs(slope) <= options.value_tolerance * std::max(1.0, std::abs(r.value))) {
        // No decrease is left that f can resolve: scipy's L-BFGS-B stops here as converged.
        r.converged = true;
        r.stop = fmt::format("The line search found no decrease, and the step's predicted decrease "
                             "|∇fᵀp| = {:.3g} is within the value tolerance of |f| = {:.6g}.",
                             std::abs(slope), std::abs(r.value));
        break;
      }
      r.stop = r.evaluations >= options.max_evaluations
                   ? "The evaluation limit was reached."
                   : "The line search found no step satisfying the Wolfe conditions.";
      break;
    }
    Vector s = t.x - r.x, y = t.gradient - r.gradient;
    const double sy = s.dot(y);
    r.x = std::move(t.x);
    r.value = t.value;
    r.gradient = std::move(t.gradient);
    r.iterations = it;
    if (sy > 1e-12 * s.norm() * y.norm()) {  // keep H positive definite
      s_hist.push_back(std::move(s));
      y_hist.push_back(std::move(y));
      rho_hist.push_back(1.0 / sy);
      if (static_cast<int>(s_hist.size()) > options.memory) {
        s_hist.pop_front();
        y_hist.pop_front();
        rho_hist.pop_front();
      }
    }
  }
  return r;
}

}  // namespace blr::inference
