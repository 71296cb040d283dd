"""Private feature selection followed by a private model, under one budget."""
import numbers
from typing import NamedTuple
import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._docstrings import fill_doc
from .._estimator import delegated_tags, estimator_has
from .._private import (
    PrivateEstimatorMixin,
    _stream_for,
    nested_fits,
    data_dependent_error,
    fit_with_stream,
    plan_spend,
)
from .._validation import (ACCOUNTANT, CLASSES, DELTA_OPTIONAL, EPSILON, FRACTION_OPEN, Checked,
                           check_epsilon_delta,
                           check_X_y_named, validate_params)
from ..accounting import calibrate_parameter, epsilon_of_event
from ..accounting.events import ApproxDPEvent, ComposedEvent, ZCDPEvent
from ..distributed import align_dask_X_y, is_dask_array
from ..exceptions import ScreeningUnavailableError
from ._sis import DPSIS

__all__ = ["PrivateSelectThenFit"]

#: Default ``selection_share``: the share of the additive budget (zCDP rho with a
#: delta, epsilon without) that :class:`PrivateSelectThenFit` gives the selection.
#: Both steps' noise scales grow like ``share ** -0.5`` (a Gaussian release's
#: sigma, an exponential-mechanism step's 1 / epsilon per step), and which step
#: limits the accuracy depends on the data, which the split must not look at: the
#: equal split inflates each step's noise by sqrt(2) against the step run alone,
#: the smallest worst case, and it was the most robust share on the development
#: sets (:ref:`study_feature_selection`).
SELECTION_SHARE = 0.5


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


def _check_two_classes(selector, classes, declared):
    """Refuse a DP-SIS selection for a classifier of more than two classes.

    DP-SIS scores each column by its correlation with one numeric target clipped
    to ``y_bounds``: with two classes that is the class contrast, with K > 2 the
    label codes would be clipped to the bounds and the score would set one class
    against the rest (or order the classes arbitrarily), and the sensitivity of a
    K-class score is not derived.  ``classes``: the label set of the fit (None
    for an estimator without one); ``declared``: whether it is the public
    ``classes`` (else it was read from ``y``).
    """
    if classes is None or not isinstance(selector, DPSIS) or np.size(classes) <= 2:
        return
    where = (f"classes declares {np.size(classes)} classes" if declared else
             f"y has {np.size(classes)} classes (its label set read from y: declare it "
             "as classes)")
    raise ValueError(
        f"Only binary classification is supported with a DPSIS selector: {where}, "
        "but DPSIS scores features "
        "against a two-class target: the DP-SIS score and its sensitivity are defined for "
        "two classes (with more, the clipped label codes would score one class against "
        "the rest); use two classes, or fit a multiclass model without DPSIS")


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


def _plan_estimator(estimator, n_samples, k, classes, starts):
    """:func:`_plan` of the estimator on the ``k`` selected columns.

    ``starts`` (:func:`_starts_from_release`): its screening keeps all ``k``
    columns, so that its release (the per-class sums of Frank-Wolfe's
    naive-Bayes start) buys only the start, planned in its event; where the
    estimator refuses that screening (no zCDP accounting: pure DP, a Laplace
    selector, ``composition="advanced"``) it runs without screening, from the
    zero start, as Frank-Wolfe's own ``start="auto"`` does.  ``k`` depends on
    the selector's share (DPSIS ``k="auto"``), so this runs at every split.
    """
    if starts:
        estimator.set_params(k=k)
        try:
            return _plan(estimator, n_samples, k, classes, "estimator")
        except ScreeningUnavailableError:
            estimator.set_params(k=None)
    return _plan(estimator, n_samples, k, classes, "estimator")


def _fitted_spend(step, name):
    """``(privacy_event_, privacy_spent_)`` of a fitted step."""
    spent = getattr(step, "privacy_spent_", None)
    if spent is None:
        raise ValueError(f"the {name} reported no privacy_spent_ after fitting")
    spent = (float(spent[0]), float(spent[1]))
    event = getattr(step, "privacy_event_", None)
    return (ApproxDPEvent(*spent) if event is None else event), spent


