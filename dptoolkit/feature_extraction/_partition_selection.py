r"""Differentially private partition selection: which n-grams a corpus may name.

A document is a set of n-grams.  The released vocabulary is the set of n-grams
whose *weighted, noisy* document count exceeds a threshold (the weighted Gaussian
policy of Gopi, Gulhane, Kulkarni, Shen, Shokouhi and Yekhanin 2020, Section 5;
the partition-selection view of Desfontaines, Voss, Gipson and Mandayam 2022):

1. *Contribution bounding*: each document keeps at most ``m`` of its distinct
   n-grams (chosen uniformly at random, independently of the other documents).
2. *Weighting*: each n-gram a document keeps gets weight :math:`1/\sqrt{k}`, with
   :math:`k \le m` the number it keeps, so the document's vector of weights has
   L2 norm 1 whatever its length.
3. *Gaussian noise and threshold*: the weighted count :math:`H(u)` of every
   n-gram present in the corpus gets independent noise
   :math:`\mathcal N(0, \sigma^2)`; the n-grams with :math:`H(u) + Z_u > \tau` are
   released.
"""
import functools

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtri

from .._docstrings import fill_doc
from .._validation import check_positive_int, check_scalar_range

__all__ = ["bounded_contributions", "partition_selection_threshold"]


@fill_doc
def partition_selection_threshold(noise_multiplier, delta, max_terms_per_document):
    r"""Threshold of the weighted Gaussian partition selection.

    The smallest :math:`\tau` such that, for a document whose n-grams appear in no
    other document, the probability that *any* of them is released is at most
    ``delta``, whatever the number :math:`k \le m` of n-grams it keeps:

    .. math::

        \tau = \max_{1 \le k \le m}\;
               \frac{1}{\sqrt k} + \sigma\, \Phi^{-1}\!\left((1-\delta)^{1/k}\right).

    **Derivation.**  Take neighbouring corpora :math:`D` and
    :math:`D' = D \cup \{x\}` (add/remove one document).  The document :math:`x`
    keeps :math:`k \le m` n-grams, each with weight :math:`1/\sqrt{k}`; its vector of
    weights has L2 norm 1.  On the n-grams present in :math:`D`, the two weighted
    histograms differ by a vector of L2 norm at most 1, so their noisy counts are
    the Gaussian mechanism with noise multiplier :math:`\sigma` (sensitivity 1),
    :math:`(\varepsilon, \delta_G)`-DP by its calibration; thresholding them is
    post-processing.  The n-grams present in :math:`D'` only (at most the
    :math:`k` n-grams of :math:`x` that no other document has) have weighted
    count exactly :math:`1/\sqrt{k}` in :math:`D'` and are never released from
    :math:`D`.  Each is released from :math:`D'` independently with probability
    :math:`1 - \Phi((\tau - 1/\sqrt k)/\sigma)`, so none is released with
    probability :math:`\Phi((\tau - 1/\sqrt k)/\sigma)^k`, which is at least
    :math:`1 - \delta` when :math:`\tau \ge 1/\sqrt{k} + \sigma
    \Phi^{-1}((1-\delta)^{1/k})`; :math:`\tau` is the largest such bound over
    :math:`k`.  Outside that event of probability at most :math:`\delta`, the
    release from :math:`D'` is the post-processed Gaussian mechanism, so the
    selection is :math:`(\varepsilon, \delta_G + \delta)`-DP (Gopi et al. 2020,
    Section 5 and Theorem 5.1, whose threshold is this one with
    :math:`\delta = \delta_{total}/2`; Desfontaines et al. 2022, Section 3).
    With :math:`k = 1` this is the per-n-gram rule
    :math:`\tau = 1 + \sigma\Phi^{-1}(1 - \delta)`.

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma > 0`, the standard deviation of the noise on every weighted
        count (the L2 sensitivity is 1).
    delta : float
        In (0, 1): the bound on the probability that a document's unique n-grams
        are released.
    max_terms_per_document : int
        :math:`m \ge 1`, the contribution bound.

    Returns
    -------
    float
        :math:`\tau`.

    Raises
    ------
    ValueError
        ``noise_multiplier`` not > 0, ``delta`` not in (0, 1),
        ``max_terms_per_document`` not an integer >= 1.

    References
    ----------
    %(refs_partition_selection)s
    """
    sigma = check_scalar_range(noise_multiplier, "noise_multiplier", low=0.0, low_open=True)
    delta = check_scalar_range(delta, "delta", low=0.0, high=1.0, low_open=True,
                               high_open=True)
    m = check_positive_int(max_terms_per_document, "max_terms_per_document")
    return _threshold(sigma, delta, m)


@functools.lru_cache(maxsize=64)
def _threshold(sigma, delta, m):
    k = np.arange(1, m + 1, dtype=np.float64)
    # Phi^{-1}((1 - delta)^{1/k}) = -Phi^{-1}(1 - (1 - delta)^{1/k}), the complement
    # computed without cancellation
    tail = -np.expm1(np.log1p(-delta) / k)
    return float(np.max(1.0 / np.sqrt(k) - sigma * ndtri(tail)))


def bounded_contributions(X, max_terms_per_document, rng, *, weighted):
    """Keep at most ``max_terms_per_document`` nonzero columns of each row, at random.

    Parameters
    ----------
    X : sparse matrix of shape (n_documents, n_terms)
        Binary document-term matrix (only the positions of the nonzeros are read).
    max_terms_per_document : int
        The contribution bound ``m``.
    rng : numpy.random.Generator
        Chooses the kept terms of each document with more than ``m`` of them
        (uniformly, independently of the other documents).
    weighted : bool
        True: each kept entry is ``1 / sqrt(k)``, with ``k <= m`` the number of
        entries the row keeps (every row has L2 norm at most 1); False: 1 (every
        row has L2 norm at most ``sqrt(m)``).

    Returns
    -------
    scipy.sparse.csr_array of shape (n_documents, n_terms)
    """
    X = sp.csr_array(X)
    X.sum_duplicates()
    m = int(max_terms_per_document)
    lengths = np.diff(X.indptr)
    rows = np.repeat(np.arange(X.shape[0]), lengths)
    keys = rng.random(X.indices.size)
    order = np.lexsort((keys, rows))
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size) - X.indptr[rows[order]]
    keep = rank < m
    kept = np.minimum(lengths, m)
    values = (1.0 / np.sqrt(np.maximum(kept[rows[keep]], 1)) if weighted
              else np.ones(int(keep.sum())))
    return sp.csr_array((values, (rows[keep], X.indices[keep])), shape=X.shape)

