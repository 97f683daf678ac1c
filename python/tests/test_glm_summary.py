"""blr.infer.glm's result object (issue 31, item 2): the library's posterior summary
(inference/glm_summary.hpp) that `blr infer linreg|logistic|poisson` prints, so on the same data
and priors the Python intervals, fit statistics, WAIC and predictions equal the command's JSON
and prediction file (the same code; 1e-10 relative for numbers that went through text), and its
methods (summary, interval, predict, to_dict, dict-style access) agree with one another.
"""

import csv
import json
import subprocess

import numpy as np
import pytest

import blr
from conftest import CLI

DATA = CLI.resolve().parents[1] / "data"
FEATURES = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]
Z90 = 1.6448536269514722  # Φ⁻¹(0.95), Abramowitz & Stegun 26.2


def pima(name, label=True):
    rows = list(csv.DictReader(open(DATA / name)))
    x = np.array([[1.0] + [float(r[c]) for c in FEATURES] for r in rows])
    y = np.array([1.0 if r["type"] == "Yes" else 0.0 for r in rows]) if label else None
    return x, y


def command(tmp_path, *flags):
    out = tmp_path / "run.json"
    subprocess.run([str(CLI), "infer", *flags, "--json", str(out)], check=True,
                   capture_output=True)
    return json.loads(out.read_text())


def rows_of(path):
    return list(csv.DictReader(open(path)))


@pytest.fixture(scope="module")
def cli():
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    return CLI


def close(a, b, rel=1e-10):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rel, atol=0)


def test_logistic_equals_the_command(cli, tmp_path):
    x, y = pima("pima_train.csv")
    x_new, _ = pima("pima_test.csv")
    ran = command(tmp_path, "logistic", "--train", str(DATA / "pima_train.csv"), "--label", "type",
                  "--positive", "Yes", "--level", "0.9", "--predict", str(DATA / "pima_test.csv"),
                  "--predict-out", str(tmp_path / "p.csv"))
    r = blr.infer.glm(x, y, "logistic", prior_precision=[1e-6] + [1.0] * 7,
                      names=["(intercept)"] + FEATURES)
    assert r.names == ran["features"]
    assert close(r["mean"], ran["mean"])
    assert close(r.interval(0.9)[:, 0], ran["lower"]) and close(r.interval(0.9)[:, 1], ran["upper"])
    for key in ("waic", "lppd", "p_waic", "log_likelihood", "aic", "bic"):
        assert close(r.fit_statistics[key], ran["fit_statistics"][key]), key
    p = r.predict(x_new, level=0.9)
    rows = rows_of(tmp_path / "p.csv")
    for column in ("probability", "lower", "upper"):
        assert close(p[column], [float(row[column]) for row in rows]), column


def test_linear_regression_with_unknown_noise_equals_the_command(cli, tmp_path):
    x, _ = pima("pima_train.csv")
    features = [0, 2, 3, 4]  # (intercept), glu, bp, skin; bmi the response
    ran = command(tmp_path, "linreg", "--train", str(DATA / "pima_train.csv"), "--label", "bmi",
                  "--features", "glu,bp,skin", "--level", "0.9", "--predict",
                  str(DATA / "pima_test.csv"), "--predict-out", str(tmp_path / "p.csv"))
    r = blr.infer.glm(x[:, features], x[:, 5], "gaussian", prior_precision=[1e-6, 1, 1, 1])
    assert r["distribution"] == "student-t" and r["method"] == "exact"
    assert close(r.interval(0.9)[:, 0], ran["lower"]) and close(r.interval(0.9)[:, 1], ran["upper"])
    for key in ("waic", "p_waic", "r_squared"):
        assert close(r.fit_statistics[key], ran["fit_statistics"][key]), key
    x_new, _ = pima("pima_test.csv")
    p = r.predict(x_new[:, features], level=0.9)
    rows = rows_of(tmp_path / "p.csv")
    for column in ("mean", "sd", "lower", "upper"):
        assert close(p[column], [float(row[column]) for row in rows]), column


