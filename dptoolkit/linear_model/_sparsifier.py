r"""The Sparsifier of Khanna, Lu and Raff (paper 001, Algorithm 2): sparse private LASSO."""
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_memory, validate_data

from .._docstrings import fill_doc
from .._private import PrivateEstimatorMixin
from .._validation import check_positive_int, check_random_state, check_scalar_range
from ..accounting.events import ComposedEvent, PureDPEvent
from ..mechanisms import DoubleGeometric
from ._base import _ClassifierOutputs, _store_params
from ._frank_wolfe import DEFAULT_REFRESH_TOL, FrankWolfeLassoClassifier

__all__ = ["SparsifiedLassoClassifier", "check_count_bounds", "noisy_count",
           "keep_largest"]


def check_count_bounds(count_bounds, n_coef):
    """Validate the clipping bounds of the Sparsifier's count.

    Parameters
    ----------
    count_bounds : "sqrt" or tuple (alpha, beta)
        ``"sqrt"``: ``(floor(sqrt(n_coef)), ceil(2 sqrt(n_coef)))``, the paper's
        :math:`(\\sqrt p, 2\\sqrt p)` widened outwards to integers.  A tuple: two
        integers (integral floats are accepted) with ``0 <= alpha < beta``.
    n_coef : int
        Number of coefficients of the model (``n_features``, or ``n_classes *
        n_features`` for a multinomial model).

    Returns
    -------
    alpha, beta : int

    Raises
    ------
    ValueError
        Unknown string, negative bounds, ``alpha >= beta``, or non-integer bounds.
        The bounds must be integers: the noisy count is ``clip(c) + Z`` with an
        integer ``Z``, so a fractional bound would put the outputs of neighbouring
        datasets on different lattices (``6.4 + Z`` against ``7 + Z``), which
        distinguishes them with certainty.
    TypeError
        A bound that is not a real number, or a value that is neither a string nor a
        pair.
    """
    if isinstance(count_bounds, str):
        if count_bounds != "sqrt":
            raise ValueError(f"count_bounds must be 'sqrt' or a pair (alpha, beta), got "
                             f"{count_bounds!r}")
        root = math.sqrt(n_coef)
        return int(math.floor(root)), int(math.ceil(2.0 * root))
    try:
        alpha, beta = count_bounds
    except (TypeError, ValueError):
        raise TypeError("count_bounds must be 'sqrt' or a pair (alpha, beta) of integers, "
                        f"got {count_bounds!r}") from None
    out = []
    for name, value in (("alpha", alpha), ("beta", beta)):
        value = check_scalar_range(value, f"count_bounds {name}", low=0.0)
        if value != math.floor(value):
            raise ValueError(f"count_bounds {name} must be an integer (a fractional clipping "
                             f"bound is not private with integer noise), got {value!r}")
        out.append(int(value))
    alpha, beta = out
    if alpha >= beta:
        raise ValueError(f"count_bounds must satisfy alpha < beta, got alpha={alpha}, "
                         f"beta={beta}")
    return alpha, beta


