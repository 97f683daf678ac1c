"""Training from Python: a Fashion-MNIST MLP with blr.IVON learns and gives a calibrated
predictive (smoke test: a few thousand images, one epoch); VOGN with per-example squared
gradients computed in the test."""

import pytest
import torch

import blr


def test_fashion_mnist_mlp_with_ivon_learns():
    data = blr.data.fashion_mnist(train_limit=4000, test_limit=1000)
    x, y = data["train"]
    xt, yt = data["test"]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=len(x), hess_init=0.1, seed=0)
    for epoch in range(2):
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        for batch in order.split(128):
            with optimizer.sampled_params(train=True):
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
    m = blr.metrics(blr.predictive(model, optimizer, xt, samples=8), yt)
    assert m["accuracy"] > 0.75        # chance is 0.10; this MLP reaches ~0.80 here
    assert m["ece"] < 0.1
    assert data["test_shifted"][0].shape == xt.shape
    ood = blr.entropy_auroc(blr.predictive(model, optimizer, xt, samples=8),
                            blr.predictive(model, optimizer, data["test_shifted"][0], samples=8))
    assert 0.0 <= ood <= 1.0


def test_vogn_takes_per_example_squared_gradients():
    torch.manual_seed(0)
    x = torch.randn(32, 5, dtype=torch.float64)
    y = (x[:, 0] > 0).long()
    model = torch.nn.Linear(5, 2).to(torch.float64)
    optimizer = blr.VOGN(model.parameters(), lr=0.05, ess=32)
    assert optimizer._impl.needs_squared_gradients
    losses = []
    for _ in range(30):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            # Per-example gradients of a Linear layer: (p − onehot) xᵀ and p − onehot.
            residual = torch.softmax(model(x), 1).detach() - torch.nn.functional.one_hot(y, 2)
            weight_sq = (residual[:, :, None] * x[:, None, :]).pow(2).mean(0)
            optimizer.add_squared_gradients([weight_sq, residual.pow(2).mean(0)])
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    with pytest.raises(blr.Error):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()  # no squared gradients given for this sample
