"""Merging fine-tuned networks into their base: uncertainty-based gradient matching (Daheim et al.,
ICLR 2024), task arithmetic (Ilharco et al., ICLR 2023) or averaging, per parameter coordinate

    θ = (1 − Σ_t w_t) θ₀ + Σ_t w_t θ_t,
    w_t = α (C_t + C₀ + δ₀) / (α Σ_s C_s + C₀ + δ₀)   |   α   |   1/T,

C the precision-scaled curvatures (include/blr/torch/merge.hpp has the formula and its sources; it
is the one ``blr merge`` uses, evaluated in C++ per tensor). ``merge_curvature`` gives C as the
command takes it: a blr optimizer's posterior precision (IVON, VOGN, OGN, Vadam), a blr.Laplace
posterior's 1/σ² (all weights), or N·diag GGN of the cross-entropy over the model's training data
for a point estimate (AdamW, SGD, ...).
"""

import torch

from . import _blr
from ._blr import Error
from .laplace import Laplace

_METHODS = ("uncertainty", "average", "task-arithmetic")


def _state(model, who):
    if isinstance(model, torch.nn.Module):
        return {name: p.detach() for name, p in model.named_parameters()}, model.state_dict()
    if isinstance(model, dict) and all(isinstance(v, torch.Tensor) for v in model.values()):
        floating = {k: v for k, v in model.items() if v.is_floating_point()}
        return floating, model
    raise Error(f"blr.merge: {who} must be a torch.nn.Module or a state dict of tensors; got "
                f"{type(model).__name__}.")


def merge_curvature(model, posterior=None, data=None, batch_size=500):
    """C per parameter name of ``model``: ``posterior`` a blr optimizer with a Gaussian posterior
    (its posterior precision) or a fitted blr.Laplace over all weights (1/σ²); or ``posterior``
    None with ``data`` (the model's training data, an (x, y) pair or a DataLoader): N·diag GGN."""
    names = [name for name, _ in model.named_parameters()]
    if posterior is None:
        if data is None:
            raise Error("blr.merge_curvature: a point estimate needs its training data (data=) for "
                        "the N·diag GGN curvature.")
        la = Laplace(model, structure="diag", subset="all", curvature="ggn").fit(data, batch_size)
        return {name: g * la.n_data for name, g in zip(names, la._impl.curvature())}
    if isinstance(posterior, Laplace):
        if posterior.subset != "all":
            raise Error("blr.merge_curvature: the Laplace posterior covers only the last layer; "
                        "merging needs the curvature of every weight (subset='all').")
        return {name: v.reciprocal() for name, v in zip(names, posterior.posterior_variance)}
    if hasattr(posterior, "posterior_precision") and hasattr(posterior, "param_groups"):
        owned = [p for group in posterior.param_groups for p in group["params"]]
        by_id = {id(p): c for p, c in zip(owned, posterior.posterior_precision())}
        out = {}
        for name, p in model.named_parameters():
            if id(p) not in by_id:
                raise Error(f"blr.merge_curvature: parameter '{name}' of the model is not in the "
                            "optimizer; give the optimizer that trained this model.")
            out[name] = by_id[id(p)]
        return out
    raise Error(f"blr.merge_curvature: {type(posterior).__name__} holds no curvature; give a blr "
                "optimizer with a Gaussian posterior, a fitted blr.Laplace, or data= for a point "
                "estimate.")


def merge(base, models, method="uncertainty", curvatures=None, base_curvature=None, scale=1.0,
          delta0=1e-12):
    """The merged state dict of ``base`` and the fine-tuned ``models`` (modules or state dicts
    with the base's keys). ``method``: "uncertainty" (needs ``base_curvature`` and one curvature per
    model, dicts name → C as ``merge_curvature`` gives), "task-arithmetic" or "average". The
    parameters (every floating-point entry of a state dict) are merged; other entries are the
    base's."""
    if method not in _METHODS:
        raise Error(f"blr.merge: method must be one of {', '.join(_METHODS)}; got '{method}'.")
    if method == "average" and scale != 1.0:
        raise Error("blr.merge: scale applies to uncertainty and task-arithmetic merging, not to "
                    "average.")
    if method != "uncertainty" and delta0 != 1e-12:
        raise Error(f"blr.merge: delta0 applies to uncertainty merging, not to {method}.")
    if not isinstance(models, (list, tuple)) or not models:
        raise Error("blr.merge: give the fine-tuned models as a non-empty list.")
    merged_names, base_state = _state(base, "the base")
    tasks = [_state(m, f"model {t}")[1] for t, m in enumerate(models)]
    uncertainty = method == "uncertainty"
    if uncertainty:
        if base_curvature is None or curvatures is None or len(curvatures) != len(models):
            raise Error("blr.merge: uncertainty merging needs base_curvature and one curvature per "
                        "model (blr.merge_curvature gives them).")
    out = dict(base_state)
    for name, theta0 in merged_names.items():
        for t, task in enumerate(tasks):
            if name not in task:
                raise Error(f"blr.merge: model {t} has no '{name}'; merge models of the base's "
                            "architecture.")
        thetas = [task[name].detach() for task in tasks]
        if uncertainty:
            missing = [who for who, c in [("the base", base_curvature)] +
                       [(f"model {t}", c) for t, c in enumerate(curvatures)] if name not in c]
            if missing:
                raise Error(f"blr.merge: the curvature of {missing[0]} has no '{name}'.")
            merged = _blr.merge_tensor(theta0, thetas, base_curvature[name].detach(),
                                       [c[name].detach() for c in curvatures], method,
                                       float(scale), float(delta0))
        else:
            merged = _blr.merge_tensor(theta0, thetas, None, None, method, float(scale),
                                       float(delta0))
        out[name] = merged
    return out
