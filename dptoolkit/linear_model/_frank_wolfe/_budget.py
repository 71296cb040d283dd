r"""The selector registry and the one budget split of private Frank-Wolfe.

Used by :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` for two
classes (Raff, Khanna and Lu (2023), Algorithms 1-2) and for K > 2 classes (Khanna, Lu and Raff (2023),
Appendix A, Algorithm 3), and by the Sparsifier's inner fit.

**Selectors.**  :data:`SELECTORS` lists every vertex selector once: whether it
is private, which solvers and which problems (binary, multinomial) run it, the
kernel it maps to, and the mechanism it implements.

**Mechanisms and their accounting.**  A private step releases one vertex
:math:`\pm\lambda e_j` (per class for K > 2).  The scores
:math:`u(s) = -\langle s, \alpha_t\rangle` have sensitivity
:math:`\Delta = f L` in kernel units (``l1_bound`` factored out; ``L = 1`` for
the logistic loss with :math:`\|x_i\|_\infty \le 1`, ``L = 2`` summed over the
classes of the multinomial loss, Khanna, Lu and Raff (2023) Theorem 4; ``f = 2`` for
replace-one).

* Exponential-mechanism selectors (``"grouped"``, ``"exponential"``,
  ``"noisy_max"``): weight :math:`\exp(\varepsilon' u / (2\Delta))`, so the
  kernel coefficient is :math:`c = \varepsilon' / (2\Delta)`.  Each step is
  :math:`\varepsilon'`-DP and :math:`\varepsilon'`-bounded-range, hence
  :math:`\varepsilon'^2/8`-zCDP (Cesar and Rogers 2021, Lemma 3.2); the K
  selections of a multinomial step have ranges :math:`2 c f r_k` with
  :math:`\sum_k r_k \le L`, so the step is
  :math:`(\sum_k 2cfr_k)^2/8 \le \varepsilon'^2/8`-zCDP.
* Laplace report-noisy-max (``"laplace"``; Talwar, Thakurta and Zhang 2015 as in
  Khanna, Lu and Raff (2023), Algorithm 1): scale :math:`b = 2\Delta/\varepsilon'`, each step
  :math:`\varepsilon'`-DP.  It is **not** a bounded-range mechanism, so the zCDP
  bound above does not apply; it is accounted as pure DP (basic or advanced
  composition).  ``"laplace_talwar"`` is the printed scale, kept for
  reproduction with the guarantee it really gives.

**Budget split** (``composition``):

``"zcdp"``
    :math:`\varepsilon'` is the largest per-step parameter whose T-fold
    composition, as Renyi DP (:class:`~dptoolkit.accounting.PrivacyAccountant`
    with the improved conversion of Canonne, Kamath and Steinke 2020), is
    (epsilon, delta)-DP.  Exponential-mechanism selectors only; needs delta > 0.
``"advanced"``
    The larger of :math:`\varepsilon/T` (basic) and the exact inverse of the
    full Dwork-Rothblum-Vadhan bound
    :math:`\varepsilon'\sqrt{2T\ln(1/\delta)} + T\varepsilon'(e^{\varepsilon'}-1)`
    (not the simplified form of Raff, Khanna and Lu (2023), Appendix B.2).
``"auto"`` (default)
    ``"zcdp"`` for exponential-mechanism selectors with delta > 0, else
    ``"advanced"``.  At T = 1000, (1, 1e-5): :math:`\varepsilon'` = 1.56e-2
    against 6.33e-3.

**Floating point.**  Each selector's draw deviates from the exact law by a
per-step :math:`(\gamma, \delta_{fp})` (:func:`floating_point_bounds`); a step is
then :math:`(\varepsilon' + 2\gamma)`-DP and :math:`(\varepsilon' +
4\gamma)`-bounded-range up to :math:`\delta_{fp}`, and
:math:`T(1 + e^{\varepsilon'+2\gamma})\delta_{fp}` is taken from delta (or
reported as the delta of an otherwise pure-DP fit).  Raff, Khanna and Lu (2023), footnote 4:
weights that underflow get probability 0, an (epsilon, tiny-delta) effect
included here.
"""
import dataclasses
import math

