"""blr.IVON and blr.Vadam against plain PyTorch re-implementations of their updates
(reference.py), on the same standard-normal draws given through the noise hook, over 30 steps with
two Monte Carlo samples each, on the fused CPU path and on the tensor-operation path. Bounds are
the issue's: float64 1e-10 (both sides do the same operations in another order: rounding only,
~1e-16 per step), float32 1e-5 (single-precision rounding of O(1) values over 30 steps); a wrong
coefficient moves the means by 1e-3 or more."""

import pytest
import torch
from torch.nn.utils.stateless import functional_call

import blr
from conftest import small_model, small_problem
from reference import ReferenceIVON, ReferenceVadam

STEPS, SAMPLES = 30, 2
BOUND = {torch.float64: 1e-10, torch.float32: 1e-5}


def run_pair(make_blr, make_reference, dtype, fused):
    x, y = small_problem(dtype)
    model = small_model(dtype)
    names = [name for name, _ in model.named_parameters()]
    optimizer = make_blr(model.parameters())
    optimizer._impl.set_fused_kernels(fused)
    reference = make_reference([p for p in model.parameters()])
    generator = torch.Generator().manual_seed(7)

    def gradients(params):
        leaves = [p.detach().clone().requires_grad_(True) for p in params]
        loss = torch.nn.functional.cross_entropy(functional_call(model, dict(zip(names, leaves)), (x,)), y)
        return list(torch.autograd.grad(loss, leaves))

    deviation = 0.0
    for _ in range(STEPS):
        grads, draws = [], []
        for _ in range(SAMPLES):
            eps = [torch.randn(p.shape, generator=generator, dtype=dtype) for p in model.parameters()]
            with optimizer.sampled_params(train=True, noise=eps):
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
            grads.append(gradients(reference.sample(eps)))
            draws.append(eps)
        optimizer.step()
        reference.step(grads, draws)
        deviation = max(deviation, max((p.detach() - mu).abs().max().item()
                                       for p, mu in zip(model.parameters(), reference.mu)))
    return deviation, reference


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("fused", [True, False])
def test_ivon_matches_the_plain_update(dtype, fused):
    options = dict(lr=0.05, ess=64.0, hess_init=0.5, beta1=0.9, beta2=0.99, weight_decay=1e-3)
    deviation, reference = run_pair(lambda p: blr.IVON(p, mc_samples=SAMPLES, **options),
                                    lambda m: ReferenceIVON(m, **options), dtype, fused)
    assert deviation <= BOUND[dtype]
    # The run moved: the comparison is not of two untouched copies.
    assert reference.t == STEPS and max(m.abs().max().item() for m in reference.m) > 1e-3


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("fused", [True, False])
def test_vadam_matches_the_plain_update(dtype, fused):
    options = dict(lr=0.01, ess=64.0, beta1=0.9, beta2=0.999, prior_precision=1.0, prec_init=2.0)
    deviation, reference = run_pair(lambda p: blr.Vadam(p, mc_samples=SAMPLES, **options),
                                    lambda m: ReferenceVadam(m, **options), dtype, fused)
    assert deviation <= BOUND[dtype]
    assert reference.t == STEPS


def test_a_wrong_coefficient_is_caught():
    # The same comparison with the reference's β2 off by 1e-3 fails by far more than the bound.
    options = dict(lr=0.05, ess=64.0, hess_init=0.5, beta1=0.9, weight_decay=1e-3)
    deviation, _ = run_pair(lambda p: blr.IVON(p, mc_samples=SAMPLES, beta2=0.99, **options),
                            lambda m: ReferenceIVON(m, beta2=0.989, **options), torch.float64, True)
    assert deviation > 1e3 * BOUND[torch.float64]
