r"""Per-block sums through a distributed engine, noise added once on the client.

The pattern of Opacus's distributed optimizer (Yousefpour et al. 2021, Section
3) and of every secure-aggregation DP design: each worker computes the *exact*
sum of the clipped per-example terms of its rows; the client adds the blocks'
sums **in block order** and the caller then adds Gaussian (or Laplace) noise
**once**, from the estimator's own generator.  Consequences:

* The engine never draws noise, so a task that Dask retries after a worker died,
  or runs twice speculatively, returns the same value (every block function here
  is a pure function of its block and of public arguments): nothing it does can
  change what is released.
* The sensitivity of the released sum is the sensitivity of the in-memory sum:
  adding or removing one example changes one block's sum by one clipped term,
  whatever the partition.  Block sizes and the number of blocks are never used as
  ``N`` (a private fit takes the public ``n_samples_public``).
* Summing in a fixed order (block 0, 1, ...) makes a distributed fit
  reproducible: with the same seed it releases the in-memory model up to the
  rounding of the summation order.  The fold
  ``((s_0 + s_1) + s_2) + ...`` runs on the workers as a chain of tasks, so
  the client receives one sum whatever the number of blocks (its memory does
  not grow with them).

Two backends, chosen by the type of ``X``:

* **local**: a NumPy array or SciPy sparse matrix is one block (today's
  in-memory path, bit for bit);
* **Dask**: a :class:`dask.array.Array` chunked along rows only, whose blocks are
  ``scipy.sparse`` CSR matrices (or dense arrays), with ``y`` a 1-D Dask array of
  the same row chunks.  The computation runs on the default scheduler (the
  active :class:`distributed.Client`, if any).

References
----------
A. Yousefpour et al. Opacus: User-Friendly Differential Privacy Library in
PyTorch. 2021 (arXiv:2109.12298), Section 3 (distributed training).
M. Abadi et al. Deep Learning with Differential Privacy. CCS 2016, Algorithm 1
(clipped per-example gradients, one Gaussian noise draw per step).
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax

from ..exceptions import nothing_released

__all__ = ["block_sum", "class_feature_sums", "clipped_gradient_sum", "column_counts",
           "column_sums", "csr_block", "is_dask_array", "map_row_blocks", "row_aligned",
           "unit_rows"]


# ---------------------------------------------------------------- backends
def is_dask_array(X):
    """Whether ``X`` is a :class:`dask.array.Array` (without importing Dask)."""
    cls = type(X)
    return cls.__name__ == "Array" and cls.__module__.split(".")[0] == "dask"


def _check_dask_layout(X):
    """Refuse, naming ``X``, a Dask array that is not 2-D and chunked along rows only
    (whether its row-chunk sizes are known or not)."""
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D Dask array, got ndim={X.ndim}")
    if len(X.chunks[1]) != 1:
        raise ValueError("X must be chunked along rows only (one column chunk), got "
                         f"{len(X.chunks[1])} column chunks; use X.rechunk({{1: -1}})")


def _check_dask_X_y(X, y):
    """Refuse, naming ``X`` or ``y``, a Dask input the primitive cannot use."""
    _check_dask_layout(X)
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown row-chunk sizes; call X.compute_chunk_sizes() "
                         "first (the sizes are only used to align y, never as N)")
    if y is None:
        return
    if not is_dask_array(y):
        raise TypeError("y must be a Dask array when X is one (with X's row chunks), "
                        f"got {type(y).__name__}")
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D Dask array, got ndim={y.ndim}")
    if tuple(y.chunks[0]) != tuple(X.chunks[0]):
        raise ValueError("y must have the same row chunks as X: "
                         f"X.chunks[0]={X.chunks[0]}, y.chunks[0]={y.chunks[0]}; use "
                         "y.rechunk(X.chunks[0])")


def row_aligned(v, X):
    """``v`` (one value per row of X) as a Dask array of X's row chunks if X is one."""
    if not is_dask_array(X):
        return v
    import dask.array as da

    return da.from_array(np.asarray(v), chunks=(X.chunks[0],))


