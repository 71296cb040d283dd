"""Sure Independence Screening (SIS) and its private version DP-SIS."""
import dataclasses
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_array, check_is_fitted

from .._docstrings import fill_doc
from .._private import (
    NEIGHBOURING_RELATIONS,
    PrivateEstimatorMixin,
    data_dependent_warning,
    sensitivity_factor,
)
from .._validation import (DELTA_OPTIONAL, NEIGHBOURING, POSITIVE, PRIVATE_COMMON, Interval,
                           Options, validate_params)
from ..accounting import epsilon_of_event
from ..accounting.events import GaussianEvent
from ..distributed import block_sum, is_dask_array, row_aligned, validate_dask_X_y
from ..exceptions import DataClippedWarning, PrivacyLeakWarning
from ._selector_base import (_SELECTORS, _check_k_features, _k_or_all,
                             _select_top_k, _SelectorTagsMixin, _validate_X_y)
from ._sis_rules import (GAUSSIAN_MAX_K, GAUSSIAN_MIN_K, INFORMATIVE_SCORE,  # noqa: F401
                         _gaussian_noise_multiplier, _top_k_privacy, auto_k, gaussian_auto_k)
from ._sis_scores import (BOUNDS, CENTER, _bounded_sums_block, _broadcast_bounds,
                          _broadcast_center, _column_sums, _row_bounded_sums_block)
from ._topk import _canonical_lipschitz, peeling_top_k

__all__ = ["SIS", "DPSIS", "auto_k", "gaussian_auto_k"]

_NEIGHBOURING = NEIGHBOURING_RELATIONS
#: DPSIS's selectors: the pure-DP ones, the Gaussian release of all scores, or "auto".
_DPSIS_SELECTORS = ("auto", "gaussian") + _SELECTORS


class SIS(_SelectorTagsMixin, SelectorMixin, BaseEstimator):
    """Sure Independence Screening (non-private).

    Keeps the ``k`` features with the largest absolute Pearson correlation with
    the target: columns of ``X`` and ``y`` are centred and scaled to unit
    variance with statistics of the data, then ``|x_(i)^T y| / n`` is the score
    (Fan & Lv 2008).  Constant columns score 0.  Ties are broken by the lower
    feature index.

    This selector is **not** differentially private; :class:`DPSIS` is.

    Parameters
    ----------
    k : int
        Number of features to keep, ``k >= 1``; from ``n_features`` on, every
        feature is kept (with a warning above ``n_features``, as
        :class:`~sklearn.feature_selection.SelectKBest`).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Absolute correlations.
    support_ : ndarray of bool, shape (n_features,)
        Mask of the selected features.
    selected_features_ : ndarray of int64, shape (min(k, n_features),)
        Selected feature indices, increasing.
    n_features_in_ : int

    References
    ----------
    J. Fan and J. Lv. Sure independence screening for ultrahigh dimensional
    feature space. JRSS-B 70(5), 2008.
    """

    _parameter_constraints = {"k": [Interval("int", 1, None)]}   # k > n_features: all kept

    def __init__(self, k=5):
        self.k = k

    @fill_doc
    def fit(self, X, y):
        """Compute the correlations and select the top ``k``.

        %(params_fit_Xy)s
            Numeric target (class labels coded as numbers).

        %(returns_self)s

        Raises
        ------
        ValueError
            ``k`` < 1, X and y of different lengths, non-finite values.
        TypeError
            ``k`` not an integer.

        Warns
        -----
        UserWarning
            ``k`` greater than ``n_features``: every feature is kept.
        """
        validate_params(self)
        X, y = _validate_X_y(self, X, y)
        n, d = X.shape
        k, _ = _k_or_all(self.k, d, "SIS")
        yc = y - y.mean()
        y_norm = np.sqrt(yc @ yc)
        mean = np.asarray(X.mean(axis=0)).ravel()
        # n * variance, without the cancellation of sum(x^2) - n mean^2: the
        # stored entries are centred, the implicit zeros contribute mean^2 each.
        if sp.issparse(X):
            cols = np.repeat(np.arange(d), np.diff(X.indptr))
            dev = X.data - mean[cols]
            var_n = np.bincount(cols, weights=dev * dev, minlength=d)
            var_n += (n - np.diff(X.indptr)) * mean**2
        else:
            dev = X - mean
            var_n = np.einsum("ij,ij->j", dev, dev)
        # columns whose spread is below rounding (std / rms < 1e-10) are constant
        var_n[var_n <= 1e-20 * (var_n + n * mean**2)] = 0.0
        cov_n = _column_sums(X, yc)                      # sum (x - mean) yc = X^T yc
        denom = np.sqrt(var_n) * y_norm
        with np.errstate(divide="ignore", invalid="ignore"):
            corr = np.where(denom > 0, np.abs(cov_n) / denom, 0.0)
        self.scores_ = np.minimum(corr, 1.0)
        self.selected_features_ = _select_top_k(self.scores_, k)
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[self.selected_features_] = True
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_


