"""DSAL Lasso estimators: DSALLasso and the baselines ProxSVRGLasso, ProxASAGALasso.

Thin scikit-learn front ends: ``fit`` validates the parameters, builds the problem
with :func:`dptoolkit.dsal.prepare_problem`, runs
``_outer.solve`` and stores the result.  The
objective, the Gap Safe screening and the step control are documented in
:mod:`dptoolkit.dsal`.

References
----------
R. Bao, X. Wu, W. Xian, H. Huang. Doubly Sparse Asynchronous Learning for
Stochastic Composite Optimization. IJCAI 2022 (Algorithms 1-2, eq. 2-6).
"""
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import validate_data

from .._docstrings import fill_doc
from .._validation import (
    NON_NEGATIVE, SEQUENCE, POSITIVE, RANDOM_STATE, Boolean, Interval, Options,
    validate_params, check_bool, check_random_state, check_X_y_named)
from .._estimator import _labels, _LinearOutputs, _store_params
from ._outer import default_step, solve
from ._problem import (check_loss_penalty, expand_solution, LOSSES, PENALTIES,
                       prepare_problem, SAMPLINGS)
from ._screening import lasso_alpha_max, lasso_duality_gap
from ._working_set import solve_working_set

__all__ = [
    "DSALLasso",
    "ProxSVRGLasso",
    "ProxASAGALasso",
    "lasso_alpha_max",
    "lasso_duality_gap",
]


