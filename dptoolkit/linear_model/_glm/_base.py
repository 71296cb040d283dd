r"""What the linear models of this package share: the objective and data
preparation of the L2-regularised models (eq. 1 of Damaskinos et al., AAAI 2021,
Damaskinos et al. (2021)), the DP-SCD / DP-SGD base with its validation and accounting, and the
outputs of every linear classifier (``decision_function`` / ``predict`` /
``predict_proba``, the logistic function written once).

The privacy model of :class:`_BaseLinearDP` (add/remove-one neighbours, the
public dataset size ``n_samples_public``) is stated in
:mod:`dptoolkit.linear_model._glm._scd`.
"""
import functools
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._docstrings import fill_doc
from ._params import GLMParams, GLMSteps
from ..._private import data_dependent_warning, PrivateEstimatorMixin
from ..._validation import (Boolean, check_scalar_range, check_X_y_named,
                            CLASSES, DELTA_GAUSSIAN, Interval, Options, POSITIVE,
                            PRIVATE_COMMON)
from ...accounting.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from ...exceptions import DataClippedWarning, PrivacyLeakWarning

__all__ = ["primal_objective", "softmax_objective"]

_NORMALIZE = ("l2", "clip", None)


# --------------------------------------------------------------------------- helpers
def primal_objective(X, y, coef, *, loss, alpha):
    r"""Primal objective :math:`F(\theta)` of Damaskinos et al. (2021) eq. 1 (not private).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Data exactly as the model sees it (already normalised).
    y : ndarray of shape (n_samples,)
        Targets; labels in {-1, +1} for the logistic and hinge losses.
    coef : ndarray of shape (n_features,)
    loss : {"squared", "logistic", "hinge"}
    alpha : float
        Regularisation strength :math:`\lambda`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``coef`` not of shape (n_features,), ``y`` not of shape (n_samples,),
        non-finite ``coef``, ``alpha`` < 0 or not finite, unknown ``loss``.
    """
    alpha = check_scalar_range(alpha, "alpha", low=0.0)
    coef = np.asarray(coef, dtype=np.float64)
    if coef.ndim != 1 or coef.shape[0] != X.shape[1]:
        raise ValueError(f"coef must be of shape (n_features,) = ({X.shape[1]},), got "
                         f"{coef.shape}")
    if not np.all(np.isfinite(coef)):
        raise ValueError("coef must be finite (no NaN or infinity)")
    a = np.asarray(X @ coef).ravel()
    y = np.asarray(y, dtype=np.float64)
    if y.shape != a.shape:
        raise ValueError(f"y must be of shape (n_samples,) = ({a.shape[0]},), got {y.shape}")
    if loss == "squared":
        per = 0.5 * (a - y) ** 2
    elif loss == "logistic":
        per = np.logaddexp(0.0, -y * a)
    elif loss == "hinge":
        per = np.maximum(0.0, 1.0 - y * a)
    else:
        raise ValueError(f"loss must be 'squared', 'logistic' or 'hinge', got {loss!r}")
    return float(per.mean() + 0.5 * alpha * np.dot(coef, coef))


def softmax_objective(X, codes, W, *, alpha):
    r"""Mean softmax cross-entropy plus :math:`\lambda/2 \|W\|_F^2` (not private).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, M)
        Data exactly as the model sees it.
    codes : ndarray of shape (n_samples,)
        Class indices in 0 .. K-1.
    W : ndarray of shape (M, K)
    alpha : float
        :math:`\lambda \ge 0`.

    Returns
    -------
    float
    """
    A = np.asarray(X @ W)
    lse = np.logaddexp.reduce(A, axis=1)
    per = lse - A[np.arange(A.shape[0]), codes]
    return float(per.mean() + 0.5 * alpha * np.sum(W * W))


def _canonical_csr(X):
    X = sp.csr_array(X)
    X.sum_duplicates()
    X.sort_indices()
    X.indices = X.indices.astype(np.int64, copy=False)
    X.indptr = X.indptr.astype(np.int64, copy=False)
    return X


