"""The runs of a private search: each a clone of the estimator trained on its own
child stream and scored with noise, all of them silent (Papernot and Steinke 2022,
Algorithm 1: only the best run is released, never K nor the others' outputs)."""
import contextlib
import io
import math
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterSampler

from .._private import (DATA_DEPENDENT_NOTE, data_dependent_message, fit_with_stream,
                        nothing_released, plan_spend)
from ._search_score import _noisy_count


def _verbose_params(estimator):
    """The ``verbose`` parameters of ``estimator`` and of the estimators it holds."""
    return {k: v for k, v in estimator.get_params(deep=True).items()
            if k.rsplit("__", 1)[-1] == "verbose"}


@contextlib.contextmanager
def _silent_run():
    """A run's fit and scoring: its warnings recorded (returned), its prints dropped.

    The runs' verbosity is also forced off (``verbose=0``): a bar drawn outside
    ``sys.stderr`` (a notebook widget) is not caught here."""
    sink = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        warnings.simplefilter("always")
        yield caught


class _RunStream:
    """A run's child stream, and whether anything was drawn from it since (its noise
    ran: the bit generator moved, or it spawned streams for nested fits)."""

    def __init__(self, stream):
        self._bits = stream.bit_generator
        self._state = self._bits.state
        self._children = self._bits.seed_seq.n_children_spawned

    def touched(self):
        return (self._bits.state != self._state
                or self._bits.seed_seq.n_children_spawned != self._children)


def _reemit_released_warnings(caught):
    """Each distinct warning of the released run, once, marked as outside the guarantee:
    which run is released depends on the private data."""
    seen = set()
    for w in caught:
        text = str(w.message)
        if DATA_DEPENDENT_NOTE not in text:
            text = data_dependent_message(
                f"{text.rstrip()} (a warning of the run the search released)")
        if (w.category, text) in seen:
            continue
        seen.add((w.category, text))
        try:
            message = w.category(text)
        except Exception:  # a warning class with another constructor
            message = UserWarning(text)
        warnings.warn_explicit(message, type(message), w.filename, w.lineno)



def _run_all(p, k, rng, template, eps_run, train_events, streams, X_train, y_train,
             X_val, y_val, n_val):
    """The ``k`` runs, silent; ``(score, estimator, params, warnings)`` of the best
    (its estimator None when every run failed).  ``streams`` receives a
    :class:`_RunStream` per run whose noise could run."""
    best = (-math.inf, None, None, [])
    silent = {name: 0 for name in _verbose_params(template)}
    drawn = {name for d in p.dists for name, v in d.items() if hasattr(v, "rvs")}
    for _ in range(k):
        # each run draws its hyperparameters independently (with replacement:
        # the runs of Papernot and Steinke's Algorithm 1 are i.i.d.)
        params = next(iter(ParameterSampler(
            p.dists, n_iter=1, random_state=int(rng.integers(2 ** 31 - 1)))))
        est = clone(template).set_params(**{
            **params, **silent, "epsilon": eps_run, "accountant": None,
            **({"delta": p.delta} if p.delta > 0 else {})})
        if drawn & set(params):
            # a value from a distribution, whose events the budget covers at
            # probes only: the run's event checked before its noise (a plan, no
            # fit; the lists' points were all planned by the calibration)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    planned = plan_spend(est, n_samples=X_train.shape[0],
                                         n_features=X_train.shape[1], y=y_train)[0]
            except Exception:
                continue        # the fit would refuse too: a run with no output
            _check_run_event(p, planned, params, train_events)
        # the run's noise: a child stream for this fit only, never a seed stored
        # on the run (the released best_estimator_ keeps the estimator's own
        # random_state, normally None)
        stream = rng.spawn(1)[0]
        streams.append(_RunStream(stream))
        with _silent_run() as caught:
            try:
                fit_with_stream(est, stream, X_train, y_train)
                correct = float(np.sum(est.predict(X_val) == y_val))
            except Exception:
                # a run with no output, never the best; its error and its
                # warnings are dropped (they would tell that a run, which one
                # and how many, was made)
                continue
        _check_run_event(p, est.privacy_event_, params, train_events)
        score = _noisy_count(correct, p, eps_run, rng) / n_val
        if score > best[0]:
            best = (score, est, params, caught)
    return best
def _check_run_event(p, event, params, train_events):
    """A run's event must be one the budget covers (before any release).  The
    errors name the distributions (public parameters), not the values drawn."""
    if event in train_events:
        return
    drawn = sorted({k for d in p.dists for k, v in d.items()
                    if hasattr(v, "rvs") and k in params})
    # both depend only on the drawn hyperparameters, not on the data: the runs'
    # models are discarded and the search is not charged (nothing_released)
    if drawn:
        raise nothing_released(ValueError(
            f"a run drew values of {drawn} whose privacy event is not one the "
            "search's budget covers: these distributions change the event at points "
            "other than those checked; give them as lists of values (nothing was "
            "released)"))
    raise nothing_released(RuntimeError("a run made a privacy event that its planned "
                                        "event does not match (nothing was released)"))