def _blocks(X, y):
    """The row blocks of X (and y) as lists of Dask delayed objects, in order."""
    _check_dask_X_y(X, y)
    xs = list(X.to_delayed()[:, 0])
    ys = [None] * len(xs) if y is None else list(y.to_delayed())
    return xs, ys


def _shared(args):
    """Array arguments as one graph key each, sent once per worker, not once per task."""
    from dask import delayed

    return tuple(delayed(a, pure=True) if isinstance(a, np.ndarray) else a for a in args)


def release_from_workers(client, actors=(), blocks=()):
    """Make the workers forget the ``actors`` (futures of Dask actors) and the
    ``blocks`` (futures of the data they hold) now.

    Releasing an actor's future is not enough: its client-side handle holds
    another future and sits in a reference cycle (with the calls made on it)
    that only the garbage collector breaks, so the actor, with the rows and
    margins it holds, stayed on its worker after the fit.  Cancelling the
    actors' keys (``force=True``) has the scheduler release them whoever refers
    to them; the blocks (which the actors depend on) are then released.  Best
    effort: a cluster already gone raises nothing here (this runs in the
    ``finally`` of a fit, whose own error must not be masked).
    """
    actors = [f for f in actors if f is not None]
    try:
        if actors:
            client.cancel(actors, force=True)
        for f in blocks:
            f.release()
    except Exception:   # the scheduler is unreachable: its workers hold nothing of ours
        pass


def _compute(tasks, what):
    """Compute Dask tasks on the default scheduler; a lost worker is a clear error."""
    import dask

    try:
        return dask.compute(*tasks)
    except Exception as exc:
        if type(exc).__name__ != "KilledWorker":
            raise
        raise _workers_died(what) from exc


def _workers_died(what, mid_fit=False):
    """The error of a fit whose workers died more often than the scheduler allows."""
    drawn = ("The noise drawn so far entered only iterates that are discarded: "
             if mid_fit else "No noise was drawn and ")
    return nothing_released(RuntimeError(
        f"the Dask workers computing {what} died repeatedly, so the scheduler "
        "stopped retrying the task (distributed.scheduler.allowed-failures).  "
        f"{drawn}nothing was released or charged; fix the workers and fit again."))


def block_sum(func, X, y=None, args=(), *, what="the per-block sums"):
    """Sum ``func(X_b, y_b, *args)`` over the row blocks of X, on the client.

    Parameters
    ----------
    func : callable
        A **pure**, picklable (module-level) function of one row block
        ``X_b`` (CSR or dense), its labels ``y_b`` (or None) and public ``args``,
        returning a float64 ndarray whose shape does not depend on the block.  It
        must not draw random numbers.
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)
        In memory: one block.  Dask: chunked along rows only.
    y : array-like or dask.array.Array of shape (n_samples,) or None
        With a Dask ``X``, a Dask array with the same row chunks.
    args : tuple
        Public arguments passed to every call.
    what : str
        Named in the error raised when the workers are lost.

    Returns
    -------
    total : ndarray
        The exact sum (no noise), blocks added in block order.

    Raises
    ------
    ValueError
        A Dask ``X`` not chunked along rows only or with unknown chunk sizes;
        ``y`` with other chunks.
    RuntimeError
        Dask workers died repeatedly computing a block (``KilledWorker``).
    """
    if not is_dask_array(X):
        return np.asarray(func(X, y, *args), dtype=np.float64)
    from dask import delayed

    xs, ys = _blocks(X, y)
    fn = delayed(func, pure=True)
    add = delayed(_add, pure=True)
    args = _shared(args)
    parts = [fn(xb, yb, *args) for xb, yb in zip(xs, ys)]
    total = add(parts[0], None)
    for part in parts[1:]:  # block order: reproducible rounding
        total = add(total, part)
    # the fold runs on the workers: the client receives one sum, not one per block
    return np.asarray(_compute([total], what)[0], dtype=np.float64)


