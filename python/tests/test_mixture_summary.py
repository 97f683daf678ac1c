"""blr.infer.gmm (issue 31, item 2): the library's mixture summary
(inference/mixture_summary.hpp) that `blr infer gmm` prints and writes. On Old Faithful the
Python EM, VMP and SVI fits equal the command's JSON (the same code; 1e-12 relative through JSON
text), AIC and BIC follow from the log-likelihood and scikit-learn's parameter count, and new
rows' predictions agree with the responsibilities.
"""

import csv
import json
import math
import subprocess

import numpy as np
import pytest

import blr
from conftest import CLI

DATA = CLI.resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def cli():
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    return CLI


def faithful():
    return np.array([[float(r["eruptions"]), float(r["waiting"])]
                     for r in csv.DictReader(open(DATA / "faithful.csv"))])


def command(tmp_path, *flags):
    out = tmp_path / "run.json"
    subprocess.run([str(CLI), "infer", "gmm", "--data", str(DATA / "faithful.csv"), *flags,
                    "--json", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


def close(a, b, rel=1e-12):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rel, atol=0)


@pytest.mark.parametrize("flags,kwargs", [
    (["--components", "2"], {}),
    (["--components", "3", "--covariance", "diag", "--seed", "4"],
     {"components": 3, "covariance": "diag", "seed": 4}),
    (["--components", "4", "--method", "vmp", "--alpha0", "0.001"],
     {"components": 4, "method": "vmp", "alpha0": 0.001}),
    (["--components", "2", "--method", "svi", "--batch-size", "20", "--iterations", "300"],
     {"method": "svi", "batch_size": 20, "iterations": 300}),
])
def test_gmm_equals_the_command(cli, tmp_path, flags, kwargs):
    ran = command(tmp_path, *flags)
    r = blr.infer.gmm(faithful(), **kwargs)
    assert close(r["weights"], ran["weights"]) and close(r["means"], ran["means"])
    assert close(np.array(r["covariances"]), np.array(ran["covariances"]))
    assert r["iterations"] == ran["iterations"] and r["converged"] == ran["converged"]
    f = ran["fit_statistics"]
    assert r["observations"] == f["observations"] == 272
    assert r["parameters"] == f["parameters"]
    assert close(r["log_likelihood"], f["log_likelihood"])
    if r["method"] == "em":
        assert close(r["bic"], f["bic"]) and close(r["aic"], f["aic"])
    else:
        assert close(r["elbo"], ran["elbo"]) and "bic" not in r


def test_statistics_and_predictions():
    x = faithful()
    r = blr.infer.gmm(x, components=2)
    k = 1 + 2 * 2 + 2 * 3  # weights, means, full covariances (scikit-learn's _n_parameters)
    assert r["parameters"] == k
    assert math.isclose(r["bic"], k * math.log(272) - 2 * r["log_likelihood"], rel_tol=1e-12)
    assert math.isclose(r["aic"], 2 * k - 2 * r["log_likelihood"], rel_tol=1e-12)
    p = r.predict_proba(x)
    assert np.allclose(p, r["responsibilities"], atol=1e-9)
    assert (r.predict(x) == p.argmax(axis=1)).all()
    assert math.isclose(r.log_density(x).sum(), r["log_likelihood"], rel_tol=1e-12)
    text = r.summary(["eruptions", "waiting"]).as_text()
    assert "BIC" in text and "waiting" in text


@pytest.mark.parametrize("kwargs,words", [
    ({"method": "kmeans"}, "em, vmp or svi"),
    ({"method": "vmp", "covariance": "diag"}, "Normal–Wishart"),
    ({"components": 400}, r"Option 'components' \(400\) exceeds the number of data rows \(272\)"),
    ({"method": "vmp", "max_iterations": 2}, "raise max_iterations"),
])
def test_bad_arguments_raise_one_sentence(kwargs, words):
    with pytest.raises(blr.Error, match=words):
        blr.infer.gmm(faithful(), **kwargs)
    r = blr.infer.gmm(faithful())
    with pytest.raises(blr.Error, match="3 columns but the mixture was fitted on 2"):
        r.predict(np.zeros((2, 3)))
