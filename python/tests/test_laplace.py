"""blr.Laplace (python/blr/laplace.py) against `blr laplace` on the same model and data (issue 30,
item 2): the prior precision chosen by the marginal likelihood, the log marginal likelihood, the
training NLL and the probit predictive's test metrics are the command's, for the diagonal and
Kronecker structures, all weights and the last layer, the GGN and the empirical Fisher. Both run
the same C++ functions in the same order, so the tolerance is round-off of the final reductions
(1e-12 relative), not a statistical one. Also: the gridsearch keeps the argmin of its own NLLs,
the model is not changed, and misuse is one blr.Error sentence.

The command's "trained run" is conftest.py's cli_classifier_run.
"""

import json
import subprocess

import pytest
import torch

import blr
from conftest import CLI

N_TRAIN, N_TEST = 300, 100


@pytest.fixture(scope="module")
def run(cli_classifier_run):
    return cli_classifier_run


def command_laplace(folder, name, *flags):
    subprocess.run([str(CLI), "laplace", "--checkpoint", "run/sgd.ckpt", "--predictive", "probit",
                    "--out", name, "--json", f"{name}.json", "--quiet", *flags],
                   cwd=folder, check=True, capture_output=True)
    result = json.loads((folder / f"{name}.json").read_text())
    return result["laplace"], result["optimizers"]["laplace"]["test"]["predictive"]


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


@pytest.mark.parametrize("structure,subset,curvature", [
    ("diag", "all", "ggn"), ("diag", "last-layer", "ef"), ("kron", "all", "ggn"),
    ("kron", "last_layer", "ggn")])  # last_layer: laplace-torch's spelling, read as last-layer
def test_equals_the_command(run, structure, subset, curvature):
    model, data, folder = run
    name = f"{structure}-{subset}-{curvature}"
    fit, predictive = command_laplace(folder, name, "--structure", structure,
                                      "--subset", subset, "--curvature", curvature)
    la = blr.Laplace(model, structure=structure, subset=subset, curvature=curvature)
    la.fit(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data["x"], data["y"]),
                                       batch_size=64))
    assert la.n_params == fit["weights"] and la.n_data == fit["examples"] == N_TRAIN
    assert relative(la.prior_precision, fit["prior_precision"]) <= 1e-12
    assert relative(la.log_marginal_likelihood(), fit["log_marginal_likelihood"]) <= 1e-12
    assert relative(la._impl.train_nll_sum, fit["train_nll_sum"]) <= 1e-12
    log_probs = la.predictive_log_probs(data["x_test"])
    nll = -log_probs.gather(1, data["y_test"][:, None]).mean().item()
    accuracy = (log_probs.argmax(1) == data["y_test"]).double().mean().item()
    assert relative(nll, predictive["nll"]) <= 1e-12, (nll, predictive["nll"])
    assert accuracy == predictive["accuracy"]
    probabilities = la(data["x_test"])
    assert torch.allclose(probabilities.sum(1), torch.ones(N_TEST, dtype=torch.float64))


def test_a_given_prior_precision_equals_the_command(run):
    model, data, folder = run
    fit, predictive = command_laplace(folder, "given", "--prior-precision", "3.5")
    la = blr.Laplace(model).fit((data["x"], data["y"]))
    la.prior_precision = 3.5
    assert relative(la.log_marginal_likelihood(), fit["log_marginal_likelihood"]) <= 1e-12
    nll = -la.predictive_log_probs(data["x_test"]).gather(1, data["y_test"][:, None]).mean().item()
    assert relative(nll, predictive["nll"]) <= 1e-12


def test_gridsearch_keeps_the_lowest_validation_nll(run):
    model, data, _ = run
    la = blr.Laplace(model).fit((data["x"], data["y"]))
    x_val, y_val = data["x_test"][:50], data["y_test"][:50]
    search = la.optimize_prior_precision("gridsearch", val_loader=(x_val, y_val),
                                         grid=(1e-3, 1e3, 7))
    assert len(search["grid"]) == len(search["nll"]) == 7
    best = min(range(7), key=lambda k: search["nll"][k])
    assert search["prior_precision"] == search["grid"][best] == la.prior_precision
    nll = -la.predictive_log_probs(x_val).gather(1, y_val[:, None]).mean().item()
    assert relative(nll, search["validation_nll"]) <= 1e-12
    chosen = la.optimize_prior_precision("marglik")
    assert chosen["prior_precision"] == la.prior_precision == la._impl.optimal_prior_precision()


def test_monte_carlo_predictive_is_seeded_and_normalised(run):
    model, data, _ = run
    # laplace-torch's "mc" is read as "monte-carlo": the same seeded draws.
    draws = [blr.Laplace(model, seed=7).fit((data["x"], data["y"]))(data["x_test"], link=link,
                                                                      samples=16)
             for link in ("monte-carlo", "mc")]
    assert torch.equal(draws[0], draws[1])
    assert torch.allclose(draws[0].sum(1), torch.ones(N_TEST, dtype=torch.float64), atol=1e-6)


def test_the_model_is_not_changed(run):
    model, data, _ = run
    before = [p.detach().clone() for p in model.parameters()]
    la = blr.Laplace(model).fit((data["x"], data["y"]))
    la(data["x_test"], link="monte-carlo", samples=4)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert all(torch.equal(a, b) for a, b in zip(before, la.mean))
    assert la.parameter_names == [name for name, _ in model.named_parameters()]
    assert all(v.shape == p.shape and bool((v > 0).all()) for v, p in
               zip(la.posterior_variance, model.parameters()))


def test_misuse_is_one_sentence(run):
    model, data, _ = run
    with pytest.raises(blr.Error, match="not fitted yet; call fit"):
        blr.Laplace(model).prior_precision
    with pytest.raises(blr.Error, match="likelihood must be 'classification' or 'regression'"):
        blr.Laplace(model, "bernoulli")
    with pytest.raises(blr.Error, match="Option 'structure' takes a choice \\(one of diag, kron\\); got full"):
        blr.Laplace(model, structure="full")
    with pytest.raises(blr.Error, match="the model must be a torch.nn.Module"):
        blr.Laplace(lambda x: x)
    la = blr.Laplace(model)
    with pytest.raises(blr.Error, match="labels must be a vector of 300 class indices"):
        la.fit((data["x"], data["y"][:10]))
    with pytest.raises(blr.Error, match="labels must be integer class indices"):
        la.fit((data["x"], data["y"].double()))
    la.fit((data["x"], data["y"]))
    with pytest.raises(blr.Error, match="prior precision must be a positive finite number"):
        la.prior_precision = -1.0
    with pytest.raises(blr.Error, match="link must be 'probit' or 'monte-carlo'"):
        la(data["x_test"], link="exact")
    with pytest.raises(blr.Error, match="needs val_loader"):
        la.optimize_prior_precision("gridsearch")
    with pytest.raises(blr.Error, match="method must be 'marglik' or 'gridsearch'"):
        la.optimize_prior_precision("validation")
