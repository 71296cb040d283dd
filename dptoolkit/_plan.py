"""The plan of a private fit: what it will release and charge, before any work.

Every private estimator of the toolkit computes its privacy event from public
quantities only (hyper-parameters, the public dataset size, the number of
features, the declared label set): that computation is its
``_privacy_plan(n_samples, n_features, classes)`` method
(:class:`~dptoolkit._private.PrivateEstimatorMixin`), which ``fit`` calls first
and which :func:`~dptoolkit._private.plan_spend`, the select-then-fit pipeline,
the private search and the command line call directly, without a fit.  It
returns a :class:`PrivacyPlan`: the event, the accountant's (epsilon, delta) for
it, and the estimator's validated and derived parameters as a frozen dataclass
(noise multipliers, sampling rate, number of steps, ``l1_bound``, ...), which the
fit then uses, so that validation and calibration happen once on the path.
"""
import dataclasses

import numpy as np

from ._validation import check_classes, check_positive_int, validate_params

__all__ = ["PrivacyPlan", "plan_spend"]


@dataclasses.dataclass(frozen=True)
class PrivacyPlan:
    """The privacy event and spend of a fit, and the parameters it runs with.

    Attributes
    ----------
    event : PrivacyEvent or None
        The event the fit releases (``privacy_event_``); None for a non-private fit.
    epsilon, delta : float or None
        The accountant's figure for ``event`` (``privacy_spent_``); None for a
        non-private fit.
    params : frozen dataclass or None
        The estimator's validated and derived parameters (its own class).
    """
    event: object
    epsilon: object
    delta: object
    params: object = None

    @property
    def spent(self):
        """``(epsilon, delta)``, or None for a non-private fit."""
        return None if self.epsilon is None else (self.epsilon, self.delta)


def plan_spend(estimator, X=None, y=None, *, n_samples=None, n_features=None, classes=None):
    """The ``(privacy_event_, privacy_spent_)`` a fit would record, without fitting.

    Calls the estimator's ``_privacy_plan``
    (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`) with the
    shape of ``X`` (a public stand-in such as zeros will do: only ``X.shape`` is
    read) or ``n_samples`` and ``n_features``, and the label set (``classes``, else
    the declared ``classes``, else the labels of ``y``, as in a fit).  ``fit`` is
    never called: no mechanism runs, nothing is charged and ``estimator`` is not
    modified.  Warnings of the planning (a PrivacyLeakWarning for a size or a
    label set not declared public) are emitted as in a fit.

    Parameters
    ----------
    estimator : PrivateEstimatorMixin
        Unfitted private estimator or selector.
    X : {array-like, sparse matrix} of shape (n_samples, n_features), optional
    y : array-like of shape (n_samples,), optional
    n_samples, n_features : int, optional
        The shape, without ``X``.
    classes : array-like of shape (n_classes,), optional
        The label set, without ``y``.

    Returns
    -------
    event : PrivacyEvent or None
    spent : tuple (epsilon, delta) or None
        ``(None, None)`` for a non-private fit.

    Raises
    ------
    TypeError
        ``estimator`` does not follow the private-estimator contract or does not
        implement ``_privacy_plan``.
    ValueError
        No shape given, or a parameter ``fit`` would refuse.
    """
    if not callable(getattr(estimator, "_privacy_plan", None)):
        raise TypeError(f"{type(estimator).__name__} does not follow the private-"
                        "estimator contract (dptoolkit._private.PrivateEstimatorMixin)")
    if X is not None:
        n_samples, n_features = X.shape if hasattr(X, "shape") else np.shape(X)
    if n_samples is None or n_features is None:
        raise ValueError("plan_spend needs X (a stand-in of the right shape) or "
                         "n_samples and n_features")
    n_samples = check_positive_int(n_samples, "n_samples")
    n_features = check_positive_int(n_features, "n_features")
    if getattr(type(estimator), "_parameter_constraints", None) is not None:
        validate_params(estimator)
    if classes is not None:
        classes = check_classes(classes)
    elif y is not None:
        classes = estimator._label_set(y)
    plan = estimator._privacy_plan(n_samples, n_features, classes)
    return plan.event, plan.spent
