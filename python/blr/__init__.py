"""blr: the Bayesian learning rule (Khan & Rue, JMLR 2023) for PyTorch.

The optimizers are the C++ library's (fused CPU passes, the same equations as the `blr` command),
each a ``torch.optim.Optimizer`` with the keyword names of its option table::

    import blr
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=len(train_set))
    for x, y in loader:
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

Published settings per kind of task: ``blr.recipe("image-small", model=model, n_train=N)``
gives the keyword arguments (``blr.recipes()`` lists them). Also here: the posterior predictive and the calibration metrics (``blr.predictive``,
``blr.metrics``), the Table-1 checks (``blr.table1``) and the core's Bayesian inference on NumPy
arrays (``blr.infer``). Every error of the library is a ``blr.Error`` (a ``ValueError``) with a
one-sentence message. See docs/python.md.
"""

import torch  # (loads LibTorch before the extension that links it)

from . import _torch_check
_torch_check.check(torch)  # another torch than the build's: one sentence, not undefined symbols

from . import _blr
from ._build_info import TORCH_CUDA as __torch_cuda__, TORCH_VERSION as __torch_version__
from ._blr import Error
from .optim import Optimizer, optimizer_classes
from .predictive import (ensemble, entropy_auroc, fit_temperature, metrics, ood_metrics,
                         predictive, reliability_bins, scale_temperature)
from .plots import reliability_diagram
from .recipes import Recipe, recipe, recipes
from .laplace import Laplace
from .sensitivity import sensitivity
from .merge import merge, merge_curvature
from .squared_gradients import per_example_squared_gradients
from . import infer
from ._blr import data

globals().update(optimizer_classes())


def table1(layer="all"):
    """Runs every Table-1 reduction check of Khan & Rue (2023); a list of dicts, one per row,
    with the largest deviation, its tolerance and whether it passed (``layer``: all, core, torch)."""
    return _blr.table1(layer)


def optimizers():
    """Every optimizer Python can build, with its option table (key, type, default, range, help)."""
    return _blr.optimizers()


__all__ = ["Error", "Optimizer", "predictive", "metrics", "reliability_bins", "entropy_auroc",
           "ood_metrics", "reliability_diagram",
           "fit_temperature", "scale_temperature", "ensemble",
           "table1", "optimizers", "infer", "data", "recipe", "recipes", "Recipe", "Laplace", "sensitivity", "merge", "merge_curvature"] + sorted(optimizer_classes())
