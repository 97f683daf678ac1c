// Table 1: STE (eq. 48) and BayesBiNN (eq. 52) on a small binary problem, against the plain
// algorithms with the same noise.
#include "blr/algorithms/bayesbinn.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

Table1Row row_ste() {
  Table1Row row{"ste", "Bernoulli (mean field)", "delta at sign(λ), τ→0, no entropy",
                "straight-through estimator", "binary linear regression n=100 d=8, 30 steps",
                "include/blr/algorithms/bayesbinn.hpp", {}};
  row.check = [] {
    Vector truth;
    const auto loss = synthetic_binary_regression(100, 8, 50, &truth);
    const StraightThrough ste(SteOptions{1e-3});
    Rng init_rng(51);
    BernoulliState state{init_rng.normal_vector(8), {}, 0};
    Vector latent = state.natural;  // θ̃ of eq. 48
    double deviation = 0.0;
    for (int t = 0; t < 30; ++t) {
      ste.step(state, loss);
      const Vector binary = latent.unaryExpr([](double v) { return v > 0 ? 1.0 : -1.0; });
      latent -= 1e-3 * loss.gradient(binary);
      deviation = std::max(deviation, max_abs_diff(state.natural, latent));
    }
    return ReductionResult{deviation, kDeterministicTolerance, "30 iterates of λ vs θ̃"};
  };
  return row;
}

Table1Row row_bayesbinn() {
  Table1Row row{"bayesbinn", "Bernoulli (mean field)", "Concrete relaxation (τ = 1)",
                "BayesBiNN (Meng et al. 2020)", "binary linear regression n=100 d=8, 200 steps",
                "include/blr/algorithms/bayesbinn.hpp", {}};
  row.check = [] {
    Vector truth;
    const auto loss = synthetic_binary_regression(100, 8, 52, &truth);
    BayesBinnOptions options;
    options.lr = 0.05;
    options.temperature = 1.0;
    const BayesBinn method(options);
    Rng rng(53), plain_rng(53);
    BernoulliState state{Vector::Zero(8), {}, 0};
    Vector lambda = Vector::Zero(8);
    double deviation = 0.0;
    for (int t = 0; t < 200; ++t) {
      method.step(state, loss, rng);
      // Plain eq. 52: θ = tanh((λ + δ(ε))/τ), s = (1 − θ²)/(τ(1 − tanh²λ)) (with 1e-10 safeguards),
      // λ ← (1 − ρ)λ − ρ s⊙∇ℓ̄(θ).
      Vector u(8);
      for (Index j = 0; j < 8; ++j) u[j] = plain_rng.uniform();
      const Vector shift = 0.5 * (u.array() / (1.0 - u.array())).log().matrix();
      const Vector theta = (lambda + shift).array().tanh().matrix();
      const Vector scale = ((1.0 - theta.array().square() + 1e-10) /
                            (1.0 - lambda.array().tanh().square() + 1e-10)).matrix();
      lambda = (1.0 - 0.05) * lambda - 0.05 * scale.cwiseProduct(loss.gradient(theta));
      deviation = std::max(deviation, max_abs_diff(state.natural, lambda));
    }
    // The posterior's signs recover the binary ground truth on this well-posed problem.
    check((state.sign() - truth).cwiseAbs().maxCoeff() == 0.0,
          "BayesBiNN: sign(λ) does not recover the binary ground truth.");
    return ReductionResult{deviation, kDeterministicTolerance, "200 iterates of λ; sign(λ) = w*"};
  };
  return row;
}

}  // namespace blr::detail
