"""One spelling and one default per concept (issue 31): blr.infer's functions take each method's
options as keywords named as in its option table (blr.infer.methods(), the registry `blr methods`
prints; ``blr infer`` spells them as flags), their docstrings list every key of every method's
table with the default it documents, an explicit keyword default that is a table key is one of
the table's defaults, and a key the method's table lacks is refused naming where it applies.
The CLI's flags are checked the same way by tests/cli/infer_defaults.sh."""
import inspect
import re

import numpy as np
import pytest

import blr
import blr.infer as infer

# The model of each function's methods in the registry. (The GP functions' keywords are the C++
# binding's, python/src/inference.cpp, and pass through *args and **kwargs here.)
MODELS = {"glm": "glm", "gmm": "gmm", "conjugate": "conjugate", "structural": "kalman"}
SET_BY_OTHER_KEYWORDS = {"family", "alpha", "beta"}  # glm's family=; the evidence's start


def _tables(model):
    return [e for e in infer.methods() if e["model"] == model and e["options"]]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_keywords_and_their_documentation_are_the_tables(name):
    function = getattr(infer, name)
    entries = _tables(MODELS[name])
    assert entries, name
    defaults = {}
    for entry in entries:
        for option in entry["options"]:
            defaults.setdefault(option["key"], []).append(option["default"])
            if option["key"] in SET_BY_OTHER_KEYWORDS:
                continue
            shown = "not set" if option.get("unset_by_default") else repr(option["default"])
            assert f"``{option['key']}`` = {shown} ({option['help']})" in function.__doc__, (
                name, entry["method"], option["key"])
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name in defaults and parameter.default is not inspect.Parameter.empty:
            assert parameter.default in defaults[parameter.name], (name, parameter.name)


def test_a_key_the_method_lacks_is_refused_naming_where_it_applies():
    x = np.random.default_rng(0).normal(size=(40, 2))
    y = (x[:, 0] > 0).astype(float)
    with pytest.raises(blr.Error, match=re.escape(
            "Option 'tolerance' does not apply to glm mixture-vi; it is an option of")):
        infer.glm(x, y, method="cvi", family="mixture:2", tolerance=1e-6)
    with pytest.raises(blr.Error, match=re.escape(
            "Option 'batch_size' does not apply to gmm em; it is an option of gmm svi, "
            "conjugate svi")):
        infer.gmm(x, batch_size=5)
    with pytest.raises(blr.Error, match="unexpected keyword argument 'rho'"):
        infer.gmm(x, rho=0.5)  # no method of gmm has it
    with pytest.raises(blr.Error, match="did you mean 'max_iterations'"):
        infer.gmm(x, max_iteration=3)
    with pytest.raises(blr.Error, match=re.escape("Option 'fixed_iterations' must be in [1, ")):
        infer.gmm(x, fixed_iterations=0)
    # The same keys reach the fit: a VMP run capped at one sweep stops unconverged.
    with pytest.raises(blr.Error, match="raise max_iterations"):
        infer.gmm(x, method="vmp", max_iterations=1)


def test_the_sensitivities_options_reach_the_fit_as_in_blr_sensitivity():
    """``sites`` and ``quadrature_nodes`` (the shared "sensitivity" table, `blr sensitivity
    --sites`) are keywords of glm(sensitivities=True); the sites default to where the method
    evaluates its own terms (expected under q after cvi, at the mean after laplace), as the
    docstring says, and a key given without sensitivities is refused naming where it applies."""
    rng = np.random.default_rng(3)
    x = np.column_stack([np.ones(60), rng.normal(size=(60, 2))])
    y = (x @ np.array([0.3, 1.5, -1.0]) + rng.logistic(size=60) > 0).astype(float)

    def deviation(**options):
        return np.asarray(infer.glm(x, y, sensitivities=True, **options)["sensitivity"]["deviation"])

    for method, default in (("laplace", "at-mean"), ("cvi", "expected")):
        other = "expected" if default == "at-mean" else "at-mean"
        np.testing.assert_array_equal(deviation(method=method),
                                      deviation(method=method, sites=default))
        assert np.max(np.abs(deviation(method=method) - deviation(method=method, sites=other))) > 1e-6
    # The nodes of the expected logistic terms reach them: 2 nodes against 64 differ. (After
    # cvi the key is CVI's too, as --quadrature-nodes is in blr sensitivity: one name per concept.)
    assert np.max(np.abs(deviation(sites="expected", quadrature_nodes=2)
                         - deviation(sites="expected", quadrature_nodes=64))) > 1e-6
    assert ("``sites`` = at-mean after glm laplace or exact, expected after glm cvi"
            in infer.glm.__doc__)
    with pytest.raises(blr.Error, match=re.escape(
            "Option 'sites' does not apply to glm laplace; it is an option of sensitivity")):
        infer.glm(x, y, sites="expected")
    with pytest.raises(blr.Error, match=re.escape("Option 'sites' takes a choice (one of at-mean, expected); got nowhere.")):
        infer.glm(x, y, sensitivities=True, sites="nowhere")


def test_the_shared_tables_are_public_and_their_defaults_are_the_commands_text():
    """blr.infer.shared_options() lists the tables several methods share, each option with the
    default text of `--help` (per method where the defaults differ, written once in C++), and hands
    out a copy: changing it reaches neither the keyword checks nor the docstrings."""
    tables = infer.shared_options()
    assert {"predictive", "sensitivity", "hyperparameters"} <= set(tables)
    sites = {o["key"]: o for o in tables["sensitivity"]["options"]}["sites"]
    assert sites["default_text"] == "at-mean after glm laplace or exact, expected after glm cvi"
    assert [a["default"] for a in sites["defaults_after"]] == ["at-mean", "expected"]
    nodes = {o["key"]: o for o in tables["predictive"]["options"]}["quadrature_nodes"]
    assert nodes["default_text"] == str(nodes["default"])
    tables["sensitivity"]["options"].clear()
    assert infer.shared_options()["sensitivity"]["options"]
    rng = np.random.default_rng(4)
    x = np.column_stack([np.ones(40), rng.normal(size=(40, 2))])
    y = (x @ np.array([0.2, 1.0, -1.0]) + rng.logistic(size=40) > 0).astype(float)
    assert "sensitivity" in infer.glm(x, y, sensitivities=True, sites="expected")


def test_the_method_table_is_chosen_as_the_command_chooses_it():
    """glm_method_options chooses the table for blr infer and blr.infer.glm alike: exact has no
    iterations (the command refused --max-iterations there, where Python took it for a Newton
    step's), laplace takes Laplace's (a cap of one step stops the fit)."""
    rng = np.random.default_rng(5)
    x = np.column_stack([np.ones(30), rng.normal(size=30)])
    y = x @ np.array([1.0, 2.0]) + rng.normal(size=30)
    with pytest.raises(blr.Error, match=re.escape(
            "Option 'max_iterations' does not apply to glm exact with a known noise precision "
            "(closed form); it is an option of")):
        infer.glm(x, y, "gaussian", method="exact", noise_precision=2.0, max_iterations=5)
    labels = (y > np.median(y)).astype(float)
    with pytest.raises(blr.Error, match="raise max_iterations"):
        infer.glm(x, labels, method="laplace", max_iterations=1)