def _is_auto(value):
    return isinstance(value, str) and value == "auto"


def _starts_from_release(estimator, total, n_samples, n_features, classes):
    """Whether the private estimator (its own budget, or the pipeline's ``total``)
    starts from its screening's release: Frank-Wolfe's ``start="naive_bayes"``, or
    ``"auto"`` where Frank-Wolfe alone on the pipeline's input (``n_samples`` x
    ``n_features``, public) would take it (two classes, zCDP accounting, more
    columns than its screening keeps), both with ``k="auto"``.  Its
    screening then keeps all the selected columns (:func:`_plan_estimator`)."""
    params = estimator.get_params(deep=False)
    if not (isinstance(estimator, PrivateEstimatorMixin) and _is_auto(params.get("k"))
            and isinstance(params.get("start"), str)):
        return False
    if params["start"] != "auto":
        return params["start"] == "naive_bayes"
    probe = clone(estimator)
    if total is not None:
        probe.set_params(epsilon=total[0], delta=total[1] or None)
    if probe.get_params(deep=False).get("epsilon") is None:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the real fit emits its own warnings
        try:
            resolved = probe._privacy_plan(n_samples, n_features, classes).params
        except ValueError:                  # the real plan raises it again
            return False
    return getattr(resolved, "start", None) == "naive_bayes"


def _split_budget(selector, estimator, epsilon, delta, share, plan_steps):
    """Set the steps' budgets (on the clones) so that their composed planned event
    spends ``(epsilon, delta)``; returns their plans ``plan_steps()`` at that split.

    ``delta > 0``: the steps get the ``(epsilon_i, delta)`` of ``share * rho`` and
    ``(1 - share) * rho``-zCDP mechanisms, and rho is calibrated on the composed
    event (searched on ``1 / rho``, from the rho of one rho-zCDP mechanism spending
    ``(epsilon, delta)``).  ``delta == 0``: basic composition of pure-DP steps, the
    shares of ``epsilon`` themselves.
    """
    if delta == 0.0:
        selector.set_params(epsilon=share * epsilon, delta=None)
        estimator.set_params(epsilon=(1.0 - share) * epsilon, delta=None)
        try:
            return plan_steps()
        except (TypeError, ValueError) as exc:   # e.g. a Gaussian step needs a delta
            raise type(exc)(
                "delta is None or 0, so the pipeline is pure DP and gives each step "
                f"delta=None with its share of epsilon, which a step refuses ({exc}); "
                "give the pipeline a delta in (0, 1)") from exc

    def set_split(rho):
        selector.set_params(epsilon=epsilon_of_event(ZCDPEvent(share * rho), delta),
                            delta=delta)
        estimator.set_params(epsilon=epsilon_of_event(ZCDPEvent((1.0 - share) * rho),
                                                      delta), delta=delta)

    def composed(inverse_rho):
        set_split(1.0 / inverse_rho)
        planned1, planned2 = plan_steps()
        return ComposedEvent((planned1[0], planned2[0]))

    rho = calibrate_parameter(ZCDPEvent, target_epsilon=epsilon, delta=delta, low=1e-12,
                              high=1e12, composition="rdp")
    try:
        inverse = calibrate_parameter(composed, target_epsilon=epsilon, delta=delta,
                                      low=1e-3 / rho, high=1e3 / rho, increasing=False,
                                      initial=1.0 / rho, rtol=1e-8)
    except ValueError:   # from the search, or a step refusing its share
        try:    # a step refusing the first split (e.g. its k on too few features)
            set_split(rho)
            plan_steps()
        except ValueError as refusal:
            exc = refusal
        raise ValueError(
            f"epsilon={epsilon!r} at delta={delta!r} cannot be split between the selector "
            "and the estimator: the accountant's composition of their planned events "
            "stays above epsilon down to a thousandth of the zCDP budget, or a step "
            f"refuses its share ({exc}); raise epsilon") from exc
    set_split(1.0 / inverse)
    return plan_steps()


