"""Frank-Wolfe L1-constrained logistic regression, private and non-private (Raff, Khanna and Lu, 2023)."""
import dataclasses
import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from . import _class_start, _distributed as _fw_distributed, _kernels, _multinomial as _fw_multinomial
from ...distributed import is_dask_array
from ..._docstrings import fill_doc
from ..._private import PrivateEstimatorMixin, sensitivity_factor
from ..._validation import (Boolean, check_positive_int, CLASSES, DELTA_OPEN,
                            FRACTION_OPEN, Interval, NEIGHBOURING, NON_NEGATIVE, Options, POSITIVE,
                            PRIVATE_COMMON, SCREENING, validate_params)
from .._glm._base import MAX_ITER
from ..._estimator import _ClassifierOutputs, _store_params
from ._budget import (COMPOSITION_CHOICES, FWParams, resolve_auto, resolve_selector, SELECTORS,
                      split_budget)
from ._screening import naive_bayes_start, start_steps

__all__ = ["FrankWolfeLassoClassifier"]

#: Default staleness bound rho of the fast solver, from the staleness studies
#: (docs/studies/frank_wolfe_speed.rst, *Bounded staleness*): 0.3, 0.5 and 0.7
#: gave the same non-private objective within the optimisation error and the same
#: private accuracy within its noise, 0.5 with about half the exact refreshes of
#: 0.3 and a smaller loss of training objective than 0.7 in private fits from the
#: zero start; rho = inf, the paper's Algorithm 2, does not bound the gradient
#: error at all.
DEFAULT_REFRESH_TOL = 0.5

#: What the private candidate screening releases and ranks the columns by:
#: ``"mass"``, the column masses of the row-normalised :math:`|X|` (no label), chosen
#: over ``"gradient"`` (the label-signed column sums) on the development sets
#: (docs/studies/frank_wolfe_defaults.rst).  Both are one Gaussian release of the
#: same sensitivity (``_screening``).
SCREENING_SCORE = "mass"

#: Values of ``start`` (``"auto"``: ``"naive_bayes"`` where it applies, see the
#: class docstring).
STARTS = ("auto", "zero", "naive_bayes")

#: ``selection_share="auto"``: the mass screening's share of the zCDP budget.
DEFAULT_SCREENING_FRACTION = 0.25

#: ``selection_share="auto"`` with the naive-Bayes start, whose release is the
#: model's main statistic: the share :class:`DPNBLogisticClassifier` gives the
#: same release (its ``selection_share``); on the development sets 0.5 lost at
#: epsilon 0.5-1 (docs/studies/frank_wolfe_defaults.rst).
START_SCREENING_FRACTION = 0.75


