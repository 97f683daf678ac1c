"""The core's Bayesian inference on NumPy arrays (the C++ behind ``blr infer``).

* ``glm(x, y, likelihood, method, ...)``: Bayesian linear, logistic or Poisson regression by
  Laplace (the BLR with the delta method at ρ = 1: Newton's method, Khan & Rue 2023 §1.3.2) or CVI
  (Khan & Lin 2017), with ``sensitivities=True`` the memory-perturbation quantities of every
  training example and the leave-one-out estimates (Nickl et al. 2023). The design is used as
  given: add an intercept column yourself (``prior_precision`` takes one number per column, so it
  can have a weak prior). A Gaussian likelihood's noise precision is estimated unless
  ``noise_precision`` is given: the exact Normal–Gamma posterior (Student-t coefficients), as
  ``blr infer linreg``; ``assumptions`` says in words what was assumed.
* ``kalman(y, transition, observation, state_noise, obs_noise, init_mean, init_cov)``: the Kalman
  filter and RTS smoother (the BLR's conjugate Gaussian updates, §5.1); ``structural(y,
  model="local-level"|"local-linear-trend", obs_var, state_var, fit=False)`` the structural models
  of ``blr infer kalman``, variances given or fitted by maximum likelihood. Both return a
  ``KalmanResult`` (``summary()``, ``interval(level)``, ``forecast(steps)``, dict-style access).
* ``gmm(x, components, covariance, method="em"|"vmp"|"svi")``: a Gaussian mixture by EM (the BLR
  with a mixture family) or a Bayesian mixture's mean-field posterior; returns a
  ``MixtureResult`` (``summary()``, ``predict(x)``, ``predict_proba(x)``, dict-style access).
* ``gp_regression(x, y, kernel="rbf", ard=False, ...)`` and ``gp_classification(x, y, kernel,
  ard, method="laplace"|"cvi", ...)``: Gaussian processes with kernel expressions (sums of
  products of rbf, matern32, matern52, linear, white and constant; ARD length-scales), the
  hyperparameters learned by L-BFGS on the evidence (``learn=True``), and predictions at
  ``x_new``: what ``blr infer gpr|gpc`` runs, equal to scikit-learn's evidence on the same kernel;
  they return a ``GpResult`` (``summary()``, ``interval(level)``, ``predict(x)``, dict-style
  access to the keys they always returned).
* ``conjugate(y, likelihood, prior=None, method="exact")``: the exact posterior of a
  Beta–Bernoulli, Gamma–Poisson, Dirichlet–categorical or Normal–Gamma model (one BLR step with
  ρ = 1; VMP or SVI for the Normal–Gamma mean field), as ``blr infer conjugate``; returns a
  ``ConjugateResult``.
* ``merge(prior_mean, prior_precision, means, precisions, scale=1)``: Gaussian posteriors fitted
  from one prior merged in natural parameters, λ₀ + scale·Σ(λ_t − λ₀) (Daheim et al. 2024); for
  conjugate models on disjoint data the full-data posterior.

``methods()`` lists every inference method with its options (the registry ``blr methods``
prints). ``glm`` returns a ``GlmResult``: ``summary()`` (a statsmodels-like table), ``interval(level)``,
``predict(x)``, ``to_dict()`` and dict-style access to every entry (``r["mean"]``); ``conjugate``
a ``ConjugateResult`` (``summary()``, ``interval(level)``, ``to_dict()``). The other
results are dicts of NumPy arrays and Python numbers.
Arguments that do not fit (an array of the wrong dimension, a misspelled keyword, ...) raise
``blr.Error`` with one sentence naming the argument (``_arguments.py``).
"""

import functools as _functools
import json as _json

from ._arguments import Error, call, wrap
from ._blr import infer as _infer


def methods():
    """The registry of inference methods (``blr methods``; docs/inference.md, "Methods"): a list
    of dicts with model, method, summary, reference, the library function (fit), the CLI command,
    the Python call and the options of its iterative part (key, type, default, allowed, help)."""
    return _json.loads(_infer._methods_json())


@_functools.cache
def _registry():
    """methods(), read once for the keyword checks and docstrings (not handed out)."""
    return methods()


