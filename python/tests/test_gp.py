"""blr.infer.gp_regression and gp_classification (issue 31, item 5): the library's GP fit that
`blr infer gpr|gpc` runs, so on the same data and kernel the evidence, the learned
hyperparameters and the predictions equal the command's (same code, 1e-12 relative); the kernel
algebra's evidence equals scikit-learn 1.2.1's (bench/gp_kernels_vs_sklearn.py, case A: an ARD rbf
plus white noise); ARD started at the one-ℓ optimum only raises the evidence; misuse is one
blr.Error sentence.
"""

import csv
import json
import re
import subprocess

import numpy as np
import pytest

import blr
from conftest import CLI

DATA = CLI.resolve().parents[1] / "data"


def table(name, columns):
    rows = list(csv.DictReader(open(DATA / name)))
    return np.array([[float(r[c]) for c in columns] for r in rows])


def command(tmp_path, model, *flags):
    out = tmp_path / "run.json"
    subprocess.run([str(CLI), "infer", model, *flags, "--json", str(out)], check=True,
                   capture_output=True)
    return json.loads(out.read_text())


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


@pytest.fixture(scope="module")
def faithful():
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    return table("faithful.csv", ["eruptions"]), table("faithful.csv", ["waiting"])[:, 0]


def test_regression_equals_the_command(faithful, tmp_path):
    x, y = faithful
    kernel = "matern52*linear+constant"
    ran = command(tmp_path, "gpr", "--train", str(DATA / "faithful.csv"), "--label", "waiting",
                  "--kernel", kernel, "--learn-hyperparameters")
    fit = blr.infer.gp_regression(x, y, kernel=kernel, x_new=x[:5])
    assert fit["kernel"] == ran["kernel"] == kernel and fit["converged"]
    assert relative(fit["log_marginal_likelihood"], ran["log_marginal_likelihood"]) <= 1e-12
    assert relative(fit["noise_variance"], ran["noise_variance"]) <= 1e-12
    for name, value in ran["kernel_parameters"].items():
        assert relative(fit["parameters"][name], value) <= 1e-12, name
    assert np.allclose(fit["fitted_mean"], ran["mean"], rtol=1e-12, atol=0)
    # New inputs equal to training rows: the latent predictive there is the fit's (no white term).
    assert np.allclose(fit["mean"], fit["fitted_mean"][:5], rtol=1e-12, atol=0)
    assert np.allclose(fit["predictive_variance"], fit["variance"] + fit["noise_variance"],
                       rtol=1e-15, atol=0)


def test_kernel_algebra_equals_scikit_learn():
    # bench/gp_kernels_vs_sklearn.py's data and case A on y − ȳ (blr models the centred
    # responses): C(1.5)·RBF([0.8, 1.3, 2.0]) + White(0.05), alpha 0.1; 15 digits printed.
    i = np.arange(20.0)
    x = np.stack([np.sin(0.7 * i), np.cos(1.3 * i), 0.1 * i - 1.0], axis=1)
    y = np.sin(2 * x[:, 0]) + 0.5 * x[:, 1] + 0.1 * np.cos(5 * i)
    fit = blr.infer.gp_regression(x, y, kernel="rbf(v=1.5)+white(v=0.05)", ard=True,
                                  lengthscale=np.array([0.8, 1.3, 2.0]), noise_variance=0.1,
                                  learn=False)
    assert fit["parameters"]["rbf.lengthscale[1]"] == pytest.approx(1.3, rel=1e-15)
    assert abs(fit["log_marginal_likelihood"] - -13.9654332286914) <= 1e-9
    expected = [2.51741345559313, 3.61794622779065, 3.00560079200368, -3.46184752521455,
                -1.54145464185038]
    assert np.allclose(fit["gradient"][:5], expected, rtol=0, atol=1e-9)
    with pytest.raises(blr.Error, match="pass ard=True"):
        blr.infer.gp_regression(x, y, lengthscale=np.array([0.8, 1.3, 2.0]), learn=False)
    with pytest.raises(blr.Error, match="one per input column"):
        blr.infer.gp_regression(x, y, ard=True, lengthscale=np.array([0.8, 1.3]), learn=False)