class _SparseProxLassoBase(_LinearOutputs, RegressorMixin, BaseEstimator):
    """Shared fit/predict of the sparse proximal stochastic Lasso solvers."""

    _method = "svrg"
    _screening_param = False

    #: The parameters of every solver of this family; DSALLasso adds its own.
    _parameter_constraints = {
        "alpha": POSITIVE, "loss": [Options(*LOSSES)], "penalty": [Options(*PENALTIES)],
        "groups": [None, SEQUENCE], "n_jobs": [Interval("int", 1, None)],
        "sampling": [Options(*SAMPLINGS)], "step_size": [None, *POSITIVE],
        "n_inner": [None, Interval("int", 1, 2**31 - 1)], "tol": NON_NEGATIVE,
        "max_outer": [Interval("int", 1, None)], "warm_start": [Boolean()],
        "random_state": [RANDOM_STATE],
    }

    def _solver_settings(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def _working_set(self):
        """Whether fit runs the working-set solver (DSALLasso only)."""
        return False

    def _validate_params_common(self):
        """The shared parameters as the solver takes them: their ranges are the
        constraint table's, checked once by ``validate_params`` at the start of fit."""
        alpha, n_jobs, tol, max_outer = (float(self.alpha), int(self.n_jobs), float(self.tol),
                                         int(self.max_outer))
        step_size = None if self.step_size is None else float(self.step_size)
        n_inner = None if self.n_inner is None else int(self.n_inner)
        return alpha, n_jobs, tol, max_outer, step_size, n_inner

    def _validate_X_y(self, X, y):
        """Validate ``X`` and ``y`` once, set ``n_features_in_``.

        A sparse matrix or a numeric ndarray ``X`` with a 1-D numeric ndarray
        ``y`` is checked here and in :func:`~dptoolkit.dsal.
        prepare_problem` (numeric, 2-D, not empty, finite, one target per row):
        scikit-learn's ``validate_data`` would check the same and convert ``X``
        a second time, which costs more than a whole fit of a small problem.
        Anything else (lists, data frames, object or 2-D ``y``) goes through
        ``validate_data``.
        """
        y_numeric = self.loss == "squared"
        check_X_y_named(X, y, y_numeric=y_numeric)
        plain = ((sp.issparse(X) or (isinstance(X, np.ndarray) and X.ndim == 2))
                 and X.dtype.kind in "biuf" and isinstance(y, np.ndarray) and y.ndim == 1
                 and y.dtype.kind in "biuf")
        if not plain:
            return validate_data(self, X, y, accept_sparse=True, dtype=np.float64,
                                 y_numeric=y_numeric, ensure_min_samples=1)
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinity")
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):   # as validate_data for input without names
            del self.feature_names_in_
        return X, y

    @fill_doc
    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        %(X_fit)s
            Training data; any scipy.sparse format or dense.  Converted once to
            CSR and CSC float64 with int64 indices.
        y : array-like of shape (n_samples,)
            Targets (``loss="squared"``) or two class labels (``loss="logistic"``).

        %(returns_self)s

        Raises
        ------
        ValueError
            ``alpha <= 0``, ``n_jobs < 1``, ``groups`` not a partition of the
            features, NaN or infinity in ``X`` or ``y``, inconsistent shapes.
        TypeError
            Non-numeric parameters or data.
        """
        validate_params(self)
        alpha, n_jobs, tol, max_outer, step_size, n_inner = self._validate_params_common()
        method, screening = self._solver_settings()
        check_loss_penalty(self.loss, self.penalty, self.groups)  # groups with the penalty
        previous_coef = getattr(self, "coef_", None)
        X, y = self._validate_X_y(X, y)
        working_set = self._working_set()
        Xr, Xc, yv, classes, blocks = prepare_problem(X, y, self.loss, self.penalty,
                                                       self.groups, csr=not working_set)
        n, p = Xc.shape
        w_init = None
        if self.warm_start and previous_coef is not None:
            if previous_coef.shape != (p,):
                raise ValueError(f"warm_start=True needs coef_ of shape ({p},) from the "
                                 f"previous fit, got {previous_coef.shape}; refit with "
                                 "warm_start=False")
            w_init = np.ascontiguousarray(previous_coef[blocks.perm])
        rng = check_random_state(self.random_state)  # a conversion to a Generator
        if working_set:   # deterministic: no generator
            svrg = self.subproblem_solver == "svrg"
            res = solve_working_set(Xc, yv, alpha, loss=self.loss, penalty=self.penalty,
                                    blocks=blocks, screening=screening, n_jobs=n_jobs,
                                    tol=tol, max_outer=max_outer, w_init=w_init,
                                    subsolver=self.subproblem_solver,
                                    generators=rng.spawn(n_jobs) if svrg else None,
                                    sampling=self.sampling)
            coef = np.zeros(p)
            coef[blocks.perm] = res["w"]
            active = np.zeros(p, dtype=bool)
            active[blocks.perm] = res["active"]
            gap, primal = res["gap"], res["primal"]
            self.working_set_size_ = res["ws_sizes"]
            self.n_epochs_ = res["n_epochs"]
            self.step_size_ = None
            self.n_step_halvings_ = 0
        else:
            res = solve(Xr, Xc, yv, alpha, loss=self.loss, penalty=self.penalty,
                        blocks=blocks, method=method, screening=screening, n_jobs=n_jobs,
                        step_size=step_size, n_inner=n if n_inner is None else n_inner,
                        tol=tol, max_outer=max_outer, generators=rng.spawn(n_jobs),
                        sampling=self.sampling, w_init=w_init)
            prob = res["problem"]
            coef, active = expand_solution(blocks, prob, res["w"], p)
            gap, primal = res["evaluation"].gap, res["evaluation"].primal
            base = default_step(prob.l_max, self.loss, step_size)  # l_max: of the sampling
            self.step_size_ = float(base * res["step_scale"])
            self.n_step_halvings_ = res["n_halvings"]
            # every inner loop works on the whole active set
            self.working_set_size_ = res["active_sizes"]
            self.n_epochs_ = res["n_iter"] * (n if n_inner is None else n_inner) / n
        self.coef_ = coef
        self.intercept_ = 0.0
        if classes is not None:
            self.classes_ = classes
        self.dual_gap_ = float(gap)
        self.objective_ = float(primal)
        self.n_iter_ = res["n_iter"]
        self.active_set_size_ = res["active_sizes"]
        self.active_features_ = active
        self.objective_history_ = res["primals"]
        self.gap_history_ = res["gaps"]
        self.time_history_ = res["times"]
        if not res["converged"] and tol > 0:
            warnings.warn(
                f"{type(self).__name__} did not reach the relative duality gap tol={tol:g} "
                f"in max_outer={max_outer} outer iterations (gap {gap:.3g}, "
                f"objective {primal:.6g}); increase max_outer or n_inner.",
                ConvergenceWarning, stacklevel=2)
        return self

    def _margins(self, X):
        return np.asarray(X @ self.coef_).ravel()

    def _from_margins(self, margins):
        """Targets (squared loss) or class labels (logistic loss)."""
        return _labels(self.classes_, margins) if self.loss == "logistic" else margins

    def score(self, X, y, sample_weight=None):
        """R^2 for the squared loss, accuracy for the logistic loss."""
        if self.loss == "logistic":
            return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))
        return super().score(X, y, sample_weight=sample_weight)


_COMMON_PARAMS_DOC = r"""
    alpha : float, default=1.0
        Regularisation strength :math:`\alpha > 0` (scikit-learn's ``Lasso`` scaling;
        see :func:`lasso_alpha_max`).
    loss : {"squared", "logistic"}, default="squared"
        :math:`f_i(z) = (z - y_i)^2/2` or :math:`\log(1 + e^{-y_i z})` with the two
        classes of ``y`` coded :math:`\pm 1`.
    penalty : {"l1", "group_l1"}, default="l1"
        :math:`\|w\|_1` or :math:`\sum_B \|w_B\|_2`.
    groups : sequence of array-like of int, default=None
        The blocks of ``"group_l1"``: a partition of ``range(n_features)`` (every
        feature in exactly one non-empty group).  Must be None for ``"l1"``.
    n_jobs : int, default=1
        Number of threads (>= 1) of the inner loop and of the full-gradient passes.
        Threads update the shared iterate lock-free (coordinate-wise atomic adds).
        The kernels are compiled with OpenMP; without it they run on one thread."""


class DSALLasso(_SparseProxLassoBase):
    r"""Doubly sparse asynchronous Lasso: screened, working sets, variance-reduced, threaded.

    Sha-DSAL (Algorithm 2 of Bao, Wu, Xian and Huang, IJCAI 2022) for
    :math:`P(w) = \frac{1}{n}\sum_i f_i(x_i^\top w) + \alpha\Omega(w)`
    (:mod:`dptoolkit.dsal`), with working sets and dual
    extrapolation (Massias, Gramfort and Salmon, ICML 2018; Massias, Vaiter,
    Gramfort and Salmon, JMLR 2020) for small penalties.

    ``working_set=True`` (default,
    ``solve_working_set``): each outer
    iteration takes the dual point of largest objective among the rescaled
    residual, the Anderson extrapolation of the last sub-problem's residuals and
    the best so far, computes the duality gap of the full problem with it, removes
    the blocks the Gap Safe sphere test (eq. 3, in the correct scaling of Ndiaye et
    al. 2017) proves zero, and solves the problem restricted to a working set (the
    support plus the blocks closest to violating the dual constraint, growing
    geometrically) by proximal coordinate descent in a nogil kernel, to 0.3 times
    that gap.  ``working_set=False``: the paper's outer loop, which computes the
    full gradient on the active set, the dual point and duality gap (eq. 2),
    screens, then runs ``n_inner`` stochastic steps on the remaining blocks with
    the SVRG estimate (eq. 4-5) and the block-reweighted sparse proximal
    operator (eq. 6): a step on row :math:`i` costs the non-zeros of :math:`x_i`
    in the active set (plus the active blocks it meets, for group l1), never
    :math:`O(p)`; ``variance_reduction=False`` then gives Sha-DSAL-Naive
    (Algorithm 1).  Measured in docs/studies/dsal.rst: at small penalties
    (:math:`10^{-3}\alpha_{\max}` on IMDB) the working sets certify a relative
    gap of :math:`10^{-6}` where the stochastic loop needs thousands of epochs.
    ``screening=False`` with ``working_set=False`` gives the sparse proximal SVRG
    baseline (:class:`ProxSVRGLasso`).

    Parameters
    ----------%s
    screening : bool, default=True
        Apply the Gap Safe sphere test at every outer iteration.
    working_set : bool, default=True
        Solve a sequence of working-set sub-problems with dual extrapolation
        (above).  The parameters ``variance_reduction``, ``step_size`` and
        ``n_inner`` below belong to the stochastic inner loop and are used only
        with ``working_set=False``.
    subproblem_solver : {"cd", "svrg"}, default="cd"
        With ``working_set=True``: how the sub-problems are solved.  ``"cd"``:
        proximal coordinate descent with primal and dual extrapolation (a nogil
        kernel, deterministic).  ``"svrg"``: DSAL's own screened SVRG loop
        (eq. 4-6, ``sampling`` and ``random_state`` apply) on the working set.
        Which is faster depends on the data and the penalty
        (:ref:`study_dsal`).
    variance_reduction : bool, default=True
        SVRG gradient estimate (eq. 5).  False: plain stochastic gradient
        (Algorithm 1, Sha-DSAL-Naive; needs ``working_set=False``); its step is
        halved whenever an inner loop does not decrease the objective, which
        makes it converge (slowly).
    sampling : {"importance", "uniform"}, default="importance"
        How the inner loop draws rows.  ``"uniform"``: as in the paper.
        ``"importance"`` (an addition to the paper): row :math:`i` with
        probability :math:`p_i = \frac{1}{2n} + \frac{\|x_{i,\mathcal{A}}\|^2}
        {2\sum_k \|x_{k,\mathcal{A}}\|^2}` (partially biased sampling of Needell,
        Srebro and Ward 2016; the importance sampling of Prox-SVRG, Xiao and Zhang
        2014, Section 3), the data term of row :math:`i` weighted by
        :math:`1/(np_i)` and :math:`d_B = 1/P(x_i \text{ meets } B)`, so the
        estimate stays unbiased and :math:`E\phi_i = \Omega`; the step then uses
        :math:`\max_i \|x_{i,\mathcal{A}}\|^2/(np_i) \le 2\bar L` instead of
        :math:`L_{\max}`, which matters when a few rows are much longer than the
        others (text: on 20 Newsgroups at 0.1 alpha_max, 18 outer iterations
        instead of 65; docs/studies/dsal.rst).
    step_size : float or None, default=None
        Step :math:`\eta > 0`.  None: :math:`\gamma / L` with
        :math:`L = \max_i \|x_{i,\mathcal{A}}\|^2` (uniform sampling; the weighted
        maximum above for importance sampling) over the rows restricted
        to the current active set :math:`\mathcal{A}` (recomputed when it shrinks;
        :math:`1/\gamma` bounds :math:`f_i''`).  The theory of SVRG/SAGA asks for
        about a third of that; measured on the data sets of the tests and of the
        study (docs/studies/dsal.rst), :math:`1/L_{\max}` converges with fewer
        epochs, and the safeguard below catches the cases where it is too large.
        Safeguard in every solver (not in the paper): an inner loop after which
        the objective exceeds its starting value by more than the starting
        duality gap (at most 1e-3 times the objective) is undone and the step
        halved; the step is also halved when
        the objective rose after 5 of the last 10 inner loops (oscillation).
    n_inner : int or None, default=None
        Stochastic steps per outer iteration, all threads together (paper: K per
        thread), in [1, 2**31 - 1].  None: ``n_samples``.
    tol : float, default=1e-6
        Stop when the duality gap is <= ``tol * P(w)`` (relative duality gap).
    max_outer : int, default=500
        Maximum number of outer iterations (working sets, or inner loops of
        ``n_inner`` steps).
    warm_start : bool, default=False
        Start from ``coef_`` of the previous fit (same number of features)
        instead of zero, as scikit-learn's ``warm_start``: fitting a decreasing
        sequence of alphas this way (a regularisation path) lets the Gap Safe
        test screen from the first outer iteration, since each start is close
        to the next solution.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds one generator per thread (``Generator.spawn``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        Always 0 (no intercept, as in the paper's eq. 8).
    classes_ : ndarray of shape (2,)
        Logistic loss only.
    dual_gap_ : float
        Duality gap at ``coef_``, which bounds :math:`P(w) - P^*`: with
        ``working_set=True`` that of the full problem (the dual point is feasible
        for every feature); otherwise that of the problem restricted to the
        blocks not screened.
    objective_ : float
        :math:`P(\text{coef\_})`.
    n_iter_ : int
        Outer iterations run (each: one working-set sub-problem, or one inner
        loop of ``n_inner`` steps).
    n_epochs_ : float
        Passes over the working set (coordinate descent) or stochastic steps
        divided by ``n_samples``, in all.
    active_set_size_ : ndarray of shape (``n_iter_``,)
        Number of features not screened during each outer iteration.
    working_set_size_ : ndarray of shape (``n_iter_``,)
        Number of features each outer iteration's inner solver worked on (the
        whole active set with ``working_set=False``).
    active_features_ : ndarray of shape (n_features,), bool
        Features never screened (every other feature is zero at the optimum).
    objective_history_, gap_history_, time_history_ : ndarray of shape (``n_iter_ + 1``,)
        :math:`P`, duality gap and seconds since the start of the fit at every
        evaluation (before the first and after each outer iteration).
    step_size_ : float or None
        Step size of the last inner loop (None with ``working_set=True``:
        coordinate descent steps :math:`1/L_j` per coordinate).
    n_step_halvings_ : int
        Times the safeguard halved the step (0 with ``working_set=True``).
    n_features_in_ : int

    References
    ----------
    R. Bao, X. Wu, W. Xian, H. Huang. Doubly Sparse Asynchronous Learning for
    Stochastic Composite Optimization. IJCAI 2022 (Algorithms 1-2, eq. 2-6).

    E. Ndiaye, O. Fercoq, A. Gramfort, J. Salmon. Gap Safe screening rules for
    sparsity enforcing penalties. JMLR 18(128), 2017.

    F. Pedregosa, R. Leblond, S. Lacoste-Julien. Breaking the nonsmooth barrier: a
    scalable parallel method for composite optimization. NeurIPS 2017.

    M. Massias, A. Gramfort, J. Salmon. Celer: a fast solver for the Lasso with
    dual extrapolation. ICML 2018.

    M. Massias, S. Vaiter, A. Gramfort, J. Salmon. Dual extrapolation for sparse
    generalized linear models. JMLR 21(234), 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from dptoolkit.linear_model import DSALLasso
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 50)); y = X[:, :3] @ [1.0, -2.0, 0.5]
    >>> model = DSALLasso(alpha=0.1, random_state=0).fit(X, y)
    >>> bool(model.dual_gap_ <= 1e-6 * model.objective_)
    True
    """

    _parameter_constraints = {
        **_SparseProxLassoBase._parameter_constraints,
        "screening": [Boolean()], "working_set": [Boolean()],
        "subproblem_solver": [Options("cd", "svrg")], "variance_reduction": [Boolean()],
    }

    def __init__(self, alpha=1.0, *, loss="squared", penalty="l1", groups=None, n_jobs=1,
                 screening=True, working_set=True, subproblem_solver="cd",
                 variance_reduction=True, sampling="importance", step_size=None,
                 n_inner=None, tol=1e-6, max_outer=500, warm_start=False,
                 random_state=None):
        _store_params(self, locals())

    def _solver_settings(self):
        for name in ("screening", "working_set", "variance_reduction"):
            check_bool(getattr(self, name), name)
        if self.subproblem_solver not in ("cd", "svrg"):
            raise ValueError("subproblem_solver must be 'cd' or 'svrg', got "
                             f"{self.subproblem_solver!r}")
        if self.working_set and not self.variance_reduction:
            raise ValueError("variance_reduction=False (Sha-DSAL-Naive, Algorithm 1) is a "
                             "variant of the stochastic inner loop: it needs working_set=False")
        return ("svrg" if self.variance_reduction else "sgd"), bool(self.screening)

    def _working_set(self):
        return bool(self.working_set)


DSALLasso.__doc__ = DSALLasso.__doc__ % _COMMON_PARAMS_DOC

_BASELINE_ATTRIBUTES_DOC = """
    coef_ : ndarray
        As in :class:`DSALLasso`, and so are ``intercept_``, ``classes_``,
        ``dual_gap_``, ``objective_``, ``n_iter_``, ``n_epochs_``,
        ``active_set_size_``, ``working_set_size_`` (the active set),
        ``active_features_``, ``objective_history_``, ``gap_history_``,
        ``time_history_``, ``step_size_``, ``n_step_halvings_`` and
        ``n_features_in_``"""


class _BaselineLasso(_SparseProxLassoBase):
    """Parameters of the baselines (no screening, no variance-reduction switch)."""

    def __init__(self, alpha=1.0, *, loss="squared", penalty="l1", groups=None, n_jobs=1,
                 sampling="importance", step_size=None, n_inner=None, tol=1e-6, max_outer=500,
                 warm_start=False, random_state=None):
        _store_params(self, locals())


class ProxSVRGLasso(_BaselineLasso):
    r"""Sparse proximal SVRG for the Lasso (DSAL baseline, no screening).

    The variance-reduced inner loop of :class:`DSALLasso` (eq. 4-6: SVRG estimate,
    block reweighting :math:`D_i`, sparse proximal step; Xiao and Zhang 2014 with the
    sparse updates of Leblond et al. 2017) on all features, threaded the same way.
    Equivalent to ``DSALLasso(screening=False)``; the paper's asynchronous ProxSVRG
    baseline (Meng et al. 2017).

    Parameters
    ----------%s
    sampling, step_size, n_inner, tol, max_outer, warm_start, random_state
        As in :class:`DSALLasso`.

    Attributes
    ----------%s (no feature is ever screened).

    References
    ----------
    L. Xiao, T. Zhang. A proximal stochastic gradient method with progressive
    variance reduction. SIAM J. Optim. 24(4), 2014.

    Q. Meng et al. Asynchronous stochastic proximal optimization algorithms with
    variance reduction. AAAI 2017.
    """

    def _solver_settings(self):
        return "svrg", False


ProxSVRGLasso.__doc__ = ProxSVRGLasso.__doc__ % (_COMMON_PARAMS_DOC, _BASELINE_ATTRIBUTES_DOC)


class ProxASAGALasso(_BaselineLasso):
    r"""Sparse proximal (asynchronous) SAGA for the Lasso (DSAL baseline).

    ProxASAGA (Pedregosa, Leblond and Lacoste-Julien, NeurIPS 2017, Algorithm 1):
    a table of the last derivative :math:`f_i'` of every row and their running
    average :math:`\bar g = \frac{1}{n}\sum_i \alpha_i x_i`; a step on row :math:`i`
    uses :math:`v = (f_i'(x_i^\top\hat w) - \alpha_i)x_i + D_i\bar g` and the sparse
    proximal operator of eq. 6, touching only the support of :math:`x_i`; ``n_jobs``
    threads run lock-free with atomic coordinate updates.  No screening.  Every
    ``n_inner`` steps the exact duality gap is evaluated (one pass) for the stopping
    test; the memory is kept across these checks.

    Parameters
    ----------%s
    step_size : float or None, default=None
        None: :math:`\gamma / L_{\max}` with the safeguard of :class:`DSALLasso`
        (Pedregosa et al.'s theory uses :math:`1/(3L_{\max})`).
    n_inner : int or None, default=None
        Steps between two gap evaluations.  None: ``n_samples``.
    sampling, tol, max_outer, warm_start, random_state
        As in :class:`DSALLasso` (``max_outer`` counts gap evaluations; a warm
        start also initialises the stored derivatives at ``coef_``).

    Attributes
    ----------%s; ``n_iter_`` counts blocks of ``n_inner`` steps.

    References
    ----------
    F. Pedregosa, R. Leblond, S. Lacoste-Julien. Breaking the nonsmooth barrier: a
    scalable parallel method for composite optimization. NeurIPS 2017.
    """

    def _solver_settings(self):
        return "saga", False


ProxASAGALasso.__doc__ = ProxASAGALasso.__doc__ % (_COMMON_PARAMS_DOC, _BASELINE_ATTRIBUTES_DOC)
