"""The post-hoc Laplace posterior of a trained network, as laplace-torch users know it.

    la = blr.Laplace(model, "classification", subset="last-layer", structure="kron")
    la.fit(train_loader)                                  # curvature at the trained weights
    la.optimize_prior_precision(method="marglik")         # or "gridsearch" with val_loader=
    probs = la(x_test, link="probit")                     # or link="monte-carlo", samples=K

    la = blr.Laplace(model, "regression", sigma_noise=0.5).fit(train_loader)
    la.optimize_prior_precision(optimize_sigma_noise=True)  # δ and σ by the marginal likelihood
    f_mu, f_var = la(x_test)                               # predictive sd: √(f_var + σ²)

The posterior is N(θ*, (N·Ĝ + δI)⁻¹) over the chosen weights: Ĝ the mean generalised Gauss–Newton
(or empirical Fisher) over the N training examples, diagonal or Kronecker-factored per layer, and δ
the prior precision, by the Laplace marginal likelihood or by the validation NLL of the predictive
on a log-spaced grid (Daxberger et al. 2021, "Laplace Redux"; MacKay 1992). A classifier's
predictive is the linearised probit softmax(f/√(1 + π·diag(JΣJᵀ)/8)) or the average of K sampled
networks. A regression's likelihood is N(f, σ²I) (``sigma_noise`` σ, on the targets' scale); its
Ĝ is diag(JᵀJ)/σ², and its predictive of f is N(f*, diag(JΣJᵀ)) linearised (``link="probit"``,
laplace-torch's "glm") or the mean and variance of K sampled networks (``link="monte-carlo"``);
add σ² for the targets'. The choices are spelled as in every door of blr (``blr laplace
--subset last-layer --predictive monte-carlo``); laplace-torch's ``"last_layer"`` and ``"mc"`` are
read as ``"last-layer"`` and ``"monte-carlo"``.

It runs the C++ pipeline of ``blr laplace`` (include/blr/torch/laplace_fit.hpp,
laplace_prior_search.hpp, laplace_predictive.hpp) on a TorchScript copy of the model
(``torch.jit.script``, or ``torch.jit.trace`` on ``example_input`` for a model that does not script):
the same numbers as the command on the same model and data. The model itself is not changed.
"""

import torch

from . import _blr
from ._blr import Error
from ._torchscript import examples, script_archive