def _tables(model, method=None):
    """The option tables of ``model``'s methods (all, or ``method``'s) in the registry, as
    {key: [(method, default, help), ...]}."""
    out = {}
    for entry in _registry():
        if entry["model"] == model and method in (None, entry["method"]):
            for o in entry["options"] or []:
                out.setdefault(o["key"], []).append((entry["method"], o["default"], o["help"]))
    return out


def shared_options():
    """The option tables several methods share (``blr methods``' "Shared options"): the
    predictive of new rows, the per-example sensitivities and the GP hyperparameters' search
    (``blr methods --shared-json`` writes the same), as
    {name: {"applies_to": ..., "options": [{key, type, default, allowed, help, default_text,
    defaults_after}, ...]}}. ``default_text`` is the default as ``--help`` says it (per method
    where the methods' defaults differ); ``defaults_after`` lists them per method."""
    return _json.loads(_infer._shared_options_json())


@_functools.cache
def _shared_tables():
    """shared_options(), read once for the keyword checks and docstrings (not handed out)."""
    return shared_options()


def _shared_doc(name, when):
    """One line of a docstring's ``**options`` section: shared table ``name``'s keys, taken
    ``when`` (e.g. "with sensitivities=True"), with their defaults as the CLI's help says them."""
    items = [f"``{o['key']}`` = {o['default_text']} ({o['help']})"
             for o in _shared_tables()[name]["options"]]
    return f"    * {when}: " + "; ".join(items) + "."


def _options_doc(model, skip=()):
    """The ``**options`` section of a function's docstring, generated from the registry: each
    method's keys with their defaults and meaning."""
    lines = ["", "", "    ``**options`` are the method's options, named as in its option table (``blr methods``;",
             "    ``blr infer`` spells them as flags, --max-iterations); a key that the method's table",
             "    lacks raises blr.Error naming where it applies. Per method:", ""]
    for entry in _registry():
        if entry["model"] != model or not entry["options"]:
            continue
        keys = [o for o in entry["options"] if o["key"] not in skip]
        items = "; ".join(
            f"``{o['key']}`` = {'not set' if o.get('unset_by_default') else repr(o['default'])} "
            f"({o['help']})" for o in keys)
        lines.append(f"    * {entry['method']}: {items}.")
    return "\n".join(lines)


def _check_keywords(name, options, explicit, model, shared=()):
    """A keyword that is neither the function's nor any table's of ``model`` (or of the ``shared``
    tables it takes): one sentence with the closest spelling."""
    import difflib
    known = list(explicit) + list(_tables(model))
    for table in shared:
        known += [o["key"] for o in _shared_tables()[table]["options"]]
    for key in options:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise Error(f"{name}() got an unexpected keyword argument '{key}'{hint}.")


def _check_level(level, name):
    if not isinstance(level, (int, float)) or not 0 < level < 1:
        raise Error(f"{name}: level must lie strictly between 0 and 1 (0.95 for 95% intervals); "
                    f"got {level!r}.")


class Summary:
    """The text of ``GlmResult.summary()`` or ``ConjugateResult.summary()``; ``print`` it, or
    read ``as_text()``."""

    def __init__(self, text):
        self._text = text

    def as_text(self):
        return self._text

    def __str__(self):
        return self._text

    __repr__ = __str__


class _DictAccess:
    """``r[key]``, ``key in r`` and ``keys()`` over the result's dict (``self._dict``)."""

    def __getitem__(self, key):
        return self._dict[key]

    def __contains__(self, key):
        return key in self._dict

    def keys(self):
        return self._dict.keys()


class _JsonSummary(_DictAccess):
    """A result whose C++ side writes the command's JSON (``to_json_text(level)``) and a table
    (``table(level)``): ``to_dict``, ``summary`` and ``interval`` from them; ``_ARRAYS`` are the
    keys returned as NumPy arrays."""

    _ARRAYS = ()

    def to_dict(self, level=0.95):
        _check_level(level, f"{type(self).__name__}.to_dict()")
        import numpy as np
        d = _json.loads(self._result.to_json_text(level))
        for key in self._ARRAYS:
            if key in d:
                d[key] = np.asarray(d[key], dtype=float)
        return d

    def summary(self, level=0.95):
        _check_level(level, f"{type(self).__name__}.summary()")
        return Summary(self._result.table(level))

    def interval(self, level=0.95):
        import numpy as np
        d = self.to_dict(level)
        return np.column_stack([d["lower"], d["upper"]])


