#!/usr/bin/python3
"""`blr infer` against scikit-learn, statsmodels and a SciPy/NumPy Newton loop, as whole processes.

Usage: bench/inference_vs_python.py BUILD_DIR [--rows N] [--repeats R] [--cases A,B] [--em-parity]
                                    [--out results.json]

Generates the data once (fixed seeds) into a temporary directory, then times, as separate
processes reading the same CSV files (imports and parsing included), each case of issue 14's goal:

  logistic-laplace   blr infer logistic --method laplace (N x 50, prior precision 1)
  logistic-cvi       blr infer logistic --method cvi (from the prior, the default)
  logistic-cvi-warm  blr infer logistic --method cvi --cvi-start laplace
      vs  scikit-learn LogisticRegression (L2, C = 1, lbfgs) + the Laplace covariance (X'WX + I)^-1
          statsmodels Logit (MLE by Newton) and its covariance
          a NumPy Newton loop on the same posterior (the SciPy-style hand-written baseline)
  gmm-{full,diag}-d{2,5}   blr infer gmm --components 3 --covariance full|diag (EM) at
                           scikit-learn's default stopping rule: --tolerance 1e-3
                           --parameter-tolerance 0 (change of the mean log-likelihood per point)
      vs  scikit-learn GaussianMixture (3 components, same covariance type, k-means init, tol 1e-3)
  kalman             blr infer kalman local level, 10^6 steps, known variances (filter + smoother)
      vs  statsmodels UnobservedComponents('local level').smooth([V, W])
          a scalar NumPy/Python loop (filter + RTS smoother)

For each case it prints the median wall time of each side over R runs, and the ratio
blr / fastest other side (the goal is <= 0.5: blr at least 2x faster). --cases picks some of them.

--em-parity: EM iteration counts at the same tolerance from the same start: blr's k-means++ start
(the JSON's "initial") handed to scikit-learn as weights_init, means_init, precisions_init; blr
with --tolerance T --parameter-tolerance 0 against GaussianMixture(tol=T) for T = 1e-3, 1e-5, 1e-7
on the gmm files and on an overlapping 2-D mixture (where EM needs many steps). Needs Debian's
python3-sklearn, python3-statsmodels, python3-scipy (and python3-pandas, which they bring).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PY = sys.executable


def write_logistic(path, n, d, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    w = rng.standard_normal(d) / np.sqrt(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + x @ w)))).astype(int)
    header = ",".join([f"x{j + 1}" for j in range(d)] + ["y"])
    np.savetxt(path, np.column_stack([x, y]), delimiter=",", header=header, comments="",
               fmt=["%.17g"] * d + ["%d"])


def write_gmm(path, n, d, seed=2):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((3, d)) * 4
    z = rng.integers(0, 3, n)
    x = centres[z] + rng.standard_normal((n, d)) * (0.5 + z[:, None] * 0.3)
    header = ",".join(f"x{j + 1}" for j in range(d))
    np.savetxt(path, x, delimiter=",", header=header, comments="", fmt="%.17g")


def write_gmm_overlapping(path, n, seed=4):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((3, 2)) * 1.2
    z = rng.integers(0, 3, n)
    x = centres[z] + rng.standard_normal((n, 2)) * (0.6 + z[:, None] * 0.3)
    np.savetxt(path, x, delimiter=",", header="x1,x2", comments="", fmt="%.17g")


def write_series(path, n, v=1.0, w=0.1, seed=3):
    rng = np.random.default_rng(seed)
    level = np.cumsum(rng.standard_normal(n) * np.sqrt(w))
    y = level + rng.standard_normal(n) * np.sqrt(v)
    np.savetxt(path, y, header="y", comments="", fmt="%.17g")


SKLEARN_LOGISTIC = r"""
import sys, numpy as np, pandas as pd
from sklearn.linear_model import LogisticRegression
d = pd.read_csv(sys.argv[1]); y = d.pop("y").to_numpy(); x = d.to_numpy()
m = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000).fit(x, y)
X = np.column_stack([np.ones(len(x)), x]); w = np.concatenate([m.intercept_, m.coef_[0]])
p = 1 / (1 + np.exp(-X @ w)); H = (X * (p * (1 - p))[:, None]).T @ X + np.eye(X.shape[1])
cov = np.linalg.inv(H); print(w[:3], np.sqrt(np.diag(cov))[:3])
"""

STATSMODELS_LOGISTIC = r"""
import sys, numpy as np, pandas as pd, statsmodels.api as sm
d = pd.read_csv(sys.argv[1]); y = d.pop("y").to_numpy(); x = sm.add_constant(d.to_numpy())
r = sm.Logit(y, x).fit(disp=0, method="newton", tol=1e-10); print(r.params[:3], r.bse[:3])
"""

NEWTON_LOGISTIC = r"""
import sys, numpy as np, pandas as pd, scipy.linalg as sl
d = pd.read_csv(sys.argv[1]); y = d.pop("y").to_numpy(); x = d.to_numpy()
X = np.column_stack([np.ones(len(x)), x]); w = np.zeros(X.shape[1])
for _ in range(100):
    p = 1 / (1 + np.exp(-X @ w)); g = X.T @ (p - y) + w
    H = (X * (p * (1 - p))[:, None]).T @ X + np.eye(X.shape[1])
    if np.abs(g).max() < 1e-10: break
    w -= sl.solve(H, g, assume_a="pos")
