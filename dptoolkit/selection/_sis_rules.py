r"""The privacy and the size rules of DP-SIS's selectors
(:class:`~dptoolkit.selection.DPSIS`): the event of one private top-k release, the
Gaussian release's noise multiplier, and ``k="auto"`` for the pure-DP and the
Gaussian selectors, from public quantities only."""
import math

import numpy as np

from .._docstrings import fill_doc
from ..accounting import calibrate_parameter
from ..accounting.events import (
    ExponentialMechanismEvent,
    GaussianEvent,
    PureDPEvent,
    SelfComposedEvent,
)

#: Bounds of the Gaussian mechanism's ``k="auto"``: at least as many features as a
#: useful text vocabulary, at most what a downstream model holds in memory (as the
#: vocabulary of DPNBLogisticClassifier).
GAUSSIAN_MIN_K = 100
GAUSSIAN_MAX_K = 50_000


def _top_k_privacy(mechanism, epsilon, k):
    r"""``(privacy_event_, privacy_spent_)`` of one private top-k release.

    The event names the mechanism that ran, for scores of l-infinity
    sensitivity :math:`\Delta` under the estimator's neighbouring relation
    (the sensitivity is folded into the mechanism, see
    :mod:`dptoolkit.accounting.events`):

    * ``"canonical_lipschitz"``: report-noisy-max with exponential noise over
      the k-subsets (Shekelyan and Loukides 2022; Swope et al. 2024,
      Appendix A, Algorithm 2), :math:`\varepsilon`-DP.  Exponential noise
      makes it permute-and-flip (Ding et al. 2021), which is not known to be
      bounded range, so it is a
      :class:`~dptoolkit.accounting.events.PureDPEvent` (zCDP
      :math:`\varepsilon^2/2`, Bun and Steinke 2016, Proposition 1.4), not the
      :math:`\varepsilon^2/8` of the exponential mechanism.
    * ``"peeling"``: k adaptive rounds of the exponential mechanism with
      :math:`\varepsilon/k` each (McSherry and Talwar 2007; sampled by the
      Gumbel-max identity, Durfee and Rogers 2019, Lemma 4.2): k
      :class:`~dptoolkit.accounting.events.ExponentialMechanismEvent`, each
      :math:`\varepsilon/k`-bounded-range (Cesar and Rogers 2021, Lemma 3.2).

    Either way the spend is :math:`(\varepsilon, 0)` by basic composition
    (Dwork and Roth 2014, Theorem 3.16); an accountant composing events may do
    better for peeling.  Floating-point sampling is not accounted (as for the
    mechanisms of :mod:`dptoolkit.mechanisms`; Mironov 2012).
    """
    if mechanism == "canonical_lipschitz":
        event = PureDPEvent(epsilon)
    else:
        event = SelfComposedEvent(ExponentialMechanismEvent(epsilon / k), k)
    return event, (float(epsilon), 0.0)


# Public prior of the auto k: the score |x_(i)^T y| / N of the features worth
# selecting (after the public mapping to [-1, 1]); e.g. a word in 10% more of the
# documents of one class than of the other.
INFORMATIVE_SCORE = 0.1


def _log_binom(n, k):
    """log C(n, k) for integer arrays or scalars (gammaln, exact to ~1e-12 relative)."""
    from scipy.special import gammaln
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


@fill_doc
def auto_k(n_features, n_samples, epsilon, *, sensitivity=1.0, gamma=0.5,
           mechanism="canonical_lipschitz", informative_score=INFORMATIVE_SCORE):
    r"""The number of features a private top-k selection can still find: DPSIS's ``k="auto"``.

    A function of public quantities only: the number of features :math:`D`,
    the public dataset size :math:`N`, the budget :math:`\varepsilon`, the
    sensitivity :math:`\Delta` and the mechanism.  Suppose the ``k`` best
    features all score at least :math:`s = \rho N` (``informative_score``
    :math:`\rho`, the score ``|x_(i)^T y| / N`` of a useful feature) and the
    rest score about 0 (on sparse data most do).

    * ``"canonical_lipschitz"`` (Swope et al. 2024, Appendix A; Shekelyan and
      Loukides 2022): the true top-k set has loss about :math:`(1 - 2\gamma) s`,
      while the class of sets keeping no true feature (head 0, tail among the
      zero scores) has loss :math:`(1 - \gamma) s` and size close to
      :math:`\binom{D}{k}`.  With exponential noise on the utilities
      :math:`-\tfrac{\varepsilon}{2}\mathrm{LOSS}/\Delta`, the true top-k wins
      only if :math:`\gamma\varepsilon s / (2\Delta) \ge \log\binom{D}{k}`
      (the bound of Swope et al. 2024, Theorem 4.1, with the gap
      :math:`\xi = s/\Delta`).  The head is close to all-or-nothing (keeping
      one more true item saves a score *gap*, while it costs
      :math:`\log(D/k)` of class size), so past this ``k`` the selection holds
      almost no true feature (measured: :ref:`study_defaults_evidence`).
    * ``"peeling"``: each of the k rounds is the exponential mechanism with
      :math:`\varepsilon/k` and weight :math:`e^{\varepsilon s/(2k\Delta)}`
      against :math:`D` near-zero competitors: informative while
      :math:`\varepsilon s / (2 k \Delta) \ge \log D`.

    Returns the largest such ``k`` in ``[1, D - 1]`` (1 when even one feature
    cannot be found: the selection is then close to uniform, see the Notes of
    :class:`DPSIS`).

    %(params_public_shape)s
    epsilon : float
        Budget of the selection, > 0.
    sensitivity : float, default=1.0
        :math:`\Delta` of every score (2 for replace-one).
    gamma : float, default=0.5
        Loss weight of the canonical Lipschitz mechanism.
    mechanism : {"canonical_lipschitz", "peeling"}
    informative_score : float, default=0.1
        :math:`\rho > 0`.

    Returns
    -------
    int
    """
    n_features = int(n_features)
    level = float(epsilon) * float(informative_score) * float(n_samples) / (2.0 * sensitivity)
    if mechanism == "peeling":
        k = int(math.floor(level / math.log(n_features)))
    else:
        # log C(D, k) increases up to D / 2 (and is symmetric after): the last k of
        # the leading run that passes, or D - 1 when every k passes
        ks = np.arange(1, n_features, dtype=np.float64)
        fails = np.flatnonzero(_log_binom(float(n_features), ks) > gamma * level)
        k = int(fails[0]) if fails.size else n_features - 1
    return min(max(k, 1), n_features - 1)


