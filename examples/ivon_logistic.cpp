// The README's example: IVON on a Bayesian logistic regression, written as family × estimator ×
// policy by the `make_ivon` preset. Built with the project so the README never goes stale.
#include <fmt/format.h>

#include "blr/algorithms/ivon.hpp"
#include "blr/model/logistic_regression.hpp"

int main() {
  // A small synthetic data set: intercept + 2 features, labels from a logistic model.
  blr::Rng data(1);
  const blr::Index n = 500;
  blr::Matrix x(n, 3);
  blr::Vector y(n);
  for (blr::Index i = 0; i < n; ++i) {
    x.row(i) << 1.0, data.normal(), data.normal();
    y[i] = data.uniform() < 1.0 / (1.0 + std::exp(-(0.5 + 2.0 * x(i, 1) - x(i, 2)))) ? 1.0 : 0.0;
  }
  const blr::LogisticRegression loss(x, y);  // ℓ̄(θ) = Σ_i ℓ_i(θ): λ·(mean loss) with ess λ = n

  blr::IvonOptions options;
  options.lr = 0.1;
  options.ess = static_cast<double>(n);
  options.beta2 = 0.999;
  const blr::Ivon ivon = blr::make_ivon(options);  // diag Gaussian × reparam. Hessian × iBLR
  auto state = blr::init(blr::ivon_initial(blr::Vector::Zero(3), options));
  blr::Rng rng(0);
  for (int t = 0; t < 2000; ++t) ivon.step(state, loss, rng);

  const blr::Vector sd = state.q.variance().cwiseSqrt();
  for (blr::Index j = 0; j < 3; ++j)
    fmt::print("theta[{}] = {:+.3f} ± {:.3f}\n", j, state.q.mean[j], sd[j]);
  return 0;
}
