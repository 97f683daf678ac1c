"""The posterior predictive, the metrics, the Table-1 checks and the core's inference from
Python, each against an independent computation written here."""

import math

import numpy as np
import pytest
import torch

import blr
from conftest import small_model, small_problem


def test_predictive_is_the_mean_of_the_sampled_softmaxes(problem):
    x, _ = problem
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=8, seed=4)
    got = blr.predictive(model, optimizer, x, samples=5)
    # The same five draws again, from the same seed, averaged by hand.
    optimizer2 = blr.IVON(model.parameters(), lr=0.1, ess=8, seed=4)
    probs = []
    for _ in range(5):
        with optimizer2.sampled_params():
            probs.append(torch.softmax(model(x), dim=-1))
    expected = torch.log(torch.stack(probs).mean(dim=0))
    assert torch.allclose(got, expected, rtol=0, atol=1e-12)
    at_mean = blr.predictive(model, optimizer, x, samples=0)
    assert torch.allclose(at_mean, torch.log_softmax(model(x), dim=-1))
    assert not torch.allclose(got, at_mean)
    assert torch.allclose(blr.predictive(model, optimizer2, x, samples=3, batch_size=10).exp().sum(1),
                          torch.ones(len(x), dtype=x.dtype))


def test_metrics_match_their_definitions():
    generator = torch.Generator().manual_seed(0)
    log_probs = torch.log_softmax(2 * torch.randn(200, 4, generator=generator, dtype=torch.float64), 1)
    labels = torch.randint(0, 4, (200,), generator=generator)
    m = blr.metrics(log_probs, labels)
    p = log_probs.exp()
    assert m["accuracy"] == pytest.approx((p.argmax(1) == labels).double().mean().item(), abs=1e-15)
    assert m["nll"] == pytest.approx(-log_probs[torch.arange(200), labels].mean().item(), rel=1e-12)
    onehot = torch.nn.functional.one_hot(labels, 4).double()
    assert m["brier"] == pytest.approx(((p - onehot) ** 2).sum(1).mean().item(), rel=1e-12)
    confidence, predicted = p.max(1)
    bins = torch.clamp((confidence * 15).floor().long(), max=14)
    ece = sum(abs((predicted[bins == b] == labels[bins == b]).double().sum() - confidence[bins == b].sum())
              for b in range(15)) / 200
    assert m["ece"] == pytest.approx(float(ece), rel=1e-12)
    assert sum(b["count"] for b in blr.reliability_bins(log_probs, labels)) == 200
    # Entropy AUROC: a uniform (maximal-entropy) "out" set is told apart perfectly.
    uniform = torch.full((50, 4), math.log(0.25), dtype=torch.float64)
    sharp = torch.log_softmax(torch.tensor([[9.0, 0, 0, 0]] * 50, dtype=torch.float64), 1)
    assert blr.entropy_auroc(sharp, uniform) == 1.0
    assert blr.entropy_auroc(uniform, sharp) == 0.0


def test_table1_rows_all_pass():
    rows = blr.table1("core")
    assert len(rows) >= 24
    assert all(r["passed"] and r["max_deviation"] <= r["tolerance"] for r in rows)
    with pytest.raises(blr.Error, match="Option 'layer'"):
        blr.table1("gpu")


def logistic_data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.normal(size=(n, d))])
    w = np.array([0.3, 1.0, -2.0, 0.5])[: d + 1]
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ w))).astype(float)
    return x, y


def test_glm_laplace_is_newtons_fixed_point():
    x, y = logistic_data()
    delta = 2.0
    r = blr.infer.glm(x, y, likelihood="logistic", prior_precision=delta)
    m = r["mean"]
    p = 1 / (1 + np.exp(-x @ m))
    gradient = x.T @ (p - y) + delta * m
    hessian = x.T @ (x * (p * (1 - p))[:, None]) + delta * np.eye(x.shape[1])
    assert r["converged"] and np.abs(gradient).max() < 1e-9
    assert np.allclose(r["covariance"], np.linalg.inv(hessian), rtol=1e-10, atol=0)
    log_joint = np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)) \
        + 0.5 * x.shape[1] * np.log(delta / (2 * np.pi)) - 0.5 * delta * m @ m
    evidence = log_joint + 0.5 * x.shape[1] * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(hessian)[1]
    assert r["log_evidence"] == pytest.approx(evidence, rel=1e-10)