from ..._private import sensitivity_factor
from ..._validation import check_positive_int
from ...exceptions import ScreeningUnavailableError
from ...accounting import calibrate_parameter
from ...accounting.events import (ApproxDPEvent, ComposedEvent, ExponentialMechanismEvent,
                                  GaussianEvent, PureDPEvent, SelfComposedEvent, ZCDPEvent)

__all__ = ["SELECTORS", "SelectorSpec", "FWBudget", "resolve_selector", "split_budget",
           "nonprivate_fast_selector", "HEAP_UPDATE_COST",
           "floating_point_bounds", "COMPOSITION_CHOICES", "private_defaults",
           "NONPRIVATE_L1_BOUND", "NONPRIVATE_MAX_ITER", "MAX_AUTO_ITER",
           "MIN_AUTO_CANDIDATES", "resolve_auto"]

COMPOSITION_CHOICES = ("auto", "zcdp", "advanced")

#: ``l1_bound="auto"`` and ``max_iter="auto"`` of a non-private fit (the setting of
#: Raff, Khanna and Lu's (2023) experiments, Table 3, lambda = 50; T = 1000).
NONPRIVATE_L1_BOUND = 50.0
NONPRIVATE_MAX_ITER = 1000
#: Range of the private ``max_iter="auto"``.
MIN_AUTO_ITER, MAX_AUTO_ITER = 10, 100_000
#: Candidate features of ``k="auto"``: at least this many, and at least
#: ``max_iter`` (T steps can reach T distinct features).  Fewer candidates than the
#: former 4096, with a larger ``selection_share`` (0.25 instead of 0.1), was more
#: accurate on every development set (:ref:`study_frank_wolfe_defaults`).
MIN_AUTO_CANDIDATES = 1024
#: The private ``max_iter="auto"`` is this fraction of the bound's minimiser T*
#: (``private_defaults()``): the bound's curvature :math:`C_f \le c\lambda^2` is the
#: worst case (every :math:`|(s - w)^\top x_i| = 2\lambda`); on sparse data the
#: optimisation error falls faster, and T*/3 was at least as accurate as T* on the
#: development sets (20 Newsgroups comp.* vs rec.*, epsilon 1 and 4; a9a, epsilon 1;
#: Reuters R8; docs/studies/frank_wolfe_defaults.rst).
STEP_FRACTION = 1.0 / 3.0


@dataclasses.dataclass(frozen=True)
class SelectorSpec:
    """One vertex selector.

    Attributes
    ----------
    name : str
    private : bool
    mechanism : {"exponential", "laplace", None}
        The law of a private selector's draw.
    kernel : str
        Name of the kernel's selector (``SELECTOR_CODES``).
    solvers : tuple of str
        Binary solvers that run it.
    multinomial : bool
        Available for K > 2 classes.
    """
    name: str
    private: bool
    mechanism: str
    kernel: str
    solvers: tuple
    multinomial: bool


#: Every selector of the Frank-Wolfe solvers, in one place.
SELECTORS = {s.name: s for s in (
    SelectorSpec("argmax", False, None, "argmax", ("fast", "standard"), True),
    SelectorSpec("pairing_heap", False, None, "pairing_heap", ("fast",), False),
    SelectorSpec("fibonacci_heap", False, None, "fibonacci_heap", ("fast",), False),
    SelectorSpec("grouped", True, "exponential", "grouped", ("fast",), False),
    SelectorSpec("exponential", True, "exponential", "exponential", ("fast", "standard"),
                 True),
    SelectorSpec("noisy_max", True, "exponential", "noisy_max", ("fast", "standard"), True),
    SelectorSpec("laplace", True, "laplace", "laplace", ("fast", "standard"), True),
    SelectorSpec("laplace_talwar", True, "laplace", "laplace", ("fast", "standard"), True),
)}


#: Cost of one lazy-heap update against one coordinate of the O(D) argmax scan
#: (20 Newsgroups comp.* vs rec.*, 2^20 features, non-private fast solver: about
#: 230 ns per pairing-heap update, under 1 ns per scanned coordinate).
HEAP_UPDATE_COST = 256


