"""Synthetic problems: sparse text-like data and correlated Gaussian features."""
import warnings

import numpy as np
import scipy.sparse as sp

from .._validation import check_positive_int, check_random_state, check_scalar_range
from ..exceptions import PrivacyLeakWarning
from ._csr import _index_dtype

__all__ = ["make_sparse_classification", "make_correlated_classification"]

_VALUES = ("binary", "signed", "uniform")
_LABEL_MODELS = ("logistic", "sign")


#: Largest number of columns or expected draws of :func:`make_sparse_classification`.
_MAX_SIZE = 2**31 - 1


def make_sparse_classification(n_samples=10_000, n_features=100_000, *, n_informative=20,
                               avg_nnz=50, zipf_exponent=1.0, values="binary",
                               label_model="logistic", coef_scale=2.0,
                               random_state=None):
    """Sparse binary classification problem with a planted sparse weight vector.

    Mimics hashed text: each row holds about ``avg_nnz`` features drawn from
    a power-law (Zipf-like) distribution over the columns, the columns'
    popularity ranks are shuffled (as hashing does), and the labels follow a
    logistic (or sign) model of a weight vector with ``n_informative``
    non-zeros.  Everything is vectorised: 10^5 x 10^6 with 50 draws per row
    takes a few seconds.

    Parameters
    ----------
    n_samples : int, default=10_000
        Number of rows, >= 1; ``n_samples * min(avg_nnz, n_features)`` (the
        expected number of draws) at most ``2**31 - 1``.
    n_features : int, default=100_000
        Number of columns, in [2, 2**31 - 1] and >= ``n_informative``.
    n_informative : int, default=20
        Non-zeros of ``w_true``, ``1 <= n_informative <= n_features``.  They
        are drawn uniformly without replacement among the features of
        popularity ranks ``n_informative + 1 .. 5 * n_informative`` (capped
        at ``n_features``): frequent enough to be learnt, but not the very
        top features, which play the part of stop words.
    avg_nnz : float, default=50
        Expected number of feature draws per row (``1 + Poisson(avg_nnz - 1)``
        each, at most ``n_features``), ``1 <= avg_nnz``.  Repeated draws in a
        row merge, so the mean number of non-zeros per row is somewhat lower
        when ``zipf_exponent`` is large.
    zipf_exponent : float, default=1.0
        Feature ``j`` of popularity rank ``r_j`` (1 = most frequent) is drawn
        with probability proportional to ``r_j ** -zipf_exponent``; 0 gives
        uniform frequencies, about 1 is typical of words in text.  Must be in
        [0, 10].
    values : {"binary", "signed", "uniform"}, default="binary"
        Stored values: 1; a random sign +-1; or uniform on [-1, 1].  In every
        case ``||x_i||_inf <= 1``.
    label_model : {"logistic", "sign"}, default="logistic"
        ``y_i ~ Bernoulli(sigmoid(x_i . w_true))`` or ``y_i = [x_i . w_true > 0]``
        (a zero margin gets a fair coin).
    coef_scale : float, default=2.0
        Magnitude of the planted weights (> 0): the non-zeros of ``w_true``
        are ``+-coef_scale * U[1, 2]``, half of each sign, with the negative
        ones rescaled so that the mean margin over the rows is zero (classes
        about balanced without an intercept).
    random_state : None, int, SeedSequence or numpy.random.Generator
        Seed (see ``dptoolkit._validation.check_random_state()``).

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_samples, n_features), float64
        Canonical CSR (sorted indices, no duplicates).
    y : ndarray of shape (n_samples,), float64
        Labels in {0, 1}.
    w_true : ndarray of shape (n_features,), float64
        The planted weights, ``n_informative`` non-zeros.

    Raises
    ------
    ValueError
        For arguments out of range or unknown ``values``/``label_model``;
        sizes that cannot be generated (more than ``2**31 - 1`` columns or
        expected draws: several arrays of that length are held at once).
    TypeError
        For arguments of the wrong type.

    Examples
    --------
    >>> from dptoolkit.datasets import make_sparse_classification
    >>> X, y, w = make_sparse_classification(1000, 5000, random_state=0)
    >>> X.shape, int((w != 0).sum())
    ((1000, 5000), 20)
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    n_features = check_positive_int(n_features, "n_features", minimum=2, maximum=_MAX_SIZE)
    n_informative = check_positive_int(n_informative, "n_informative")
    if n_informative > n_features:
        raise ValueError(f"n_informative must be <= n_features={n_features}, "
                         f"got {n_informative}")
    avg_nnz = check_scalar_range(avg_nnz, "avg_nnz", low=1.0)
    if n_samples * min(avg_nnz, n_features) > _MAX_SIZE:
        raise ValueError(f"n_samples * avg_nnz (the expected number of draws) must be <= "
                         f"2**31 - 1, got n_samples={n_samples}, avg_nnz={avg_nnz!r}: "
                         "several arrays of that length are held at once")
    zipf_exponent = check_scalar_range(zipf_exponent, "zipf_exponent", low=0.0, high=10.0)
    coef_scale = check_scalar_range(coef_scale, "coef_scale", low=0.0, low_open=True)
    if values not in _VALUES:
        raise ValueError(f"values must be one of {_VALUES}, got {values!r}")
    if label_model not in _LABEL_MODELS:
        raise ValueError(f"label_model must be one of {_LABEL_MODELS}, got {label_model!r}")
    rng = check_random_state(random_state)

    # Feature popularity: rank r (0 = most frequent) has weight (r + 1)^-a; the
    # column of rank r is col_of_rank[r], a random permutation (as hashing does).
    col_of_rank = rng.permutation(n_features)
    p_rank = np.arange(1, n_features + 1, dtype=np.float64) ** -zipf_exponent
    p_rank /= p_rank.sum()
    cdf = np.cumsum(p_rank)
    cdf /= cdf[-1]

    # Draws per row and the drawn columns, all at once.
    counts = np.minimum(1 + rng.poisson(avg_nnz - 1.0, size=n_samples), n_features)
    rows = np.repeat(np.arange(n_samples, dtype=np.int64), counts)
    drawn = np.searchsorted(cdf, rng.random(rows.size), side="right")
    np.minimum(drawn, n_features - 1, out=drawn)  # guards rounding of cdf[-1]
    # Merge repeated draws within a row: sort the (row, col) keys row-major and
    # drop repeats (a plain sort: np.unique is several times slower here).
    keys = rows * n_features + col_of_rank[drawn]
    keys.sort()
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    rows, cols = np.divmod(keys, n_features)
    indptr = np.zeros(n_samples + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_samples), out=indptr[1:])
    if values == "binary":
        data = np.ones(keys.size)
    elif values == "signed":
        data = rng.choice(np.array([-1.0, 1.0]), size=keys.size)
    else:
        data = rng.uniform(-1.0, 1.0, size=keys.size)
    index_dtype = _index_dtype(keys.size, n_features)
    X = sp.csr_array((data, cols.astype(index_dtype), indptr.astype(index_dtype)),
                     shape=(n_samples, n_features))

    # Planted weights on moderately frequent features: popularity ranks
    # [lo, hi) with lo = n_informative, hi = 5 * n_informative (capped).  The
    # very top features (stop words, in text) carry no signal, and features so
    # rare that few rows contain them could not be learnt.
    lo = min(n_informative, n_features - n_informative)
    hi = min(n_features, max(lo + n_informative, 5 * n_informative))
    informative = col_of_rank[lo + rng.choice(hi - lo, size=n_informative, replace=False)]
    magnitude = coef_scale * rng.uniform(1.0, 2.0, size=n_informative)
    sign = np.where(np.arange(n_informative) % 2 == 0, 1.0, -1.0)
    rng.shuffle(sign)
    w_true = np.zeros(n_features)
    w_true[informative] = sign * magnitude
    if n_informative > 1:
        # Balance: rescale the negative weights so that the mean margin over
        # the rows is zero (classes about balanced without an intercept).
        contrib = w_true[informative] * np.asarray(X[:, informative].mean(axis=0)).ravel()
        pos_mass, neg_mass = contrib[sign > 0].sum(), -contrib[sign < 0].sum()
        if pos_mass > 0 and neg_mass > 0:
            w_true[informative[sign < 0]] *= pos_mass / neg_mass

    margin = X @ w_true
    if label_model == "logistic":
        prob = 0.5 * (1.0 + np.tanh(0.5 * margin))  # sigmoid without overflow
        y = (rng.random(n_samples) < prob).astype(np.float64)
    else:
        y = (margin > 0).astype(np.float64)
        ties = margin == 0
        y[ties] = rng.integers(0, 2, size=int(ties.sum())).astype(np.float64)
    return X, y, w_true


# ----------------------------------------------------------------------------
# Correlated Gaussian problem (Khanna, Lu and Raff, Section 4.2)
# ----------------------------------------------------------------------------

_SCALINGS = ("public", "max_abs", None)


def make_correlated_classification(n_samples=10_000, n_features=100, *, correlation=0.5,
                                   coef=(10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 0.5),
                                   scaling="public", bound=5.0, random_state=None):
    r"""Correlated Gaussian features, sparse planted weights, labels by sign.

    The synthetic data of Khanna, Lu and Raff (*Sparse Private LASSO Logistic
    Regression*, Section 4.2; after Wang & Zhang 2020):
    :math:`x_i \sim \mathcal N(0, \Sigma)` with
    :math:`\Sigma_{jk} = \text{correlation}^{|j-k|}` (drawn exactly as the
    stationary AR(1) process :math:`x_{i1} = z_1`,
    :math:`x_{ij} = \rho x_{i,j-1} + \sqrt{1-\rho^2} z_j`), features scaled (see
    ``scaling``), then :math:`y_i = 1` if :math:`\sigma(w^* \cdot x_i) > 0.5`, i.e.
    :math:`w^*\cdot x_i > 0`, computed on the scaled features (the paper's order), and
    :math:`y_i = 0` otherwise.  The default is the paper's problem: 10,000 x 100,
    :math:`w^* = [10, 9, 8, 7, 6, 5, 4, 0.5, 0, \dots, 0]`.

    Parameters
    ----------
    n_samples : int, default=10000
        >= 1, with ``n_samples * n_features <= 2**31 - 1`` (X is dense).
    n_features : int, default=100
        >= ``len(coef)``.
    correlation : float, default=0.5
        :math:`\rho \in (-1, 1)`.
    coef : sequence of float, default=(10, 9, 8, 7, 6, 5, 4, 0.5)
        The first ``len(coef)`` entries of :math:`w^*` (finite); the rest are 0.
    scaling : {"public", "max_abs", None}, default="public"
        ``"public"``: divide by the public constant ``bound`` and clip to [-1, 1]
        (every :math:`x_{ij}` is standard normal, so ``bound`` is chosen without
        looking at the data; with the default 5 about one entry in 1.7 million is
        clipped), so :math:`\|x_i\|_\infty \le 1` holds by construction.
        ``"max_abs"``: divide each feature by its largest absolute value in the
        sample, as the paper does; the scale is a statistic of the data, so this
        issues a :class:`~dptoolkit.exceptions.PrivacyLeakWarning` (reproduction
        only).  ``None``: no scaling.
    bound : float, default=5.0
        Public bound of ``"public"`` scaling, > 0.
    random_state : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64
        Labels in {0, 1}.
    w_true : ndarray of shape (n_features,), float64

    Raises
    ------
    ValueError
        Arguments out of range, unknown ``scaling``, non-finite ``coef`` or more
        entries in ``coef`` than features.
    TypeError
        Arguments of the wrong type.

    Warns
    -----
    PrivacyLeakWarning
        With ``scaling="max_abs"``.

    References
    ----------
    A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression, Section 4.2.
    P. Wang, H. Zhang. Differential privacy for sparse classification learning.
    Neurocomputing 375, 2020.

    Examples
    --------
    >>> from dptoolkit.datasets import make_correlated_classification
    >>> X, y, w = make_correlated_classification(random_state=0)
    >>> X.shape, int((w != 0).sum()), bool(abs(X).max() <= 1)
    ((10000, 100), 8, True)
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    n_features = check_positive_int(n_features, "n_features")
    if n_samples * n_features > _MAX_SIZE:
        raise ValueError(f"n_samples * n_features (the entries of the dense X) must be <= "
                         f"2**31 - 1, got n_samples={n_samples}, n_features={n_features}")
    correlation = check_scalar_range(correlation, "correlation", low=-1.0, high=1.0,
                                     low_open=True, high_open=True)
    coef = np.asarray(coef)
    if coef.dtype.kind not in "iuf" or coef.ndim != 1 or coef.size == 0:
        raise TypeError("coef must be a non-empty 1-D sequence of real numbers")
    coef = coef.astype(np.float64)
    if not np.all(np.isfinite(coef)):
        raise ValueError("coef must be finite")
    if coef.size > n_features:
        raise ValueError(f"coef has {coef.size} entries, more than n_features={n_features}")
    if scaling not in _SCALINGS:
        raise ValueError(f"scaling must be one of {_SCALINGS}, got {scaling!r}")
    bound = check_scalar_range(bound, "bound", low=0.0, low_open=True)
    rng = check_random_state(random_state)

    z = rng.standard_normal((n_samples, n_features))
    X = np.empty_like(z)
    X[:, 0] = z[:, 0]
    innov = np.sqrt(1.0 - correlation * correlation)
    for j in range(1, n_features):
        X[:, j] = correlation * X[:, j - 1] + innov * z[:, j]
    if scaling == "public":
        X /= bound
        np.clip(X, -1.0, 1.0, out=X)
    elif scaling == "max_abs":
        warnings.warn("scaling='max_abs' divides each feature by its maximum absolute "
                      "value in the sample (as Khanna et al. do); the scale is derived from "
                      "the data and not covered by a privacy guarantee (use "
                      "scaling='public')", PrivacyLeakWarning, stacklevel=2)
        top = np.abs(X).max(axis=0)
        X /= np.where(top > 0, top, 1.0)
    w_true = np.zeros(n_features)
    w_true[:coef.size] = coef
    y = (X @ w_true > 0).astype(np.float64)
    return X, y, w_true