def test_glm_sensitivity_of_linear_regression_is_exact_leave_one_out():
    rng = np.random.default_rng(1)
    x = np.column_stack([np.ones(40), rng.normal(size=(40, 2))])
    y = x @ np.array([1.0, -0.5, 2.0]) + rng.normal(size=40)
    r = blr.infer.glm(x, y, likelihood="gaussian", prior_precision=0.5, sensitivities=True)
    deviation = r["sensitivity"]["deviation"]
    for i in (0, 17, 39):
        keep = np.arange(40) != i
        s = x[keep].T @ x[keep] + 0.5 * np.eye(3)
        m = np.linalg.solve(s, x[keep].T @ y[keep])
        assert deviation[i] == pytest.approx(x[i] @ m - x[i] @ r["mean"], abs=1e-10)


def test_glm_cvi_and_errors():
    x, y = logistic_data()
    r = blr.infer.glm(x, y, method="cvi", family="gaussian-diag")
    assert r["converged"] and np.count_nonzero(r["covariance"] - np.diag(np.diag(r["covariance"]))) == 0
    with pytest.raises(blr.Error, match="must match"):
        blr.infer.glm(x, y[:-1])
    with pytest.raises(blr.Error, match="Option 'method'"):
        blr.infer.glm(x, y, method="mcmc")


def test_kalman_local_level_matches_the_scalar_recursion():
    rng = np.random.default_rng(2)
    y = np.cumsum(rng.normal(size=50))[:, None] + rng.normal(size=(50, 1))
    y[10] = np.nan
    r = blr.infer.kalman(y, [[1.0]], [[1.0]], [[0.5]], [[2.0]], [0.0], [[10.0]])
    m, p, loglik = 0.0, 10.0, 0.0
    for t in range(50):
        if t > 0:
            p += 0.5
        if not np.isnan(y[t, 0]):
            s = p + 2.0
            loglik += -0.5 * (np.log(2 * np.pi * s) + (y[t, 0] - m) ** 2 / s)
            k = p / s
            m, p = m + k * (y[t, 0] - m), (1 - k) * p
        assert r["filtered_mean"][t, 0] == pytest.approx(m, abs=1e-12)
        assert r["filtered_cov"][t, 0] == pytest.approx(p, abs=1e-12)
    assert r["log_likelihood"] == pytest.approx(loglik, rel=1e-12)
    assert r["smoothed_mean"].shape == (50, 1)


def poisson_counts(intercept, n=300):
    """Counts round(exp(intercept + 0.3 x1 - 0.2 x2)) on a fixed design (no random draws)."""
    i = np.arange(n)
    x = np.column_stack([np.ones(n), np.sin(0.37 * i), np.cos(1.1 * i + 0.5)])
    return x, np.round(np.exp(x @ np.array([intercept, 0.3, -0.2])))


@pytest.mark.parametrize("intercept", [5.0, 10.0])
def test_glm_poisson_large_counts_reach_the_mode(intercept):
    # Issue 34, D3: counts of about 150 and 22 000. Undamped Newton from w = 0 overshot and ended
    # its 100 steps far from the mode (converged=False, mean [58.4, ...], no exception).
    x, y = poisson_counts(intercept)
    r = blr.infer.glm(x, y, likelihood="poisson")
    m = r["mean"]
    gradient = x.T @ (np.exp(x @ m) - y) + m
    assert r["converged"] and r["iterations"] <= 25
    # blr stops at max|gradient| < 1e-10 as it computes it; NumPy's sum of the same terms may
    # differ by a few roundings of their absolute sum.
    rounding = 4 * np.finfo(float).eps * (np.abs(x).T @ (np.exp(x @ m) + y))
    assert np.all(np.abs(gradient) < 1e-10 + rounding)
    assert np.allclose(m, [intercept, 0.3, -0.2], atol=0.01)