def nonprivate_fast_selector(n_features, nnz):
    """The non-private selector ``"auto"`` gives the fast binary solver.

    A step changes the gradient of at most ``min(D, nnz(X))`` coordinates, and a
    heap pays :data:`HEAP_UPDATE_COST` scanned coordinates for each, against one
    O(D) scan for ``"argmax"``.  So the pairing heap (Algorithm 3 of Raff, Khanna and Lu (2023))
    is chosen only when even a step that touched every non-zero would cost less
    than a scan, ``D >= HEAP_UPDATE_COST * nnz(X)`` (a few short documents
    hashed to many features); otherwise ``"argmax"``.  The rule reads only the
    shape and nnz (no per-feature statistic): on text, whose frequent features
    are the ones chosen, a step touches much of X and the heaps lose by 2-3x
    (``scripts/bench_frank_wolfe.py nonprivate``; README, *Results*).

    Parameters
    ----------
    n_features : int
        D (after any screening).
    nnz : int
        Stored non-zeros of X.

    Returns
    -------
    SelectorSpec
    """
    name = "pairing_heap" if n_features >= HEAP_UPDATE_COST * max(nnz, 1) else "argmax"
    return SELECTORS[name]


def resolve_selector(selector, *, private, solver, multinomial):
    """The :class:`SelectorSpec` for a requested selector (``"auto"`` resolved).

    ``"auto"``: non-private -> ``"argmax"`` (the fast binary solver then applies
    :func:`nonprivate_fast_selector` once the data's shape is known); private ->
    ``"grouped"`` for the fast binary solver, else ``"exponential"``.

    Raises
    ------
    ValueError
        Unknown selector, a private selector for a non-private fit (or the
        reverse), or a selector the solver / problem does not run.
    """
    if selector == "auto":
        if not private:
            name = "argmax"
        else:
            name = "grouped" if solver == "fast" and not multinomial else "exponential"
        return SELECTORS[name]
    allowed = tuple(n for n, s in SELECTORS.items()
                    if s.private == private and (s.multinomial or not multinomial))
    if selector not in allowed:
        kind = "private" if private else "non-private"
        where = "with more than two classes the " if multinomial else "for a "
        raise ValueError(f"{where}{kind} fit the mechanism must be 'auto' or one of "
                         f"{allowed}, got {selector!r}")
    spec = SELECTORS[selector]
    if not multinomial and solver not in spec.solvers:
        raise ValueError(f"mechanism {selector!r} needs solver='fast'")
    return spec


@dataclasses.dataclass(frozen=True)
class FWBudget:
    """The budget split of one private Frank-Wolfe fit.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee of the fit (``privacy_spent_``).
    epsilon_step : float
        Per-step :math:`\\varepsilon'` of the exact mechanism.
    composition : str
        ``"zcdp"``, ``"advanced"`` or ``"basic"``: how the steps compose.
    kernel_parameter : float
        What the kernel takes: the exponential-mechanism coefficient
        :math:`c = \\varepsilon'/(2\\Delta)` or the Laplace scale :math:`b`.
    event : PrivacyEvent
        The steps (and the screening) as a privacy event.
    screening_noise_multiplier : float or None
        Noise multiplier of the candidate screening
        (:mod:`~dptoolkit.linear_model._frank_wolfe._screening`), None without screening.
    """
    epsilon: float
    delta: float
    epsilon_step: float
    composition: str
    kernel_parameter: float
    event: object
    screening_noise_multiplier: float = None


@dataclasses.dataclass(frozen=True)
class FWParams:
    """The validated parameters of a Frank-Wolfe fit (its privacy plan's ``params``).

    ``composition`` is the parameter under its current name (``accounting``
    resolved).  ``l1_bound``, ``max_iter`` and ``k`` are None while ``"auto"`` (before
    they are resolved from the public N, D and K); ``epsilon`` and ``delta`` are
    None for a non-private fit; ``spec`` is the resolved selector; ``budget`` is the
    :class:`FWBudget` of a private fit (None before it is split, or non-private).
    """
    l1_bound: float
    max_iter: int
    private: bool
    epsilon: float
    delta: float
    spec: object
    refresh_tol: float
    group_size: int
    tol: float
    selection_share: float
    composition: str
    screening: int = None
    budget: FWBudget = None
    start: str = "zero"
    start_steps: float = 0.0


