"""The first stage of Kifer, Smith & Thakurta's two-stage private sparse regression:
LASSO supports on disjoint blocks, then private selection of the features chosen
most often."""
import dataclasses
import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.linear_model import Lasso
from sklearn.utils.validation import check_is_fitted

from .._docstrings import fill_doc
from .._private import PrivateEstimatorMixin, check_neighbouring
from .._validation import (ACCOUNTANT, EPSILON, NEIGHBOURING, NON_NEGATIVE, POSITIVE,
                           RANDOM_STATE, Interval, Options, check_random_state, check_scalar_range)
from ..exceptions import EmptySupportWarning, PrivacyLeakWarning
from ._selector_base import (
    _SELECTORS,
    _check_choice,
    _check_k_features,
    _k_or_all,
    _select_top_k,
    _SelectorTagsMixin,
    _validate_X_y,
)
from ._sis_rules import _top_k_privacy
from ._topk import _canonical_lipschitz, peeling_top_k

__all__ = ["TwoStageSelector", "block_support_counts"]


def _block_labels(n, n_blocks, neighbouring, shuffle, rng):
    """Block index of every example; depends on positions and randomness only."""
    if neighbouring == "add_remove":
        # i.i.d. uniform labels: adding or removing one example changes one block
        # and leaves every other example's block unchanged (a coupling).
        return rng.integers(0, n_blocks, size=n)
    # replace-one: n is public, so contiguous equal blocks of a (random) order
    # of the positions; replacing one example changes one block.
    perm = rng.permutation(n) if shuffle else np.arange(n)
    labels = np.empty(n, dtype=np.int64)
    for b, idx in enumerate(np.array_split(perm, n_blocks)):
        labels[idx] = b
    return labels


_ALPHA_SCALES = ("absolute", "block_max")


def _check_n_blocks(n_blocks, n):
    if isinstance(n_blocks, (bool, np.bool_)) or not isinstance(n_blocks, numbers.Integral):
        raise TypeError(f"n_blocks must be an integer, got {type(n_blocks).__name__}")
    if not 1 <= n_blocks <= n:
        raise ValueError(f"n_blocks must be in [1, n_samples] = [1, {n}], got {n_blocks}")
    return int(n_blocks)


def _check_alpha(alpha, alpha_scale):
    alpha_scale = _check_choice(alpha_scale, "alpha_scale", _ALPHA_SCALES)
    if alpha_scale == "block_max":
        alpha = check_scalar_range(alpha, "alpha", low=0.0, high=1.0, low_open=True,
                                   high_open=True)
    else:
        alpha = check_scalar_range(alpha, "alpha", low=0.0, low_open=True)
    return alpha, alpha_scale


def _block_alpha_max(Xb, yb):
    """Smallest penalty giving an empty support for Lasso (with intercept) on one block.

    ``max_j |x_j^T (y - mean(y))| / n_b``; centring the columns of X too would
    not change it, since ``y - mean(y)`` sums to zero.
    """
    return float(np.max(np.abs(np.asarray(Xb.T @ (yb - yb.mean())).ravel()))) / yb.size


def _warn_if_all_empty(counts, alpha, alpha_scale, stacklevel):
    if counts.any():
        return
    if alpha_scale == "absolute":
        hint = ("the penalty must be below each block's alpha_max = "
                "max_j |x_j^T (y - mean(y))| / n_block, which shrinks with the scale of the "
                "features and of y: lower alpha, or use alpha_scale='block_max' (alpha as a "
                "fraction of each block's own alpha_max, no extra privacy cost)")
    else:
        hint = ("with alpha_scale='block_max' this happens when y is constant (or X is "
                "zero) on every block, or alpha is too close to 1")
    warnings.warn(
        f"every block's LASSO support is empty (alpha={alpha:g}, "
        f"alpha_scale={alpha_scale!r}): all counts are 0, so the top-k selection "
        f"carries no information (uniformly random when private); {hint}.  This warning depends on the data "
        "and is not covered by the privacy guarantee.", EmptySupportWarning,
        stacklevel=stacklevel + 1)


