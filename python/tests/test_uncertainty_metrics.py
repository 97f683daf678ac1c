"""The uncertainty metrics of ``blr.metrics`` and ``blr.ood_metrics`` against independent NumPy
computations written from their definitions, the reliability-diagram PNG, and the refusal of
input that is not log-probabilities and integer labels (audit 2026-11-28, D14)."""

import math
import shutil

import numpy as np
import pytest
import torch

import blr


def _data(n=300, classes=4, seed=0, scale=2.0):
    generator = torch.Generator().manual_seed(seed)
    log_probs = torch.log_softmax(scale * torch.randn(n, classes, generator=generator,
                                                      dtype=torch.float64), 1)
    labels = torch.randint(0, classes, (n,), generator=generator)
    return log_probs, labels


def _numpy_adaptive_ece(p, y, bins):
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    order = np.argsort(conf, kind="stable")
    n, total = len(y), 0.0
    for b in range(bins):
        members = order[b * n // bins:(b + 1) * n // bins]
        total += abs(correct[members].sum() - conf[members].sum())
    return total / n


def _numpy_classwise_ece(p, y, bins):
    n, classes = p.shape
    total = 0.0
    for k in range(classes):
        index = np.minimum(np.floor(p[:, k] * bins), bins - 1)
        for b in range(bins):
            members = index == b
            total += abs((y[members] == k).sum() - p[members, k].sum())
    return total / (n * classes)


def _numpy_aurc(p, y):
    # No tied confidences in continuous random data: the plain risk-coverage curve.
    order = np.argsort(-p.max(1))
    errors = np.cumsum(p.argmax(1)[order] != y[order])
    return np.mean(errors / np.arange(1, len(y) + 1))


def test_calibration_and_selective_metrics_match_numpy():
    log_probs, labels = _data()
    p, y = log_probs.exp().numpy(), labels.numpy()
    for bins in (1, 7, 15):
        m = blr.metrics(log_probs, labels, ece_bins=bins)
        # Sums of a few hundred doubles in a different order: round-off ≤ 1e-13.
        assert m["adaptive_ece"] == pytest.approx(_numpy_adaptive_ece(p, y, bins), abs=1e-13)
        assert m["classwise_ece"] == pytest.approx(_numpy_classwise_ece(p, y, bins), abs=1e-13)
        assert m["aurc"] == pytest.approx(_numpy_aurc(p, y), abs=1e-13)


def _entropy(log_probs):
    p = log_probs.exp().numpy()
    return -(p * log_probs.numpy()).sum(1)


def test_ood_metrics_match_numpy():
    test, _ = _data(n=200, seed=1, scale=3.0)
    ood, _ = _data(n=150, seed=2, scale=1.0)  # flatter: higher entropy on average
    s_in, s_out = _entropy(test), _entropy(ood)
    got = blr.ood_metrics(test, ood)
    # AUROC: the share of (out, in) pairs ordered right, ties one half.
    pairs = (s_out[:, None] > s_in[None, :]) + 0.5 * (s_out[:, None] == s_in[None, :])
    assert got["auroc"] == pytest.approx(pairs.mean(), abs=1e-12)
    assert got["auroc"] == pytest.approx(blr.entropy_auroc(test, ood), abs=1e-15)
    # AUPR as average precision: the mean, over the OOD inputs, of the precision when everything
    # scoring at least as high as that input is flagged.
    everything = np.concatenate([s_in, s_out])
    precision = [(s_out >= s).sum() / (everything >= s).sum() for s in s_out]
    assert got["aupr"] == pytest.approx(np.mean(precision), abs=1e-12)
    # FPR95: the smallest test-set score t with at least 95 % of the test scores <= t; the share
    # of OOD scores <= t.
    t = min(s for s in s_in if np.mean(s_in <= s) >= 0.95)
    assert got["fpr95"] == pytest.approx(np.mean(s_out <= t), abs=0)
    assert 0.5 < got["auroc"] <= 1 and 0 <= got["fpr95"] < 1


@pytest.mark.skipif(shutil.which("gnuplot") is None, reason="gnuplot is not installed")
def test_reliability_diagram_writes_a_png(tmp_path):
    log_probs, labels = _data()
    target = tmp_path / "it's a \"diagram\"\n.png"  # quotes and a line break in the path
    bins = blr.reliability_diagram(log_probs, labels, target, bins=10,
                                   title="title with ' and \n!rm -rf /")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert bins == blr.reliability_bins(log_probs, labels, 10)
    with pytest.raises(blr.Error):
        blr.reliability_diagram(log_probs, labels, tmp_path / "no-such-dir" / "x.png")


# D14: main's package accepted all of these and returned nonsense (NLL -0.098, ECE 903 671 for
# logits; NaN metrics for a NaN log-probability; float labels truncated).
def test_input_that_is_not_log_probabilities_is_refused():
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(20, 3, generator=generator) * 10
    labels = torch.randint(0, 3, (20,), generator=generator)
    log_probs = torch.log_softmax(torch.randn(20, 3, generator=generator), 1)
    with_nan = log_probs.clone()
    with_nan[0, 0] = float("nan")
    with_inf = log_probs.clone()
    with_inf[3, 2] = float("inf")
    calls = [lambda lp: blr.metrics(lp, labels),
             lambda lp: blr.reliability_bins(lp, labels),
             lambda lp: blr.fit_temperature(lp, labels),
             lambda lp: blr.entropy_auroc(log_probs, lp),
             lambda lp: blr.ood_metrics(lp, log_probs)]
    for bad in (logits, with_nan, with_inf, log_probs - math.log(2.0)):
        for call in calls:
            with pytest.raises(blr.Error) as error:
                call(bad)
            message = str(error.value)
            assert message.count(". ") == 0 and "\n" not in message, message  # one sentence
    with pytest.raises(blr.Error, match="log_softmax"):
        blr.metrics(logits, labels)
    for bad_labels in (labels.float(), labels > 0, labels + 3, labels[:19], labels - 1):
        with pytest.raises(blr.Error):
            blr.metrics(log_probs, bad_labels)
    # What is right still passes: float32 log-probabilities and int32 labels.
    assert blr.metrics(log_probs, labels.int())["count"] == 20
