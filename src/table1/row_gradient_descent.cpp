// Table 1: gradient descent (§1.3.1) and SGD (eq. 35), against the plain algorithms.
#include "blr/algorithms/gradient_descent.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

Table1Row row_gradient_descent() {
  Table1Row row{"gradient-descent", "Gaussian, fixed covariance", "delta (1st order)",
                "gradient descent (heavy ball)", "logistic regression n=200 d=5, 50 steps",
                "include/blr/algorithms/gradient_descent.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 1);
    GradientDescentOptions options;
    options.lr = Schedule::constant(0.004);
    options.momentum = 0.5;
    const auto gd = make_gradient_descent(options);
    Rng rng(0);
    auto state = init(GaussianFixed(Vector::Zero(5)));
    Vector theta = Vector::Zero(5), previous = theta;  // plain heavy ball, eq. 75
    double deviation = 0.0;
    for (int t = 0; t < 50; ++t) {
      gd.step(state, loss, rng);
      const Vector next = theta - 0.004 * loss.gradient(theta) + 0.5 * (theta - previous);
      previous = theta;
      theta = next;
      deviation = std::max(deviation, max_abs_diff(state.q.mean, theta));
    }
    return ReductionResult{deviation, kDeterministicTolerance, "50 iterates of m vs θ"};
  };
  return row;
}

Table1Row row_sgd() {
  Table1Row row{"sgd", "Gaussian, fixed covariance", "delta (1st order), minibatch",
                "SGD, ρ_t = α/(1+t/50)^0.6", "logistic regression n=200 d=5, M=20, 100 steps",
                "include/blr/algorithms/gradient_descent.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 2);
    GradientDescentOptions options;
    options.lr = Schedule::inverse_power(0.002, 50.0, 0.6);
    const auto sgd = make_gradient_descent(options);
    Rng rng(0), batches(3);
    auto state = init(GaussianFixed(Vector::Zero(5)));
    Vector theta = Vector::Zero(5);
    double deviation = 0.0;
    for (int t = 0; t < 100; ++t) {
      std::vector<Index> rows;
      for (int i = 0; i < 20; ++i) rows.push_back(static_cast<Index>(batches.below(200)));
      const auto minibatch = loss.with_rows(rows);  // (N/M)Σ ℓ_i + R, eq. 34
      sgd.step(state, minibatch, rng);
      theta -= options.lr.at(t) * minibatch.gradient(theta);
      deviation = std::max(deviation, max_abs_diff(state.q.mean, theta));
    }
    return ReductionResult{deviation, kDeterministicTolerance, "100 iterates of m vs θ"};
  };
  return row;
}

}  // namespace blr::detail