class GlmResult(_DictAccess):
    """A Bayesian GLM posterior with what a statistician reads off it (inference/glm_summary.hpp,
    the summary ``blr infer linreg|logistic|poisson`` prints):

    * ``summary(level=0.95)``: n, k, iterations, convergence, log-likelihood at the posterior
      mean, the intercept-only one, pseudo-R² (R² for a Gaussian likelihood), AIC, BIC, WAIC, the
      log evidence or ELBO, and every coefficient's mean, sd and interval, as a table;
    * ``interval(level=0.95)``: a (k, 2) array of equal-tailed credible intervals (Student t with
      the noise unknown, else Gaussian), as statsmodels' ``conf_int()`` is laid out;
    * ``predict(x, level=0.95, predictive="quadrature")``: the predictive of new rows, a dict of
      columns: mean, sd, lower, upper (Gaussian; noise included), probability, lower, upper
      (logistic; the interval of σ(a*)), rate_mean, rate_sd, lower, upper (Poisson);
    * ``plot(path, level=0.95)``: the forest plot of the coefficients (``blr infer --out``'s
      coefficients.png) as a PNG file;
    * ``to_dict(level=0.95)``: every number, as the dict ``glm`` returned before it returned this;
      ``r[key]``, ``key in r`` and ``keys()`` read that dict.
    """

    def __init__(self, result):
        self._result = result
        self._dict = result.to_dict()

    def summary(self, level=0.95):
        _check_level(level, "GlmResult.summary()")
        return Summary(call(self._result.table, "GlmResult.summary", level))

    def interval(self, level=0.95):
        _check_level(level, "GlmResult.interval()")
        import numpy as np
        d = self._result.to_dict(level)
        return np.column_stack([d["lower"], d["upper"]])

    def predict(self, x, level=0.95, predictive="quadrature", samples=2000, seed=0,
                quadrature_nodes=32):
        _check_level(level, "GlmResult.predict()")
        return call(self._result.predict, "GlmResult.predict", x, level, predictive, samples,
                    seed, quadrature_nodes)

    def plot(self, path, level=0.95, intercept=False, title=None):
        """The forest plot of the coefficients' means and intervals at ``level`` (the picture
        ``blr infer --out DIR`` draws as coefficients.png), written to the PNG file ``path``;
        the intercept (a column named "(intercept)" or "const") is left out unless
        ``intercept=True``, since its scale differs. Returns the rows drawn."""
        _check_level(level, "GlmResult.plot()")
        from .plots import coefficient_plot
        d = self._result.to_dict(level)
        keep = [i for i, n in enumerate(d["names"])
                if intercept or n not in ("(intercept)", "const")]
        if not keep:
            raise Error("GlmResult.plot(): every coefficient is an intercept; give "
                        "intercept=True to draw it.")
        heading = title if title is not None else (
            f"{d['likelihood']} regression, {d['method']} posterior")
        return coefficient_plot([d["names"][i] for i in keep], d["mean"][keep], d["lower"][keep],
                                d["upper"][keep], path, level, heading)

    def to_dict(self, level=0.95):
        _check_level(level, "GlmResult.to_dict()")
        return self._result.to_dict(level)

    @property
    def names(self):
        return list(self._dict["names"])

    @property
    def mean(self):
        return self._dict["mean"]

    @property
    def covariance(self):
        return self._dict["covariance"]

    @property
    def fit_statistics(self):
        return dict(self._dict["fit_statistics"])


    def __repr__(self):
        f = self._dict["fit_statistics"]
        return (f"<blr.infer.GlmResult: {self._dict['likelihood']} by {self._dict['method']}, "
                f"n = {f['observations']}, k = {f['parameters']}, WAIC {f['waic']:.3f}>")


_glm = wrap(_infer.glm, "blr.infer.glm")


