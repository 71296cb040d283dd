"""Checks of a Dask input before a distributed fit (nothing of X is gathered).

A Dask array built from a :class:`dask.bag.Bag` (dask-ml's ``HashingVectorizer``,
``Bag.map_partitions``) or from a dask DataFrame has unknown row-chunk sizes
(``nan``).  :func:`align_dask_X_y` learns them in one pass over the blocks, only to
align the labels with X's rows: the counts stay on the client and are never used
as the dataset size N of a private fit (which takes the public
``n_samples_public``).
"""
import numpy as np

from ._blocksum import _check_dask_layout, _check_dask_X_y, _compute, is_dask_array, \
    row_aligned

__all__ = ["align_dask_X_y", "validate_dask_X_y"]


def _is_dask_frame(y):
    """Whether ``y`` is a dask DataFrame or Series (without importing Dask)."""
    cls = type(y)
    return cls.__name__ in ("Series", "DataFrame") and \
        cls.__module__.split(".")[0] == "dask"


def _n_rows(block):
    """Rows of one block of X (run on a worker; only the count comes back)."""
    return int(block.shape[0])


def _labels(part):
    """One partition of y (ndarray, pandas Series or one-column DataFrame) as 1-D."""
    labels = np.asarray(part)
    return labels.reshape(-1) if labels.ndim == 2 and labels.shape[1] == 1 else labels


def _label_parts(y, n_blocks):
    """The partitions of ``y`` as delayed objects, one per row block of X, or None
    when ``y`` is a Dask array of X's (known) row chunks; refuses, naming ``y``,
    labels that cannot be aligned with X's rows."""
    if _is_dask_frame(y):
        if y.ndim == 2 and len(y.columns) != 1:
            raise ValueError("y must be a dask Series or a one-column dask DataFrame, "
                             f"got a DataFrame of {len(y.columns)} columns")
        n_parts, kind = y.npartitions, "partitions"
    elif is_dask_array(y):
        if y.ndim != 1:
            raise ValueError(f"y must be a 1-D Dask array, got ndim={y.ndim}")
        n_parts, kind = y.numblocks[0], "chunks"
    else:
        raise TypeError("y must be a Dask array (or a dask Series / one-column "
                        "DataFrame) when X is one, with one chunk or partition per row "
                        f"block of X; got {type(y).__name__}")
    if n_parts != n_blocks:
        raise ValueError(f"y must have one chunk or partition per row block of X: y has "
                         f"{n_parts} {kind}, X has {n_blocks} row blocks (build X and y "
                         "from the same dask.bag or dask DataFrame, or give y as a Dask "
                         "array of X's row chunks)")
    # unoptimised graphs: the keys they share with X stay the same, computed once
    return list(y.to_delayed(optimize_graph=False))


