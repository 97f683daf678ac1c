"""What the Python layer checks before the C++ optimizers see their input (issue 34, the audit of
2026-11-28, defects D2, D4, D13, D16, D17 and D18): a parameter whose size, dtype or device
changed behind the optimizer, a crafted optimizer state, an add_param_group inside a sample,
foreign exception types, edited params lists, negative squared gradients and a parameter listed
twice are each refused with one blr.Error sentence. Reproducers that crashed the interpreter run
in a child process, so that a crash fails the test instead of ending pytest."""

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import blr

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO / "fuzz" / "corpus" / "checkpoint"


def run_child(code, *args, timeout=300):
    """Runs `code` in a fresh interpreter (same PYTHONPATH); a blr.Error it prints as
    "BLR_ERROR <sentence>"."""
    prelude = textwrap.dedent("""\
        import sys, torch, blr
        def report(f):
            try:
                f()
            except blr.Error as e:
                print("BLR_ERROR", str(e).replace("\\n", "\\\\n"))
            else:
                print("NO_ERROR")
        """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=dict(os.environ))


def blr_error_of(result):
    """The blr.Error sentence the child printed (the test fails on a crash or on no error)."""
    assert result.returncode == 0, (
        f"the child ended with status {result.returncode}:\n{result.stdout}\n{result.stderr[-3000:]}")
    lines = [line for line in result.stdout.splitlines() if line.startswith(("BLR_ERROR", "NO_ERROR"))]
    assert lines and lines[-1].startswith("BLR_ERROR"), f"no blr.Error:\n{result.stdout}{result.stderr[-3000:]}"
    return lines[-1][len("BLR_ERROR "):]


def one_sentence(message):
    assert "\n" not in message and len(message) < 600, message
    return message


def model_and_data():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    return model, torch.randn(32, 4), torch.randint(0, 3, (32,))


def train_step(optimizer, model, x, y, extra=None):
    with optimizer.sampled_params(train=True):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if extra is not None:
            loss = loss + extra()
        loss.backward()
    optimizer.step()


# ---- D2: a parameter replaced by a tensor of another size, dtype or device ------------------------

STEP = """
w = torch.randn({size}, requires_grad=True)
opt = getattr(blr, "{cls}")([w], lr=0.1, ess=32)
def step(train=True):
    with opt.sampled_params(train=train):
        opt.zero_grad(); (w * w).sum().backward()
    if train:
        opt.step()
step()
"""


@pytest.mark.parametrize("cls,size,new,action", [
    ("IVON", "3", "torch.randn(1_000_000)", "step()"),                     # SIGSEGV on main
    ("IVON", "3", "torch.randn(1_000_000)", "step(train=False)"),          # SIGSEGV on main
    ("IVON", "300, 400", "torch.randn(2)", "step()"),                      # silent 120 000-float write
    ("Vadam", "12", "torch.randn(50)", "step()"),                          # heap corruption on main
    ("Vadam", "12", "torch.randn(100_000)", "step()"),                     # SIGSEGV on main
    ("IVON", "3", "torch.randn(3, dtype=torch.float64)", "step()"),        # another dtype
    ("IVON", "3", "torch.randn(1_000_000)", "opt.posterior_variance()"),   # an accessor
])
def test_a_resized_parameter_is_refused_naming_both_sizes(cls, size, new, action):
    result = run_child(STEP.format(cls=cls, size=size) + f"""
w.data = {new}
report(lambda: {action})
""")
    message = one_sentence(blr_error_of(result))
    assert "parameter 0 in param group 0" in message
    assert "size [" + size.replace(" ", "") .replace(",", ", ") + "]" in message
    assert "cannot be replaced" in message


def test_a_resize_inside_the_sample_discards_it_and_the_optimizer_stays_usable():
    model, x, y = model_and_data()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=32)
    train_step(optimizer, model, x, y)
    weight = model[0].weight
    mean = weight.detach().clone()
    with pytest.raises(blr.Error, match=r"size \[8, 4\].*size \[5\].*The sample was discarded"):
        with optimizer.sampled_params(train=True):
            weight.data = torch.randn(5)
    weight.data = mean.clone()          # put back: the optimizer goes on
    train_step(optimizer, model, x, y)
    assert optimizer.step_count == 2


