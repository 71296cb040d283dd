"""The scikit-learn surface every estimator of the toolkit shares.

``__init__`` stores its keyword arguments unchanged (:func:`_store_params`), and a
fitted linear model answers ``decision_function``, ``predict`` and ``predict_proba``
from its margins (:class:`_LinearOutputs` and its classifier and regressor forms),
with the logistic and softmax functions written once.
"""
import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ._docstrings import fill_doc
from ._validation import check_X_y_named


def _has_logistic_loss(est):
    """True for estimators without a ``loss`` parameter (all logistic) and for
    ``loss="logistic"``."""
    return getattr(est, "loss", "logistic") == "logistic"


def _available_if_logistic(fn):
    """``predict_proba`` exists only for the logistic loss (sklearn's available_if)."""
    return available_if(_has_logistic_loss)(fn)


def _sigmoid(v):
    """Logistic function :math:`1/(1 + e^{-v})` as :math:`(1 + \\tanh(v/2))/2`
    (no overflow for large :math:`|v|`)."""
    return 0.5 * (1.0 + np.tanh(0.5 * v))


def _softmax(v):
    """Row-wise softmax of margins of shape (n_samples, n_classes)."""
    v = v - v.max(axis=1, keepdims=True)
    e = np.exp(v)
    return e / e.sum(axis=1, keepdims=True)


def ovr_proba(v):
    """Probabilities of K one-vs-rest logistic models from margins of shape
    (n_samples, n_classes): the K sigmoids normalised to sum to 1 per row (as
    scikit-learn's ``OneVsRestClassifier``; uniform where every sigmoid is 0)."""
    p = _sigmoid(v)
    total = p.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / v.shape[1])


def _store_params(est, params):
    """Store the keyword arguments of ``__init__`` unchanged under their own names.

    scikit-learn's convention: ``__init__`` only stores its arguments (validation
    is in ``fit``), so ``get_params`` and ``clone`` read them back.  ``params`` is
    the ``locals()`` of the ``__init__`` call.
    """
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


def _labels(classes, margins):
    """Class labels from margins: the sign for two classes (positive ->
    ``classes[1]``), the largest column otherwise."""
    if margins.ndim == 2:
        return classes[np.argmax(margins, axis=1)]
    return classes[(margins > 0).astype(int)]


class _LinearOutputs:
    """What the outputs of linear models share: validate X as in ``fit``, then
    ``_margins(X)``, defined by every class using it; sparse input accepted
    (``_accept_sparse``: the formats); ``predict`` maps the margins through
    ``_from_margins`` (the identity for a regressor)."""

    _accept_sparse = True

    def _validated_margins(self, X):
        check_is_fitted(self)
        check_X_y_named(X)
        X = validate_data(self, X, accept_sparse=self._accept_sparse, dtype=np.float64,
                          reset=False)
        return self._margins(X)

    @fill_doc
    def predict(self, X):
        """Predict targets (regression) or class labels (classification).

        %(params_X)s

        Returns
        -------
        ndarray of shape (n_samples,)
            Targets, or labels from ``classes_``.
        """
        return self._from_margins(self._validated_margins(X))

    def _from_margins(self, margins):
        return margins

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class _ClassifierOutputs(_LinearOutputs):
    """``decision_function`` / ``predict`` / ``predict_proba`` of linear classifiers.

    A class using it defines ``_margins(X)`` on the validated X: shape
    (n_samples,) for two classes (positive values predict ``classes_[1]``) or
    (n_samples, n_classes); ``_accept_sparse``, ``_multi_class`` and
    ``_poor_score`` (its scikit-learn tags), and ``_multiclass_proba`` when its
    probabilities over more than two classes are not the plain softmax.
    ``predict_proba`` exists for the logistic loss only.
    """

    _multi_class = False
    _poor_score = False

    @fill_doc
    def decision_function(self, X):
        """Compute the margins of the fitted linear model.

        %(params_X)s

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes), float64
            Two classes: positive values predict ``classes_[1]``.  More classes: one
            column a class, ordered as ``classes_``.
        """
        return self._validated_margins(X)

    def _from_margins(self, margins):
        return _labels(self.classes_, margins)

    @_available_if_logistic
    @fill_doc
    def predict_proba(self, X):
        """Predict class probabilities (logistic loss only).

        %(params_X)s

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns ordered as ``classes_``.
        """
        d = self.decision_function(X)
        if d.ndim == 2:
            return self._multiclass_proba(d)
        p = _sigmoid(d)
        return np.column_stack([1.0 - p, p])

    _multiclass_proba = staticmethod(_softmax)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self._multi_class
        tags.classifier_tags.poor_score = self._poor_score
        return tags


class _RegressorOutputs(_LinearOutputs):
    """``predict`` of linear regressors: the margins."""


def delegated_tags(tags, estimator, *steps):
    """Tags of a meta-estimator whose predictions are ``estimator``'s (as
    scikit-learn's ``Pipeline``): its type and classifier / regressor tags, a
    required target, and sparse input when ``estimator`` and every other step in
    ``steps`` take it.  Unchanged ``tags`` when a step is not an estimator yet
    (its parameters are validated by ``fit``)."""
    import copy

    from sklearn.utils import get_tags

    try:
        inner = get_tags(estimator)
        sparse = inner.input_tags.sparse and all(get_tags(s).input_tags.sparse
                                                 for s in steps)
    except (AttributeError, TypeError, ValueError):
        return tags
    tags.input_tags.sparse = sparse
    tags.estimator_type = inner.estimator_type
    tags.target_tags.required = True
    tags.classifier_tags = copy.deepcopy(inner.classifier_tags)
    tags.regressor_tags = copy.deepcopy(inner.regressor_tags)
    return tags


def estimator_has(attr, fitted="estimator_", unfitted="estimator"):
    """``available_if`` check of a meta-estimator: its fitted model (attribute
    ``fitted``), or before fit its ``unfitted`` parameter, has ``attr``."""
    def check(self):
        return hasattr(getattr(self, fitted, getattr(self, unfitted)), attr)
    return check
