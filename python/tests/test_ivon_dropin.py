"""Drop-in completeness for ivon users (issue 30, item 3): ivon.IVON's positional arguments,
param_groups[i]["hess"] and ["momentum"] as views of the state, and state dicts in the ivon
package's form (param_groups with flat "hess" and "momentum" tensors) loaded onto blr's state."""

import inspect

import pytest
import torch
from torch.nn.utils.stateless import functional_call

import blr
from conftest import small_model, small_problem
from reference import ReferenceIVON


def one_step(model, optimizer, x, y, noise=None):
    with optimizer.sampled_params(train=True, noise=noise):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


def flat(tensors):
    return torch.cat([t.reshape(-1) for t in tensors])


def test_positional_arguments_in_ivons_order_equal_keywords(problem):
    x, y = problem
    a, b = small_model(), small_model()
    by_position = blr.IVON(a.parameters(), 0.05, 500, 0.3, 0.8, 0.999, 1e-3, 1, "price", 0.5)
    by_keyword = blr.IVON(b.parameters(), lr=0.05, ess=500, hess_init=0.3, beta1=0.8, beta2=0.999,
                          weight_decay=1e-3, mc_samples=1, hess_approx="price", clip_radius=0.5)
    for key in ("lr", "ess", "hess_init", "beta1", "beta2", "weight_decay", "clip_radius"):
        assert by_position.param_groups[0][key] == by_keyword.param_groups[0][key]
    for _ in range(3):
        one_step(a, by_position, x, y)
        one_step(b, by_keyword, x, y)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    # The same update as with the defaults changed: the positional values took effect.
    c = small_model()
    one_step(c, blr.IVON(c.parameters(), lr=0.05, ess=500), x, y)
    assert not torch.equal(next(c.parameters()), next(small_model().parameters()))
    names = list(inspect.signature(blr.IVON).parameters)
    assert names[:13] == ["params", "lr", "ess", "hess_init", "beta1", "beta2", "weight_decay",
                          "mc_samples", "hess_approx", "clip_radius", "sync", "debias",
                          "rescale_lr"]


def test_positional_argument_errors_are_sentences():
    params = list(small_model().parameters())
    with pytest.raises(blr.Error, match=r"got the option 'lr' twice \(by position and by keyword\)"):
        blr.IVON(params, 0.1, 100, lr=0.2)
    with pytest.raises(blr.Error, match=r"takes at most 12 after params"):
        blr.IVON(params, *([0.1] * 13))
    with pytest.raises(blr.Error, match=r"sync=True\) all-reduces .* call "
                                        r"torch.distributed.init_process_group first"):
        blr.IVON(params, 0.1, 100, sync=True)  # without a process group
    blr.IVON(params, 0.1, 100, sync=False)  # ivon's default, accepted
    with pytest.raises(blr.Error, match=r"takes only params by position"):
        blr.VOGN(params, 0.1)
    with pytest.raises(blr.Error, match=r"IVON needs the option 'ess'"):
        blr.IVON(params, 0.1)


def test_hess_and_momentum_are_views_of_the_state(problem):
    x, y = problem
    model = small_model()
    first, second = list(model[0].parameters()), list(model[2].parameters())
    optimizer = blr.IVON([{"params": first}, {"params": second, "hess_init": 0.5}], lr=0.1,
                         ess=64)
    n0, n1 = sum(p.numel() for p in first), sum(p.numel() for p in second)
    assert torch.equal(optimizer.param_groups[0]["hess"], torch.ones(n0, dtype=torch.float64))
    assert torch.equal(optimizer.param_groups[1]["hess"], torch.full((n1,), 0.5, dtype=torch.float64))
    assert torch.equal(optimizer.param_groups[1]["momentum"], torch.zeros(n1, dtype=torch.float64))
    assert "hess" in optimizer.param_groups[0] and optimizer.param_groups[0].get("momentum") is not None
    before = optimizer.param_groups[0]["hess"]
    for _ in range(2):
        one_step(model, optimizer, x, y)
        h, m = optimizer.curvature(), optimizer.momentum()
        assert torch.equal(optimizer.param_groups[0]["hess"], flat(h[:len(first)]))
        assert torch.equal(optimizer.param_groups[1]["hess"], flat(h[len(first):]))
        assert torch.equal(optimizer.param_groups[1]["momentum"], flat(m[len(first):]))
    assert not torch.equal(optimizer.param_groups[0]["hess"], before)  # later steps show
    assert optimizer.param_groups[0]["momentum"].abs().max() > 0
    # Not among the group's items: state_dict's param_groups stay torch's.
    assert "hess" not in optimizer.state_dict()["param_groups"][0]