@fill_doc
def gaussian_auto_k(n_features, n_samples, noise_multiplier, *, sensitivity_factor=1.0):
    r"""DPSIS's ``k="auto"`` for ``mechanism="gaussian"``: the features that could beat the noise.

    The Gaussian mechanism releases the score vector :math:`s = \sum_n y_n
    \hat x_n` (rows :math:`\hat x_n` of L2 norm ``data_norm`` :math:`B`, targets
    in [-1, 1]) with noise of standard deviation :math:`\sigma \Delta`,
    :math:`\Delta = c B` (``sensitivity_factor`` :math:`c`: 1 for add/remove, 2
    for replace-one).  Among :math:`D` features of score 0 the largest noisy
    magnitude is about :math:`t = \sigma\Delta\sqrt{2\ln(2D)}` (the expected
    maximum of the :math:`2D` variables :math:`\pm g_i` is at most this;
    Boucheron, Lugosi and Massart 2013, Theorem 2.5), so a feature is told
    apart from the noise only when its score exceeds :math:`t`.  By the triangle inequality
    :math:`\|s\|_2 \le N B`, so at most

    .. math:: k = \frac{\|s\|_2^2}{t^2} \le
              \left(\frac{N}{c\,\sigma\sqrt{2\ln(2D)}}\right)^2

    features can score above :math:`t`, whatever the data: past this ``k`` every
    further slot goes to a feature below the noise.  (``B`` cancels; the bound is
    the one of :func:`~dptoolkit.linear_model.DPNBLogisticClassifier`'s vocabulary,
    a ratio of the signal's norm :math:`N` to the noise's, squared.)  This is a
    worst case (all of :math:`\|s\|` on few features); on text the scores spread
    over many features, and the count is also capped by what non-private sure
    independence screening keeps, :math:`\lfloor N / \ln N \rfloor` (the
    :math:`d = [n / \log n]` of Fan and Lv 2008; DPSIS's non-private
    ``k="auto"``): a private selection should not keep more than the
    non-private one would (the cap's effect: :ref:`study_feature_selection`).
    The result is kept in
    ``[GAUSSIAN_MIN_K, GAUSSIAN_MAX_K]`` = [100, 50,000] (a useful text
    vocabulary; the memory of the downstream model) and below :math:`D`.  Public quantities only:
    :math:`N` (public), :math:`D`,
    and :math:`\sigma`, a function of epsilon and delta:

    .. math:: k = \min\Big(\max\big(\min(k_{\text{noise}},
              \lfloor N/\ln N \rfloor), 100\big), 50000, D - 1\Big).

    %(params_public_shape)s
    noise_multiplier : float
        :math:`\sigma > 0` of the release (noise standard deviation over the L2
        sensitivity).
    sensitivity_factor : float, default=1.0
        :math:`c`: 1 (add/remove) or 2 (replace-one).

    Returns
    -------
    int
        In ``[min(100, D - 1), min(50000, D - 1)]``.

    References
    ----------
    J. Fan and J. Lv. Sure independence screening for ultrahigh dimensional
    feature space. JRSS-B 70(5), 2008.
    S. Boucheron, G. Lugosi, P. Massart. Concentration Inequalities. Oxford
    University Press, 2013, Theorem 2.5.
    """
    n_features = int(n_features)
    threshold = sensitivity_factor * noise_multiplier * math.sqrt(2.0 * math.log(2.0 * n_features))
    k_noise = math.floor((n_samples / threshold) ** 2)
    k_sis = math.floor(n_samples / math.log(max(n_samples, 2)))
    k = max(min(k_noise, k_sis), GAUSSIAN_MIN_K)
    return int(min(k, GAUSSIAN_MAX_K, n_features - 1))


def _gaussian_noise_multiplier(epsilon, delta):
    r"""The smallest :math:`\sigma` whose :class:`GaussianEvent` is (epsilon, delta)-DP.

    As :class:`~dptoolkit.linear_model.DPNBLogisticClassifier` calibrates its release:
    :func:`~dptoolkit.accounting.calibrate_parameter` (the toolkit's one calibration
    routine) on the event itself, converted by the accountant (the Renyi DP of the
    Gaussian mechanism, Mironov 2017, Proposition 7, with the conversion of Canonne,
    Kamath and Steinke 2020).
    """
    return float(calibrate_parameter(lambda s: GaussianEvent(s), target_epsilon=epsilon,
                                     delta=delta, low=1e-3, high=1e6, increasing=False,
                                     rtol=1e-9))
