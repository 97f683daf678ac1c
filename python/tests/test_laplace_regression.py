"""blr.Laplace with the regression likelihood (python/blr/laplace.py) against `blr laplace` on the
same model and data (issue 30, item 2): δ by the marginal likelihood, log Z, the training NLL and
the linearised predictive's test NLL are the command's, at the run's σ and with σ chosen by the
marginal likelihood, for the diagonal and Kronecker structures. Both run the same C++ functions in
the same order, so the tolerance is round-off of the final reductions (1e-12 relative), not a
statistical one.

The command standardises a regression's targets before training; the Python side is given the
same standardised float32 targets (the command's formula: (y − mean)/sd in float64, then float32)
and the run's σ, so both fit the same likelihood. The command reports the test NLL in the targets'
units, which is the standardised NLL plus log sd.

Also: on a linear model the Monte Carlo predictive of f agrees with the linearised one (exact for
a linear f) within 5 standard errors of K = 4000 draws, and misuse is one blr.Error sentence.
"""

import json
import math
import subprocess

import pytest
import torch

import blr
from conftest import CLI

N_TRAIN, N_TEST = 300, 100


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(model, data, folder): a small regression MLP trained in Python and the checkpoint
    folder/run/sgd.ckpt of `blr train` on the same weights (SGD at lr 1e-30 keeps them)."""
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    torch.manual_seed(3)
    x = torch.randn(N_TRAIN + N_TEST, 3)
    y = torch.sin(2 * x[:, 0]) + 0.5 * x[:, 1] + 0.1 * torch.randn(N_TRAIN + N_TEST)
    model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
    mean, sd = y[:N_TRAIN].double().mean(), y[:N_TRAIN].double().std(unbiased=False)
    for _ in range(200):
        optimizer.zero_grad()
        target = ((y[:N_TRAIN] - mean) / sd).float()
        torch.nn.functional.mse_loss(model(x[:N_TRAIN]).squeeze(1), target).backward()
        optimizer.step()
    data = {"x": x[:N_TRAIN], "y": y[:N_TRAIN], "x_test": x[N_TRAIN:], "y_test": y[N_TRAIN:]}
    folder = tmp_path_factory.mktemp("cli_regression")
    torch.save(data, folder / "data.pt")
    torch.jit.script(model).save(str(folder / "model.pt"))
    subprocess.run([str(CLI), "train", "--model-file", "model.pt", "--data", "data.pt",
                    "--optimizer", "sgd", "--sgd-lr", "1e-30", "--sgd-momentum", "0",
                    "--epochs", "1", "--out", "run", "--quiet"],
                   cwd=folder, check=True, capture_output=True)
    return model, data, folder


def standardised(data):
    """The command's targets: (y − mean)/sd over the training targets, float64, then float32."""
    y = data["y"].double()
    mean, sd = y.mean(), y.std(unbiased=False)
    return (((y - mean) / sd).float(), ((data["y_test"].double() - mean) / sd).float(),
            sd.item())


def command_laplace(folder, name, *flags):
    subprocess.run([str(CLI), "laplace", "--checkpoint", "run/sgd.ckpt", "--predictive", "probit",
                    "--json", f"{name}.json", "--quiet", *flags],
                   cwd=folder, check=True, capture_output=True)
    result = json.loads((folder / f"{name}.json").read_text())
    return result["laplace"], result["optimizers"]["laplace"]["test"]["predictive"]


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def gaussian_nll(mean, variance, y):
    return (0.5 * torch.log(2 * math.pi * variance) + (y - mean) ** 2 / (2 * variance)).mean().item()


@pytest.mark.parametrize("structure,noise", [("diag", "run"), ("kron", "run"), ("kron", "marglik"),
                                             ("diag", "marglik")])
