"""CSR conventions shared by the loaders and the generators."""
import numpy as np


def _index_dtype(nnz, n_features):
    """int32 when the CSR index arrays fit in it (scipy's own rule), else int64.

    scikit-learn's Cython estimators for sparse input (e.g. Lasso and
    ElasticNet) accept int32 indices only; dptoolkit's kernels convert to int64
    themselves.
    """
    return np.int32 if max(nnz, n_features) < np.iinfo(np.int32).max else np.int64
