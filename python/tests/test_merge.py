"""blr.merge and blr.merge_curvature (python/blr/merge.py), issue 30 item 2:
* on the same base and fine-tuned weights, the merged model scores on the test set what
  `blr merge` + `blr eval` score, for uncertainty merging (point estimates: N·diag GGN over each
  model's own training data, as the command computes it), task arithmetic and averaging;
* the formula by hand on two coordinates; one model comes back bit for bit;
* a blr optimizer's curvature is its posterior precision; misuse is one blr.Error sentence.
"""

import copy
import json
import subprocess

import pytest
import torch

import blr
from conftest import CLI


def fine_tuned(model, x, y, steps, lr, seed):
    torch.manual_seed(seed)
    tuned = copy.deepcopy(model)
    optimizer = torch.optim.Adam(tuned.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(tuned(x), y).backward()
        optimizer.step()
    return tuned


@pytest.fixture(scope="module")
def tasks(cli_classifier_run):
    """Two models fine-tuned from the base on halves of its training data, each with a checkpoint
    of `blr train` holding its weights (SGD at lr 1e-30) on its own training data."""
    model, data, folder = cli_classifier_run
    out = []
    for t, rows in enumerate((slice(0, 150), slice(150, 300))):
        x, y = data["x"][rows], data["y"][rows]
        tuned = fine_tuned(model, x, y, steps=40, lr=0.02, seed=t)
        torch.save({"x": x, "y": y, "x_test": data["x_test"], "y_test": data["y_test"]},
                   folder / f"task{t}.pt")
        torch.jit.script(tuned).save(str(folder / f"task{t}-model.pt"))
        subprocess.run([str(CLI), "train", "--model-file", f"task{t}-model.pt", "--data",
                        f"task{t}.pt", "--optimizer", "sgd", "--sgd-lr", "1e-30", "--sgd-momentum",
                        "0", "--epochs", "1", "--out", f"task{t}", "--quiet"],
                       cwd=folder, check=True, capture_output=True)
        out.append((tuned, x, y))
    return out


def scale_of(method):
    return 1.0 if method == "average" else 0.8


def command_merge_metrics(folder, method):
    subprocess.run([str(CLI), "merge", "--base", "run/sgd.ckpt", "--models",
                    "task0/sgd.ckpt,task1/sgd.ckpt", "--method", method,
                    *([] if method == "average" else ["--scale", str(scale_of(method))]),
                    "--out", f"merged-{method}.ckpt", "--quiet"],
                   cwd=folder, check=True, capture_output=True)
    subprocess.run([str(CLI), "eval", "--checkpoint", f"merged-{method}.ckpt", "--out",
                    f"eval-{method}", "--json", f"eval-{method}.json", "--quiet"],
                   cwd=folder, check=True, capture_output=True)
    result = json.loads((folder / f"eval-{method}.json").read_text())
    (run,) = result["optimizers"].values()
    return run["test"]["mean"]


@pytest.mark.parametrize("method", ["uncertainty", "task-arithmetic", "average"])
def test_the_merged_model_scores_what_the_command_scores(cli_classifier_run, tasks, method):
    model, data, folder = cli_classifier_run
    expected = command_merge_metrics(folder, method)
    models = [tuned for tuned, _, _ in tasks]
    curvatures = base_curvature = None
    if method == "uncertainty":
        base_curvature = blr.merge_curvature(model, data=(data["x"], data["y"]))
        curvatures = [blr.merge_curvature(tuned, data=(x, y)) for tuned, x, y in tasks]
    state = blr.merge(model, models, method, curvatures=curvatures, base_curvature=base_curvature,
                      scale=scale_of(method))
    merged = copy.deepcopy(model)
    merged.load_state_dict(state)
    with torch.no_grad():
        log_probs = merged(data["x_test"]).log_softmax(1)
    nll = -log_probs.gather(1, data["y_test"][:, None]).mean().item()
    accuracy = (log_probs.argmax(1) == data["y_test"]).double().mean().item()
    # Both evaluate float32 networks with the same weights; the NLL's reduction order may differ.
    assert nll == pytest.approx(expected["nll"], rel=1e-6), (nll, expected["nll"])
    assert accuracy == expected["accuracy"]


def test_the_formula_by_hand_and_one_model_back():
    base = {"w": torch.tensor([1.0, -2.0], dtype=torch.float64)}
    a = {"w": torch.tensor([3.0, 0.0], dtype=torch.float64)}
    b = {"w": torch.tensor([0.0, 4.0], dtype=torch.float64)}
    c0 = {"w": torch.tensor([1.0, 2.0], dtype=torch.float64)}
    ca = {"w": torch.tensor([4.0, 1.0], dtype=torch.float64)}
    cb = {"w": torch.tensor([2.0, 3.0], dtype=torch.float64)}
    alpha, delta0 = 0.5, 0.25
    h = alpha * (ca["w"] + cb["w"]) + c0["w"] + delta0
    wa = alpha * (ca["w"] + c0["w"] + delta0) / h
    wb = alpha * (cb["w"] + c0["w"] + delta0) / h
    expected = (1 - wa - wb) * base["w"] + wa * a["w"] + wb * b["w"]
    got = blr.merge(base, [a, b], "uncertainty", curvatures=[ca, cb], base_curvature=c0,
                    scale=alpha, delta0=delta0)
    assert torch.allclose(got["w"], expected, rtol=1e-15, atol=0)
    assert torch.allclose(blr.merge(base, [a, b], "task-arithmetic", scale=alpha)["w"],
                          base["w"] + alpha * (a["w"] - base["w"] + b["w"] - base["w"]), rtol=1e-15)
    assert torch.equal(blr.merge(base, [a, b], "average")["w"], (a["w"] + b["w"]) / 2)
    assert torch.equal(blr.merge(base, [a], "uncertainty", curvatures=[ca], base_curvature=c0,
                                 delta0=0.0)["w"], a["w"])


def test_an_ivon_curvature_is_its_posterior_precision():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=50)
    x, y = torch.randn(8, 3), torch.randint(0, 2, (8,))
    with optimizer.sampled_params(train=True):
        torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    curvature = blr.merge_curvature(model, optimizer)
    assert list(curvature) == ["weight", "bias"]
    for got, want in zip(curvature.values(), optimizer.posterior_precision()):
        assert torch.equal(got, want)


def test_misuse_is_one_sentence():
    base = {"w": torch.zeros(2)}
    with pytest.raises(blr.Error, match="method must be one of uncertainty, average, task-arithmetic"):
        blr.merge(base, [base], "fisher")
    with pytest.raises(blr.Error, match="needs base_curvature and one curvature per model"):
        blr.merge(base, [base], "uncertainty")
    with pytest.raises(blr.Error, match="scale applies to uncertainty and task-arithmetic"):
        blr.merge(base, [base], "average", scale=0.5)
    with pytest.raises(blr.Error, match="delta0 applies to uncertainty merging, not to average"):
        blr.merge(base, [base], "average", delta0=1.0)
    with pytest.raises(blr.Error, match="model 0 has no 'w'"):
        blr.merge(base, [{"v": torch.zeros(2)}], "average")
    with pytest.raises(blr.Error, match="give the fine-tuned models as a non-empty list"):
        blr.merge(base, [], "average")
    with pytest.raises(blr.Error, match="needs its training data"):
        blr.merge_curvature(torch.nn.Linear(2, 2))
    with pytest.raises(blr.Error, match="holds no curvature"):
        model = torch.nn.Linear(2, 2)
        blr.merge_curvature(model, torch.optim.SGD(model.parameters(), lr=0.1))
