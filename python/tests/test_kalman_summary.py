"""blr.infer.kalman and blr.infer.structural (issue 31, item 2): the library's state-space summary
(inference/kalman_summary.hpp) that `blr infer kalman` prints and writes. On the Nile data the
Python local-level and local-linear-trend results equal the command's JSON (the same code;
1e-12 relative through JSON text), the maximum-likelihood variances included; the forecast
equals the recursion written out (the local level's predictive variance P_T + kW + V after k
steps); bad arguments raise one sentence naming the keyword.
"""

import csv
import json
import subprocess

import numpy as np
import pytest

import blr
from conftest import CLI

DATA = CLI.resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def cli():
    if not CLI.is_file():
        pytest.skip(f"the blr command is not at {CLI} (set BLR_CLI)")
    return CLI


def nile():
    return np.array([float(r["volume"]) for r in csv.DictReader(open(DATA / "nile.csv"))])


def command(tmp_path, *flags):
    out = tmp_path / "run.json"
    subprocess.run([str(CLI), "infer", "kalman", "--data", str(DATA / "nile.csv"), "--column",
                    "volume", *flags, "--json", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


def close(a, b, rel=1e-12):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rel, atol=0)


@pytest.mark.parametrize("flags,kwargs", [
    (["--fit"], {"fit": True}),
    (["--obs-var", "15099", "--state-var", "1469.1", "--level", "0.8"],
     {"obs_var": 15099, "state_var": 1469.1}),
    (["--model", "local-linear-trend", "--fit"], {"model": "local-linear-trend", "fit": True}),
])
def test_structural_equals_the_command(cli, tmp_path, flags, kwargs):
    ran = command(tmp_path, *flags)
    level = ran["level"]
    r = blr.infer.structural(nile(), **kwargs)
    for key in ("obs_var", "state_var", "init_mean", "init_var", "log_likelihood", "iterations",
                "converged", "states", "observed_steps"):
        assert close(r[key], ran[key]) if isinstance(ran[key], float) else r[key] == ran[key], key
    s = r.bands(0, level)
    f = r.bands(0, level, smoothed=False)
    assert close(s["mean"], ran["smoothed_mean"]) and close(s["lower"], ran["smoothed_lower"])
    assert close(f["upper"], ran["filtered_upper"]) and close(f["sd"] ** 2, ran["filtered_var"])
    assert close(r.interval(level), np.column_stack([ran["smoothed_lower"],
                                                     ran["smoothed_upper"]]))
    assert close(r["smoothed_mean"], ran["smoothed_states"])
    assert any("first observation" in a for a in r["assumptions"])


def test_general_model_names_its_states_and_forecasts():
    y = nile()
    v, w = 15099.0, 1469.1
    r = blr.infer.kalman(y.reshape(-1, 1), [[1.0]], [[1.0]], [[w]], [[v]], [y[0]], [[1e7]],
                         states=["level"])
    same = blr.infer.structural(y, obs_var=v, state_var=w)
    assert r["states"] == ["level"]
    assert close(r["filtered_mean"], same["filtered_mean"], 0) and r.log_likelihood == same.log_likelihood
    f = r.forecast(3, level=0.9)
    m_t, p_t = r["filtered_mean"][-1, 0], r["filtered_cov"][-1, 0]
    k = np.arange(1, 4)
    assert close(f["mean"][:, 0], np.full(3, m_t))
    assert close(f["sd"][:, 0], np.sqrt(p_t + k * w + v))
    z = 1.6448536269514722  # Φ⁻¹(0.95)
    assert close(f["upper"][:, 0], m_t + z * np.sqrt(p_t + k * w + v))
    text = r.summary().as_text()
    assert "Log-likelihood" in text and "level" in text


@pytest.mark.parametrize("kwargs,words", [
    ({"model": "arima", "fit": True}, "local-level or local-linear-trend"),
    ({}, "needs obs_var V > 0 and state_var"),
    ({"obs_var": -1.0, "state_var": 1.0}, "Option 'obs_var' must be a positive"),
    ({"obs_var": 1.0, "state_var": 1.0, "slope_var": 1.0}, "slope_var' applies only"),
    ({"fit": True, "max_evaluations": 3}, "raise max_evaluations"),
    ({"obs_var": 1.0, "state_var": 1.0, "init_var": 0.0}, "init_var"),
    ({"fit": True, "obs_varr": 1.0}, "obs_varr"),
])
def test_bad_arguments_raise_one_sentence(kwargs, words):
    with pytest.raises(blr.Error, match=words):
        blr.infer.structural(nile(), **kwargs)


def test_forecast_and_bands_refuse_bad_arguments():
    r = blr.infer.structural(nile(), obs_var=15099.0, state_var=1469.1)
    with pytest.raises(blr.Error, match="between 1 and"):
        r.forecast(0)
    with pytest.raises(blr.Error, match="State 3 is not one of"):
        r.bands(3)
    with pytest.raises(blr.Error, match="level"):
        r.summary(1.5)
