"""Recipes: the published settings of a kind of task, as keyword arguments (docs/torch.md, Recipes).

The table is the C++ library's (``blr optimizers`` prints the same); every entry names its source::

    kw = blr.recipe("image-small", model=model, n_train=len(train_set))
    optimizer = blr.IVON(**kw)                     # params, lr, ess, hess_init, beta2, ...
    kw.schedule, kw.warmup_share, kw.grad_clip     # what the training loop should do

Keywords given to ``blr.recipe`` after the name override the recipe's, as flags do on the command
line.
"""

from . import _blr


class Recipe(dict):
    """The keyword arguments of one optimizer under a recipe, with the recipe's training settings
    as attributes: ``name``, ``optimizer``, ``schedule`` (constant, cosine or warmup-cosine),
    ``warmup_share`` (the warm-up as a share of the run's epochs), ``grad_clip`` (the global
    gradient-norm clip, 0 = none) and ``source``."""

    name = optimizer = schedule = source = ""
    warmup_share = grad_clip = 0.0


def _torch_keywords(optimizer, options):
    # LibTorch's AdamW and SGD are torch.optim's in Python: their keywords (betas as a pair).
    options = dict(options)
    if optimizer == "adamw":
        options["betas"] = (options.pop("beta1"), options.pop("beta2"))
    return options


def recipes():
    """Every recipe: name, summary, schedule, warm-up share, gradient clip, and per optimizer its
    options and their source."""
    return _blr.recipes()


def recipe(name, optimizer="ivon", model=None, n_train=None, **overrides):
    """The keyword arguments of ``optimizer`` (a registry name: ivon, vogn, ...; adamw and sgd give
    ``torch.optim.AdamW``'s and ``torch.optim.SGD``'s keywords) under recipe ``name``: the recipe's options, ``ess=n_train`` when the optimizer takes an ``ess`` the recipe
    does not fix, ``params=model.parameters()`` when ``model`` is given, then ``overrides``.
    A name or optimizer the recipe does not cover is a ``blr.Error``."""
    table = {r["name"]: r for r in _blr.recipes()}
    if name not in table:
        raise _blr.Error(f"Unknown recipe '{name}'; the recipes are {', '.join(table)}.")
    entry = table[name]
    covered = {o["optimizer"]: o for o in entry["optimizers"]}
    if optimizer not in covered:
        raise _blr.Error(f"Recipe '{name}' has no settings for {optimizer}; it covers "
                         f"{', '.join(covered)}.")
    python_entries = {e["name"]: e for e in _blr.optimizers()}
    keys = {o["key"] for o in python_entries[optimizer]["options"]} if optimizer in python_entries else set()
    out = Recipe(_torch_keywords(optimizer, covered[optimizer]["options"]))
    if n_train is not None and "ess" in keys and "ess" not in out:
        if int(n_train) != n_train or n_train < 1:
            raise _blr.Error(f"blr.recipe: n_train must be a positive whole number; got {n_train}.")
        out["ess"] = float(n_train)
    if model is not None:
        out["params"] = model.parameters()
    out.update(overrides)
    if optimizer in python_entries:  # blr's own: the option table checks them
        _blr.check_options(optimizer, {k: v for k, v in out.items() if k != "params"})
    out.name, out.optimizer, out.source = name, optimizer, covered[optimizer]["source"]
    out.schedule, out.warmup_share, out.grad_clip = (entry["schedule"], entry["warmup_share"],
                                                     entry["grad_clip"])
    return out