def floating_point_bounds(selector, n_features, group_size):
    """Per-step ``(gamma, delta_fp)`` of a private selector as implemented in doubles.

    For every set S of vertices, ``e^-gamma P(S) - delta_fp <= Q(S) <= e^gamma P(S) +
    delta_fp`` with P the exact law and Q the law of one draw.

    * ``"grouped"``: the sampler's proven bounds
      (:func:`~dptoolkit.linear_model._frank_wolfe._grouped_sampler.floating_point_bounds`, those of
      :meth:`GroupedExpSampler.floating_point_bounds`).
    * ``"exponential"``: the inverse-CDF draw uses one 53-bit uniform, so each
      coordinate's probability is quantised to multiples of 2^-53 and the running
      sum of D weights carries a relative rounding error below D 2^-53: together an
      additive error below 3 D 2^-53.
    * ``"noisy_max"`` / ``"laplace"``: Gumbel / Laplace noise from a 53-bit uniform
      is bounded (|noise| <= 36.8 scales), so vertices far behind the best have
      probability exactly 0 instead of at most e^-36.7 each, and the noise CDF is
      quantised to 2^-53: an additive error below 4 D 2^-53 over the 2D vertices.
    * every selector: the sign draw ``U < sigmoid(2x)`` is quantised to 2^-53.

    The last three are first-order bounds on quantisation effects; the grouped
    sampler's is derived in full in its module.
    """
    from . import _grouped_sampler

    unit = 2.0 ** -53
    sign_delta = 2.0 * unit
    if selector == "grouped":
        # from the sizes alone (building a sampler would allocate O(D) arrays)
        gamma, delta_fp = _grouped_sampler.floating_point_bounds(n_features,
                                                                 group_size or None)
        return gamma, delta_fp + sign_delta
    per_coordinate = 3.0 if selector == "exponential" else 4.0
    return 8.0 * unit, per_coordinate * n_features * unit + sign_delta


def _step_event(mechanism, eps_pure, gamma):
    """One step as an event: bounded range widens by 4 gamma, pure DP by 2 gamma."""
    if mechanism == "exponential":
        return ExponentialMechanismEvent(eps_pure, bounded_range=eps_pure + 2.0 * gamma)
    return PureDPEvent(eps_pure)


