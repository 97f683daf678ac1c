"""The torch.optim.Optimizer contract of blr's optimizers: keyword options from the tables, param
groups, schedulers, state_dict round trips (step counter included), gradient accumulation inside
one sample, closures, errors as blr.Error sentences, and that the parameters are shared with
C++ (no copies)."""

import inspect
import io

import pytest
import torch

import blr
from conftest import small_model, small_problem


def train_steps(model, optimizer, x, y, steps):
    for _ in range(steps):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


def test_every_registry_optimizer_is_a_torch_optimizer_with_its_table():
    names = {entry["name"] for entry in blr.optimizers()}
    assert {"ivon", "vogn", "ogn", "vadam", "bayesbinn"} <= names
    for cls in (blr.IVON, blr.VOGN, blr.OGN, blr.Vadam, blr.BayesBiNN):
        assert issubclass(cls, torch.optim.Optimizer)
    signature = inspect.signature(blr.IVON)
    assert signature.parameters["ess"].default is blr.optim.REQUIRED  # required (after lr, ivon's order)
    assert inspect.signature(blr.VOGN).parameters["ess"].default is inspect.Parameter.empty
    assert signature.parameters["beta2"].default == 0.99999
    assert signature.parameters["hess_approx"].default == "price"


def test_parameters_are_shared_not_copied(problem):
    x, y = problem
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64)
    weight = model[0].weight
    mean = weight.detach().clone()
    with optimizer.sampled_params(train=False):
        assert not torch.equal(weight.detach(), mean)  # the Python tensor holds the sample θ
    assert torch.equal(weight.detach(), mean)           # and μ again afterwards
    train_steps(model, optimizer, x, y, 1)
    assert not torch.equal(weight.detach(), mean)       # the step wrote into the same tensor


def test_errors_are_value_errors_with_one_sentence():
    params = small_model().parameters()
    with pytest.raises(blr.Error, match="IVON needs the option 'ess'"):
        blr.IVON(params, lr=0.1)
    with pytest.raises(ValueError, match=r"did you mean 'beta1'"):
        blr.IVON(small_model().parameters(), lr=0.1, ess=10, betta1=0.9)
    with pytest.raises(blr.Error, match=r"Option 'beta1' must be in \[0, 1\)"):
        blr.IVON(small_model().parameters(), lr=0.1, ess=10, beta1=1.0)
    with pytest.raises(blr.Error, match=r"takes a choice \(one of price, gradsq\)"):
        blr.IVON(small_model().parameters(), lr=0.1, ess=10, hess_approx="exact")


def test_step_without_a_sample_is_a_clear_error():
    optimizer = blr.IVON(small_model().parameters(), lr=0.1, ess=10)
    with pytest.raises(blr.Error, match="needs at least one training sample"):
        optimizer.step()


def test_an_exception_inside_the_block_restores_the_mean_and_counts_nothing(problem):
    x, y = problem
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64)
    mean = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(RuntimeError, match="boom"):
        with optimizer.sampled_params(train=True):
            raise RuntimeError("boom")
    assert all(torch.equal(p.detach(), m) for p, m in zip(model.parameters(), mean))
    with pytest.raises(blr.Error, match="needs at least one training sample"):
        optimizer.step()


def test_gradient_accumulation_inside_one_sample_equals_the_whole_batch(problem):
    x, y = problem
    noise = None
    results = []
    for chunks in (1, 4):
        model = small_model()
        optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64, hess_init=0.5)
        if noise is None:
            generator = torch.Generator().manual_seed(3)
            noise = [torch.randn(p.shape, generator=generator, dtype=p.dtype) for p in model.parameters()]
        for _ in range(3):
            with optimizer.sampled_params(train=True, noise=noise):
                optimizer.zero_grad()
                for xs, ys in zip(x.chunk(chunks), y.chunk(chunks)):
                    (torch.nn.functional.cross_entropy(model(xs), ys, reduction="sum") / len(y)).backward()
            optimizer.step()
        results.append([p.detach().clone() for p in model.parameters()])
    for a, b in zip(*results):
        assert torch.allclose(a, b, rtol=0, atol=1e-12)


def test_closure_runs_mc_samples_and_returns_the_mean_loss(problem):
    x, y = problem
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64, mc_samples=3)
    calls = []

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        calls.append(loss.item())
        return loss

    loss = optimizer.step(closure)
    assert len(calls) == 3 and loss == pytest.approx(sum(calls) / 3, rel=1e-12)
    assert optimizer.step_count == 1