cov = sl.inv(H); print(w[:3], np.sqrt(np.diag(cov))[:3])
"""

SKLEARN_GMM = r"""
import sys, pandas as pd
from sklearn.mixture import GaussianMixture
x = pd.read_csv(sys.argv[1]).to_numpy()
m = GaussianMixture(3, covariance_type=sys.argv[2], random_state=0).fit(x)
print(m.n_iter_, m.lower_bound_)
"""

SKLEARN_GMM_FROM = r"""
import json, sys, numpy as np, pandas as pd
from sklearn.mixture import GaussianMixture
x = pd.read_csv(sys.argv[1]).to_numpy(); cov = sys.argv[2]; tol = float(sys.argv[3])
ini = json.load(open(sys.argv[4]))["initial"]; c = np.array(ini["covariances"])
prec = np.array([np.linalg.inv(a) for a in c]) if cov == "full" else np.array([1 / np.diag(a) for a in c])
m = GaussianMixture(3, covariance_type=cov, tol=tol, max_iter=10000, weights_init=np.array(ini["weights"]),
                    means_init=np.array(ini["means"]), precisions_init=prec).fit(x)
print(json.dumps({"n_iter": int(m.n_iter_), "converged": bool(m.converged_)}))
"""

STATSMODELS_KALMAN = r"""
import sys, numpy as np, pandas as pd, statsmodels.api as sm
y = pd.read_csv(sys.argv[1])["y"].to_numpy()
r = sm.tsa.UnobservedComponents(y, "local level").smooth([1.0, 0.1]); print(r.llf)
"""

LOOP_KALMAN = r"""
import sys, numpy as np, pandas as pd
y = pd.read_csv(sys.argv[1])["y"].to_numpy().tolist(); V, W = 1.0, 0.1
n = len(y); m, P = 0.0, 1e7; ms = [0.0] * n; Ps = [0.0] * n; mp = [0.0] * n; Pp = [0.0] * n
for t in range(n):
    a, R = m, P + W; mp[t], Pp[t] = a, R
    K = R / (R + V); m = a + K * (y[t] - a); P = (1 - K) * R; ms[t], Ps[t] = m, P
s = ms[-1]
for t in range(n - 2, -1, -1):
    J = Ps[t] / Pp[t + 1]; s = ms[t] + J * (s - mp[t + 1])
