r"""Private candidate screening for Frank-Wolfe on very many features.

**Why.**  A private Frank-Wolfe step draws one of the :math:`2D` vertices with
probability :math:`\propto \exp(\varepsilon' u / (2\Delta))`.  On hashed text
(:math:`D = 2^{20}`) almost every feature occurs in a handful of documents, so
its score is near 0, and their :math:`2D` near-uniform weights outweigh the few
informative features unless :math:`\varepsilon' N |\nabla_j| / 2 \gg \ln(2D)`
(Raff, Khanna and Lu (2023) reports chance accuracy at :math:`\varepsilon = 0.1` for exactly this
reason).  A feature that occurs in few documents cannot have a large score
(:math:`|\alpha_j| \le \sum_i |x_{ij}|`), so restricting the vertices to the
:math:`k` features of largest *private* mass loses little and removes the
uniform mass of the rest.

**Mechanism.**  The Gaussian mechanism on the column masses of the row-normalised
data, :math:`s_j = \sum_i |x_{ij}| / \max(1, \|x_i\|_2)`: adding or removing one
example changes :math:`s` by a vector of L2 norm at most 1 (2 for replace-one),
so :math:`\tilde s = s + N(0, \sigma^2 f^2 I)` is a Gaussian mechanism with
noise multiplier :math:`\sigma` (RDP :math:`\alpha/(2\sigma^2)`, Mironov 2017,
Proposition 7).  The top :math:`k` of :math:`\tilde s` are post-processing.  The
Frank-Wolfe steps then run on those columns only; the release composes the
Gaussian event with the steps' (adaptive composition: the steps may depend on
the screened set).  The budget split gives the screening a fraction of the
zCDP budget (:func:`dptoolkit.linear_model._frank_wolfe._budget.split_budget`).

This is the "select, then fit" pattern of Swope et al. (2024) with a frequency statistic
instead of a correlation; the statistic needs no label and no centring, and its
sensitivity holds for any data satisfying the public bound.
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["column_masses", "private_top_columns", "DEFAULT_N_CANDIDATES"]

#: Candidate features kept by ``screening="auto"``: at least the number of
#: steps the automatic ``max_iter`` takes for N epsilon up to 2.6e5, and
#: ln(2k) = 9.0 against ln(2^21) = 14.6 for hashed text.
DEFAULT_N_CANDIDATES = 4096


def column_masses(Xr):
    """Column masses of the row-normalised |X| (each row's L2 norm capped at 1).

    Parameters
    ----------
    Xr : scipy.sparse CSR array of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_features,), float64
    """
    Xr = sp.csr_array(Xr)
    sq = np.asarray(Xr.multiply(Xr).sum(axis=1)).ravel()
    scale = 1.0 / np.maximum(1.0, np.sqrt(sq))
    A = sp.csr_array((np.abs(Xr.data) * np.repeat(scale, np.diff(Xr.indptr)), Xr.indices,
                      Xr.indptr), shape=Xr.shape)
    return np.asarray(A.sum(axis=0)).ravel()


def private_top_columns(Xr, k, noise_multiplier, rng, *, sensitivity=1.0):
    """The ``k`` columns of largest noisy mass, sorted by index.

    Parameters
    ----------
    Xr : scipy.sparse CSR array of shape (n_samples, n_features)
    k : int
        1 <= k <= n_features.
    noise_multiplier : float
        Gaussian noise std divided by the L2 sensitivity.
    rng : numpy.random.Generator
    sensitivity : float, default=1.0
        1 for add/remove, 2 for replace-one.

    Returns
    -------
    ndarray of shape (k,), int64
    """
    masses = column_masses(Xr)
    noisy = masses + rng.normal(0.0, noise_multiplier * sensitivity, masses.shape)
    top = np.argpartition(-noisy, k - 1)[:k]
    return np.sort(top).astype(np.int64)
