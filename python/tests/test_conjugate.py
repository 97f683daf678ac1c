"""blr.infer.conjugate (issue 31, item 2): the library's conjugate posterior summary
(inference/conjugate_summary.hpp) that `blr infer conjugate` prints, so on the same data and
prior the Python result equals the command's JSON (the same code; 1e-12 relative for numbers that
went through JSON text), its methods agree with one another, and bad arguments raise one sentence.
The Beta–Bernoulli numbers are also checked against their closed forms (a + successes,
b + failures; log evidence ln B(a_N, b_N) − ln B(a, b)).
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


def command(tmp_path, *flags):
    out = tmp_path / "run.json"
    subprocess.run([str(CLI), "infer", "conjugate", *flags, "--json", str(out)], check=True,
                   capture_output=True)
    return json.loads(out.read_text())


def nile():
    return np.array([float(r["volume"]) for r in csv.DictReader(open(DATA / "nile.csv"))])


def same(python, ran):
    for key in ("names", "method", "likelihood", "observations", "posterior", "iterations",
                "converged", "level"):
        assert python[key] == ran[key], key
    for key in ("mean", "sd", "lower", "upper", "log_evidence", "elbo", "correlation"):
        if key in ran:
            assert np.allclose(np.asarray(python[key], float), np.asarray(ran[key], float),
                               rtol=1e-12, atol=0), key


@pytest.mark.parametrize("flags,likelihood,prior,method", [
    (["--prior", "2,0.5"], "poisson", (2, 0.5), "exact"),
    ([], "normal", None, "exact"),
    (["--prior", "1000,1,2,3", "--method", "vmp"], "normal", (1000, 1, 2, 3), "vmp"),
])
def test_nile_equals_the_command(cli, tmp_path, flags, likelihood, prior, method):
    counts = likelihood == "poisson"
    y = nile() if not counts else np.round(nile())
    if counts:  # whole counts for the Poisson model, in a file of their own
        path = tmp_path / "counts.csv"
        path.write_text("volume\n" + "\n".join(str(int(v)) for v in y) + "\n")
    else:
        path = DATA / "nile.csv"
    ran = command(tmp_path, "--data", str(path), "--column", "volume", "--likelihood",
                  likelihood, "--level", "0.9", *flags)
    r = blr.infer.conjugate(y, likelihood, prior=prior, method=method)
    same(r.to_dict(0.9), ran)
    assert np.allclose(r.interval(0.9), np.column_stack([ran["lower"], ran["upper"]]),
                       rtol=1e-12, atol=0)


def test_categorical_labels_equal_the_command(cli, tmp_path):
    labels = ["red", "blue", "red", "green", "red", "blue"]
    path = tmp_path / "colours.csv"
    path.write_text("colour\n" + "\n".join(labels) + "\n")
    ran = command(tmp_path, "--data", str(path), "--column", "colour", "--likelihood",
                  "categorical")
    r = blr.infer.conjugate(labels, "categorical")
    same(r.to_dict(), ran)
    assert r["classes"] == ["red", "blue", "green"] == r.names
    # The Dirichlet's marginals: Beta(α_k, α₀ − α_k) with α = 1 + counts = (4, 3, 2).
    assert np.allclose(r.mean, np.array([4, 3, 2]) / 9, rtol=1e-15)
    # Declared classes set the order, and one with no observation keeps its prior.
    s = blr.infer.conjugate(labels, "categorical", classes=["blue", "green", "red", "violet"])
    assert s["posterior"]["alpha"] == [3.0, 2.0, 4.0, 1.0]


def test_beta_bernoulli_closed_form():
    y = np.array([1, 0, 1, 1, 0, 1, 1])
    r = blr.infer.conjugate(y, "bernoulli", prior=(2, 3))
    a, b = 2 + 5, 3 + 2
    assert r["posterior"] == {"a": a, "b": b}
    assert math.isclose(r.mean[0], a / (a + b), rel_tol=1e-15)
    beta = lambda p, q: math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q)
    assert math.isclose(r["log_evidence"], beta(a, b) - beta(2, 3), rel_tol=1e-12)
    lower, upper = r.interval(0.5)[0]
    assert lower < a / (a + b) < upper
    # A wider level holds the narrower interval.
    wide = r.interval(0.99)[0]
    assert wide[0] < lower and upper < wide[1]
    text = r.summary(0.9).as_text()
    assert "theta" in text and "Beta(7, 5)" in text and "5%" in text and "95%" in text


def test_svi_and_vmp_report_the_elbo():
    y = nile()
    vmp = blr.infer.conjugate(y, "normal", prior=(1000, 1, 2, 3), method="vmp")
    svi = blr.infer.conjugate(y, "normal", prior=(1000, 1, 2, 3), method="svi", iterations=300,
                              batch_size=20, seed=1)
    assert vmp["converged"] and "elbo" in vmp and "log_evidence" not in vmp
    assert not svi["converged"] and "fixed number" in svi["note"]
    assert svi["iterations"] == 300
    assert "ELBO" in svi.summary().as_text()


@pytest.mark.parametrize("args,kwargs,words", [
    (([1, 0, 2], "bernoulli"), {}, "each must be 0 or 1"),
    (([1.5, 2], "poisson"), {}, "non-negative whole count"),
    (([1.0, 2.0], "normal"), {"prior": (0, 1, 1)}, "needs 4 numbers"),
    (([1, 0], "bernoulli"), {"method": "vmp"}, "takes exact"),
    (([1, 0], "binomial"), {}, "bernoulli, poisson, normal or categorical"),
    ((["a", "b"], "categorical"), {"classes": ["a"]}, "not one of the classes"),
    (([1, 0], "bernoulli"), {"classes": ["a"]}, "only to likelihood='categorical'"),
    (([1.0, 2.0], "normal"), {"method": "vmp", "max_iterations": 1}, "raise max_iterations"),
    (([1.0, 2.0], "normal"), {"metod": "vmp"}, "metod"),
])
def test_bad_arguments_raise_one_sentence(args, kwargs, words):
    with pytest.raises(blr.Error, match=words):
        blr.infer.conjugate(*args, **kwargs)
