"""The calibration of a private search's runs: the largest epsilon per run for which
the search's event is within the budget.

With ``delta > 0`` each run's epsilon is found by bisection on the Renyi DP bound
of Papernot and Steinke (2022), Theorem 2, converted to (epsilon, delta); with
``delta = 0`` each run is epsilon/3-DP (Liu and Talwar 2019, Theorem 3.4).  The
runs' training events are planned (no fit) from the public shape of the training
part and the label set, so the calibration is a function of public quantities.
"""
import warnings

from sklearn.base import clone

from .._private import plan_spend
from ..accounting import basic_guarantee, calibrate_parameter, epsilon_of_event
from ..accounting.events import ComposedEvent, MaxOfEvents
from ._k_distribution import _search_event
from ._search_score import _score_event


def _train_events(p, template, shape, y_standin, points, eps_run, memo):
    """The training event of each of ``points`` (hyperparameters) at ``eps_run``,
    planned from the public shape of the training part and its label set (the
    runs' ``_privacy_plan``: no fit); ``memo`` keeps them."""
    out = []
    for params in points:
        key = (repr(sorted(params.items())), eps_run)
        if key not in memo:
            est = clone(template).set_params(
                **params, epsilon=eps_run, accountant=None,
                **({"delta": p.delta} if p.delta > 0 else {}))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                memo[key] = plan_spend(est, n_samples=shape[0], n_features=shape[1],
                                       y=y_standin)[0]
        out.append(memo[key])
    return out


def _distinct(events):
    """``events`` without repeats, in their order."""
    return tuple(dict.fromkeys(events))


def _run_event(p, train_events, eps_run):
    """One run, Q: the training event (the maximum over the candidates') and the
    score."""
    train_events = _distinct(train_events)
    training = train_events[0] if len(train_events) == 1 else MaxOfEvents(train_events)
    return ComposedEvent((training, _score_event(p, eps_run)))


def _calibrate(p, template, shape, y_standin):
    """Each run's epsilon and the candidates' distinct training events at it."""
    grid, probes = p.grid, p.probes
    memo = {}

    def events(points, e):
        return _train_events(p, template, shape, y_standin, points, e, memo)

    # the smallest run epsilon the estimator accepts (exclusive), at every
    # candidate: e.g. the Sparsifier's count share epsilon_count
    floor = max(_min_run_epsilon(template, point)
                for point in [*grid, *(other for _, _, other in probes)])
    if p.delta == 0.0:
        eps_run = 0.9 * p.epsilon / 3.0
        _check_floor(p, template, floor, eps_run)
        train = events(grid, eps_run)
        eps_b, delta_b = basic_guarantee(_run_event(p, train, eps_run))
        if eps_b > p.epsilon / 3.0 * (1 + 1e-6) or delta_b > 1e-9:
            raise ValueError("a pure-DP search (delta=0) needs a pure-DP estimator: "
                             f"{type(template).__name__} with delta unset is not "
                             "epsilon-DP by basic composition (at some point of "
                             "param_distributions)")
    else:
        _check_floor(p, template, floor, p.epsilon)

        def calibrate(points):
            def search(e):
                return _search_event(p, _run_event(p, events(points, e), e))

            low = _bracket_low(p, search, floor)
            if epsilon_of_event(search(low), p.delta) > p.epsilon:
                _check_floor(p, template, floor, 0.0)    # raises, naming the floor
                raise ValueError(
                    f"epsilon={p.epsilon!r} is too small for a search over "
                    f"{type(template).__name__}: each run would get less "
                    f"than epsilon={low!r}, below which the estimator cannot plan "
                    "its fit; raise epsilon or lower n_runs")
            return calibrate_parameter(
                search, target_epsilon=p.epsilon, delta=p.delta, low=low,
                high=p.epsilon, rtol=1e-3)

        # one point per distinct event at the top of the bracket; every point's event
        # at the result is then checked to be among theirs (else all points are used)
        first = {}
        for point, event in zip(grid, events(grid, p.epsilon)):
            first.setdefault(event, point)
        eps_run = calibrate(list(first.values()))
        train = events(grid, eps_run)
        if set(train) != set(events(list(first.values()), eps_run)):
            eps_run = calibrate(grid)
            train = events(grid, eps_run)
    _check_probes(p, probes, events, eps_run)
    return eps_run, _distinct(train)


def _bracket_low(p, search, floor):
    """The low end of the run epsilon's bracket: ``floor`` plus 1e-4 of the budget
    (1% of the budget above a positive floor: the part the estimator spends
    beyond it, e.g. the Sparsifier's private fit), raised tenfold above the
    floor until the estimator plans its fit there (an estimator refuses a
    budget too small for it, e.g. DP-IGHT past its largest noise multiplier)."""
    gap = (0.01 if floor > 0.0 else 1e-4) * (p.epsilon - floor)
    while True:
        try:
            search(floor + gap)
            return floor + gap
        except (ValueError, RuntimeError):
            # ValueError: the estimator refuses so small a budget; RuntimeError:
            # its spend's check, at a budget it was not made for.  At the top
            # of the bracket the estimator's error is raised as it is.
            if floor + 10.0 * gap >= p.epsilon:
                raise
            gap *= 10.0


def _min_run_epsilon(template, point):
    """The run epsilon the estimator needs to exceed at ``point``: its
    ``_min_epsilon()`` when it has one (the Sparsifier's ``epsilon_count``),
    else 0."""
    est = clone(template).set_params(**point)
    return float(est._min_epsilon()) if hasattr(est, "_min_epsilon") else 0.0


def _check_floor(p, template, floor, eps_run):
    """A run epsilon of ``eps_run`` (the largest the budget allows) must exceed the
    estimator's floor."""
    if floor > 0.0 and eps_run <= floor:
        raise ValueError(
            f"epsilon={p.epsilon!r} leaves each run of the search too small a "
            f"budget for {type(template).__name__}, whose epsilon must exceed "
            f"{floor!r} (its epsilon_count at some point of param_distributions): "
            "raise epsilon, or lower the estimator's epsilon_count or n_runs")


def _check_probes(p, probes, events, eps_run):
    """A distribution of param_distributions must not change the training event."""
    if not probes:
        return
    ours = events([point for _, point, _ in probes], eps_run)
    others = events([other for _, _, other in probes], eps_run)
    for (name, point, other), a, b in zip(probes, ours, others):
        if a != b:
            raise ValueError(
                f"param_distributions[{name!r}] is a distribution, but {name} changes "
                f"the runs' privacy event ({name}={point[name]!r} and {name}="
                f"{other[name]!r} give different events): give {name} as a list of "
                "values, whose events the search's budget covers")