class Laplace:
    """A post-hoc Laplace posterior of a trained classifier or regression network (see the
    module's text)."""

    def __init__(self, model, likelihood="classification", subset="all", structure="diag",
                 curvature="ggn", seed=0, example_input=None, sigma_noise=1.0):
        if likelihood not in ("classification", "regression"):
            raise Error(f"Laplace: the likelihood must be 'classification' or 'regression'; got "
                        f"'{likelihood}'.")
        if likelihood == "classification" and sigma_noise != 1.0:
            raise Error("Laplace: sigma_noise is the noise of a regression likelihood; a "
                        "classification has none.")
        archive, origin = script_archive(model, example_input, "Laplace")
        self.likelihood = likelihood
        self.subset, self.structure, self.curvature = subset, structure, curvature
        self._impl = _blr.Laplace(archive, origin, subset, curvature, structure, int(seed),
                                  likelihood, float(sigma_noise))

    @property
    def sigma_noise(self):
        """Regression: σ of the likelihood N(f, σ²I). Setting it rescales a fitted posterior
        (the curvature scales with 1/σ²; δ is kept)."""
        return self._impl.noise_std

    @sigma_noise.setter
    def sigma_noise(self, value):
        self._impl.noise_std = float(value)

    def fit(self, train_loader, batch_size=500):
        """The curvature over the training data (a DataLoader of (x, y) or an (x, y) pair) at the
        model's weights, and δ by the marginal likelihood."""
        x, y = examples(train_loader, "Laplace.fit")
        self._impl.fit(x, y, int(batch_size))
        return self

    @property
    def prior_precision(self):
        """δ (the posterior's current prior precision)."""
        return self._impl.prior_precision

    @prior_precision.setter
    def prior_precision(self, value):
        self._impl.prior_precision = float(value)

    def optimize_prior_precision(self, method="marglik", val_loader=None, grid=(1e-4, 1e4, 17),
                                 link="probit", samples=100, optimize_sigma_noise=False):
        """Sets δ: "marglik" maximises the Laplace marginal likelihood (with
        ``optimize_sigma_noise``, a regression's σ too, jointly); "gridsearch" takes the δ of
        ``grid`` = (min, max, points), log-spaced, with the lowest NLL of the predictive
        (``link``, ``samples`` draws for "monte-carlo"; a regression's with its σ) on ``val_loader``.
        Returns a dict with the chosen δ (and σ; for gridsearch the grid, its NLLs and whether
        the best δ is at the grid's edge)."""
        if optimize_sigma_noise and (self.likelihood != "regression" or method != "marglik"):
            raise Error("Laplace.optimize_prior_precision: optimize_sigma_noise chooses a "
                        "regression's σ by the marginal likelihood, with method 'marglik'.")
        if method == "marglik":
            if val_loader is not None:
                raise Error("Laplace.optimize_prior_precision: method 'marglik' uses the training "
                            "data only; val_loader is for method 'gridsearch'.")
            if optimize_sigma_noise:
                self.sigma_noise = self._impl.optimal_noise_std()
            self.prior_precision = self._impl.optimal_prior_precision()
            out = {"prior_precision": self.prior_precision,
                   "log_marginal_likelihood": self.log_marginal_likelihood()}
            if self.likelihood == "regression":
                out["sigma_noise"] = self.sigma_noise
            return out
        if method != "gridsearch":
            raise Error(f"Laplace.optimize_prior_precision: method must be 'marglik' or 'gridsearch'; "
                        f"got '{method}'.")
        if val_loader is None:
            raise Error("Laplace.optimize_prior_precision: method 'gridsearch' needs val_loader (the "
                        "validation data).")
        try:
            low, high, points = grid
        except (TypeError, ValueError):
            raise Error(f"Laplace.optimize_prior_precision: grid must be (min, max, points); got "
                        f"{grid!r}.") from None
        x, y = examples(val_loader, "Laplace.optimize_prior_precision")
        return dict(self._impl.gridsearch(x, y, link, int(samples), float(low), float(high),
                                          int(points)))

    def log_marginal_likelihood(self, prior_precision=None, sigma_noise=None):
        """log Z(δ) at the given δ (default: the current one); a regression's at σ = sigma_noise
        (default: the current one)."""
        return self._impl.log_marginal_likelihood(
            None if prior_precision is None else float(prior_precision),
            None if sigma_noise is None else float(sigma_noise))

    def predictive_log_probs(self, x, link="probit", samples=100, batch_size=500):
        """log p(y | x, D), N×C: the linearised probit ("probit") or ``samples`` sampled networks
        ("monte-carlo")."""
        if not isinstance(x, torch.Tensor):
            raise Error(f"Laplace: the inputs must be a tensor; got {type(x).__name__}.")
        return self._impl.log_probs(x, link, int(samples), int(batch_size))

    def __call__(self, x, link="probit", samples=100, batch_size=500):
        """A classifier's p(y | x, D), N×C (laplace-torch's ``la(x, link_approx=...)``); a
        regression's predictive of f as (mean, variance), N×D each, without σ² (laplace-torch's
        ``f_mu, f_var = la(x)``)."""
        if self.likelihood == "regression":
            if not isinstance(x, torch.Tensor):
                raise Error(f"Laplace: the inputs must be a tensor; got {type(x).__name__}.")
            return self._impl.regression_predictive(x, link, int(samples), int(batch_size))
        return self.predictive_log_probs(x, link, samples, batch_size).exp()

    @property
    def posterior_variance(self):
        """σ² per parameter of the model (named_parameters order); 0 outside the subset."""
        return self._impl.posterior_variance()

    @property
    def mean(self):
        """θ* per parameter (a copy of the model's weights)."""
        return self._impl.mean()

    @property
    def parameter_names(self):
        return self._impl.names()

    @property
    def n_params(self):
        """Weights in the posterior (the subset's size)."""
        return self._impl.weights

    @property
    def n_data(self):
        return self._impl.examples
