"""The private fit as a template: one sequence, the estimator supplies the steps.

:meth:`FitTemplate.fit` runs, for every private estimator and selector of the
toolkit (as scikit-learn's ``_fit_context`` runs parameter validation around a
fit):

1. the parameters, against the estimator's ``_parameter_constraints`` (the one
   place their types and ranges are declared; :func:`~dptoolkit._validation.
   validate_params`);
2. the data and the public label set: :meth:`FitTemplate._validate_fit_data`
   (``(X, y, classes)``; a classifier's default reads the declared ``classes``);
3. the plan, from public quantities only: the estimator's
   ``_privacy_plan(n_samples, n_features, classes)``, then the public bound on
   the rows (``_public_bound``) and the rules between the plan and the data
   (:meth:`FitTemplate._check_fit_data`);
4. the spend, checked against the accountant before any work
   (``_check_spend``: a :class:`~dptoolkit.exceptions.BudgetExceededError` runs
   nothing);
5. the noise stream (``_noise_rng``: a parent's child stream, else
   ``random_state``; never stored);
6. the estimator's work: ``_fit_private(X, y, plan, rng)``, which sets the fitted
   attributes from ``plan.params`` (a classifier's ``classes_``, the public label
   set, is set before it);
7. the spend, recorded (``privacy_event_``, ``privacy_spent_``, the ledger).

The template is wrapped in :func:`~dptoolkit._private._guard.guarded_fit`: a fit
that raises keeps no fitted attribute, and one that raises after step 5 is
charged its planned event.  An estimator writes its constraints, its plan and
its work; it overrides ``fit`` only for its docstring (``return super().fit(X,
y)``).
"""
import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import validate_data

from ._guard import guarded_fit
from .._validation import validate_params

__all__ = ["FitTemplate"]


class FitTemplate:
    """The sequence of a private fit (see the module); mixed into
    :class:`~dptoolkit._private.PrivateEstimatorMixin`."""

    #: The public bound on the rows of ``X`` that a private fit enforces after its
    #: plan and before its spend (clipped with a DataClippedWarning, or refused
    #: with ``clip_data=False``): None, or ``(norm, bound)`` with norm ``"linf"``
    #: or ``"l2"`` and bound a float or the name of the parameter that holds it.
    _public_bound = None

    @guarded_fit
    def fit(self, X, y=None, **fit_params):
        """Fit privately: parameters -> data -> plan -> spend check -> noise -> work ->
        spend.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
        **fit_params
            Passed to the estimator's ``_fit_private``.

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError
            A parameter outside its declared constraints (named).
        BudgetExceededError
            The accountant cannot pay; nothing ran.
        """
        validate_params(self)
        X, y, classes = self._validate_fit_data(X, y)
        if classes is not None:         # the public label set (the work reads classes_)
            self.classes_ = classes
        plan = self._privacy_plan(*self._fit_shape(X), classes)
        X = self._check_fit_data(X, plan)
        self._check_spend(plan.event, plan.spent)
        self._fit_private(X, y, plan, self._noise_rng(), **fit_params)
        return self._record_spend(plan.event, plan.spent)

    def _validate_fit_data(self, X, y):
        """``(X, y, classes)`` of a fit: the data validated and the label set.

        A classifier (scikit-learn's ``is_classifier``): float64, finite, sparse
        accepted, and its public label set (``_classifier_data``).  Otherwise
        ``X`` as a float64 CSR or dense array, ``y`` untouched and no label set.
        Override for other inputs (Dask arrays, text, a public bound to enforce
        before the plan).
        """
        if is_classifier(self):
            return self._classifier_data(X, y)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64), y, None

    def _fit_shape(self, X):
        """``(n_samples, n_features)`` the plan is made for: ``X.shape``."""
        return X.shape[0], X.shape[1]

    def _check_fit_data(self, X, plan):
        """``X`` within the public bound (``_public_bound``, private fits only) and
        the rules between the plan and the data (e.g. what a Dask array supports),
        before the spend is checked.  Override to add rules; raises ValueError."""
        if self._public_bound is None or plan.spent is None:
            return X
        norm, bound = self._public_bound
        if isinstance(bound, str):      # the parameter holding it (declared, validated)
            bound = self.get_params(deep=False)[bound]
        return self._enforce_public_bound(X, norm, bound)

    def _fit_private(self, X, y, plan, rng):
        """The estimator's work: the mechanism on ``X`` (and ``y``) with the validated
        and derived parameters ``plan.params`` and the noise generator ``rng`` (keep
        it local); sets the fitted attributes.  Its return value is ignored."""
        raise TypeError(f"{type(self).__name__} follows the private-estimator template "
                        "but does not implement _fit_private(X, y, plan, rng)")