@pytest.mark.parametrize("entry", [e for e in blr.optimizers()])
def test_every_optimizer_refuses_a_resized_parameter(entry):
    cls = "".join(w[:1].upper() + w[1:] for w in
                  __import__("re").split(r"[^0-9A-Za-z]+", entry["owner"]) if w)
    options = {"ess": 32} if any(o["key"] == "ess" and o["required"] for o in entry["options"]) else {}
    result = run_child(f"""
w = torch.randn(12, requires_grad=True)
opt = getattr(blr, "{cls}")([w], **{options!r})
def step():
    if opt._impl.variational:
        for _ in range(opt._impl.training_samples):   # SAM and bSAM take two
            with opt.sampled_params(train=True):
                opt.zero_grad(set_to_none=True); (w * w).sum().backward()
                if opt._impl.needs_squared_gradients:
                    opt.add_squared_gradients([w.grad.detach() ** 2])
    else:
        opt.zero_grad(set_to_none=True); (w * w).sum().backward()
    opt.step()
try:
    step()
except Exception as e:        # an optimizer that needs modules (K-FAC): not this test's subject
    print("SKIP", e); sys.exit(0)
w.data = torch.randn(100_000)
report(step)
""")
    if "SKIP" in result.stdout and result.returncode == 0:
        pytest.skip(result.stdout.strip())
    assert "size [12]" in one_sentence(blr_error_of(result))


# ---- D4: load_state_dict reads the state behind the checkpoint's defences ------------------------

LOAD = """
payload = open(sys.argv[1], "rb").read()[1:]   # corpus files: the first byte is the harness mode
w = torch.randn(3, requires_grad=True)
opt = blr.IVON([w], lr=0.1, ess=32)
sd = opt.state_dict()
sd["state"]["blr"] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
report(lambda: opt.load_state_dict(sd))
import resource
print("MAXRSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.parametrize("prefix", ["segv-jit-type-parser-", "oom-"])
def test_the_repository_crashers_are_refused_by_load_state_dict(prefix):
    corpus = next(CORPUS.glob(prefix + "*"))
    result = run_child(LOAD, corpus)
    message = one_sentence(blr_error_of(result))       # SIGSEGV on main (segv-*)
    assert message.startswith("The IVON state in this state dict")
    rss_kb = int(result.stdout.split("MAXRSS_KB")[1].split()[0])
    assert rss_kb < 1_000_000, f"{rss_kb} kB resident (oom-* took 2.1 GB on main)"


def test_a_state_that_crashes_libtorch_is_refused_by_the_trial_decode():
    # The CLI's crafted checkpoint (tests/cli/torch_faults.sh): "dim = 2" in a class body of the
    # archive's TorchScript source passes the archive check, and LibTorch 1.13's type parser
    # dies on it with SIGSEGV; here it is the optimizer state of a state dict.
    result = run_child("""
import io, zipfile
source = zipfile.ZipFile(io.BytesIO(open(sys.argv[1], "rb").read()[1:]))
out, changed = io.BytesIO(), False
with zipfile.ZipFile(out, "w") as crafted:
    for info in source.infolist():
        data = source.read(info.filename)
        if not changed and info.filename.endswith(".py") and b"__buffers__ = []\\n" in data:
            data = data.replace(b"__buffers__ = []\\n", b"__buffers__ = []\\n  dim = 2\\n", 1)
            changed = True
        crafted.writestr(info.filename, data, compress_type=info.compress_type)