def _add(total, part):
    """``total + part`` in float64 (a new array): one link of the block-order fold."""
    total = np.array(total, dtype=np.float64)
    if part is not None:
        total += part
    return total


def map_row_blocks(func, X, args=(), *, what="the transformed rows"):
    """``func`` applied to every row block of X on the workers, stacked on the client.

    For a local transformation whose output is much smaller than X (the
    ``k`` kept columns of a model), so that X itself is never gathered.

    Parameters
    ----------
    func : callable
        Pure, picklable function ``func(X_b, *args)`` returning a sparse matrix
        or 2-D array with one row per row of ``X_b``.
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)
    args : tuple
    what : str

    Returns
    -------
    out : CSR array or ndarray with ``n_samples`` rows, in the order of X's rows.
    """
    if not is_dask_array(X):
        return func(X, *args)
    from dask import delayed

    xs, _ = _blocks(X, None)
    fn = delayed(func, pure=True)
    args = _shared(args)
    parts = _compute([fn(xb, *args) for xb in xs], what)
    if not any(sp.issparse(p) for p in parts):
        return np.vstack(parts)
    out = sp.vstack(parts, format="csr")
    # vstack may narrow the index dtype; keep the blocks' (kernels want int64)
    index = np.result_type(*(p.indices.dtype for p in parts if sp.issparse(p)))
    out.indices = out.indices.astype(index, copy=False)
    out.indptr = out.indptr.astype(index, copy=False)
    return out


# ------------------------------------------------------- block functions
def csr_block(Xb):
    """A row block as float64 CSR with summed duplicates; NaN/inf refused (naming X)."""
    Xb = sp.csr_array(Xb, dtype=np.float64)
    if not np.isfinite(Xb.data).all():
        raise ValueError("Input X contains NaN or infinity.")
    return Xb


