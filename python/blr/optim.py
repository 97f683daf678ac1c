"""The registry's optimizers as ``torch.optim.Optimizer`` subclasses.

One class per entry of the C++ registry (``blr.IVON``, ``blr.VOGN``, ``blr.Vadam``, ...), generated
from its option table: keyword names, defaults and checks are the table's, so nothing is written
twice. The C++ optimizer holds the Python parameters themselves (no copies); ``param_groups`` stay
Python dicts that schedulers and users edit, and the edits reach the C++ groups before each
sample and step. The sampling API is the Python ``ivon`` package's::

    for _ in range(train_samples):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()      # several backward calls accumulate, as usual
    optimizer.step()

``sampled_params(train=True)`` puts θ = μ + σ⊙ε into the parameters and, on leaving the block,
restores μ and collects the gradient at θ as one Monte Carlo sample; ``step()`` updates from the
samples collected. With ``train=False`` nothing is collected (prediction). An exception inside the
block restores μ and discards the sample.

The C++ optimizer keeps state per parameter, so what it assumes is checked at every entry: a
parameter appears once in an optimizer (construction and ``add_param_group``), param groups are
added only between steps, the ``params`` lists of ``param_groups`` are not edited afterwards (each
sample and step compares them with the parameters the C++ groups hold and refuses an edit: new
parameters go in with ``add_param_group``), and a parameter keeps the size, dtype and device its
state was made for (checked in C++, python/src/optimizers.cpp). A refusal is a ``blr.Error``.

For ivon users (docs/python.md, "From ivon.IVON to blr.IVON"): ``blr.IVON`` takes ivon.IVON's
positional order; ``param_groups[i]["hess"]`` and ``["momentum"]`` of the Gaussian mean-field
optimizers are views of the C++ state in ivon's layout (one flat tensor per group; assigning sets
the state); ``load_state_dict`` also reads ivon's state dicts (those tensors in param_groups).
"""

import contextlib
import inspect
import re
import weakref

import torch

from . import _blr
from ._arguments import call


def _class_name(owner):
    # "IVON" -> IVON, "bSAM" -> BSAM, "MC dropout" -> MCDropout, "AdaBayes-FP" -> AdaBayesFP
    words = re.split(r"[^0-9A-Za-z]+", owner)
    return "".join(w[:1].upper() + w[1:] for w in words if w)


