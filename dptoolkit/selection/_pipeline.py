"""Private feature selection followed by a private model, under one budget."""
import numbers
from typing import NamedTuple
import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._docstrings import fill_doc
from .._private import (
    PrivateEstimatorMixin,
    _stream_for,
    nested_fits,
    check_accountant,
    data_dependent_error,
    fit_with_stream,
    plan_spend,
)
from .._validation import check_epsilon_delta
from ..accounting.events import ApproxDPEvent, ComposedEvent

__all__ = ["PrivateSelectThenFit"]


def _budget_of(est, name):
    eps = getattr(est, "epsilon", None)
    if eps is None:
        raise ValueError(f"{name} must be private: it has no epsilon (got epsilon=None); "
                         "the pipeline composes two private steps")
    delta = getattr(est, "delta", None)
    delta = 0.0 if delta is None else delta
    return check_epsilon_delta(eps, delta)


def _n_selected(selector, n_samples, n_features):
    """The number of columns the selector keeps (its public ``k``, or the value of
    its ``n_selected(n_samples, n_features)`` for ``k="auto"``)."""
    k = getattr(selector, "k", None)
    if isinstance(k, str) and hasattr(selector, "n_selected"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the selector's fit emits its own
            k = selector.n_selected(n_samples, n_features)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"selector {type(selector).__name__} must declare the number of "
                        "features it selects as an int parameter k (the model's privacy "
                        "event is computed from it before any work)")
    return int(k)