def test_classification_ard_from_the_one_lengthscale_optimum(tmp_path):
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    train = table("synth_train.csv", ["xs", "ys", "yc"])
    test = table("synth_test.csv", ["xs", "ys", "yc"])
    one = blr.infer.gp_classification(train[:, :2], train[:, 2], kernel="rbf")
    start = (f"rbf(l={one['parameters']['rbf.lengthscale']!r},"
             f"v={one['parameters']['rbf.variance']!r})")
    ard = blr.infer.gp_classification(train[:, :2], train[:, 2], kernel=start, ard=True,
                                      x_new=test[:, :2])
    assert ard["log_marginal_likelihood"] >= one["log_marginal_likelihood"] - 1e-9
    ran = command(tmp_path, "gpc", "--train", str(DATA / "synth_train.csv"), "--label", "yc",
                  "--method", "laplace", "--kernel", start, "--ard", "--learn-hyperparameters")
    assert relative(ard["log_marginal_likelihood"], ran["log_marginal_likelihood"]) <= 1e-12
    accuracy = np.mean((ard["probability"] > 0.5) == (test[:, 2] == 1))
    assert accuracy > 0.88, accuracy  # Ripley's synthetic data: about 0.9 for a GP
    assert np.all((ard["probability"] > 0) & (ard["probability"] < 1))


def test_misuse_is_one_sentence(faithful):
    x, y = faithful
    with pytest.raises(blr.Error, match="is not a base kernel"):
        blr.infer.gp_regression(x, y, kernel="cubic")
    with pytest.raises(blr.Error, match="labels 0 or 1"):
        blr.infer.gp_classification(x, y, learn=False)
    with pytest.raises(blr.Error, match="method must be 'laplace' or 'cvi'"):
        blr.infer.gp_classification(x, (y > 70).astype(float), method="ep")
    with pytest.raises(blr.Error, match="input columns"):
        blr.infer.gp_regression(x, y, learn=False, x_new=np.ones((2, 3)))
    with pytest.raises(blr.Error, match="noise-variance"):
        blr.infer.gp_regression(x, y, noise_variance=0.0)


def test_summary_equals_the_command_json_and_prediction_file(faithful, tmp_path):
    # Issue 31, item 2: the GP summary (inference/gp_summary.hpp) is what the command writes, so
    # to_dict() equals its JSON (less the file's names) and predict() its --predict-out file.
    x, y = faithful
    ran = command(tmp_path, "gpr", "--train", str(DATA / "faithful.csv"), "--label", "waiting",
                  "--features", "eruptions", "--kernel", "rbf", "--learn-hyperparameters",
                  "--level", "0.9", "--predict", str(DATA / "faithful.csv"), "--predict-out",
                  str(tmp_path / "p.csv"))
    fit = blr.infer.gp_regression(x, y, kernel="rbf")
    d = fit.to_dict(0.9)
    for key in ("kernel", "method", "iterations", "converged", "level"):
        assert d[key] == ran[key], key
    for key in ("noise_variance", "y_mean", "log_marginal_likelihood", "lengthscale", "variance"):
        assert relative(d[key], ran[key]) <= 1e-12, key
    for key in ("mean", "sd", "lower", "upper", "hyperparameter_gradient"):
        assert np.allclose(d[key], ran[key], rtol=1e-12, atol=0), key
    search, ran_search = d["hyperparameter_search"], ran["hyperparameter_search"]
    assert search["iterations"] == ran_search["iterations"]
    assert search["initial_noise_variance"] == ran_search["initial_noise_variance"] == 1.0
    assert np.allclose(fit.interval(0.9), np.column_stack([ran["lower"], ran["upper"]]),
                       rtol=1e-12, atol=0)
    rows = list(csv.DictReader(open(tmp_path / "p.csv")))
    p = fit.predict(x, level=0.9)
    for column in ("mean", "sd", "lower", "upper"):
        # The file holds 9 significant digits.
        assert np.allclose(p[column], [float(r[column]) for r in rows], rtol=1e-8, atol=0), column
    assert "Gaussian process regression" in fit.summary().as_text()


