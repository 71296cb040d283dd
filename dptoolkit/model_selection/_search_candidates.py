"""The hyperparameters a private search accounts for.

A run draws its hyperparameters independently of the data, so its Renyi DP is
at most the maximum over the candidates (Papernot and Steinke 2022, the
mechanism Q of their Theorem 2): every point of the lists' product is a
candidate, and each distribution is probed at public points, where it must not
change the run's event.
"""
import numpy as np
from scipy import stats
from sklearn.model_selection import ParameterGrid

# where a distribution of param_distributions is probed: quantiles, plus the finite
# ends of its support (draws with fixed seeds for a distribution without ppf)
_PROBE_QUANTILES = (0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999)
_N_PROBE_DRAWS = 16
# largest number of (candidate, probe) events planned per budget: each is a plan of
# the estimator's fit (milliseconds)
_MAX_PLANS = 2000


def _probe_values(name, dist):
    """Public points of a distribution at which the runs' events are compared."""
    if hasattr(dist, "ppf"):
        values = list(np.asarray(dist.ppf(_PROBE_QUANTILES), dtype=np.float64))
        if hasattr(dist, "support"):
            values += [v for v in np.asarray(dist.support(), dtype=np.float64)
                       if np.isfinite(v)]
        if isinstance(getattr(dist, "dist", None), stats.rv_discrete):
            values = [int(v) for v in values if np.isfinite(v)]
        else:
            values = [float(v) for v in values if np.isfinite(v)]
    else:
        values = [dist.rvs(random_state=np.random.RandomState(seed))
                  for seed in range(_N_PROBE_DRAWS)]
        values = [v.item() if isinstance(v, np.generic) else v for v in values]
    out = []
    for v in values:
        if not any(v == u for u in out):
            out.append(v)
    if not out:
        raise ValueError(f"param_distributions[{name!r}]: the distribution gives no finite "
                         "value to check the runs' privacy event at")
    return out


def _candidates(dists):
    """The runs' possible hyperparameters, as the search accounts for them.

    Returns ``(grid, probes)``: ``grid`` lists every point of the lists'
    product (each dict of ``dists`` in turn), with each distribution at its
    first probe value; ``probes`` lists ``(name, point, other)`` pairs that
    differ only in the distribution ``name``, whose events must be equal.
    """
    grid, probes, n_plans = [], [], 0
    for d in dists:
        points = {k: _probe_values(k, v) for k, v in d.items() if hasattr(v, "rvs")}
        lists = ParameterGrid(
            {k: (points[k][:1] if k in points else list(v)) for k, v in d.items()})
        n_plans += len(lists) * (1 + 2 * sum(len(v) - 1 for v in points.values()))
        if n_plans > _MAX_PLANS:
            raise ValueError(
                "param_distributions has too many points for the search's budget, which "
                "is calibrated on every point of the lists' product (and checks each "
                f"distribution at {len(_PROBE_QUANTILES)} quantiles): at most "
                f"{_MAX_PLANS} points and probes, got more; shorten the lists")
        base = [dict(point) for point in lists]
        grid.extend(base)
        for name, values in points.items():
            probes.extend((name, point, {**point, name: value})
                          for point in base for value in values[1:])
    return grid, probes
