r"""Noise scales of Talwar et al.'s private LASSO (Laplace report-noisy-max Frank-Wolfe).

Private LASSO (Talwar, Thakurta and Zhang 2015, Algorithm 2; Khanna, Lu and Raff (2023), Algorithm 1;
Raff, Khanna and Lu (2023), Section 3.3) chooses at every Frank-Wolfe step the vertex
:math:`s \in \{\pm\lambda e_j\}` of the L1 ball that minimises
:math:`\langle s, \nabla L(w_t)\rangle + \mathrm{Lap}(b)` (report noisy max on the
negated scores).  This module derives the Laplace scale ``b`` and the guarantee it
gives, in one place.

**Units.**  The estimators work with the *sum* loss and factor ``l1_bound`` out of the
scores: the score of vertex :math:`\sigma\lambda e_j` is
:math:`-\sigma\alpha_j` with :math:`\alpha = \sum_i q_i x_i` (``alpha`` of the
kernels).  A score in mean units is :math:`\lambda/n` times a kernel score, so a
mean-unit scale :math:`b` is :math:`b\,n/\lambda` in kernel units.  With
:math:`\|x_i\|_\infty \le 1` and the logistic loss
(:math:`|q_i| = |\sigma(x_i^\top w) - y_i| < 1`, Lipschitz constant
:math:`L = 1` with respect to the L1 norm, Khanna, Lu and Raff (2023) Corollary 1), adding or removing
one example changes every kernel score by at most :math:`\Delta = L` (``2 L`` for
replace-one).

**Report noisy max with Laplace noise is not** :math:`\Delta/b` **-DP for these
scores.**  Dwork and Roth's Claim 3.9 (Laplace of scale :math:`\Delta/\varepsilon'`
suffices) is for *monotone* queries, e.g. counts that all move in the same direction
between neighbours.  The vertex scores are not monotone: :math:`+e_j` and
:math:`-e_j` move in opposite directions.  For general scores of sensitivity
:math:`\Delta` the threshold that the winning score must beat moves by up to
:math:`\Delta` and the winner's own score by another :math:`\Delta`, so the
guarantee is :math:`\varepsilon' = 2\Delta/b`, and this is tight: for two
vertices :math:`\pm e_j` and :math:`\alpha_j \to \infty` the probability ratio of
choosing the ascent vertex tends to :math:`e^{2\Delta/b}`.  The correct scale for an
:math:`\varepsilon'`-DP step is therefore :math:`b = 2\Delta/\varepsilon'`
(:class:`dptoolkit.mechanisms.ReportNoisyMax` with ``noise="laplace"`` uses the same
rule).

**Talwar's scale as printed.**  Raff, Khanna and Lu (2023) and Khanna, Lu and Raff (2023) print
:math:`b = \lambda L\sqrt{8T\ln(1/\delta)}/(n\varepsilon)` (mean units), i.e.
:math:`b = L\sqrt{8T\ln(1/\delta)}/\varepsilon` in kernel units.  That is the
per-step budget :math:`\varepsilon'' = \varepsilon/\sqrt{8T\ln(1/\delta)}` of the
simplified advanced composition :math:`\varepsilon = \varepsilon''\sqrt{8T\ln(1/\delta)}`
with :math:`b = \Delta/\varepsilon''`.  By the argument above each step is really
:math:`2\varepsilon''`-DP, and the full Dwork-Rothblum-Vadhan bound for ``T`` such
steps gives :math:`(\varepsilon + 2T\varepsilon''(e^{2\varepsilon''}-1), \delta)`:
the two factors of two cancel in the leading term, and the printed scale
**overspends** by the second-order term (about 0.05 for
:math:`\varepsilon = 1, T = 1000, \delta = 10^{-4}`).  The scale is therefore kept
only as the named reproduction option ``mechanism="laplace_talwar"`` of
:class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`, which reports this true
guarantee in ``privacy_spent_``; ``mechanism="laplace"`` calibrates
:math:`b = 2\Delta/\varepsilon'` with :math:`\varepsilon'` the exact inverse of the
full composition bound (``per_step_epsilon``), so that it
spends exactly the budget asked for.

**Multinomial (Khanna, Lu and Raff (2023), Appendix A, Algorithm 3).**  With ``K`` classes, every
step chooses one vertex per class.  One example changes class ``k``'s scores by at
most :math:`r_k = |\hat y_{ik} - y_{ik}|` and :math:`\sum_k r_k \le 2` (Theorem 4's
Lipschitz constant 2), so the ``K`` selections of one step *together* are
:math:`2\cdot 2/b`-DP for Laplace noise of scale ``b`` (and
:math:`2\cdot 2c`-DP for the exponential mechanism with coefficient ``c``): the step
sensitivity is :math:`\Delta = 2` (4 for replace-one).  Algorithm 3 as printed uses
:math:`b = \lambda L\sqrt{8T\ln(K/\delta)}/(n\varepsilon/K)` with :math:`L = 2`,
i.e. it gives each class :math:`(\varepsilon/K, \delta/K)` *and* the Lipschitz
constant of all classes together; it is valid but about ``K`` times noisier than
needed.  ``talwar_noise_scale`` with ``n_classes=K`` returns it.

References
----------
K. Talwar, A. Thakurta, L. Zhang. Nearly Optimal Private LASSO. NeurIPS 2015.

A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression (Khanna, Lu and Raff, 2023),
Algorithm 1, Appendix A (Algorithm 3, Theorems 4-5).

C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014,
Claim 3.9 (report noisy max, monotone counting queries) and Theorem 3.20.

C. Dwork, G. Rothblum, S. Vadhan. Boosting and Differential Privacy. FOCS 2010.
"""
import math

