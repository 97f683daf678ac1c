"""Plain PyTorch re-implementations of IVON (ivon-opt 0.1.3's update, Shen et al. 2024) and
Vadam (Khan et al. 2018), written from the papers' equations (docs/torch.md, research notes) and
independent of blr: the parity tests compare blr's optimizers with them on identical noise, and
bench/python_ivon.py times the IVON one as the pure-PyTorch baseline.

Both keep μ in their own tensors and take the standard-normal draws ε from the caller, so that a
sample is θ = μ + σ⊙ε exactly as blr's noise hook makes it.
"""

import math

import torch


class ReferenceIVON:
    """IVON's step per coordinate (ρ = 1 − β2, 'price' estimator):
        m ← β1 m + (1 − β1) ḡ;   ĥ = λ(h + δ) mean_s((θ_s − μ) ⊙ g_s)
        h ← β2 h + ρ ĥ + ρ²/2 (h − ĥ)²/(h + δ)
        μ ← μ − α(h0 + δ) clip((m/(1 − β1^t) + δ μ)/(h + δ), −c, c)
    with σ = 1/sqrt(λ(h + δ)) from the h before the step."""

    def __init__(self, means, lr, ess, hess_init=1.0, beta1=0.9, beta2=0.99999,
                 weight_decay=1e-4, clip_radius=math.inf):
        self.mu = [m.detach().clone() for m in means]
        self.h = [torch.full_like(m, hess_init) for m in self.mu]
        self.m = [torch.zeros_like(m) for m in self.mu]
        self.lr, self.ess, self.h0 = lr, ess, hess_init
        self.beta1, self.beta2, self.wd, self.clip = beta1, beta2, weight_decay, clip_radius
        self.t = 0

    def sigma(self):
        return [1.0 / torch.sqrt(self.ess * (h + self.wd)) for h in self.h]

    def sample(self, eps):
        return [mu + s * e for mu, s, e in zip(self.mu, self.sigma(), eps)]

    def step(self, grads_per_sample, eps_per_sample):
        """grads_per_sample[s][i]: gradient at sample s of parameter i; eps likewise."""
        self.t += 1
        sig = self.sigma()
        samples = len(grads_per_sample)
        for i in range(len(self.mu)):
            g = sum(gs[i] for gs in grads_per_sample) / samples
            x = sum(es[i] * sig[i] * gs[i] for gs, es in zip(grads_per_sample, eps_per_sample)) / samples
            self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * g
            h = self.h[i]
            hhat = self.ess * (h + self.wd) * x
            rho = 1 - self.beta2
            self.h[i] = self.beta2 * h + rho * hhat + 0.5 * rho * rho * (h - hhat) ** 2 / (h + self.wd)
            mhat = self.m[i] / (1 - self.beta1 ** self.t)
            direction = (mhat + self.wd * self.mu[i]) / (self.h[i] + self.wd)
            lr = self.lr * (self.h0 + self.wd)
            self.mu[i] = self.mu[i] - lr * direction.clamp(-self.clip, self.clip)


class ReferenceVadam:
    """Vadam's step per coordinate (N = ess, λ̃ = λp/N):
        m ← β1 m + (1 − β1)(ḡ + λ̃ μ);   s ← β2 s + (1 − β2) mean_s(g_s²)
        μ ← μ − α (m/(1 − β1^t)) / (sqrt(s/(1 − β2^t)) + λ̃)
    with σ = 1/sqrt(N s + λp) from the s before the step, s₀ = (prec_init − λp)/N."""

    def __init__(self, means, lr, ess, beta1=0.9, beta2=0.999, prior_precision=1.0, prec_init=1.0):
        self.mu = [m.detach().clone() for m in means]
        self.s = [torch.full_like(m, (prec_init - prior_precision) / ess) for m in self.mu]
        self.m = [torch.zeros_like(m) for m in self.mu]
        self.lr, self.n, self.lp = lr, ess, prior_precision
        self.beta1, self.beta2 = beta1, beta2
        self.t = 0

    def sigma(self):
        return [1.0 / torch.sqrt(self.n * s + self.lp) for s in self.s]

    def sample(self, eps):
        return [mu + s * e for mu, s, e in zip(self.mu, self.sigma(), eps)]

    def step(self, grads_per_sample, eps_per_sample):
        del eps_per_sample
        self.t += 1
        samples = len(grads_per_sample)
        decay = self.lp / self.n
        for i in range(len(self.mu)):
            g = sum(gs[i] for gs in grads_per_sample) / samples
            q = sum(gs[i] * gs[i] for gs in grads_per_sample) / samples
            self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * (g + decay * self.mu[i])
            self.s[i] = self.beta2 * self.s[i] + (1 - self.beta2) * q
            mhat = self.m[i] / (1 - self.beta1 ** self.t)
            shat = self.s[i] / (1 - self.beta2 ** self.t)
            self.mu[i] = self.mu[i] - self.lr * mhat / (torch.sqrt(shat) + decay)
