"""Per-example squared gradients for VOGN and OGN from Python (issue 30, item 2).

VOGN and OGN update their curvature with the mean over the minibatch of each example's squared
gradient, per parameter (Osawa et al. 2019, eq. 6; Khan & Rue 2023, Table 1 "VOGN"):

    s_j = (1/B) Σ_i (∂ℓ_i/∂θ_j)²,   ℓ_i = loss(model(x_i), y_i)  (one example's loss)

The C++ trainer reads them off the LibTorch autograd graph; from Python they are computed here with
PyTorch's function transforms: ``vmap`` over the examples of ``grad`` of one example's loss,
through a functional call of the model with its current parameters (inside ``sampled_params`` the
posterior sample θ). ``torch.func`` where PyTorch has it (2.x), ``functorch`` otherwise (1.13).
A model whose forward mixes examples (batch norm in training mode) has no per-example gradient:
that is one ``blr.Error``.
"""

import torch

from ._blr import Error


def _transforms():
    """(vmap, grad, call(model, params, buffers, x)) of this PyTorch."""
    try:
        from torch.func import functional_call, grad, vmap  # PyTorch ≥ 2.0

        def call(model, params, buffers, x):
            return functional_call(model, (params, buffers), (x,))
        return vmap, grad, call
    except ImportError:
        from functorch import grad, vmap  # PyTorch 1.13
        from torch.nn.utils import stateless

        def call(model, params, buffers, x):
            return stateless.functional_call(model, {**params, **buffers}, (x,))
        return vmap, grad, call


def per_example_squared_gradients(model, loss, x, y):
    """The mean over the batch of each example's squared gradient of ``loss(model(x_i), y_i)``,
    one tensor per parameter of ``model`` that requires a gradient (``model.parameters()``
    order), for ``optimizer.add_squared_gradients`` of VOGN and OGN.

    ``loss(outputs, targets)`` takes a batch of one example (e.g.
    ``torch.nn.functional.cross_entropy``); ``x`` and ``y`` hold the minibatch (first dimension:
    the examples)."""
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        raise Error("per_example_squared_gradients takes the minibatch as tensors x and y.")
    if x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise Error(f"per_example_squared_gradients needs x and y with the same number of examples "
                    f"(at least one); got {x.shape[0]} and {y.shape[0]}.")
    vmap, grad, call = _transforms()
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    if not names:
        raise Error("The model has no parameter that requires a gradient.")
    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    frozen = {n: p.detach() for n, p in model.named_parameters() if not p.requires_grad}
    buffers = {**frozen, **{n: b.detach() for n, b in model.named_buffers()}}

    def one(p, xi, yi):
        return loss(call(model, p, buffers, xi.unsqueeze(0)), yi.unsqueeze(0))

    try:
        with torch.enable_grad():
            grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
    except (RuntimeError, ValueError) as e:  # batch norm in training mode, in-place ops, ...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Error(f"The model has no per-example gradients that vmap can compute ({first}); a "
                    "model that mixes the examples of a batch (batch norm in training mode) has "
                    "none: use IVON, or the C++ trainer's VOGN (blr train).") from None
    return [grads[n].pow(2).mean(0) for n in names]
