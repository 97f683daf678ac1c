// Table 1: RMSprop (eq. 38) and Adam (App. F) from the BLR with square-root scaling, against the
// plain algorithms (PyTorch's RMSprop form and Kingma & Ba's Adam).
#include "blr/algorithms/rmsprop_adam.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

Table1Row row_rmsprop() {
  Table1Row row{"rmsprop", "Gaussian, diagonal", "delta, Ĥ ≈ ĝ², √ scaling", "RMSprop",
                "logistic regression n=200 d=5, M=20, 100 steps",
                "include/blr/algorithms/rmsprop_adam.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 9);
    RmspropOptions options;
    options.lr = Schedule::constant(0.01);
    options.beta = 0.01;
    const auto method = make_rmsprop(options);
    Rng rng(0), batches(10);
    auto state = init(squared_gradient_initial(Vector::Zero(5)));
    Vector theta = Vector::Zero(5), v = Vector::Zero(5);
    double deviation = 0.0;
    for (int t = 0; t < 100; ++t) {
      std::vector<Index> rows;
      for (int i = 0; i < 20; ++i) rows.push_back(static_cast<Index>(batches.below(200)));
      const auto minibatch = loss.with_rows(rows);
      method.step(state, minibatch, rng);
      const Vector g = minibatch.gradient(theta);  // PyTorch: v = αv + (1−α)g², θ −= lr·g/(√v + ε)
      v = 0.99 * v + 0.01 * g.cwiseAbs2();
      theta -= 0.01 * g.cwiseQuotient((v.cwiseSqrt().array() + 1e-8).matrix());
      deviation = std::max(deviation, max_abs_diff(state.q.mean, theta));
    }
    return ReductionResult{deviation, kDeterministicTolerance, "100 iterates"};
  };
  return row;
}

Table1Row row_adam() {
  Table1Row row{"adam", "Gaussian, diagonal", "delta, Ĥ ≈ ĝ², √ scaling, debiasing",
                "Adam (Kingma & Ba)", "logistic regression n=200 d=5, M=20, 100 steps",
                "include/blr/algorithms/rmsprop_adam.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 11);
    AdamOptions options;
    options.lr = Schedule::constant(0.05);
    const auto method = make_adam(options);
    Rng rng(0), batches(12);
    auto state = init(squared_gradient_initial(Vector::Zero(5)));
    Vector theta = Vector::Zero(5), m = Vector::Zero(5), v = Vector::Zero(5);
    double deviation = 0.0;
    for (int t = 1; t <= 100; ++t) {
      std::vector<Index> rows;
      for (int i = 0; i < 20; ++i) rows.push_back(static_cast<Index>(batches.below(200)));
      const auto minibatch = loss.with_rows(rows);
      method.step(state, minibatch, rng);
      const Vector g = minibatch.gradient(theta);
      m = 0.9 * m + 0.1 * g;
      v = 0.999 * v + 0.001 * g.cwiseAbs2();
      const Vector m_hat = m / (1.0 - std::pow(0.9, t));
      const Vector v_hat = v / (1.0 - std::pow(0.999, t));
      theta -= 0.05 * m_hat.cwiseQuotient((v_hat.cwiseSqrt().array() + 1e-8).matrix());
      deviation = std::max(deviation, max_abs_diff(state.q.mean, theta));
    }
    return ReductionResult{deviation, kDeterministicTolerance, "100 iterates"};
  };
  return row;
}

}  // namespace blr::detail
