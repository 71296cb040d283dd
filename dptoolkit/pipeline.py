"""A scikit-learn pipeline that states one privacy guarantee for all its steps.

:func:`make_pipeline` builds a :class:`PrivatePipeline`: a
:class:`sklearn.pipeline.Pipeline` whose fit composes the privacy events of its
private steps (a vectorizer, a selector, a classifier) under the toolkit's one
accountant, and warns, naming the step, about any step that learns from the data
without privacy (``TfidfVectorizer``, ``CountVectorizer``, ``StandardScaler``, ...).
"""
import inspect
import math
import warnings
from numbers import Real

from sklearn.pipeline import Pipeline, _name_estimators
from sklearn.utils import get_tags
from sklearn.utils._param_validation import Interval
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples

from ._private import PrivateEstimatorMixin
from .accounting import epsilon_of_event
from .accounting.events import ComposedEvent
from .exceptions import PrivacyLeakWarning

__all__ = ["PrivatePipeline", "make_pipeline"]


def _is_private(step):
    return isinstance(step, PrivateEstimatorMixin)


def _learns_from_data(step):
    """Whether a non-private step is fitted on the data (scikit-learn's
    ``requires_fit`` tag; stateless steps such as ``HashingVectorizer``,
    ``Normalizer`` or ``FunctionTransformer`` declare False)."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return False
    try:
        return bool(get_tags(step).requires_fit)
    except (AttributeError, TypeError):   # not a scikit-learn estimator: assume it learns
        return True


def _final_step_has(method):
    """For ``available_if``: the last step is ``"passthrough"`` or has ``method``."""
    def check(pipeline):
        final = pipeline._final_estimator
        return final == "passthrough" or hasattr(final, method)
    return check


class PrivatePipeline(Pipeline):
    """A :class:`~sklearn.pipeline.Pipeline` with one privacy guarantee.

    Fitting runs the steps as scikit-learn does; each private step (one following
    the toolkit's private contract, e.g.
    :class:`~dptoolkit.feature_extraction.DPTfidfVectorizer`,
    :class:`~dptoolkit.linear_model.DPNBLogisticClassifier`) checks, runs and
    charges its own release, and the pipeline then states the guarantee of the
    whole fit: the steps run one after the other on the same training data, so
    their events compose (``ComposedEvent``, adaptive composition) and the
    pipeline is ``privacy_spent_``-DP with

    * ``delta`` the sum of the steps' deltas,
    * ``epsilon`` the smaller of the sum of the steps' epsilons (basic
      composition, Dwork and Roth 2014, Theorem 3.16) and the toolkit's
      accountant's figure for the composed event at that delta
      (:func:`~dptoolkit.accounting.epsilon_of_event`; Renyi DP, Mironov 2017).

    The neighbouring relation is the steps' (add or remove one training
    example); a step with another relation, or one that reads its data size
    from the data, weakens the whole pipeline's guarantee in the same way (its
    own warning says so).

    A step that learns from the data without privacy (scikit-learn's
    ``requires_fit`` tag and no private contract) releases what it learned (a
    vocabulary, means, scales) outside any guarantee: the fit warns with a
    :class:`~dptoolkit.exceptions.PrivacyLeakWarning` naming it, and the
    pipeline then states no guarantee (``privacy_spent_`` None).  Stateless
    steps (``HashingVectorizer``, ``Normalizer``, ``FunctionTransformer``) learn
    nothing and are fine.

    **One total budget.**  With ``epsilon`` (and ``delta``) set, the fit splits
    them between the ``p`` private steps before running them: each gets
    ``delta / p`` and ``c * epsilon / p``, with ``c >= 1`` the largest scale
    (bisection, relative precision 1e-6) at which the accountant's figure for
    the composition of the steps' planned events
    (each step's ``_privacy_plan``, from public
    quantities only: the number of training examples ``len(X)``, or each step's
    ``n_samples_public``) is at most ``epsilon`` at ``delta``.  Basic
    composition gives ``c = 1``; composing the Gaussian releases in Renyi DP
    gives more to each step.  The scale is used only when every planned event
    is the same whatever the number of input features (which a step after a
    vectorizer cannot know before the vectorizer's fit; checked at two
    widths); otherwise ``c = 1``.  The steps are fitted with their shares
    (``budget_split_``); their own ``epsilon`` and ``delta`` parameters are
    restored after the fit (a fit changes no parameter), and the pipeline
    states the composed guarantee, at most (``epsilon``, ``delta``).

    Parameters
    ----------
    steps, memory, verbose, transform_input
        As :class:`sklearn.pipeline.Pipeline`.
    epsilon : float or None, default=None
        Total budget (> 0) split between the private steps as above; None: each
        step keeps its own budget.
    delta : float or None, default=None
        Total delta in (0, 1) split in equal shares (only with ``epsilon``);
        None: each step keeps its own ``delta``.

    Attributes
    ----------
    privacy_event_ : ComposedEvent or None
        The private steps' events, in order; None when no step is private.
    privacy_spent_ : (float, float) or None
        The pipeline's (epsilon, delta); None when a step learned without
        privacy or no step is private.
    privacy_steps_ : list of (str, (float, float) or None)
        Each private step's name and its ``privacy_spent_``.
    leaking_steps_ : list of str
        The names of the steps that learned from the data without privacy.
    budget_scale_ : float or None
        The scale ``c`` of the split (None without ``epsilon``).
    budget_split_ : list of (str, float, float)
        Each private step's name and the ``epsilon`` and ``delta`` it was fitted
        with (its own, without a total).

    Raises
    ------
    ValueError
        From :meth:`fit`: ``epsilon`` not > 0, ``delta`` not in (0, 1),
        ``delta`` without ``epsilon``, a total budget with no private step.
    """

    # scikit-learn's table and format (Pipeline.fit validates it again through
    # scikit-learn's _fit_context), with the total budget's ranges
    _parameter_constraints = {
        **Pipeline._parameter_constraints,
        "epsilon": [None, Interval(Real, 0.0, None, closed="neither")],
        "delta": [None, Interval(Real, 0.0, 1.0, closed="neither")],
    }

    def __init__(self, steps, *, epsilon=None, delta=None, transform_input=None, memory=None,
                 verbose=False):
        # transform_input is scikit-learn >= 1.6's; earlier versions do not take it
        extra = ({"transform_input": transform_input}
                 if "transform_input" in inspect.signature(Pipeline.__init__).parameters
                 else {})
        super().__init__(steps, memory=memory, verbose=verbose, **extra)
        self.transform_input = transform_input
        self.epsilon = epsilon
        self.delta = delta

    def fit(self, X, y=None, **params):
        """Fit the steps, then state the pipeline's guarantee.

        Parameters
        ----------
        X, y, **params
            As :meth:`sklearn.pipeline.Pipeline.fit`.

        Returns
        -------
        self : PrivatePipeline

        Warns
        -----
        PrivacyLeakWarning
            A step learns from the data without privacy (named in the message).
        """
        self._validate_params()     # the table, before the budget is split
        leaking = [name for name, step in self.steps
                   if not _is_private(step) and _learns_from_data(step)]
        for name in leaking:
            step = self.named_steps[name]
            warnings.warn(
                f"step {name!r} ({type(step).__name__}) learns from the training data "
                "without differential privacy: what it learns (e.g. a vocabulary, idf, "
                "means or scales) is released with the pipeline outside any guarantee, "
                "so the pipeline states none (privacy_spent_ is None).  Use a private "
                "step (e.g. dptoolkit.feature_extraction.DPTfidfVectorizer) or a "
                "stateless one (HashingVectorizer, Normalizer).", PrivacyLeakWarning,
                stacklevel=2)
        own = [(step, step.get_params(deep=False)) for _, step in self.steps
               if _is_private(step)]
        try:
            self.budget_scale_ = self._split_budget(X)
            self.budget_split_ = [(name, step.epsilon, getattr(step, "delta", None))
                                  for name, step in self.steps if _is_private(step)]
            super().fit(X, y, **params)
        finally:
            # the steps' own parameters are left as given (fit changes no parameter);
            # what each spent is its privacy_spent_
            for step, kept in own:
                step.set_params(**{k: kept[k] for k in ("epsilon", "delta") if k in kept})
        self.leaking_steps_ = leaking
        self._state_guarantee()
        return self

    # through this class's fit (the budget split and the one guarantee), offered
    # only when the last step can do the second half, as scikit-learn's Pipeline
    @available_if(_final_step_has("transform"))
    def fit_transform(self, X, y=None, **params):
        """``fit`` then ``transform`` (the last step must be a transformer)."""
        return self.fit(X, y, **params).transform(X)

    @available_if(_final_step_has("predict"))
    def fit_predict(self, X, y=None, **params):
        """``fit`` then ``predict``."""
        return self.fit(X, y, **params).predict(X)

    def _split_budget(self, X):
        """Set the private steps' shares of the total budget; return the scale c."""
        if self.epsilon is None:
            if self.delta is not None:
                raise ValueError("delta is set but epsilon is None; give the total epsilon "
                                 "to split, or set each step's own budget")
            return None
        # validated by the constraint table
        epsilon, delta = float(self.epsilon), None if self.delta is None else float(self.delta)
        private = [step for _, step in self.steps if _is_private(step)]
        if not private:
            raise ValueError("epsilon is set but no step is private (none follows the "
                             "toolkit's private contract): nothing to split it between")
        p = len(private)

        def shares(c):
            for step in private:
                step.set_params(epsilon=c * epsilon / p,
                                **({} if delta is None else {"delta": delta / p}))

        def planned(width):
            events, total_delta = [], 0.0
            for step in private:
                plan = step._privacy_plan(_n_rows(X), width, None)
                if plan.event is None:
                    return None, None
                events.append(plan.event)
                total_delta += plan.delta
            return ComposedEvent(events), total_delta

        shares(1.0)
        try:
            event, total_delta = planned(1000)
            if event is None or event != planned(100000)[0] or not total_delta < 1.0:
                return 1.0
            low, high = 1.0, float(p)
            while high - low > 1e-6 * low:
                mid = 0.5 * (low + high)
                shares(mid)
                event, total_delta = planned(1000)
                if epsilon_of_event(event, total_delta) <= epsilon:
                    low = mid
                else:
                    high = mid
        except (TypeError, ValueError):   # a step cannot plan without its data: basic
            low = 1.0
        shares(low)
        return low

    def _state_guarantee(self):
        events, spends, steps = [], [], []
        for name, step in self.steps:
            if not _is_private(step):
                continue
            spent = getattr(step, "privacy_spent_", None)
            steps.append((name, spent))
            if spent is not None and step.privacy_event_ is not None:
                events.append(step.privacy_event_)
                spends.append(spent)
        self.privacy_steps_ = steps
        self.privacy_event_ = ComposedEvent(events) if events else None
        if not events or self.leaking_steps_ or any(s is None for _, s in steps):
            self.privacy_spent_ = None
            return
        delta = math.fsum(d for _, d in spends)
        basic = math.fsum(e for e, _ in spends)
        accounted = (epsilon_of_event(self.privacy_event_, delta) if delta < 1.0
                     else math.inf)
        self.privacy_spent_ = (float(min(basic, accounted)), float(delta))


