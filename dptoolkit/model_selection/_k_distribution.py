r"""The law of the number of runs K of a private search, and the search's event.

K is drawn independently of the data from a truncated negative binomial law of
shape :math:`\eta` and mean ``n_runs`` (:math:`\eta = 1`: geometric,
:math:`\eta = 0`: logarithmic); the best of K runs of a mechanism Q is then Renyi
DP with the bound of Papernot and Steinke (2022), Theorem 2, and with a geometric
K and pure-DP runs the search is pure DP (Liu and Talwar 2019, Theorem 3.4).
"""
from ..accounting import tnb_success_probability
from ..accounting.events import RepeatAndSelectEvent

_DISTRIBUTIONS = ("negative_binomial", "geometric", "logarithmic")


def _draw_k(shape, mean, rng):
    """K >= 1 from the truncated negative binomial of ``shape`` and mean ``mean``."""
    gamma = tnb_success_probability(shape, mean)
    if shape == 0.0:  # logarithmic: P(K=k) proportional to (1-gamma)^k / k
        return int(rng.logseries(1.0 - gamma))
    while True:
        k = int(rng.negative_binomial(shape, gamma))
        if k >= 1:
            return k


def _search_event(p, run_event):
    """The event of the best of K runs of ``run_event`` (``p``: the search's
    validated parameters, with the mean and shape of K)."""
    return RepeatAndSelectEvent(run_event, p.mean, p.shape)
