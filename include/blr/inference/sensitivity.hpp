// Sensitivity of a Bayesian GLM to each of its training examples: the memory-perturbation
// equation (MPE; Nickl, Xu, Tailor, Möllenhoff & Khan, NeurIPS 2023; Khan's BLR slides 24–30)
// for a Gaussian posterior q(w) = N(m, Σ), Σ = S⁻¹, from Laplace, CVI or the exact conjugate
// update of linear regression.
//
// Per example i, with loss ℓ_i(η) = −log p(y_i | η) and linear predictor η_i = x_iᵀm:
//     e_i = ℓ_i'(η_i)      prediction error   (logistic σ(η_i) − y_i, Poisson e^{η_i} − y_i,
//                                              Gaussian β(η_i − y_i))
//     h_i = ℓ_i''(η_i)     its curvature      (σ(1 − σ), e^{η_i}, β)
//     v_i = x_iᵀ Σ x_i     prediction variance
// For CVI, e_i and h_i are expectations under the marginal η ~ N(x_iᵀm, v_i) (Bonnet and Price):
// the quantities CVI's sites are built from (cvi.hpp).
//
// Derivation (Sherman–Morrison). Laplace at its mode, CVI at its fixed point and the conjugate
// update all give the posterior as prior plus one Newton site per example, as (Sm, S) pairs
// (the family's λ is linear in them, gaussian_natural.hpp)
//     λ = λ₀ + Σ_j λ̃_j,   λ̃_j = ( x_j (h_j η_j − e_j),  h_j x_j x_jᵀ )   i.e.  S = S₀ + Σ_j h_j x_j x_jᵀ.
// Removing example i is removing its site: S^{\i} = S − h_i x_i x_iᵀ and
// S^{\i} m^{\i} = S m − x_i (h_i η_i − e_i). Sherman–Morrison gives
//     Σ^{\i} = Σ + h_i Σ x_i x_iᵀ Σ / (1 − h_i v_i),   so   x_iᵀ Σ^{\i} = x_iᵀ Σ / (1 − h_i v_i),
// and therefore
//     deviation_i = η_i^{\i} − η_i = v_i e_i / (1 − h_i v_i),     v_i^{\i} = v_i / (1 − h_i v_i).
// Its first-order form (h_i v_i ≪ 1) is the MPE's v_i e_i ("prediction error × prediction
// variance"). For Laplace this is one Newton step on the leave-one-out objective from the full
// mode (its gradient there is −e_i x_i, its Hessian S − h_i x_i x_iᵀ). For linear regression with
// known noise precision β the sites are exact (the likelihood is quadratic in w), so the corrected
// form *is* the leave-one-out posterior: with β = 1 it is Cook's (1977) v_i e_i / (1 − v_i), e_i
// the residual and v_i the leverage. Since S₀ ≻ 0, h_i x_i x_iᵀ ≺ S and 0 ≤ h_i v_i < 1 always;
// a posterior without example i's curvature in it (an unconverged fit) is refused.
//
// Sensitivity score: the predicted change of the mean response E[y_i | η] when example i is
// removed, |μ'(η_i)| · |deviation_i| with μ' = h_i for the logistic and Poisson links (for CVI its
// expectation) and 1 for the Gaussian; with the first-order deviation this is Nickl et al.'s
// |e_i λ_i v_i|, λ_i = p_i(1 − p_i).
//
// Leave-one-out estimates without refitting: the posterior predictive of y_i under the latent
// N(η_i + deviation_i, v_i^{\i}) (glm.hpp's `predict_latent`, Gauss–Hermite by default), averaged
// into a negative log predictive density and, for logistic regression, an accuracy. For linear
// regression these are the exact leave-one-out (Bayesian LOO-CV) values.
//
// Cost: one product X Σ (N d² multiply-adds) for all v_i, O(N) for the rest.
#pragma once

#include <string_view>

#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"

namespace blr::inference {

/// Where e_i and h_i are evaluated: at η_i = x_iᵀm (Laplace, exact conjugate posterior), or as
/// expectations under η ~ N(x_iᵀm, v_i) (CVI).
enum class SiteEvaluation { at_mean, expected };

struct SensitivityOptions {
  SiteEvaluation sites = SiteEvaluation::at_mean;
  int quadrature_nodes = 32;  ///< Gauss–Hermite nodes of the expected logistic terms
  void validate() const;  ///< the table's ranges
  static const OptionTable<SensitivityOptions>& table();
  /// The defaults after the GLM method `glm_method` fitted the posterior: the sites where that
  /// method evaluates its own terms (expected under q after cvi, at the mean after laplace or
  /// exact). `blr sensitivity`, fit_glm and the registry's presets all take them from here.
  static SensitivityOptions after(std::string_view glm_method);
};

/// Per-example quantities, one entry per row of the design, in row order.
struct Sensitivity {
  Vector latent_mean;            ///< η_i = x_iᵀm
  Vector variance;               ///< v_i = x_iᵀΣx_i
  Vector error;                  ///< e_i = ℓ_i'
  Vector curvature;              ///< h_i = ℓ_i''
  Vector deviation;              ///< v_i e_i / (1 − h_i v_i) = η_i^{\i} − η_i
  Vector deviation_first_order;  ///< v_i e_i
  Vector loo_variance;           ///< v_i / (1 − h_i v_i) = x_iᵀΣ^{\i}x_i
  Vector score;                  ///< |μ'(η_i)| · |deviation_i|
};

/// The MPE quantities of every training example of `model` under q(w) = N(mean, covariance).
Sensitivity glm_sensitivity(const Glm& model, const Vector& mean, const Matrix& covariance,
                            const SensitivityOptions& options = {});

/// Leave-one-out NLL (mean negative log predictive density), accuracy (logistic) and RMSE from
/// the latent N(η_i + deviation_i, v_i^{\i}) of each example.
TestMetrics loo_estimate(const Glm& model, const Sensitivity& s,
                         const PredictiveOptions& options = {});

}  // namespace blr::inference