def noisy_count(count, *, count_bounds, epsilon, precision=1.0, n_coef, random_state=None):
    r"""The Sparsifier's private count (paper 001, Algorithm 2, lines 2-6).

    ``clip(count, alpha, beta) + Z``, clipped to ``[alpha, beta]`` again, times
    ``precision``, clipped to ``[0, n_coef]`` and rounded half up.  ``Z`` is
    double-geometric (discrete Laplace) with ``p = 1 - exp(-epsilon / (beta -
    alpha))`` (:class:`dptoolkit.mechanisms.DoubleGeometric` with sensitivity
    ``beta - alpha``).

    **Privacy.**  Whatever the neighbouring relation, the clipped count moves by at
    most ``beta - alpha`` (it lies in ``[alpha, beta]``), so ``clip(count) + Z`` is
    ``epsilon``-DP (Ghosh, Roughgarden, Sundararajan 2009); the rest is
    post-processing.  The *noisy* count is released, not the true one: Appendix B of
    paper 001 (line 58) overwrites it with ``clip(count_nonzero(w_np))`` and so
    releases a function of the non-private solution without noise.

    Parameters
    ----------
    count : int
        The non-private count (>= 0).
    count_bounds : tuple of int
        ``(alpha, beta)`` with ``0 <= alpha < beta`` (see :func:`check_count_bounds`).
    epsilon : float
        :math:`\varepsilon_1 > 0`.
    precision : float, default=1.0
        :math:`\rho > 0`.
    n_coef : int
        Number of coefficients ``d`` (upper clip).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    int
        The released count, in ``[0, n_coef]``.
    """
    alpha, beta = check_count_bounds(count_bounds, n_coef)
    precision = check_scalar_range(precision, "precision", low=0.0, low_open=True)
    count = check_positive_int(count, "count", minimum=0)
    clipped = min(max(count, alpha), beta)
    mech = DoubleGeometric(epsilon=epsilon, sensitivity=beta - alpha,
                           random_state=random_state)
    c = min(max(mech.randomise(clipped), alpha), beta)
    c = min(max(c * precision, 0.0), float(n_coef))
    return int(math.floor(c + 0.5))


def keep_largest(coef, n_keep):
    """Zero all but the ``n_keep`` largest ``|coef|`` (ties to the lower flat index).

    Parameters
    ----------
    coef : ndarray of shape (n_classes, n_features)
    n_keep : int
        >= 0; entries that are already zero are never "kept" in excess.

    Returns
    -------
    ndarray of the same shape (a copy).
    """
    flat = np.asarray(coef, dtype=np.float64).ravel()
    out = np.zeros_like(flat)
    if n_keep > 0:
        order = np.argsort(-np.abs(flat), kind="stable")[:n_keep]
        out[order] = flat[order]
    return out.reshape(np.shape(coef))


def _nonprivate_coef(X, y, l1_bound, max_iter, refresh_tol, classes=None):
    """Non-private Frank-Wolfe coefficients (cached by ``memory``; module level so
    joblib can hash it); ``classes``: the label set of the private fit.

    The fit runs inside the count's mechanism (only the noisy count of its
    non-zeros is released), so its warnings, which depend on the data, are
    captured and dropped, never re-emitted.
    """
    est = FrankWolfeLassoClassifier(l1_bound=l1_bound, max_iter=max_iter, solver="fast",
                                    refresh_tol=refresh_tol, classes=classes)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        return est.fit(X, y).coef_


