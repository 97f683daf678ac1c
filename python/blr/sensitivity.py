"""Sensitivity of a trained classifier to each training example, and leave-one-out estimates
without refitting: the memory-perturbation equation (Nickl, Xu, Tailor, Möllenhoff & Khan,
NeurIPS 2023) under a diagonal Gaussian posterior N(μ, diag(σ²)), μ the model's weights:

    e_i = softmax(f_i) − onehot(y_i)       prediction error          (N×K)
    v_ik = Σ_j σ_j² (∂f_ik/∂θ_j)²          prediction variance       (N×K)
    d_i = v_i ⊙ e_i                        deviation, f_i without i − f_i
    s_i = Σ_k |e_ik p_ik (1 − p_ik) v_ik|  score

and the leave-one-out NLL and accuracy of f_i + d_i (include/blr/torch/sensitivity.hpp has the
derivation). It runs ``blr sensitivity --checkpoint``'s C++ function on a TorchScript copy of the
model, so the numbers are the command's. σ² comes from

* a blr optimizer with a Gaussian posterior (IVON, VOGN, OGN, Vadam): its ``posterior_variance()``;
* a fitted ``blr.Laplace``: 1/(N·Ĝ + δ) on its subset, 0 elsewhere;
* ``torch.optim.AdamW``: 1/(N·√v + N·weight_decay) from its second moment v (N = ``n_train``,
  by default the number of examples given), the formula of the command, in the library once.
"""

import torch

from . import _blr
from ._blr import Error
from ._torchscript import examples, script_archive
from .laplace import Laplace


def _variance_by_parameter(posterior, parameters, n_train):
    """σ² for each of ``parameters`` (the model's, in order) from ``posterior``."""
    if isinstance(posterior, Laplace):
        variance = posterior.posterior_variance
        if len(variance) != len(parameters) or any(
                v.shape != p.shape for v, p in zip(variance, parameters)):
            raise Error("blr.sensitivity: this Laplace posterior was fitted on another model.")
        return variance, "Laplace posterior variance"
    groups = getattr(posterior, "param_groups", None)
    if groups is None:
        raise Error("blr.sensitivity: the posterior must be a blr optimizer with a Gaussian "
                    "posterior (IVON, VOGN, OGN, Vadam), a fitted blr.Laplace or torch.optim.AdamW; "
                    f"got {type(posterior).__name__}.")
    owned = [p for group in groups for p in group["params"]]
    if isinstance(posterior, torch.optim.AdamW):
        by_id = {}
        for group in groups:
            for p in group["params"]:
                state = posterior.state.get(p, {})
                if "exp_avg_sq" not in state:
                    raise Error("blr.sensitivity: this AdamW optimizer holds no second moment for "
                                "some parameter (it took no step); train it first.")
                by_id[id(p)] = _blr.adamw_posterior_variance(state["exp_avg_sq"], int(n_train),
                                                            float(group["weight_decay"]))
        source = "AdamW second moment"
    elif hasattr(posterior, "posterior_variance"):
        by_id = {id(p): v for p, v in zip(owned, posterior.posterior_variance())}
        source = f"{type(posterior).__name__} posterior variance"
    else:
        raise Error(f"blr.sensitivity: {type(posterior).__name__} holds no posterior variance; use "
                    "a blr optimizer with a Gaussian posterior, torch.optim.AdamW, or fit a "
                    "blr.Laplace first.")
    missing = [k for k, p in enumerate(parameters) if id(p) not in by_id]
    if missing:
        raise Error(f"blr.sensitivity: parameter {missing[0]} of the model is not in the "
                    "optimizer; give the optimizer that trained this model.")
    return [by_id[id(p)] for p in parameters], source


def sensitivity(model, posterior, data, n_train=None, batch_size=1000, example_input=None):
    """The memory-perturbation quantities of every example of ``data`` (the training data: an
    (x, y) pair or a DataLoader) under ``posterior``'s σ² (see the module's text). Returns a dict of
    tensors ``logits``, ``error``, ``variance``, ``deviation`` (N×K), ``score`` (N),
    ``class_scores`` (K, scores summed per class: leave-one-class-out), the numbers ``loo_nll``,
    ``loo_accuracy``, ``train_nll``, ``train_accuracy``, and ``source`` (where σ² came from)."""
    archive, origin = script_archive(model, example_input, "blr.sensitivity")
    x, y = examples(data, "blr.sensitivity")
    parameters = list(model.parameters())
    if n_train is None:
        n_train = x.shape[0]
    variance, source = _variance_by_parameter(posterior, parameters, n_train)
    variance = [v.detach().to(device="cpu", dtype=p.dtype) for v, p in zip(variance, parameters)]
    out = dict(_blr.network_sensitivity(archive, origin, variance, x, y, int(batch_size)))
    out["source"] = source
    return out