def glm(x, y, likelihood="logistic", method="laplace", prior_precision=1.0, prior_mean=None,
        noise_precision=None, noise_prior=None, family="gaussian-full", sensitivities=False,
        names=None, cvi_start="laplace", **options):
    """Bayesian GLM (logistic, Poisson or Gaussian likelihood; prior N(prior_mean,
    diag(prior_precision)^-1), prior_precision one number or one per column) by Laplace (the BLR
    with the delta method, rho = 1), CVI (``family`` "gaussian-full", "gaussian-diag" or
    "mixture:K", the spellings of ``blr infer --family``; a fit that stops at its
    ``max_iterations`` unconverged raises blr.Error). ``family="mixture:K"`` (method cvi) is a
    mixture of K Gaussians by mixture VI (Khan & Rue 2023, eqs. 29–30) started around the Laplace
    mode: ``iterations`` steps of ``rho``, draws from ``seed`` (its table: "mixture-vi" below); keys weights, means,
    covariances, elbo, elbo_se, and mean/covariance are the mixture's moments. Gaussian: the noise precision is unknown unless ``noise_precision`` is given
    (Jeffreys' prior, or ``noise_prior=(a, b)`` for Gamma(a, b); prior_precision then in units of
    it): the exact Normal-Gamma posterior with Student-t coefficients (keys dof, scale,
    noise_shape, noise_rate, noise_precision = E[tau | y]), or with method='cvi' E[tau | y] held
    fixed. ``names`` names the columns of x (default x0, x1, ...). With ``sensitivities=True``
    also the per-example MPE quantities and leave-one-out estimates (key ``sensitivity``;
    their options ``sites`` and ``quadrature_nodes`` as ``blr sensitivity --sites``).
    ``method="exact"`` (Gaussian only) is linear regression's closed-form posterior, as ``blr
    infer linreg``. ``cvi_start`` is CVI's start for a Gaussian family, as ``blr infer
    --cvi-start``: "laplace" (the Laplace posterior, the default) or "prior" (the same fixed
    point; from a weak intercept prior the first steps can fail on large data). Returns a
    ``GlmResult``."""
    _check_keywords("blr.infer.glm", options, _GLM_KEYWORDS, "glm", shared=("sensitivity",))
    return GlmResult(_glm(x, y, likelihood, method, prior_precision, prior_mean, noise_precision,
                          noise_prior, family, sensitivities, names, cvi_start, options))


_GLM_KEYWORDS = ("x", "y", "likelihood", "method", "prior_precision", "prior_mean",
                 "noise_precision", "noise_prior", "family", "sensitivities", "names", "cvi_start")
glm.__doc__ += (_options_doc("glm", skip={"family", "alpha", "beta"}) + "\n"
                + _shared_doc("sensitivity", "with sensitivities=True (as blr sensitivity)"))

class ConjugateResult(_JsonSummary):
    """A conjugate model's posterior (inference/conjugate_summary.hpp, what ``blr infer
    conjugate`` prints and writes):

    * ``summary(level=0.95)``: n, the log evidence (exact) or the ELBO (VMP, SVI), the posterior
      in words and each quantity's mean, sd and exact equal-tailed interval, as a table;
    * ``interval(level=0.95)``: a (k, 2) array of those intervals (Beta, Gamma, Student t or
      Gaussian quantiles, each quantity's own law);
    * ``to_dict(level=0.95)``: every number, the JSON ``blr infer conjugate --json`` writes
      (less the file's column name); ``r[key]``, ``key in r`` and ``keys()`` read it at 0.95.
    """

    _ARRAYS = ("mean", "sd", "lower", "upper", "correlation")

    def __init__(self, result):
        self._result = result
        self._dict = self.to_dict()

    @property
    def names(self):
        return list(self._dict["names"])

    @property
    def mean(self):
        return self._dict["mean"]


    def __repr__(self):
        d = self._dict
        fit = (f"log evidence {d['log_evidence']:.4f}" if "log_evidence" in d
               else f"ELBO {d['elbo']:.4f}")
        return (f"<blr.infer.ConjugateResult: {d['likelihood']} by {d['method']}, "
                f"n = {d['observations']}, {fit}>")


_conjugate = wrap(_infer.conjugate, "blr.infer.conjugate")


