"""The shipped type stub python/blr/__init__.pyi is what the option tables generate
(python3 -m blr.stubs), and its optimizer signatures are the classes' own."""

import ast
import inspect
from pathlib import Path

import blr
import blr.stubs

STUB = Path(__file__).resolve().parents[1] / "blr" / "__init__.pyi"


def test_the_shipped_stub_is_current():
    assert STUB.read_text() == blr.stubs.stub(), \
        "python/blr/__init__.pyi is out of date: regenerate it with `python3 -m blr.stubs`."


def _inits(tree):
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = [f for f in node.body
                              if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
    return out


def test_the_stub_has_every_optimizer_with_its_signature():
    inits = _inits(ast.parse(STUB.read_text()))
    classes = blr.optimizer_classes()
    assert set(classes) <= set(inits)
    for name, cls in classes.items():
        runtime = inspect.signature(cls).parameters
        for init in inits[name]:
            args = init.args
            stubbed = [a.arg for a in args.args[1:]] + [a.arg for a in args.kwonlyargs]
            assert sorted(stubbed) == sorted(runtime), name
            # Required (no default) in the stub only where the class needs the value.
            required = {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None}
            for key in required:
                assert runtime[key].default in (inspect.Parameter.empty, blr.optim.REQUIRED), name
    # blr.IVON: ivon.IVON's positional order as the first overload, as the runtime signature.
    first = inits["IVON"][0].args
    assert [a.arg for a in first.args[1:]] == [
        k for k, p in inspect.signature(blr.IVON).parameters.items()
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert len(inits["IVON"]) == 2 and len(inits["VOGN"]) == 1


def test_the_stub_declares_the_package_names():
    tree = ast.parse(STUB.read_text())
    declared = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            declared.update(a.asname for a in node.names if a.asname)
    assert set(blr.__all__) <= declared, set(blr.__all__) - declared
