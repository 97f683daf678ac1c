// Multimodal optimisation with a mixture of Gaussians (Khan & Rue 2023, §3.2, Table 1 last row).
//
// The BLR over a K-component mixture (mixture_rule.hpp) locates several minima of a loss in one
// run: each component settles on a minimum, E_{q_k}[∇ℓ̄ + ∇log q] = 0 (eq. 31), and the mixture's
// entropy keeps the components from collapsing onto the same one. `find_minima` runs it from
// components spread over a box and returns the component means; the loss is divided by a
// temperature T (q ∝ exp(−ℓ̄/T)) so that components are narrow compared with the distance
// between minima.
#pragma once

#include <cmath>
#include <vector>

#include "blr/rule/mixture_rule.hpp"

namespace blr {

struct MultimodalOptions {
  int components = 9;
  double box_low = -5.0, box_high = 5.0;  ///< initial means: a grid in the box, or uniform draws
  bool grid = true;  ///< components on a regular grid (components must be a d-th power) or random
  double initial_precision = 1.0;
  double temperature = 1.0;  ///< T > 0
  long steps = 400;
  MixtureRuleOptions rule;
  void validate() const {
    check(components >= 1, "Option 'components' must be at least 1.");
    check(box_low < box_high, "Option 'box_low' must be below 'box_high'.");
    check_positive("initial_precision", initial_precision);
    check_positive("temperature", temperature);
    check(steps >= 1, "Option 'steps' must be at least 1.");
    rule.validate();
  }
};

/// ℓ̄/T with value, gradient and Hessian.
template <HasHessian L>
struct Tempered {
  const L& loss;
  double temperature;
  Index dimension() const { return loss.dimension(); }
  double value(const Vector& t) const { return loss.value(t) / temperature; }
  Vector gradient(const Vector& t) const { return loss.gradient(t) / temperature; }
  Matrix hessian(const Vector& t) const { return loss.hessian(t) / temperature; }
};

template <HasHessian L>
MixtureState find_minima(const L& loss, Rng& rng, const MultimodalOptions& options) {
  options.validate();
  const Index d = loss.dimension();
  std::vector<GaussianFull> components;
  const auto per_axis = static_cast<int>(std::lround(std::pow(options.components, 1.0 / static_cast<double>(d))));
  check(!options.grid || std::lround(std::pow(per_axis, static_cast<double>(d))) == options.components,
        fmt::format("Option 'components' must be a {}-th power for a grid start; got {}.", d, options.components));
  for (int k = 0; k < options.components; ++k) {
    Vector m(d);
    int rest = k;
    for (Index j = 0; j < d; ++j) {
      double u = rng.uniform();
      if (options.grid) {  // cell centres of a per_axis^d grid
        u = (static_cast<double>(rest % per_axis) + 0.5) / per_axis;
        rest /= per_axis;
      }
      m[j] = options.box_low + (options.box_high - options.box_low) * u;
    }
    components.emplace_back(m, Matrix(options.initial_precision * Matrix::Identity(d, d)));
  }
  MixtureState state{GaussianMixture<GaussianFull>(
      std::move(components), Vector::Constant(options.components, 1.0 / options.components))};
  const Tempered<L> tempered{loss, options.temperature};
  for (long t = 0; t < options.steps; ++t) mixture_step(state, tempered, rng, options.rule);
  return state;
}

}  // namespace blr
