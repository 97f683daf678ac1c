"""Writes the TorchScript models of tests/torch/nn/script_module_test.cpp.

Usage: python3 script_models.py OUTPUT_DIR

Each model is written in plain PyTorch, scripted with torch.jit.script and saved as
OUTPUT_DIR/<name>.pt, the way users bring their architecture to LibTorch. Needs Debian's
python3-torch (the same LibTorch 1.13 as the C++ side).
"""
import math
import os
import sys

import torch
from torch import nn


class Attention(nn.Module):
    """Batch-first multi-head self-attention built from Linear layers."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q = self.q(x).view(b, t, h, d // h).transpose(1, 2)
        k = self.k(x).view(b, t, h, d // h).transpose(1, 2)
        v = self.v(x).view(b, t, h, d // h).transpose(1, 2)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // h), dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return self.out(y)


class Block(nn.Module):
    """Pre-norm transformer block: attention and a GELU MLP, each with a residual connection."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    """Token and learned positional embeddings, two blocks, an output layer tied to the tokens."""

    def __init__(self, vocabulary: int, width: int, length: int, heads: int):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.position = nn.Parameter(0.1 * torch.randn(1, length, width))
        self.blocks = nn.ModuleList([Block(width, heads) for _ in range(2)])
        self.norm = nn.LayerNorm(width)

    def forward(self, tokens):
        x = self.embedding(tokens) + self.position
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.embedding.weight.t()


class TemperedOutput(nn.Module):
    """A Linear divided by a learned temperature, which has no per-example formula."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.temperature = nn.Parameter(torch.ones(3))

    def forward(self, x):
        return self.layer(x) / self.temperature


def models():
    return {
        "linear": nn.Linear(5, 3),
        "sequential": nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.LayerNorm(6), nn.Linear(6, 3)),
        "conv1d": nn.Sequential(
            nn.Conv1d(2, 4, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(4, 4, 3, dilation=2, padding=2, groups=2), nn.Flatten(), nn.Linear(24, 3)),
        "conv2d": nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.Tanh(), nn.MaxPool2d(2),
            nn.Conv2d(4, 4, 2, groups=2), nn.Flatten(), nn.Linear(36, 3)),
        "embedding": nn.Sequential(nn.Embedding(9, 4), nn.Flatten(), nn.Linear(20, 3)),
        "transformer": TinyTransformer(vocabulary=11, width=8, length=5, heads=2),
        "tempered": TemperedOutput(),
    }


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    for name, model in models().items():
        torch.jit.script(model).save(os.path.join(out, name + ".pt"))


if __name__ == "__main__":
    main()