def test_equals_the_command(run, structure, noise):
    model, data, folder = run
    fit, predictive = command_laplace(folder, f"{structure}-{noise}", "--structure", structure,
                                      "--noise-std-method", noise)
    assert fit["likelihood"] == "regression" and fit["noise_std_method"] == noise
    y, y_test, sd = standardised(data)
    la = blr.Laplace(model, "regression", structure=structure, sigma_noise=fit["run_noise_std"])
    la.fit((data["x"], y))
    if noise == "marglik":
        chosen = la.optimize_prior_precision(optimize_sigma_noise=True)
        assert chosen["sigma_noise"] == la.sigma_noise != fit["run_noise_std"]
    assert la.n_data == fit["examples"] == N_TRAIN and la.n_params == fit["weights"]
    assert relative(la.sigma_noise, fit["noise_std"]) <= 1e-12
    assert relative(la.prior_precision, fit["prior_precision"]) <= 1e-12
    assert relative(la.log_marginal_likelihood(), fit["log_marginal_likelihood"]) <= 1e-12
    assert relative(la._impl.train_nll_sum, fit["train_nll_sum"]) <= 1e-12
    f_mu, f_var = la(data["x_test"])
    assert f_mu.shape == f_var.shape == (N_TEST, 1) and bool((f_var > 0).all())
    nll = gaussian_nll(f_mu[:, 0], f_var[:, 0] + la.sigma_noise ** 2, y_test.double()) + math.log(sd)
    assert relative(nll, predictive["nll"]) <= 1e-10, (nll, predictive["nll"])


def test_log_marginal_likelihood_at_another_sigma_is_a_fit_there(run):
    # The network is float32, and the fit at σ scales each per-example gradient by 1/σ in float32
    # before it is squared: the two fits differ by float32 round-off (~1e-7 relative), 1e-6.
    model, data, _ = run
    y, _, _ = standardised(data)
    at_one = blr.Laplace(model, "regression", structure="kron", sigma_noise=1.0).fit((data["x"], y))
    direct = blr.Laplace(model, "regression", structure="kron", sigma_noise=0.3).fit((data["x"], y))
    assert relative(at_one.log_marginal_likelihood(2.0, sigma_noise=0.3),
                    direct.log_marginal_likelihood(2.0)) <= 1e-6
    at_one.sigma_noise = 0.3
    at_one.prior_precision = 2.0
    assert relative(at_one.log_marginal_likelihood(), direct.log_marginal_likelihood(2.0)) <= 1e-6


def test_sampled_predictive_of_a_linear_model_is_the_linearised_one():
    torch.manual_seed(4)
    x = torch.randn(200, 3, dtype=torch.float64)
    y = x @ torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64) + 0.3 * torch.randn(200, dtype=torch.float64)
    model = torch.nn.Linear(3, 1).double()
    with torch.no_grad():
        model.weight.copy_(torch.linalg.lstsq(x, y[:, None]).solution.T)
        model.bias.zero_()
    la = blr.Laplace(model, "regression", structure="kron", sigma_noise=0.3).fit((x, y))
    la.prior_precision = 1.0  # wide enough that the draws' spread is visible
    x_new = torch.randn(5, 3, dtype=torch.float64)
    mean, variance = la(x_new, link="probit")
    k = 4000
    mc_mean, mc_variance = la(x_new, link="mc", samples=k)
    # f is linear in θ: the draws' mean has sd √(v/K), their variance sd v·√(2/K).
    assert bool(((mc_mean - mean).abs() <= 5 * (variance / k).sqrt()).all())
    assert bool(((mc_variance - variance).abs() <= 5 * variance * math.sqrt(2 / k)).all())


def test_misuse_is_one_sentence(run):
    model, data, _ = run
    y, _, _ = standardised(data)
    with pytest.raises(blr.Error, match="likelihood must be"):
        blr.Laplace(model, "poisson")
    with pytest.raises(blr.Error, match="sigma_noise is the noise of a regression"):
        blr.Laplace(model, sigma_noise=0.5)
    with pytest.raises(blr.Error, match="sigma_noise must be a positive"):
        blr.Laplace(model, "regression", sigma_noise=0.0)
    la = blr.Laplace(model, "regression")
    with pytest.raises(blr.Error, match="floating-point tensor"):
        la.fit((data["x"], y.long()))
    la.fit((data["x"], y))
    with pytest.raises(blr.Error, match="mean and variance"):
        la.predictive_log_probs(data["x_test"])
    with pytest.raises(blr.Error, match="optimize_sigma_noise"):
        la.optimize_prior_precision("gridsearch", val_loader=(data["x"], y), optimize_sigma_noise=True)
    with pytest.raises(blr.Error, match="sigma_noise must be a positive"):
        la.sigma_noise = float("nan")
    classifier = blr.Laplace(torch.nn.Linear(3, 2)).fit((data["x"], (y > 0).long()))
    with pytest.raises(blr.Error, match="regression"):
        classifier.sigma_noise = 0.5
    with pytest.raises(blr.Error, match="regression"):
        classifier.log_marginal_likelihood(sigma_noise=0.5)
