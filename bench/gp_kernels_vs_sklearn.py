#!/usr/bin/env python3
"""Issue 31, item 5: the oracle of tests/inference/gp_kernels_test.cpp's kernel-algebra cases,
computed by scikit-learn (Debian python3-sklearn 1.2.1). Prints the log marginal likelihood and
its gradient in blr's parameter order for the same data, kernels and hyperparameters:

  A  GP regression, rbf with ARD ℓ = (0.8, 1.3, 2.0), σ² = 1.5, + white σ² = 0.05, σₙ² = 0.1
     (also on y − ȳ, as blr.infer.gp_regression models it: python/tests/test_gp.py)
  B  GP regression, matern52(ℓ = 1.2, σ² = 0.7) * linear(σ² = 0.4) + constant(σ² = 0.3), σₙ² = 0.2
  C  GP classification (Laplace), rbf with ARD ℓ = (0.9, 1.1, 1.7), σ² = 2.0, + linear σ² = 0.2

blr's kernels in scikit-learn's terms: rbf(ℓ, σ²) = C(σ²)·RBF(ℓ); matern52 = C·Matern(ν = 2.5);
linear(σ²) = C(σ²)·DotProduct(σ₀ = 0, fixed); white(σ²) = WhiteKernel(σ²); constant = C. blr's
θ lists each factor's log ℓ (one per column with ARD) then its log σ², in the order written;
scikit-learn's lists C before the factor it scales, so the gradients are reordered here.
Usage: /usr/bin/python3 bench/gp_kernels_vs_sklearn.py
"""
import math

import numpy as np
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (RBF, ConstantKernel as C, DotProduct, Matern,
                                              WhiteKernel)


def data():
    i = np.arange(20.0)
    x = np.stack([np.sin(0.7 * i), np.cos(1.3 * i), 0.1 * i - 1.0], axis=1)
    y = np.sin(2 * x[:, 0]) + 0.5 * x[:, 1] + 0.1 * np.cos(5 * i)
    labels = (np.sin(2 * x[:, 0]) + x[:, 1] > 0).astype(float)
    return x, y, labels


def show(name, value, gradient):
    print(f"{name}: log marginal likelihood {value:.15g}")
    print(f"{name}: gradient " + ", ".join(f"{g:.15g}" for g in gradient))


def main():
    x, y, labels = data()
    # A: sklearn θ = [log C, log ℓ1..3, log white]; blr θ = [log ℓ1..3, log σ², log white].
    ka = C(1.5) * RBF([0.8, 1.3, 2.0]) + WhiteKernel(0.05)
    gpr = GaussianProcessRegressor(ka, alpha=0.1, optimizer=None).fit(x, y)
    v, g = gpr.log_marginal_likelihood(ka.theta, eval_gradient=True)
    show("A", v, [g[1], g[2], g[3], g[0], g[4]])
    # A on y − ȳ: blr.infer.gp_regression and `blr infer gpr` model the centred responses.
    gpr = GaussianProcessRegressor(ka, alpha=0.1, optimizer=None).fit(x, y - y.mean())
    v, g = gpr.log_marginal_likelihood(ka.theta, eval_gradient=True)
    show("A centred", v, [g[1], g[2], g[3], g[0], g[4]])
    # B: sklearn θ = [log C1, log ℓ, log C2, log C3] (DotProduct's σ₀ fixed);
    #    blr θ = [log ℓ, log σ²(matern), log σ²(linear), log σ²(constant)].
    kb = (C(0.7) * Matern(1.2, nu=2.5)) * (C(0.4) * DotProduct(0.0, sigma_0_bounds="fixed")) + C(0.3)
    gpr = GaussianProcessRegressor(kb, alpha=0.2, optimizer=None).fit(x, y)
    v, g = gpr.log_marginal_likelihood(kb.theta, eval_gradient=True)
    show("B", v, [g[1], g[0], g[2], g[3]])
    # C: sklearn θ = [log C, log ℓ1..3, log C2]; blr θ = [log ℓ1..3, log σ², log σ²(linear)].
    kc = C(2.0) * RBF([0.9, 1.1, 1.7]) + C(0.2) * DotProduct(0.0, sigma_0_bounds="fixed")
    gpc = GaussianProcessClassifier(kc, optimizer=None).fit(x, labels)
    v, g = gpc.log_marginal_likelihood(kc.theta, eval_gradient=True)
    show("C", v, [g[1], g[2], g[3], g[0], g[4]])


if __name__ == "__main__":
    main()