@fill_doc
@dataclasses.dataclass(frozen=True)
class SISParams:
    r"""The parameters a DPSIS fit runs with (its privacy plan's ``params``).

    ``mechanism`` is resolved (never ``"auto"``); ``sensitivity`` is the l-infinity
    sensitivity of each score for the pure-DP selectors, the L2 sensitivity of the
    score vector for ``"gaussian"``; ``noise_multiplier`` is the Gaussian release's
    :math:`\sigma` (None for the other selectors and for a non-private fit).
    """
    epsilon: float
    delta: float
    selector: str
    gamma: float
    sensitivity: float
    k: int
    data_norm: float = None
    noise_multiplier: float = None


class DPSIS(PrivateEstimatorMixin, _SelectorTagsMixin, SelectorMixin, BaseEstimator):
    r"""Differentially private Sure Independence Screening (DP-SIS).

    Algorithm 1 of Swope et al. (2024) with public bounds: every feature value
    is clipped to public ``bounds`` and mapped to [-1, 1] around a public
    ``center``, likewise the target; the score of feature ``i`` is
    ``|x_(i)^T y|`` on the mapped data, and the ``k`` features are chosen by
    :func:`canonical_lipschitz_top_k`, :func:`peeling_top_k`, or (``selector=
    "gaussian"``) by one Gaussian release of all the scores of rows scaled to a
    public L2 norm, followed by the top k of the noisy magnitudes.

    **Privacy, pure-DP selectors** (``"canonical_lipschitz"``, ``"peeling"``).
    Neighbouring relation ``neighbouring``.  After the (per-example, public)
    clipping and mapping every entry lies in [-1, 1], so adding or removing one
    example changes each score ``|sum_n x_ni y_n|`` by at most 1, and replacing
    one changes it by at most 2 (l-infinity sensitivity 1 or 2): the selector is
    ``epsilon``-DP (pure, delta = 0).  One top-k release, no composition inside
    (peeling: k exponential-mechanism rounds of ``epsilon / k``, basic
    composition).  ``privacy_event_`` names the mechanism: a
    :class:`~dptoolkit.accounting.events.PureDPEvent` for the canonical
    Lipschitz mechanism (not bounded range), k
    :class:`~dptoolkit.accounting.events.ExponentialMechanismEvent` for
    peeling.  Their error grows with k: every selected feature is paid for
    (the canonical Lipschitz mechanism ranges over the :math:`\binom{D}{k}`
    subsets, peeling spends :math:`\varepsilon/k` a round), so ``auto_k``
    keeps few features on high-dimensional data (27 on IMDB at
    :math:`\varepsilon = 0.5`).

    **Privacy, Gaussian selector** (``"gaussian"``).  Each mapped row
    :math:`m_n` is scaled to L2 norm ``data_norm`` :math:`B` (a local, public
    operation; zero rows stay 0) and the vector of signed scores
    :math:`s = \sum_n y_n B\, m_n / \|m_n\|_2 \in \mathbb{R}^D` is released
    once with i.i.d. Gaussian noise :math:`\mathcal N(0, (\sigma\Delta)^2)` on
    every coordinate.  Adding or removing one (row, target) changes :math:`s`
    by a vector of L2 norm at most :math:`B |y_n| \le B` (the target is mapped
    to [-1, 1]); replacing one by at most :math:`2B`: :math:`\Delta = B`
    (``"add_remove"``) or :math:`2B` (``"replace_one"``).  This is the Gaussian
    mechanism with noise multiplier :math:`\sigma` (Mironov 2017, Proposition
    7; Dwork and Roth 2014, Appendix A), whatever D: ``privacy_event_`` is
    ``GaussianEvent(sigma)`` with :math:`\sigma` the smallest noise multiplier
    whose event the accountant converts to at most ``(epsilon, delta)``
    (:func:`~dptoolkit.accounting.calibrate_parameter` on that event, as
    :class:`~dptoolkit.linear_model.DPNBLogisticClassifier` calibrates its
    release; the conversion is the Renyi-DP one of the toolkit's accountant,
    Canonne, Kamath and Steinke 2020, which is slightly looser than the exact
    analytic calibration of Balle and Wang 2018), and ``privacy_spent_`` is
    ``(epsilon_of_event(privacy_event_, delta), delta)``.  The top k of
    :math:`|s + \text{noise}|` is post-processing, so k costs nothing and
    ``k="auto"`` (``gaussian_auto_k``) can keep every feature that could
    stand above the noise, up to what non-private SIS keeps (a function of the
    public N, D, epsilon and delta).
    It needs ``delta`` in (0, 1).

    **Which selector** (``mechanism="auto"``, the default): ``"gaussian"`` for a
    private fit with ``delta > 0``, public ``bounds`` and more features than
    (public) examples, D > N, else ``"canonical_lipschitz"``.  On such data the
    pure-DP selectors pay for every selected feature and find only a handful,
    while the one Gaussian release costs the same for any k; with few features
    (D <= N) or without a delta the pure-DP mechanism is kept (it needs no
    delta and its error depends on D only through :math:`\log\binom{D}{k}`).
    The choice reads only public quantities (``delta``, the bounds, D and
    ``n_samples_public``; without it N is taken from the data with a
    :class:`~dptoolkit.exceptions.PrivacyLeakWarning`).

    With ``accountant`` the spend is checked after validation and before the
    scores are computed, and charged once after the selection.

    **Paper's error.**  Steps 1-2 of the paper centre and scale the columns and
    ``y`` with statistics of the data (means and max-abs values).  Those depend
    on every example, so one example can move all scores by more than the
    stated sensitivity and the guarantee does not hold as written.  ``bounds="data"`` /
    ``y_bounds="data"`` reproduce the paper's
    preprocessing for comparison and raise :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.

    Parameters
    ----------
    k : int or "auto", default="auto"
        Number of features to select, ``1 <= k < n_features``.  ``"auto"``: for a
        private selection the largest ``k`` the mechanism can still find at this
        budget, ``auto_k`` of ``(n_features, N, epsilon, sensitivity, gamma,
        selector)`` -- public quantities only, with ``N`` = ``n_samples_public``
        (it grows like :math:`\gamma\varepsilon\rho N / (2\Delta\log(eD/k))`);
        for a non-private one (``epsilon=None``) Fan and Lv's (2008, Section
        4.2) :math:`\lfloor N / \log N\rfloor`, at most ``n_features - 1``.
        A fixed ``k`` above ``auto_k`` makes the canonical Lipschitz
        selection close to uniform over the features.  With the Gaussian
        selector, ``"auto"`` is ``gaussian_auto_k`` (at most the non-private
        ``N / ln N``, between 100 and 50,000).
    epsilon : float or None, default=1.0
        Privacy budget (> 0).  None (only when given explicitly, and without a
        warning): the non-private selection (the ``k`` largest
        scores after the same public mapping, ties to the lower index), with
        ``privacy_spent_`` and ``privacy_event_`` None, as every estimator of the
        toolkit with ``epsilon=None``.
    delta : float or None, default=None
        In [0, 1).  None or 0: pure DP (the pure-DP selectors; ``mechanism="auto"``
        then never picks the Gaussian one).  Required in (0, 1) by
        ``mechanism="gaussian"``.
    bounds : (low, high) or "data", default=(-1.0, 1.0)
        Public bounds of the feature values: scalars or arrays of shape
        (n_features,), ``low < high``.  Values outside are clipped
        (:class:`~dptoolkit.exceptions.DataClippedWarning`: it says only *that* values were clipped,
        and depends on the data, outside the guarantee).  ``"data"``: centre each column by its
        mean and divide by its max-abs (the paper; not private).
    center : float or array of shape (n_features,), optional
        Public centre subtracted after clipping; default the midpoint of
        ``bounds``.  Values are divided by ``max(high - center, center - low)``.
    y_bounds : (low, high) or "data", default=(-1.0, 1.0)
        Public bounds of the target, as ``bounds``.
    y_center : float, optional
        Public centre of the target; default the midpoint of ``y_bounds``.
    neighbouring : {"add_remove", "replace_one"}, default="add_remove"
        Neighbouring relation; sets the sensitivity (1 or 2).
    gamma : float, default=0.5
        Loss weight of the canonical Lipschitz mechanism (ignored by peeling).
    mechanism : {"auto", "gaussian", "canonical_lipschitz", "peeling"}, default="auto"
        The mechanism (see **Which selector** above): ``"auto"`` picks
        ``"gaussian"`` when ``delta > 0``, the bounds are public and D > N.
    data_norm : float, default=1.0
        Public L2 norm :math:`B > 0` every mapped row is scaled to by the Gaussian
        selector (unit rows as in
        :class:`~dptoolkit.linear_model.DPNBLogisticClassifier`); the L2
        sensitivity is ``data_norm`` (add/remove) or twice that (replace-one).
        The selection does not depend on it (the noise scales with it); it is
        there for the sensitivity to be stated in the field's terms.  Ignored by
        the pure-DP selectors.
    n_samples_public : int or None, default=None
        Public dataset size ``N`` used only by ``k="auto"`` (>= 1).  None with
        ``k="auto"`` in a private fit takes ``N`` from the data with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning` (under add/remove a neighbour has
        ``N +- 1``, so the chosen ``k`` would depend on the data).
    random_state : None, int, SeedSequence or numpy.random.Generator
    %(accountant_selector)s

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features,)
    selected_features_ : ndarray of int64, shape (k,)
        Selected feature indices, increasing.
    k_ : int
        Number of features selected (``k``, or its ``"auto"`` value: a function
        of public quantities only).
    mechanism_ : str
        The selector that ran (``mechanism`` with ``"auto"`` resolved).
    sensitivity_ : float
        Sensitivity used: of each score (1.0 or 2.0) for the pure-DP selectors,
        the L2 sensitivity of the score vector (``data_norm`` or twice it) for the
        Gaussian one.
    noise_multiplier_ : float or None
        :math:`\sigma` of the Gaussian release (noise standard deviation
        ``noise_multiplier_ * sensitivity_``); None for the other selectors and
        for a non-private fit.
    %(attrs_selector_privacy)s
        Both None for a non-private fit (``epsilon=None``).  Pure-DP
        selectors: :func:`~dptoolkit.accounting.epsilon_of_event` of the event
        at delta 0 is ``epsilon``, the spend ``(epsilon, 0)``.  Gaussian
        selector: ``GaussianEvent(noise_multiplier_)`` and its
        ``(epsilon_of_event(event, delta), delta)``, at most ``(epsilon, delta)``.
    n_features_in_ : int

    Notes
    -----
    The scores are not stored: they are not private.

    Accuracy of both selectors inside :class:`PrivateSelectThenFit`, beside
    Frank-Wolfe alone: :ref:`study_feature_selection`.  When the selection's
    own :math:`\varepsilon N` is small the pure-DP selector's few features do
    better than the Gaussian selector's many.

    ``auto_k`` returns 1 for :math:`\varepsilon N < 1{,}080` on
    :math:`2^{20}` features (the selection's own :math:`\varepsilon`), and
    even that one feature is found only when it scores at least
    :math:`13.9 \cdot 4/\varepsilon`.  ``mechanism="peeling"`` needs no
    :math:`\gamma` split, so its auto ``k`` is about twice as large.  On
    :math:`2^{20}` hashed features the canonical Lipschitz selection needs its
    own :math:`\varepsilon N` in the hundreds of thousands to find the few
    hundred features that separate long documents
    (:ref:`study_feature_selection`).

    References
    ----------
    R. Swope, A. Khanna, P. Doldo, S. Roy, E. Raff. Feature selection from
    differentially private correlations. AISec 2024, Algorithm 1.
    I. Mironov. Renyi differential privacy. CSF 2017, Proposition 7.
    B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising. ICML 2018.
    C. Canonne, G. Kamath, T. Steinke. The discrete Gaussian for differential
    privacy. NeurIPS 2020, Proposition 12.
    C. Dwork, A. Roth. The algorithmic foundations of differential privacy.
    2014, Appendix A.
    """

    _parameter_constraints = {
        **PRIVATE_COMMON, "delta": DELTA_OPTIONAL,
        "k": [Options("auto"), Interval("int", 1, None)],   # k < n_features: with the data
        "bounds": BOUNDS, "center": CENTER, "y_bounds": BOUNDS, "y_center": CENTER,
        "neighbouring": NEIGHBOURING, "gamma": [Interval("real", 0.0, 1.0, closed="both")],
        "mechanism": [Options(*_DPSIS_SELECTORS)], "data_norm": POSITIVE,
    }

    def __init__(self, k="auto", *, epsilon=1.0, delta=None, bounds=(-1.0, 1.0), center=None,
                 y_bounds=(-1.0, 1.0), y_center=None, neighbouring="add_remove",
                 gamma=0.5, mechanism="auto", data_norm=1.0, n_samples_public=None,
                 random_state=None, accountant=None):
        self.k = k
        self.n_samples_public = n_samples_public
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.bounds = bounds
        self.center = center
        self.y_bounds = y_bounds
        self.y_center = y_center
        self.neighbouring = neighbouring
        self.gamma = gamma
        self.mechanism = mechanism
        self.random_state = random_state
        self.accountant = accountant

    def _target(self, y):
        if isinstance(self.y_bounds, str):
            if self.y_bounds != "data":
                raise ValueError(f"y_bounds must be a pair or 'data', got {self.y_bounds!r}")
            warnings.warn("y_bounds='data': the target is centred and scaled with its own "
                          "mean and max-abs; the DP guarantee does not hold as stated",
                          PrivacyLeakWarning, stacklevel=3)
            yc = y - y.mean()
            m = np.abs(yc).max()
            return yc / m if m > 0 else yc
        lo, hi = _broadcast_bounds(self.y_bounds, 1, "y_bounds")
        c = _broadcast_center(self.y_center, lo, hi, "y_center")
        lo, hi, c = lo[0], hi[0], c[0]
        if np.any(y < lo) or np.any(y > hi):
            data_dependent_warning("target values outside y_bounds were clipped",
                                   DataClippedWarning, stacklevel=3)
        return (np.clip(y, lo, hi) - c) / max(hi - c, c - lo)

    def _scores(self, X, yt, data_norm=None):
        """``|x_(i)^T y|`` on the mapped data; with ``data_norm``, the signed scores of
        the rows scaled to that L2 norm (the Gaussian selector's release)."""
        d = X.shape[1]
        if isinstance(self.bounds, str) and data_norm is not None:
            raise ValueError("bounds='data' is not available with mechanism='gaussian' "
                             "(the L2 sensitivity needs public bounds); pass public bounds")
        if isinstance(self.bounds, str):
            if self.bounds != "data":
                raise ValueError(f"bounds must be a pair or 'data', got {self.bounds!r}")
            warnings.warn("bounds='data': features are centred and scaled with their own "
                          "means and max-abs values (Swope et al. (2024), Alg. 1 steps 1-2); the DP "
                          "guarantee does not hold as stated", PrivacyLeakWarning, stacklevel=3)
            mean = np.asarray(X.mean(axis=0)).ravel()
            if sp.issparse(X):
                cmax = np.asarray(X.max(axis=0).toarray()).ravel()
                cmin = np.asarray(X.min(axis=0).toarray()).ravel()
            else:
                cmax, cmin = X.max(axis=0), X.min(axis=0)
            scale = np.maximum(cmax - mean, mean - cmin)
            raw = _column_sums(X, yt) - mean * yt.sum()
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(scale > 0, np.abs(raw) / scale, 0.0)
        lo, hi = _broadcast_bounds(self.bounds, d, "bounds")
        c = _broadcast_center(self.center, lo, hi, "center")
        scale = np.maximum(hi - c, c - lo)
        # exact per-block sums (the workers' when X is a Dask array); noise comes later
        if data_norm is None:
            summed = block_sum(_bounded_sums_block, X, yt, (lo, hi, c),
                               what="the DP-SIS correlations")
        else:
            summed = block_sum(_row_bounded_sums_block, X, yt, (lo, hi, c, data_norm),
                               what="the DP-SIS correlations")
        if summed[-1] > 0:
            data_dependent_warning("feature values outside bounds were clipped",
                                   DataClippedWarning, stacklevel=3)
        if data_norm is not None:
            return summed[:-1]
        return np.abs(summed[:-1]) / scale

    @fill_doc
    def fit(self, X, y):
        """Select ``k`` features privately.

        %(params_fit_Xy)s
            Numeric target.  ``X`` may also be a :class:`dask.array.Array` of
            row blocks (``y`` with the same row chunks): the correlations are
            summed on the workers, the selection's noise drawn on the client
            (:mod:`dptoolkit.distributed`).

        %(returns_self)s

        Raises
        ------
        ValueError
            Bad ``k``, ``epsilon``, ``delta``, bounds, ``neighbouring``,
            ``mechanism``, ``gamma`` or ``data_norm``; ``mechanism="gaussian"`` in
            a private fit with ``delta`` None or 0, or with ``bounds="data"``;
            X and y of different lengths; non-finite values;
            ``bounds="data"`` or a layout other than row chunks for a Dask array;
            ``n_samples_public < 1``; a private ``k="auto"`` on a Dask array
            (or ``mechanism="auto"`` with ``delta``) without ``n_samples_public``.
        RuntimeError
            Dask workers died repeatedly; nothing selected or charged.
        TypeError
            ``accountant`` is not a BudgetAccountant (or None).
        BudgetExceededError
            The ``accountant`` cannot pay the spend (``(epsilon, 0)``, or the
            Gaussian release's ``(epsilon, delta)``); nothing is computed.
        """
        return super().fit(X, y)

    def _validate_fit_data(self, X, y):
        if not is_dask_array(X):
            return (*_validate_X_y(self, X, y), None)
        # X stays on the workers; only y comes to the client.  N is used only by a
        # private k="auto" (auto_k) and by mechanism="auto" with delta (D > N?): then
        # it must be public
        auto = (isinstance(self.k, str) and self.k == "auto") or (
            isinstance(self.mechanism, str) and self.mechanism == "auto"
            and self.delta is not None and self.delta != 0)
        X, y, _ = validate_dask_X_y(self, X, y, private=auto and self.epsilon is not None)
        if isinstance(self.bounds, str):
            raise ValueError("bounds='data' reads statistics of X (not private) and is "
                             "not available for a Dask array; pass public bounds")
        return X, check_array(y, ensure_2d=False, dtype=np.float64, input_name="y"), None

    def _fit_private(self, X, y, plan, rng):
        """The scores, then the (private) top k (the class docstring)."""
        d, p = X.shape[1], plan.params
        yt = row_aligned(self._target(y), X)
        if p.selector == "gaussian":
            # one Gaussian release of all D scores (drawn here, on the client), then
            # the top k of the noisy magnitudes: post-processing
            scores = self._scores(X, yt, data_norm=p.data_norm)
            if p.epsilon is not None:
                scores = scores + rng.normal(0.0, p.noise_multiplier * p.sensitivity, d)
            sel = _select_top_k(np.abs(scores), p.k)
        else:
            scores = self._scores(X, yt)
            if p.epsilon is None:
                sel = _select_top_k(scores, p.k)
            elif p.selector == "canonical_lipschitz":
                sel = _canonical_lipschitz(scores, p.k, p.epsilon, p.sensitivity, p.gamma,
                                           rng)
            else:
                sel = np.sort(peeling_top_k(scores, p.k, epsilon=p.epsilon,
                                            sensitivity=p.sensitivity, random_state=rng))
        self.selected_features_ = sel
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[sel] = True
        self.k_ = p.k
        self.mechanism_ = p.selector
        self.sensitivity_ = p.sensitivity
        self.noise_multiplier_ = p.noise_multiplier

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        the selection's event (a top-k selection's, or the Gaussian release's);
        ``params`` a :class:`SISParams`."""
        # epsilon > 0 or None (non-private); delta None or 0 (pure DP) or in (0, 1);
        # every range is the constraint table's (checked once)
        epsilon, delta = self._check_budget(optional=True)
        selector, gamma, data_norm = self.mechanism, float(self.gamma), float(self.data_norm)
        if selector == "auto":
            selector = self._auto_selector(n_samples, n_features, epsilon, delta)
        factor = sensitivity_factor(self.neighbouring)
        if selector != "gaussian":
            k = self._resolve_k(n_samples, n_features, epsilon, factor, gamma, selector)
            event, spent = (_top_k_privacy(selector, epsilon, k) if epsilon is not None
                            else (None, None))
            return self._plan(event, spent, SISParams(epsilon, delta, selector, gamma,
                                                      factor, k))
        if epsilon is not None and not delta > 0.0:
            raise ValueError(f"mechanism='gaussian' needs delta in (0, 1) (the Gaussian "
                             f"mechanism is not pure DP), got delta={self.delta!r}")
        sensitivity = factor * data_norm        # L2 sensitivity of the score vector
        if epsilon is None:
            k = self._resolve_k(n_samples, n_features, None, factor, gamma, selector)
            return self._plan(None, None, SISParams(None, None, selector, gamma,
                                                    sensitivity, k, data_norm))
        sigma = _gaussian_noise_multiplier(epsilon, delta)
        event = GaussianEvent(sigma)
        spent = (float(epsilon_of_event(event, delta)), float(delta))
        k = self._resolve_k(n_samples, n_features, epsilon, factor, gamma, selector,
                            noise_multiplier=sigma)
        return self._plan(event, spent, SISParams(epsilon, delta, selector, gamma,
                                                  sensitivity, k, data_norm, sigma))

    def _auto_selector(self, n_rows, d, epsilon, delta):
        """``mechanism="auto"``: "gaussian" for a private fit with delta > 0 and public
        bounds on high-dimensional data (D > N, N public), else "canonical_lipschitz"."""
        if epsilon is None or not delta > 0.0 or isinstance(self.bounds, str):
            return "canonical_lipschitz"
        n = self._n_samples(n_rows, private=True, uses="mechanism='auto'")
        return "gaussian" if d > n else "canonical_lipschitz"

    def n_selected(self, n_samples, n_features):
        """The number of features a fit on data of this shape selects.

        ``k``, or its ``"auto"`` value (``auto_k``, or ``gaussian_auto_k``
        for the Gaussian selector) from public quantities: ``n_samples_public``
        when given (else ``n_samples``), ``n_features``, ``epsilon``, ``delta``,
        the neighbouring relation, ``gamma`` and ``mechanism``.

        Parameters
        ----------
        n_samples, n_features : int

        Returns
        -------
        int

        Raises
        ------
        ValueError, TypeError
            Invalid hyper-parameters, as :meth:`fit`.
        """
        validate_params(self)
        return self._privacy_plan(int(n_samples), int(n_features), None).params.k

    def _resolve_k(self, n_rows, d, epsilon, sensitivity, gamma, selector, *,
                   noise_multiplier=None):
        """The k of this fit: the given int, or its "auto" value from public quantities."""
        if not (isinstance(self.k, str) and self.k == "auto"):
            return _check_k_features(self.k, d)     # a rule between k and the data
        if d < 2:
            raise ValueError(f"k='auto' needs n_features >= 2, got n_features = {d}")
        n = self._n_samples(n_rows, private=epsilon is not None, uses="k='auto'")
        if epsilon is None:   # Fan and Lv (2008): n / log n, no noise to beat
            return min(max(int(n / math.log(max(n, 2))), 1), d - 1)
        if selector == "gaussian":
            return gaussian_auto_k(d, n, noise_multiplier, sensitivity_factor=sensitivity)
        return auto_k(d, n, epsilon, sensitivity=sensitivity, gamma=gamma,
                      mechanism=selector)

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def transform(self, X):
        """Reduce ``X`` to the selected features.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            A Dask array (row blocks, as :meth:`fit` takes) stays lazy: its
            columns are selected block by block on the workers.

        Returns
        -------
        X_r : array of shape (n_samples, n_selected_features)
            The same kind of array as ``X``.

        Raises
        ------
        ValueError
            ``X`` has another number of features than the fit's.
        """
        if not is_dask_array(X):
            return super().transform(X)
        mask = self.get_support()
        if X.ndim != 2 or X.shape[1] != mask.size:
            raise ValueError(f"X has shape {X.shape}; {type(self).__name__} was fitted "
                             f"on {mask.size} features")
        return X[:, np.flatnonzero(mask)]