def conjugate(y, likelihood, prior=None, method="exact", classes=None, **options):
    """The posterior of a conjugate model of the observations ``y`` (a 1-D array), what ``blr
    infer conjugate`` computes: ``likelihood`` "bernoulli" (y of 0 and 1; prior (a, b) of
    Beta(a, b), default (1, 1)), "poisson" (counts; prior (shape, rate), default (1, 1)),
    "categorical" (labels; ``classes`` lists the K class names in index order, default the
    distinct labels in order of first appearance; prior one concentration per class, default 1)
    or "normal" (reals; prior (mu0, kappa0, alpha0, beta0) of the Normal–Gamma, default (0, 1, 1,
    1)). ``method`` "exact" (one BLR step with ρ = 1, the log evidence exact); for "normal" also
    "vmp" (mean-field VMP; a run that stops at its ``max_iterations`` unconverged raises
    blr.Error) or "svi" (``iterations`` minibatch steps of ``batch_size`` drawn from ``seed``).
    Returns a ``ConjugateResult``."""
    _check_keywords("blr.infer.conjugate", options,
                    ("y", "likelihood", "prior", "method", "classes"), "conjugate")
    import numpy as np
    if likelihood == "categorical":
        labels = [str(v) for v in np.asarray(y).ravel()]
        if classes is None:
            classes = list(dict.fromkeys(labels))
        classes = [str(c) for c in classes]
        index = {c: k for k, c in enumerate(classes)}
        unknown_labels = [v for v in labels if v not in index]
        if unknown_labels:
            raise Error(f"blr.infer.conjugate: label '{unknown_labels[0]}' is not one of the "
                        f"classes {classes}.")
        y = np.asarray([index[v] for v in labels], dtype=float)
    elif classes is not None:
        raise Error(f"blr.infer.conjugate: classes applies only to likelihood='categorical'; got "
                    f"likelihood='{likelihood}'.")
    return ConjugateResult(_conjugate(y, likelihood, None if prior is None else list(prior),
                                      method, classes or [], options))


conjugate.__doc__ += _options_doc("conjugate")


class KalmanResult(_DictAccess):
    """A state-space posterior (inference/kalman_summary.hpp, what ``blr infer kalman`` prints and
    writes):

    * ``summary(level=0.95)``: steps, observed steps, states, outputs, the log-likelihood and the
      first state's smoothed marginals, as text;
    * ``interval(level=0.95, state=0, smoothed=True)``: a (T, 2) array of the state's
      equal-tailed intervals m ± z·sd (filtered with ``smoothed=False``);
    * ``bands(state=0, level=0.95, smoothed=True)``: that state's mean, sd, lower and upper;
    * ``forecast(steps, level=0.95)``: every output's predictive mean, sd, lower and upper
      ``steps`` steps past the data (arrays of steps × outputs);
    * ``to_dict()``: filtered, predicted and smoothed moments (row t of a ``*_cov`` matrix is
      vec(P_t)), the log-likelihood, the state names and, for ``structural``, the model's
      variances, the assumptions taken and the fit's evaluations; ``r[key]``, ``key in r`` and
      ``keys()`` read it.
    """

    def __init__(self, result):
        self._result = result
        self._dict = result.to_dict()

    def to_dict(self):
        return dict(self._dict)

    def summary(self, level=0.95):
        _check_level(level, "KalmanResult.summary()")
        return Summary(self._result.table(level))

    def bands(self, state=0, level=0.95, smoothed=True):
        _check_level(level, "KalmanResult.bands()")
        return call(self._result.bands, "KalmanResult.bands", state, level, smoothed)

    def interval(self, level=0.95, state=0, smoothed=True):
        import numpy as np
        b = self.bands(state, level, smoothed)
        return np.column_stack([b["lower"], b["upper"]])

    def forecast(self, steps, level=0.95):
        _check_level(level, "KalmanResult.forecast()")
        return call(self._result.forecast, "KalmanResult.forecast", steps, level)

    @property
    def log_likelihood(self):
        return self._dict["log_likelihood"]


    def __repr__(self):
        d = self._dict
        return (f"<blr.infer.KalmanResult: {d['filtered_mean'].shape[0]} steps, states "
                f"{d['states']}, log-likelihood {d['log_likelihood']:.4f}>")


_kalman = wrap(_infer.kalman, "blr.infer.kalman")
_structural = wrap(_infer.structural, "blr.infer.structural")