def split_budget(spec, *, epsilon, delta, max_iter, n_features, group_size=0, n_classes=1,
                 neighbouring="add_remove", lipschitz=1.0, composition="auto",
                 selection_share=0.0, n_candidates=None):
    r"""Split (epsilon, delta) over ``max_iter`` steps of selector ``spec``.

    Parameters
    ----------
    spec : SelectorSpec
        A private selector.
    epsilon : float
        > 0.
    delta : float
        In [0, 1); 0 means pure DP (up to the floating-point delta).
    max_iter : int
        Number of steps T.
    n_features : int
        D (sets the floating-point bounds).
    group_size : int, default=0
        Grouped sampler's group size (0: its default).
    n_classes : int, default=1
        K selections per step (1 for two classes).
    neighbouring : {"add_remove", "replace_one"}
    lipschitz : float, default=1.0
        L of the loss (1 binary logistic, 2 multinomial).
    composition : {"auto", "zcdp", "advanced"}, default="auto"
    selection_share : float, default=0.0
        Fraction of the zCDP budget rho (the largest rho that is (epsilon,
        delta)-DP) given to the Gaussian candidate screening, whose noise
        multiplier is then :math:`1/\sqrt{2 f \rho}`; the steps get the rest,
        calibrated on the exact composition.  In [0, 1); only with zCDP
        accounting (ignored otherwise: the budget then has no screening).
    n_candidates : int or None, default=None
        Number of features the screening keeps (``None``: ``n_features``).  A
        screened fit's selector draws over these candidates only, so its
        floating-point delta is that of ``n_candidates`` features; an unscreened
        fit's (the fallback when ``delta`` cannot pay even the screened
        floating-point delta) is that of all ``n_features``.

    Returns
    -------
    FWBudget

    Raises
    ------
    ValueError
        ``composition="zcdp"`` with a Laplace selector (not bounded range) or with
        delta = 0; a delta below the floating-point delta; a per-step epsilon
        below the floating-point error.
    """
    from ...accounting import laplace_selector_parameters

    if composition not in COMPOSITION_CHOICES:
        raise ValueError(f"composition must be one of {COMPOSITION_CHOICES}, got "
                         f"{composition!r}")
    if composition == "zcdp" and spec.mechanism != "exponential":
        raise ValueError(f"composition='zcdp' needs an exponential-mechanism selector: "
                         f"{spec.name!r} is Laplace report-noisy-max, which is not a "
                         "bounded-range mechanism, so the epsilon^2/8 zCDP bound does not "
                         "hold for it (use composition='advanced' or 'auto')")
    if composition == "zcdp" and delta <= 0:
        raise ValueError("composition='zcdp' needs delta > 0 (zCDP converts to "
                         "(epsilon, delta)-DP with delta > 0)")
    use_zcdp = spec.mechanism == "exponential" and delta > 0 and composition != "advanced"
    factor = sensitivity_factor(neighbouring)
    sensitivity = factor * lipschitz
    if spec.name == "laplace_talwar":
        eps_total, delta_total, eps_step, comp, scale = laplace_selector_parameters(
            spec.name, epsilon=epsilon, delta=delta, epsilon_step=None, composition=None,
            max_iter=max_iter, sensitivity=sensitivity, lipschitz=lipschitz,
            n_classes=n_classes)
        event = SelfComposedEvent(PureDPEvent(eps_step), max_iter)
        return FWBudget(eps_total, delta_total, eps_step, comp, scale, event)

    # (1 + e^(eps0 + 2 gamma)) delta_fp per step; bound eps0 by its value without the
    # floating-point terms (the true eps0 can only be smaller)
    eps0_max = epsilon / max_iter
    if delta > 0:
        eps0_max = max(eps0_max, _advanced_step(epsilon, delta, max_iter, spec.mechanism,
                                                0.0, 0.0))
        if use_zcdp:
            eps0_max = max(eps0_max, _zcdp_step(epsilon, delta, max_iter, 0.0, 0.0))

    def steps_fp(n_drawn):
        """gamma and the floating-point delta of the T steps over n_drawn features."""
        gamma1, delta_fp1 = floating_point_bounds(spec.name, n_drawn, group_size)
        g = n_classes * gamma1
        return g, max_iter * (1.0 + math.exp(min(eps0_max + 2 * g, 700.0))) * (
            n_classes * delta_fp1)

    screened = use_zcdp and selection_share > 0
    n_drawn = min(n_candidates or n_features, n_features) if screened else n_features
    gamma, delta_steps = steps_fp(n_drawn)
    if delta > 0 and delta_steps >= delta:
        raise ValueError(
            f"delta={delta:g} is below the floating-point delta {delta_steps:.3g} of "
            f"{max_iter} {spec.name!r} draws over {n_drawn} features"
            + (f" for each of {n_classes} classes" if n_classes > 1 else "")
            + ": raise delta, take fewer steps (max_iter) or screen to fewer candidate "
            "features (screening)")
    screen_sigma = None
    if screened:
        rho = calibrate_parameter(
            lambda r: ComposedEvent((ZCDPEvent(r), ApproxDPEvent(0.0, delta_steps))),
            target_epsilon=epsilon, delta=delta, low=1e-12, high=1e6, composition="rdp")
        screen_sigma = 1.0 / math.sqrt(2.0 * selection_share * rho)
        eps_z = _zcdp_step(epsilon, delta, max_iter, gamma, delta_steps, screen_sigma)
        if eps_z <= 2.0 * gamma:
            raise ValueError(f"epsilon={epsilon:g} leaves no budget for {max_iter} steps "
                             "after the candidate screening")
        eps_step = eps_z - 2.0 * gamma
        event = ComposedEvent((GaussianEvent(screen_sigma),
                               SelfComposedEvent(_step_event(spec.mechanism, eps_z, gamma),
                                                 max_iter),
                               ApproxDPEvent(0.0, delta_steps)))
        return FWBudget(epsilon, delta, eps_step, "zcdp", eps_step / (2.0 * sensitivity),
                        event, screen_sigma)
    eps0, composition = epsilon / max_iter, "basic"
    if delta > 0:
        eps_adv = _advanced_step(epsilon, delta, max_iter, spec.mechanism, gamma, delta_steps)
        if eps_adv > eps0:
            eps0, composition = eps_adv, "advanced"
        if use_zcdp:
            eps_z = _zcdp_step(epsilon, delta, max_iter, gamma, delta_steps)
            if eps_z > eps0:
                eps0, composition = eps_z, "zcdp"
    else:
        delta = min(delta_steps, 1.0)  # pure DP up to the floating-point delta
    eps_step = eps0 - 2.0 * gamma
    if eps_step <= 0:
        raise ValueError(f"epsilon={epsilon:g} over {max_iter} steps is below the "
                         f"floating-point error of selector {spec.name!r}")
    event = ComposedEvent((SelfComposedEvent(_step_event(spec.mechanism, eps0, gamma),
                                             max_iter),
                           ApproxDPEvent(0.0, min(delta_steps, 1.0))))
    if spec.mechanism == "laplace":
        _, _, _, _, scale = laplace_selector_parameters(
            spec.name, epsilon=epsilon, delta=delta, epsilon_step=eps_step,
            composition=composition, max_iter=max_iter, sensitivity=sensitivity,
            lipschitz=lipschitz, n_classes=n_classes)
        return FWBudget(epsilon, delta, eps_step, composition, scale, event)
    return FWBudget(epsilon, delta, eps_step, composition, eps_step / (2.0 * sensitivity),
                    event)


