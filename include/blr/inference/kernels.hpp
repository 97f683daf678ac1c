// Covariance functions for Gaussian processes and their hyperparameter gradients (Rasmussen &
// Williams 2006, GPML §4.2, eqs. 4.9 and 4.17; the kernel algebra of GPML §4.2.4 and of GPy and
// scikit-learn): sums of products of base kernels, written as an expression such as
// "rbf*linear+white" or "matern52(l=2,v=0.5)+white(v=0.01)".
//
// Base kernels, with r the distance between the inputs scaled per column by the length-scales ℓ
// (one ℓ, or one per input column with ARD, "automatic relevance determination": r² = Σ_d
// (a_d − b_d)²/ℓ_d²):
//
//     rbf        k = σ² exp(−r²/2)                    (squared exponential)
//     matern32   k = σ² (1 + s) e^{−s},          s = √3 r
//     matern52   k = σ² (1 + s + s²/3) e^{−s},   s = √5 r
//     linear     k = σ² aᵀb                           (Bayesian linear regression through 0)
//     white      k = σ² 1[a and b are the same training input]   (zero between different sets)
//     constant   k = σ²
//
// A product multiplies its factors elementwise, a sum adds its terms (both again kernels). Every
// hyperparameter is learned in log space, θ = (log ℓ_1, …, log σ²) per factor in the order written.
// The gradients:
//     ∂k/∂log σ² = k_base,
//     ∂k/∂log ℓ_d = σ² (Δ_d²/ℓ_d²) exp(−r²/2)                          (rbf)
//                 = 3σ² (Δ_d²/ℓ_d²) e^{−s}                             (matern32)
//                 = 5σ² (Δ_d²/ℓ_d²) (1 + s) e^{−s} / 3                 (matern52)
// (from ∂s/∂log ℓ_d = −c² Δ_d²/(ℓ_d² s) and dk/ds = −σ² s e^{−s}, resp. −σ² s (1 + s) e^{−s}/3;
// summed over d they are the one-ℓ forms σ² r² e^{−r²/2}, σ² s² e^{−s}, σ² s² (1 + s) e^{−s}/3),
// a product's by the product rule ∂(K₁∘K₂) = ∂K₁∘K₂ + K₁∘∂K₂, a sum's term by term.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "blr/core/types.hpp"

namespace blr::inference {

enum class KernelKind { rbf, matern32, matern52, linear, white, constant };

/// "rbf", "matern32", "matern52", "linear", "white", "constant".
std::string to_string(KernelKind kind);
/// Parses the names of to_string; throws a blr::Error naming the allowed ones otherwise.
KernelKind parse_kernel(const std::string& name);
/// Whether the kind has length-scales (rbf, matern32, matern52).
bool is_stationary(KernelKind kind);

/// One factor: a base kernel and its hyperparameters.
struct BaseKernel {
  KernelKind kind = KernelKind::rbf;
  Vector lengthscales = Vector::Ones(1);  ///< ℓ (stationary kinds: one, or one per column)
  double variance = 1.0;                  ///< σ²
};

/// A sum of products of base kernels.
class Kernel {
 public:
  /// One base kernel (the length-scale is ignored by the kinds without one).
  Kernel(KernelKind kind = KernelKind::rbf, double lengthscale = 1.0, double variance = 1.0);

  /// Parses an expression: terms joined by '+', each factors joined by '*', each factor a name
  /// with optional starting values, "rbf(l=1.3,v=2)" ("lengthscale"/"l", "variance"/"v"). Values
  /// not given are `lengthscale` and `variance`. No parentheses around sums. One sentence naming
  /// the part that does not parse.
  static Kernel parse(const std::string& expression, double lengthscale = 1.0,
                      double variance = 1.0);

  Kernel operator+(const Kernel& other) const;
  Kernel operator*(const Kernel& other) const;
  /// The same kernel with one length-scale per input column (`columns` ≥ 1) in every stationary
  /// factor, each starting at that factor's (first) ℓ.
  Kernel with_ard(Index columns) const;

  /// The expression with names only ("rbf*linear+white").
  std::string expression() const;
  /// The expression with its values ("rbf(ℓ=1.3, σ²=2) + white(σ²=0.1)").
  std::string describe() const;
  /// Throws unless every ℓ and σ² is positive and finite.
  void validate() const;

  /// k(a_i, b_j) for all row pairs (a: n×p, b: m×p). A white factor is σ² on the diagonal when a
  /// and b are the same object (k(x, x) of one set of inputs, as scikit-learn's WhiteKernel with
  /// Y = None), and zero between two sets.
  Matrix matrix(const Matrix& a, const Matrix& b) const;
  /// K = k(x, x) over one set of inputs (white on its diagonal).
  Matrix matrix(const Matrix& x) const { return matrix(x, x); }
  /// k(x_i, x_i) for each row (white included: the prior variance at an input of its own).
  Vector diagonal(const Matrix& x) const;
  /// ∂K/∂θ_j of K = k(x, x), in the order of log_parameters().
  std::vector<Matrix> gradients(const Matrix& x) const;

  /// θ: log ℓ and log σ² of every factor, in the order written.
  Vector log_parameters() const;
  /// The same structure with θ (as many entries as log_parameters()).
  Kernel with_log_parameters(const Vector& theta) const;
  /// A name per entry of θ: "rbf.lengthscale", "rbf.lengthscale[2]" (ARD), "white.variance";
  /// a kind that occurs more than once is numbered ("rbf#2.variance").
  std::vector<std::string> parameter_names() const;
  /// exp(θ): the hyperparameters themselves, in the same order.
  Vector parameters() const { return log_parameters().array().exp().matrix(); }

  /// The terms (sum) of factors (product).
  const std::vector<std::vector<BaseKernel>>& terms() const { return terms_; }
  /// One base kernel without ARD: its kind, ℓ and σ² (refused for another kernel: use describe()).
  bool is_single() const;
  KernelKind kind() const { return single().kind; }
  /// ℓ of a single stationary kernel (refused for the kinds without one).
  double lengthscale() const;
  double variance() const { return single().variance; }

  /// One base kernel from (log ℓ, log σ²) (the single-kernel form of with_log_parameters).
  static Kernel from_log_parameters(KernelKind kind, const Vector& theta);

 private:
  const BaseKernel& single() const;
  std::vector<std::vector<BaseKernel>> terms_;
};

}  // namespace blr::inference
