"""What the feature selectors share: the checks of ``k`` and of a choice, the
validation of ``(X, y)``, the top-k of scores and the sparse-input tag."""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_X_y
from sklearn.utils.validation import validate_data

from .._validation import check_X_y_named

#: The pure-DP top-k selectors (shared with TwoStageSelector).
_SELECTORS = ("canonical_lipschitz", "peeling")


def _check_k_features(k, n_features):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    if not 1 <= k <= n_features - 1:
        raise ValueError(
            f"k must be in [1, n_features - 1] = [1, {n_features - 1}], got {k} "
            f"(n_features = {n_features})")
    return int(k)


def _k_or_all(k, n_features, name):
    """``(k, keep_all)`` of SIS and TwoStageSelector: ``k`` >= 1 an integer; ``k``
    at least ``n_features`` keeps every feature (``keep_all``), with a warning when
    it is above ``n_features``, as scikit-learn's ``SelectKBest`` does.  Keeping
    every feature depends on the public shape only (no data read, no noise)."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    if k < 1:
        raise ValueError(f"k must be in [1, n_features] = [1, {n_features}], got {k} "
                         f"(n_features = {n_features})")
    if k > n_features:
        warnings.warn(f"k={k} is greater than n_features={n_features}: {name} keeps all "
                      "the features", UserWarning, stacklevel=3)
    return int(min(k, n_features)), k >= n_features


def _check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


_SPARSE_FORMATS = ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"]


def _validate_X_y(estimator, X, y):
    """Validate (X, y) for an estimator's fit (sets n_features_in_); CSC for sparse."""
    check_X_y_named(X, y, y_numeric=True)
    if estimator is None:
        X, y = check_X_y(X, y, accept_sparse=_SPARSE_FORMATS, dtype=np.float64,
                         y_numeric=True)
    else:
        X, y = validate_data(estimator, X, y, accept_sparse=_SPARSE_FORMATS,
                             dtype=np.float64, y_numeric=True, reset=True)
    if sp.issparse(X):
        X = sp.csc_array(X)
    return X, np.asarray(y, dtype=np.float64)


class _SelectorTagsMixin:
    """Declare sparse input support to scikit-learn's tags."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _select_top_k(scores, k):
    """Indices of the k largest scores, ties broken by the lower index."""
    order = np.argsort(-scores, kind="stable")
    return np.sort(order[:k])
