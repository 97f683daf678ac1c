"""One default per concept (issue 31): every keyword default of blr.infer's functions that is
spelled as a key of an inference option table (blr.infer.methods(), the registry `blr methods`
prints) is one of that key's defaults in the tables of the function's model. The CLI's flags are
checked the same way by tests/cli/infer_defaults.sh."""
import inspect

import pytest

import blr.infer as infer

# The model of each function's methods in the registry. (The GP functions' keywords are the C++
# binding's, python/src/inference.cpp, and pass through *args and **kwargs here.)
MODELS = {"glm": "glm", "gmm": "gmm", "conjugate": "conjugate"}


def _defaults(model):
    out = {}
    for entry in infer.methods():
        if entry["model"] == model:
            for option in entry["options"] or []:
                out.setdefault(option["key"], []).append(option["default"])
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_keyword_defaults_are_the_tables(name):
    tables = _defaults(MODELS[name])
    function = getattr(infer, name)
    checked = []
    for parameter in inspect.signature(function).parameters.values():
        default = parameter.default
        if parameter.name not in tables or default is inspect.Parameter.empty or default is None:
            continue
        checked.append(parameter.name)
        assert default in tables[parameter.name], (
            f"blr.infer.{name}({parameter.name}={default!r}): the tables say "
            f"{tables[parameter.name]}")
    assert checked, f"blr.infer.{name}: no keyword checked"
