"""optimizer.backward(loss, batch_size) (issue 30, item 2): the per-example curvature statistics
computed for the caller by the C++ trainer's autograd-graph engine. VOGN through it equals VOGN fed
by functorch's per-example squared gradients (blr.per_example_squared_gradients) step for step;
K-FAC learns from a Python model with no statistics passed by hand; IVON's backward is the plain
one; misuse is one blr.Error sentence."""

import pytest
import torch

import blr
from blr.squared_gradients import per_example_squared_gradients


def data():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=generator, dtype=torch.float64)
    return x, (x[:, 0] + 0.5 * x[:, 1] > 0).long()


def model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 2)).double()


def loss_of(m, x, y):
    return torch.nn.functional.cross_entropy(m(x), y)


def test_vogn_through_backward_equals_vogn_fed_by_functorch():
    x, y = data()
    models = [model(), model()]
    optimizers = [blr.VOGN(m.parameters(), lr=0.1, ess=64, seed=3) for m in models]
    for _ in range(10):
        for by_engine, (m, optimizer) in zip((True, False), zip(models, optimizers)):
            with optimizer.sampled_params(train=True):
                optimizer.zero_grad()
                if by_engine:
                    optimizer.backward(loss_of(m, x, y), batch_size=64)
                else:
                    optimizer.add_squared_gradients(
                        per_example_squared_gradients(m, torch.nn.functional.cross_entropy, x, y))
                    loss_of(m, x, y).backward()
            optimizer.step()
    for a, b in zip(*(m.parameters() for m in models)):
        # Two summation orders of the same float64 sums, then 10 steps: a few ulps.
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-13)


def test_kfac_learns_from_a_python_model():
    x, y = data()
    m = model()
    optimizer = blr.KFAC(m.parameters(), lr=0.1, ess=64)
    first = loss_of(m, x, y).item()
    for _ in range(60):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            optimizer.backward(loss_of(m, x, y), batch_size=64)
        optimizer.step()
    assert loss_of(m, x, y).item() < 0.7 * first
    assert all(bool(torch.isfinite(v).all() and (v > 0).all()) for v in optimizer.posterior_variance())


def test_kfac_curvature_interval_takes_plain_backwards_between_updates():
    # curvature_interval=3: backward() collects the factors at steps 1, 4, 7, ... and is the
    # plain backward between them; the posterior moves only at the curvature steps (refresh=1:
    # the eigenbases follow the factors at once).
    x, y = data()
    m = model()
    optimizer = blr.KFAC(m.parameters(), lr=0.1, ess=64, curvature_interval=3, refresh=1)
    first = loss_of(m, x, y).item()
    variances = []
    for _ in range(60):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            optimizer.backward(loss_of(m, x, y), batch_size=64)
        optimizer.step()
        variances.append(torch.cat([v.flatten() for v in optimizer.posterior_variance()]))
    assert loss_of(m, x, y).item() < 0.7 * first
    changed = [not torch.equal(a, b) for a, b in zip(variances, variances[1:])]
    # variances[k] is after step k + 1; it changes at steps 4, 7, ... (k + 1 ≡ 1 mod 3).
    assert changed == [(k + 2) % 3 == 1 for k in range(len(changed))]


def test_a_plain_optimizer_gets_a_plain_backward():
    x, y = data()
    m = model()
    optimizer = blr.IVON(m.parameters(), lr=0.1, ess=64)
    optimizer.backward(loss_of(m, x, y), batch_size=64)
    expected = torch.autograd.grad(loss_of(m, x, y), list(m.parameters()))
    for p, g in zip(m.parameters(), expected):
        assert torch.equal(p.grad, g)


def test_misuse_is_one_sentence():
    x, y = data()
    m = model()
    optimizer = blr.KFAC(m.parameters(), lr=0.1, ess=64)
    with pytest.raises(blr.Error, match="inside sampled_params\\(train=True\\)"):
        optimizer.backward(loss_of(m, x, y), batch_size=64)
    with optimizer.sampled_params(train=True):
        with pytest.raises(blr.Error, match="the minibatch's mean loss, a scalar with a gradient"):
            optimizer.backward(m(x), batch_size=64)
        with pytest.raises(blr.Error, match="must be ≥ 1; got 0"):
            optimizer.backward(loss_of(m, x, y), batch_size=0)
        optimizer.backward(loss_of(m, x, y), batch_size=64)