def test_assigning_hess_and_momentum_sets_the_state():
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64)
    n = sum(p.numel() for p in model.parameters())
    h = torch.linspace(0.5, 2.0, n, dtype=torch.float64)
    optimizer.param_groups[0]["hess"] = h
    optimizer.param_groups[0]["momentum"] = -h
    assert torch.equal(optimizer.param_groups[0]["hess"], h)
    assert torch.equal(flat(optimizer.momentum()), -h)
    with pytest.raises(blr.Error, match=rf"must be a flat tensor of {n} values"):
        optimizer.param_groups[0]["hess"] = torch.ones(n - 1)
    with pytest.raises(blr.Error, match=r"is a tensor .*; got a list"):
        optimizer.param_groups[0]["hess"] = [1.0] * n
    with pytest.raises(blr.Error, match=r"corrupt"):
        optimizer.param_groups[0]["hess"] = torch.full((n,), -1.0)  # negative precision
    assert torch.equal(optimizer.param_groups[0]["hess"], h)  # refusals change nothing


def ivon_state_dict(model, hess, momentum, **hyper):
    """A state dict in ivon.IVON's form, by hand: one group, its hyperparameters, "numel" and the
    flat "hess" and "momentum" tensors, params as indices; no per-parameter state."""
    group = dict(lr=0.05, ess=64.0, hess_init=0.7, beta1=0.8, beta2=0.999, weight_decay=1e-3,
                 mc_samples=1, clip_radius=float("inf"))
    group.update(hyper)
    numel = sum(p.numel() for p in model.parameters())
    group.update(numel=numel, hess=hess, momentum=momentum,
                 params=list(range(len(list(model.parameters())))))
    return {"state": {}, "param_groups": [group]}


@pytest.mark.parametrize("step", [None, 5])
def test_an_ivon_state_dict_loads_and_the_next_step_is_ivons(step):
    x, y = small_problem()
    model = small_model()
    n = sum(p.numel() for p in model.parameters())
    generator = torch.Generator().manual_seed(3)
    hess = 0.5 + torch.rand(n, generator=generator, dtype=torch.float64)
    momentum = 0.1 * torch.randn(n, generator=generator, dtype=torch.float64)
    sd = ivon_state_dict(model, hess, momentum)
    if step is not None:
        sd["state"]["step"] = step
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=1000)
    optimizer.load_state_dict(sd)
    assert torch.equal(optimizer.param_groups[0]["hess"], hess)
    assert torch.equal(optimizer.param_groups[0]["momentum"], momentum)
    group = optimizer.param_groups[0]
    assert (group["lr"], group["ess"], group["beta1"], group["weight_decay"]) == (0.05, 64.0, 0.8, 1e-3)
    assert optimizer.step_count == (step or 0)

    # The same state in the plain-PyTorch IVON, and one step of each on identical noise.
    params = list(model.parameters())
    reference = ReferenceIVON(params, lr=0.05, ess=64.0, hess_init=0.7, beta1=0.8, beta2=0.999,
                              weight_decay=1e-3)
    sizes = [p.numel() for p in params]
    reference.h = [t.reshape(p.shape).clone() for t, p in zip(hess.split(sizes), params)]
    reference.m = [t.reshape(p.shape).clone() for t, p in zip(momentum.split(sizes), params)]
    reference.t = step or 0
    eps = [torch.randn(p.shape, generator=generator, dtype=torch.float64) for p in params]
    names = [name for name, _ in model.named_parameters()]
    leaves = [t.detach().clone().requires_grad_(True) for t in reference.sample(eps)]
    loss = torch.nn.functional.cross_entropy(functional_call(model, dict(zip(names, leaves)), (x,)), y)
    grads = list(torch.autograd.grad(loss, leaves))
    one_step(model, optimizer, x, y, noise=eps)
    reference.step([grads], [eps])
    for p, mu in zip(model.parameters(), reference.mu):
        assert torch.allclose(p.detach(), mu, rtol=0, atol=1e-12)
    for h, r in zip(optimizer.curvature(), reference.h):
        assert torch.allclose(h, r, rtol=0, atol=1e-12)
    # The move is not the one from blr's own fresh state: the loaded state took part.
    fresh_model = small_model()
    fresh = blr.IVON(fresh_model.parameters(), 0.05, 64.0, 0.7, 0.8, 0.999, 1e-3)
    one_step(fresh_model, fresh, x, y, noise=eps)
    assert not torch.allclose(next(fresh_model.parameters()), next(model.parameters()))


