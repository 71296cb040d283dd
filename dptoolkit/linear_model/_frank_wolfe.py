"""Frank-Wolfe L1-constrained logistic regression, private and non-private (paper 000)."""
import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _fw_fast
from . import _fw_multinomial  # issue 7: K > 2 classes (paper 001, Appendix A)
from .._validation import check_positive_int, check_random_state, check_scalar_range
from ..exceptions import DataClippedWarning

__all__ = ["FrankWolfeLassoClassifier"]

#: Default staleness bound rho of the fast solver (see the staleness study in
#: the README and docs: the objective and private accuracy at rho = 0.3 match
#: exact refreshing within noise, while rho = inf, the paper's Algorithm 2,
#: does not bound the gradient error at all).
DEFAULT_REFRESH_TOL = 0.3

_NONPRIVATE_SELECTORS = ("argmax", "pairing_heap", "fibonacci_heap")
_PRIVATE_SELECTORS = ("grouped", "exponential", "noisy_max",
                      # issue 7: Talwar et al.'s Laplace report-noisy-max (paper 001
                      # Alg. 1), correct scale / printed scale (reproduction only)
                      "laplace", "laplace_talwar")


class FrankWolfeLassoClassifier(ClassifierMixin, BaseEstimator):
    r"""L1-constrained logistic regression by Frank-Wolfe, optionally differentially private.

    Solves

    .. math:: \min_{\|w\|_1 \le \lambda} \frac{1}{N}\sum_{i=1}^N
              \log(1 + e^{x_i^\top w}) - y_i x_i^\top w,\qquad y_i \in \{0, 1\},

    with ``max_iter`` Frank-Wolfe steps of size :math:`\eta_t = 2/(t+2)`, each moving
    towards one vertex :math:`s = \pm\lambda e_j` of the L1 ball.  With ``epsilon``
    set, the vertex is chosen by the exponential mechanism (Talwar, Thakurta and
    Zhang 2015, in the exponential-mechanism form of paper 000, Section 3.3).

    The ``"fast"`` solver is Algorithm 2 of Raff, Khanna and Lu (NeurIPS 2023):
    scaled weights, sparse updates of margins, row and column gradients and of the
    gap, with the vertex taken from a lazy heap (non-private) or the Big-Step
    Little-Step sampler (private), so an iteration costs about the non-zeros it
    touches instead of :math:`O(\text{nnz}(X) + D)`.  Because a step rescales the
    whole weight vector, rows that do not contain the chosen feature keep a stale
    gradient in Algorithm 2 as printed; here every quantity is recomputed exactly
    whenever the product of :math:`(1-\eta_t)` since the last refresh drops below
    ``1 - refresh_tol`` (papers/README.md, 000 item 1).

    Parameters
    ----------
    l1_bound : float, default=1.0
        Radius :math:`\lambda > 0` of the L1 ball.
    max_iter : int, default=1000
        Number of Frank-Wolfe iterations :math:`T \ge 1` (with ``epsilon`` set, the
        number of exponential-mechanism invocations the budget is split over).
    epsilon : float or None, default=None
        Total privacy budget :math:`\varepsilon > 0`; ``None`` fits without privacy.
    delta : float or None, default=None
        :math:`\delta \in (0, 1)` of the guarantee.  With ``epsilon`` set and ``delta``
        None, the steps compose by basic composition (pure :math:`\varepsilon`-DP).
    solver : {"fast", "standard"}, default="fast"
        ``"fast"``: Algorithm 2 with bounded staleness.  ``"standard"``: Algorithm 1,
        the baseline of every speed comparison (sparse mat-vecs, O(D) passes).
    selector : str, default="auto"
        How the vertex is chosen.  Non-private: ``"argmax"`` (O(D) scan),
        ``"pairing_heap"``, ``"fibonacci_heap"`` (Algorithm 3; fast solver only).
        Private: ``"grouped"`` (Big-Step Little-Step sampler, Algorithm 4; fast solver
        only), ``"exponential"`` (exact inverse-CDF draw over all coordinates, O(D)),
        ``"noisy_max"`` (Gumbel-max over all 2D signed vertices, O(D): the paper's
        ablation).  All private selectors implement the same exponential mechanism.
        ``"laplace"`` (both solvers, O(D)): Talwar et al.'s private LASSO as in paper
        001, Algorithm 1 (report noisy max with Laplace noise over the 2D vertices),
        with the scale :math:`2\Delta/\varepsilon'` that makes each step
        :math:`\varepsilon'`-DP; ``"laplace_talwar"``: the scale as printed,
        :math:`\lambda L\sqrt{8T\ln(1/\delta)}/(N\varepsilon)`, kept for
        reproduction only (it overspends slightly; ``privacy_spent_`` reports the
        guarantee it really gives; see :mod:`dptoolkit.accounting.talwar`).
        ``"auto"``: non-private -> ``"argmax"`` (measured faster than the heaps on
        text-like data, where a step changes most gradients); private -> fast:
        ``"grouped"``, standard: ``"exponential"``.
    refresh_tol : float, default=0.3
        Staleness bound :math:`\rho \in [0, \infty]` of the fast solver: every stored
        row gradient was computed at a margin within relative error :math:`\rho` of
        the current one.  ``0`` refreshes every step (same steps as the standard
        solver); ``inf`` reproduces the paper's Algorithm 2 (unbounded staleness).
        The exact recomputations cost about
        :math:`2/\rho + 2\ln(\rho T/2) / (-\ln(1-\rho))` passes over the data in
        total (every step while :math:`\eta_t > \rho`, then geometrically spaced).
    neighbouring : {"add_remove", "replace_one"}, default="add_remove"
        Neighbouring relation of the guarantee; ``"replace_one"`` doubles the
        sensitivity.
    group_size : int or None, default=None
        Group size of the grouped sampler (``None``: :math:`\lceil\sqrt{D}\rceil`).
    clip_data : bool, default=True
        Private fits need :math:`\|x_i\|_\infty \le 1` (a public bound).  If an entry
        exceeds it: ``True`` clips entries to [-1, 1] with a
        :class:`~dptoolkit.exceptions.DataClippedWarning`; ``False`` raises
        ``ValueError``.  Non-private fits use the data as given.
    tol : float, default=0.0
        Non-private only: stop when the Frank-Wolfe gap of the mean loss is
        <= ``tol``.  Must be 0 for private fits (a data-dependent stopping time
        would leak).
    accountant : BudgetAccountant or None, default=None
        If given, the fit's (epsilon, delta) is checked against it before any work
        and spent after the fit.
    random_state : int, numpy.random.Generator or None, default=None
        Source of the mechanism's randomness; ``None`` draws from OS entropy.
    verbose : int, default=0
        If > 0, show a tqdm progress bar (the kernel then runs in ~100 chunks).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features) if more than 2
        Weights, :math:`\|w\|_1 \le \lambda`.
    intercept_ : ndarray of shape (1,)
        Always 0: the model has no intercept (as in the paper).  Add a constant
        feature (entries 1, within the public bound) to fit one inside the L1 ball.
    classes_ : ndarray of shape (2,)
    n_iter_ : int
        Iterations run.
    gap_history_ : ndarray of shape (``n_iter_``,) or None
        Frank-Wolfe gap :math:`\langle \nabla L(w_t), w_t - s_t\rangle` of the mean
        loss at each iteration, evaluated at the iterate *before* the step (so the
        last entry is the gap of the next-to-last iterate, not of ``coef_``) (non-private fits; ``None`` for private fits, whose
        gaps are not part of the release).  For the fast solver with
        ``refresh_tol > 0`` it is computed from the maintained (bounded-stale)
        gradient.
    n_features_in_ : int
    privacy_spent_ : tuple (epsilon, delta) or None
        The guarantee of the released ``coef_`` (None when non-private).  With the
        grouped sampler and ``delta=None`` the delta is the sampler's documented
        floating-point delta summed over the steps (about 1e-12 per step).
    epsilon_step_ : float or None
        Per-iteration budget :math:`\varepsilon'` of the exponential mechanism.
    composition_ : str or None
        ``"advanced"`` (Dwork-Rothblum-Vadhan, full bound, inverted exactly) or
        ``"basic"`` (:math:`\varepsilon' = \varepsilon/T`), whichever gives the larger
        valid :math:`\varepsilon'`.
    solver_stats_ : dict
        Work counters: iterations and refreshes, and for non-private fits also the
        rows and non-zeros touched and the selector updates.  Private fits keep only
        the data-independent counters (the others would reveal e.g. nnz(X)).
    selector_ : str
        The selector used (``selector="auto"`` resolved).

    Notes
    -----
    **Privacy.**  Neighbouring datasets differ by adding or removing one example
    (or replacing one, ``neighbouring="replace_one"``); the data must satisfy the
    public bound :math:`\|x_i\|_\infty \le 1`.  At step *t* the score of vertex
    :math:`s` is :math:`u(s) = -\langle s, \alpha_t\rangle` with
    :math:`\alpha_t = \sum_i q_i x_i`, :math:`q_i = \sigma(x_i^\top w') - y_i \in
    (-1, 1)` evaluated at the current or an earlier (already released) iterate
    :math:`w'`; one example changes :math:`\alpha_t` by at most 1 in each coordinate,
    so the sensitivity of :math:`u` is :math:`\Delta = \lambda L` with Lipschitz
    constant :math:`L = 1` (``2 lambda L`` for replace-one); in mean-loss units this
    is the :math:`\lambda L / N` of the paper.  The exponential mechanism picks
    vertex :math:`s` with probability proportional to
    :math:`\exp(\varepsilon' u(s) / (2\Delta))` over all :math:`2D` signed
    vertices; the sign is sampled too (papers/README.md, 000 items 2-3), which makes
    each step :math:`\varepsilon'`-DP.  The :math:`T` steps compose adaptively:
    with ``delta`` set, :math:`\varepsilon'` is the exact inverse of the full
    Dwork-Rothblum-Vadhan bound
    :math:`\varepsilon = \varepsilon'\sqrt{2T\ln(1/\delta)} + T\varepsilon'(e^{\varepsilon'}-1)`
    (:func:`dptoolkit.accounting.per_step_epsilon`; not the simplified formula of
    paper 000, Appendix B.2), or :math:`\varepsilon/T` by basic composition if that is
    larger.  The released model is :math:`w_T`.  Floating-point effects: each
    selector's draw deviates from the exact law by a per-step
    :math:`(\gamma, \delta_{fp})` (quantisation to 2^-53, and in the grouped sampler
    the maintained sums and the underflow of weights a few hundred nats below the
    largest, paper 000 footnote 4); the budget split includes them
    (``_floating_point_bounds``): :math:`\varepsilon'` is reduced by
    :math:`2\gamma` and :math:`T(1+e^{\varepsilon'})\delta_{fp}` (about
    :math:`10^{-12}` per step at :math:`D = 2^{20}`) is taken from ``delta``, or
    reported as the delta of an otherwise pure-DP fit.  Floating-point Laplace/Gumbel
    sampling remains subject to the attacks of Mironov (2012).  Only ``coef_``
    (and ``n_iter_``, ``classes_``) are covered: the label set is treated as public,
    and warnings and :meth:`objective` are computed from the data.

    References
    ----------
    E. Raff, A. Khanna, F. Lu. Scaling Up Differentially Private LASSO Regularized
    Logistic Regression via Faster Frank-Wolfe Iterations. NeurIPS 2023.
    K. Talwar, A. Thakurta, L. Zhang. Nearly Optimal Private LASSO. NeurIPS 2015.
    C. Dwork, G. Rothblum, S. Vadhan. Boosting and Differential Privacy. FOCS 2010.
    """

    def __init__(self, *, l1_bound=1.0, max_iter=1000, epsilon=None, delta=None,
                 solver="fast", selector="auto", refresh_tol=DEFAULT_REFRESH_TOL,
                 neighbouring="add_remove", group_size=None, clip_data=True, tol=0.0,
                 accountant=None, random_state=None, verbose=0):
        self.l1_bound = l1_bound
        self.max_iter = max_iter
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.selector = selector
        self.refresh_tol = refresh_tol
        self.neighbouring = neighbouring
        self.group_size = group_size
        self.clip_data = clip_data
        self.tol = tol
        self.accountant = accountant
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        l1_bound = check_scalar_range(self.l1_bound, "l1_bound", low=0.0, low_open=True)
        max_iter = check_positive_int(self.max_iter, "max_iter")
        private = self.epsilon is not None
        if private:
            epsilon = check_scalar_range(self.epsilon, "epsilon", low=0.0, low_open=True)
        if self.delta is not None:
            if not private:
                raise ValueError("delta is set but epsilon is None; set epsilon for a "
                                 "private fit or leave delta=None")
            check_scalar_range(self.delta, "delta", low=0.0, high=1.0, low_open=True,
                               high_open=True)
        if self.solver not in ("fast", "standard"):
            raise ValueError(f"solver must be 'fast' or 'standard', got {self.solver!r}")
        selector = self.selector
        allowed = _PRIVATE_SELECTORS if private else _NONPRIVATE_SELECTORS
        if selector == "auto":
            if private:
                selector = "grouped" if self.solver == "fast" else "exponential"
            else:
                # heaps pay a decrease-key per changed gradient; on text-like data a
                # step changes most of them and the O(D) scan is faster (README)
                selector = "argmax"
        elif selector not in allowed:
            kind = "private" if private else "non-private"
            raise ValueError(f"selector must be 'auto' or one of {allowed} for a {kind} "
                             f"fit, got {selector!r}")
        if self.solver == "standard" and selector in ("pairing_heap", "fibonacci_heap",
                                                      "grouped"):
            raise ValueError(f"selector {selector!r} needs solver='fast'")
        refresh_tol = check_scalar_range(self.refresh_tol, "refresh_tol", low=0.0,
                                         allow_inf=True)
        if self.neighbouring not in ("add_remove", "replace_one"):
            raise ValueError("neighbouring must be 'add_remove' or 'replace_one', got "
                             f"{self.neighbouring!r}")
        group_size = 0
        if self.group_size is not None:
            group_size = check_positive_int(self.group_size, "group_size")
        tol = check_scalar_range(self.tol, "tol", low=0.0)
        if private and tol > 0:
            raise ValueError("tol must be 0 for a private fit: stopping on the gap "
                             "would make the number of steps depend on the data")
        if not isinstance(self.verbose, numbers.Integral):
            raise TypeError(f"verbose must be an int, got {type(self.verbose).__name__}")
        return l1_bound, max_iter, private, selector, refresh_tol, group_size, tol

    def _privacy_parameters(self, max_iter, n_features, selector, group_size):
        """Per-step epsilon, the exponential mechanism's coefficient, and the guarantee.

        The grouped sampler's draws deviate from the exact law by at most
        ``(gamma, delta_fp)`` (``GroupedExpSampler.floating_point_bounds``), so each
        step is ``(eps_step + 2 gamma, (1 + e^eps) delta_fp)``-DP as implemented; the
        budget is split with those terms included.
        """
        from .. import _grouped_sampler
        from ..accounting import per_step_epsilon

        epsilon = float(self.epsilon)
        delta = 0.0 if self.delta is None else float(self.delta)
        lipschitz = 1.0  # logistic loss, ||x||_inf <= 1, q_i in (-1, 1)
        factor = 2.0 if self.neighbouring == "replace_one" else 1.0
        if selector == "laplace_talwar":
            # reproduction of the printed scale: its own accounting (issue 7), without
            # the floating-point terms
            from ..accounting.talwar import laplace_selector_parameters
            return laplace_selector_parameters(
                selector, epsilon=epsilon, delta=delta, epsilon_step=None,
                composition=None, max_iter=max_iter, sensitivity=factor * lipschitz,
                lipschitz=lipschitz)
        fp_gamma, fp_delta = _floating_point_bounds(selector, n_features, group_size)
        # (1 + e^(eps0 + 2 gamma)) delta_fp per step; bound eps0 by its value without
        # the floating-point terms (the true eps0 can only be smaller)
        eps0_max = epsilon / max_iter
        if delta > 0:
            eps0_max = max(eps0_max, per_step_epsilon(epsilon_total=epsilon,
                                                      delta_slack=delta, k=max_iter))
        delta_steps = max_iter * (1.0 + math.exp(min(eps0_max + 2 * fp_gamma, 700.0))
                                  ) * fp_delta
        eps0, composition = epsilon / max_iter, "basic"
        if delta > 0:
            if delta_steps >= delta:
                raise ValueError(f"delta={delta:g} is below the floating-point delta "
                                 f"{delta_steps:.3g} of {max_iter} {selector!r} draws "
                                 "(the per-step epsilon is too large for this bound)")
            eps_adv = per_step_epsilon(epsilon_total=epsilon,
                                       delta_slack=delta - delta_steps, k=max_iter)
            if eps_adv > eps0:
                eps0, composition = eps_adv, "advanced"
        else:
            # pure DP up to the floating-point delta (vacuous, 1, at absurd epsilons)
            delta = min(delta_steps, 1.0)
        eps_step = eps0 - 2.0 * fp_gamma
        if eps_step <= 0:
            raise ValueError(f"epsilon={epsilon:g} over {max_iter} steps is below the "
                             f"floating-point error of selector {selector!r}")
        # sensitivity of the sum-score u(s) = -<s, alpha> is factor*l1_bound*L; the
        # kernels factor l1_bound out, so the log-weight of vertex sigma*e_j is
        # -sigma * alpha_j * eps_step / (2 * factor * L)
        coef = eps_step / (2.0 * factor * lipschitz)
        if selector == "laplace":
            # issue 7: the kernel's coef is then the Laplace scale b (sum-score units);
            # "laplace": b = 2 * sensitivity / eps_step (report noisy max over the
            # non-monotone 2D vertex scores); "laplace_talwar": the printed
            # L sqrt(8 T log(1/delta)) / epsilon with the guarantee it really gives.
            # Derivation: dptoolkit/accounting/talwar.py.
            from ..accounting.talwar import laplace_selector_parameters
            return laplace_selector_parameters(
                selector, epsilon=epsilon, delta=delta, epsilon_step=eps_step,
                composition=composition, max_iter=max_iter,
                sensitivity=factor * lipschitz, lipschitz=lipschitz)
        return epsilon, delta, eps_step, composition, coef

    # --------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, any scipy.sparse format or dense.  Private fits need
            entries in [-1, 1] (see ``clip_data``).
        y : array-like of shape (n_samples,)
            Two classes, any labels; ``classes_[1]`` is the positive class.
            More than two classes: multinomial private LASSO (paper 001, Algorithm 3;
            ``coef_`` of shape (n_classes, n_features), every row in the L1 ball,
            selectors "auto"/"argmax" or "exponential", "noisy_max", "laplace",
            "laplace_talwar"; privacy analysis in
            :mod:`dptoolkit.linear_model._fw_multinomial`) (issue 7).

        Returns
        -------
        self : FrankWolfeLassoClassifier

        Raises
        ------
        ValueError
            Invalid hyper-parameters, NaN/inf in X, inconsistent shapes, fewer or
            more than two classes, data outside the public bound with
            ``clip_data=False``, or a budget the ``accountant`` cannot pay.
        TypeError
            Non-numeric hyper-parameters or data.
        """
        (l1_bound, max_iter, private, selector, refresh_tol, group_size,
         tol) = self._check_params()
        X, y = validate_data(self, X, y, accept_sparse=True, dtype=np.float64,
                             ensure_all_finite=True, y_numeric=False)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size > 2:  # issue 7: multinomial private LASSO (paper 001, App. A)
            return _fw_multinomial.fit_multinomial(self, X, y)
        if self.classes_.size != 2:
            raise ValueError("FrankWolfeLassoClassifier needs at least two classes in "
                             f"y, got {self.classes_.size} class")
        y01 = (y == self.classes_[1]).astype(np.float64)
        csr, csc, (n_samples, n_features) = self._kernel_views(X, private)

        if private:
            epsilon, delta, eps_step, composition, coef = self._privacy_parameters(
                max_iter, n_features, selector, group_size)
            if self.accountant is not None:
                self.accountant.check(epsilon, delta)
        else:
            coef = 0.0
            epsilon = delta = eps_step = composition = None
        rng = check_random_state(self.random_state)
        # issue 7: "laplace_talwar" runs the kernel's Laplace selector (other scale)
        code = _fw_fast.SELECTOR_CODES[
            "laplace" if selector == "laplace_talwar" else selector]
        args = (*csr, *csc, y01, l1_bound, code, coef, rng.bit_generator)
        if self.solver == "fast":
            kernel = _fw_fast.FastFW(*args, refresh_tol=refresh_tol, group_size=group_size)
        else:
            kernel = _fw_fast.StandardFW(*args)

        gaps = np.full(max_iter, np.nan)
        # kernel gaps are sum-form; private gaps can be negative (ascent vertices)
        stop = tol * n_samples if tol > 0 else -np.inf
        n_done = self._run(kernel, max_iter, gaps, stop)

        self.selector_ = selector
        self.coef_ = kernel.coef().reshape(1, -1)
        self.intercept_ = np.zeros(1)
        self.n_iter_ = int(n_done)
        stats = kernel.stats.as_dict()
        if private:  # the work counters depend on the data: release only T and refreshes
            stats = {k: stats[k] for k in ("n_iter", "n_refresh")}
        self.solver_stats_ = stats
        return self._record_guarantee(private, epsilon, delta, eps_step, composition, gaps,
                                      n_done, n_samples)

    def _record_guarantee(self, private, epsilon, delta, eps_step, composition, gaps,
                          n_done, n_samples):
        """Set the privacy attributes after a fit (binary and multinomial) and
        charge the accountant; a private fit keeps no gap history (it depends on
        the data)."""
        if private:
            self.gap_history_ = None
            self.privacy_spent_ = (epsilon, delta)
            self.epsilon_step_ = eps_step
            self.composition_ = composition
            if self.accountant is not None:
                self.accountant.spend(epsilon, delta)
        else:
            self.gap_history_ = gaps[:n_done] / n_samples
            self.privacy_spent_ = None
            self.epsilon_step_ = None
            self.composition_ = None
        return self

    def _kernel_views(self, X, private):
        """CSR and CSC arrays (data, int64 indices, int64 indptr) for the kernels.

        Shares X's data when X is canonical CSR (X itself is never modified).
        Returns ``(csr_arrays, csc_arrays, shape)``.
        """
        Xr = sp.csr_array(X)
        if not Xr.has_canonical_format:  # duplicates or unsorted indices
            Xr = Xr.copy()
            Xr.sum_duplicates()
        if not np.all(np.isfinite(Xr.data)):  # sklearn cannot check every format
            raise ValueError("Input X contains NaN or infinity")
        if private:
            Xr = self._enforce_public_bound(Xr)
        Xc = Xr.tocsc()  # canonical; converting int32 indices moves less memory
        return tuple(
            (np.ascontiguousarray(M.data, dtype=np.float64),
             M.indices.astype(np.int64, copy=False), M.indptr.astype(np.int64, copy=False))
            for M in (Xr, Xc)) + (Xr.shape,)

    def _enforce_public_bound(self, Xr):
        if Xr.nnz and np.max(np.abs(Xr.data)) > 1.0:
            if not self.clip_data:
                raise ValueError("private fits need entries of X in [-1, 1] "
                                 "(public bound ||x_i||_inf <= 1); clip or rescale X "
                                 "with public constants, or set clip_data=True")
            warnings.warn("some examples have entries outside [-1, 1]; they were "
                          "clipped to the public bound ||x_i||_inf <= 1",
                          DataClippedWarning, stacklevel=3)
            Xr = sp.csr_array((np.clip(Xr.data, -1.0, 1.0), Xr.indices, Xr.indptr),
                              shape=Xr.shape)
        return Xr

    def _run(self, kernel, max_iter, gaps, stop):
        if not self.verbose:
            return kernel.run(max_iter, gaps, stop)
        from tqdm.auto import tqdm

        chunk = max(1, max_iter // 100)
        done = 0
        with tqdm(total=max_iter, desc=f"Frank-Wolfe ({self.solver})", unit="it") as bar:
            while done < max_iter:
                n = min(chunk, max_iter - done)
                did = kernel.run(n, gaps, stop)
                done += did
                bar.update(did)
                if did < n:
                    break
        return done

    # ----------------------------------------------------------------- predict
    def decision_function(self, X):
        """Margins :math:`x_i^\\top w`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=True, dtype=np.float64, reset=False)
        if self.coef_.shape[0] > 1:  # issue 7: K > 2 classes: shape (n_samples, K)
            return np.asarray(X @ self.coef_.T) + self.intercept_
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, 2), columns ordered as ``classes_``."""
        v = self.decision_function(X)
        if v.ndim == 2:  # issue 7: multinomial
            return np.exp(_fw_multinomial.log_softmax(v))
        p = _sigmoid(v)
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        v = self.decision_function(X)
        if v.ndim == 2:  # issue 7: multinomial
            return _fw_multinomial.log_softmax(v)
        return np.column_stack([-np.logaddexp(0.0, v), -np.logaddexp(0.0, -v)])

    def predict(self, X):
        """Predicted class labels, shape (n_samples,)."""
        v = self.decision_function(X)
        if v.ndim == 2:  # issue 7: multinomial
            return self.classes_[np.argmax(v, axis=1)]
        return self.classes_[(v > 0).astype(int)]

    def objective(self, X, y):
        """Mean logistic loss of the fitted model on (X, y).

        Computed from the data: not covered by the privacy guarantee.
        """
        check_is_fitted(self)
        v = self.decision_function(X)
        if v.ndim == 2:  # issue 7: multinomial cross-entropy
            return _fw_multinomial.cross_entropy(v, y, self.classes_)
        y01 = (np.asarray(y) == self.classes_[1]).astype(np.float64)
        return float(np.mean(np.logaddexp(0.0, v) - y01 * v))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True  # issue 7: K > 2 via Algorithm 3
        return tags


def _floating_point_bounds(selector, n_features, group_size):
    """Per-step ``(gamma, delta_fp)`` of a private selector as implemented in doubles.

    For every set S of vertices, ``e^-gamma P(S) - delta_fp <= Q(S) <= e^gamma P(S) +
    delta_fp`` with P the exact exponential-mechanism law and Q the law of one draw,
    so an eps'-DP step is ``(eps' + 2 gamma, (1 + e^(eps' + 2 gamma)) delta_fp)``-DP.

    * ``"grouped"``: the sampler's proven bounds
      (:meth:`GroupedExpSampler.floating_point_bounds`).
    * ``"exponential"``: the inverse-CDF draw uses one 53-bit uniform, so each
      coordinate's probability is quantised to multiples of 2^-53 and the running
      sum of D weights carries a relative rounding error below D 2^-53: together an
      additive error below 3 D 2^-53 (a coordinate whose exact probability is below
      2^-53 may be drawn with probability 0 on one dataset and 2^-53 on its
      neighbour).
    * ``"noisy_max"`` / ``"laplace"``: Gumbel / Laplace noise from a 53-bit uniform
      is bounded (|noise| <= 36.8 scales), so vertices far behind the best have
      probability exactly 0 instead of at most e^-36.7 each, and the noise CDF is
      quantised to 2^-53: an additive error below 4 D 2^-53 over the 2D vertices.
    * every selector: the sign draw ``U < sigmoid(2x)`` is quantised to 2^-53.

    The last three are first-order bounds on the quantisation effects (papers/README
    000 item 6); only the grouped sampler's is derived in full (its module docstring).
    """
    from .. import _grouped_sampler

    unit = 2.0 ** -53
    sign_delta = 2.0 * unit
    if selector == "grouped":
        sampler = _grouped_sampler.GroupedExpSampler(n_features, group_size or None)
        gamma, delta_fp = sampler.floating_point_bounds()
        return gamma, delta_fp + sign_delta
    per_coordinate = 3.0 if selector == "exponential" else 4.0
    return 8.0 * unit, per_coordinate * n_features * unit + sign_delta


def _sigmoid(v):
    return 0.5 * (1.0 + np.tanh(0.5 * v))