def transform_rows(X, normalize, fit_intercept, intercept_scaling):
    """The per-example transformation of DP-SCD and DP-SGD (Damaskinos et al. (2021), eq. 1).

    Appends the intercept column, then bounds every row's L2 norm by 1 (a local
    operation): ``normalize="l2"`` scales every non-zero row to norm 1, ``"clip"``
    only the rows above 1, None leaves them.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    normalize : {"l2", "clip", None}
    fit_intercept : bool
    intercept_scaling : float

    Returns
    -------
    X : scipy.sparse CSR array of shape (n_samples, n_features + fit_intercept)
        Canonical, float64, int64 indices.
    sq : ndarray of shape (n_samples,)
        Squared row norms.

    Raises
    ------
    ValueError
        Unknown ``normalize``; X contains NaN or infinity.
    """
    if normalize not in _NORMALIZE:
        raise ValueError(f"normalize must be 'l2', 'clip' or None, got {normalize!r}")
    X = sp.csr_array(X, dtype=np.float64)
    if fit_intercept:
        const = sp.csr_array(np.full((X.shape[0], 1), float(intercept_scaling)))
        X = sp.hstack([X, const], format="csr")
    else:
        X = X.copy()
    X = _canonical_csr(X)
    if not np.all(np.isfinite(X.data)):
        raise ValueError("Input X contains NaN or infinity")
    with np.errstate(over="ignore"):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    huge = ~np.isfinite(sq)          # squaring overflowed: entries beyond ~1e154
    counts = np.diff(X.indptr)
    if np.any(huge):
        # ||x|| = m ||x / m|| with m the row's largest |entry|: the rows scaled to
        # [-1, 1] are normalised without overflow (any finite entry, up to 1e308).
        row_of = np.repeat(np.arange(X.shape[0]), counts)
        m = np.zeros(X.shape[0])
        np.maximum.at(m, row_of, np.abs(X.data))
        unit = X.data / np.where(m > 0, m, 1.0)[row_of]
        norm_unit = np.sqrt(np.bincount(row_of, weights=unit * unit, minlength=X.shape[0]))
    norms = np.sqrt(sq)
    if normalize == "l2":
        scale = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 1.0)
    elif normalize == "clip":
        over = norms > 1.0
        if np.any(over):  # one bit (that it happened), never how many
            data_dependent_warning("some examples have ||x_i||_2 > 1; they were scaled "
                                   "to norm 1 (a local operation: the guarantee is "
                                   "unchanged, the data the model sees is not)",
                                   DataClippedWarning, stacklevel=4)
        scale = np.where(over, 1.0 / np.maximum(norms, 1.0), 1.0)
    else:
        if np.any(huge):
            raise ValueError("X has entries too large for float64 arithmetic: a squared "
                             "row norm ||x_i||_2^2 overflows (entries must stay below "
                             "about 1e154); rescale X or use normalize='l2' or 'clip'")
        scale = np.ones_like(norms)
    if normalize is not None:
        X.data *= np.repeat(scale, counts)
        with np.errstate(invalid="ignore"):   # inf * 0 on the huge rows, redone below
            sq = sq * scale * scale
        if np.any(huge):             # those rows: unit / ||unit||, of norm 1
            r = huge[row_of]
            X.data[r] = unit[r] / norm_unit[row_of[r]]
            sq[huge] = np.bincount(row_of[r], weights=X.data[r] ** 2,
                                   minlength=X.shape[0])[huge]
    return X, sq


#: Largest ``n_epochs`` of DP-SCD and DP-SGD: a fit records one entry per epoch
#: and runs at least one step per epoch, so more epochs cannot run (the
#: records alone would not fit in memory) and are refused by name.
MAX_N_EPOCHS = 1e6

#: Largest number of steps of a private DP-SCD or DP-SGD fit: ``n_epochs / q``
#: steps, each a kernel call over a lot, cannot run beyond this (and would need
#: a noise multiplier beyond any use).
MAX_STEPS = 2**31 - 1

#: Largest ``max_iter`` of the Frank-Wolfe and IGHT estimators: they record one
#: entry per step (duality gaps) or compute a full-batch gradient per step, so
#: more steps cannot run and are refused by name.
MAX_ITER = 10**7