class SparsifiedLassoClassifier(_ClassifierOutputs, PrivateEstimatorMixin, ClassifierMixin,
                                BaseEstimator):
    r"""Sparse private L1-constrained logistic regression: the Sparsifier.

    Paper 001, Algorithm 2: (1) fit non-private Frank-Wolfe for
    ``nonprivate_max_iter`` steps and count its non-zero coefficients; (2) release
    that count privately (:func:`noisy_count`: clip to ``[alpha, beta]``, add
    double-geometric noise with :math:`p = 1 - e^{-\varepsilon_1/(\beta-\alpha)}`,
    clip, multiply by ``precision``, clip to ``[0, d]``, round); (3) fit private
    LASSO (Talwar et al.; :class:`FrankWolfeLassoClassifier` with ``epsilon`` and the
    given Laplace ``selector``); (4) keep the ``c`` largest :math:`|w_j|` of the
    private weights.  Both Frank-Wolfe fits use the fast kernels (paper 000,
    Algorithm 2 with bounded staleness).  With more than two classes both fits are
    the multinomial private LASSO (paper 001, Algorithm 3) and ``c`` counts the
    entries of the ``K x p`` weight matrix.

    **Privacy.**  Neighbouring datasets differ in one example (``neighbouring``);
    the data must satisfy the public bound :math:`\|x_i\|_\infty \le 1` (see
    ``clip_data``; no data-derived scaling is done).  The clipped count has
    sensitivity :math:`\beta-\alpha` under either relation and the double-geometric
    mechanism makes the released count :math:`\varepsilon_1`-DP (pure); the
    non-private fit is used only through it.  The private fit is
    :math:`(\varepsilon_2, \delta)`-DP (:class:`FrankWolfeLassoClassifier`: per-step
    budget by the exact inverse of the full advanced-composition bound or basic
    composition, Laplace scale :math:`2\Delta/\varepsilon'`,
    :mod:`dptoolkit.accounting.talwar`).  Keeping the largest coefficients is
    post-processing, so by basic composition (paper 001, Theorem 3) the output is
    :math:`(\varepsilon_1+\varepsilon_2, \delta)`-DP; ``privacy_spent_`` reports it
    (with ``selector="laplace_talwar"`` the private fit's true, slightly larger,
    epsilon is used instead of :math:`\varepsilon_2`).

    **Side channels.**  The label set is public: declare it as ``classes``
    (otherwise it is read from ``y`` with a
    :class:`~dptoolkit.exceptions.PrivacyLeakWarning`).  The non-private fit's
    warnings are captured and dropped; the clipping warning says only *that*
    entries were clipped.  **Timing** is not covered: both fits use the fast
    kernels, whose cost follows the non-zeros of the chosen columns and of the
    rows they touch, so one added dense row within the public bound can make a
    fit an order of magnitude slower (see the Notes of
    :class:`FrankWolfeLassoClassifier`, and pad the release to a public deadline
    when the fit's duration is observable).

    The paper's Appendix B code differs in two places, both fixed here: it
    overwrites the noisy count with the true clipped count (line 58, which would
    release it without noise), and its private LASSO picks the *ascent* vertex
    (``argmax`` of ``<s, grad>`` plus noise) where Frank-Wolfe must pick the
    minimiser.

    Parameters
    ----------
    l1_bound : float, default=50.0
        :math:`\lambda > 0` of both fits (paper 001 uses 10; 50 is the default of
        :class:`FrankWolfeLassoClassifier`, from paper 000's experiments).
    max_iter : int or "auto", default="auto"
        Iterations ``T`` of the private fit (``"auto"`` as for
        :class:`FrankWolfeLassoClassifier`).
    epsilon_count : float, default=0.05
        :math:`\varepsilon_1 > 0` of the count.
    epsilon : float, default=0.95
        :math:`\varepsilon_2 > 0` of the private fit.
    delta : float or None, default=1e-5
        :math:`\delta \in (0, 1)` of the private fit (``None``: pure DP by basic
        composition).
    count_bounds : "sqrt" or tuple (alpha, beta), default="sqrt"
        Public clipping bounds of the count, integers ``0 <= alpha < beta``;
        ``"sqrt"`` is ``(floor(sqrt(d)), ceil(2 sqrt(d)))`` with ``d`` the number of
        coefficients (the paper's :math:`(\sqrt p, 2\sqrt p)`, made integer).
    precision : float, default=1.0
        :math:`\rho > 0`; below 1 keeps fewer coefficients.
    nonprivate_max_iter : int, default=2000
        Iterations of the non-private fit (it only sets the count; at most this
        many coefficients are non-zero).
    selector : {"auto", "laplace", "laplace_talwar", "grouped", "exponential", "noisy_max"}, default="auto"
        Vertex selection of the private fit (see :class:`FrankWolfeLassoClassifier`);
        ``"auto"``: the exponential mechanism with zCDP accounting and candidate
        screening (the estimator's default); ``"laplace"`` is private LASSO as in
        paper 001 with the correct scale.
    refresh_tol : float, default=0.3
        Staleness bound of the fast kernels (both fits).
    neighbouring : {"add_remove", "replace_one"}, default="add_remove"
    accounting : {"auto", "zcdp", "advanced"}, default="auto"
        Budget split of the private fit (see
        :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`).
    n_samples_public : int or None, default=None
        Public dataset size N for the private fit's ``max_iter="auto"``; None
        reads it from the data (with a PrivacyLeakWarning).
    clip_data : bool, default=True
        Entries outside [-1, 1] are clipped (with a
        :class:`~dptoolkit.exceptions.DataClippedWarning`) if True, an error if False.
        Either message depends on the data (it says only *that* entries were out of
        bounds) and is outside the guarantee.
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set (at least two distinct labels); two give the binary
        model, more the multinomial one, for both Frank-Wolfe fits.  When given the
        label set is never read from ``y`` (a declared class absent from ``y`` is
        fine; a label of ``y`` outside it raises ``ValueError``).  None:
        ``np.unique(y)`` with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.
    memory : None, str or joblib.Memory, default=None
        Caches the non-private fit (a pure function of the data and
        ``l1_bound, nonprivate_max_iter, refresh_tol``), e.g. across repeated trials.
        Caching does not change the guarantee: only the noisy count is released.
    accountant : BudgetAccountant or None, default=None
        If given, :math:`(\varepsilon_1 + \varepsilon_2, \delta)` is checked before
        any work and spent once after the fit.
    random_state : None, int or numpy.random.Generator, default=None
        Randomness of the count noise and of the private fit.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Sparse private weights: at most ``n_nonzero_`` non-zeros.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Zeros (no intercept, as in the paper).
    classes_ : ndarray of shape (n_classes,)
        The declared ``classes`` (sorted), else the labels of ``y``.
    n_nonzero_ : int
        The released (noisy, clipped, rounded) count ``c``.
    n_iter_ : int
        Iterations of the private fit.
    count_bounds_ : tuple of int
        ``(alpha, beta)`` used.
    estimator_ : FrankWolfeLassoClassifier
        The private fit (its dense ``coef_`` is covered by the same guarantee).
    privacy_spent_ : tuple (epsilon, delta)
        :math:`(\varepsilon_1 + \varepsilon_2, \delta)`.
    privacy_event_ : ComposedEvent
        The count (``PureDPEvent(epsilon_count)``) and the private fit's event.
    n_features_in_ : int

    References
    ----------
    A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression (paper 001),
    Algorithms 1-3, Theorem 3.

    K. Talwar, A. Thakurta, L. Zhang. Nearly Optimal Private LASSO. NeurIPS 2015.

    A. Ghosh, T. Roughgarden, M. Sundararajan. Universally utility-maximizing privacy
    mechanisms. STOC 2009.
    """

    def __init__(self, *, l1_bound=50.0, max_iter="auto", epsilon_count=0.05, epsilon=0.95,
                 delta=1e-5, count_bounds="sqrt", precision=1.0, nonprivate_max_iter=2000,
                 selector="auto", refresh_tol=DEFAULT_REFRESH_TOL,
                 neighbouring="add_remove", accounting="auto", n_samples_public=None,
                 clip_data=True, classes=None, memory=None, accountant=None,
                 random_state=None):
        _store_params(self, locals())

    def _check_params(self):
        epsilon_count = check_scalar_range(self.epsilon_count, "epsilon_count", low=0.0,
                                           low_open=True)
        if self.epsilon is None:
            raise ValueError("epsilon (the private fit's epsilon_2) must be a positive "
                             "number, got None")
        check_scalar_range(self.epsilon, "epsilon", low=0.0, low_open=True)
        precision = check_scalar_range(self.precision, "precision", low=0.0, low_open=True)
        nonprivate_max_iter = check_positive_int(self.nonprivate_max_iter,
                                                 "nonprivate_max_iter")
        if self.selector not in ("auto", "laplace", "laplace_talwar", "grouped",
                                 "exponential", "noisy_max"):
            raise ValueError("selector must be one of 'auto', 'laplace', 'laplace_talwar', "
                             f"'grouped', 'exponential', 'noisy_max', got {self.selector!r}")
        if not isinstance(self.clip_data, (bool, np.bool_)):
            raise TypeError(f"clip_data must be a bool, got {type(self.clip_data).__name__}")
        return epsilon_count, precision, nonprivate_max_iter

    @fill_doc
    def fit(self, X, y):
        """Fit the sparse private model.

        Parameters
        ----------
        %(X_fit)s
            Entries must lie in [-1, 1] (public bound; see ``clip_data``).
        y : array-like of shape (n_samples,)
            At least two classes, or labels from the declared ``classes``.

        %(returns_self)s

        Raises
        ------
        ValueError
            Invalid hyper-parameters (``count_bounds`` with ``alpha >= beta``,
            negative or fractional bounds; ``precision <= 0``; ``epsilon_count <=
            0``; ...), bad data, data outside the public bound with
            ``clip_data=False``, labels of ``y`` outside ``classes``.
        BudgetExceededError
            The ``accountant`` cannot pay :math:`(\\varepsilon_1+\\varepsilon_2, \\delta)`
            (nothing is fitted).
        TypeError
            Non-numeric parameters or data.
        """
        epsilon_count, precision, nonprivate_max_iter = self._check_params()
        X, y = validate_data(self, X, y, accept_sparse=True, dtype=np.float64,
                             ensure_all_finite=True, y_numeric=False)
        check_classification_targets(y)
        classes = self._resolve_classes(y, private=True)
        if classes.size < 2:
            raise ValueError(f"y needs at least two classes (or declare them in classes), "
                             f"got {classes.size} class")
        n_coef = (1 if classes.size == 2 else classes.size) * X.shape[1]
        bounds = check_count_bounds(self.count_bounds, n_coef)
        memory = check_memory(self.memory)
        X = self._enforce_public_bound(sp.csr_array(X, dtype=np.float64), "linf", 1.0)
        rng = check_random_state(self.random_state)

        # (3) first, so that the accountant check (inside, before the kernels run)
        # precedes all work; the order of the fits does not change the output.
        private = FrankWolfeLassoClassifier(
            l1_bound=self.l1_bound, max_iter=self.max_iter, epsilon=self.epsilon,
            delta=self.delta, solver="fast", selector=self.selector,
            refresh_tol=self.refresh_tol, neighbouring=self.neighbouring,
            accounting=self.accounting, n_samples_public=self.n_samples_public,
            clip_data=False, classes=classes, random_state=rng)
        budget = private.budget(X.shape[1], classes.size,
                                n_samples=self.n_samples_public or X.shape[0])
        # the count (double-geometric, epsilon_1-DP) and the private fit compose
        event = ComposedEvent((PureDPEvent(epsilon_count), budget.event))
        spent = (epsilon_count + budget.epsilon, budget.delta)
        self._check_spend(event, spent)
        private.fit(X, y)
        # (1)-(2)
        coef_np = memory.cache(_nonprivate_coef)(X, y, self.l1_bound, nonprivate_max_iter,
                                                 self.refresh_tol, classes)
        c = noisy_count(int(np.count_nonzero(coef_np)), count_bounds=bounds,
                        epsilon=epsilon_count, precision=precision, n_coef=n_coef,
                        random_state=rng)
        # (4)
        self.coef_ = keep_largest(private.coef_, c)
        self.intercept_ = np.zeros(self.coef_.shape[0])
        self.classes_ = private.classes_
        self.n_nonzero_ = c
        self.n_iter_ = private.n_iter_
        self.count_bounds_ = bounds
        self.estimator_ = private
        return self._record_spend(event, spent)

    # ----------------------------------------------------------------- predict
    _multi_class = True
    _poor_score = True  # private: noisy by design

    def _margins(self, X):
        """Margins: shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        scores = np.asarray(X @ self.coef_.T)
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores
