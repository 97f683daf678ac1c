#!/usr/bin/env python3
"""Issue 31, item 2: the oracle of tests/cli/infer_fit_statistics.sh, by statsmodels (Debian
python3-statsmodels): log-likelihood, intercept-only log-likelihood, pseudo-R² (McFadden), R²,
AIC and BIC of three maximum-likelihood fits on data/pima_train.csv, the fits `blr infer` makes
with a near-flat prior (its posterior mean is then the MLE):

  logistic  type == "Yes" on every other column
  linreg    bmi on glu, bp, skin, age (OLS)
  poisson   npreg on glu, bp, age

Usage: /usr/bin/python3 bench/fit_statistics_vs_statsmodels.py [data/pima_train.csv]
"""
import csv
import sys

import numpy as np
import statsmodels.api as sm


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "data/pima_train.csv"
    rows = list(csv.DictReader(open(path)))
    col = lambda name: np.array([float(r[name]) for r in rows])
    design = lambda names: sm.add_constant(np.column_stack([col(n) for n in names]))
    y = np.array([1.0 if r["type"] == "Yes" else 0.0 for r in rows])
    fits = {
        "logistic": sm.Logit(y, design(["npreg", "glu", "bp", "skin", "bmi", "ped", "age"])).fit(
            disp=0, tol=1e-12, maxiter=200),
        "linreg": sm.OLS(col("bmi"), design(["glu", "bp", "skin", "age"])).fit(),
        "poisson": sm.GLM(col("npreg"), design(["glu", "bp", "age"]),
                          family=sm.families.Poisson()).fit(tol=1e-12),
    }
    for name, f in fits.items():
        # OLS has no llnull: the intercept-only OLS fit's log-likelihood is it.
        llnull = sm.OLS(col("bmi"), np.ones(len(rows))).fit().llf if name == "linreg" else f.llnull
        k = f.model.exog.shape[1]
        bic = k * np.log(len(rows)) - 2 * f.llf  # Logit's and OLS's bic; GLM's bic is deviance-based
        print(f"{name}: log_likelihood {f.llf:.12g} null_log_likelihood {llnull:.12g} "
              f"pseudo_r2 {1 - f.llf / llnull:.12g} aic {f.aic:.12g} bic {bic:.12g}"
              + (f" r_squared {f.rsquared:.12g}" if name == "linreg" else ""))

if __name__ == "__main__":
    main()