import numpy as np

from .._validation import check_epsilon_delta, check_positive_int, check_scalar_range
from ._composition import advanced_composition, basic_composition

__all__ = [
    "laplace_report_noisy_max_scale",
    "laplace_report_noisy_max_epsilon",
    "talwar_noise_scale",
    "laplace_report_noisy_max_composition",
    "laplace_selector_parameters",
]


def _check_sensitivity(sensitivity):
    return check_scalar_range(sensitivity, "sensitivity", low=0.0, low_open=True)


def laplace_report_noisy_max_scale(*, epsilon, sensitivity, monotonic=False):
    r"""Laplace scale making report noisy max ``epsilon``-DP.

    Mechanism: report the argmax of :math:`u_s(D) + \mathrm{Lap}(b)` over the
    candidates ``s``, with independent noise.  Neighbouring relation: the one
    ``sensitivity`` is computed for (add/remove or replace-one).  For general
    scores the guarantee is :math:`2\Delta/b` (see the module notes: the
    threshold and the winner's score can each move by :math:`\Delta`);
    Claim 3.9 of [DR14] (:math:`\Delta/b`) needs monotone scores.  One call
    is one selection; ``k`` selections compose (basic or advanced composition,
    ``laplace_report_noisy_max_composition``).

    Parameters
    ----------
    epsilon : float
        Budget of one selection, > 0 and finite.
    sensitivity : float
        :math:`\Delta \ge \max_s |u_s(D) - u_s(D')|` over neighbours, > 0.
    monotonic : bool, default=False
        True only if all scores move in the same direction between any two
        neighbours (counting queries under add/remove).  Frank-Wolfe vertex scores
        are not monotone.

    Returns
    -------
    float
        :math:`2\Delta/\varepsilon` (:math:`\Delta/\varepsilon` if monotonic).

    Raises
    ------
    TypeError, ValueError
        Non-numeric, non-positive or infinite ``epsilon`` or ``sensitivity``.

    See Also
    --------
    dptoolkit.mechanisms.ReportNoisyMax : The mechanism, with the same rule.

    Notes
    -----
    The inverse is ``laplace_report_noisy_max_epsilon``.

    References
    ----------
    - [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
      Privacy." 2014, Claim 3.9.

    Examples
    --------
    >>> from dptoolkit.accounting import laplace_report_noisy_max_scale
    >>> laplace_report_noisy_max_scale(epsilon=0.5, sensitivity=1.0)
    4.0
    >>> laplace_report_noisy_max_scale(epsilon=0.5, sensitivity=1.0, monotonic=True)
    2.0
    """
    epsilon, _ = check_epsilon_delta(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    if not isinstance(monotonic, (bool, np.bool_)):
        raise TypeError(f"monotonic must be a bool, got {type(monotonic).__name__}")
    return (1.0 if monotonic else 2.0) * sensitivity / epsilon


def laplace_report_noisy_max_epsilon(*, noise_scale, sensitivity, monotonic=False):
    r"""The epsilon that report noisy max with Laplace noise of scale ``noise_scale`` gives.

    The inverse of ``laplace_report_noisy_max_scale``:
    :math:`2\Delta/b` (:math:`\Delta/b` if monotonic).

    Parameters
    ----------
    noise_scale : float
        Laplace scale :math:`b > 0`.
    sensitivity : float
        Score sensitivity :math:`\Delta > 0`, in the units of ``noise_scale``.
    monotonic : bool, default=False
        True only if all scores move in the same direction between any two
        neighbours (see ``laplace_report_noisy_max_scale``).

    Returns
    -------
    float
        The epsilon of one selection: :math:`2\Delta/b`
        (:math:`\Delta/b` if ``monotonic``).

    Raises
    ------
    TypeError, ValueError
        Non-numeric, non-positive or infinite ``noise_scale`` or ``sensitivity``.

    Notes
    -----
    The inverse is ``laplace_report_noisy_max_scale``.

    Examples
    --------
    >>> from dptoolkit.accounting import laplace_report_noisy_max_epsilon
    >>> laplace_report_noisy_max_epsilon(noise_scale=4.0, sensitivity=1.0)
    0.5
    """
    noise_scale = check_scalar_range(noise_scale, "noise_scale", low=0.0, low_open=True)
    sensitivity = _check_sensitivity(sensitivity)
    if not isinstance(monotonic, (bool, np.bool_)):
        raise TypeError(f"monotonic must be a bool, got {type(monotonic).__name__}")
    return (1.0 if monotonic else 2.0) * sensitivity / noise_scale


def talwar_noise_scale(*, epsilon, delta, max_iter, lipschitz=1.0, l1_bound=1.0,
                       n_samples=1, n_classes=1):
    r"""Return Talwar's Laplace scale exactly as printed in Raff, Khanna and Lu (2023) and Khanna, Lu and Raff (2023).

    .. math:: b = \frac{\lambda L \sqrt{8 T \ln(K/\delta)}}{n\,\varepsilon / K}

    with :math:`K = 1` for binary logistic regression (Khanna, Lu and Raff (2023), Algorithm 1) and the
    number of classes for Algorithm 3 (Appendix A).  With the defaults
    ``l1_bound=1, n_samples=1`` the result is in the kernels' sum-score units.

    **Not** a calibration for (``epsilon``, ``delta``): see the module notes; the
    guarantee this scale really gives is
    ``laplace_report_noisy_max_composition`` of it.

    Parameters
    ----------
    epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    max_iter : int
        ``T`` >= 1.
    lipschitz : float, default=1.0
        ``L`` (1 for the binary logistic loss, 2 for the multinomial one).
    l1_bound : float, default=1.0
        :math:`\lambda > 0`.
    n_samples : int, default=1
        ``n`` >= 1 (1: sum units).
    n_classes : int, default=1
        ``K`` >= 1.

    Returns
    -------
    float
        The Laplace scale ``b`` (mean-loss units scaled by ``l1_bound / n_samples``;
        kernel sum-score units with the defaults).

    Raises
    ------
    TypeError, ValueError
        Non-numeric or out-of-range input: ``epsilon`` <= 0 or infinite,
        ``delta`` outside (0, 1), ``max_iter``, ``n_samples`` or ``n_classes``
        < 1, ``lipschitz`` or ``l1_bound`` <= 0.

    Notes
    -----
    The guarantee this scale gives is ``laplace_report_noisy_max_composition``'s.

    References
    ----------
    K. Talwar, A. Thakurta, L. Zhang. "Nearly Optimal Private LASSO."
    NeurIPS 2015, Algorithm 2.  A. Khanna, F. Lu, E. Raff. "Sparse Private
    LASSO Logistic Regression" (Khanna, Lu and Raff, 2023), Algorithm 1 and Appendix A,
    Algorithm 3.

    Examples
    --------
    >>> from dptoolkit.accounting import (laplace_report_noisy_max_composition,
    ...                                   talwar_noise_scale)
    >>> b = talwar_noise_scale(epsilon=1.0, delta=1e-4, max_iter=1000)
    >>> eps, delta, eps_step, how = laplace_report_noisy_max_composition(
    ...     noise_scale=b, sensitivity=1.0, max_iter=1000, delta_slack=1e-4)
    >>> round(eps, 3), how  # more than the epsilon=1 asked for
    (1.054, 'advanced')
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    max_iter = check_positive_int(max_iter, "max_iter")
    lipschitz = check_scalar_range(lipschitz, "lipschitz", low=0.0, low_open=True)
    l1_bound = check_scalar_range(l1_bound, "l1_bound", low=0.0, low_open=True)
    n_samples = check_positive_int(n_samples, "n_samples")
    n_classes = check_positive_int(n_classes, "n_classes")
    return (l1_bound * lipschitz * math.sqrt(8.0 * max_iter * math.log(n_classes / delta))
            * n_classes / (n_samples * epsilon))


def laplace_report_noisy_max_composition(*, noise_scale, sensitivity, max_iter,
                                         delta_slack=None):
    r"""Guarantee of ``max_iter`` adaptive Laplace report-noisy-max steps.

    Each step is :math:`\varepsilon' = 2\Delta/b`-DP (non-monotone scores).  The
    ``max_iter`` steps compose to the better of basic composition
    :math:`(T\varepsilon', 0)` and the full Dwork-Rothblum-Vadhan bound
    :math:`(\varepsilon'\sqrt{2T\ln(1/\delta')} + T\varepsilon'(e^{\varepsilon'}-1),
    \delta')` (``advanced_composition``).

    Parameters
    ----------
    noise_scale : float
        Laplace scale ``b`` > 0.
    sensitivity : float
        Sensitivity :math:`\Delta` of every score of one step (for several
        selections per step with independent noise, the sum of their
        sensitivities), in the units of ``noise_scale``.
    max_iter : int
        Number of steps >= 1.
    delta_slack : float or None
        :math:`\delta'` in (0, 1) of advanced composition; ``None``: basic only.

    Returns
    -------
    epsilon_total : float
        The smaller of the two total epsilons.
    delta_total : float
        0 for basic composition, ``delta_slack`` for advanced.
    epsilon_step : float
        :math:`2\Delta/b`.
    composition : {"basic", "advanced"}
        Which of the two bounds was smaller.

    Raises
    ------
    TypeError, ValueError
        Non-numeric or out-of-range input (``noise_scale`` or ``sensitivity``
        <= 0, ``max_iter`` < 1, ``delta_slack`` outside (0, 1)).

    Notes
    -----
    The two bounds are ``basic_composition`` and ``advanced_composition``
    (``dptoolkit.accounting._composition``).

    References
    ----------
    C. Dwork, G. N. Rothblum, S. Vadhan. "Boosting and Differential
    Privacy." FOCS 2010, Theorem III.3.
    """
    eps_step = laplace_report_noisy_max_epsilon(noise_scale=noise_scale,
                                                sensitivity=sensitivity)
    max_iter = check_positive_int(max_iter, "max_iter")
    if delta_slack is not None:
        delta_slack = check_scalar_range(delta_slack, "delta_slack", low=0.0, high=1.0,
                                         low_open=True, high_open=True)
    best = basic_composition(epsilon=eps_step, k=max_iter) + ("basic",)
    # advanced composition can only beat basic when e^eps - 1 < 1 (and would overflow
    # for huge eps)
    if delta_slack is not None and eps_step < math.log(2.0):
        adv = advanced_composition(epsilon=eps_step, delta=0.0, k=max_iter,
                                   delta_slack=delta_slack)
        if adv[0] < best[0]:
            best = adv + ("advanced",)
    return best[0], best[1], eps_step, best[2]


def laplace_selector_parameters(selector, *, epsilon, delta, epsilon_step, composition,
                                max_iter, sensitivity, lipschitz=1.0, n_classes=1):
    r"""Kernel coefficient and guarantee of the Frank-Wolfe Laplace selectors.

    Used by :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` (binary and
    multinomial).  Scores are in kernel units (sum loss, ``l1_bound`` factored out).

    ``"laplace"``
        Correct calibration: the caller has split (``epsilon``, ``delta``) into the
        per-step ``epsilon_step`` (basic composition or the exact inverse of the full
        advanced-composition bound); the Laplace scale is
        :math:`b = 2\Delta/\varepsilon'` (``laplace_report_noisy_max_scale``).
        The guarantee is the requested (``epsilon``, ``delta``).
    ``"laplace_talwar"``
        Reproduction of the printed scale (``talwar_noise_scale`` with the given
        ``lipschitz`` and ``n_classes``); the guarantee returned is what it really
        gives (``laplace_report_noisy_max_composition`` with slack ``delta``),
        which is larger than ``epsilon``.

    Parameters
    ----------
    selector : {"laplace", "laplace_talwar"}
    epsilon, delta : float
        Requested total budget (``delta`` may be 0 for ``"laplace"``; must be > 0
        for ``"laplace_talwar"``).
    epsilon_step : float or None
        Per-step budget computed by the caller (used by ``"laplace"`` only).
    composition : str or None
        How ``epsilon_step`` was derived (returned unchanged by ``"laplace"``).
    max_iter : int
        Number of Frank-Wolfe steps ``T`` >= 1.
    sensitivity : float
        :math:`\Delta` of one step's scores in kernel units (``L``, or ``2L`` for
        replace-one; summed over the classes' selections of one step).
    lipschitz : float, default=1.0
        ``L`` used in the printed formula.
    n_classes : int, default=1
        ``K`` of the printed formula (1 for binary).

    Returns
    -------
    epsilon, delta, epsilon_step, composition, coef
        ``coef`` is the Laplace scale ``b`` the kernels take.

    Raises
    ------
    ValueError
        Unknown selector, or ``"laplace_talwar"`` without a positive ``delta``.
    """
    if selector == "laplace":
        coef = laplace_report_noisy_max_scale(epsilon=epsilon_step, sensitivity=sensitivity)
        return epsilon, delta, epsilon_step, composition, coef
    if selector != "laplace_talwar":
        raise ValueError(f"selector must be 'laplace' or 'laplace_talwar', got {selector!r}")
    if not delta or delta <= 0:
        raise ValueError("mechanism='laplace_talwar' (the printed scale "
                         "lambda L sqrt(8 T log(1/delta)) / (n epsilon)) needs delta in (0, 1)")
    coef = talwar_noise_scale(epsilon=epsilon, delta=delta, max_iter=max_iter,
                              lipschitz=lipschitz, n_classes=n_classes)
    eps_total, delta_total, eps_step, comp = laplace_report_noisy_max_composition(
        noise_scale=coef, sensitivity=sensitivity, max_iter=max_iter, delta_slack=delta)
    return eps_total, delta_total, eps_step, comp, coef