def test_the_methods_agree_with_one_another():
    x, y = pima("pima_train.csv")
    r = blr.infer.glm(x, y, "logistic", prior_precision=[1e-6] + [1.0] * 7,
                      names=["const"] + FEATURES)
    d = r.to_dict(0.9)
    sd = np.sqrt(np.diag(r.covariance))
    assert np.allclose(d["sd"], sd, rtol=1e-14, atol=0)
    assert np.allclose(r.interval(0.9), np.column_stack([r.mean - Z90 * sd, r.mean + Z90 * sd]),
                       rtol=1e-12, atol=1e-15)
    f = r.fit_statistics
    assert f["waic"] == pytest.approx(-2 * (f["lppd"] - f["p_waic"]), rel=1e-15)
    # p_waic is near the number of coefficients for a well-determined logistic fit.
    assert 6 < f["p_waic"] < 10
    text = str(r.summary(0.9))
    for want in ["Bayesian logistic regression, Laplace posterior", "const", "age", "5%", "95%",
                 f"{f['waic']:.3f}", f"{f['aic']:.3f}"]:
        assert want in text, want
    assert "mean" in r and set(r.keys()) >= {"mean", "covariance", "fit_statistics", "names"}
    assert "WAIC" in repr(r)
    # A prediction at the training rows with probit and quadrature: close, not equal.
    q = r.predict(x[:5])["probability"]
    pr = r.predict(x[:5], predictive="probit")["probability"]
    assert np.all(np.abs(q - pr) < 0.02) and not np.array_equal(q, pr)


def test_misuse_is_one_sentence():
    x, y = pima("pima_train.csv")
    r = blr.infer.glm(x, y)
    with pytest.raises(blr.Error, match="level must lie strictly between 0 and 1"):
        r.interval(1.0)
    with pytest.raises(blr.Error, match="8 coefficients"):
        r.predict(x[:, :3])
    with pytest.raises(blr.Error, match=r"Option 'predictive' takes a choice \(one of "
                       r"quadrature, monte-carlo, probit\); got mc"):
        r.predict(x, predictive="mc")
    with pytest.raises(blr.Error, match="names has 2 entries but X has 8 columns"):
        blr.infer.glm(x, y, names=["a", "b"])
    with pytest.raises(blr.Error, match="did you mean 'names'"):
        blr.infer.glm(x, y, nmes=["a"])


def test_mixture_posterior_equals_the_command(cli, tmp_path):
    x, y = pima("pima_train.csv")
    x_new, y_new = pima("pima_test.csv")
    ran = command(tmp_path, "logistic", "--train", str(DATA / "pima_train.csv"), "--label", "type",
                  "--positive", "Yes", "--method", "cvi", "--family", "mixture:2", "--iterations",
                  "150", "--seed", "1", "--test", str(DATA / "pima_test.csv"), "--predict",
                  str(DATA / "pima_test.csv"), "--predict-out", str(tmp_path / "p.csv"))
    r = blr.infer.glm(x, y, "logistic", method="cvi", family="mixture:2", iterations=150,
                      seed=1, prior_precision=[1e-6] + [1.0] * 7)
    assert r["distribution"] == "mixture" and len(r["means"]) == 2
    assert close(r["weights"], ran["weights"]) and close(r["elbo"], ran["elbo"])
    assert close(r["mean"], ran["mean"])
    assert close(r.interval()[:, 0], ran["lower"]) and close(r.interval()[:, 1], ran["upper"])
    assert close(r.fit_statistics["waic"], ran["fit_statistics"]["waic"])
    p = r.predict(x_new)
    rows = rows_of(tmp_path / "p.csv")
    assert close(p["probability"], [float(row["probability"]) for row in rows])
    # The interval of a mixture marginal is not the Gaussian one of its moments.
    sd = np.sqrt(np.diag(r.covariance))
    assert not np.allclose(r.interval()[:, 0], r.mean - 1.959963984540054 * sd, rtol=1e-6)
    with pytest.raises(blr.Error, match="Option 'tolerance' does not apply to glm mixture-vi; it is "
                       "an option of glm exact, glm laplace, glm cvi"):
        blr.infer.glm(x, y, method="cvi", family="mixture:2", tolerance=1e-6)
    with pytest.raises(blr.Error, match="mixture:K needs a number of components"):
        blr.infer.glm(x, y, method="cvi", family="mixture:0")