def kalman(y, transition, observation, state_noise, obs_noise, init_mean, init_cov, smooth=True,
           states=None, **unknown):
    """The Kalman filter and RTS smoother (the BLR's conjugate Gaussian updates, §5.1) of the
    linear-Gaussian model x_t = A x_{t-1} + N(0, Q), y_t = C x_t + N(0, R), x_1 ~ N(m_1, P_1)
    over the rows of y (T x p; a NaN row is missing, an infinite value raises blr.Error naming
    its row); ``states`` names the states. Returns a ``KalmanResult``."""
    if unknown:  # a misspelled keyword: the C++ signature's sentence, with "did you mean"
        _kalman(y, transition, observation, state_noise, obs_noise, init_mean, init_cov, **unknown)
    return KalmanResult(_kalman(y, transition, observation, state_noise, obs_noise, init_mean,
                                init_cov, smooth, states))


def structural(y, model="local-level", obs_var=None, state_var=None, slope_var=None,
               init_mean=None, init_var=None, fit=False, **options):
    """A structural time-series model of the series ``y`` (1-D; NaN: missing), what ``blr infer
    kalman --model`` runs: ``model`` "local-level" (y_t = mu_t + N(0, obs_var), mu_{t+1} = mu_t +
    N(0, state_var)) or "local-linear-trend" (a slope with variance ``slope_var``). The variances
    are given, or with ``fit=True`` fitted by maximum likelihood (Nelder–Mead on log variances,
    started from the given ones; a fit that stops at ``max_evaluations`` raises blr.Error). The
    initial level defaults to the first observation and its variance to 1e7 (a diffuse start),
    as ``assumptions`` says. Returns a ``KalmanResult`` (with the variances in ``r["obs_var"]``,
    ...)."""
    _check_keywords("blr.infer.structural", options,
                    ("y", "model", "obs_var", "state_var", "slope_var", "init_mean", "init_var",
                     "fit"), "kalman")
    import numpy as np
    y = np.asarray(y, dtype=float)
    if y.ndim == 1:
        y = y.reshape(-1, 1)
    return KalmanResult(_structural(y, model, obs_var, state_var, slope_var, init_mean, init_var,
                                    fit, options))


structural.__doc__ += _options_doc("kalman")


class MixtureResult(_DictAccess):
    """A Gaussian-mixture fit (inference/mixture_summary.hpp, what ``blr infer gmm`` prints and
    writes):

    * ``summary(columns=None)``: the method, n, the free parameters, iterations, convergence,
      the log-likelihood (EM: AIC and BIC, as scikit-learn's GaussianMixture.aic/.bic; VMP/SVI:
      the ELBO) and each component's weight, means and sds, as text;
    * ``predict(x)``: each row's most probable component; ``predict_proba(x)``: the
      responsibilities π_k N(x | μ_k, Σ_k) / Σ_j π_j N(x | μ_j, Σ_j); ``log_density(x)``;
    * ``to_dict()``: weights, means (K, D), covariances, the training rows' responsibilities,
      log_likelihood, iterations, converged, observations, parameters, aic and bic (EM) or elbo;
      ``r[key]``, ``key in r`` and ``keys()`` read it.
    """

    def __init__(self, result):
        self._result = result
        self._dict = result.to_dict()

    def to_dict(self):
        return dict(self._dict)

    def summary(self, columns=None):
        return Summary(call(self._result.table, "MixtureResult.summary", list(columns or [])))

    def predict(self, x):
        import numpy as np
        return np.asarray(call(self._result.predict, "MixtureResult.predict", x))

    def predict_proba(self, x):
        return call(self._result.predict_proba, "MixtureResult.predict_proba", x)

    def log_density(self, x):
        return call(self._result.log_density, "MixtureResult.log_density", x)


    def __repr__(self):
        d = self._dict
        return (f"<blr.infer.MixtureResult: {len(d['weights'])} components by {d['method']}, "
                f"n = {d['observations']}, log-likelihood {d['log_likelihood']:.4f}>")


_gmm = wrap(_infer.gmm, "blr.infer.gmm")


def gmm(x, components=2, method="em", alpha0=None, **options):
    """A Gaussian mixture of the rows of x, what ``blr infer gmm`` fits: ``method`` "em" (the
    maximum-likelihood mixture by EM, the BLR with a mixture family; k-means++ start from
    ``seed``; ``covariance`` "full" or "diag"), "vmp" (the mean-field posterior of a Bayesian
    mixture, Dirichlet(``alpha0``, default 1/K) weights and Normal–Wishart components) or "svi"
    (the same from ``iterations`` minibatches of ``batch_size``); vmp and svi take the mixture's
    ``components`` and ``covariance`` from EM's table (vmp also its start's ``seed``). A run that
    stops at ``max_iterations`` unconverged raises blr.Error. Returns a ``MixtureResult``."""
    _check_keywords("blr.infer.gmm", options, ("x", "components", "method", "alpha0"), "gmm")
    return MixtureResult(_gmm(x, method, alpha0, dict(options, components=components)))


