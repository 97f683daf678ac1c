"""blr.sensitivity (python/blr/sensitivity.py), issue 30 item 2:
* under a blr.Laplace posterior it equals `blr sensitivity --checkpoint` of the command's saved
  Laplace posterior on the same model and data, per example (the same C++ function on the same
  numbers: ≤ 1e-12);
* under an IVON posterior, v_ik = Σ_j σ_j² (∂f_ik/∂θ_j)² equals one autograd gradient per example
  and class in float64, and the error, deviation and leave-one-out NLL follow from it as the
  equations say (independent computations written here);
* AdamW's σ² is 1/(N√v + N·weight_decay) of its second moment;
* misuse is one blr.Error sentence.
"""

import json
import subprocess

import pytest
import torch

import blr
from conftest import CLI


def test_equals_the_command_under_a_laplace_posterior(cli_classifier_run):
    model, data, folder = cli_classifier_run
    subprocess.run([str(CLI), "laplace", "--checkpoint", "run/sgd.ckpt", "--out", "sens-laplace",
                    "--save", "sens-laplace/posterior.ckpt", "--quiet"],
                   cwd=folder, check=True, capture_output=True)
    subprocess.run([str(CLI), "sensitivity", "--checkpoint", "sens-laplace/posterior.ckpt",
                    "--json", "sens.json", "--quiet"], cwd=folder, check=True, capture_output=True)
    expected = json.loads((folder / "sens.json").read_text())
    la = blr.Laplace(model).fit((data["x"], data["y"]))
    got = blr.sensitivity(model, la, (data["x"], data["y"]))
    for key in ("error", "variance", "deviation", "score"):
        want = torch.tensor(expected[key], dtype=torch.float64)
        assert torch.allclose(got[key].double(), want, rtol=1e-12, atol=0), key
    assert torch.allclose(got["class_scores"].double(),
                          torch.tensor(expected["class_score"], dtype=torch.float64), rtol=1e-12)
    assert got["loo_nll"] == pytest.approx(expected["loo"]["nll"], rel=1e-12)
    assert got["loo_accuracy"] == expected["loo"]["accuracy"]
    assert got["train_nll"] == pytest.approx(expected["in_sample"]["nll"], rel=1e-12)


def ivon_trained(dtype=torch.float64):
    torch.manual_seed(3)
    x = torch.randn(40, 4, dtype=dtype)
    y = (x[:, 0] + x[:, 1] > 0).long() + (x[:, 2] > 1).long()
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(),
                                torch.nn.Linear(6, 3)).to(dtype)
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=40, hess_init=0.5)
    for _ in range(30):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return model, optimizer, x, y


def test_ivon_variances_are_the_autograd_sums_and_the_rest_follows():
    model, optimizer, x, y = ivon_trained()
    got = blr.sensitivity(model, optimizer, (x, y))
    sigma2 = optimizer.posterior_variance()
    params = list(model.parameters())
    logits = model(x)
    probabilities = logits.softmax(1)
    error = probabilities - torch.nn.functional.one_hot(y, 3).to(x.dtype)
    variance = torch.zeros(40, 3, dtype=torch.float64)
    for i in range(40):
        for k in range(3):
            grads = torch.autograd.grad(logits[i, k], params, retain_graph=True)
            variance[i, k] = sum((s * g * g).sum() for s, g in zip(sigma2, grads))
    assert torch.allclose(got["variance"].double(), variance, rtol=1e-10, atol=1e-14)
    assert torch.allclose(got["error"].double(), error.detach(), rtol=1e-12, atol=1e-14)
    assert torch.allclose(got["deviation"].double(), (variance * error).detach(), rtol=1e-10,
                          atol=1e-14)
    score = (error * probabilities * (1 - probabilities) * variance).abs().sum(1).detach()
    assert torch.allclose(got["score"].double(), score, rtol=1e-10, atol=1e-14)
    shifted = (logits + variance * error).log_softmax(1)
    loo_nll = -shifted.gather(1, y[:, None]).mean().item()
    assert got["loo_nll"] == pytest.approx(loo_nll, rel=1e-10)
    assert got["source"] == "IVON posterior variance"


def test_adamw_variance_is_its_second_moment_formula():
    model, _, x, y = ivon_trained()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
    for _ in range(5):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    for p in model.parameters():
        v = optimizer.state[p]["exp_avg_sq"]
        expected = 1.0 / (40 * v.sqrt() + 40 * 0.05)
        assert torch.allclose(blr._blr.adamw_posterior_variance(v, 40, 0.05), expected, rtol=1e-14)
    got = blr.sensitivity(model, optimizer, (x, y))
    assert got["source"] == "AdamW second moment" and got["score"].shape == (40,)
    # N defaults to the examples given; another N changes σ² and so the variances, by 40/N here
    # for weight decay and second moment alike.
    half = blr.sensitivity(model, optimizer, (x, y), n_train=80)
    assert torch.allclose(half["variance"] * 2, got["variance"], rtol=1e-10)


def test_misuse_is_one_sentence():
    model, optimizer, x, y = ivon_trained()
    with pytest.raises(blr.Error, match="the posterior must be a blr optimizer"):
        blr.sensitivity(model, object(), (x, y))
    with pytest.raises(blr.Error, match="holds no posterior variance"):
        blr.sensitivity(model, torch.optim.SGD(model.parameters(), lr=0.1), (x, y))
    other = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(),
                                torch.nn.Linear(6, 3)).double()
    with pytest.raises(blr.Error, match="parameter 0 of the model is not in the optimizer"):
        blr.sensitivity(other, optimizer, (x, y))
    with pytest.raises(blr.Error, match="no second moment"):
        blr.sensitivity(model, torch.optim.AdamW(model.parameters()), (x, y))
    with pytest.raises(blr.Error, match="labels must be a vector of 40 integer class indices"):
        blr.sensitivity(model, optimizer, (x, y.double()))
    with pytest.raises(blr.Error, match="the model must be a torch.nn.Module"):
        blr.sensitivity(lambda t: t, optimizer, (x, y))