#: The constant feature ``fit_intercept`` appends (scikit-learn's
#: ``intercept_scaling`` of liblinear, fixed at its default 1).
INTERCEPT_SCALING = 1.0


def _linear_dp_constraints(losses, *, classifier, **extra):
    """``_parameter_constraints`` of a DP-SCD / DP-SGD estimator: the shared
    parameters, ``loss`` (``losses``), ``classes`` for a classifier, and ``extra``."""
    table = {**PRIVATE_COMMON, "delta": DELTA_GAUSSIAN, "alpha": POSITIVE,
             "batch_size": [Options("auto"), Interval("int", 1, None)],
             "n_epochs": [Interval("real", 0.0, MAX_N_EPOCHS, closed="right")],
             "normalize": [None, Options("l2", "clip")], "fit_intercept": [Boolean()],
             **extra}
    if classifier:
        table.update(loss=[Options(*losses)], classes=CLASSES)
    return table


def subsampled_gaussian_steps(noise_multiplier, sampling_rate, steps):
    """The event of ``steps`` Poisson-subsampled Gaussian steps (Abadi et al. 2016,
    Algorithm 1; Mironov, Talwar and Zhang 2019 for its RDP): the one event that
    DP-SGD and DP-SCD calibrate on and report."""
    return SelfComposedEvent(
        PoissonSampledEvent(sampling_rate, GaussianEvent(noise_multiplier)), steps)


def calibrate_noise_scale(make_event, *, epsilon, delta, what):
    """Smallest noise multiplier ``s`` whose event ``make_event(s)`` is
    (epsilon, delta)-DP: :func:`dptoolkit.accounting.calibrate_parameter` (the
    toolkit's one calibration routine), searched from 1 within
    [:data:`~dptoolkit.accounting.MIN_NOISE_MULTIPLIER`, 1e6] to relative 1e-6.
    ``what`` names the fit in the error raised when no noise meets the target."""
    from ...accounting import calibrate_parameter
    from ...accounting import MIN_NOISE_MULTIPLIER

    try:
        return float(calibrate_parameter(make_event, target_epsilon=epsilon, delta=delta,
                                         low=MIN_NOISE_MULTIPLIER, high=1e6,
                                         increasing=False, initial=1.0, rtol=1e-6))
    except ValueError as exc:
        if "meets epsilon" not in str(exc):
            raise
        raise ValueError(
            f"epsilon={epsilon!r} at delta={delta!r} cannot be met over {what}: the "
            "noise multiplier would exceed 1e6; lower n_epochs (fewer steps) or raise "
            "epsilon") from exc


@functools.lru_cache(maxsize=256)
def _calibrate(*, epsilon, delta, sampling_rate, steps):
    """Noise multiplier of ``steps`` subsampled Gaussian steps, calibrated on their
    event (memoised: a function of public parameters only)."""
    if steps > MAX_STEPS:
        raise ValueError(
            f"the fit would run {steps} steps (n_epochs / q, q = batch_size / "
            f"n_samples_public = {sampling_rate:.3g}); at most {MAX_STEPS} (2**31 - 1) "
            "can run: lower n_epochs or n_samples_public, or raise batch_size")
    return calibrate_noise_scale(
        lambda s: subsampled_gaussian_steps(s, sampling_rate, steps), epsilon=epsilon,
        delta=delta, what=f"{steps} steps of sampling rate {sampling_rate:.3g}")


@functools.lru_cache(maxsize=256)
def _epsilon_spent(event, delta):
    from ...accounting import epsilon_of_event

    return float(epsilon_of_event(event, delta))


def _record_steps(n_steps, n_epochs):
    """0-based step indices ending epochs 1, 2, ... and the last step."""
    per_epoch = n_steps / n_epochs
    ends = [int(round(e * per_epoch)) - 1 for e in range(1, int(math.floor(n_epochs)) + 1)]
    ends = [min(max(s, 0), n_steps - 1) for s in ends]
    epochs = list(range(1, len(ends) + 1))
    if not ends or ends[-1] != n_steps - 1:
        ends.append(n_steps - 1)
        epochs.append(n_epochs)
    return np.asarray(ends, dtype=np.int64), np.asarray(epochs, dtype=np.float64)












