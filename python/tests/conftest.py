"""Shared pieces of the Python tests: a small classifier and its data, seeded."""

import os
import subprocess
from pathlib import Path

import pytest
import torch

import blr

# The blr command next to the package of the build tree (build/python/blr → build/blr).
CLI = Path(os.environ.get("BLR_CLI", Path(blr.__file__).resolve().parents[2] / "blr"))


def small_problem(dtype=torch.float64, seed=0, n=64, d=6, classes=3):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=generator, dtype=dtype)
    w = torch.randn(d, classes, generator=generator, dtype=dtype)
    y = (x @ w + 0.5 * torch.randn(n, classes, generator=generator, dtype=dtype)).argmax(dim=1)
    return x, y


def small_model(dtype=torch.float64, seed=1, d=6, hidden=8, classes=3):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.Tanh(),
                               torch.nn.Linear(hidden, classes)).to(dtype)


@pytest.fixture
def problem():
    return small_problem()


def trained_classifier_and_data(n_train=300, n_test=100, d=5, classes=3):
    """A small MLP trained in Python (Adam, 100 full-batch steps) and its data, float32, seeded."""
    torch.manual_seed(0)
    x = torch.randn(n_train + n_test, d)
    y = (x @ torch.randn(d, classes) + 0.5 * torch.randn(n_train + n_test, classes)).argmax(1)
    model = torch.nn.Sequential(torch.nn.Linear(d, 16), torch.nn.Tanh(), torch.nn.Linear(16, classes))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(100):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x[:n_train]), y[:n_train]).backward()
        optimizer.step()
    data = {"x": x[:n_train], "y": y[:n_train], "x_test": x[n_train:], "y_test": y[n_train:]}
    return model, data


@pytest.fixture(scope="session")
def cli_classifier_run(tmp_path_factory):
    """(model, data, folder): the model above and the checkpoint folder/run/sgd.ckpt of `blr train`
    on the same weights and data, for comparing the Python posterior tools with the commands.
    `blr train` runs SGD at lr 1e-30: in float32, θ − 1e-30·g rounds back to θ, so the checkpoint
    holds the Python weights."""
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    folder = tmp_path_factory.mktemp("cli_run")
    model, data = trained_classifier_and_data()
    torch.save(data, folder / "data.pt")
    torch.jit.script(model).save(str(folder / "model.pt"))
    subprocess.run([str(CLI), "train", "--model-file", "model.pt", "--data", "data.pt",
                    "--optimizer", "sgd", "--sgd-lr", "1e-30", "--sgd-momentum", "0",
                    "--epochs", "1", "--out", "run", "--quiet"],
                   cwd=folder, check=True, capture_output=True)
    return model, data, folder