def test_glm_refuses_a_fit_that_stops_at_its_cap():
    # Issue 34: an unconverged fit is an error naming the cap and the keyword, not a result.
    x, y = poisson_counts(5.0)
    with pytest.raises(blr.Error, match="cap of 2 iterations without converging; raise max_iterations"):
        blr.infer.glm(x, y, likelihood="poisson", max_iterations=2)
    lx, ly = logistic_data()
    with pytest.raises(blr.Error, match="without converging; raise max_iterations"):
        blr.infer.glm(lx, ly, method="cvi", max_iterations=2)
    rng = np.random.default_rng(3)
    points = np.vstack([rng.normal(-4, 1, size=(200, 2)), rng.normal(4, 1, size=(100, 2))])
    with pytest.raises(blr.Error, match="without converging; raise max_iterations"):
        blr.infer.gmm(points, components=3, max_iterations=2)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_kalman_refuses_infinite_observations(bad):
    # Issue 34, D15: NaN rows are missing; an infinite value was dropped as if missing.
    y = np.random.default_rng(0).normal(size=(20, 1))
    y[3] = bad
    one = np.eye(1)
    with pytest.raises(blr.Error, match="row 4 holds an infinite value"):
        blr.infer.kalman(y, one, one, one, one, np.zeros(1), one)


@pytest.mark.parametrize("smooth", [False, True])
def test_kalman_refuses_a_result_that_overflows(smooth):
    # Issue 34, item 3: the python_infer fuzz harness found observations of 1e300 returning a
    # log-likelihood of -inf (fuzz/corpus/python_infer/kalman-overflow-1e300).
    y = np.random.default_rng(0).normal(size=(10, 1))
    y[6] = 1e300
    one = np.eye(1)
    with pytest.raises(blr.Error, match="not finite.*too large for double precision; rescale them"):
        blr.infer.kalman(y, 0.9 * one, one, 0.1 * one, 0.5 * one, np.zeros(1), one, smooth=smooth)
    big = np.eye(2)
    y2 = np.random.default_rng(1).normal(size=(10, 2))
    y2[4, 1] = 1e300
    with pytest.raises(blr.Error, match="is not finite from step 5 on|log-likelihood is not finite"):
        blr.infer.kalman(y2, big, big, 0.1 * big, big, np.zeros(2), big, smooth=smooth)


def test_gmm_finds_two_separated_clusters():
    rng = np.random.default_rng(3)
    x = np.vstack([rng.normal(-4, 1, size=(200, 2)), rng.normal(4, 1, size=(100, 2))])
    r = blr.infer.gmm(x, components=2, covariance="diag")
    assert r["converged"]
    order = np.argsort(r["means"][:, 0])
    assert np.allclose(r["weights"][order], [2 / 3, 1 / 3], atol=0.01)
    assert np.allclose(r["means"][order], [[-4, -4], [4, 4]], atol=0.3)
    assert np.allclose(r["responsibilities"].sum(axis=1), 1.0)


def test_merging_linear_regression_posteriors_of_disjoint_splits_is_the_full_posterior():
    rng = np.random.default_rng(4)
    x = np.column_stack([np.ones(60), rng.normal(size=(60, 2))])
    y = x @ np.array([0.5, 1.0, -1.0]) + rng.normal(size=60)
    prior_mean, prior_precision = np.array([0.1, 0.0, -0.2]), 2.0 * np.eye(3)

    def posterior(rows):
        precision = prior_precision + x[rows].T @ x[rows]
        return np.linalg.solve(precision, prior_precision @ prior_mean + x[rows].T @ y[rows]), precision

    parts = [posterior(slice(a, a + 20)) for a in (0, 20, 40)]
    merged = blr.infer.merge(prior_mean, prior_precision, [m for m, _ in parts], [p for _, p in parts])
    full_mean, full_precision = posterior(slice(0, 60))
    assert np.allclose(merged["precision"], full_precision, rtol=1e-12, atol=0)
    assert np.allclose(merged["mean"], full_mean, rtol=1e-10, atol=1e-12)
    assert not np.allclose(parts[0][0], full_mean, rtol=1e-3)
    with pytest.raises(blr.Error, match="one of each"):
        blr.infer.merge(prior_mean, prior_precision, [full_mean], [])


def normal_gamma_reference(x, y, precisions):
    """The Normal–Gamma posterior with Jeffreys' prior on τ, in closed form (conjugate.hpp)."""
    lam = x.T @ x + np.diag(precisions)
    m = np.linalg.solve(lam, x.T @ y)
    a = len(y) / 2
    b = 0.5 * (y @ y - m @ lam @ m)
    scale = (b / a) * np.linalg.inv(lam)
    nu = 2 * a
    return m, scale, nu / (nu - 2) * scale, a, b


