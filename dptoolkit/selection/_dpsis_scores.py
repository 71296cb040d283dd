"""DP-SIS's scores on public bounds, without selection (:func:`dpsis_scores`)."""
from .._validation import check_scalar_range
from ._sis import DPSIS, _validate_X_y

__all__ = ["dpsis_scores"]


def dpsis_scores(X, y, *, bounds=(-1.0, 1.0), center=None, y_bounds=(-1.0, 1.0),
                 y_center=None, l2_bound=None):
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
    l2_bound : float, optional
        None: the scores of the pure-DP selectors.  A float > 0: the signed
        scores ``x_(i)^T y`` the Gaussian selector releases, every mapped row
        scaled to this L2 norm (zero rows stay 0).

    Returns
    -------
    ndarray of shape (n_features,)
        Scores; without ``l2_bound`` each has sensitivity 1 (add/remove) or 2
        (replace-one) when the bounds are public; with it the vector has L2
        sensitivity ``l2_bound`` (add/remove) or ``2 l2_bound`` (replace-one).

    Raises
    ------
    ValueError
        As :meth:`DPSIS.fit`; ``l2_bound`` not a finite float > 0;
        ``bounds="data"`` with ``l2_bound``.
    """
    est = DPSIS(bounds=bounds, center=center, y_bounds=y_bounds, y_center=y_center,
                epsilon=None)
    if l2_bound is not None:
        l2_bound = check_scalar_range(l2_bound, "l2_bound", low=0.0, low_open=True)
    X, y = _validate_X_y(None, X, y)
    return est._scores(X, est._target(y), l2_bound=l2_bound)