def _calibrated_step(epsilon, delta, max_iter, mechanism, gamma, delta_steps, *,
                     composition, screen_sigma=None):
    """Largest pure per-step eps0 (incl. 2 gamma) whose ``max_iter`` steps of
    ``mechanism``, the screening's Gaussian release (if ``screen_sigma``) and the
    floating-point delta are (epsilon, delta)-DP by the accountant's ``composition``,
    searched on the event the fit releases; 0 when no eps0 fits."""
    head = () if screen_sigma is None else (GaussianEvent(screen_sigma),)

    def event(eps0):
        return ComposedEvent(head + (
            SelfComposedEvent(_step_event(mechanism, eps0, gamma), max_iter),
            ApproxDPEvent(0.0, delta_steps)))

    try:
        return calibrate_parameter(event, target_epsilon=epsilon, delta=delta,
                                   low=1e-12 * epsilon, high=epsilon, composition=composition,
                                   rtol=1e-13 if composition == "advanced" else 1e-10)
    except ValueError:
        return 0.0


def _advanced_step(epsilon, delta, max_iter, mechanism, gamma, delta_steps):
    """eps0 by advanced composition (Dwork, Rothblum and Vadhan 2010, Theorem III.3;
    slack ``delta - delta_steps``)."""
    return _calibrated_step(epsilon, delta, max_iter, mechanism, gamma, delta_steps,
                            composition="advanced")


def _zcdp_step(epsilon, delta, max_iter, gamma, delta_steps, screen_sigma=None):
    """eps0 of T bounded-range exponential-mechanism steps (range eps0 + 2 gamma)
    composed in Renyi DP (Cesar and Rogers 2021)."""
    return _calibrated_step(epsilon, delta, max_iter, "exponential", gamma, delta_steps,
                            composition="rdp", screen_sigma=screen_sigma)