def test_a_mismatched_ivon_state_dict_is_refused_and_changes_nothing():
    model = small_model()
    n = sum(p.numel() for p in model.parameters())
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=1000)
    before = optimizer.param_groups[0]["hess"]
    bad = ivon_state_dict(model, torch.ones(n + 1), torch.zeros(n + 1))
    with pytest.raises(blr.Error, match=rf"param_groups\[0\]\['hess'\] of IVON must be a flat tensor of {n} values"):
        optimizer.load_state_dict(bad)
    two = ivon_state_dict(model, torch.ones(n), torch.zeros(n))
    two["param_groups"].append(dict(two["param_groups"][0]))
    with pytest.raises(blr.Error, match=r"has 2 param groups; IVON has 1"):
        optimizer.load_state_dict(two)
    short = ivon_state_dict(model, torch.ones(n), torch.zeros(n))
    short["param_groups"][0]["params"] = [0]
    with pytest.raises(blr.Error, match=r"has 1 parameters; IVON's has 4"):
        optimizer.load_state_dict(short)
    negative = ivon_state_dict(model, torch.full((n,), -5.0), torch.zeros(n), weight_decay=0.5)
    with pytest.raises(blr.Error, match=r"corrupt"):
        optimizer.load_state_dict(negative)
    assert torch.equal(optimizer.param_groups[0]["hess"], before)
    assert optimizer.param_groups[0]["weight_decay"] == 1e-4 and optimizer.param_groups[0]["lr"] == 0.1
    with pytest.raises(blr.Error, match=r"not a Gaussian mean-field optimizer"):
        blr.MCDropout(small_model().parameters(), lr=0.1).load_state_dict(
            ivon_state_dict(model, torch.ones(n), torch.zeros(n)))


def test_setting_the_state_is_refused_inside_a_step_or_under_a_prior(problem):
    x, y = problem
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64)
    n = sum(p.numel() for p in model.parameters())
    with optimizer.sampled_params(train=True):
        with pytest.raises(blr.Error, match=r"while the parameters hold a sample"):
            optimizer.param_groups[0]["hess"] = torch.ones(n)
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
    with pytest.raises(blr.Error, match=r"only between steps"):
        optimizer.param_groups[0]["hess"] = torch.ones(n)
    optimizer.step()
    optimizer.set_prior_from_posterior()
    with pytest.raises(blr.Error, match=r"clear_prior\(\) first"):
        optimizer.param_groups[0]["momentum"] = torch.zeros(n)
    optimizer.clear_prior()
    optimizer.param_groups[0]["momentum"] = torch.zeros(n)
    assert torch.equal(optimizer.param_groups[0]["momentum"], torch.zeros(n, dtype=torch.float64))
