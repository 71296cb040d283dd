"""Quality of a selected feature set: top-k accuracy against a reference set, and
Shekelyan & Loukides' TOP / GREAT / GOOD order-statistic criteria."""
import numpy as np

from .._validation import check_positive_int

__all__ = ["top_k_accuracy", "order_statistics_hit", "top_great_good"]


def _as_rows(selected, name="selected"):
    sel = np.asarray(selected)
    if sel.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer indices, got dtype {sel.dtype}")
    if sel.ndim == 1:
        return sel[None, :], True
    if sel.ndim == 2:
        return sel, False
    raise ValueError(f"{name} must be of shape (k,) or (n_draws, k), got {sel.shape}")


def top_k_accuracy(selected, reference):
    """Fraction of the reference features that were selected.

    Parameters
    ----------
    selected : array-like of int, shape (k,) or (n_draws, k)
        Selected feature indices (one set per row).
    reference : array-like of int, shape (k_ref,)
        Reference set (e.g. the top-k features of a non-private LASSO).

    Returns
    -------
    float or ndarray of shape (n_draws,)
        ``|selected & reference| / |reference|`` (the paper's "top-k accuracy"
        when both sets have k elements).

    Raises
    ------
    ValueError
        Empty reference, repeated indices in a row or in the reference.
    """
    rows, single = _as_rows(selected)
    ref = np.asarray(reference)
    if ref.ndim != 1 or ref.size == 0:
        raise ValueError("reference must be a non-empty 1-D array of indices")
    if np.unique(ref).size != ref.size:
        raise ValueError("reference holds repeated indices")
    srt = np.sort(rows, axis=1)
    if rows.shape[1] > 1 and np.any(srt[:, 1:] == srt[:, :-1]):
        raise ValueError("selected holds repeated indices within a draw")
    hits = np.isin(rows, ref).sum(axis=1) / ref.size
    return float(hits[0]) if single else hits


def order_statistics_hit(selected, scores, head, tail):
    """Whether each selected set holds the ``head`` best scores and nothing below
    the ``tail``-th best.

    With ``s_(1) >= ... >= s_(k)`` the selected scores and ``x_[1] >= ... >=
    x_[d]`` all scores, the criterion is ``s_(i) = x_[i]`` for ``i <= head`` and
    ``s_(k) >= x_[tail]`` -- stated on score values, so it does not depend on
    how ties are ordered.

    Parameters
    ----------
    selected : array-like of int, shape (k,) or (n_draws, k)
    scores : array-like of shape (n_features,)
    head : int
        Number of leading order statistics that must be selected (>= 0).
    tail : int
        Rank (1-based, >= k) that every selected score must reach; capped at
        ``n_features``.

    Returns
    -------
    bool or ndarray of bool, shape (n_draws,)

    Raises
    ------
    TypeError
        ``selected`` not integer indices; ``head`` or ``tail`` not integers.
    ValueError
        ``scores`` empty, not 1-D or not finite; ``selected`` indices outside
        ``[0, n_features)``; ``head`` outside ``[0, k]``; ``tail`` < k.
    """
    rows, single = _as_rows(selected)
    head = check_positive_int(head, "head", minimum=0)
    tail = check_positive_int(tail, "tail", minimum=0)
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        # NaN compares False everywhere: the order statistics would be meaningless
        raise ValueError("scores must be finite (no NaN or infinity)")
    if rows.size and (rows.min() < 0 or rows.max() >= x.size):
        raise ValueError(f"selected holds indices outside [0, n_features) = [0, {x.size}): "
                         f"min {int(rows.min())}, max {int(rows.max())}")
    k = rows.shape[1]
    if not 0 <= head <= k:
        raise ValueError(f"head must be in [0, k] = [0, {k}], got {head}")
    if tail < k:
        raise ValueError(f"tail must be >= k = {k}, got {tail}")
    xs = np.sort(x)[::-1]
    tail = min(int(tail), x.size)
    sel = -np.sort(-x[rows], axis=1)
    ok = sel[:, -1] >= xs[tail - 1]
    if head:
        ok &= np.all(sel[:, :head] >= xs[:head], axis=1)
    return bool(ok[0]) if single else ok


def top_great_good(selected, scores):
    """Shekelyan & Loukides' TOP / GREAT / GOOD criteria of a selected k-set.

    * TOP: the k selected scores are the k largest;
    * GREAT: the ``floor(k/10)`` largest are selected and the rest come from the
      ``floor(11 k / 10)`` largest;
    * GOOD: the ``floor(k/100)`` largest are selected and the rest come from
      the ``floor(3 k / 2)`` largest.

    Fractional ranks are rounded down (an item is "in the top r" when its rank
    is at most r); for k < 10 GREAT therefore equals TOP.  Criteria are stated
    on score values (see :func:`order_statistics_hit`).

    Parameters
    ----------
    selected : array-like of int, shape (k,) or (n_draws, k)
    scores : array-like of shape (n_features,)
        The scores the order statistics refer to.

    Returns
    -------
    dict
        ``{"top": ..., "great": ..., "good": ...}``, each a bool or a boolean
        array of shape (n_draws,).

    References
    ----------
    M. Shekelyan and G. Loukides. Differentially private top-k selection via
    canonical Lipschitz mechanism. arXiv:2201.13376, 2022 (experiments); used by
    Swope et al. 2024, Figure 8.
    """
    rows, _ = _as_rows(selected)
    k = rows.shape[1]
    return {
        "top": order_statistics_hit(selected, scores, k, k),
        "great": order_statistics_hit(selected, scores, k // 10, (11 * k) // 10),
        "good": order_statistics_hit(selected, scores, k // 100, (3 * k) // 2),
    }