def test_the_registry_of_methods_is_the_commands(cli, tmp_path):
    listed = blr.infer.methods()
    subprocess.run([str(CLI), "methods", "--json", str(tmp_path / "m.json")], check=True,
                   capture_output=True)
    assert listed == json.loads((tmp_path / "m.json").read_text())
    # The shared tables too: blr.infer.shared_options() is `blr methods --shared-json`.
    subprocess.run([str(CLI), "methods", "--shared-json", str(tmp_path / "s.json")], check=True,
                   capture_output=True)
    shared = json.loads((tmp_path / "s.json").read_text())
    assert blr.infer.shared_options() == shared
    assert {"predictive", "sensitivity", "hyperparameters"} <= set(shared)
    by = {(m["model"], m["method"]): m for m in listed}
    laplace = {o["key"]: o for o in by[("glm", "laplace")]["options"]}
    assert laplace["max_iterations"]["default"] == 100 and laplace["rho"]["default"] == 1
    # The Python doors the registry names exist, and the family spellings are the CLI's.
    assert by[("glm", "cvi")]["python"].startswith("blr.infer.glm(")
    assert {o["key"]: o for o in by[("glm", "cvi")]["options"]}["family"]["choices"] == \
        ["gaussian-full", "gaussian-diag"]
    # A table's range reaches Python as its sentence.
    x, _ = pima("pima_train.csv")
    with pytest.raises(blr.Error, match=r"Option 'components' must be in \[1, 1000000\]; got 0"):
        blr.infer.gmm(x[:, 1:3], components=0)
    with pytest.raises(blr.Error, match=r"Option 'reg_covar' must be ≥ 0; got -1"):
        blr.infer.gmm(x[:, 1:3], reg_covar=-1.0)


def test_one_spelling_for_the_gaussian_family_and_exact():
    x, y = pima("pima_train.csv")
    with pytest.raises(blr.Error, match="spelled 'gaussian-diag' as in `blr infer --family`"):
        blr.infer.glm(x, y, method="cvi", family="diagonal")
    with pytest.raises(blr.Error, match="Method 'exact' is linear regression's"):
        blr.infer.glm(x, y, "logistic", method="exact")
    xs = x[:, [0, 2, 3, 4]]
    exact = blr.infer.glm(xs, x[:, 5], "gaussian", method="exact", prior_precision=[1e-6, 1, 1, 1])
    laplace = blr.infer.glm(xs, x[:, 5], "gaussian", prior_precision=[1e-6, 1, 1, 1])
    assert exact["method"] == laplace["method"] == "exact"
    assert np.array_equal(exact["mean"], laplace["mean"])
    known = blr.infer.glm(xs, x[:, 5], "gaussian", method="exact", noise_precision=0.05,
                          prior_precision=[1e-6, 1, 1, 1])
    assert known["distribution"] == "normal" and known["iterations"] <= 2


def test_the_coefficient_plot_draws_the_intervals(tmp_path):
    import shutil
    if shutil.which("gnuplot") is None:
        pytest.skip("gnuplot is not installed")
    x, y = pima("pima_train.csv")
    r = blr.infer.glm(x, y, "logistic", prior_precision=[1e-6] + [1.0] * 7,
                      names=["(intercept)"] + FEATURES[:-1] + ["it's 'quoted'"])
    rows = r.plot(tmp_path / "c.png", level=0.9)
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [n for n, *_ in rows] == FEATURES[:-1] + ["it's 'quoted'"]  # no intercept
    interval = r.interval(0.9)[1:]
    assert np.allclose([lo for _, _, lo, _ in rows], interval[:, 0], rtol=0, atol=0)
    assert np.allclose([hi for *_, hi in rows], interval[:, 1], rtol=0, atol=0)
    assert len(r.plot(tmp_path / "all.png", intercept=True)) == 8
    with pytest.raises(blr.Error, match="Cannot write the coefficient plot"):
        r.plot(tmp_path / "missing" / "c.png")


def test_cvi_starts_as_the_command_and_both_starts_meet(cli, tmp_path):
    # cvi_start is blr infer's --cvi-start: the Laplace posterior by default, or the prior; the
    # fixed point is the same (CVI stops at max|dλ| <= 1e-11 max|λ|: 1e-8 on O(1) values).
    x, y = pima("pima_train.csv")
    delta = [1e-6] + [1.0] * 7
    ran = command(tmp_path, "logistic", "--train", str(DATA / "pima_train.csv"), "--label", "type",
                  "--positive", "Yes", "--method", "cvi")
    default = blr.infer.glm(x, y, "logistic", "cvi", prior_precision=delta)
    prior = blr.infer.glm(x, y, "logistic", "cvi", prior_precision=delta, cvi_start="prior")
    assert ran["start"] == "laplace"
    assert close(default["mean"], ran["mean"]) and default["iterations"] == ran["iterations"]
    assert np.max(np.abs(np.asarray(default["mean"]) - np.asarray(prior["mean"]))) < 1e-8
    assert prior["iterations"] > default["iterations"]
    with pytest.raises(blr.Error, match="laplace or prior"):
        blr.infer.glm(x, y, "logistic", "cvi", prior_precision=delta, cvi_start="mode")