def test_param_groups_keep_their_own_options(problem):
    x, y = problem
    model = small_model()
    frozen_lr = [{"params": model[0].parameters(), "lr": 0.0}, {"params": model[2].parameters()}]
    optimizer = blr.IVON(frozen_lr, lr=0.1, ess=64)
    first = [p.detach().clone() for p in model[0].parameters()]
    last = [p.detach().clone() for p in model[2].parameters()]
    train_steps(model, optimizer, x, y, 2)
    assert all(torch.equal(p.detach(), q) for p, q in zip(model[0].parameters(), first))
    assert not all(torch.equal(p.detach(), q) for p, q in zip(model[2].parameters(), last))
    assert optimizer.param_groups[0]["lr"] == 0.0 and optimizer.param_groups[1]["lr"] == 0.1
    with pytest.raises(blr.Error, match="applies to the whole optimizer"):
        bad = blr.IVON([{"params": small_model().parameters(), "mc_samples": 2}], lr=0.1, ess=64)
        bad.step()


def test_schedulers_take_effect(problem):
    x, y = problem
    # lr 0 after the first step (LambdaLR): later steps leave the means where they are.
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 1.0 if epoch == 0 else 0.0)
    train_steps(model, optimizer, x, y, 1)
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] == 0.0
    after_first = [p.detach().clone() for p in model.parameters()]
    train_steps(model, optimizer, x, y, 2)
    assert all(torch.equal(p.detach(), q) for p, q in zip(model.parameters(), after_first))
    # And a halved lr gives a different trajectory from a constant one.
    ends = []
    for gamma in (1.0, 0.5):
        model = small_model()
        optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64, seed=5)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=gamma)
        for _ in range(3):
            train_steps(model, optimizer, x, y, 1)
            scheduler.step()
        ends.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert not torch.equal(ends[0], ends[1])


def test_adabayes_follows_a_scheduler_as_the_reference():
    # The reference code scales σ² = η·(lr_sgd/η₀)/B and the drift c·η/η₀ with the rate η in
    # force; here the rate is halved after every step (StepLR), which reaches the C++ groups as a
    # new lr while η₀ stays the one the optimizer was built with.
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(16, 3, generator=generator, dtype=torch.float64)
    y = torch.randn(16, generator=generator, dtype=torch.float64)
    w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    eta0, lr_sgd, drift, batch = 0.05, 0.2, 1e-2, 16
    optimizer = blr.AdaBayes([w], lr=eta0, lr_sgd=lr_sgd, beta1=0.8, weight_drift=drift,
                             batch_size=batch)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    plain = torch.zeros(3, dtype=torch.float64)
    m = torch.zeros(3, dtype=torch.float64)
    s2 = torch.full((3,), lr_sgd / batch, dtype=torch.float64)
    for t in range(1, 7):
        eta = optimizer.param_groups[0]["lr"]
        assert eta == eta0 * 0.5 ** (t - 1)
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            ((x @ w - y) ** 2).mean().backward()
        optimizer.step()
        scheduler.step()
        q = plain.clone().requires_grad_(True)
        ((x @ q - y) ** 2).mean().backward()
        g = batch * q.grad
        m = 0.8 * m + 0.2 * g
        sigma2 = eta * (lr_sgd / eta0) / batch
        decay = torch.exp(torch.tensor(-eta * eta / sigma2, dtype=torch.float64))
        s2 = 1.0 / (1.0 / (s2 * decay + sigma2 * (1.0 - decay)) + g * g)
        plain = (plain - s2 * m / (1.0 - 0.8 ** t)) * (1.0 - drift / eta0 * eta)
        assert torch.allclose(w.detach(), plain, rtol=1e-12, atol=1e-14), t


def test_state_dict_round_trip_continues_bitwise(problem):
    x, y = problem
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64, seed=11)
    train_steps(model, optimizer, x, y, 3)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    assert optimizer.state_dict()["state"]["step"] == 3
    train_steps(model, optimizer, x, y, 2)
    expected = [p.detach().clone() for p in model.parameters()]

    buffer.seek(0)
    saved = torch.load(buffer)
    restored = small_model(seed=99)
    restored.load_state_dict(saved["model"])
    optimizer2 = blr.IVON(restored.parameters(), lr=0.5, ess=64, seed=11)
    optimizer2.load_state_dict(saved["optimizer"])
    assert optimizer2.step_count == 3 and optimizer2.param_groups[0]["lr"] == 0.1
    train_steps(restored, optimizer2, x, y, 2)
    assert all(torch.equal(p.detach(), q) for p, q in zip(restored.parameters(), expected))