def private_defaults(*, n_samples, epsilon, delta, n_drawn, n_classes=1, lipschitz=1.0,
                     neighbouring="add_remove", zcdp=True, selection_share=0.0,
                     l1_bound=None):
    r"""``l1_bound="auto"`` and ``max_iter="auto"`` of a private fit, from public quantities.

    Both minimise the excess-risk bound of private Frank-Wolfe, the Frank-Wolfe
    rate with an inexact linear minimisation (Jaggi 2013, Theorem 1 with an
    additive error) plus the exponential mechanism's utility (Talwar, Thakurta
    and Zhang 2015, Theorem 3.1; McSherry and Talwar 2007, Theorem 6):

    .. math:: B(T, \lambda) = \frac{2 C_f}{T} + \frac{2 K \lambda f L \ln(2k)}
              {N \varepsilon'(T)},

    in mean-loss units, with curvature :math:`C_f \le c\lambda^2` (``c = 1`` for
    the binary logistic loss: Hessian :math:`\le 1/4`, :math:`|(s - w)^\top x|
    \le 2\lambda`; ``c = 4`` for the softmax cross-entropy, whose Hessian form is a
    variance of values in :math:`[-2\lambda, 2\lambda]`), ``K`` selections per step
    (1 binary), sensitivity :math:`fL` (``f = 2`` replace-one) and :math:`2k`
    signed vertices (``k`` = ``n_drawn``, the screened candidates or D).  The
    per-step budget of T steps is :math:`\varepsilon'(T) = a/\sqrt T`: zCDP,
    :math:`a = \sqrt{8\rho}` with :math:`\rho` the steps' share of
    :math:`(\sqrt{\ln(1/\delta) + \varepsilon} - \sqrt{\ln(1/\delta)})^2`
    (Bun and Steinke 2016, Proposition 1.3); advanced composition,
    :math:`a = \varepsilon/\sqrt{2\ln(1/\delta)}` (Dwork, Rothblum and Vadhan
    2010, leading term).  With :math:`M = Na/(KfL\ln 2k)`,
    :math:`B = 2c\lambda^2/T + 2\lambda\sqrt T/M` is smallest at

    .. math:: T^* = (2c\lambda M)^{2/3}, \qquad B(T^*) = 6c\lambda^2/T^*
              = 6c^{1/3}\lambda^{4/3}/(2M)^{2/3},

    the :math:`(N\varepsilon)^{2/3}` rate of Talwar, Thakurta and Zhang, now
    with its constants.  ``l1_bound`` is the largest radius whose bound does not
    exceed the loss of the zero model, :math:`h_0 = \ln(\max(2, K))`, so the
    guarantee is not vacuous: :math:`\lambda^* = (h_0/(6c^{1/3}))^{3/4}\sqrt{2M}`.
    Pure DP (``delta = 0``): :math:`\varepsilon' = \varepsilon/T`,
    :math:`m = N\varepsilon/(KfL\ln 2k)`, :math:`T^* = \sqrt{c\lambda m}`,
    :math:`\lambda^* = (h_0\sqrt m/(4\sqrt c))^{2/3}`.

    Parameters
    ----------
    n_samples : int
        Public N.
    epsilon : float
        > 0.
    delta : float
        In [0, 1).
    n_drawn : int
        Features each selection ranges over (after screening).
    n_classes : int, default=1
        K selections per step (1 for two classes).
    lipschitz : float, default=1.0
    neighbouring : {"add_remove", "replace_one"}
    zcdp : bool, default=True
        Whether the steps compose by zCDP (else advanced composition).
    selection_share : float, default=0.0
        Share of the zCDP budget the screening takes.
    l1_bound : float or None, default=None
        A given radius (then only ``max_iter`` is chosen for it).

    Returns
    -------
    (l1_bound, max_iter) : (float, int)
        ``max_iter`` is ``STEP_FRACTION`` times :math:`T^*`, clipped to
        [10, 10^5].
    """
    factor = sensitivity_factor(neighbouring)
    K = max(1, int(n_classes))
    c = 1.0 if K == 1 else 4.0
    h0 = math.log(max(2, K))
    scale = K * factor * lipschitz * math.log(2.0 * n_drawn)
    if delta > 0:
        if zcdp:
            lg = math.log(1.0 / delta)
            rho = (math.sqrt(lg + epsilon) - math.sqrt(lg)) ** 2 * (1.0 - selection_share)
            a = math.sqrt(8.0 * rho)
        else:
            a = epsilon / math.sqrt(2.0 * math.log(1.0 / delta))
        M = n_samples * a / scale
        lam = l1_bound or (h0 / (6.0 * c ** (1 / 3))) ** 0.75 * math.sqrt(2.0 * M)
        T = (2.0 * c * lam * M) ** (2 / 3)
    else:
        m = n_samples * epsilon / scale
        lam = l1_bound or (h0 * math.sqrt(m) / (4.0 * math.sqrt(c))) ** (2 / 3)
        T = math.sqrt(c * lam * m)
    T = min(float(MAX_AUTO_ITER), T * STEP_FRACTION)  # before ceil: T may be inf
    return float(lam), int(max(MIN_AUTO_ITER, math.ceil(T)))


