// Table 1: dropout as the BLR with a spike-and-slab candidate (eqs. 42–43), against the plain
// update with the same masks.
#include "blr/algorithms/dropout.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

Table1Row row_dropout() {
  Table1Row row{"dropout", "spike-and-slab (diag slab)", "delta at dropout weights",
                "MC-dropout Newton (eqs. 42–43)", "logistic regression n=200 d=5, π₁=0.8, 60 steps",
                "include/blr/algorithms/dropout.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 60);
    DropoutOptions options;
    options.lr = Schedule::constant(0.2);
    options.keep_probability = 0.8;
    const auto method = make_dropout(options);
    Rng rng(61), plain_rng(61);
    auto state = init(GaussianDiag(Vector::Zero(5), Vector::Constant(5, 100.0)));
    Vector theta = Vector::Zero(5), s = Vector::Constant(5, 100.0);
    double deviation = 0.0;
    for (int t = 0; t < 60; ++t) {
      method.step(state, loss, rng);
      Vector z(5);
      for (Index j = 0; j < 5; ++j) z[j] = plain_rng.uniform() < 0.8 ? 1.0 : 0.0;
      const Vector dropped = theta.cwiseProduct(z);
      s = 0.8 * s + 0.2 * z.cwiseProduct(loss.hessian_diagonal(dropped)) / 0.8;
      theta -= 0.2 * z.cwiseProduct(loss.gradient(dropped)).cwiseQuotient(s) / 0.8;
      deviation = std::max({deviation, max_abs_diff(state.q.mean, theta), max_abs_diff(state.q.precision, s) / s.norm()});
    }
    return ReductionResult{deviation, kDeterministicTolerance, "60 iterates of m and s"};
  };
  return row;
}

}  // namespace blr::detail