class Optimizer(torch.optim.Optimizer):
    """Base of the generated optimizer classes (do not instantiate it directly)."""

    _entry = None  # the registry entry (dict from _blr.optimizers())

    def __init__(self, params, *args, **options):
        entry = self._entry
        if entry is None:
            raise TypeError("blr.Optimizer is abstract: use one of its subclasses (blr.IVON, ...).")
        options = self._positional_options(args, options)
        _blr.check_options(entry["name"], options)  # unknown keys and bad values, one sentence
        self._table = {o["key"]: o for o in entry["options"]}
        self._given = set(options)
        defaults = {key: o["default"] for key, o in self._table.items()}
        defaults.update(options)
        self._impl = None
        self._params = []  # per group, the parameters the C++ group holds (in its order)
        super().__init__(params, defaults)
        self._impl = _blr.Optimizer(entry["name"], [g["params"] for g in self.param_groups],
                                    [self._group_values(g) for g in self.param_groups],
                                    {k: defaults[k] for k in self._given})
        self._synced = [self._snapshot(g) for g in self.param_groups]
        self._processes = None  # sync=True: (rank, world size) of torch.distributed
        if self._sync_processes:
            self._processes = _distributed_processes(type(self).__name__)
            self._impl.set_noise_shard(*self._processes)

    # ---- options -------------------------------------------------------------------------------
    @classmethod
    def _positional_order(cls):
        """The options that may be given by position after params, in order: the reference
        package's order where blr has one (ivon.IVON), none otherwise."""
        return _POSITIONAL.get(cls._entry["name"], ())

    def _positional_options(self, args, options):
        order = self._positional_order()
        name = f"blr.{type(self).__name__}"
        if len(args) > len(order):
            takes = (f"at most {len(order)} after params ({', '.join(order)})" if order
                     else "only params by position (its options are keywords)")
            plural = "s" if len(args) > 1 else ""
            raise _blr.Error(f"{name}() takes {takes}; got {len(args)} positional "
                             f"argument{plural} after params.")
        options = dict(options)
        for key, value in zip(order, args):
            if key in options:
                raise _blr.Error(f"{name}() got the option '{key}' twice (by position and by "
                                 "keyword).")
            options[key] = value
        self._sync_processes = bool(options.pop("sync", False)) if "sync" in order else False
        return options

    def _group_values(self, group):
        # Values the user gave (in the constructor or the group) or changed since: what differs
        # from the table's default, plus every given key. A required option left at its
        # placeholder is not passed, so the library says that it is needed.
        values = {}
        for key, info in self._table.items():
            value = group[key]
            if key in self._given or value != info["default"] or key in group.get("_blr_given", ()):
                values[key] = value
        return values

    def _snapshot(self, group):
        return {key: group[key] for key in self._table}

    def _sync(self):
        """Passes edits of param_groups (schedulers, users) to the C++ groups."""
        self._check_params()
        for index, group in enumerate(self.param_groups):
            snapshot = self._snapshot(group)
            if snapshot != self._synced[index]:
                self._impl.set_group_options(index, self._group_values(group))
                self._synced[index] = snapshot

    def _owner(self):
        return self._entry["owner"]

    def _check_params(self):
        """Refuses edits of param_groups' params lists (and groups added or removed other than by
        add_param_group): the C++ groups hold the parameters they were given."""
        if len(self.param_groups) != len(self._params):
            raise _blr.Error(
                f"{self._owner()} holds {len(self._params)} param groups but param_groups has "
                f"{len(self.param_groups)}: param groups are added with add_param_group() and "
                "cannot be removed.")
        for index, (group, held) in enumerate(zip(self.param_groups, self._params)):
            params = group["params"]
            if isinstance(params, list) and len(params) == len(held) and all(
                    a is b for a, b in zip(params, held)):
                continue
            if not isinstance(params, list):
                change = f"it is now a {type(params).__name__}, not a list"
            elif len(params) != len(held):
                change = f"it has {len(params)} parameters instead of {len(held)}"
            else:
                k = next(k for k, (a, b) in enumerate(zip(params, held)) if a is not b)
                change = f"parameter {k} was replaced by another tensor"
            raise _blr.Error(
                f"The params list of param group {index} was edited after the group joined "
                f"{self._owner()} ({change}); blr optimizers keep state per parameter and do not "
                "follow such edits (refused, not ignored): restore the list, add new parameters "
                "with add_param_group(), or build a new optimizer.")

    @staticmethod
    def _param_list(params):
        # As torch.optim.Optimizer.add_param_group reads "params" (one tensor or an ordered
        # collection; torch refuses sets itself).
        if isinstance(params, torch.Tensor):
            return [params]
        if isinstance(params, set):
            return params
        return list(params)

    def _check_duplicates(self, params):
        """A parameter may appear once in an optimizer: listed twice, it would get two states
        and two updates per step (torch.optim: "some parameters appear in more than one
        parameter group")."""
        new_group = len(self.param_groups)
        seen = {}
        for g, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                seen.setdefault(id(p), (g, i))
        for i, p in enumerate(params):
            if id(p) in seen:
                g, j = seen[id(p)]
                raise _blr.Error(
                    f"Parameter {i} of param group {new_group} is also parameter {j} of param "
                    f"group {g}: a parameter may appear only once in {self._owner()}, which keeps "
                    "one state per parameter (listed twice, it would be updated twice per step).")
            seen[id(p)] = (new_group, i)

    def add_param_group(self, param_group):
        if self._impl is not None and self._impl.sampled:
            raise _blr.Error(f"{self._owner()}: add_param_group() was called while the parameters "
                             "hold a sample (inside sampled_params()); add param groups between "
                             "steps.")
        if not isinstance(param_group, dict):
            raise _blr.Error(f"A param group is a dict with the key 'params'; got a "
                             f"{type(param_group).__name__}.")
        if "params" not in param_group:
            raise _blr.Error("A param group needs the key 'params' (its list of parameters).")
        if self._impl is not None:
            self._check_params()
        param_group["params"] = self._param_list(param_group["params"])
        if isinstance(param_group["params"], list):
            self._check_duplicates(param_group["params"])
        given = set(k for k in param_group if k != "params")
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        unknown = sorted(k for k in given if k not in self._table and k != "initial_lr")
        if unknown:
            self.param_groups.pop()
            _blr.check_options(self._entry["name"], {k: param_group[k] for k in unknown})
        group["_blr_given"] = tuple(sorted(given))
        group = self.param_groups[-1] = _Group(self, group)
        if self._impl is not None:
            try:
                self._impl.add_param_group(group["params"], self._group_values(group))
            except BaseException:
                self.param_groups.pop()  # a refused group leaves the optimizer as it was
                raise
            self._synced.append(self._snapshot(group))
        self._params.append(list(group["params"]))

    # ---- sampling and stepping -------------------------------------------------------------------
    @contextlib.contextmanager
    def sampled_params(self, train=False, noise=None):
        """Parameters hold a posterior sample θ = μ + σ⊙ε inside the block.

        ``train=True`` collects the gradient at θ when the block ends (one Monte Carlo sample for
        the next ``step()``); ``noise`` (a list of standard-normal tensors, one per parameter in
        param-group order) replaces the generator's draws: the test hook for comparing the
        update with another implementation on identical noise.
        """
        self._sync()
        call(self._impl.sample, f"blr.{type(self).__name__}.sampled_params", bool(train),
             None if noise is None else list(noise))
        try:
            yield
        except BaseException:
            self._impl.discard()
            raise
        self._impl.restore()

    @torch.no_grad()
    def step(self, closure=None):
        """One update from the samples collected since the last step. With a closure (which
        zeroes the gradients, runs forward and backward and returns the loss), first runs
        ``mc_samples`` samples, each calling it inside ``sampled_params(train=True)``, and
        returns the mean loss."""
        loss = None
        if closure is not None:
            if self._impl.variational:
                total = 0.0
                samples = self._impl.training_samples
                for _ in range(samples):
                    with self.sampled_params(train=True), torch.enable_grad():
                        total += float(closure())
                loss = total / samples
            else:
                with torch.enable_grad():
                    loss = closure()
        self._sync()
        if self._processes is not None:  # sync=True: the statistics of every process
            call(self._impl.reduce_statistics, f"blr.{type(self).__name__}.step", _all_reduce_sum,
                 *self._processes)
        self._impl.step()
        return loss

    # ---- the posterior -------------------------------------------------------------------------
    @property
    def has_posterior(self):
        """True when sampling draws from a posterior (false for point estimates and SAM)."""
        return self._impl.has_posterior

    @property
    def step_count(self):
        """Updates made so far (Gaussian mean-field optimizers)."""
        return self._impl.step_count

    def posterior_variance(self):
        """σ² of every parameter (param-group order)."""
        return self._impl.posterior_variance()

    def posterior_precision(self):
        """1/σ² of every parameter (Gaussian mean-field optimizers)."""
        return self._impl.posterior_precision()

    def curvature(self):
        """The optimizer's curvature estimate (IVON's h, VOGN's and Vadam's s)."""
        return self._impl.curvature()

    def posterior_diagnostics(self):
        """What the posterior has learned so far, as ``blr train --verbose`` reports it: quantiles
        of h and sigma, the share of h still within 1 % of h0 (and at h0*beta2^t), the share of
        steps at the clip radius (a dict; docs/torch.md "Choosing ess, h0, beta2, ...")."""
        self._sync()  # the groups' options as the user last set them (beta2, clip_radius)
        return self._impl.posterior_diagnostics()

    def momentum(self):
        """The gradient average of every parameter (Gaussian mean-field optimizers)."""
        return self._impl.momentum()

    def set_prior(self, means, precisions):
        """Replaces the prior N(0, 1/(ess·weight_decay)) by N(m₀, diag(1/(ess·p₀))) per coordinate
        (IVON): one mean and one precision tensor per parameter, param-group order."""
        call(self._impl.set_prior, f"blr.{type(self).__name__}.set_prior", list(means),
             list(precisions))

    def set_prior_from_posterior(self):
        """The current posterior becomes the prior (m₀ = μ, p₀ = h + δ): continual learning's
        "posterior of task t is the prior of task t + 1" (docs/posterior.md)."""
        self._impl.set_prior_from_posterior()

    def clear_prior(self):
        """Back to the options' prior N(0, 1/(ess·weight_decay))."""
        self._impl.clear_prior()

    def add_squared_gradients(self, squared):
        """VOGN/OGN: the mean over the minibatch of each example's squared gradient, one tensor
        per parameter, given inside ``sampled_params(train=True)`` after backward."""
        call(self._impl.add_squared_gradients, f"blr.{type(self).__name__}.add_squared_gradients",
             list(squared))

    def backward(self, loss, batch_size):
        """``loss.backward()`` for the minibatch's mean ``loss`` over ``batch_size`` examples, and
        the per-example curvature statistic the optimizer needs, read off the autograd graph by
        the C++ trainer's engine: K-FAC's Kronecker factors, VOGN/OGN's per-example squared
        gradients (then no ``add_squared_gradients`` is needed); for other optimizers a plain
        backward. Call it inside ``sampled_params(train=True)`` for K-FAC, VOGN and OGN."""
        call(self._impl.backward, f"blr.{type(self).__name__}.backward", loss, int(batch_size))

    # ---- ivon's param_groups["hess"] and ["momentum"] ---------------------------------------------
    def _mean_field(self):
        return self._impl is not None and self._impl.variational and _is_mean_field(self._impl)

    def _group_index(self, group):
        for index, g in enumerate(self.param_groups):
            if g is group:
                return index
        raise _blr.Error(f"This param group is no longer one of {self._owner()}'s param groups "
                         "(load_state_dict replaced them): read param_groups again.")

    def _group_ranges(self):
        """Per group, the (start, end) of its parameters in the parameter-order lists."""
        ranges, start = [], 0
        for held in self._params:
            ranges.append((start, start + len(held)))
            start += len(held)
        return ranges

    def _flat(self, group, which):
        # ivon's layout: one flat tensor per group, its parameters' coordinates in order.
        index = self._group_index(group)
        self._check_params()
        start, end = self._group_ranges()[index]
        tensors = (self._impl.curvature() if which == "hess" else self._impl.momentum())[start:end]
        if not tensors:
            return torch.zeros(0)
        return torch.cat([t.reshape(-1) for t in tensors])

    def _split(self, index, which, flat):
        """`flat` (one tensor over group `index`'s coordinates, ivon's layout) as one tensor per
        parameter; a mismatch is one sentence."""
        params = self._params[index]
        numel = sum(p.numel() for p in params)
        if not isinstance(flat, torch.Tensor):
            raise _blr.Error(f"param_groups[{index}]['{which}'] of {self._owner()} is a tensor "
                             f"(one value per coordinate of the group's parameters); got a "
                             f"{type(flat).__name__}.")
        if flat.numel() != numel or flat.dim() != 1:
            shape = "x".join(str(n) for n in flat.shape) or "scalar"
            raise _blr.Error(f"param_groups[{index}]['{which}'] of {self._owner()} must be a flat "
                             f"tensor of {numel} values (the coordinates of its {len(params)} "
                             f"parameters in order); got shape {shape}.")
        out, start = [], 0
        for p in params:
            out.append(flat[start:start + p.numel()].reshape(p.shape).to(p.device))
            start += p.numel()
        return out

    def _set_state(self, hess, momentum, step=None):
        """Per parameter (parameter order), h and the gradient average into the C++ state."""
        call(self._impl.set_curvature_and_momentum,
             f"blr.{type(self).__name__}.load_state_dict", list(hess), list(momentum), step)

    def _assign(self, group, which, value):
        index = self._group_index(group)
        self._check_params()
        hess, momentum = self._impl.curvature(), self._impl.momentum()
        start, end = self._group_ranges()[index]
        target = hess if which == "hess" else momentum
        target[start:end] = self._split(index, which, value)
        self._sync()  # h + δ with the group's current weight decay
        self._set_state(hess, momentum)

    # ---- state -----------------------------------------------------------------------------------
    def state_dict(self):
        """``param_groups`` as torch keeps them, and under ``state`` the library's state (step
        counter, noise-draw counter, per-parameter averages) as the bytes of the archive the C++
        checkpoints hold, and the step counter for reading."""
        state = super().state_dict()
        archive = self._impl.state_bytes()
        state["state"] = {"blr": torch.frombuffer(bytearray(archive), dtype=torch.uint8)}
        try:
            state["state"]["step"] = self._impl.step_count
        except _blr.Error:
            pass
        return state

    def load_state_dict(self, state_dict):
        """Loads a state dict that ``state_dict()`` made, or (Gaussian mean-field optimizers) one
        in the ivon package's form: param_groups carrying the flat tensors "hess" and "momentum"
        and the hyperparameters, no "blr" state. The step counter of an ivon dict is
        ``state["step"]`` when present; otherwise the optimizer keeps its own."""
        if not isinstance(state_dict, dict) or not isinstance(state_dict.get("param_groups"), list):
            raise _blr.Error("A state dict is a dict with the key 'param_groups' (a list of "
                             "dicts), as state_dict() makes it.")
        state = state_dict.get("state") or {}
        blob = state.get("blr")
        groups = state_dict["param_groups"]
        if blob is None and groups and all(isinstance(g, dict) and "hess" in g and "momentum" in g
                                           for g in groups):
            return self._load_ivon_state_dict(state, groups)
        if blob is None:
            raise _blr.Error("This state dict holds no blr optimizer state (its 'state' has no "
                             "'blr' entry) and is not in the ivon package's form (param_groups "
                             "with 'hess' and 'momentum'): was it saved by another optimizer?")
        old_groups, old_state = self.param_groups, self.state
        super().load_state_dict({"state": {}, "param_groups": groups})
        try:
            self._impl.load_state_bytes(bytes(blob.numpy().tobytes()))
        except BaseException:  # a refused state leaves the optimizer as it was
            self.param_groups, self.state = old_groups, old_state
            raise
        self._after_load()

    def _after_load(self):
        self.state.clear()
        self.param_groups = [_Group(self, g) for g in self.param_groups]
        self._synced = [None] * len(self.param_groups)
        self._sync()

    def _load_ivon_state_dict(self, state, groups):
        owner = self._owner()
        if not self._mean_field():
            raise _blr.Error(f"{owner} is not a Gaussian mean-field optimizer: it cannot load a "
                             "state dict in the ivon package's form ('hess' and 'momentum').")
        if self._impl.sampled:
            raise _blr.Error(f"{owner}: cannot load a state while the parameters hold a sample "
                             "(inside sampled_params()).")
        self._check_params()
        if len(groups) != len(self.param_groups):
            raise _blr.Error(f"The ivon state dict has {len(groups)} param groups; {owner} has "
                             f"{len(self.param_groups)}.")
        for index, (saved, held) in enumerate(zip(groups, self._params)):
            count = len(saved.get("params", held))
            if count != len(held):
                raise _blr.Error(f"Param group {index} of the ivon state dict has {count} "
                                 f"parameters; {owner}'s has {len(held)}.")
        hess, momentum = [], []
        for index, saved in enumerate(groups):
            hess += self._split(index, "hess", saved["hess"])
            momentum += self._split(index, "momentum", saved["momentum"])
        step = state.get("step")
        if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
            raise _blr.Error(f"The ivon state dict's state['step'] is the step counter, an "
                             f"integer; got {step!r}.")
        # The hyperparameters blr's table has (ivon's numel, hess and momentum are not options).
        kept = [{k: v for k, v in saved.items() if k in self._table or k == "initial_lr"}
                for saved in groups]
        old_groups, old_synced = self.param_groups, self._synced
        try:
            self.param_groups = [_Group(self, dict(g, **k, params=g["params"]))
                                 for g, k in zip(old_groups, kept)]
            self._synced = [None] * len(self.param_groups)
            self._sync()  # the options first: h + δ uses the loaded weight decay
            self._set_state(hess, momentum, step)
        except BaseException:  # a refused state leaves the optimizer as it was
            self.param_groups, self._synced = old_groups, [None] * len(old_groups)
            self._sync()
            raise
        self.state.clear()


