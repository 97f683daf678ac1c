// The BLR for a finite mixture of Gaussians with fixed weights (Khan & Rue 2023, §3.2, eqs. 28–30,
// App. E eqs. 67–71; Lin, Khan & Schmidt 2019).
//
// Each component k is stepped in the natural parameters of the joint q(θ, z = k):
//     S_k ← S_k + ρ E_{q_k}[∇²ℓ̄(θ) + ∇² log q(θ)]                                   (30)
//     m_k ← m_k − ρ S_k⁻¹ E_{q_k}[∇ℓ̄(θ) + ∇ log q(θ)]                               (29)
// with log q the mixture's log-density (eqs. 69–70); the entropy of the mixture is what keeps the
// components apart. Eq. 30 is the Gaussian rule's precision step with Ĥ' = Ĥ_k + S_k, since
// (1−ρ)S_k + ρ(Ĥ_k + S_k) = S_k + ρĤ_k; so each component is stepped by the one Gaussian rule
// (gaussian_rule.hpp), with the improved-BLR correction keeping S_k positive definite although
// ∇² log q is indefinite. Expectations are Monte Carlo over K draws from q_k (Bonnet/Price).
#pragma once

#include <vector>

#include "blr/core/rng.hpp"
#include "blr/family/mixture.hpp"
#include "blr/model/loss.hpp"
#include "blr/rule/gaussian_rule.hpp"

namespace blr {

struct MixtureRuleOptions {
  Schedule rate = Schedule::constant(0.05);  ///< ρ
  int samples = 10;                           ///< K Monte Carlo draws per component and step
  bool pd_correction = true;
  void validate() const {
    rate.validate("rate");
    check_range("rate", rate.initial, 0.0, 1.0, true, false);
    check(samples >= 1, "Option 'samples' must be at least 1.");
  }
};

struct MixtureState {
  GaussianMixture<GaussianFull> q;
  long step = 0;
};

/// One BLR step of every component (all use the mixture as it was at the start of the step).
template <HasHessian L>
double mixture_step(MixtureState& state, const L& loss, Rng& rng, const MixtureRuleOptions& options) {
  options.validate();
  const GaussianMixture<GaussianFull> before = state.q;
  const Index d = before.dimension();
  Policy<stage::IblrCorrection> policy;
  policy.mean_rate = options.rate;
  policy.precision_rate = options.rate;
  policy.get<stage::IblrCorrection>().enabled = options.pd_correction;
  double mean_loss = 0.0;
  std::vector<GaussianFull> next;
  for (Index k = 0; k < before.size(); ++k) {
    const GaussianFull& component = before.component(k);
    GaussianEstimate e;
    e.gradient = Vector::Zero(d);
    Matrix h = Matrix::Zero(d, d);
    for (int s = 0; s < options.samples; ++s) {
      const Vector theta = component.mean + component.precision.solve_upper(rng.normal_vector(d));
      e.gradient += loss.gradient(theta) + before.grad_log_density(theta);
      h += loss.hessian(theta) + before.hessian_log_density(theta);
      e.loss += loss.value(theta);
    }
    e.gradient /= options.samples;
    h /= options.samples;
    e.loss /= options.samples;
    mean_loss += before.weights()[k] * e.loss;
    e.curvature = Curvature::full(h + component.precision.matrix());  // Ĥ' = Ĥ_k + S_k
    RuleState<GaussianFull> rule = init(component);
    rule.step = state.step;
    blr::step(rule, e, policy);
    next.push_back(std::move(rule.q));
  }
  state.q = GaussianMixture<GaussianFull>(std::move(next), before.weights());
  ++state.step;
  return mean_loss;
}

}  // namespace blr
