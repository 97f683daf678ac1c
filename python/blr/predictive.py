"""The posterior predictive and its metrics.

``predictive(model, optimizer, inputs, samples=K)`` averages the softmax over K posterior samples,
    p(y | x) ≈ (1/K) Σ_k softmax(f(x; θ_k)),  θ_k ~ q,
computed as a log-mean-exp of log-softmaxes (no underflow for confident classes); with
``samples=0`` or an optimizer without a posterior it is the prediction at the mean. The metrics
are the C++ library's (the numbers ``blr train`` and ``blr eval`` print): accuracy, NLL, ECE,
adaptive and classwise ECE, AURC, Brier score, predictive entropy, reliability bins, and the
entropy AUROC, AUPR and FPR95 for out-of-distribution detection. Every metric refuses input that
is not log-probabilities (logits, NaN, rows not summing to 1) and labels that are not integer
class indices, with a ``blr.Error``.
"""

import math

import torch

from . import _blr


@torch.no_grad()
def predictive(model, optimizer, inputs, samples=64, batch_size=None):
    """Log-probabilities (N x C) of the posterior predictive with ``samples`` draws."""
    if samples < 0:
        raise _blr.Error(f"Option 'samples' must be >= 0; got {samples}.")
    batches = [inputs] if batch_size is None else torch.split(inputs, batch_size)
    use_posterior = samples > 0 and optimizer is not None and optimizer.has_posterior
    outputs = []
    for batch in batches:
        if not use_posterior:
            outputs.append(torch.log_softmax(model(batch), dim=-1))
            continue
        total = None
        for _ in range(samples):
            with optimizer.sampled_params(train=False):
                log_probs = torch.log_softmax(model(batch), dim=-1)
            total = log_probs if total is None else torch.logaddexp(total, log_probs)
        outputs.append(total - math.log(samples))
    return torch.cat(outputs)


def metrics(log_probs, labels, ece_bins=15):
    """Accuracy, NLL, ECE (``ece_bins`` and 20 bins), Brier score, mean entropy, adaptive ECE
    (equal-mass bins), classwise ECE and AURC (area under the risk-coverage curve), a dict."""
    return _blr.classification_metrics(log_probs, labels, ece_bins)


def reliability_bins(log_probs, labels, bins=15):
    """The reliability diagram's bins: lower, upper, count, confidence, accuracy."""
    return _blr.reliability_bins(log_probs, labels, bins)


def entropy_auroc(log_probs_in, log_probs_out):
    """AUROC of the predictive entropy separating a shifted set (out) from the test set (in)."""
    return _blr.entropy_auroc(log_probs_in, log_probs_out)


def ood_metrics(log_probs_in, log_probs_out):
    """OOD detection with predictive entropy as the score, test set (in) against an OOD set (out):
    a dict with ``auroc``, ``aupr`` (OOD as the positive class) and ``fpr95`` (the share of OOD
    inputs accepted when 95 % of the test inputs are; lower is better)."""
    return _blr.entropy_ood_metrics(log_probs_in, log_probs_out)


def fit_temperature(log_probs, labels):
    """Temperature scaling (Guo et al. 2017), the post-hoc calibration baseline: the T > 0 that
    minimises the NLL of ``softmax(log_probs / T)`` on held-out data (fit it on a validation split,
    never the test set). A dict: temperature, nll_before, nll_after, at_bound."""
    return _blr.fit_temperature(log_probs, labels)


def scale_temperature(log_probs, temperature):
    """``log_softmax(log_probs / temperature)``: a predictive after temperature scaling."""
    return _blr.scale_temperature(log_probs, float(temperature))


def ensemble(member_log_probs):
    """A deep ensemble's log-probabilities (Lakshminarayanan et al. 2017): the log of the members'
    averaged probabilities, from a list of their log-probabilities (each N x C)."""
    return _blr.ensemble_log_probs(list(member_log_probs))
