"""Writes the TorchScript model of tests/consumer/ivon_any_model.cpp: a 4-16-2 tanh MLP written
in plain PyTorch and saved with torch.jit.script, as a user would. Usage: script_mlp.py OUT.pt"""
import sys

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


torch.manual_seed(0)
torch.jit.script(Mlp()).save(sys.argv[1])
