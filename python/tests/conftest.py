"""Shared pieces of the Python tests: a small classifier and its data, seeded."""

import pytest
import torch


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
