r"""The Sparsifier of Khanna, Lu and Raff (Khanna, Lu and Raff (2023), Algorithm 2): sparse private LASSO."""
import dataclasses
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_memory

from .._docstrings import fill_doc
from .._private import fit_with_stream, nested_fits, PrivateEstimatorMixin
from .._validation import (Boolean, check_positive_int, check_scalar_range,
                           Checked, CLASSES, DELTA_OPEN, Interval,
                           NEIGHBOURING, Options, POSITIVE, PRIVATE_COMMON,
                           trusted_parameters)
from ..accounting.events import ComposedEvent, PureDPEvent
from ..mechanisms import DoubleGeometric
from .._estimator import _ClassifierOutputs, _store_params
from ._glm._base import MAX_ITER
from ._frank_wolfe import DEFAULT_REFRESH_TOL, FrankWolfeLassoClassifier
from ._l1_ball import l1_ball_logistic, project_l1_rows
from ._frank_wolfe._budget import COMPOSITION_CHOICES, NONPRIVATE_L1_BOUND

#: Duality gap (in units of the mean cross-entropy, ln 2 at zero for two classes)
#: at which the projected-gradient solver of the non-private fit stops.
NONPRIVATE_TOL = 1e-4

__all__ = ["SparsifiedLassoClassifier", "check_count_bounds", "noisy_count",
           "keep_largest", "l1_ball_logistic", "project_l1_rows"]


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
    r"""The Sparsifier's private count (Khanna, Lu and Raff (2023), Algorithm 2, lines 2-6).

    ``clip(count, alpha, beta) + Z``, clipped to ``[alpha, beta]`` again, times
    ``precision``, clipped to ``[0, n_coef]`` and rounded half up.  ``Z`` is
    double-geometric (discrete Laplace) with ``p = 1 - exp(-epsilon / (beta -
    alpha))`` (:class:`dptoolkit.mechanisms.DoubleGeometric` with sensitivity
    ``beta - alpha``).

    **Privacy.**  Whatever the neighbouring relation, the clipped count moves by at
    most ``beta - alpha`` (it lies in ``[alpha, beta]``), so ``clip(count) + Z`` is
    ``epsilon``-DP (Ghosh, Roughgarden, Sundararajan 2009); the rest is
    post-processing.  The *noisy* count is released, not the true one: Appendix B of
    Khanna, Lu and Raff (2023) (line 58) overwrites it with ``clip(count_nonzero(w_np))`` and so
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








def _nonprivate_coef(X, y, l1_bound, solver, max_iter, tol, refresh_tol, classes):
    """Non-private coefficients, shape (n_rows, n_features), and the steps run.

    ``solver="projected_gradient"``: ``l1_ball_logistic()`` to duality gap ``tol``;
    ``"frank_wolfe"``: ``max_iter`` non-private Frank-Wolfe steps (the fast kernels,
    Raff, Khanna and Lu (2023) Algorithm 2 with bounded staleness), as in Khanna, Lu and Raff's (2023) experiments.
    ``classes``: the label set of the fit (sorted; the labels of ``y`` lie in it).
    Cached by ``memory`` (module level so joblib can hash it).  In a private fit the
    caller captures and drops its warnings (see ``fit``).
    """
    if solver == "frank_wolfe":
        est = FrankWolfeLassoClassifier(l1_bound=l1_bound, max_iter=max_iter, solver="fast",
                                        refresh_tol=refresh_tol, classes=classes,
                                        epsilon=None).fit(X, y)
        return est.coef_, est.n_iter_
    codes = np.searchsorted(classes, y)
    if classes.size == 2:
        Y = codes.reshape(-1, 1).astype(np.float64)
    else:
        Y = np.zeros((codes.size, classes.size))
        Y[np.arange(codes.size), codes] = 1.0
    W, n_iter, _ = l1_ball_logistic(X, Y, l1_bound, tol=tol, max_iter=max_iter)
    return W, n_iter


def _check_count_pair(value):
    """A pair (its entries, their order and their range against the number of
    coefficients are checked in fit by :func:`check_count_bounds`)."""
    if isinstance(value, str) or len(value) != 2:
        raise ValueError("not a pair")


def _check_memory(value):
    check_memory(value)


@dataclasses.dataclass(frozen=True)
class SparsifierParams:
    """The validated parameters of a Sparsifier fit (its plan's ``params``):
    epsilon None for a non-private fit; ``count_bounds`` checked for ``n_coef``;
    ``composition`` checked."""
    epsilon: float
    epsilon_count: float
    precision: float
    nonprivate_max_iter: int
    n_coef: int
    count_bounds: tuple
    composition: str


@fill_doc
class SparsifiedLassoClassifier(_ClassifierOutputs, PrivateEstimatorMixin, ClassifierMixin,
                                BaseEstimator):
    r"""Sparse private L1-constrained logistic regression: the Sparsifier.

    Khanna, Lu and Raff (2023), Algorithm 2: (1) solve the non-private L1-constrained problem and
    count the non-zero coefficients of its solution; (2) release that count
    privately (``noisy_count()``: clip to ``[alpha, beta]``, add double-geometric
    noise with :math:`p = 1 - e^{-\varepsilon_1/(\beta-\alpha)}`, clip, multiply by
    ``precision``, clip to ``[0, d]``, round); (3) fit private LASSO (Talwar et al.;
    :class:`FrankWolfeLassoClassifier` at its defaults with :math:`\varepsilon_2` and
    the given ``mechanism``: its private candidate screening and, where Frank-Wolfe
    alone would take it, its naive-Bayes start; fast kernels: Raff, Khanna and Lu
    (2023), Algorithm 2 with bounded staleness);
    (4) keep the ``c`` largest :math:`|w_j|` of the private weights.  With more than
    two classes both fits are multinomial (Khanna, Lu and Raff (2023), Algorithm 3, one L1 ball per
    class) and ``c`` counts the entries of the ``K x p`` weight matrix.

    **The non-private fit.**  Khanna, Lu and Raff (2023) counts the non-zeros of "the true nonprivate
    solution" and runs Frank-Wolfe for 50,000 steps to get near it (Section 4.1).
    Frank-Wolfe adds at most one coordinate per step and converges as
    :math:`O(1/T)`, so a fixed number of steps gives the count of an unfinished
    iterate, and each step costs a pass over the rows holding the chosen feature.
    The default ``nonprivate_solver="projected_gradient"`` solves the same problem
    to a certified duality gap ``NONPRIVATE_TOL`` = 1e-4 of the mean cross-entropy
    (an internal constant; ``l1_ball_logistic()``:
    accelerated projected gradient on a working set of features, exact zeros from
    the projection onto the L1 ball); ``"frank_wolfe"`` runs ``nonprivate_max_iter``
    non-private Frank-Wolfe steps as the paper's code does (the first is the more
    accurate and the faster: :ref:`study_sparse_lasso`).  The solver only changes which
    non-private count is privatised, not the privacy analysis below.  Both fits'
    fast kernels use Frank-Wolfe's default staleness bound (its ``refresh_tol``).

    **Non-private fit.**  With an explicit ``epsilon=None`` (the default is
    ``epsilon=1.0``, as for every private estimator of the toolkit) nothing is
    private: the count of the non-private solution is clipped to ``[alpha,
    beta]`` and scaled by ``precision`` without noise, and the ``c`` largest
    weights of the non-private solution itself are kept (step (3) without noise
    is the non-private problem already solved in step (1)); ``privacy_spent_``
    is None.

    **Privacy.**  Neighbouring datasets differ in one example (``neighbouring``);
    the data must satisfy the public bound :math:`\|x_i\|_\infty \le 1` (see
    ``clip_data``; no data-derived scaling is done).  The clipped count has
    sensitivity :math:`\beta-\alpha` under either relation and the double-geometric
    mechanism makes the released count :math:`\varepsilon_1`-DP (pure); the
    non-private fit is used only through it, whatever solver computed it (the
    sensitivity bound holds for any count in :math:`[0, d]`).  The private fit is
    :math:`(\varepsilon_2, \delta)`-DP: it is :class:`FrankWolfeLassoClassifier` with
    its own accounting (its screening's Gaussian release, of which the naive-Bayes
    start is post-processing, and its exponential-mechanism or Laplace steps,
    composed in zCDP or by advanced or basic composition as ``composition`` says;
    ``dptoolkit.accounting._talwar``), and ``privacy_event_`` composes its event
    with the count's.  Keeping the largest coefficients is
    post-processing, so by basic composition (Khanna, Lu and Raff (2023), Theorem 3) the output is
    :math:`(\varepsilon_1+\varepsilon_2, \delta)`-DP.  ``epsilon`` is that total,
    as for every estimator: :math:`\varepsilon_1` = ``epsilon_count`` and
    :math:`\varepsilon_2` = ``epsilon - epsilon_count`` (Khanna, Lu and Raff (2023), Section 4:
    :math:`\varepsilon_1 = 0.05` and reported :math:`\varepsilon = \varepsilon_1 +
    \varepsilon_2`).  ``privacy_spent_`` reports the total (with
    ``mechanism="laplace_talwar"`` the private fit's true, slightly larger, epsilon
    is used instead of :math:`\varepsilon_2`).

    **Side channels.**  The label set is public: declare it as ``classes``
    (otherwise it is read from ``y`` with a
    :class:`~dptoolkit.exceptions.PrivacyLeakWarning`).  In a private fit the
    non-private fit runs inside the count's mechanism (only the noisy count of its
    non-zeros is released), so its warnings (e.g. a
    :class:`~sklearn.exceptions.ConvergenceWarning` naming its duality gap), which
    depend on the data, are captured and dropped; the clipping warning says only
    *that* entries were clipped.  **Timing** is not covered: the private fit uses
    the fast kernels, whose cost follows the non-zeros of the chosen columns and of
    the rows they touch, and the non-private solver runs until its duality gap is
    reached, so one added row within the public bound can change a fit's duration
    (see the Notes of :class:`FrankWolfeLassoClassifier`, and pad the release to a
    public deadline when the fit's duration is observable).

    The paper's Appendix B code differs in two places, both fixed here: it
    overwrites the noisy count with the true clipped count (line 58, which would
    release it without noise), and its private LASSO picks the *ascent* vertex
    (``argmax`` of ``<s, grad>`` plus noise) where Frank-Wolfe must pick the
    minimiser.

    Parameters
    ----------
    l1_bound : float or "auto", default="auto"
        :math:`\lambda > 0` of both fits (Khanna, Lu and Raff (2023) uses 10).
        ``"auto"``: private, the radius :class:`FrankWolfeLassoClassifier` chooses
        for the private fit at :math:`\varepsilon_2` (its excess-risk bound, from
        public N, epsilon, delta and the candidate features), so that the count
        is that of the problem the private fit solves; non-private, 50 (Raff,
        Khanna and Lu's (2023) experiments).  A fixed radius of 50 makes the
        private fit's excess-risk bound vacuous.
    max_iter : int or "auto", default="auto"
        Iterations ``T`` of the private fit (``"auto"`` as for
        :class:`FrankWolfeLassoClassifier`).
    epsilon_count : float, default=0.05
        :math:`\varepsilon_1 > 0` of the count, part of ``epsilon`` (Khanna, Lu and Raff (2023),
        Section 4: 0.05); must be smaller than ``epsilon``.  Unused when
        ``epsilon=None``.
    epsilon : float or None, default=1.0
        Total privacy budget :math:`\varepsilon = \varepsilon_1 + \varepsilon_2 > 0`;
        the private fit gets :math:`\varepsilon_2` = ``epsilon - epsilon_count``.
        ``None`` (only when given explicitly) fits without privacy and without a
        warning (see *Non-private fit* above).
    delta : float or None, default=None
        :math:`\delta \in (0, 1)` of the private fit (``None`` with ``epsilon`` set:
        pure DP by basic composition, as for
        :class:`FrankWolfeLassoClassifier`).
    count_bounds : "sqrt" or tuple (alpha, beta), default="sqrt"
        Public clipping bounds of the count, integers ``0 <= alpha < beta``;
        ``"sqrt"`` is ``(floor(sqrt(d)), ceil(2 sqrt(d)))`` with ``d`` the number of
        coefficients (the paper's :math:`(\sqrt p, 2\sqrt p)`, made integer).
    precision : float, default=1.0
        :math:`\rho > 0`; below 1 keeps fewer coefficients.
    nonprivate_solver : {"projected_gradient", "frank_wolfe"}, default="projected_gradient"
        Solver of the non-private fit (it only sets the count): accelerated
        projected gradient to a duality gap ``NONPRIVATE_TOL`` (above)
        (``l1_ball_logistic()``), or ``nonprivate_max_iter`` Frank-Wolfe steps
        (Khanna, Lu and Raff's (2023) code; at most that many non-zeros).
    nonprivate_max_iter : int, default=2000
        Maximum gradient steps of the projected-gradient solver (a
        :class:`~sklearn.exceptions.ConvergenceWarning` if the gap is not reached),
        or the number of Frank-Wolfe steps.
    mechanism : {"auto", "laplace", "laplace_talwar", "grouped", "exponential", "noisy_max"}, default="auto"
        Vertex selection of the private fit (see :class:`FrankWolfeLassoClassifier`);
        ``"auto"``: the exponential mechanism with zCDP accounting and candidate
        screening (the estimator's default); ``"laplace"`` is private LASSO as in
        Khanna, Lu and Raff (2023) with the correct scale.
    neighbouring : {"add_remove", "replace_one"}, default="add_remove"
    composition : {"auto", "zcdp", "advanced"}, default="auto"
        How the private fit's steps compose, which sets their budget split (see
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
        model, more the multinomial one, for both fits.  When given the
        label set is never read from ``y`` (a declared class absent from ``y`` is
        fine; a label of ``y`` outside it raises ``ValueError``).  None:
        ``np.unique(y)`` with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`
        (private fits).
    memory : None, str or joblib.Memory, default=None
        Caches the non-private fit (a pure function of the data and ``l1_bound,
        nonprivate_solver, nonprivate_max_iter``), e.g.
        across repeated trials.
        Caching does not change the guarantee: only the noisy count is released.
    accountant : BudgetAccountant or None, default=None
        If given, :math:`(\varepsilon_1 + \varepsilon_2, \delta)` is checked before
        any work and spent once after the fit.
    random_state : None, int or numpy.random.Generator, default=None
        Randomness of the count noise and of the private fit, which get two
        independent child streams (:meth:`numpy.random.Generator.spawn`); neither
        is stored (``estimator_.random_state`` is None).  None (the default for
        a release): fresh OS entropy.  A seed or a Generator makes the noise
        reproducible by whoever knows it (a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning`, once per process).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Sparse private weights: at most ``n_nonzero_`` non-zeros.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Zeros (no intercept, as in the paper).
    classes_ : ndarray of shape (n_classes,)
        The declared ``classes`` (sorted), else the labels of ``y``.
    n_nonzero_ : int
        The released (noisy, clipped, rounded) count ``c`` (without noise when
        ``epsilon=None``).
    n_iter_ : int
        Iterations of the private fit (of the non-private solver when
        ``epsilon=None``).
    nonprivate_n_iter_ : int or None
        Steps of the non-private solver (Frank-Wolfe or projected gradient) of a
        non-private fit; None for a private fit (the steps to a duality gap
        depend on the data, and only the noisy count of that fit is released).
    count_bounds_ : tuple of int
        ``(alpha, beta)`` used.
    estimator_ : FrankWolfeLassoClassifier or None
        The private fit (its dense ``coef_`` is covered by the same guarantee);
        None when ``epsilon=None``.
    privacy_spent_ : tuple (epsilon, delta) or None
        :math:`(\varepsilon_1 + \varepsilon_2, \delta)`; None when not private.
    privacy_event_ : ComposedEvent or None
        The count (``PureDPEvent(epsilon_count)``) and the private fit's event.
    n_features_in_ : int

    References
    ----------
    A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression (Khanna, Lu and Raff, 2023),
    Algorithms 1-3, Theorem 3.

    A. Beck, M. Teboulle. A fast iterative shrinkage-thresholding algorithm for
    linear inverse problems. SIAM J. Imaging Sciences 2(1), 2009.

    J. Duchi, S. Shalev-Shwartz, Y. Singer, T. Chandra. Efficient projections onto
    the l1-ball for learning in high dimensions. ICML 2008.

    K. Talwar, A. Thakurta, L. Zhang. Nearly Optimal Private LASSO. NeurIPS 2015.

    A. Ghosh, T. Roughgarden, M. Sundararajan. Universally utility-maximizing privacy
    mechanisms. STOC 2009.
    """

    #: The command line's ``--model`` name (dptoolkit._discovery.cli_name).
    _cli_name = "sparsifier"

    _parameter_constraints = {
        **PRIVATE_COMMON, "delta": DELTA_OPEN,
        "l1_bound": [Options("auto"), *POSITIVE],
        "max_iter": [Options("auto"), Interval("int", 1, MAX_ITER)],
        "epsilon_count": POSITIVE,
        "count_bounds": [Options("sqrt"), Checked(_check_count_pair,
                                                  "a pair (alpha, beta) of ints")],
        "precision": POSITIVE,
        "nonprivate_solver": [Options("projected_gradient", "frank_wolfe")],
        "nonprivate_max_iter": [Interval("int", 1, None)],
        "mechanism": [Options("auto", "laplace", "laplace_talwar", "grouped", "exponential",
                             "noisy_max")],
        "neighbouring": NEIGHBOURING,
        "composition": [Options(*COMPOSITION_CHOICES)], "clip_data": [Boolean()],
        "classes": CLASSES,
        "memory": [None, Checked(_check_memory, "a str or a joblib.Memory")],
    }

    def __init__(self, *, l1_bound="auto", max_iter="auto", epsilon_count=0.05, epsilon=1.0,
                 delta=None, count_bounds="sqrt", precision=1.0,
                 nonprivate_solver="projected_gradient", nonprivate_max_iter=2000,
                 mechanism="auto",
                 neighbouring="add_remove", composition="auto", n_samples_public=None,
                 clip_data=True, classes=None, memory=None, accountant=None,
                 random_state=None):
        _store_params(self, locals())

    def _check_params(self):
        """The validated parameters as the fit uses them: their ranges are the
        constraint table's (checked once); only the rules between them here."""
        epsilon, _ = self._check_budget(optional=True)
        epsilon_count = float(self.epsilon_count)
        if epsilon is not None and epsilon_count >= epsilon:
            raise ValueError(f"epsilon_count must be smaller than epsilon (the total "
                             f"budget epsilon_count + epsilon_2 of the private fit), got "
                             f"epsilon_count={epsilon_count!r}, epsilon={epsilon!r}")
        return (epsilon, epsilon_count, float(self.precision), int(self.nonprivate_max_iter),
                self.composition)

    @fill_doc
    def fit(self, X, y):
        """Fit the sparse private model (non-private when ``epsilon=None``).

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
            negative or fractional bounds; ``precision <= 0``; ``epsilon_count``
            not in ``(0, epsilon)``; ``delta`` set without ``epsilon``; unknown
            ``nonprivate_solver``; ...), bad data, data outside the public bound
            with ``clip_data=False`` in a private fit, labels of ``y`` outside
            ``classes``.
        BudgetExceededError
            The ``accountant`` cannot pay :math:`(\\varepsilon_1+\\varepsilon_2, \\delta)`
            (nothing is fitted).
        TypeError
            Non-numeric parameters or data.
        """
        return super().fit(X, y)

    # private fits: entries outside [-1, 1] are clipped (or refused) before the
    # spend is checked
    _public_bound = ("linf", 1.0)

    def _validate_fit_data(self, X, y):
        X, y, classes = self._classifier_data(X, y)
        return sp.csr_array(X, dtype=np.float64), y, classes

    def _fit_private(self, X, y, plan, rng):
        """Steps (1)-(4) of the class docstring (without noise when not private)."""
        classes = self.classes_
        (epsilon, epsilon_count, precision, nonprivate_max_iter, n_coef, bounds,
         composition) = dataclasses.astuple(plan.params)
        memory = check_memory(self.memory)  # scikit-learn's conversion to a joblib.Memory
        auto_radius = isinstance(self.l1_bound, str)   # "auto" (validate_params)
        nonprivate_args = (NONPRIVATE_L1_BOUND if auto_radius else float(self.l1_bound),
                           self.nonprivate_solver, nonprivate_max_iter,
                           NONPRIVATE_TOL, DEFAULT_REFRESH_TOL, classes)
        if epsilon is None:
            # the Sparsifier without noise: the count of the non-private solution,
            # clipped and scaled, keeps the largest weights of that solution
            coef_np, n_iter = memory.cache(_nonprivate_coef)(X, y, *nonprivate_args)
            count = min(max(int(np.count_nonzero(coef_np)), bounds[0]), bounds[1])
            c = int(math.floor(min(max(count * precision, 0.0), float(n_coef)) + 0.5))
            self.coef_ = keep_largest(coef_np, c)
            self.intercept_ = np.zeros(self.coef_.shape[0])
            self.n_nonzero_ = c
            self.n_iter_ = self.nonprivate_n_iter_ = n_iter
            self.count_bounds_ = bounds
            self.estimator_ = None
            return
        # independent child streams for the private fit and the count: the fitted
        # estimator_ never holds the generator (its final state would give the
        # count noise back) and its random_state stays None
        fit_stream, count_stream = rng.spawn(2)

        # (3) first (its spend is part of the plan the template checked, before any
        # work); the order of the fits does not change the output.
        private = self._private_estimator(epsilon - epsilon_count, classes, composition)
        with trusted_parameters(private):     # built from this fit's validated values
            fit_with_stream(private, fit_stream, X, y)
        # the radius of both fits: "auto" is the private fit's (public quantities only)
        nonprivate_args = (private.l1_bound_,) + nonprivate_args[1:]
        # (1)-(2)
        with warnings.catch_warnings(record=True), nested_fits(self):
            warnings.simplefilter("always")           # data-dependent: dropped
            coef_np, _ = memory.cache(_nonprivate_coef)(X, y, *nonprivate_args)
        c = noisy_count(int(np.count_nonzero(coef_np)), count_bounds=bounds,
                        epsilon=epsilon_count, precision=precision, n_coef=n_coef,
                        random_state=count_stream)
        # (4)
        self.coef_ = keep_largest(private.coef_, c)
        self.intercept_ = np.zeros(self.coef_.shape[0])
        self.classes_ = private.classes_
        self.n_nonzero_ = c
        self.n_iter_ = private.n_iter_
        self.nonprivate_n_iter_ = None   # its steps depend on the data: not released
        self.count_bounds_ = bounds
        self.estimator_ = private

    def _min_epsilon(self):
        """The total ``epsilon`` a private fit must exceed: ``epsilon_count``, the
        count's share (the private fit gets the rest, which must be positive).  A
        meta-estimator that sets ``epsilon`` (the hyperparameter search) calibrates
        its runs' budget above it."""
        return float(self.epsilon_count)    # validated by the constraint table

    def _private_estimator(self, epsilon, classes, composition):
        """The private fit of step (3), with its share ``epsilon`` of the budget."""
        return FrankWolfeLassoClassifier(
            l1_bound=self.l1_bound, max_iter=self.max_iter, epsilon=epsilon,
            delta=self.delta, solver="fast", mechanism=self.mechanism,
            neighbouring=self.neighbouring,
            composition=composition, n_samples_public=self.n_samples_public,
            clip_data=False, classes=classes, random_state=None)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        the count (``PureDPEvent(epsilon_count)``) composed with the private fit's
        event; ``params`` a :class:`SparsifierParams`."""
        classes = self._planned_classes(classes)
        (epsilon, epsilon_count, precision, nonprivate_max_iter,
         composition) = self._check_params()
        if classes.size < 2:
            raise ValueError(f"y needs at least two classes (or declare them in classes), "
                             f"got {classes.size} class")
        n_coef = (1 if classes.size == 2 else classes.size) * n_features
        params = SparsifierParams(epsilon, epsilon_count, precision, nonprivate_max_iter,
                                  # a rule between count_bounds and the model's size
                                  n_coef, check_count_bounds(self.count_bounds, n_coef),
                                  composition)
        if epsilon is None:
            return self._plan(None, None, params)
        private = self._private_estimator(epsilon - epsilon_count, classes, composition)
        with trusted_parameters(private):     # built from this fit's validated values
            budget = private.budget(n_features, classes.size,
                                    n_samples=self.n_samples_public or n_samples)
        # the count (double-geometric, epsilon_1-DP) and the private fit compose
        event = ComposedEvent((PureDPEvent(epsilon_count), budget.event))
        return self._plan(event, (epsilon_count + budget.epsilon, budget.delta), params)

    # ----------------------------------------------------------------- predict
    _multi_class = True
    _poor_score = True  # private: noisy by design

    def _margins(self, X):
        """Margins: shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        scores = np.asarray(X @ self.coef_.T)
        return scores[:, 0] if self.coef_.shape[0] == 1 else scores