def unit_rows(X):
    """CSR copy of X with every non-zero row scaled to L2 norm 1 (zero rows kept)."""
    X = sp.csr_array(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    scale = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
    X.data *= np.repeat(scale, np.diff(X.indptr))
    return X


def _class_sums_block(Xb, yb, classes, normalize_rows):
    Xb = csr_block(Xb)
    if normalize_rows:
        Xb = unit_rows(Xb)
    yb = np.asarray(yb)
    return np.vstack([np.asarray(Xb[yb == c].sum(axis=0)).ravel() for c in classes])


def _column_sums_block(Xb, yb, normalize_rows):
    Xb = csr_block(Xb)
    if normalize_rows:
        Xb = unit_rows(Xb)
    return np.asarray(Xb.sum(axis=0), dtype=np.float64).ravel()


def _column_counts_block(Xb, yb):
    Xb = csr_block(Xb)
    Xb.eliminate_zeros()
    return np.bincount(Xb.indices, minlength=Xb.shape[1]).astype(np.float64)


def _gradient_block(Xb, yb, coef, intercept, clip):
    """Sum over the block of the per-example log-loss gradients clipped to L2 norm
    ``clip``, as a (K, n_features + 1) array (last column: the intercept)."""
    Xb = csr_block(Xb)
    labels = np.asarray(yb)
    n_labels = max(2, coef.shape[0])
    yb = labels.astype(np.int64) if labels.dtype.kind in "biuf" else None
    if yb is None or np.any(yb != labels) or np.any((yb < 0) | (yb >= n_labels)):
        raise ValueError(f"y must hold class indices in [0, {n_labels}) (integers), got "
                         "other values")
    margins = np.asarray(Xb @ coef.T) + intercept[None, :]
    if coef.shape[0] == 1:          # binary logistic, y in {0, 1}
        resid = expit(margins) - yb[:, None]
    else:                           # multinomial, y a class index in [0, K)
        resid = softmax(margins, axis=1)
        resid[np.arange(yb.size), yb] -= 1.0
    # ||resid (x, 1)^T||_F = ||resid|| * sqrt(||x||^2 + 1)
    xnorm2 = np.asarray(Xb.multiply(Xb).sum(axis=1)).ravel()
    norms = np.sqrt((resid ** 2).sum(axis=1) * (xnorm2 + 1.0))
    scale = np.minimum(1.0, clip / np.where(norms > 0, norms, 1.0))
    resid *= scale[:, None]
    grad = np.asarray((Xb.T @ resid).T)
    return np.hstack([grad, resid.sum(axis=0)[:, None]])


# ------------------------------------------------------------- primitives
def class_feature_sums(X, y, classes, *, normalize_rows=False):
    r"""Exact per-class feature sums :math:`S_c = \sum_{i: y_i = c} x_i` (no noise).

    With ``normalize_rows`` every row is first scaled to L2 norm 1, so adding or
    removing one example changes the stacked sums by L2 norm at most 1: the
    caller adds ``N(0, sigma^2)`` to every entry for the Gaussian mechanism
    (Mironov 2017, Proposition 7).

    Parameters
    ----------
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)
    y : array-like or dask.array.Array of shape (n_samples,)
    classes : array-like of shape (n_classes,)
        Public labels; rows whose label is in none of them count nowhere.
    normalize_rows : bool, default=False

    Returns
    -------
    sums : ndarray of shape (n_classes, n_features), float64

    Raises
    ------
    ValueError
        X holds NaN or infinity; a Dask X or y that is not chunked as required.
    RuntimeError
        Dask workers died repeatedly.
    """
    return block_sum(_class_sums_block, X, y, (np.asarray(classes), bool(normalize_rows)),
                     what="the per-class feature sums")


def column_sums(X, *, normalize_rows=False):
    """Exact column sums of X (optionally of its rows scaled to L2 norm 1).

    Parameters
    ----------
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)
    normalize_rows : bool, default=False

    Returns
    -------
    sums : ndarray of shape (n_features,), float64
    """
    return block_sum(_column_sums_block, X, None, (bool(normalize_rows),),
                     what="the column sums")


def column_counts(X):
    """Exact number of non-zero entries of every column (document frequencies).

    One example changes every count by at most 1 (L1 sensitivity: its number of
    non-zeros; L2: its square root).

    Parameters
    ----------
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)

    Returns
    -------
    counts : ndarray of shape (n_features,), float64
    """
    return block_sum(_column_counts_block, X, None, (), what="the column counts")


def clipped_gradient_sum(X, y, coef, intercept, *, clip):
    r"""Exact sum of per-example log-loss gradients, each clipped to L2 norm ``clip``.

    The per-example gradient of the log loss at ``(coef, intercept)`` is
    :math:`(p_i - e_{y_i}) (x_i, 1)^\top` (binary: :math:`\sigma(m_i) - y_i`);
    its Frobenius norm is clipped to ``clip`` (Abadi et al. 2016, Algorithm 1), so
    adding or removing one example changes the sum by L2 norm at most ``clip``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)
    y : array-like or dask.array.Array of shape (n_samples,), int
        In {0, 1} when ``coef`` has one row; a class index in [0, K) otherwise.
    coef : ndarray of shape (K, n_features)
    intercept : ndarray of shape (K,)
    clip : float
        Clipping norm C > 0.

    Returns
    -------
    grad : ndarray of shape (K, n_features + 1), float64
        Last column: the intercept's gradient.

    Raises
    ------
    ValueError
        ``clip`` not > 0, ``coef`` / ``intercept`` of the wrong shape.
    """
    coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    intercept = np.asarray(intercept, dtype=np.float64).reshape(-1)
    if coef.shape[1] != X.shape[1] or intercept.shape != (coef.shape[0],):
        raise ValueError(f"coef must have shape (K, {X.shape[1]}) and intercept (K,), got "
                         f"{coef.shape} and {intercept.shape}")
    if not (np.isfinite(clip) and clip > 0):
        raise ValueError(f"clip must be a finite number > 0, got {clip!r}")
    return block_sum(_gradient_block, X, y, (coef, intercept, float(clip)),
                     what="the clipped gradient sums")
