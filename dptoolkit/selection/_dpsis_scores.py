"""DP-SIS's scores on public bounds, without selection (:func:`dpsis_scores`)."""
from .._validation import check_scalar_range
from ._sis import DPSIS, _validate_X_y

__all__ = ["dpsis_scores"]


def dpsis_scores(X, y, *, bounds=(-1.0, 1.0), center=None, y_bounds=(-1.0, 1.0),
                 y_center=None, data_norm=None):
    """The (non-private) DP-SIS scores ``|x_(i)^T y|`` after the public mapping.

    For studies that draw many private selections from one score vector (each
    draw must then be paid for separately).  Same preprocessing and warnings as
    :class:`DPSIS`.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    bounds, center, y_bounds, y_center
        As :class:`DPSIS`.
    data_norm : float, optional
        None: the scores of the pure-DP selectors.  A float > 0: the signed
        scores ``x_(i)^T y`` the Gaussian selector releases, every mapped row
        scaled to this L2 norm (zero rows stay 0).

    Returns
    -------
    ndarray of shape (n_features,)
        Scores; without ``data_norm`` each has sensitivity 1 (add/remove) or 2
        (replace-one) when the bounds are public; with it the vector has L2
        sensitivity ``data_norm`` (add/remove) or ``2 data_norm`` (replace-one).

    Raises
    ------
    ValueError
        As :meth:`DPSIS.fit`; ``data_norm`` not a finite float > 0;
        ``bounds="data"`` with ``data_norm``.
    """
    est = DPSIS(bounds=bounds, center=center, y_bounds=y_bounds, y_center=y_center,
                epsilon=None)
    if data_norm is not None:
        data_norm = check_scalar_range(data_norm, "data_norm", low=0.0, low_open=True)
    X, y = _validate_X_y(None, X, y)
    return est._scores(X, est._target(y), data_norm=data_norm)