class PipelineSteps(NamedTuple):
    """The plan's ``params``: the validated, unfitted clones of the steps and their
    planned ``(event, (epsilon, delta))`` (an immutable tuple)."""
    selector: object
    estimator: object
    planned_selector: tuple
    planned_estimator: tuple


_STEP = "a scikit-learn estimator (with get_params and fit)"


def _check_step(step):
    if not (hasattr(step, "get_params") and hasattr(step, "fit")):
        raise TypeError("not an estimator")


class PrivateSelectThenFit(PrivateEstimatorMixin, MetaEstimatorMixin, BaseEstimator):
    r"""Select features privately, then fit a private model on them.

    ``selector`` (e.g. :class:`DPSIS` or :class:`TwoStageSelector`) chooses the
    columns; ``estimator`` (e.g.
    :class:`dptoolkit.linear_model.FrankWolfeLassoClassifier`) is fitted on
    those columns of the same data.  Give the pair's budget to the pipeline
    (``epsilon``, ``delta``: it sets both steps' budgets and spends exactly
    that), or set each step's own ``epsilon`` and ``delta``.

    **Privacy.**  *Neighbouring relation*: both steps are private for the same
    relation (if both declare ``neighbouring`` they must agree).
    *Sensitivity and mechanism*: each step's own (e.g. DP-SIS: scores of
    sensitivity 1 or 2 into a top-k mechanism, or one Gaussian release of all
    scores; Frank-Wolfe: exponential-mechanism steps on gradients of
    sensitivity :math:`\lambda L`).
    *Composition*: the second step's guarantee holds for every fixed column
    subset, so the pair is an adaptive sequential composition.
    ``privacy_event_`` is ``ComposedEvent((selector_.privacy_event_,
    estimator_.privacy_event_))`` (a step without events counts as an
    :class:`~dptoolkit.accounting.events.ApproxDPEvent` of its spend).

    **One total budget** (``epsilon`` given, as by default: ``epsilon=1.0``).  The
    pipeline sets both steps' ``epsilon`` and ``delta`` (on its clones; the
    objects passed in are never modified) so that the composed event spends
    exactly ``(epsilon, delta)``:

    * ``delta > 0``: the steps share a zero-concentrated DP budget
      :math:`\rho` (Bun and Steinke 2016), additive under composition: the
      selector is given the ``(epsilon_1, delta)`` of a
      :math:`s\rho`-zCDP mechanism, the estimator the ``(epsilon_2, delta)``
      of a :math:`(1-s)\rho`-zCDP one (``selection_share`` :math:`s`;
      :math:`\varepsilon_i` = :func:`~dptoolkit.accounting.epsilon_of_event`
      of ``ZCDPEvent`` at ``delta``).  Each step calibrates its own noise to
      its pair, so a Gaussian release spends exactly its share of
      :math:`\rho`, and each step's own ``privacy_spent_`` is what it
      guarantees alone, ``(epsilon_i, delta)``: the pair's delta is
      ``delta``, not a sum.  :math:`\rho` is then found by
      :func:`~dptoolkit.accounting.calibrate_parameter` on the composed
      planned event (both steps' ``_privacy_plan``, no data) as the largest
      one the accountant converts to at most ``epsilon`` at ``delta``.
      ``privacy_spent_`` is ``(epsilon_of_event(privacy_event_, delta),
      delta)``: ``epsilon`` up to the search's relative tolerance
      (:math:`10^{-8}`), never above.  (Two steps at ``(epsilon/2,
      delta/2)`` each compose, in Renyi DP, to less than ``epsilon``.)
    * ``delta`` None or 0: pure DP, basic composition (Dwork and Roth 2014,
      Theorem 3.16), which is exact for pure-DP steps: the selector gets
      :math:`s\varepsilon`, the estimator :math:`(1-s)\varepsilon`, and
      ``privacy_spent_`` is their sum (plus any floating-point delta the
      steps report).

    **No second screening; the naive-Bayes start.**  The columns the
    estimator sees are already privately selected, so an estimator with
    ``k="auto"`` (Frank-Wolfe's private candidate screening of more
    than 1024 columns) does not choose among them again.  Where Frank-Wolfe
    alone on the pipeline's input would start from naive Bayes (its
    ``start="auto"``: a private two-class fit with zCDP accounting on more
    columns than its screening keeps; or ``start="naive_bayes"``), its
    screening keeps all the selected columns (``k`` = their number):
    its Gaussian release of their per-class sums, 0.75 of its budget
    (``selection_share="auto"``), then buys only the start, and is part of
    its planned event, which the split above composes.  Elsewhere (fewer
    columns, pure DP, the zero start) it runs with ``k=None`` from the
    zero start.  An int ``k`` is kept.  The start against the zero
    start on the development sets: :ref:`study_feature_selection`.

    **Two classes with DP-SIS.**  A :class:`DPSIS` selector scores every
    column by its correlation with one numeric target clipped to ``y_bounds``,
    and its sensitivity is derived for that target: with two classes it is the
    contrast of the two classes; with more, the clipped label codes would score
    one class against the rest.  A fit (or a plan) whose label set has more
    than two classes (``classes``, or the estimator's label set read from
    ``y``) therefore raises ``ValueError`` before any work or spend.  A
    K-class DP-SIS score (e.g. the largest of the K one-against-the-rest
    scores) with its sensitivity derived is not implemented.

    **The steps' own budgets** (an explicit ``epsilon=None``): each
    step is run with its own ``epsilon`` and ``delta``; ``privacy_spent_`` is
    the accountant's figure for the composed event at :math:`\delta_1 +
    \delta_2`, at most the basic composition :math:`(\varepsilon_1 +
    \varepsilon_2, \delta_1 + \delta_2)` (Renyi-DP composition can make it
    smaller, and then less than the sum is spent).

    **Check -> work -> spend.**  Before any work, both steps' events and
    spends are computed from public quantities (hyper-parameters, the number
    of samples and features, ``selector.k``, the label set, ``n_samples_public``:
    each step's ``_privacy_plan``, through ``dptoolkit._private.plan_spend()``,
    without a fit), and the ``accountant`` is
    asked once for the composed event and the pair's spend; a
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
    epsilon : float or None, default=1.0
        Total privacy budget of the pair, > 0: the pipeline sets both steps'
        ``epsilon`` and ``delta`` (see **One total budget**).  None (only when
        given explicitly): each step runs with its own ``epsilon`` and ``delta``
        (private steps only).
    delta : float or None, default=None
        Total delta of the pair, in [0, 1), with ``epsilon``.  None or 0: pure
        DP, the steps get shares of ``epsilon`` (basic composition).  Must be
        None when ``epsilon`` is None.
    selection_share : float, default=0.5
        Share :math:`s` in (0, 1) of the additive budget (zCDP :math:`\rho`
        with ``delta``, ``epsilon`` without) given to the selector; the
        estimator gets the rest.  Used only with ``epsilon``.  The default
        splits evenly: each step's noise scale grows like :math:`s^{-1/2}`, and
        which step limits the accuracy depends on the data, so the even split
        has the smallest worst-case inflation (:math:`\sqrt 2` each); see
        ``dptoolkit.selection._pipeline.SELECTION_SHARE`` for the development
        measurements.
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
        Total guarantee of the released (support, model) pair: the
        accountant's epsilon of ``privacy_event_`` at the pair's delta
        (``delta``, or the sum of the steps' deltas without ``epsilon``).
    privacy_event_ : ComposedEvent
        The two steps' events.  The budgets the steps ran with are
        ``selector_.epsilon`` / ``selector_.delta`` and ``estimator_.epsilon``
        / ``estimator_.delta``.
    classes_ : ndarray
        The estimator's classes, if it has them.
    n_features_in_ : int

    References
    ----------
    C. Dwork and A. Roth. The algorithmic foundations of differential privacy.
    2014, Theorem 3.16.
    M. Bun and T. Steinke. Concentrated differential privacy: simplifications,
    extensions, and lower bounds. TCC 2016, Lemma 2.3 (composition) and
    Proposition 1.3 (conversion).

    Examples
    --------
    >>> import numpy as np
    >>> from dptoolkit.linear_model import FrankWolfeLassoClassifier
    >>> from dptoolkit.selection import DPSIS, PrivateSelectThenFit
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(400, 50)).astype(float)
    >>> y = X[:, 3]
    >>> pipe = PrivateSelectThenFit(
    ...     DPSIS(k=10, y_bounds=(0, 1), n_samples_public=400),
    ...     FrankWolfeLassoClassifier(n_samples_public=400),
    ...     epsilon=1.0, delta=1e-5, classes=[0, 1]).fit(X, y)
    >>> round(pipe.privacy_spent_[0], 6), pipe.privacy_spent_[1]
    (1.0, 1e-05)
    """

    _parameter_constraints = {
        "selector": [Checked(_check_step, _STEP)], "estimator": [Checked(_check_step, _STEP)],
        "epsilon": EPSILON, "delta": DELTA_OPTIONAL, "selection_share": FRACTION_OPEN,
        "accountant": ACCOUNTANT, "classes": CLASSES,
    }

    def __init__(self, selector, estimator, *, epsilon=1.0, delta=None,
                 selection_share=SELECTION_SHARE, accountant=None, classes=None):
        self.selector = selector
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.selection_share = selection_share
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
            X or y invalid (empty, not 2-D, of different lengths, NaN or
            infinity, complex; checked first, with scikit-learn's messages);
            ``epsilon`` not a finite float > 0, ``delta`` outside [0, 1) or set
            without ``epsilon``, ``selection_share`` outside (0, 1), a budget
            too small to split (the accountant's composition of the steps'
            events cannot reach it); without ``epsilon``, a step without its
            own ``epsilon``; steps declaring different neighbouring
            relations, ``classes`` invalid, set for an estimator without a
            ``classes`` parameter or different from the estimator's, or labels of
            ``y`` outside ``classes``; a :class:`DPSIS` selector with more than
            two classes (``classes``, or the labels of ``y`` when undeclared).
        TypeError
            ``accountant`` is not a BudgetAccountant (or None); a selector
            without an int ``k``; with ``epsilon``, a step without ``epsilon``
            and ``delta`` parameters; a non-numeric budget.
        BudgetExceededError
            The accountant cannot pay the total (nothing is fitted or spent).
        RuntimeError
            A step's fitted event differs from its planned one (a step whose
            event depends on the data; the accountant was charged with the
            fitted one).
        """
        # Its own sequence, not the template's (PrivateEstimatorMixin.fit): it records
        # the composed spend of the steps' *fitted* events and then compares them with
        # the planned ones; the parameters are still checked once, by the table.
        if is_dask_array(X):  # unknown row-chunk sizes or a dask Series y: aligned once
            X, _, y = align_dask_X_y(X, y)
        else:
            # shape, dtype, finiteness and empty input, with scikit-learn's messages,
            # before anything is planned; sparse X in any SciPy format (the steps
            # convert it)
            check_X_y_named(X, y)
            X, y = validate_data(self, X, y, accept_sparse=True, reset=True)
            if isinstance(self.estimator, BaseEstimator) and is_classifier(self.estimator):
                # a continuous y is refused before its label set is counted
                check_classification_targets(y)
        validate_params(self)
        n_samples, n_features = X.shape
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

    def _total_budget(self):
        """``(epsilon, delta, selection_share)`` of a total budget, None without one."""
        share = float(self.selection_share)     # ranges: the constraint table's
        if self.epsilon is None:
            if self.delta is not None:
                raise ValueError("delta is set but epsilon is None; set epsilon for a "
                                 "total budget of the pipeline, or leave delta=None and "
                                 "set the steps' own budgets")
            return None
        return float(self.epsilon), 0.0 if self.delta is None else float(self.delta), share

    def _privacy_plan(self, n_samples, n_features, classes):
        """The plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        both steps' planned events, composed; ``params`` a :class:`PipelineSteps`
        (the validated clones the fit runs, their budgets set when the pipeline has
        a total one, and their planned events)."""
        _check_two_classes(self.selector, classes, self.classes is not None)
        total = self._total_budget()
        selector = clone(self.selector)
        estimator = clone(self.estimator)
        for name, step in (("selector", selector), ("estimator", estimator)):
            params = step.get_params(deep=False)
            if "accountant" in params:
                step.set_params(accountant=None)
            if total is None:
                _budget_of(step, name)
            elif not {"epsilon", "delta"} <= params.keys():
                raise TypeError(f"epsilon is set on the pipeline, but the {name} "
                                f"{type(step).__name__} has no epsilon and delta "
                                "parameters to receive its share of the budget")
        estimator = self._declare_classes_on(estimator, ())   # y checked by _label_set
        starts = _starts_from_release(estimator, total, n_samples, n_features, classes)
        if _is_auto(estimator.get_params(deep=False).get("k")):
            # the columns are already privately selected: screening them again
            # would pay a second time to choose among the same candidates (a
            # naive-Bayes start keeps them all, set in plan_steps)
            estimator.set_params(k=None)
        rel1 = getattr(selector, "neighbouring", None)
        rel2 = getattr(estimator, "neighbouring", None)
        if rel1 is not None and rel2 is not None and rel1 != rel2:
            raise ValueError(f"selector and estimator use different neighbouring relations "
                             f"({rel1!r} vs {rel2!r}); their guarantees do not compose as "
                             "stated")

        def plan_steps():
            k = (_n_selected(selector, n_samples, n_features)
                 if isinstance(estimator, PrivateEstimatorMixin) else 0)
            return (_plan(selector, n_samples, n_features, None, "selector"),
                    _plan_estimator(estimator, n_samples, k, classes, starts))

        if total is None:
            planned1, planned2 = plan_steps()
        else:
            planned1, planned2 = _split_budget(selector, estimator, *total, plan_steps)
        return self._plan(*self._compose(planned1, planned2),
                          PipelineSteps(selector, estimator, planned1, planned2))

    def _compose(self, first, second):
        """Adaptive composition: the ComposedEvent and the claimed spend, which the
        accountant then refines (``_plan``, ``_record_spend``): the total budget when
        it has a delta (the event is calibrated to it), else the basic composition."""
        (event1, (eps1, delta1)), (event2, (eps2, delta2)) = first, second
        total = self._total_budget()
        if total is not None and total[1] > 0:
            return ComposedEvent((event1, event2)), total[:2]
        return (ComposedEvent((event1, event2)),
                (eps1 + eps2, min(1.0, delta1 + delta2)))

    def _reduce(self, X):
        check_is_fitted(self, "estimator_")
        return self.selector_.transform(X)

    def predict(self, X):
        """Predict with the model on the selected columns."""
        X = self._reduce(X)     # NotFittedError before fit
        return self.estimator_.predict(X)

    @available_if(estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from the model on the selected columns."""
        X = self._reduce(X)     # NotFittedError before fit
        return self.estimator_.predict_proba(X)

    @available_if(estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the model on the selected columns."""
        X = self._reduce(X)     # NotFittedError before fit
        return self.estimator_.decision_function(X)

    def __sklearn_tags__(self):
        """The estimator's type and classifier/regressor tags (as scikit-learn's
        ``Pipeline``); sparse input when both steps take it."""
        tags = delegated_tags(super().__sklearn_tags__(), self.estimator, self.selector)
        # the model sees only the k columns selected under noise: the full data's
        # accuracy is not promised
        for kind in (tags.classifier_tags, tags.regressor_tags):
            if kind is not None:
                kind.poor_score = True
        if tags.classifier_tags is not None and isinstance(self.selector, DPSIS):
            tags.classifier_tags.multi_class = False    # see _check_two_classes
        return tags

    def score(self, X, y):
        """The model's default score on the selected columns."""
        X = self._reduce(X)
        return self.estimator_.score(X, y)