def _distributed_processes(name):
    """(rank, world size) of the default torch.distributed group, for sync=True."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()):
        raise _blr.Error(f"blr.{name}(sync=True) all-reduces the step's statistics over the "
                         "processes of torch.distributed, which is not initialised: call "
                         "torch.distributed.init_process_group first.")
    return dist.get_rank(), dist.get_world_size()


def _all_reduce_sum(tensors):
    """Sums each tensor in place over the processes (sync=True); an empty list is a barrier."""
    dist = torch.distributed
    if not tensors:
        dist.barrier()
        return
    for t in tensors:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)


# The options given by position after params, per registry entry: ivon.IVON's order, whose sync
# (ivon's multi-process training) all-reduces the step's statistics over torch.distributed.
_POSITIONAL = {
    "ivon": ("lr", "ess", "hess_init", "beta1", "beta2", "weight_decay", "mc_samples",
             "hess_approx", "clip_radius", "sync", "debias", "rescale_lr"),
}


def _is_mean_field(impl):
    try:
        impl.step_count
    except _blr.Error:
        return False
    return True


class _Group(dict):
    """A param group (a dict, as torch keeps it) whose "hess" and "momentum" are the ivon
    package's: reading gives the optimizer's current h (curvature) and gradient average as one
    flat tensor over the group's coordinates (a copy: read it again after a step); assigning a
    tensor of that layout sets the state. Other keys are the dict's."""

    _VIEWS = ("hess", "momentum")

    def __init__(self, optimizer, group):
        super().__init__(group)
        self._optimizer = weakref.ref(optimizer)

    def _owner(self, key):
        optimizer = self._optimizer()
        if key in self._VIEWS and optimizer is not None and optimizer._mean_field():
            return optimizer
        return None

    def __getitem__(self, key):
        optimizer = self._owner(key)
        if optimizer is not None:
            return optimizer._flat(self, key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __contains__(self, key):
        return self._owner(key) is not None or super().__contains__(key)

    def __setitem__(self, key, value):
        optimizer = self._owner(key)
        if optimizer is not None:
            optimizer._assign(self, key, value)
            return
        super().__setitem__(key, value)

    def __reduce__(self):  # copies and pickles are plain dicts (state_dict's param_groups)
        return (dict, (dict(self),))


def _make_class(entry):
    name = _class_name(entry["owner"])
    options = entry["options"]
    lines = [entry["summary"], "", "Options (keyword, default, allowed, meaning):"]
    for o in options:
        allowed = o["range"] or ", ".join(o["choices"]) or o["type"]
        needed = " (required)" if o["required"] else ""
        lines.append(f"    {o['key']} = {o['default']!r}{needed}: {allowed}; {o['help']}")
    parameters = [inspect.Parameter("params", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    table = {o["key"]: o for o in options}
    order = _POSITIONAL.get(entry["name"], ())
    for key in order:
        if key == "sync":  # ivon's, accepted as False
            parameters.append(inspect.Parameter(key, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                default=False))
            continue
        o = table[key]
        # A required option after one with a default (ivon's ess after lr) shows REQUIRED.
        default = REQUIRED if o["required"] else o["default"]
        parameters.append(inspect.Parameter(key, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=default))
    for o in options:
        if o["key"] in order:
            continue
        default = inspect.Parameter.empty if o["required"] else o["default"]
        parameters.append(inspect.Parameter(o["key"], inspect.Parameter.KEYWORD_ONLY, default=default))
    cls = type(name, (Optimizer,), {"_entry": entry, "__doc__": "\n".join(lines),
                                    "__module__": "blr"})
    cls.__signature__ = inspect.Signature(parameters)
    return name, cls


class _Required:
    def __repr__(self):
        return "REQUIRED"


# The default shown in a signature for a required option that may be given by position after
# one with a default (blr.IVON's ess after lr): give it, by position or keyword.
REQUIRED = _Required()


def optimizer_classes():
    """Class name -> class for every optimizer of the registry that Python can build."""
    return dict(_make_class(entry) for entry in _blr.optimizers())
