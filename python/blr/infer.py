"""The core's Bayesian inference on NumPy arrays (the C++ behind ``blr infer``).

* ``glm(x, y, likelihood, method, ...)``: Bayesian linear, logistic or Poisson regression by
  Laplace (the BLR with the delta method at ρ = 1: Newton's method, Khan & Rue 2023 §1.3.2) or CVI
  (Khan & Lin 2017), with ``sensitivities=True`` the memory-perturbation quantities of every
  training example and the leave-one-out estimates (Nickl et al. 2023). The design is used as
  given: add an intercept column yourself (``prior_precision`` takes one number per column, so it
  can have a weak prior). A Gaussian likelihood's noise precision is estimated unless
  ``noise_precision`` is given: the exact Normal–Gamma posterior (Student-t coefficients), as
  ``blr infer linreg``; ``assumptions`` says in words what was assumed.
* ``kalman(y, transition, observation, state_noise, obs_noise, init_mean, init_cov)``: the Kalman
  filter and RTS smoother (the BLR's conjugate Gaussian updates, §5.1).
* ``gmm(x, components, covariance)``: a Gaussian mixture by EM (the BLR with a mixture family).
* ``gp_regression(x, y, kernel="rbf", ard=False, ...)`` and ``gp_classification(x, y, kernel,
  ard, method="laplace"|"cvi", ...)``: Gaussian processes with kernel expressions (sums of
  products of rbf, matern32, matern52, linear, white and constant; ARD length-scales), the
  hyperparameters learned by L-BFGS on the evidence (``learn=True``), and predictions at
  ``x_new``: what ``blr infer gpr|gpc`` runs, equal to scikit-learn's evidence on the same kernel.
* ``merge(prior_mean, prior_precision, means, precisions, scale=1)``: Gaussian posteriors fitted
  from one prior merged in natural parameters, λ₀ + scale·Σ(λ_t − λ₀) (Daheim et al. 2024); for
  conjugate models on disjoint data the full-data posterior.

Results are dicts of NumPy arrays and Python numbers.
Arguments that do not fit (an array of the wrong dimension, a misspelled keyword, ...) raise
``blr.Error`` with one sentence naming the argument (``_arguments.py``).
"""

from ._arguments import wrap
from ._blr import infer as _infer

glm = wrap(_infer.glm, "blr.infer.glm")
kalman = wrap(_infer.kalman, "blr.infer.kalman")
gmm = wrap(_infer.gmm, "blr.infer.gmm")
merge = wrap(_infer.merge, "blr.infer.merge")
gp_regression = wrap(_infer.gp_regression, "blr.infer.gp_regression")
gp_classification = wrap(_infer.gp_classification, "blr.infer.gp_classification")

__all__ = ["glm", "kalman", "gmm", "merge", "gp_regression", "gp_classification"]
