#!/usr/bin/env python3
"""Synthetic GLM data for end-to-end benchmarks (`blr sensitivity`, `blr infer`).

Writes a CSV with a header x1,...,xD,y: features x ~ N(0, 1) independently, true weights
w_j ~ N(0, 1/D) and intercept 0.3, linear predictor a = 0.3 + xᵀw, and the response
  logistic  y ~ Bernoulli(σ(a))      (0/1)
  linreg    y = a + N(0, 0.5²)
  poisson   y ~ Poisson(exp(a / 2))  (halved so that counts stay moderate)
Standard library only, fixed seed, so the same command writes the same file.

Example: python3 bench/generate_glm_data.py --rows 100000 --features 50 --model logistic \
             --out /tmp/glm_1e5x50.csv
"""
import argparse
import math
import random
import sys


def poisson(rng, lam):
    # Knuth's multiplication method; lam stays small here (exp(a/2) with |a| of order 1).
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--model", choices=["logistic", "linreg", "poisson"], default="logistic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.rows < 1 or a.features < 1:
        sys.exit("--rows and --features must be positive integers.")
    rng = random.Random(a.seed)
    d = a.features
    w = [rng.gauss(0.0, 1.0 / math.sqrt(d)) for _ in range(d)]
    with open(a.out, "w") as f:
        f.write(",".join([f"x{j + 1}" for j in range(d)] + ["y"]) + "\n")
        for _ in range(a.rows):
            x = [rng.gauss(0.0, 1.0) for _ in range(d)]
            eta = 0.3 + sum(xj * wj for xj, wj in zip(x, w))
            if a.model == "logistic":
                y = "1" if rng.random() < 1.0 / (1.0 + math.exp(-eta)) else "0"
            elif a.model == "linreg":
                y = f"{eta + rng.gauss(0.0, 0.5):.6g}"
            else:
                y = str(poisson(rng, math.exp(eta / 2)))
            f.write(",".join(f"{v:.6g}" for v in x) + "," + y + "\n")


if __name__ == "__main__":
    main()
