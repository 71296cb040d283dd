"""DP-SIS's score sums over row blocks (clipped to the public bounds, centred,
optionally scaled to a public L2 norm) and the broadcasting of the bounds; the
same functions run in memory and on each block of a Dask array; and the
constraints of the bounds (``BOUNDS``, ``CENTER``)."""
import numpy as np
import scipy.sparse as sp

from .._validation import Checked, Options


def _column_sums(X, w):
    """X^T w for dense or sparse X."""
    return np.asarray(X.T @ w).ravel()


def _bounded_sums_block(X, yt, lo, hi, c):
    """``sum_n (clip(x_n, lo, hi) - c) yt_n`` over a row block, and (last entry) the
    number of its values outside the bounds; a pure function of the block."""
    n, d = X.shape
    yt = np.asarray(yt, dtype=np.float64)
    total = yt.sum()
    if sp.issparse(X):
        X = sp.csc_array(X, dtype=np.float64)
        if not np.isfinite(X.data).all():
            raise ValueError("Input X contains NaN or infinity.")
        data = X.data
        cols = np.repeat(np.arange(d), np.diff(X.indptr))
        clipped = np.clip(data, lo[cols], hi[cols])
        zero = np.clip(0.0, lo, hi)                 # value of implicit zeros
        nnz_col = np.diff(X.indptr)
        outside = np.sum(clipped != data) + np.sum((zero != 0.0) & (nnz_col < n))
        Xc = sp.csc_array((clipped, X.indices, X.indptr), shape=X.shape)
        pattern = sp.csc_array((np.ones_like(data), X.indices, X.indptr), shape=X.shape)
        stored = _column_sums(Xc, yt)
        raw = stored + zero * (total - _column_sums(pattern, yt)) - c * total
    else:
        X = np.asarray(X, dtype=np.float64)
        if not np.isfinite(X).all():
            raise ValueError("Input X contains NaN or infinity.")
        clipped = np.clip(X, lo, hi)
        outside = np.sum(clipped != X)
        raw = _column_sums(clipped, yt) - c * total
    return np.append(raw, float(outside))


def _row_bounded_sums_block(X, yt, lo, hi, c, data_norm):
    """``sum_n B yt_n m_n / ||m_n||_2`` over a row block, with ``m_n = (clip(x_n, lo,
    hi) - c) / scale`` the public mapping of row n (zero rows contribute 0), and (last
    entry) the number of its values outside the bounds; a pure function of the block.
    The entries are in the units of the mapped data (``_bounded_sums_block`` divided
    by ``scale`` afterwards)."""
    n, d = X.shape
    scale = np.maximum(hi - c, c - lo)
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        if not np.isfinite(X.data).all():
            raise ValueError("Input X contains NaN or infinity.")
        cols = X.indices
        zero = (np.clip(0.0, lo, hi) - c) / scale   # mapped value of implicit zeros
        mapped = (np.clip(X.data, lo[cols], hi[cols]) - c[cols]) / scale[cols]
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        # ||m_n||^2 = sum over the stored entries + sum of zero^2 over the others
        # (float: bincount of an empty block would be int64)
        sq = np.bincount(rows, weights=mapped**2 - zero[cols]**2,
                         minlength=n).astype(np.float64)
        sq += np.dot(zero, zero)
    else:
        X = np.asarray(X, dtype=np.float64)
        if not np.isfinite(X).all():
            raise ValueError("Input X contains NaN or infinity.")
        sq = np.einsum("ij,ij->i", *(2 * [(np.clip(X, lo, hi) - c) / scale]))
    norm = np.sqrt(np.maximum(sq, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(norm > 0, data_norm * np.asarray(yt, dtype=np.float64) / norm, 0.0)
    out = _bounded_sums_block(X, w, lo, hi, c)
    out[:-1] /= scale
    return out


def _broadcast_bounds(bounds, d, name):
    if not (isinstance(bounds, (tuple, list)) and len(bounds) == 2):
        raise ValueError(f"{name} must be a pair (low, high) or 'data', got {bounds!r}")
    try:
        lo = np.broadcast_to(np.asarray(bounds[0], dtype=np.float64), (d,))
        hi = np.broadcast_to(np.asarray(bounds[1], dtype=np.float64), (d,))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must hold scalars or arrays of shape ({d},)") from exc
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"{name} must be finite")
    if np.any(lo >= hi):
        raise ValueError(f"{name}: every low must be < high")
    return lo, hi


def _broadcast_center(center, lo, hi, name):
    if center is None:
        return 0.5 * (lo + hi)
    try:
        c = np.broadcast_to(np.asarray(center, dtype=np.float64), lo.shape)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must be a scalar or an array of shape {lo.shape}") from exc
    if np.any(~np.isfinite(c)) or np.any(c < lo) or np.any(c > hi):
        raise ValueError(f"{name} must be finite and lie within the bounds")
    return c


def _check_bound_pair(value):
    if isinstance(value, (str, bytes)) or len(value) != 2:
        raise TypeError("not a pair")
    np.asarray(value[0], dtype=np.float64), np.asarray(value[1], dtype=np.float64)


def _check_reals(value):
    np.asarray(value, dtype=np.float64)


#: Public bounds: "data" (not private, warned) or a pair (low, high) of floats or of
#: per-feature arrays (their shapes and low < high are checked against the data).
BOUNDS = [Options("data"), Checked(_check_bound_pair, "'data' or a pair (low, high) of "
                                                      "floats or of arrays of floats")]
CENTER = [None, Checked(_check_reals, "None, a float or an array of floats")]