def _n_rows(X):
    return int(_num_samples(X))


def make_pipeline(*steps, epsilon=None, delta=None, memory=None, verbose=False):
    """Build a :class:`PrivatePipeline` from estimators, naming the steps as scikit-learn.

    Parameters
    ----------
    *steps : estimators
        As :func:`sklearn.pipeline.make_pipeline`.
    epsilon : float or None, default=None
        A total budget split between the private steps at fit time (see
        :class:`PrivatePipeline`); None: each step keeps its own ``epsilon``.
    delta : float or None, default=None
        A total delta split in equal shares (only with ``epsilon``).
    memory, verbose
        As :func:`sklearn.pipeline.make_pipeline`.

    Returns
    -------
    PrivatePipeline

    Examples
    --------
    >>> from dptoolkit.feature_extraction import DPTfidfVectorizer
    >>> from dptoolkit.linear_model import DPNBLogisticClassifier
    >>> from dptoolkit.pipeline import make_pipeline
    >>> pipe = make_pipeline(DPTfidfVectorizer(), DPNBLogisticClassifier(classes=[0, 1]),
    ...                      epsilon=1.0, delta=1e-5)
    """
    return PrivatePipeline(_name_estimators(steps), epsilon=epsilon, delta=delta,
                           memory=memory, verbose=verbose)
