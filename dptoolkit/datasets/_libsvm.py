"""LIBSVM/SVMlight files: :func:`load_libsvm`."""
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ._csr import _index_dtype

__all__ = ["load_libsvm"]


def _binary_labels(y, name="y"):
    classes = np.unique(y)
    if classes.size == 2:
        return (y == classes[1]).astype(np.float64), classes
    return y, classes


def load_libsvm(path, n_features=None, *, binary_labels=True):
    """Load a LIBSVM/SVMlight file (plain or .bz2/.gz) as CSR float64.

    Parameters
    ----------
    path : str or path-like
        File to read, through :func:`sklearn.datasets.load_svmlight_file`.
    n_features : int, optional
        Number of features.  Pass it: some files do not reach their top feature
        index (a1a, a8a.t, a9a.t), and train/test files must agree.
    binary_labels : bool, default=True
        When the file has exactly two distinct labels, map them to {0, 1}
        (the larger label to 1) whatever the coding (-1/+1, 0/1, 1/2, 2/4).
        Other label sets (regression, multiclass) are returned unchanged.

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_samples, n_features), float64
        Canonical CSR (sorted indices).  The ``indices`` and ``indptr`` arrays
        are int32 when the number of stored entries and ``n_features`` fit in
        int32 (as scipy chooses), else int64, so that ``X`` can be passed to
        scikit-learn estimators whose sparse code takes int32 indices only
        (:class:`~sklearn.linear_model.Lasso`,
        :class:`~sklearn.linear_model.ElasticNet`).  dptoolkit's estimators
        accept either.
    y : ndarray of shape (n_samples,), float64

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no LIBSVM file at {path}")
    X, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64,
                              zero_based=False)
    # load_svmlight_file gives int64 index arrays, which scikit-learn's sparse
    # coordinate descent (Lasso, ElasticNet) refuses: int32 when they fit.
    index_dtype = _index_dtype(X.nnz, X.shape[1])
    X = sp.csr_array((X.data, X.indices.astype(index_dtype, copy=False),
                      X.indptr.astype(index_dtype, copy=False)), shape=X.shape)
    if binary_labels:
        y, _ = _binary_labels(y)
    return X, np.asarray(y, dtype=np.float64)