def test_classification_summary_predicts_probabilities(tmp_path):
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    train = table("synth_train.csv", ["xs", "ys", "yc"])
    test = table("synth_test.csv", ["xs", "ys", "yc"])
    ran = command(tmp_path, "gpc", "--train", str(DATA / "synth_train.csv"), "--label", "yc",
                  "--method", "cvi", "--lengthscale", "0.5")
    fit = blr.infer.gp_classification(train[:, :2], train[:, 2], lengthscale=0.5, method="cvi",
                                      learn=False, x_new=test[:, :2])
    d = fit.to_dict()
    assert d["method"] == "cvi" and relative(d["elbo"], ran["elbo"]) <= 1e-12
    assert np.allclose(d["mean"], ran["mean"], rtol=1e-10, atol=1e-12)
    p = fit.predict(test[:, :2], predictive="probit")
    assert np.all((p["lower"] <= p["probability"]) & (p["probability"] <= p["upper"]))
    q = fit.predict(test[:, :2])
    assert np.allclose(q["probability"], fit["probability"], rtol=1e-12, atol=0)
    with pytest.raises(blr.Error, match="3 columns but the GP was fitted on 2"):
        fit.predict(np.ones((2, 3)))


def test_an_overflowing_fit_is_refused():
    # Found by the python_infer fuzz harness (fuzz/corpus/python_infer/gp-overflow-1e300): one
    # response of 1e300 gave a log marginal likelihood of -inf, returned as if it were a number.
    x = np.array([[1.0], [2.0], [3.0]])
    with pytest.raises(blr.Error, match="log marginal likelihood, its gradient or the latent mean "
                                        "is not finite"):
        blr.infer.gp_regression(x, np.array([2.0, 1e300, 4.0]), learn=False)


def test_the_options_of_the_fit_and_the_search_are_keywords_as_the_flags(faithful, tmp_path):
    """The GP functions take the registry's keys (`blr infer gpr|gpc`'s flags): gpc's method
    table and, with learn=True, the hyperparameters' L-BFGS, from the library's
    gp_regression_options / gp_classification_options that the CLI calls too. A key reaches the
    fit (a capped search stops; a capped Newton stops), a key no table of the run takes is refused
    naming where it applies, and the defaults agree with the command's."""
    x, y = faithful
    rows = list(csv.DictReader(open(DATA / "synth_train.csv")))
    xc = np.array([[float(r["xs"]), float(r["ys"])] for r in rows])
    yc = np.array([float(r["yc"]) for r in rows])
    with pytest.raises(blr.Error, match="did not converge"):
        blr.infer.gp_regression(x, y, max_evaluations=2)
    with pytest.raises(blr.Error, match=re.escape(
            "Option 'memory' does not apply to gpr with learn=False; it is an option of "
            "hyperparameters")):
        blr.infer.gp_regression(x, y, learn=False, memory=5)
    with pytest.raises(blr.Error, match="did you mean 'memory'"):
        blr.infer.gp_regression(x, y, memroy=5)
    with pytest.raises(blr.Error, match="raise max_iterations"):
        blr.infer.gp_classification(xc, yc, learn=False, lengthscale=0.5, variance=4.0,
                                    max_iterations=1)
    with pytest.raises(blr.Error, match=re.escape(
            "Option 'rho' does not apply to gpc laplace with learn=False; it is an option of")):
        blr.infer.gp_classification(xc, yc, learn=False, rho=0.5)
    # CVI's defaults are the registry's preset (100 nodes) in both doors: the same ELBO.
    ran = command(tmp_path, "gpc", "--train", str(DATA / "synth_train.csv"), "--label", "yc",
                  "--method", "cvi", "--kernel", "rbf", "--lengthscale", "0.5", "--variance", "4")
    fit = blr.infer.gp_classification(xc, yc, method="cvi", learn=False, lengthscale=0.5,
                                      variance=4.0)
    assert relative(fit["elbo"], ran["elbo"]) <= 1e-12
    coarse = blr.infer.gp_classification(xc, yc, method="cvi", learn=False, lengthscale=0.5,
                                         variance=4.0, quadrature_nodes=8)
    assert relative(coarse["elbo"], fit["elbo"]) > 1e-9
    for function in (blr.infer.gp_regression, blr.infer.gp_classification):
        assert "``gradient_tolerance`` = 1e-05" in function.__doc__
    assert "``quadrature_nodes`` = 100" in blr.infer.gp_classification.__doc__