def _plan(step, n_samples, n_features, classes, name):
    """``(event, (epsilon, delta))`` of a step, from public quantities only.

    Steps following the toolkit's contract are planned by :func:`plan_spend`
    (their ``_privacy_plan``: the hyper-parameters, the shape, the label set and
    ``n_samples_public``; no fit); other steps by their ``epsilon`` / ``delta``
    hyper-parameters, as an :class:`~dptoolkit.accounting.events.ApproxDPEvent`.
    """
    if not isinstance(step, PrivateEstimatorMixin):
        eps, delta = _budget_of(step, name)
        return ApproxDPEvent(eps, delta), (eps, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the real fit emits its own warnings
        event, spent = plan_spend(step, n_samples=n_samples, n_features=n_features,
                                  classes=classes)
    if spent is None:
        raise ValueError(f"{name} must be private: its fit reports no privacy spend; the "
                         "pipeline composes two private steps")
    return event, (float(spent[0]), float(spent[1]))


def _fitted_spend(step, name):
    """``(privacy_event_, privacy_spent_)`` of a fitted step."""
    spent = getattr(step, "privacy_spent_", None)
    if spent is None:
        raise ValueError(f"the {name} reported no privacy_spent_ after fitting")
    spent = (float(spent[0]), float(spent[1]))
    event = getattr(step, "privacy_event_", None)
    return (ApproxDPEvent(*spent) if event is None else event), spent


class PipelineSteps(NamedTuple):
    """The plan's ``params``: the validated, unfitted clones of the steps and their
    planned ``(event, (epsilon, delta))`` (an immutable tuple)."""
    selector: object
    estimator: object
    planned_selector: tuple
    planned_estimator: tuple


class PrivateSelectThenFit(PrivateEstimatorMixin, MetaEstimatorMixin, BaseEstimator):
    r"""Select features privately, then fit a private model on them.

    ``selector`` (e.g. :class:`DPSIS` or :class:`TwoStageSelector`) chooses the
    columns; ``estimator`` (e.g.
    :class:`dptoolkit.linear_model.FrankWolfeLassoClassifier` with ``epsilon``
    and ``delta`` set) is fitted on those columns of the same data.

    **Privacy.**  *Neighbouring relation*: both steps are private for the same
    relation (if both declare ``neighbouring`` they must agree).
    *Sensitivity and mechanism*: each step's own (e.g. DP-SIS: scores of
    sensitivity 1 or 2 into a top-k mechanism; Frank-Wolfe: exponential-
    mechanism steps on gradients of sensitivity :math:`\lambda L`).
    *Composition*: the second step's guarantee holds for every fixed column
    subset, so the pair is an adaptive sequential composition.
    ``privacy_event_`` is ``ComposedEvent((selector_.privacy_event_,
    estimator_.privacy_event_))`` (a step without events counts as an
    :class:`~dptoolkit.accounting.events.ApproxDPEvent` of its spend), and
    ``privacy_spent_`` is its basic composition :math:`(\varepsilon_1 +
    \varepsilon_2, \delta_1 + \delta_2)` (Dwork and Roth 2014, Theorem 3.16).
    :func:`~dptoolkit.accounting.epsilon_of_event` of the event at
    :math:`\delta_1 + \delta_2` can be smaller than that sum (Renyi-DP
    composition of the two steps); an accountant composing events
    (``BudgetAccountant(composition="events")``) gets that benefit.

    **Check -> work -> spend.**  Before any work, both steps' events and
    spends are computed from public quantities (hyper-parameters, the number
    of samples and features, ``selector.k``, the label set, ``n_samples_public``:
    each step's ``_privacy_plan``, through ``dptoolkit._private.plan_spend()``,
    without a fit), and the ``accountant`` is
    asked once for the composed event and the summed spend; a
    :class:`~dptoolkit.exceptions.BudgetExceededError` leaves it untouched
    and nothing is fitted.  After both fits the accountant is charged once
    with ``privacy_spent_`` and ``privacy_event_``.  The steps' own
    ``accountant`` parameters are set to ``None`` in the fitted clones, so
    nothing is spent twice.

    Parameters
    ----------
    selector : estimator
        A private selector with ``k``, ``epsilon``, ``fit``, ``transform``,
        ``get_support``, and ``privacy_spent_`` (and ``privacy_event_``) after
        fitting.  A selector with ``k="auto"`` (:class:`DPSIS`) declares its
        count by ``n_selected(n_samples, n_features)``, from public quantities
        (its ``n_samples_public``), which the check below uses for ``k``.
    estimator : estimator
        A private model with ``epsilon`` (and ``delta``) set, and
        ``privacy_spent_`` (and ``privacy_event_``) after fitting.
    accountant : BudgetAccountant or None, default=None
        A :class:`~dptoolkit.accounting.BudgetAccountant` (or any object with
        ``check(epsilon, delta, event=...)`` and ``spend(epsilon, delta,
        event=..., label=...)``).
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set, passed on to ``estimator`` (which must have a
        ``classes`` parameter); ``y`` is checked against it before any work (a
        label outside it raises ``ValueError``; a declared class absent from
        ``y`` is fine).  None: the estimator's own ``classes`` applies (without
        it, a private estimator reads the label set from ``y`` and warns with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning`).

    Attributes
    ----------
    selector_, estimator_ : fitted clones
    support_ : ndarray of bool, shape (n_features,)
    privacy_spent_ : tuple (epsilon, delta)
        Total guarantee of the released (support, model) pair, by basic
        composition.
    privacy_event_ : ComposedEvent
        The two steps' events.
    classes_ : ndarray
        The estimator's classes, if it has them.
    n_features_in_ : int

    References
    ----------
    C. Dwork and A. Roth. The algorithmic foundations of differential privacy.
    2014, Theorem 3.16.
    """

    def __init__(self, selector, estimator, *, accountant=None, classes=None):
        self.selector = selector
        self.estimator = estimator
        self.accountant = accountant
        self.classes = classes

    @fill_doc
    def fit(self, X, y):
        """Select, then fit, charging the accountant once.

        %(params_fit_Xy)s

        %(returns_self)s

        Raises
        ------
        ValueError
            A non-private step, steps declaring different neighbouring
            relations, ``classes`` invalid, set for an estimator without a
            ``classes`` parameter or different from the estimator's, or labels of
            ``y`` outside ``classes``.
        TypeError
            ``accountant`` is not a BudgetAccountant (or None); a selector
            without an int ``k``.
        BudgetExceededError
            The accountant cannot pay the total (nothing is fitted or spent).
        RuntimeError
            A step's fitted event differs from its planned one (a step whose
            event depends on the data; the accountant was charged with the
            fitted one).
        """
        check_accountant(self.accountant)
        n_samples, n_features = X.shape if hasattr(X, "shape") else np.shape(X)
        plan = self._privacy_plan(n_samples, n_features, self._label_set(y))
        selector, estimator, planned1, planned2 = plan.params
        self._check_spend(plan.event, plan.spent)
        # work; run by a parent with a stream (PrivateHyperparameterSearch), the
        # steps draw from two children of it, stored nowhere
        stream = _stream_for(self)
        streams = (None, None) if stream is None else stream.spawn(2)

        def fit_step(step, stream, X_step):
            if stream is None or not isinstance(step, PrivateEstimatorMixin):
                with nested_fits(self):     # this pipeline charges the composed event
                    return step.fit(X_step, y)
            return fit_with_stream(step, stream, X_step, y)

        fit_step(selector, streams[0], X)
        fitted1 = _fitted_spend(selector, "selector")
        fit_step(estimator, streams[1], selector.transform(X))
        fitted2 = _fitted_spend(estimator, "estimator")
        self.selector_ = selector
        self.estimator_ = estimator
        self.support_ = np.asarray(selector.get_support())
        self.n_features_in_ = self.support_.size
        if hasattr(estimator, "classes_"):
            self.classes_ = estimator.classes_
        # spend: what ran, once
        fitted = self._compose(fitted1, fitted2)
        self._privacy_label = (f"feature selection ({type(selector).__name__}) + model "
                               f"({type(estimator).__name__})")
        self._record_spend(*fitted)
        for name, plan, done in (("selector", planned1, fitted1),
                                 ("estimator", planned2, fitted2)):
            if isinstance(getattr(self, name), PrivateEstimatorMixin) and plan != done:
                raise data_dependent_error(
                    f"the {name}'s fitted privacy event {done!r} differs from the one "
                    f"planned before the fit {plan!r}", RuntimeError)
        return self

    def _label_set(self, y):
        """The estimator's label set for a fit on ``y`` (checked against ``classes``);
        None for an estimator without a ``classes`` parameter."""
        if self.classes is not None:
            return self._resolve_classes(y, private=True)
        if (not isinstance(self.estimator, PrivateEstimatorMixin)
                or "classes" not in self.estimator.get_params(deep=False)):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the estimator's fit emits its own
            return clone(self.estimator)._label_set(y)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        both steps' planned events, composed; ``params`` a :class:`PipelineSteps`
        (the validated clones the fit runs and their planned events)."""
        for name in ("selector", "estimator"):
            step = getattr(self, name)
            if not (hasattr(step, "get_params") and hasattr(step, "fit")):
                raise TypeError(f"{name} must be a scikit-learn estimator (with get_params "
                                f"and fit), got {type(step).__name__}")
        selector = clone(self.selector)
        estimator = clone(self.estimator)
        for step in (selector, estimator):
            if "accountant" in step.get_params(deep=False):
                step.set_params(accountant=None)
        _budget_of(selector, "selector")
        _budget_of(estimator, "estimator")
        estimator = self._declare_classes_on(estimator, ())   # y checked by _label_set
        rel1 = getattr(selector, "neighbouring", None)
        rel2 = getattr(estimator, "neighbouring", None)
        if rel1 is not None and rel2 is not None and rel1 != rel2:
            raise ValueError(f"selector and estimator use different neighbouring relations "
                             f"({rel1!r} vs {rel2!r}); their guarantees do not compose as "
                             "stated")
        k = (_n_selected(selector, n_samples, n_features)
             if isinstance(estimator, PrivateEstimatorMixin) else 0)
        planned1 = _plan(selector, n_samples, n_features, None, "selector")
        planned2 = _plan(estimator, n_samples, k, classes, "estimator")
        return self._plan(*self._compose(planned1, planned2),
                          PipelineSteps(selector, estimator, planned1, planned2))

    @staticmethod
    def _compose(first, second):
        """Adaptive composition: ComposedEvent and the basic-composition spend."""
        (event1, (eps1, delta1)), (event2, (eps2, delta2)) = first, second
        return (ComposedEvent((event1, event2)),
                (eps1 + eps2, min(1.0, delta1 + delta2)))

    def _reduce(self, X):
        check_is_fitted(self, "estimator_")
        return self.selector_.transform(X)

    def predict(self, X):
        """Predict with the model on the selected columns."""
        return self.estimator_.predict(self._reduce(X))

    def predict_proba(self, X):
        """Class probabilities from the model on the selected columns."""
        return self.estimator_.predict_proba(self._reduce(X))

    def decision_function(self, X):
        """Decision function of the model on the selected columns."""
        return self.estimator_.decision_function(self._reduce(X))

    def score(self, X, y):
        """The model's default score on the selected columns."""
        return self.estimator_.score(self._reduce(X), y)