_FIT_DOC = """Fit the model.

    %(params_fit_Xy)s
        Targets (regressor) or class labels (classifier: two or more).

    %(returns_self)s

    Raises
    ------
    ValueError
        Invalid hyper-parameters (``epsilon <= 0``, ``delta`` outside (0, 1),
        ``n_samples_public < 1``, ``alpha <= 0``, ``clip <= 0``,
        {invalid}, ...), NaN or infinity in X or y, inconsistent shapes, a
        single class in y or labels outside the declared ``classes``
        (classifier){failure}.
    TypeError
        Non-numeric hyper-parameters or data (``n_samples_public`` not an int).

    Warns
    -----
    PrivacyLeakWarning
        {warns} without ``n_samples_public``: :math:`N`{n_enters} was
        taken from the data.
    """


def _fit_doc(**pieces):
    """Decorator: the docstring of a DP-SCD / DP-SGD ``fit``, from :data:`_FIT_DOC`
    with the estimator's own ``invalid`` parameters, ``failure`` of the run,
    ``warns`` (which fits warn) and ``n_enters`` (where :math:`N` enters)."""
    def decorate(fit):
        fit.__doc__ = _FIT_DOC.format(**pieces)
        return fill_doc(fit)
    return decorate


#: numpydoc text of the ``classes`` parameter of the DP-SCD / DP-SGD classifiers.
_CLASSES_PARAM_DOC = """    classes : array-like of shape (n_classes,) or None, default=None
        The public label set: two or more distinct labels (with two,
        ``classes_[1]``, the larger, is the positive class; with more, the model
        has one row of ``coef_`` per class, see Notes).  When given, the fit
        never reads the label set from ``y``: a declared class absent from ``y``
        is fine, a label of ``y`` outside it raises ``ValueError``.  None:
        ``np.unique(y)``, with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`
        for private fits (a neighbour that adds a new label or removes the only
        row of a class would change the model's shape).
"""


def _class_doc(summary, *, classifier, params, attrs, notes, references, examples):
    """The numpydoc class docstring of a DP-SCD / DP-SGD estimator, its sections in
    order.  A classifier adds its ``loss`` parameter and ``classes_`` attribute;
    every other argument is the indented body of its section."""
    loss = '    loss : {"logistic", "hinge"}, default="logistic"\n' if classifier else ""
    classes = ("    classes_ : ndarray of shape (n_classes,)\n"
               "        The declared ``classes`` (sorted), else the labels of ``y``.\n"
               if classifier else "")
    classes_param = _CLASSES_PARAM_DOC if classifier else ""
    sections = (("Parameters", loss + params.rstrip("\n") + "\n" + classes_param),
                ("Attributes", classes + attrs),
                ("Notes", notes), ("References", references), ("Examples", examples))
    return summary.rstrip() + "\n" + "".join(
        f"\n    {name}\n    {'-' * len(name)}\n{body.strip(chr(10))}\n"
        for name, body in sections) + "    "


