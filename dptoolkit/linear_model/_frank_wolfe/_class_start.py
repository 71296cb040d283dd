r"""The K-class naive-Bayes start of the multinomial private LASSO (K > 2).

At the zero start the softmax is uniform, and the gradient of class ``k`` on
feature ``j`` is :math:`G_{jk} = \sum_i x_{ij}(1/K - y_{ik})`: for a class with
less than ``1/K`` of the examples it is dominated by the mass of the other
classes, so its few noisy vertices are negative weights on frequent features
and the fit never predicts it (on Reuters R8 at epsilon 1 the classes with 4.6 %
of the training examples got 0-3 of 2,189 predictions; docs/studies/multiclass.rst).
The start below gives every class its own direction from the start, as the
two-class start (:func:`~dptoolkit.linear_model._frank_wolfe._screening.naive_bayes_start`)
does for two.

**Privacy.**  The start is post-processing of the screening's one Gaussian
release of the per-class sums :math:`S_{kj} = \sum_{i: y_i = k} \tilde x_{ij}` of
the row-normalised data (:func:`~dptoolkit.linear_model._frank_wolfe._screening.screening_statistic`
with ``class_sums``): neighbouring add/remove one example (replace-one: twice),
one example moves one row of :math:`S` by a vector of L2 norm at most 1, so the
L2 sensitivity is 1 (2), the Gaussian mechanism of noise multiplier
:math:`\sigma` is :math:`1/(2\sigma^2)`-zCDP (Bun and Steinke 2016,
Proposition 1.6), and it composes with the steps by zCDP at the budget share
``selection_share`` of
:func:`~dptoolkit.linear_model._frank_wolfe._budget.split_budget`, as for two
classes: the same event, so ``privacy_spent_`` is unchanged in kind.  No data
is read here and nothing is charged.

References
----------
S. Wang, C. D. Manning. Baselines and Bigrams: Simple, Good Sentiment and Topic
Classification. ACL 2012, Section 2.1.

A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression, 2023,
Appendix A (Algorithm 3).

M. Bun, T. Steinke. Concentrated Differential Privacy: Simplifications,
Extensions, and Lower Bounds. TCC 2016.
"""
import numpy as np

from ._screening import START_THRESHOLD, start_steps

#: The smoothing of the start, in units of the noise standard deviation s.
SMOOTHING = 1.0

__all__ = ["multinomial_naive_bayes_start", "set_multinomial_start"]


def multinomial_naive_bayes_start(sums, columns, l1_bound, noise_std,
                                  threshold=START_THRESHOLD):
    r"""A start of the K-class model from the noisy per-class sums.

    Over the candidates R whose noisy column total :math:`\sum_k \tilde S_{kj}`
    exceeds ``threshold`` times its noise standard deviation :math:`\sqrt K s`,
    the multinomial naive-Bayes log-probabilities centred over the classes
    (Wang and Manning 2012, Section 2.1, each class's sums normalised over R,
    smoothing s, as in :class:`~dptoolkit.linear_model.DPNBLogisticClassifier`):

    .. math:: r_{kj} = \log p_{kj} - \frac1K\sum_l \log p_{lj}, \qquad
              p_{kj} = \frac{\max(\tilde S_{kj}, 0) + s}{\sum_{l \in R}(\max(\tilde S_{kl}, 0) + s)},

    and :math:`w_0 = \lambda\, r / \max_k \|r_k\|_1` (one scale for all the
    classes: every row in its L1 ball, the largest on its sphere; 0 where R is
    empty).  The centring and the common scale make the start's argmax that of
    naive Bayes with a uniform prior.

    Parameters
    ----------
    sums : ndarray of shape (n_classes, n_features)
        The released (noisy) per-class sums; not modified.
    columns : ndarray of shape (k,), int
        The candidate columns (the start's coordinates, in this order).
    l1_bound : float
        Radius :math:`\lambda` of each class's ball, > 0.
    noise_std : float
        Standard deviation s of the noise on each entry of ``sums``, > 0.
    threshold : float, default=START_THRESHOLD

    Returns
    -------
    ndarray of shape (n_classes, k), float64

    Raises
    ------
    ValueError
        ``sums`` not 2-D with at least three rows.
    """
    S = np.asarray(sums, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] < 3:
        raise ValueError(f"sums must have shape (n_classes >= 3, n_features), got {S.shape}")
    S = S[:, columns]
    K = S.shape[0]
    kept = S.sum(axis=0) > threshold * np.sqrt(K) * noise_std
    w0 = np.zeros((K, columns.size))
    if not kept.any():
        return w0
    p = np.maximum(S[:, kept], 0.0) + SMOOTHING * noise_std
    logp = np.log(p) - np.log(p.sum(axis=1, keepdims=True))
    r = logp - logp.mean(axis=0, keepdims=True)
    norm = np.abs(r).sum(axis=1).max()
    if norm > 0:
        w0[:, kept] = l1_bound * r / norm
    return w0


def set_multinomial_start(kernel, sums, columns, p, noise_std):
    """Give the multinomial ``kernel`` the start of the released ``sums`` (the
    fit's parameters ``p``: ``l1_bound``, ``max_iter``, ``start_steps``).

    ``start_steps="auto"`` (``p.start_steps`` None) is the two-class rule
    (:func:`~dptoolkit.linear_model._frank_wolfe._screening.start_steps`) with
    nnz the mean count of non-zeros of a class's row: each class's steps act on
    its own row."""
    w0 = multinomial_naive_bayes_start(sums, columns, p.l1_bound, noise_std)
    t0 = p.start_steps
    if t0 is None:  # "auto": the two-class rule for a class's row, T nnz / 4
        t0 = start_steps(p.max_iter, w0) / w0.shape[0]
    kernel.set_start(w0, float(t0))
