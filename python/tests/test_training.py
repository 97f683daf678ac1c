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


def test_per_example_squared_gradients_equal_one_backward_per_example():
    """blr.per_example_squared_gradients (vmap of grad) against one backward pass per example,
    for an MLP with a frozen layer: the mean of the squared gradients, parameter by parameter."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3),
                                torch.nn.Tanh(), torch.nn.Linear(3, 3)).to(torch.float64)
    model[2].weight.requires_grad_(False)
    x = torch.randn(9, 5, dtype=torch.float64)
    y = torch.randint(0, 3, (9,))
    loss = torch.nn.functional.cross_entropy
    got = blr.per_example_squared_gradients(model, loss, x, y)
    trainable = [p for p in model.parameters() if p.requires_grad]
    expected = [torch.zeros_like(p) for p in trainable]
    for i in range(len(x)):
        grads = torch.autograd.grad(loss(model(x[i:i + 1]), y[i:i + 1]), trainable)
        for e, g in zip(expected, grads):
            e += g.pow(2) / len(x)
    assert len(got) == len(trainable)
    for a, b in zip(got, expected):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-15), (a - b).abs().max()


def test_vogn_trains_with_the_computed_squared_gradients():
    torch.manual_seed(0)
    x = torch.randn(64, 5)
    y = (x[:, 0] - x[:, 1] > 0).long()
    model = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    optimizer = blr.VOGN(model.parameters(), lr=0.05, ess=64)
    loss = torch.nn.functional.cross_entropy
    losses = []
    for _ in range(40):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            value = loss(model(x), y)
            value.backward()
            optimizer.add_squared_gradients(blr.per_example_squared_gradients(model, loss, x, y))
        optimizer.step()
        losses.append(value.item())
    assert losses[-1] < 0.7 * losses[0]


def test_per_example_squared_gradients_refuse_a_model_that_mixes_examples():
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.Linear(6, 2))
    with pytest.raises(blr.Error, match=r"no per-example gradients|mixes the examples"):
        blr.per_example_squared_gradients(model, torch.nn.functional.cross_entropy,
                                          torch.randn(8, 4), torch.randint(0, 2, (8,)))
