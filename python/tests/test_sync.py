"""sync=True (the ivon package's multi-process training): each process's gradient and curvature
sums are all-reduced with torch.distributed before the update, and each process draws the noise
of its rank (as blr's own data-parallel runs do). So W processes with mc_samples S each, on the
same minibatches, take the steps of ONE process with W·S samples: checked bitwise against a
one-process run (float sums of two terms commute exactly), over 3 steps of a small MLP, with two
processes of the gloo backend meeting through a file in a temporary directory (no socket)."""
import os
import tempfile

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import blr

STEPS = 3


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(STEPS, 16, 4, generator=g), torch.randint(0, 3, (STEPS, 16), generator=g)


def train(optimizer_of, net):
    x, y = data()
    for t in range(STEPS):
        def closure():
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(x[t]), y[t])
            loss.backward()
            return loss
        optimizer = optimizer if t else optimizer_of(net.parameters())
        optimizer.step(closure)
    return [p.detach().clone() for p in net.parameters()], optimizer.curvature()


def rank_main(rank, world, store, out):
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    try:
        params, hess = train(lambda p: blr.IVON(p, lr=0.1, ess=100, mc_samples=1, sync=True),
                             model())
        torch.save({"params": params, "hess": hess}, f"{out}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")
def test_two_processes_step_as_one_with_both_samples():
    one, one_hess = train(lambda p: blr.IVON(p, lr=0.1, ess=100, mc_samples=2), model())
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(rank_main, args=(2, f"{d}/store", d), nprocs=2, join=True)
        ranks = [torch.load(f"{d}/rank{r}.pt") for r in range(2)]
    for r in ranks:
        for a, b in zip(r["params"], one):
            assert torch.equal(a, b), (a - b).abs().max()
        for a, b in zip(r["hess"], one_hess):
            assert torch.equal(a, b), (a - b).abs().max()
    # and the processes' steps are not those of one process with one sample
    single, _ = train(lambda p: blr.IVON(p, lr=0.1, ess=100, mc_samples=1), model())
    assert not all(torch.equal(a, b) for a, b in zip(single, one))