# --------------------------------------------------------------------------- base
class _BaseLinearDP(PrivateEstimatorMixin, BaseEstimator):
    """Validation, data preparation, prediction shared by DP-SCD and DP-SGD."""

    _losses = ()
    #: Value of the constant feature ``fit_intercept`` appends (before
    #: ``normalize``); internal, not a parameter.
    intercept_scaling = INTERCEPT_SCALING
    #: A diagnostic, not a parameter: set to True on an instance before ``fit`` to
    #: keep the model after every epoch (``coef_path_``, ``intercept_path_``,
    #: ``epoch_path_``; for a private fit these are released intermediate models,
    #: covered by the guarantee).
    keep_coef_path = False
    #: How a classifier fits K > 2 classes: "softmax" (one multinomial model) or
    #: "ovr" (K binary models, class c against the rest); it sets ``objective``.
    _multiclass_scheme = "ovr"

    # ---------------------------------------------------------------- checks
    def _check_common(self):
        """The shared parameters as a fit uses them.  Their types and ranges are the
        constraint table's, validated once at the start of the fit (or of
        ``plan_spend``); only the rules between parameters are checked here."""
        epsilon, delta = self._check_budget(optional=True, delta_required=True)
        private = epsilon is not None
        if self.clip is None:
            if private:     # a rule between clip and epsilon
                raise ValueError("clip must be a float > 0 for a private fit (it bounds "
                                 "the sensitivity); clip=None is only for epsilon=None")
            clip = math.inf
        else:
            clip = float(self.clip)
        n_public = self.n_samples_public
        return GLMParams(private=private, epsilon=epsilon, delta=delta,
                         alpha=float(self.alpha), clip=clip, n_epochs=float(self.n_epochs),
                         intercept_scaling=float(self.intercept_scaling),
                         n_samples_public=None if n_public is None else int(n_public))

    @staticmethod
    def _n_constant(p, n_rows, *, warn=True,
                    uses="the sampling rate q = L/N, the number of steps and lambda*N in "
                         "every coordinate update"):
        """Dataset size :math:`N` used in q = L/N, lambda N and v/(lambda N).

        A private fit uses the public ``n_samples_public``; without it, it falls back
        to the number of rows with a PrivacyLeakWarning (``warn``) naming what
        :math:`N` enters (``uses``).  A non-private fit uses the number of rows.
        """
        if not p.private:
            return int(n_rows)
        if p.n_samples_public is None:
            if warn:
                warnings.warn(  # N itself is not printed: it is the private quantity
                    "n_samples_public is None: the dataset size N = X.shape[0] was "
                    f"taken from the data (it sets {uses}), so the "
                    "stated add/remove-one guarantee does not hold: a neighbour with one "
                    "more or one fewer example has a different N.  The guarantee covers "
                    "only neighbouring datasets of the same size.  Pass the public "
                    "dataset size as n_samples_public.", PrivacyLeakWarning, stacklevel=3)
            return int(n_rows)
        return p.n_samples_public

    def _example_lot(self, N, *, public, batch_size=None):
        """The lot (mini-batch) size ``batch_size`` (default: the estimator's) resolves to
        over ``N`` examples; an error names N as ``n_samples_public`` (``public``) or
        ``n_samples``."""
        batch_size = self.batch_size if batch_size is None else batch_size
        return self._batch(batch_size, N, "n_samples_public" if public else "n_samples")

    @staticmethod
    def _batch(batch_size, limit, what):
        if isinstance(batch_size, str):
            return min(100, limit)
        if batch_size > limit:
            raise ValueError(f"batch_size must be in [1, {what}] = [1, {limit}], "
                             f"got {batch_size}")
        return int(batch_size)

    # ------------------------------------------------------------------ data
    def _validate_fit_data(self, X, y):
        """The template's data step: ``(X, targets, classes)`` (classes None for a
        regressor; :meth:`_targets`)."""
        X, t = self._validate_xy(X, y)
        return X, t, self.classes_ if isinstance(self, ClassifierMixin) else None

    def _validate_xy(self, X, y):
        is_clf = isinstance(self, ClassifierMixin)
        check_X_y_named(X, y, y_numeric=not is_clf)
        X, y = validate_data(self, X, y, accept_sparse=True, dtype=np.float64,
                             ensure_all_finite=True, y_numeric=not is_clf)
        return X, self._targets(y)

    def _targets(self, y):
        """The kernels' targets of validated labels: {-1, +1} (classifier, sets
        ``classes_``) or the finite values of ``y`` (regressor)."""
        is_clf = isinstance(self, ClassifierMixin)
        if is_clf:
            check_classification_targets(y)
            self.classes_ = self._resolve_classes(y, private=self.epsilon is not None)
            k = self.classes_.size
            if k < 2:   # only without declared classes (a declared set has two or more)
                raise ValueError(f"{type(self).__name__} needs at least two classes in y, "
                                 f"got {k} class; declare the public label set as classes=")
            if k == 2:
                t = np.where(y == self.classes_[1], 1.0, -1.0)
            else:       # class codes 0 .. K-1 (the columns of the (M, K) weights)
                self._check_multiclass_loss()
                t = np.searchsorted(self.classes_, y).astype(np.int64)
        else:
            t = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(t)):
                raise ValueError("Input y contains NaN or infinity")
        return t

    def _prepare(self, X, p):
        return _transform_rows(X, self.normalize, self.fit_intercept, p.intercept_scaling)

    def _check_multiclass_loss(self):
        """Hook: refuse a ``loss`` that has no multiclass form (nothing by default)."""

    def _set_coef(self, w, path=None):
        """Split the full weights (with the intercept row) into coef_/intercept_.

        ``w`` of shape (M,) (binary, regression) or (M, K) (K > 2 classes: one column
        a class; ``coef_`` is then (K, D) and ``intercept_`` (K,), scikit-learn's
        convention); ``path`` of shape (n_records, M) or (n_records, M, K)."""
        if w.ndim == 2:
            self._set_multiclass_coef(w, path)
            return
        is_clf = isinstance(self, ClassifierMixin)
        if self.fit_intercept:
            coef, icpt = w[:-1], w[-1] * float(self.intercept_scaling)
        else:
            coef, icpt = w, 0.0
        if is_clf:
            self.coef_ = coef.reshape(1, -1).copy()
            self.intercept_ = np.array([icpt])
        else:
            self.coef_ = coef.copy()
            self.intercept_ = float(icpt)
        if path is not None:
            if self.fit_intercept:
                self.coef_path_ = path[:, :-1].copy()
                self.intercept_path_ = path[:, -1] * float(self.intercept_scaling)
            else:
                self.coef_path_ = path.copy()
                self.intercept_path_ = np.zeros(path.shape[0])

    def _set_multiclass_coef(self, w, path):
        scaling = float(self.intercept_scaling)
        if self.fit_intercept:
            self.coef_ = w[:-1].T.copy()
            self.intercept_ = w[-1] * scaling
        else:
            self.coef_ = w.T.copy()
            self.intercept_ = np.zeros(w.shape[1])
        if path is not None:
            path = np.transpose(path, (0, 2, 1))       # (n_records, K, M)
            if self.fit_intercept:
                self.coef_path_ = path[:, :, :-1].copy()
                self.intercept_path_ = path[:, :, -1] * scaling
            else:
                self.coef_path_ = path.copy()
                self.intercept_path_ = np.zeros(path.shape[:2])

    def _finish(self, w, path, rec_epochs, plan):
        """Set the fitted attributes shared by every estimator of this family (the
        template records the ``plan``'s spend)."""
        steps = plan.params
        self.n_samples_used_ = int(steps.n_constant)
        if path is not None:
            path = np.concatenate([np.zeros((1,) + w.shape), path])
            self.epoch_path_ = np.concatenate([[0.0], rec_epochs])
        self._set_coef(w, path)
        self.batch_size_ = int(steps.batch_size)
        self.n_steps_ = int(steps.total_steps)
        self.n_epochs_ = float(steps.validated.n_epochs)
        self.sensitivity_ = float(steps.sensitivity)
        if steps.validated.private:
            self.sampling_rate_ = float(steps.sampling_rate)
            self.noise_multiplier_ = float(steps.noise_multiplier)
            self.noise_std_ = float(steps.noise_std)
        else:
            self.sampling_rate_ = None
            self.noise_multiplier_ = None
            self.noise_std_ = None

    def _planned_n_classes(self, classes):
        """K of a plan: the label set's size for a classifier (K > 2 checked against
        ``loss``), 2 for a regressor."""
        if not isinstance(self, ClassifierMixin):
            return 2
        k = self._planned_classes(classes).size
        if k > 2:
            self._check_multiclass_loss()
        return k

    def _steps_plan(self, p, **steps):
        """The :class:`PrivacyPlan` of ``steps`` (the fields of :class:`GLMSteps`)."""
        params = GLMSteps(validated=p, **steps)
        return self._plan(*self._privacy_of(p, q=params.sampling_rate,
                                            sigma=params.noise_multiplier,
                                            n_steps=params.total_steps), params)

    @staticmethod
    def _privacy_of(p, *, q, sigma, n_steps):
        """``(privacy_event_, privacy_spent_)`` of a fit: ``n_steps`` Poisson-subsampled
        Gaussian steps (rate q, noise multiplier sigma), RDP-accounted; ``(None,
        None)`` for a non-private fit."""
        if not p.private:
            return None, None
        event = subsampled_gaussian_steps(sigma, q, n_steps)
        spent = (_epsilon_spent(event, p.delta), p.delta)
        return event, spent

    def _full_weights(self):
        """Weights on the transformed rows: shape (M,), or (M, K) for K > 2 classes."""
        if self.coef_.ndim == 2 and self.coef_.shape[0] > 1:
            W = self.coef_.T
            if self.fit_intercept:
                W = np.vstack([W, self.intercept_ / float(self.intercept_scaling)])
            return W
        coef = np.ravel(self.coef_)
        if self.fit_intercept:
            return np.append(coef, float(np.ravel(self.intercept_)[0])
                             / float(self.intercept_scaling))
        return coef

    def _transform(self, X):
        check_is_fitted(self)
        check_X_y_named(X)
        X = validate_data(self, X, accept_sparse=True, dtype=np.float64, reset=False)
        return self._transform_validated(X)

    def _transform_validated(self, X):
        Xt, _ = _transform_rows(X, self.normalize, self.fit_intercept,
                                float(self.intercept_scaling))
        return Xt

    # --------------------------------------------------------------- predict
    def _margins(self, X):
        """Margins :math:`\\tilde x_i^\\top \\theta` of the transformed rows."""
        margins = np.asarray(self._transform_validated(X) @ self._full_weights())
        return margins if margins.ndim == 2 else margins.ravel()

    def objective(self, X, y):
        r"""Compute the primal objective :math:`F(\theta)` (eq. 1) of the fitted model.

        The rows of X get the same per-example transformation as in ``fit``.  This
        reads the data: it is a diagnostic, not a private release.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Data.
        y : array-like of shape (n_samples,)
            Targets or class labels.

        Returns
        -------
        float
            Mean loss plus :math:`\lambda/2 \|\theta\|^2` (intercept weight included).
            For K > 2 classes: the softmax cross-entropy plus :math:`\lambda/2
            \|W\|_F^2` (DP-SGD), or the sum over classes of the one-vs-rest
            objectives (DP-SCD).
        """
        return self._objective_on(self._transform(X), np.asarray(y), self._full_weights())

    def _objective_on(self, Xt, y, w):
        """Eq. 1 at the weights ``w`` ((M,) or (M, K)) on transformed rows ``Xt``."""
        alpha = float(self.alpha)
        if w.ndim == 2:
            codes = np.searchsorted(self.classes_, y)
            if self._multiclass_scheme == "softmax":
                return softmax_objective(Xt, codes, w, alpha=alpha)
            # one-vs-rest: the sum of the K binary objectives (class c against the rest)
            return float(sum(primal_objective(Xt, np.where(codes == c, 1.0, -1.0), w[:, c],
                                              loss=self._kernel_loss(), alpha=alpha)
                             for c in range(w.shape[1])))
        if isinstance(self, ClassifierMixin):
            y = np.where(y == self.classes_[1], 1.0, -1.0)
        return primal_objective(Xt, y, w, loss=self._kernel_loss(), alpha=alpha)

    def _kernel_loss(self):
        return self.loss

    def _path_objectives(self, X, y):
        """Objective after every recorded epoch (``keep_coef_path`` set on the instance); diagnostic."""
        check_is_fitted(self, "coef_path_")
        Xt = self._transform(X)
        y = np.asarray(y)
        out = []
        for c, b in zip(self.coef_path_, self.intercept_path_):
            w = c.T                          # (M,) or, for K > 2 classes, (M, K)
            if self.fit_intercept:
                w = np.vstack([w, b / float(self.intercept_scaling)]) if w.ndim == 2 \
                    else np.append(w, b / float(self.intercept_scaling))
            out.append(self._objective_on(Xt, y, w))
        return np.asarray(out)


_transform_rows = transform_rows