gmm.__doc__ += _options_doc("gmm")


merge = wrap(_infer.merge, "blr.infer.merge")
class GpResult(_JsonSummary):
    """A Gaussian-process fit (inference/gp_summary.hpp, what ``blr infer gpr|gpc`` prints and
    writes):

    * ``summary(level=0.95)``: the kernel with its hyperparameters, σₙ² and ȳ (regression), the
      log marginal likelihood or the ELBO and its gradient, the hyperparameter search, and the
      range of the latent marginals at the training inputs, as text;
    * ``interval(level=0.95)``: an (n, 2) array of the latent f's intervals at the training
      inputs;
    * ``predict(x, level=0.95, predictive="quadrature")``: the predictive of new inputs, a dict of
      columns: mean, sd, lower, upper of y* (regression, noise included), or probability, lower,
      upper (classification: E[σ(f*)] and σ of f*'s interval);
    * ``to_dict(level=0.95)``: every number, the JSON ``blr infer gpr|gpc --json`` writes (less
      the file's names); ``r[key]``, ``key in r`` and ``keys()`` read the dict these functions
      returned before they returned this (parameters, log_marginal_likelihood or elbo, gradient,
      fitted_mean, fitted_variance and, with ``x_new``, mean, variance, predictive_variance or
      probability).
    """

    _ARRAYS = ("mean", "sd", "lower", "upper", "hyperparameter_gradient")

    def __init__(self, legacy, result):
        self._dict = legacy
        self._result = result

    def predict(self, x, level=0.95, predictive="quadrature", samples=2000, seed=0,
                quadrature_nodes=32):
        _check_level(level, "GpResult.predict()")
        return call(self._result.predict, "GpResult.predict", x, level, predictive, samples,
                    seed, quadrature_nodes)


    def __repr__(self):
        d = self._dict
        objective = ("log marginal likelihood", d["log_marginal_likelihood"]) \
            if "log_marginal_likelihood" in d else ("ELBO", d["elbo"])
        return f"<blr.infer.GpResult: {d['kernel_description']}, {objective[0]} {objective[1]:.4f}>"


_gp_regression = wrap(_infer.gp_regression, "blr.infer.gp_regression")
_gp_classification = wrap(_infer.gp_classification, "blr.infer.gp_classification")


def gp_regression(x, y, kernel="rbf", ard=False, lengthscale=1.0, variance=1.0,
                  noise_variance=1.0, learn=True, x_new=None, **options):
    _check_keywords("blr.infer.gp_regression", options, (), "gpr", shared=("hyperparameters",))
    return GpResult(*_gp_regression(x, y, kernel, ard, lengthscale, variance, noise_variance,
                                    learn, x_new, options))


def gp_classification(x, y, kernel="rbf", ard=False, lengthscale=1.0, variance=1.0,
                      method="laplace", learn=True, x_new=None, **options):
    _check_keywords("blr.infer.gp_classification", options, (), "gpc",
                    shared=("hyperparameters",))
    return GpResult(*_gp_classification(x, y, kernel, ard, lengthscale, variance, method, learn,
                                        x_new, options))


_LEARN = "with learn=True (the kernel's L-BFGS)"
gp_regression.__doc__ = (_infer.gp_regression.__doc__.split("\n\n")[-1]
                         + "\nReturns a ``GpResult``." + _options_doc("gpr") + "\n"
                         + _shared_doc("hyperparameters", _LEARN))
gp_classification.__doc__ = (_infer.gp_classification.__doc__.split("\n\n")[-1]
                             + "\nReturns a ``GpResult``." + _options_doc("gpc") + "\n"
                             + _shared_doc("hyperparameters", _LEARN + "; not max_iterations, "
                                           "the method's"))

__all__ = ["methods", "shared_options", "glm", "GlmResult", "Summary", "conjugate", "ConjugateResult", "KalmanResult", "structural", "MixtureResult", "GpResult", "kalman", "gmm", "merge", "gp_regression", "gp_classification"]