def _support_counts(X, y, labels, n_blocks, alpha, alpha_scale, max_support, max_iter,
                    tol, *, private=False):
    """The counts of ``block_support_counts`` for validated input.

    ``private``: the block fits run inside the mechanism, so their warnings
    (scikit-learn's ``ConvergenceWarning`` of a block whose coordinate descent
    did not converge within ``max_iter``) are captured and dropped: whether a
    block converged depends on that block's data, and a warning is an output
    the epsilon does not cover.
    """
    n, d = X.shape
    if sp.issparse(X):
        X = sp.csr_array(X)
    counts = np.zeros(d, dtype=np.int64)
    for b in range(n_blocks):
        rows = np.flatnonzero(labels == b)
        if rows.size < 2:
            continue            # an intercept-only fit: empty support
        Xb, yb = X[rows], y[rows]
        if alpha_scale == "block_max":
            # a function of this block's data only: inside the sensitivity argument
            alpha_b = alpha * _block_alpha_max(Xb, yb)
            if not alpha_b > 0.0:
                continue        # y constant or X zero on the block: empty support
        else:
            alpha_b = alpha
        model = Lasso(alpha=alpha_b, max_iter=max_iter, tol=tol)
        if private:
            with warnings.catch_warnings(record=True):   # captured, never re-emitted
                warnings.simplefilter("always")
                model.fit(Xb, yb)
        else:
            model.fit(Xb, yb)
        coef = model.coef_
        support = np.flatnonzero(coef)
        if max_support is not None and support.size > max_support:
            order = np.argsort(-np.abs(coef[support]), kind="stable")
            support = support[order[:max_support]]
        counts[support] += 1
    return counts


def block_support_counts(X, y, *, n_blocks, alpha=0.1, alpha_scale="absolute",
                         max_support=None, neighbouring="replace_one", shuffle=True,
                         max_iter=1000, tol=1e-4, random_state=None):
    """How many disjoint blocks' LASSO supports contain each feature (not private).

    The examples are split into ``n_blocks`` disjoint blocks (see
    ``neighbouring``), a LASSO (:class:`sklearn.linear_model.Lasso`, objective
    ``||y - Xw - b||^2 / (2 n_b) + alpha ||w||_1`` with an intercept, so each
    block is centred with its own means) is fitted on each block, and feature
    ``j`` is counted once for every block whose support (non-zero coefficients,
    or the ``max_support`` largest in absolute value) contains it.

    One example lies in exactly one block, so between neighbouring datasets
    one block's support changes and **every count moves by at most 1**
    (l-infinity sensitivity 1; the l1 sensitivity is up to twice the support
    size).  The counts themselves are not private.

    **The penalty and the feature scale.**  A block's support is empty as soon
    as ``alpha`` >= its ``alpha_max = max_j |x_j^T (y - mean(y))| / n_b``, which
    is proportional to the scale of the features (and of ``y``): features 100
    times smaller need a penalty 100 times smaller for the same support.  With
    ``alpha_scale="block_max"`` the penalty of every block is ``alpha`` times
    that block's own ``alpha_max``, which makes the supports invariant to
    rescaling ``X`` or ``y``.  Each block's penalty then depends on that block's
    data only, so one example still changes one block's support and the
    sensitivity stays 1 (a penalty derived from *all* the data would not).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    n_blocks : int
        Number of blocks, ``1 <= n_blocks <= n_samples``.
    alpha : float, default=0.1
        LASSO penalty of every block: with ``alpha_scale="absolute"`` in the
        units of :class:`~sklearn.linear_model.Lasso` (> 0); with
        ``"block_max"`` a fraction of each block's ``alpha_max``, in (0, 1).
    alpha_scale : {"absolute", "block_max"}, default="absolute"
        How ``alpha`` is read (see above).
    max_support : int, optional
        Keep at most this many features per block (largest ``|w_j|``, ties to
        the lower index).  ``None``: the whole support.
    neighbouring : {"replace_one", "add_remove"}, default="replace_one"
        ``"replace_one"``: the number of examples is public; a random
        permutation (or the data order when ``shuffle=False``) is cut into
        ``n_blocks`` contiguous blocks whose sizes differ by at most one.
        ``"add_remove"``: each example goes to a uniformly random block
        independently (block sizes are random), so adding an example does not
        move the others.
    shuffle : bool, default=True
        Only for ``"replace_one"``: permute before cutting (``False`` keeps the
        data order, e.g. to reproduce an experiment with planted blocks).
    max_iter, tol : int, float
        Passed to :class:`~sklearn.linear_model.Lasso`.
    random_state : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n_features,)

    Warns
    -----
    EmptySupportWarning
        When every block's support is empty (all counts 0), typically because
        ``alpha`` is too large for the scale of the features.
    """
    X, y = _validate_X_y(None, X, y)
    n, d = X.shape
    n_blocks = _check_n_blocks(n_blocks, n)
    alpha, alpha_scale = _check_alpha(alpha, alpha_scale)
    if max_support is not None:
        max_support = _check_k_features(max_support, d + 1)
    neighbouring = check_neighbouring(neighbouring)
    rng = check_random_state(random_state)
    labels = _block_labels(n, n_blocks, neighbouring, bool(shuffle), rng)
    counts = _support_counts(X, y, labels, n_blocks, alpha, alpha_scale, max_support,
                             max_iter, tol)
    _warn_if_all_empty(counts, alpha, alpha_scale, stacklevel=2)
    return counts