assert changed
w = torch.randn(3, requires_grad=True)
opt = blr.IVON([w], lr=0.1, ess=32)
sd = opt.state_dict()
sd["state"]["blr"] = torch.frombuffer(bytearray(out.getvalue()), dtype=torch.uint8)
report(lambda: opt.load_state_dict(sd))
""", CORPUS / "linear_sgd")
    message = one_sentence(blr_error_of(result))       # SIGSEGV on main
    assert "LibTorch crashed (signal 11)" in message, message


def test_a_crafted_state_that_trips_libtorchs_type_parser_is_one_sentence():
    import io
    import zipfile
    model, x, y = model_and_data()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=32)
    train_step(optimizer, model, x, y)
    state = optimizer.state_dict()
    source = zipfile.ZipFile(io.BytesIO(state["state"]["blr"].numpy().tobytes()))
    out, changed = io.BytesIO(), False
    with zipfile.ZipFile(out, "w") as crafted:
        for info in source.infolist():
            data = source.read(info.filename)
            if not changed and info.filename.endswith(".py") and b"__buffers__ = []\n" in data:
                data = data.replace(b"__buffers__ = []\n", b"__buffers__ = []\n  dim = 2\n", 1)
                changed = True
            crafted.writestr(info.filename, data, compress_type=info.compress_type)
    assert changed
    state["state"]["blr"] = torch.frombuffer(bytearray(out.getvalue()), dtype=torch.uint8)
    state["param_groups"][0]["lr"] = 0.5
    # On main: LibTorch's multi-line RuntimeError ("Expected subscripted type ...").
    with pytest.raises(blr.Error, match="The IVON state in this state dict") as caught:
        optimizer.load_state_dict(state)
    one_sentence(str(caught.value))
    assert optimizer.param_groups[0]["lr"] == 0.1  # a refused state changes nothing
    train_step(optimizer, model, x, y)  # still usable


@pytest.mark.parametrize("key,value,words", [
    ("precision", -5.0, "posterior precision positive"),   # main: a negative variance, then NaN
    ("precision", float("nan"), "must be finite"),
    ("average", float("inf"), "must be finite"),
])
def test_a_state_with_impossible_values_is_refused(key, value, words):
    import io
    model, x, y = model_and_data()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=32)
    train_step(optimizer, model, x, y)
    state = optimizer.state_dict()
    archive = torch.jit.load(io.BytesIO(state["state"]["blr"].numpy().tobytes()))
    with torch.no_grad():
        for name, tensor in archive.named_parameters():
            if name == "group0/param1/" + key:
                tensor[0] = value
    edited = io.BytesIO()
    torch.jit.save(archive, edited)
    state["state"]["blr"] = torch.frombuffer(bytearray(edited.getvalue()), dtype=torch.uint8)
    with pytest.raises(blr.Error, match="parameter 1 in group 0 is corrupt.*" + words):
        optimizer.load_state_dict(state)
    assert min(v.min().item() for v in optimizer.posterior_variance()) > 0
    train_step(optimizer, model, x, y)


# ---- D13: add_param_group inside a sample; exceptions of other types -------------------------------

def test_add_param_group_inside_a_sample_is_refused_and_leaves_the_optimizer_usable():
    model, x, y = model_and_data()
    params = list(model.parameters())
    optimizer = blr.IVON(params[:2], lr=0.1, ess=32)
    with pytest.raises(blr.Error, match="add_param_group.*inside sampled_params"):
        with optimizer.sampled_params(train=True):
            optimizer.add_param_group({"params": params[2:]})
    assert len(optimizer.param_groups) == 1
    train_step(optimizer, model, x, y)           # main: "sample_parameters() was called twice"
    optimizer.add_param_group({"params": params[2:]})   # between steps it is fine
    train_step(optimizer, model, x, y)


def test_add_param_group_between_a_sample_and_its_step_is_refused():
    # Found by fuzz/harness/python_optim.cpp (stop 32): the step then read past the new group's
    # state ("Internal error ... vector::_M_range_check" from Python).
    model, x, y = model_and_data()
    params = list(model.parameters())
    optimizer = blr.IVON(params[:2], lr=0.1, ess=32)
    with optimizer.sampled_params(train=True):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
    with pytest.raises(blr.Error, match="after a training sample and before step\\(\\); add param "
                                        "groups between steps"):
        optimizer.add_param_group({"params": params[2:]})
    assert len(optimizer.param_groups) == 1
    optimizer.step()
    optimizer.add_param_group({"params": params[2:]})
    train_step(optimizer, model, x, y)


def test_a_refused_param_group_leaves_python_and_cpp_groups_equal():
    model, x, y = model_and_data()
    params = list(model.parameters())
    optimizer = blr.IVON(params[:2], lr=0.1, ess=32)
    with pytest.raises(blr.Error, match="beta2"):
        optimizer.add_param_group({"params": params[2:], "beta2": 2.0})
    assert len(optimizer.param_groups) == 1
    train_step(optimizer, model, x, y)


def test_an_out_of_range_integer_option_is_a_sentence():
    with pytest.raises(blr.Error, match=r"Option 'seed' takes an integer .*got 18446744073709551616"):
        blr.IVON([torch.randn(3, requires_grad=True)], lr=0.1, ess=32, seed=2**64)


def test_text_for_a_number_is_named_as_text():
    with pytest.raises(blr.Error, match=r"Option 'lr' takes a number; got the text '0\.1'"):
        blr.IVON([torch.randn(3, requires_grad=True)], lr="0.1", ess=32)


def test_a_sparse_gradient_is_a_sentence_and_the_sample_is_discarded():
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(10, 3, sparse=True)
    optimizer = blr.IVON(embedding.parameters(), lr=0.1, ess=32)
    mean = embedding.weight.detach().clone()
    with pytest.raises(blr.Error, match="sparse") as caught:   # main: LibTorch's RuntimeError
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            embedding(torch.tensor([1, 2])).sum().backward()
    one_sentence(str(caught.value))
    assert torch.equal(embedding.weight.detach(), mean)
    assert not optimizer._impl.sampled


@pytest.mark.parametrize("call,words", [
    (lambda x, y: blr.infer.glm(np.zeros((32, 2, 2)), y), "argument 'x' takes a 2-D array"),
    (lambda x, y: blr.infer.glm(x, np.zeros((32, 2))), "argument 'y' takes a 1-D array"),
    (lambda x, y: blr.infer.glm(np.array([["a", 1]] * 32, dtype=object), y), "not all numbers"),
    (lambda x, y: blr.infer.glm(x, y, prior_precison=3), "did you mean 'prior_precision'"),
    (lambda x, y: blr.infer.gmm(x, 2**40), r"Option 'components' must be in \[1, 1000000\]"),
])
def test_infer_arguments_that_do_not_fit_are_one_sentence(call, words):
    generator = np.random.default_rng(0)
    x = generator.normal(size=(32, 2))
    y = (generator.random(32) > 0.5).astype(float)
    with pytest.raises(blr.Error, match=words) as caught:   # main: TypeError and the whole array
        call(x, y)
    one_sentence(str(caught.value))


def test_libtorch_errors_from_the_bindings_are_one_sentence():
    # A noise tensor on the meta device: LibTorch refuses to read it (main: its multi-line report).
    w = torch.randn(3, requires_grad=True)
    optimizer = blr.IVON([w], lr=0.1, ess=32)
    with pytest.raises(blr.Error, match="LibTorch refused the operation") as caught:
        with optimizer.sampled_params(noise=[torch.empty(3, device="meta")]):
            pass
    one_sentence(str(caught.value))
    assert not optimizer._impl.sampled


# ---- D16: edits of param_groups[i]["params"] -------------------------------------------------------

@pytest.mark.parametrize("edit,words", [
    (lambda params, extra: params.append(extra), "it has 5 parameters instead of 4"),
    (lambda params, extra: params.pop(), "it has 3 parameters instead of 4"),
    (lambda params, extra: params.__setitem__(1, torch.nn.Parameter(params[1].detach().clone())),
     "parameter 1 was replaced"),
])
def test_edits_of_a_params_list_are_refused_at_the_next_step(edit, words):
    model, x, y = model_and_data()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=32)
    train_step(optimizer, model, x, y)
    extra = torch.randn(1000, requires_grad=True)
    before = list(optimizer.param_groups[0]["params"])
    edit(optimizer.param_groups[0]["params"], extra)     # main: silently ignored
    with pytest.raises(blr.Error, match=words) as caught:
        train_step(optimizer, model, x, y, extra=lambda: (extra ** 2).sum())
    assert "add_param_group" in one_sentence(str(caught.value))
    optimizer.param_groups[0]["params"][:] = before      # restored: the optimizer goes on
    train_step(optimizer, model, x, y)
    optimizer.add_param_group({"params": [extra]})       # the way to add a parameter
    e0 = extra.detach().clone()
    train_step(optimizer, model, x, y, extra=lambda: (extra ** 2).sum())
    assert (extra.detach() - e0).abs().max() > 0


# ---- D17: squared gradients given by the caller -----------------------------------------------------

@pytest.mark.parametrize("cls", ["VOGN", "OGN"])
@pytest.mark.parametrize("value,words", [(-1e6, "negative"), (float("nan"), "not finite"),
                                         (float("inf"), "not finite")])
def test_squared_gradients_must_be_finite_and_not_negative(cls, value, words):
    model, x, y = model_and_data()
    optimizer = getattr(blr, cls)(model.parameters(), lr=0.1, ess=32)
    with pytest.raises(blr.Error, match=words):       # main: a negative variance, no error
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.add_squared_gradients([value * torch.ones_like(p) for p in model.parameters()])
    assert min(v.min().item() for v in optimizer.posterior_variance()) > 0


# ---- D18: a parameter listed twice -------------------------------------------------------------------

def test_a_parameter_listed_twice_is_refused():
    model, _, _ = model_and_data()
    params = list(model.parameters())
    with pytest.raises(blr.Error, match="Parameter 4 of param group 0 is also parameter 0"):
        blr.IVON(params + params, lr=0.1, ess=32)       # main: torch warns, blr trains it twice
    with pytest.raises(blr.Error, match="Parameter 0 of param group 1 is also parameter 1 of param group 0"):
        blr.IVON([{"params": params[:2]}, {"params": params[1:]}], lr=0.1, ess=32)
    optimizer = blr.IVON(params[:2], lr=0.1, ess=32)
    with pytest.raises(blr.Error, match="may appear only once in IVON"):
        optimizer.add_param_group({"params": params[1:]})
    assert len(optimizer.param_groups) == 1