def test_glm_gaussian_estimates_the_noise_by_default():
    # Noise sd 3: the old default (β = 1 assumed) gave standard errors a third of the truth's.
    rng = np.random.default_rng(4)
    x = np.column_stack([np.ones(60), rng.normal(size=(60, 2))])
    y = x @ np.array([5.0, -1.0, 2.0]) + 3.0 * rng.normal(size=60)
    precisions = np.array([1e-6, 1.0, 1.0])
    r = blr.infer.glm(x, y, likelihood="gaussian", prior_precision=precisions)
    m, scale, covariance, a, b = normal_gamma_reference(x, y, precisions)
    assert np.allclose(r["mean"], m, rtol=1e-10, atol=1e-12)
    assert np.allclose(r["scale"], scale, rtol=1e-9, atol=0)
    assert np.allclose(r["covariance"], covariance, rtol=1e-9, atol=0)
    assert r["dof"] == pytest.approx(60) and r["noise_precision"] == pytest.approx(a / b, rel=1e-10)
    assert 1 / np.sqrt(r["noise_precision"]) == pytest.approx(3.0, rel=0.25)   # 60 rows: ±9 % sd
    assert any("unknown" in line for line in r["assumptions"])
    # CVI holds β = E[τ | y] fixed: its Gaussian posterior is then exact (conjugate), with the
    # covariance of w at that β, which is `scale`.
    c = blr.infer.glm(x, y, likelihood="gaussian", method="cvi", prior_precision=precisions)
    assert c["noise_precision"] == pytest.approx(a / b, rel=1e-10)
    assert np.allclose(c["mean"], m, rtol=1e-6, atol=1e-6)
    assert np.allclose(c["covariance"], scale, rtol=1e-6, atol=0)
    # A known β is a keyword, and then the prior precision is absolute.
    k = blr.infer.glm(x, y, likelihood="gaussian", prior_precision=precisions, noise_precision=0.25)
    lam = 0.25 * x.T @ x + np.diag(precisions)
    assert np.allclose(k["covariance"], np.linalg.inv(lam), rtol=1e-9, atol=0)
    assert k["assumptions"] == []


def test_glm_noise_keywords_that_do_not_apply_are_refused():
    x, y = logistic_data()
    with pytest.raises(blr.Error, match="noise_precision applies only to likelihood='gaussian'"):
        blr.infer.glm(x, y, noise_precision=2.0)
    with pytest.raises(blr.Error, match="exclude each other"):
        blr.infer.glm(x, y, likelihood="gaussian", noise_precision=2.0, noise_prior=(1.0, 1.0))
    with pytest.raises(blr.Error, match="prior_precision has 2 entries"):
        blr.infer.glm(x, y, prior_precision=[1.0, 1.0])
    with pytest.raises(blr.Error, match="prior_precision must be positive"):
        blr.infer.glm(x, y, prior_precision=-1.0)


def test_glm_fit_statistics_are_statsmodels_with_a_flat_prior():
    # bench/fit_statistics_vs_statsmodels.py's logistic fit of data/pima_train.csv (statsmodels
    # 0.13.5): llf −89.195333233, llnull −128.207095584, prsquared 0.304287076882, aic
    # 194.390666466, bic 220.777205398. The design is given as statsmodels' add_constant makes it.
    import csv
    import pathlib

    import numpy as np

    path = pathlib.Path(__file__).resolve().parents[2] / "data" / "pima_train.csv"
    rows = list(csv.DictReader(open(path)))
    names = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]
    x = np.column_stack([np.ones(len(rows))] + [[float(r[n]) for r in rows] for n in names])
    y = np.array([1.0 if r["type"] == "Yes" else 0.0 for r in rows])
    f = blr.infer.glm(x, y, "logistic", prior_precision=1e-10, max_iterations=200)["fit_statistics"]
    assert f["observations"] == 200 and f["parameters"] == 8
    assert abs(f["log_likelihood"] - -89.195333233) <= 1e-6
    assert abs(f["null_log_likelihood"] - -128.207095584) <= 1e-8
    assert abs(f["pseudo_r2"] - 0.304287076882) <= 1e-8
    assert abs(f["aic"] - 194.390666466) <= 1e-6 and abs(f["bic"] - 220.777205398) <= 1e-6
