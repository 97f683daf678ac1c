#!/usr/bin/python3
"""Speed of blr's Python optimizers, measured in one Python process (issue 13's goals):

1. A full IVON cycle (sample, restore with a given gradient, update) on 10^7 float32 parameters:
   blr.IVON against the same algorithm written in plain PyTorch the way the reference `ivon`
   package computes it (flattened parameter vectors, torch.randn_like noise, out-of-place
   accumulators; ReferencePackageIVON below), and against torch.optim.AdamW's step on the same
   parameters. Goal: ≥ 10× faster than the former, ≤ 1.0× the latter.
2. A Fashion-MNIST MLP epoch (784-500-300-10, ReLU, batch 128, the blr CLI's MLP) with blr.IVON
   against torch.optim.AdamW, same data order. Goal: ≤ 1.05×.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_ivon.py [--repeats R] [--threads T]
Prints one line per measurement and the ratios (medians over R repeats).
"""

import argparse
import statistics
import sys
import time

import torch

import blr


REFERENCE = "PyTorch IVON (the reference package's operations) cycle"


class ReferencePackageIVON:
    """The reference package's operations for one param group (ivon-opt 0.1.3): parameters are
    gathered into one flat vector to sample and restore, gradients are concatenated, and the
    update is written with out-of-place tensor expressions."""

    def __init__(self, params, lr, ess, hess_init=1.0, beta1=0.9, beta2=0.99999, weight_decay=1e-4):
        self.params = list(params)
        numel = sum(p.numel() for p in self.params)
        like = self.params[0]
        self.hess = torch.full((numel,), hess_init, dtype=like.dtype)
        self.momentum = torch.zeros(numel, dtype=like.dtype)
        self.lr, self.ess, self.h0 = lr, ess, hess_init
        self.beta1, self.beta2, self.wd = beta1, beta2, weight_decay
        self.t = 0

    def sample(self):
        self.mean = torch.nn.utils.parameters_to_vector(self.params)
        self.noise = torch.randn_like(self.mean) / torch.sqrt(self.ess * (self.hess + self.wd))
        torch.nn.utils.vector_to_parameters(self.mean + self.noise, self.params)

    def restore(self):
        torch.nn.utils.vector_to_parameters(self.mean, self.params)
        grad = torch.cat([p.grad.flatten() for p in self.params])
        self.avg_grad = grad
        self.avg_nxg = self.noise * grad

    def step(self):
        self.t += 1
        self.momentum = self.beta1 * self.momentum + (1 - self.beta1) * self.avg_grad
        hhat = self.avg_nxg * self.ess * (self.hess + self.wd)
        rho = 1 - self.beta2
        self.hess = self.beta2 * self.hess + rho * hhat \
            + 0.5 * rho * rho * (self.hess - hhat) ** 2 / (self.hess + self.wd)
        mhat = self.momentum / (1 - self.beta1 ** self.t)
        mean = torch.nn.utils.parameters_to_vector(self.params)
        mean = mean - self.lr * (self.h0 + self.wd) * (mhat + self.wd * mean) / (self.hess + self.wd)
        torch.nn.utils.vector_to_parameters(mean, self.params)


def median_time(function, repeats, warmup=1):
    for _ in range(warmup):
        function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cycle_benchmark(numel, repeats, cycles):
    torch.manual_seed(0)
    grads = torch.randn(numel) * 1e-3

    def params():
        p = torch.nn.Parameter(torch.randn(numel) * 0.1)
        p.grad = grads.clone()
        return [p]

    p_blr = params()
    ivon = blr.IVON(p_blr, lr=0.1, ess=1e6)

    def blr_cycle():
        for _ in range(cycles):
            with ivon.sampled_params(train=True):
                pass  # the gradient is already in p.grad
            ivon.step()

    p_ref = params()
    reference = ReferencePackageIVON(p_ref, lr=0.1, ess=1e6)

    def reference_cycle():
        for _ in range(cycles):
            reference.sample()
            reference.restore()
            reference.step()

    p_adamw = params()
    adamw = torch.optim.AdamW(p_adamw, lr=1e-3)

    def adamw_cycle():
        for _ in range(cycles):
            adamw.step()

    return {"blr.IVON cycle": median_time(blr_cycle, repeats) / cycles,
            REFERENCE: median_time(reference_cycle, repeats) / cycles,
            "torch.optim.AdamW step": median_time(adamw_cycle, repeats) / cycles}


def epoch_benchmark(repeats):
    data = blr.data.fashion_mnist()
    x, y = data["train"]
    batches = torch.randperm(len(x), generator=torch.Generator().manual_seed(0)).split(128)

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 500), torch.nn.ReLU(),
                                   torch.nn.Linear(500, 300), torch.nn.ReLU(), torch.nn.Linear(300, 10))

    def run(make_optimizer, variational):
        net = model()
        optimizer = make_optimizer(net.parameters())

        def epoch():
            for batch in batches:
                if variational:
                    with optimizer.sampled_params(train=True):
                        optimizer.zero_grad()
                        torch.nn.functional.cross_entropy(net(x[batch]), y[batch]).backward()
                else:
                    optimizer.zero_grad()
                    torch.nn.functional.cross_entropy(net(x[batch]), y[batch]).backward()
                optimizer.step()
        return median_time(epoch, repeats, warmup=0)

    adamw = run(lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=1e-4), False)
    ivon = run(lambda p: blr.IVON(p, lr=0.1, ess=len(x)), True)
    adamw_again = run(lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=1e-4), False)
    return {"AdamW epoch": statistics.median([adamw, adamw_again]), "blr.IVON epoch": ivon}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    parser.add_argument("--numel", type=int, default=10_000_000)
    parser.add_argument("--skip-epoch", action="store_true")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.repeats} repeats (medians)")
    cycle = cycle_benchmark(args.numel, args.repeats, cycles=3)
    for name, seconds in cycle.items():
        print(f"{name:55s} {seconds * 1e3:9.2f} ms")
    blr_cycle = cycle["blr.IVON cycle"]
    print(f"speed-up over PyTorch IVON: {cycle[REFERENCE] / blr_cycle:.1f}x (goal >= 10)")
    print(f"blr.IVON cycle / AdamW step: {blr_cycle / cycle['torch.optim.AdamW step']:.2f} (goal <= 1.0)")
    if not args.skip_epoch:
        epoch = epoch_benchmark(max(1, args.repeats // 2))
        for name, seconds in epoch.items():
            print(f"{name:55s} {seconds:9.2f} s")
        print(f"blr.IVON epoch / AdamW epoch: {epoch['blr.IVON epoch'] / epoch['AdamW epoch']:.2f} (goal <= 1.05)")


if __name__ == "__main__":
    sys.exit(main())