@fill_doc
class FrankWolfeLassoClassifier(_ClassifierOutputs, PrivateEstimatorMixin, ClassifierMixin,
                                BaseEstimator):
    r"""L1-constrained logistic regression by Frank-Wolfe, optionally differentially private.

    Solves

    .. math:: \min_{\|w\|_1 \le \lambda} \frac{1}{N}\sum_{i=1}^N
              \log(1 + e^{x_i^\top w}) - y_i x_i^\top w,\qquad y_i \in \{0, 1\},

    with ``max_iter`` Frank-Wolfe steps of size :math:`\eta_t = 2/(t+2)`, each moving
    towards one vertex :math:`s = \pm\lambda e_j` of the L1 ball (private
    two-class fits on many features start instead from naive Bayes built from the
    candidate screening's release, with :math:`\eta_t = 2/(t+t_0+2)`: ``start``).  With ``epsilon``
    set, the vertex is chosen by the exponential mechanism (Talwar, Thakurta and
    Zhang 2015, in the exponential-mechanism form of Raff, Khanna and Lu (2023), Section 3.3).

    The ``"fast"`` solver is Algorithm 2 of Raff, Khanna and Lu (NeurIPS 2023):
    scaled weights, sparse updates of margins, row and column gradients and of the
    gap, with the vertex taken from a lazy heap (non-private) or the Big-Step
    Little-Step sampler (private), so an iteration costs about the non-zeros it
    touches instead of :math:`O(\text{nnz}(X) + D)`.  Because a step rescales the
    whole weight vector, rows that do not contain the chosen feature keep a stale
    gradient in Algorithm 2 as printed; here every quantity is recomputed exactly
    whenever the product of :math:`(1-\eta_t)` since the last refresh drops below
    ``1 - refresh_tol``: Algorithm 2 as printed updates the gradients only of rows
    containing the chosen feature, so every other row's gradient goes stale and the
    maintained :math:`\alpha = X^\top q` drifts from the true gradient for the
    logistic loss; the bounded refresh keeps every margin within relative error
    ``refresh_tol``.

    Parameters
    ----------
    l1_bound : float or "auto", default="auto"
        Radius :math:`\lambda > 0` of the L1 ball.  ``"auto"``: non-private, 50 (the
        setting of Raff, Khanna and Lu's (2023) experiments, Table 3); private, the
        largest radius whose excess-risk bound (Frank-Wolfe rate plus the
        exponential mechanism's error, Talwar, Thakurta and Zhang 2015, Theorem
        3.1) stays below the loss of the zero model, from public N, epsilon,
        delta, the candidate features and K (``private_defaults()``).
    max_iter : int or "auto", default="auto"
        Number of Frank-Wolfe iterations :math:`1 \le T \le 10^7` (with ``epsilon`` set, the
        number of exponential-mechanism invocations the budget is split over).
        ``"auto"``: private, a third of the minimiser
        :math:`T^* = (2c\lambda M)^{2/3}` of the same bound (the
        :math:`(N\varepsilon)^{2/3}` rate of Talwar, Thakurta and Zhang 2015,
        with its constants; ``private_defaults()``),
        clipped to [10, 10^5]; N is ``n_samples_public`` or the number of rows,
        with a PrivacyLeakWarning; non-private, 1000.
    epsilon : float or None, default=1.0
        Total privacy budget :math:`\varepsilon > 0`.  ``None`` (only when given
        explicitly) fits without privacy and without a warning: no noise, nothing
        charged, ``privacy_spent_`` None.
    delta : float or None, default=None
        :math:`\delta \in (0, 1)` of the guarantee.  With ``epsilon`` set and ``delta``
        None, the steps compose by basic composition (pure :math:`\varepsilon`-DP).
    solver : {"fast", "standard"}, default="fast"
        ``"fast"``: Algorithm 2 with bounded staleness.  ``"standard"``: Algorithm 1,
        the baseline of every speed comparison (sparse mat-vecs, O(D) passes).
    mechanism : str, default="auto"
        How the vertex is chosen.  Non-private: ``"argmax"`` (O(D) scan),
        ``"pairing_heap"``, ``"fibonacci_heap"`` (Algorithm 3; fast solver only).
        Private: ``"grouped"`` (Big-Step Little-Step sampler, Algorithm 4; fast solver
        only), ``"exponential"`` (exact inverse-CDF draw over all coordinates, O(D)),
        ``"noisy_max"`` (Gumbel-max over all 2D signed vertices, O(D): the paper's
        ablation).  All private selectors implement the same exponential mechanism.
        ``"laplace"`` (both solvers, O(D)): the private LASSO of Talwar, Thakurta
        and Zhang (2015), Algorithm 1 (report noisy max with Laplace noise over the 2D vertices),
        with the scale :math:`2\Delta/\varepsilon'` that makes each step
        :math:`\varepsilon'`-DP; ``"laplace_talwar"``: the scale as printed,
        :math:`\lambda L\sqrt{8T\ln(1/\delta)}/(N\varepsilon)`, kept for
        reproduction only (it overspends slightly; ``privacy_spent_`` reports the
        guarantee it really gives; see ``dptoolkit.accounting._talwar``).
        ``"auto"``: non-private -> ``"argmax"``, except that the fast solver takes
        the pairing heap when :math:`D \ge 256\,\mathrm{nnz}(X)` (then even a step
        touching every non-zero updates the heap for less than one O(D) scan:
        ``nonprivate_fast_selector()``; on
        text the chosen features are frequent, a step changes most gradients and
        the heaps lose); private -> fast: ``"grouped"``, standard:
        ``"exponential"``.
    refresh_tol : float, default=0.5
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
    composition : {"auto", "zcdp", "advanced"}, default="auto"
        How the steps compose, which sets the budget split over the ``max_iter`` steps
        (``dptoolkit.linear_model._frank_wolfe._budget``).  ``"zcdp"``: each
        exponential-mechanism step is :math:`\varepsilon'^2/8`-zCDP (a
        bounded-range mechanism, Cesar and Rogers 2021), composed as Renyi DP and
        converted to (epsilon, delta): about 2.5x the per-step epsilon of
        ``"advanced"``, the full Dwork-Rothblum-Vadhan bound (or basic composition
        when larger), kept for reproduction of Raff, Khanna and Lu (2023).  ``"auto"``: ``"zcdp"``
        for the exponential-mechanism selectors when ``delta`` is set, else
        ``"advanced"``.  The Laplace selectors are not bounded range:
        ``"zcdp"`` raises for them.
    k : int, "auto" or None, default="auto"
        Private candidate screening (``dptoolkit.linear_model._frank_wolfe._screening``):
        the Gaussian mechanism on the column masses of the row-normalised data picks
        this many candidate features before the steps, so the exponential mechanism
        is not swamped by millions of near-zero vertices.  ``"auto"``: for private
        fits with zCDP accounting, 1024 candidates or ``max_iter`` when larger (T
        steps can reach T distinct features), when there are more features;
        None: off.  An int needs zCDP accounting; one of at least the number of
        features screens nothing, except with the naive-Bayes start
        (``start``), whose release then keeps every feature as a candidate and
        buys only the start (as inside
        :class:`~dptoolkit.selection.PrivateSelectThenFit`).
    selection_share : float or "auto", default="auto"
        Share of the zCDP budget :math:`\rho` the screening spends, in (0, 1).
        ``"auto"``: 0.25, and 0.75 with the naive-Bayes start (``start``), whose
        release is the model's main statistic (the share
        :class:`DPNBLogisticClassifier` gives it).  The share and the 1024
        candidates were chosen on the development sets
        (:ref:`study_frank_wolfe_defaults`).
    start : {"auto", "zero", "naive_bayes"}, default="auto"
        Where the steps start.  ``"zero"``: :math:`w_0 = 0`, step size
        :math:`2/(t+2)`.  ``"naive_bayes"`` (private two-class fits whose
        screening runs): the screening releases the per-class sums of the
        row-normalised rows (one Gaussian release, L2 sensitivity 1 under
        add/remove: the same event as the mass screening at the same share) and
        ranks the candidates by their sum; the start is the naive-Bayes
        log-count ratios of the candidates above 4 noise standard deviations,
        scaled to the sphere of the L1 ball
        (``naive_bayes_start()`` in ``_screening``; post-processing of the
        release, no further budget), and the steps take
        :math:`\eta_t = 2/(t + t_0 + 2)` so that :math:`w_0` keeps its weight.
        With K > 2 classes (in memory): the K per-class sums are released the
        same way and the start is the class-centred naive-Bayes log-probabilities,
        one scale for all the rows so that the largest row is on the sphere
        (``multinomial_naive_bayes_start()`` in ``_class_start``).
        ``"auto"``: ``"naive_bayes"`` for private two-class fits that screen
        (zCDP accounting, more than 1024 features; in memory or on a Dask
        array), else ``"zero"`` (K > 2 classes, a9a-sized data, non-private
        fits).  Chosen on the development sets
        (:ref:`study_frank_wolfe_defaults`; for K > 2 the start trades accuracy
        on balanced classes for the small classes' predictions:
        :ref:`study_multiclass`).
    start_steps : int or "auto", default="auto"
        :math:`t_0 \ge 0`: how many steps the start counts as (Jaggi 2013,
        Theorem 1 from a feasible start; the start keeps the weight
        :math:`(t_0+1)(t_0+2)/((T+t_0+1)(T+t_0+2))` in :math:`w_T`).
        ``"auto"``: :math:`T\,\min(\mathrm{nnz}(w_0), 1024)/4` (the steps' total
        weight is that of 8 average coordinates of the start, and at least about
        1/128 for starts of more than 1024 coordinates).  Ignored with the zero start.
    n_samples_public : int or None, default=None
        Public dataset size N used by ``l1_bound`` and ``max_iter`` ``"auto"``
        of a private fit; without it a private fit in memory that needs N takes the
        row count (with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`), and a
        private fit on a Dask array is refused.
    clip_data : bool, default=True
        Private fits need :math:`\|x_i\|_\infty \le 1` (a public bound).  If an entry
        exceeds it: ``True`` clips entries to [-1, 1] with a
        :class:`~dptoolkit.exceptions.DataClippedWarning`; ``False`` raises
        ``ValueError``.  Non-private fits use the data as given.
    tol : float, default=0.0
        Non-private only: stop when the Frank-Wolfe gap of the mean loss is
        <= ``tol``.  Must be 0 for private fits (a data-dependent stopping time
        would leak).
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set (at least two distinct labels).  When given, the fit
        never reads the label set from ``y``: ``classes_`` is its sorted copy, two
        classes give the binary model and more the multinomial one, a declared
        class absent from ``y`` is fine, and a label of ``y`` outside it raises
        ``ValueError``.  None: ``np.unique(y)``, with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning` for private fits (a
        neighbour with one more label would get a model of another shape).
    accountant : BudgetAccountant or None, default=None
        If given, the fit's (epsilon, delta) and ``privacy_event_`` are checked
        against it before any work and spent after the fit.
    random_state : int, numpy.random.Generator or None, default=None
        Source of the mechanism's randomness. ``None`` (the default for a
        release): fresh OS entropy, and nothing on the fitted model can
        regenerate the noise.  A seed or a Generator is kept (as in scikit-
        learn) and makes the noise reproducible by whoever knows it: a private
        fit given one warns (PrivacyLeakWarning, once per process).
    verbose : int, default=0
        If > 0, show a tqdm progress bar (the kernel then runs in ~100 chunks).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features) if more than 2
        Weights, :math:`\|w\|_1 \le \lambda`.
    intercept_ : ndarray of shape (1,)
        Always 0: the model has no intercept (as in the paper).  Add a constant
        feature (entries 1, within the public bound) to fit one inside the L1 ball.
    classes_ : ndarray of shape (n_classes,)
        The declared ``classes`` (sorted), else the labels of ``y``.
    l1_bound_ : float
        The radius used (``l1_bound="auto"`` resolved from public quantities).
    n_iter_ : int
        Iterations run.
    gap_history_ : ndarray of shape (``n_iter_``,) or None
        Frank-Wolfe gap :math:`\langle \nabla L(w_t), w_t - s_t\rangle` of the mean
        loss at each iteration, evaluated at the iterate *before* the step (so the
        last entry is the gap of the next-to-last iterate, not of ``coef_``) (non-private fits;
        ``None`` for private fits, whose
        gaps are not part of the release).  For the fast solver with
        ``refresh_tol > 0`` it is computed from the maintained (bounded-stale)
        gradient.
    n_features_in_ : int
    screened_features_ : ndarray of shape (screening,) or None
        The candidate features of a screened fit (sorted), None otherwise.
    privacy_spent_ : tuple (epsilon, delta) or None
        The guarantee of the released ``coef_`` (None when non-private).  With the
        grouped sampler and ``delta=None`` the delta is the sampler's documented
        floating-point delta summed over the steps (about 1e-12 per step).
    privacy_event_ : PrivacyEvent or None
        What the fit ran (:mod:`dptoolkit.accounting.events`): ``max_iter``
        exponential-mechanism (or pure-DP Laplace) steps and the floating-point
        delta; :func:`dptoolkit.accounting.epsilon_of_event` of it at
        ``privacy_spent_[1]`` gives ``privacy_spent_[0]``.
    epsilon_step_ : float or None
        Per-iteration budget :math:`\varepsilon'` of the exponential mechanism.
    composition_ : str or None
        ``"zcdp"`` (Renyi DP of bounded-range steps), ``"advanced"``
        (Dwork-Rothblum-Vadhan, full bound, inverted exactly) or ``"basic"``
        (:math:`\varepsilon' = \varepsilon/T`), whichever gives the larger
        valid :math:`\varepsilon'` among those ``composition`` allows.
    solver_stats_ : dict
        Work counters: iterations and refreshes, and for non-private fits also the
        rows and non-zeros touched and the selector updates.  Private fits keep only
        the data-independent counters (the others would reveal e.g. nnz(X)).
    mechanism_ : str
        The selector used (``mechanism="auto"`` resolved).

    Notes
    -----
    Internal constants (not parameters: chosen once, see the studies).  The
    private candidate screening releases the column masses of the
    row-normalised :math:`|X|` (``SCREENING_SCORE``, chosen over the label-signed
    column sums, the score of the first step, on the development sets:
    :ref:`study_frank_wolfe_defaults`); the Big-Step Little-Step sampler
    (``mechanism="grouped"``) uses groups of :math:`\lceil\sqrt{D}\rceil`
    coordinates (Raff, Khanna and Lu 2023, Algorithm 4).

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
    vertices; the sign is sampled too (weighting coordinate *j* by
    :math:`|\alpha_j|` and then taking the sign of the true gradient would release
    information outside the mechanism; and Raff, Khanna and Lu's (2023) line 5 scale is inconsistent
    with its own sum-form :math:`\alpha`), which makes each step
    :math:`\varepsilon'`-DP and :math:`\varepsilon'`-bounded-range.  The :math:`T` steps compose adaptively:
    with ``delta`` set, :math:`\varepsilon'` is the exact inverse of the full
    Dwork-Rothblum-Vadhan bound
    :math:`\varepsilon = \varepsilon'\sqrt{2T\ln(1/\delta)} + T\varepsilon'(e^{\varepsilon'}-1)`
    (searched by :func:`dptoolkit.accounting.calibrate_parameter` on the released
    event with the accountant's advanced composition; not the simplified formula of
    Raff, Khanna and Lu (2023), Appendix B.2), or :math:`\varepsilon/T` by basic composition if that is
    larger.  The released model is :math:`w_T`.  With ``start="naive_bayes"``
    the steps start from a function of the screening's released per-class sums
    (post-processing: the event is the screening's Gaussian release and the
    steps, as for the zero start at the same ``selection_share``).  Floating-point effects: each
    selector's draw deviates from the exact law by a per-step
    :math:`(\gamma, \delta_{fp})` (quantisation to 2^-53, and in the grouped sampler
    the maintained sums and the underflow of weights a few hundred nats below the
    largest, Raff, Khanna and Lu (2023) footnote 4); the budget split includes them
    (``floating_point_bounds()``): :math:`\varepsilon'` is reduced by
    :math:`2\gamma` and :math:`T(1+e^{\varepsilon'})\delta_{fp}` (about
    :math:`10^{-12}` per step at :math:`D = 2^{20}`) is taken from ``delta``, or
    reported as the delta of an otherwise pure-DP fit.  Floating-point Laplace/Gumbel
    sampling remains subject to the attacks of Mironov (2012).  Only ``coef_``
    (and ``n_iter_``, ``classes_`` when ``classes`` is declared) are covered: the
    label set must be public (``classes``); the data-dependent warnings (entries
    clipped to the public bound) and :meth:`objective` are computed from the data
    and are outside the guarantee (``dptoolkit._private``, "Side channels").

    **Utility.**  Test accuracy against epsilon, beside the non-private
    reference and the toolkit's other models: :ref:`study_frank_wolfe_defaults`
    and :ref:`study_accuracy_vs_epsilon`.  With more than two classes each step
    makes K selections, one per class, so a model with many classes needs a
    larger epsilon than a binary one.

    **Timing.**  The running time of a fit is not covered by the guarantee: the
    ``"fast"`` solver's cost per step depends on the non-zeros it touches, the
    ``"standard"`` solver's does not.  To release a timed fit, pad its wall-clock
    time to a public bound.  The User Guide (:ref:`user_guide_lasso`) says how,
    and covers the OpenMP threads (same result on any number) and when another
    solver is the better tool.

    References
    ----------
    E. Raff, A. Khanna, F. Lu. Scaling Up Differentially Private LASSO Regularized
    Logistic Regression via Faster Frank-Wolfe Iterations. NeurIPS 2023.
    K. Talwar, A. Thakurta, L. Zhang. Nearly Optimal Private LASSO. NeurIPS 2015.
    C. Dwork, G. Rothblum, S. Vadhan. Boosting and Differential Privacy. FOCS 2010.
    """

    #: The command line's ``--model`` name (dptoolkit._discovery.cli_name).
    _cli_name = "frank-wolfe"
    #: ``fit`` takes a Dask array of CSR row blocks (the command line's cluster fits).
    _fits_dask_arrays = True

    _parameter_constraints = {
        **PRIVATE_COMMON, "delta": DELTA_OPEN, "l1_bound": [Options("auto"), *POSITIVE],
        "max_iter": [Options("auto"), Interval("int", 1, MAX_ITER)],
        "solver": [Options("fast", "standard")],
        "mechanism": [Options("auto", *SELECTORS)],
        "refresh_tol": [Interval("real", 0.0, math.inf)],
        "neighbouring": NEIGHBOURING, "composition": [Options(*COMPOSITION_CHOICES)],
        "k": SCREENING, "selection_share": [Options("auto"), *FRACTION_OPEN],
        "start": [Options(*STARTS)], "start_steps": [Options("auto"), Interval("int", 0, None)],
        "clip_data": [Boolean()],
        "tol": NON_NEGATIVE, "classes": CLASSES,
        "verbose": [Boolean(), Interval("int", 0, None)],
    }

    def __init__(self, *, l1_bound="auto", max_iter="auto", epsilon=1.0, delta=None,
                 solver="fast", mechanism="auto", refresh_tol=DEFAULT_REFRESH_TOL,
                 neighbouring="add_remove", composition="auto", k="auto",
                 selection_share="auto", start="auto",
                 start_steps="auto", n_samples_public=None,
                 clip_data=True, tol=0.0, classes=None, accountant=None, random_state=None,
                 verbose=0):
        _store_params(self, locals())

    # ------------------------------------------------------------------ checks
    def _check_params(self, multinomial=False):
        """The validated parameters as the fit uses them (``"auto"`` left to
        :meth:`_resolve_auto`).  Their types and ranges are the constraint table's,
        checked once (:func:`~dptoolkit._validation.validate_params`, at the start
        of the fit, of :meth:`budget` or of ``plan_spend``); only the rules between
        parameters are checked here."""
        l1_bound = None if self.l1_bound == "auto" else float(self.l1_bound)
        max_iter = None if self.max_iter == "auto" else int(self.max_iter)
        selection_share = (None if self.selection_share == "auto"  # with the start
                           else float(self.selection_share))
        epsilon, delta = self._check_budget()
        private = epsilon is not None
        spec = resolve_selector(self.mechanism, private=private, solver=self.solver,
                                multinomial=multinomial)
        refresh_tol = float(self.refresh_tol)
        composition = self.composition
        group_size = 0   # the grouped sampler's ceil(sqrt(D)) (Notes)
        tol = float(self.tol)
        if private and tol > 0:
            raise ValueError("tol must be 0 for a private fit: stopping on the gap "
                             "would make the number of steps depend on the data")
        return FWParams(l1_bound=l1_bound, max_iter=max_iter, private=private,
                        epsilon=epsilon, delta=delta, spec=spec, refresh_tol=refresh_tol,
                        group_size=group_size, tol=tol,
                        selection_share=selection_share, composition=composition)

    def budget(self, n_features, n_classes=2, n_samples=None):
        """The budget split a private fit on ``n_features`` features would use.

        Depends on public quantities only (the hyper-parameters, D and K), the
        same in memory and on a Dask array.

        Parameters
        ----------
        n_features : int
            D >= 1.
        n_classes : int, default=2
        n_samples : int or None, default=None
            N, needed by ``max_iter="auto"`` when ``n_samples_public`` is None.

        Returns
        -------
        FWBudget
            ``epsilon``, ``delta`` (the guarantee), ``epsilon_step``, ``composition``,
            ``kernel_parameter`` (the exponential mechanism's coefficient or the
            Laplace scale the kernels take) and ``event``.

        Raises
        ------
        ValueError
            Non-private estimator (``epsilon=None``) or invalid hyper-parameters.
        """
        n_features = check_positive_int(n_features, "n_features")
        n_classes = check_positive_int(n_classes, "n_classes")
        validate_params(self)
        p = self._check_params(multinomial=n_classes > 2)
        if not p.private:
            raise ValueError("budget() needs a private estimator (epsilon is None)")
        if n_samples is None:
            if self.n_samples_public is None and self.max_iter == "auto":
                raise ValueError("budget() with max_iter='auto' needs n_samples or "
                                 "n_samples_public")
            n_samples = self.n_samples_public or 1
        p = self._resolve_auto(p, (check_positive_int(n_samples, "n_samples"), n_features),
                               warn=False, n_classes=n_classes)
        return self._budget(p, n_features, n_classes if n_classes > 2 else 1)

    def _budget(self, p, n_features, n_classes=1):
        """The budget split (``split_budget()``)."""
        return split_budget(p.spec, epsilon=p.epsilon, delta=p.delta,
                            max_iter=p.max_iter, n_features=n_features,
                            group_size=p.group_size, n_classes=n_classes,
                            neighbouring=self.neighbouring,
                            lipschitz=1.0 if n_classes == 1 else _fw_multinomial.LIPSCHITZ,
                            composition=p.composition,
                            selection_share=p.selection_share if p.screening else 0.0,
                            n_candidates=p.screening or None)

    def _screening_score(self):
        """What the candidate screening releases: :data:`SCREENING_SCORE` (Notes)."""
        return SCREENING_SCORE

    def _resolve_auto(self, p, shape, warn=True, n_classes=1, zero_start=False):
        """``k``, ``selection_share``, ``l1_bound``, ``max_iter``, ``start``
        and ``start_steps`` ``"auto"`` resolved for data of ``shape``
        (:func:`~dptoolkit.linear_model._frank_wolfe._budget.resolve_auto`).

        ``start="naive_bayes"`` needs a private fit whose screening runs (it is
        built from the screening's release); ``"auto"`` is ``"naive_bayes"``
        where that holds with two classes, else ``"zero"`` (``zero_start``: the zero start for
        ``"auto"``, as where no screening runs).
        """
        n_rows, n_features = shape
        given = p
        start = "zero"
        if self.start == "naive_bayes":
            if not p.private:
                raise ValueError(f"start={self.start!r} needs a private fit (epsilon set): "
                                 "it is built from the released per-class sums")
            start = "naive_bayes"
        elif self.start == "auto" and p.private and n_classes <= 2 and not zero_start:
            start = "naive_bayes"    # if the fit screens (below)
        fraction = p.selection_share
        if fraction is None:
            fraction = (START_SCREENING_FRACTION if start != "zero"
                        else DEFAULT_SCREENING_FRACTION)
        p = resolve_auto(
            dataclasses.replace(p, selection_share=fraction),
            screening=self.k, n_features=n_features, n_classes=n_classes,
            advanced=p.composition == "advanced", neighbouring=self.neighbouring,
            keep_all=start != "zero",
            n_samples=lambda: self._n_samples(n_rows, private=warn,
                                              uses="l1_bound and max_iter 'auto'"))
        if start != "zero" and not p.screening and self.start == "auto":
            return self._resolve_auto(given, shape, warn, n_classes, zero_start=True)
        if start != "zero" and not p.screening:
            raise ValueError(f"start={self.start!r} starts from the candidate screening's "
                             "release: it needs screening (an int or 'auto' with more than "
                             "1024 features) and zCDP accounting (delta > 0)")
        t0 = 0.0
        if start != "zero":  # "auto": from the start itself (fit, start_steps)
            t0 = None if self.start_steps == "auto" else float(self.start_steps)
        return dataclasses.replace(p, start=start, start_steps=t0)

    # --------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, any scipy.sparse format or dense.  Private fits need
            entries in [-1, 1] (see ``clip_data``).  Or a
            :class:`dask.array.Array` of CSR row blocks with ``y`` of the same
            row chunks (two classes: the fast solver, selector "grouped" or
            "argmax"; K > 2: any multinomial selector; a private fit needs
            ``n_samples_public``, never taken from the chunk sizes): the rows stay on the
            workers and the fit releases the in-memory model up to the rounding
            of the summation order
            (``_frank_wolfe._dask_binary.frank_wolfe_over_blocks``,
            ``_frank_wolfe._dask_multinomial.multinomial_frank_wolfe_over_blocks``).
        y : array-like of shape (n_samples,)
            Two classes, any labels; ``classes_[1]`` is the positive class.  With
            ``classes`` declared, every label must be one of them (some may be
            absent) and the number of declared classes decides the model.
            More than two classes: multinomial private LASSO (Khanna, Lu and Raff (2023), Algorithm 3;
            ``coef_`` of shape (n_classes, n_features), every row in the L1 ball,
            selectors "auto"/"argmax" or "exponential", "noisy_max", "laplace",
            "laplace_talwar"; privacy analysis in
            ``dptoolkit.linear_model._frank_wolfe._multinomial``).

        Returns
        -------
        self : FrankWolfeLassoClassifier

        Raises
        ------
        ValueError
            Invalid hyper-parameters (``classes`` not 1-D, fewer than two or
            duplicate labels), NaN/inf in X, inconsistent shapes, fewer than two
            classes, labels of ``y`` outside ``classes``, data outside the public
            bound with ``clip_data=False`` (all before the spend), or a budget the
            ``accountant`` cannot pay; a private Dask fit without ``n_samples_public``.
        RuntimeError
            On a Dask array: workers died repeatedly (more often than
            ``distributed.scheduler.allowed-failures``); nothing is released or
            charged.

        Warns
        -----
        PrivacyLeakWarning
            Private fit with ``classes=None`` (the label set read from ``y``), or
            with ``n_samples_public=None`` and ``l1_bound`` or ``max_iter``
            ``"auto"`` (in memory; refused on a Dask array).
        DataClippedWarning
            Private fit whose data had entries outside [-1, 1] (clipped; a
            data-dependent warning outside the guarantee).
        TypeError
            Non-numeric hyper-parameters or data.
        """
        return super().fit(X, y)

    def _validate_fit_data(self, X, y):
        if is_dask_array(X):  # X stays on the workers
            return _fw_distributed.validate_dask_data(self, X, y)
        # a private fit on CSR/CSC input checks NaN and infinity with the public
        # bound (_check_fit_data: one pass over the values for both)
        return self._classifier_data(X, y, ensure_all_finite=not _kernels.defers_finite_check(
            X, self.epsilon is not None))

    def _check_fit_data(self, X, plan):
        """A Dask array's rules; in memory, the data checks before the spend (``fit_data``)."""
        if is_dask_array(X):
            _fw_distributed.check_dask_plan(self, plan)
            return X
        return _kernels.fit_data(self, X, private=plan.spent is not None)

    def _fit_private(self, X, y, plan, rng):
        """Frank-Wolfe on the L1 ball (binary or multinomial), in memory or over a
        Dask array's blocks."""
        if is_dask_array(X):
            return _fw_distributed.fit_dask(self, X, y, plan, rng)
        data, classes = X, self.classes_  # in memory: the checked data (_check_fit_data)
        p, budget = plan.params, plan.params.budget
        n_rows = classes.size if classes.size > 2 else 1  # rows of coef_
        csr, csc, (n_samples, _), columns, sums, order = _kernels.kernel_views(
            self, data, budget, p, rng, y_codes=(np.searchsorted(classes, y), classes.size),
            index_dtype=_kernels.index_dtype(classes.size, self.solver),
            fast_selector=_kernels.fast_selector(classes.size, self.solver, p))
        kernel, spec = _kernels.make_kernel(
            y=y, classes=classes, csr=csr, csc=csc, p=p, solver=self.solver,
            mechanism=self.mechanism, kernel_parameter=budget.kernel_parameter if budget else 0.0,
            bit_generator=rng.bit_generator, column_order=order)
        del csr, csc  # the kernel holds what it reads (the fast one may renumber a copy)
        if p.start == "naive_bayes":  # post-processing of the screening's release
            noise_std = budget.screening_noise_multiplier * sensitivity_factor(self.neighbouring)
            if classes.size > 2:
                _class_start.set_multinomial_start(kernel, sums, columns, p, noise_std)
            else:
                w0 = naive_bayes_start(sums, columns, p.l1_bound, noise_std)
                kernel.set_start(w0, start_steps(p.max_iter, w0, p.start_steps))
        del sums  # the released sums are not kept (nor stored on the model)
        gaps = np.full(p.max_iter, np.nan)
        # kernel gaps are sum-form; private gaps can be negative (ascent vertices)
        stop = p.tol * n_samples if p.tol > 0 else -np.inf
        n_done = self._run(kernel, p.max_iter, gaps, stop)
        self.mechanism_ = spec.name
        self.l1_bound_ = float(p.l1_bound)
        self.coef_ = _fw_multinomial.expand_columns(kernel.coef().reshape(n_rows, -1),
                                                    columns, data.X.shape[1])
        self.screened_features_ = columns
        self.intercept_ = np.zeros(n_rows)
        self.n_iter_ = int(n_done)
        self.solver_stats_ = _kernels.released_stats(kernel, p.private, classes.size)
        self._set_guarantee(budget, gaps, n_done, n_samples)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        ``params`` is the :class:`FWParams` with ``"auto"`` resolved and the budget."""
        classes = self._planned_classes(classes)
        p = self._check_params(multinomial=classes.size > 2)
        if classes.size < 2:
            raise ValueError("FrankWolfeLassoClassifier needs at least two classes in "
                             f"y (or declared in classes), got {classes.size} class")
        # K > 2: multinomial private LASSO (Khanna, Lu and Raff (2023), Appendix A)
        p = self._resolve_auto(p, (n_samples, n_features), n_classes=classes.size)
        if not p.private:
            return self._plan(None, None, p)
        budget = self._budget(p, n_features, classes.size if classes.size > 2 else 1)
        return self._plan(budget.event, (budget.epsilon, budget.delta),
                          dataclasses.replace(p, budget=budget))

    def _set_guarantee(self, budget, gaps, n_done, n_samples):
        """Set the privacy attributes after a fit (binary and multinomial; the
        template records the plan's spend, ``budget.event``); a private fit keeps no
        gap history (it depends on the data)."""
        if budget is not None:
            self.gap_history_ = None
            self.epsilon_step_ = budget.epsilon_step
            self.composition_ = budget.composition
            return
        self.gap_history_ = gaps[:n_done] / n_samples
        self.epsilon_step_ = None
        self.composition_ = None

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
    _multi_class = True  # K > 2 via Algorithm 3

    def _margins(self, X):
        """Margins :math:`x_i^\\top w`: shape (n_samples,) for two classes,
        (n_samples, K) for K > 2."""
        if self.coef_.shape[0] > 1:  # K > 2 classes: shape (n_samples, K)
            return np.asarray(X @ self.coef_.T) + self.intercept_
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]

    @staticmethod
    def _multiclass_proba(v):
        return np.exp(_fw_multinomial.log_softmax(v))

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        v = self.decision_function(X)
        if v.ndim == 2:  # multinomial
            return _fw_multinomial.log_softmax(v)
        return np.column_stack([-np.logaddexp(0.0, v), -np.logaddexp(0.0, -v)])

    def objective(self, X, y):
        """Mean logistic loss of the fitted model on (X, y).

        Computed from the data: not covered by the privacy guarantee.
        """
        check_is_fitted(self)
        v = self.decision_function(X)
        if v.ndim == 2:  # multinomial cross-entropy
            return _fw_multinomial.cross_entropy(v, y, self.classes_)
        y01 = (np.asarray(y) == self.classes_[1]).astype(np.float64)
        return float(np.mean(np.logaddexp(0.0, v) - y01 * v))