def test_state_dict_refuses_foreign_or_corrupt_state():
    optimizer = blr.IVON(small_model().parameters(), lr=0.1, ess=64)
    adam = torch.optim.Adam(small_model().parameters())
    with pytest.raises(blr.Error, match="no blr optimizer state"):
        optimizer.load_state_dict(adam.state_dict())
    state = optimizer.state_dict()
    state["state"]["blr"] = torch.zeros(16, dtype=torch.uint8)
    with pytest.raises(blr.Error):
        optimizer.load_state_dict(state)


def test_saving_inside_a_sample_is_refused():
    optimizer = blr.IVON(small_model().parameters(), lr=0.1, ess=64)
    with optimizer.sampled_params(train=True):
        with pytest.raises(blr.Error, match="between steps"):
            optimizer.state_dict()


def test_posterior_accessors(problem):
    x, y = problem
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=64, hess_init=0.5, weight_decay=1e-3)
    variance = optimizer.posterior_variance()
    assert len(variance) == len(list(model.parameters()))
    expected = 1.0 / (64 * (0.5 + 1e-3))
    assert all(torch.allclose(v, torch.full_like(v, expected), rtol=1e-12) for v in variance)
    assert all(torch.allclose(h, torch.full_like(h, 0.5)) for h in optimizer.curvature())
    train_steps(model, optimizer, x, y, 1)
    assert optimizer.step_count == 1


def test_point_estimates_have_no_posterior(problem):
    x, y = problem

    def closure_for(model, optimizer):
        def closure():
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return closure

    # AdaBayes-FP runs on the sampling driver with gradients at the mean: a closure is one
    # (unperturbed) sample, and there is no posterior to predict with.
    model = small_model()
    optimizer = blr.AdaBayesFP(model.parameters())
    assert not optimizer.has_posterior
    before = [p.detach().clone() for p in model.parameters()]
    loss = optimizer.step(closure_for(model, optimizer))
    assert loss > 0
    assert not all(torch.equal(p.detach(), q) for p, q in zip(model.parameters(), before))
    # STE is a plain optimizer: the closure is called once, and sampling is refused.
    model = small_model()
    optimizer = blr.STE(model.parameters())
    assert not optimizer.has_posterior
    assert optimizer.step(closure_for(model, optimizer)).item() > 0
    with pytest.raises(blr.Error, match="point estimate"):
        with optimizer.sampled_params():
            pass


def test_the_gil_is_released_during_the_fused_passes():
    # A Python thread counts while the main thread is inside one long C++ call; with the GIL held
    # for the whole call the count could not move between the two reads around it.
    import sys
    import threading

    p = torch.nn.Parameter(torch.zeros(4_000_000))
    p.grad = torch.ones_like(p)
    optimizer = blr.IVON([p], lr=0.1, ess=10)
    count, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        moved = 0
        for _ in range(5):
            before = count[0]
            optimizer._impl.sample(True, None)   # one fused pass over 4·10^6 floats
            moved += count[0] - before
            optimizer._impl.restore()
            optimizer._impl.step()
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(previous)
    assert moved > 0


def test_the_posterior_as_the_next_prior(problem):
    # With β1 = 0 and a zero gradient a step moves the mean only by the prior's pull
    # δ⊙(μ − m₀)/(h + δ): towards 0 under the default prior N(0, ·), not at all once the current
    # posterior is the prior (m₀ = μ).
    x, y = problem
    for with_prior in (False, True):
        model = small_model()
        optimizer = blr.IVON(model.parameters(), lr=0.5, ess=64, weight_decay=0.5, beta1=0.0)
        train_steps(model, optimizer, x, y, 2)
        if with_prior:
            optimizer.set_prior_from_posterior()
        mean = [p.detach().clone() for p in model.parameters()]
        for _ in range(3):
            with optimizer.sampled_params(train=True):
                optimizer.zero_grad()
                (0.0 * model(x).sum()).backward()
            optimizer.step()
        moved = max((p.detach() - m).abs().max().item() for p, m in zip(model.parameters(), mean))
        assert (moved == 0.0) if with_prior else (moved > 1e-3)
    optimizer.clear_prior()
    with pytest.raises(blr.Error):
        blr.Vadam(small_model().parameters(), ess=64).set_prior_from_posterior()
