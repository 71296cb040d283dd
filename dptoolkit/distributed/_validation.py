"""Checks of a Dask input before a distributed fit (nothing of X is gathered)."""
import numpy as np

from ._blocksum import _check_dask_X_y

__all__ = ["validate_dask_X_y"]


def validate_dask_X_y(estimator, X, y, *, private):
    """Validate a Dask ``X``/``y`` for ``estimator.fit``; gather only ``y``.

    The distributed counterpart of :func:`sklearn.utils.validation.validate_data`
    with ``reset=True``: it sets ``n_features_in_`` from the array's metadata and
    leaves the per-entry checks (NaN, infinity) to the block functions, which
    raise on the workers with the message of the in-memory check.

    Parameters
    ----------
    estimator : estimator
        Its ``n_samples_public`` is read; ``n_features_in_`` is set.
    X : dask.array.Array of shape (n_samples, n_features)
        Chunked along rows only, blocks ``scipy.sparse`` CSR or dense, numeric.
    y : dask.array.Array of shape (n_samples,)
        The same row chunks as X.
    private : bool
        Whether the fit is private: it then needs ``n_samples_public``.

    Returns
    -------
    X : dask.array.Array
        Unchanged.
    y_local : ndarray of shape (n_samples,)
        The labels, gathered (the fit needs them on the client).
    y : dask.array.Array
        Unchanged, for the block functions.

    Raises
    ------
    ValueError
        A private fit without ``n_samples_public`` (a distributed fit never
        takes N from the data: block sizes are not public); X not 2-D, without
        rows or columns, not numeric, not chunked along rows only, with unknown
        chunk sizes; y of other chunks or not 1-D.
    TypeError
        y not a Dask array.
    """
    if private and getattr(estimator, "n_samples_public", None) is None:
        raise ValueError(
            f"{type(estimator).__name__}: a private fit on a Dask array needs the public "
            "dataset size n_samples_public (the number of rows, known to the data owner "
            "and public under the add/remove-one relation); a distributed fit never "
            "reads N from the data or its block sizes")
    _check_dask_X_y(X, y)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
    estimator.n_features_in_ = int(X.shape[1])
    if hasattr(estimator, "feature_names_in_"):  # a Dask array has no column names
        del estimator.feature_names_in_
    y_local = np.asarray(y.compute())
    return X, y_local, y