print(m, s)
"""


def timed(argv, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
        if r.returncode != 0:
            raise SystemExit(f"failed ({r.returncode}): {' '.join(argv)}\n{r.stderr[-2000:]}")
    return statistics.median(times)


def py(code, *args):
    return [PY, "-c", code, *args]


def em_parity(blr, tmp, files):
    """blr's EM iterations and scikit-learn's from blr's start, at the same tolerances."""
    out = []
    print("EM iterations at the same tolerance from the same start (blr's k-means++ 'initial')")
    print(f"{'data':<14} {'covariance':<10} {'tol':>7} {'blr':>5} {'scikit-learn':>13}")
    for name, path in files:
        for cov in ("full", "diag"):
            for tol in (1e-3, 1e-5, 1e-7):
                js = os.path.join(tmp, "em.json")
                subprocess.run([blr, "infer", "gmm", "--data", path, "--components", "3",
                                "--covariance", cov, "--tolerance", str(tol),
                                "--parameter-tolerance", "0", "--max-iterations", "10000",
                                "--json", js], check=True, stdout=subprocess.DEVNULL)
                with open(js) as f:
                    mine = json.load(f)
                r = subprocess.run(py(SKLEARN_GMM_FROM, path, cov, str(tol), js), check=True,
                                   capture_output=True, text=True)
                theirs = json.loads(r.stdout)
                out.append({"data": name, "covariance": cov, "tol": tol,
                            "blr": mine["iterations"], "blr_converged": mine["converged"],
                            "scikit_learn": theirs["n_iter"],
                            "scikit_learn_converged": theirs["converged"]})
                print(f"{name:<14} {cov:<10} {tol:>7.0e} {mine['iterations']:>5} "
                      f"{theirs['n_iter']:>13}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--steps", type=int, default=1000000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cases", default="", help="comma list of cases (default: all)")
    ap.add_argument("--em-parity", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    blr = os.path.join(a.build, "blr")
    tmp = tempfile.mkdtemp(prefix="blr-vs-python-")
    logistic = os.path.join(tmp, "logistic.csv")
    write_logistic(logistic, a.rows, 50)
    series = os.path.join(tmp, "series.csv")
    write_series(series, a.steps)
    logistic_others = {"scikit-learn": py(SKLEARN_LOGISTIC, logistic),
                       "statsmodels": py(STATSMODELS_LOGISTIC, logistic),
                       "numpy-newton": py(NEWTON_LOGISTIC, logistic)}
    glm = [blr, "infer", "logistic", "--train", logistic, "--label", "y", "--prior-precision", "1"]
    cases = {
        "logistic-laplace": (glm + ["--method", "laplace"], logistic_others),
        "logistic-cvi": (glm + ["--method", "cvi"], logistic_others),
        "logistic-cvi-warm": (glm + ["--method", "cvi", "--cvi-start", "laplace"], logistic_others),
    }
    gmm_files = []
    for d in (2, 5):
        path = os.path.join(tmp, f"gmm{d}.csv")
        write_gmm(path, a.rows, d)
        gmm_files.append((f"separated d={d}", path))
        for cov in ("full", "diag"):
            cases[f"gmm-{cov}-d{d}"] = (
                [blr, "infer", "gmm", "--data", path, "--components", "3", "--covariance", cov,
                 "--tolerance", "1e-3", "--parameter-tolerance", "0"],
                {"scikit-learn": py(SKLEARN_GMM, path, cov)})
    cases["kalman"] = ([blr, "infer", "kalman", "--data", series, "--column", "y", "--obs-var",
                        "1", "--state-var", "0.1"],
                       {"statsmodels": py(STATSMODELS_KALMAN, series),
                        "python-loop": py(LOOP_KALMAN, series)})
    if a.cases:
        wanted = a.cases.split(",")
        unknown = [c for c in wanted if c not in cases]
        if unknown:
            raise SystemExit(f"unknown case(s) {unknown}; the cases are {list(cases)}")
        cases = {k: v for k, v in cases.items() if k in wanted}
    results = {}
    print(f"{a.rows} rows, {a.steps} Kalman steps, median of {a.repeats} whole-process runs")
    print(f"{'case':<18} {'blr':>8}  {'others':<55} {'blr/fastest':>11}")
    cache = {}  # the Python sides of the logistic cases are the same commands: time them once
    for name, (mine, others) in cases.items():
        t_blr = timed(mine, a.repeats)
        t_other = {}
        for k, v in others.items():
            key = tuple(v)
            if key not in cache:
                cache[key] = timed(v, a.repeats)
            t_other[k] = cache[key]
        fastest = min(t_other.values())
        ratio = t_blr / fastest
        results[name] = {"blr": t_blr, "others": t_other, "ratio_to_fastest": ratio,
                         "goal_met": ratio <= 0.5}
        others_text = ", ".join(f"{k} {v:.2f}" for k, v in t_other.items())
        print(f"{name:<18} {t_blr:8.2f}  {others_text:<55} {ratio:11.2f}"
              f"{'' if ratio <= 0.5 else '  (goal <= 0.5 not met)'}", flush=True)
    if a.em_parity:
        overlapping = os.path.join(tmp, "gmm-overlapping.csv")
        write_gmm_overlapping(overlapping, a.rows)
        results["em_parity"] = em_parity(blr, tmp, gmm_files + [("overlapping", overlapping)])
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