def resolve_auto(p, *, screening, n_features, n_classes, advanced, neighbouring, n_samples,
                 keep_all=False):
    r"""Resolve ``k``, ``l1_bound`` and ``max_iter`` ``"auto"`` of a
    :class:`FWParams` ``p`` (``None`` in ``p`` means "auto") for ``n_features`` columns.

    ``k="auto"``: private fits with zCDP accounting (``advanced`` False)
    and more than ``MIN_AUTO_CANDIDATES`` features screen to that many candidates,
    or to ``max_iter`` when it is larger (T steps can reach T distinct features).
    Private ``l1_bound`` and ``max_iter`` ``"auto"``: the minimisers of the
    excess-risk bound of :func:`private_defaults` (public N, epsilon, delta, the
    number of candidate features and K); non-private: 50 and 1000.
    ``n_samples`` is a callable giving the public N (called only when needed, as it
    may warn).  An int ``k`` of at least ``n_features`` screens nothing
    (None), unless ``keep_all`` (a fit whose naive-Bayes start is built from the
    screening's release): then every column is a candidate (``k`` is
    ``n_features``) and the release buys only the start.  Returns the resolved
    :class:`FWParams`.

    Raises
    ------
    ScreeningUnavailableError
        An int ``k`` without a private zCDP exponential-mechanism fit.
    """
    from ._multinomial import LIPSCHITZ

    k = screening
    zcdp = p.private and p.spec.mechanism == "exponential" and p.delta > 0 and not advanced
    auto_screening = isinstance(k, str) and k == "auto"
    if auto_screening:
        k = MIN_AUTO_CANDIDATES if zcdp and n_features > MIN_AUTO_CANDIDATES else None
    elif k is not None:
        k = check_positive_int(k, "k")
        if not zcdp:
            raise ScreeningUnavailableError(
                "an int k (the private candidate screening) needs a private fit "
                "with an exponential-mechanism mechanism, delta > 0 and zCDP "
                "accounting (composition='auto' or 'zcdp')")
        k = k if k < n_features else (n_features if keep_all else None)
    p = dataclasses.replace(p, screening=k)
    if not p.private:
        return dataclasses.replace(p, l1_bound=p.l1_bound or NONPRIVATE_L1_BOUND,
                                   max_iter=p.max_iter or NONPRIVATE_MAX_ITER)
    if p.l1_bound is None or p.max_iter is None:
        N = n_samples()

        def defaults(k):
            return private_defaults(
                n_samples=N, epsilon=p.epsilon, delta=p.delta or 0.0,
                n_drawn=k or n_features, n_classes=n_classes if n_classes > 2 else 1,
                lipschitz=1.0 if n_classes <= 2 else LIPSCHITZ,
                neighbouring=neighbouring, zcdp=zcdp,
                selection_share=p.selection_share if k else 0.0,
                l1_bound=p.l1_bound)

        l1_bound, max_iter = defaults(k)
        T = p.max_iter or max_iter
        if auto_screening and k and T > k:
            k = T if T < n_features else None
            l1_bound, max_iter = defaults(k)
        return dataclasses.replace(p, screening=k, l1_bound=l1_bound,
                                   max_iter=p.max_iter or max_iter)
    if auto_screening and k and p.max_iter > k:
        p = dataclasses.replace(p, screening=p.max_iter if p.max_iter < n_features else None)
    return p