@fill_doc
@dataclasses.dataclass(frozen=True)
class TwoStageParams:
    """The parameters a TwoStageSelector fit runs with (its privacy plan's ``params``)."""
    k: int
    epsilon: float
    neighbouring: str
    selector: str
    block_support: str
    gamma: float
    alpha: float
    alpha_scale: object
    lasso_max_iter: int
    lasso_tol: float
    n_blocks: int


class TwoStageSelector(PrivateEstimatorMixin, _SelectorTagsMixin, SelectorMixin,
                       BaseEstimator):
    r"""Private feature selection by the first stage of Kifer, Smith & Thakurta (2012).

    Split the examples into ``n_blocks`` (default ``floor(sqrt(n_samples))``)
    disjoint blocks, fit a LASSO on each, count for every feature the blocks
    whose support contains it (``block_support_counts``), and select the
    ``k`` most frequent features privately with
    :func:`canonical_lipschitz_top_k` (default) or :func:`peeling_top_k`.

    **Privacy.**  One example is in one block, so between neighbours (for the
    chosen ``neighbouring`` relation, with the block assignment described in
    ``block_support_counts``) every count moves by at most 1: the top-k
    step runs with sensitivity 1 and the selector is ``epsilon``-DP (pure,
    delta = 0).  The LASSO fits may use their block's data freely (they are
    inside the sensitivity argument); global, data-derived preprocessing
    before the split would break it.  This is why ``alpha_scale="block_max"``
    (each block's penalty relative to that block's own ``alpha_max``) is
    private, while a penalty relative to the ``alpha_max`` of the whole data
    set would not be.  ``privacy_event_`` names the mechanism of the one
    top-k release: ``PureDPEvent(epsilon)`` for the canonical Lipschitz
    mechanism (not bounded range), k ``ExponentialMechanismEvent(epsilon / k)``
    for peeling (see :class:`DPSIS`).  With ``accountant`` the spend is
    checked after validation and before the block assignment and the LASSO
    fits, and charged once after the selection.

    **The penalty and the feature scale.**  With the default
    ``alpha_scale="absolute"``, ``alpha`` is in the units of
    :class:`~sklearn.linear_model.Lasso` and a block's support is empty once
    ``alpha`` >= ``max_j |x_j^T (y - mean(y))| / n_b``, a quantity proportional
    to the scale of the features: ``alpha=0.1`` suits features and target of
    order 1 (e.g. standardised, as in Swope et al.), but with entries of order
    0.01 every support can be empty, the counts are all 0 and the selection is
    uniformly random.  A private ``fit`` does not warn about it (a warning that
    depends on the data would be an output outside the privacy guarantee), nor
    does it let the block fits' ``ConvergenceWarning`` through (whether a block's
    coordinate descent converged within ``lasso_max_iter`` depends on that
    block's data: one outlying row can decide it); the counts use whatever the
    block fits reached.  The non-private ``block_support_counts`` and a
    non-private ``fit`` (``epsilon=None``) warn, the first with an
    :class:`~dptoolkit.exceptions.EmptySupportWarning`, so check a penalty on
    public or synthetic data of the same scale.  Either scale ``alpha`` with the
    public feature bounds or use
    ``alpha_scale="block_max"``, where ``alpha`` in (0, 1) is a fraction of
    each block's ``alpha_max`` and the result does not depend on the scale.

    **Choices the papers leave open** (Swope et al. 2024, Sec. 3 and 5;
    Kifer et al. 2012, Sec. 4): the block count (``floor(sqrt(n))``, blocks
    of sizes differing by at most one; under add/remove ``n`` itself is not
    public, see ``n_blocks``); the LASSO penalty (``alpha = 0.1`` as in the
    experiments of Swope et al., scikit-learn's scaling, intercept per block);
    the support (all non-zero coefficients, or the ``k`` largest with
    ``block_support="top_k"``); the private selection mechanism (Swope et al.
    do not name it; the canonical Lipschitz mechanism is the default so that
    DP-SIS and the two-stage method differ only in their scores); ties between
    equal counts are the mechanism's to break (uniformly within a class).

    Parameters
    ----------
    k : int
        Number of features, ``k >= 1``.  From ``n_features`` on, every feature
        is kept (with a warning above ``n_features``, as
        :class:`~sklearn.feature_selection.SelectKBest`): that output depends on
        the public shape only, so no block is fitted and no noise drawn; a
        private fit still reports and charges its ``epsilon`` (an upper bound on
        a release of no data).
    epsilon : float or None, default=1.0
        Privacy budget (> 0).  None (only when given explicitly): the non-private
        selection (the ``k`` largest
        counts, ties to the lower index; the block fits' warnings and the
        :class:`~dptoolkit.exceptions.EmptySupportWarning` reach the caller),
        with ``privacy_spent_`` and ``privacy_event_`` None, as every estimator
        of the toolkit with ``epsilon=None``.
    alpha : float, default=0.1
        LASSO penalty of every block (see ``alpha_scale``).
    alpha_scale : {"absolute", "block_max"}, default="absolute"
        ``"absolute"``: ``alpha`` > 0 in scikit-learn's Lasso units (the
        setting of Swope et al.).  ``"block_max"``: ``alpha`` in (0, 1) is a
        fraction of every block's own ``alpha_max`` (scale-free, same privacy).
    n_blocks : int, optional
        Number of blocks.  Default ``floor(sqrt(n_samples))``; with
        ``neighbouring="add_remove"`` that uses the private sample size and
        raises :class:`~dptoolkit.exceptions.PrivacyLeakWarning` (pass a public value instead).
    block_support : {"nonzero", "top_k"}, default="nonzero"
    neighbouring : {"replace_one", "add_remove"}, default="replace_one"
    mechanism : {"canonical_lipschitz", "peeling"}, default="canonical_lipschitz"
    gamma : float, default=0.5
        Loss weight of the canonical Lipschitz mechanism.
    lasso_max_iter, lasso_tol : int, float
        ``max_iter`` and ``tol`` of every block's :class:`~sklearn.linear_model.Lasso`.
    random_state : None, int, SeedSequence or numpy.random.Generator
        Drives the block assignment and the private selection.
    %(accountant_selector)s

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features,)
    selected_features_ : ndarray of int64, shape (min(k, n_features),)
    n_blocks_ : int
    %(attrs_selector_privacy)s
        Both None for a non-private fit (``epsilon=None``).
    n_features_in_ : int

    References
    ----------
    D. Kifer, A. Smith and A. Thakurta. Private convex empirical risk
    minimization and high-dimensional regression. COLT 2012.

    R. Swope, A. Khanna, P. Doldo, S. Roy, E. Raff. Feature selection from
    differentially private correlations. AISec 2024, Sections 3 and 5.
    """

    _parameter_constraints = {
        "k": [Interval("int", 1, None)], "epsilon": EPSILON, "accountant": ACCOUNTANT,
        "random_state": [RANDOM_STATE], "alpha": POSITIVE,     # < 1 for "block_max"
        "alpha_scale": [Options(*_ALPHA_SCALES)],
        "n_blocks": [None, Interval("int", 1, None)],          # <= n_samples: with the data
        "block_support": [Options("nonzero", "top_k")], "neighbouring": NEIGHBOURING,
        "mechanism": [Options(*_SELECTORS)], "gamma": [Interval("real", 0.0, 1.0, closed="both")],
        "lasso_max_iter": [Interval("int", 1, None)], "lasso_tol": NON_NEGATIVE,
    }

    def __init__(self, k=5, *, epsilon=1.0, alpha=0.1, alpha_scale="absolute", n_blocks=None,
                 block_support="nonzero", neighbouring="replace_one",
                 mechanism="canonical_lipschitz", gamma=0.5, lasso_max_iter=1000,
                 lasso_tol=1e-4, random_state=None, accountant=None):
        self.k = k
        self.epsilon = epsilon
        self.alpha = alpha
        self.alpha_scale = alpha_scale
        self.n_blocks = n_blocks
        self.block_support = block_support
        self.neighbouring = neighbouring
        self.mechanism = mechanism
        self.gamma = gamma
        self.lasso_max_iter = lasso_max_iter
        self.lasso_tol = lasso_tol
        self.random_state = random_state
        self.accountant = accountant

    @fill_doc
    def fit(self, X, y):
        """Select ``k`` features privately.

        %(params_fit_Xy)s

        %(returns_self)s

        Raises
        ------
        ValueError
            Bad ``k``, ``epsilon``, ``n_blocks``, ``alpha`` (for its
            ``alpha_scale``) or option; X and y of different lengths;
            non-finite values.
        TypeError
            ``accountant`` is not a BudgetAccountant (or None).
        BudgetExceededError
            The ``accountant`` cannot pay ``(epsilon, 0)``; nothing is computed.

        Warns
        -----
        PrivacyLeakWarning
            Private fit with ``n_blocks=None`` under add/remove neighbouring.
        UserWarning
            ``k`` greater than ``n_features``: every feature is kept.
        EmptySupportWarning, ConvergenceWarning
            Non-private fits only (see the class notes).
        """
        return super().fit(X, y)

    def _validate_fit_data(self, X, y):
        return (*_validate_X_y(self, X, y), None)

    def _fit_private(self, X, y, plan, rng):
        """Lasso supports on blocks, their counts, the (private) top k."""
        n, d = X.shape
        (k, epsilon, neighbouring, selector, block_support, gamma, alpha, alpha_scale,
         lasso_max_iter, lasso_tol, n_blocks) = dataclasses.astuple(plan.params)
        private = epsilon is not None
        if k == d:      # every feature: public, nothing to count or select
            self.selected_features_ = np.arange(d)
            self.support_ = np.ones(d, dtype=bool)
            self.n_blocks_ = int(n_blocks)
            return
        labels = _block_labels(n, n_blocks, neighbouring, True, rng)
        counts = _support_counts(X, y, labels, n_blocks, alpha, alpha_scale,
                                 k if block_support == "top_k" else None,
                                 lasso_max_iter, lasso_tol, private=private)
        if not private:
            _warn_if_all_empty(counts, alpha, alpha_scale, stacklevel=2)
            sel = _select_top_k(counts, k)
        # No EmptySupportWarning in a private fit: whether every support is empty
        # depends on the private data, and a warning is an output the epsilon
        # does not cover.
        elif selector == "canonical_lipschitz":
            sel = _canonical_lipschitz(counts, k, epsilon, 1.0, gamma, rng)
        else:
            sel = np.sort(peeling_top_k(counts, k, epsilon=epsilon, sensitivity=1.0,
                                        random_state=rng))
        self.selected_features_ = sel
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[sel] = True
        self.n_blocks_ = int(n_blocks)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        one top-k release on counts of l-infinity sensitivity 1; ``params`` a
        :class:`TwoStageParams`."""
        k, _ = _k_or_all(self.k, n_features, "TwoStageSelector")
        # every range is the constraint table's (checked once); the rules between
        # parameters, and with the data, here
        epsilon, _ = self._check_budget(optional=True)
        private = epsilon is not None
        neighbouring, selector, block_support = (self.neighbouring, self.mechanism,
                                                 self.block_support)
        gamma, alpha, alpha_scale = float(self.gamma), float(self.alpha), self.alpha_scale
        if alpha_scale == "block_max" and not alpha < 1.0:
            raise ValueError(f"alpha must be in (0.0, 1.0) with alpha_scale='block_max', "
                             f"got {alpha!r}")
        lasso_max_iter, lasso_tol = int(self.lasso_max_iter), float(self.lasso_tol)
        if self.n_blocks is None:
            n_blocks = max(1, math.isqrt(n_samples))
            if private and neighbouring == "add_remove":
                warnings.warn("n_blocks=None uses floor(sqrt(n_samples)), but n_samples is "
                              "not public under add/remove neighbouring; pass a public "
                              "n_blocks", PrivacyLeakWarning, stacklevel=3)
        else:
            n_blocks = self.n_blocks
        n_blocks = _check_n_blocks(n_blocks, n_samples)   # a rule with the data
        event, spent = (_top_k_privacy(selector, epsilon, k) if private
                        else (None, None))
        return self._plan(event, spent, TwoStageParams(
            k, epsilon, neighbouring, selector, block_support, gamma, alpha, alpha_scale,
            lasso_max_iter, lasso_tol, n_blocks))

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_
