"""Public-bound clipping (:func:`clip_rows`) and data-derived scaling (``scale_by_max_abs``).

Clipping every example to a public norm bound is a per-example operation and
costs no privacy; scaling by the data's own maximum does not, and warns with
:class:`~dptoolkit.exceptions.PrivacyLeakWarning`.
"""
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import MaxAbsScaler

from .._validation import check_scalar_range
from ..exceptions import PrivacyLeakWarning

__all__ = ["clip_rows", "scale_by_max_abs"]

_NORMS = ("inf", "l2", "l1")


def _check_X_numeric(X, name="X"):
    """Return (float64 copy of X: CSR array if sparse, else ndarray; is_sparse)."""
    is_sparse = sp.issparse(X)
    arr = X if is_sparse else np.asarray(X)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features), "
                         f"got {arr.ndim} dimension(s)")
    if is_sparse:
        M = sp.csr_array(arr, dtype=np.float64, copy=True)
        M.sum_duplicates()
    else:
        M = np.array(arr, dtype=np.float64, copy=True)
    if not np.all(np.isfinite(M.data if is_sparse else M)):
        raise ValueError(f"{name} contains NaN or infinity")
    return M, is_sparse


def clip_rows(X, bound=1.0, norm="inf"):
    """Clip every example to a public norm bound; return a copy and a count.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Examples, one per row.  Any scipy.sparse format.
    bound : float, default=1.0
        The public bound, ``0 < bound < inf``.  It must not be derived from
        ``X`` (that would leak; see ``scale_by_max_abs``).
    norm : {"inf", "l2", "l1"}, default="inf"
        ``"inf"``: every entry is clipped to ``[-bound, bound]``, so
        ``||x_i||_inf <= bound``.  ``"l2"``/``"l1"``: rows whose norm exceeds
        ``bound`` are scaled down to norm ``bound`` (direction kept), so
        ``||x_i||_2 <= bound`` (resp. ``||x_i||_1 <= bound``).

    Returns
    -------
    X_clipped : ndarray or scipy.sparse.csr_array of shape (n_samples, n_features)
        float64 copy; dense input gives an ndarray, sparse input a CSR array.
        ``X`` is not modified.
    n_clipped : int
        Number of rows that were changed.

    Raises
    ------
    ValueError
        If ``bound`` is not in (0, inf), ``norm`` is unknown, ``X`` is not
        2-D or contains NaN or infinity.
    TypeError
        If ``X`` is not numeric or ``bound`` is not a real number.

    Notes
    -----
    Clipping acts on each example alone, so it does not weaken a
    differential-privacy guarantee computed for data satisfying the bound:
    it is how such a bound is enforced rather than assumed.
    """
    bound = check_scalar_range(bound, "bound", low=0.0, low_open=True)
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {_NORMS}, got {norm!r}")
    M, is_sparse = _check_X_numeric(X)
    n = M.shape[0]
    if norm == "inf":
        if is_sparse:
            over = np.abs(M.data) > bound
            row_of = np.repeat(np.arange(n), np.diff(M.indptr))
            n_clipped = np.unique(row_of[over]).size
            np.clip(M.data, -bound, bound, out=M.data)
        else:
            n_clipped = int(np.count_nonzero((np.abs(M) > bound).any(axis=1)))
            np.clip(M, -bound, bound, out=M)
        return M, int(n_clipped)

    order = 2 if norm == "l2" else 1
    if is_sparse:
        sq = M.data**2 if order == 2 else np.abs(M.data)
        row_of = np.repeat(np.arange(n), np.diff(M.indptr))
        norms = np.bincount(row_of, weights=sq, minlength=n)
        norms = np.sqrt(norms) if order == 2 else norms
    else:
        norms = np.linalg.norm(M, ord=order, axis=1)
    over = norms > bound
    scale = np.ones(n)
    scale[over] = bound / norms[over]
    # Rounding can leave a scaled row a few ulps above the bound: shrink those
    # by a relative 4 eps so that the bound holds exactly in floating point.
    scale[over] *= 1.0 - 4 * np.finfo(np.float64).eps
    if is_sparse:
        M.data *= np.repeat(scale, np.diff(M.indptr))
    else:
        M *= scale[:, None]
    return M, int(np.count_nonzero(over))


def scale_by_max_abs(X, *, per_feature=True):
    """Scale by the data's maximum absolute values (data-derived: leaks).

    Divides each column (or the whole matrix) by its largest absolute value,
    so that every entry lands in [-1, 1] and sparsity is kept, as
    :class:`sklearn.preprocessing.MaxAbsScaler` does.

    .. warning::
       The scale is a statistic of the private data: it can reveal an
       outlying example, and a differential-privacy guarantee computed for
       ``||x_i||_inf <= 1`` does not cover it.  Use it only for non-private
       baselines or when the scale is public; otherwise use a public bound
       with :func:`clip_rows`.  A :class:`~dptoolkit.exceptions.PrivacyLeakWarning`
       is issued on every call.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Data to scale.  Any scipy.sparse format.
    per_feature : bool, default=True
        True: one scale per column.  False: one scale for the whole matrix
        (keeps the relative size of the columns).

    Returns
    -------
    X_scaled : ndarray or scipy.sparse.csr_array of shape (n_samples, n_features)
        float64 copy, entries in [-1, 1]; dense input gives an ndarray,
        sparse input a CSR array.
    scale : ndarray of shape (n_features,), float64
        The divisors (1 for all-zero columns), to apply the same scaling to
        test data: ``X_test / scale``.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has no sample or no feature, or contains NaN or
        infinity.
    TypeError
        If ``X`` is not numeric or ``per_feature`` not a bool.

    Warns
    -----
    PrivacyLeakWarning
        Always: the scale is derived from the data.
    """
    if not isinstance(per_feature, (bool, np.bool_)):
        raise TypeError(f"per_feature must be a bool, got {type(per_feature).__name__}")
    M, is_sparse = _check_X_numeric(X)
    if M.shape[0] == 0 or M.shape[1] == 0:
        raise ValueError("X must have at least one sample and one feature to take a scale "
                         f"from, got shape {M.shape}")
    warnings.warn(
        "scale_by_max_abs derives its scale from the data; the result is not "
        "covered by a privacy guarantee that assumes a public bound (use clip_rows "
        "with a public bound instead)", PrivacyLeakWarning, stacklevel=2)
    scaler = MaxAbsScaler(copy=False).fit(M)
    scale = np.asarray(scaler.scale_, dtype=np.float64)
    if not per_feature:
        top = float(scaler.max_abs_.max()) if scaler.max_abs_.size else 0.0
        scale = np.full(M.shape[1], top if top > 0 else 1.0)
        scaler.scale_ = scale
    X_scaled = scaler.transform(M)
    if is_sparse:
        X_scaled = sp.csr_array(X_scaled)
    return X_scaled, scale