def align_dask_X_y(X, y):
    """X with known row-chunk sizes and y a Dask array of X's row chunks.

    X and y come from one collection (a :class:`dask.bag.Bag` hashed by dask-ml's
    ``HashingVectorizer`` and its labels, a dask DataFrame's text and label
    columns): y's i-th chunk or partition labels the rows of X's i-th row block.
    When X's row-chunk sizes are unknown, or y is a dask DataFrame/Series or a
    Dask array of unknown chunks, one pass on the workers computes every block's
    row count together with y's partitions (a collection both come from is read
    once); only the counts and the labels come to the client.  The counts align
    the labels with the blocks; they are never the dataset size N of a private
    fit, which takes the public ``n_samples_public``.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Chunked along rows only (one column chunk); row-chunk sizes known or
        ``nan``.
    y : dask.array.Array of shape (n_samples,), dask Series or one-column dask DataFrame
        One chunk or partition per row block of X, each as long as its block.

    Returns
    -------
    X : dask.array.Array
        X itself when its row-chunk sizes are known; otherwise a new array on the
        same graph with the computed sizes (the argument is not modified).
    y_local : ndarray of shape (n_samples,)
        The labels, gathered (a fit needs them on the client).
    y : dask.array.Array of shape (n_samples,)
        y itself when it is a Dask array of X's row chunks; otherwise ``y_local``
        as a Dask array of X's row chunks.

    Raises
    ------
    ValueError
        X not 2-D or not chunked along rows only; y not 1-D (a DataFrame of more
        than one column), with another number of chunks or partitions than X
        has row blocks, or a chunk or partition of another length than its block
        of X; y a Dask array of known chunks other than X's (known) ones.
    TypeError
        y neither a Dask array nor a dask Series or DataFrame.
    RuntimeError
        Dask workers died repeatedly during the pass.
    """
    _check_dask_layout(X)
    x_known = not any(np.isnan(c) for c in X.chunks[0])
    if x_known and is_dask_array(y) and not np.isnan(y.shape).any():
        _check_dask_X_y(X, y)          # known chunks: they must be X's
        return X, np.asarray(y.compute()), y
    parts = _label_parts(y, X.numblocks[0])
    from dask import delayed

    n_rows = X.chunks[0] if x_known else [
        delayed(_n_rows, pure=True)(b) for b in X.to_delayed(optimize_graph=False)[:, 0]]
    labels = [delayed(_labels, pure=True)(p) for p in parts]
    # one pass: the blocks' row counts and y's partitions in one graph
    out = _compute([*([] if x_known else n_rows), *labels],
                   "X's row-chunk sizes and the labels")
    counts = tuple(n_rows) if x_known else tuple(int(c) for c in out[:len(n_rows)])
    labels = out[len(out) - len(labels):]
    for i, (part, count) in enumerate(zip(labels, counts)):
        if part.ndim != 1 or part.shape[0] != count:
            raise ValueError(f"y must hold one label per row of X, in X's row blocks: y's "
                             f"chunk or partition {i} does not match X's row block {i} "
                             "(build X and y from the same dask.bag or dask DataFrame)")
    if not x_known:
        import dask.array as da

        X = da.Array(X.dask, X.name, (counts, X.chunks[1]), meta=X._meta)
    # an empty partition's labels (float64 when built from []) keep the others' dtype
    kept = [part for part in labels if part.size] or list(labels[:1])
    y_local = np.concatenate(kept) if kept else np.empty(0)
    return X, y_local, row_aligned(y_local, X)


def validate_dask_X_y(estimator, X, y, *, private):
    """Validate a Dask ``X``/``y`` for ``estimator.fit``; gather only ``y``.

    The distributed counterpart of :func:`sklearn.utils.validation.validate_data`
    with ``reset=True``: it sets ``n_features_in_`` from the array's metadata and
    leaves the per-entry checks (NaN, infinity) to the block functions, which
    raise on the workers with the message of the in-memory check.  Unknown
    row-chunk sizes and labels given as a dask DataFrame/Series are aligned by
    :func:`align_dask_X_y` (one pass; the sizes are never used as N).

    Parameters
    ----------
    estimator : estimator
        Its ``n_samples_public`` is read; ``n_features_in_`` is set.
    X : dask.array.Array of shape (n_samples, n_features)
        Chunked along rows only, blocks ``scipy.sparse`` CSR or dense, numeric;
        row-chunk sizes known or not (``nan``, as from a :class:`dask.bag.Bag`).
    y : dask.array.Array of shape (n_samples,), dask Series or one-column dask DataFrame
        One chunk or partition per row block of X, each as long as its block.
    private : bool
        Whether the fit is private: it then needs ``n_samples_public``.

    Returns
    -------
    X : dask.array.Array
        With known row-chunk sizes (X itself when they were known).
    y_local : ndarray of shape (n_samples,)
        The labels, gathered (the fit needs them on the client).
    y : dask.array.Array
        The labels with X's row chunks, for the block functions.

    Raises
    ------
    ValueError
        A private fit without ``n_samples_public`` (a distributed fit never
        takes N from the data: block sizes are not public); X not 2-D, without
        rows or columns, not numeric, not chunked along rows only; y not 1-D or
        not aligned with X's row blocks (see :func:`align_dask_X_y`).
    TypeError
        y neither a Dask array nor a dask Series or DataFrame.
    RuntimeError
        Dask workers died repeatedly while the row-chunk sizes were computed.
    """
    if private and getattr(estimator, "n_samples_public", None) is None:
        raise ValueError(
            f"{type(estimator).__name__}: a private fit on a Dask array needs the public "
            "dataset size n_samples_public (the number of rows, known to the data owner "
            "and public under the add/remove-one relation); a distributed fit never "
            "reads N from the data or its block sizes")
    if X.dtype.kind not in "biuf":     # metadata: refused before any block is read
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
    X, y_local, y = align_dask_X_y(X, y)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    estimator.n_features_in_ = int(X.shape[1])
    if hasattr(estimator, "feature_names_in_"):  # a Dask array has no column names
        del estimator.feature_names_in_
    return X, y_local, y
