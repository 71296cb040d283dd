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

**Gradient score** (``"gradient"``; Frank-Wolfe uses ``"mass"``, its ``SCREENING_SCORE``).  The first linear
minimisation of Frank-Wolfe scores column j by :math:`|\nabla_j|` at the zero
model: :math:`|\sum_i x_{ij}(1/2 - y_i)|` for the logistic loss (Raff, Khanna and
Lu 2023, Algorithm 1 at :math:`w_0 = 0`), :math:`|\sum_i x_{ij}(1/K - [y_i = k])|`
for class k of the softmax loss (Khanna, Lu and Raff 2023, Appendix A).  The
screening can release the label-signed sums instead of the masses: two classes,
:math:`d_j = \sum_i \tilde x_{ij}(2y_i - 1)`; K classes, the per-class sums
:math:`S_{kj} = \sum_{i: y_i = k} \tilde x_{ij}` (a K x D matrix), with
:math:`\tilde x_i = x_i/\max(1, \|x_i\|_2)`.  One example adds
:math:`\pm\tilde x_i` to d, or :math:`\tilde x_i` to the one row of S of its
class, so the L2 (Frobenius) sensitivity is again 1 under add/remove (2 for
replace-one, which may also move the example to another class's row: at most
:math:`\|\tilde x_i\| + \|\tilde x'_i\| \le 2`): the same Gaussian event, the
same noise multiplier and budget share.  The scores :math:`|\tilde d_j|` and
:math:`\max_k |\sum_l \tilde S_{lj}/K - \tilde S_{kj}|` are post-processing.

The gradient score is not the default (``"auto"`` is ``"mass"``): the class
difference of a column is at most its mass while the noise is the same, and on
the development sets the noisy mass already ranks the columns of large class
difference among its candidates, while few columns' class differences stand
above the noise; gradient screening helps only where few candidates are kept,
which the default does not do (:ref:`study_frank_wolfe_defaults`).

**Naive-Bayes start** (``start="naive_bayes"``, two classes).  The screening
releases the per-class sums :math:`S_0, S_1` (``class_sums``: one example adds
:math:`\tilde x_i` to the row of its class, L2 sensitivity 1 under add/remove,
2 under replace-one: the same Gaussian event), ranks the candidates by
:math:`\tilde S_0 + \tilde S_1` (the mass, for data without negative entries,
with twice the noise variance of the mass release at the same share),
and :func:`naive_bayes_start` turns the released sums into a starting point of
the L1 ball (post-processing); the default for private two-class fits that
screen (``start="auto"``, with 0.75 of the budget for this release), more
accurate on every development set and epsilon measured
(docs/studies/frank_wolfe_defaults.rst).
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["SCREENING_SCORES", "column_masses", "screening_statistic", "screening_scores",
           "noisy_top_columns", "private_top_columns", "DEFAULT_N_CANDIDATES",
           "START_THRESHOLD", "naive_bayes_start", "START_COORDINATES_PER_STEP",
           "START_MAX_COORDINATES", "start_steps"]

#: Candidate features kept by ``k="auto"``: at least the number of
#: steps the automatic ``max_iter`` takes for N epsilon up to 2.6e5, and
#: ln(2k) = 9.0 against ln(2^21) = 14.6 for hashed text.
DEFAULT_N_CANDIDATES = 4096

#: Screening scores (``"auto"`` is ``"mass"``).
SCREENING_SCORES = ("auto", "gradient", "mass")


def _row_normalised(Xr):
    """X with each row divided by max(1, its L2 norm): every row has L2 norm <= 1."""
    Xr = sp.csr_array(Xr)
    sq = np.asarray(Xr.multiply(Xr).sum(axis=1)).ravel()
    scale = 1.0 / np.maximum(1.0, np.sqrt(sq))
    return sp.csr_array((Xr.data * np.repeat(scale, np.diff(Xr.indptr)), Xr.indices,
                         Xr.indptr), shape=Xr.shape)


def column_masses(Xr):
    """Column masses of the row-normalised |X| (each row's L2 norm capped at 1).

    Parameters
    ----------
    Xr : scipy.sparse CSR array of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_features,), float64
    """
    A = _row_normalised(Xr)
    A.data = np.abs(A.data)
    return np.asarray(A.sum(axis=0)).ravel()


def screening_statistic(Xr, score, y_codes=None, n_classes=2, class_sums=False):
    r"""The statistic the screening releases (before its Gaussian noise).

    Each example adds its row-normalised row :math:`\tilde x_i = x_i /
    \max(1, \|x_i\|_2)` (or :math:`|\tilde x_i|`, or :math:`-\tilde x_i`) to one
    row of the statistic, so adding or removing it moves the statistic by a
    matrix of Frobenius norm at most 1 (2 for replace-one).

    Parameters
    ----------
    Xr : scipy.sparse CSR array of shape (n_samples, n_features)
    score : {"mass", "gradient"}
        ``"mass"``: the column masses :math:`\sum_i |\tilde x_{ij}|` (no label),
        shape (1, n_features).  ``"gradient"`` with two classes: the class
        differences :math:`d_j = \sum_i \tilde x_{ij}(2y_i - 1)`, shape
        (1, n_features); with K > 2 classes: the per-class sums
        :math:`S_{kj} = \sum_{i: y_i = k} \tilde x_{ij}`, shape (K, n_features).
    y_codes : ndarray of shape (n_samples,), int, or None
        The class index of each row in ``range(n_classes)`` (needed by
        ``"gradient"`` and ``class_sums``; index 1 is the positive class of two).
    n_classes : int, default=2
    class_sums : bool, default=False
        Release the per-class sums :math:`S_{kj}` (shape (n_classes, n_features))
        whatever the score, also for two classes: the statistic of a fit that
        starts from naive Bayes (:func:`naive_bayes_start`).  Their column sums
        are the masses on data without negative entries, and :math:`S_1 - S_0`
        the class differences.

    Returns
    -------
    ndarray of shape (1, n_features) or (n_classes, n_features), float64
    """
    if score == "mass" and not class_sums:
        return column_masses(Xr)[None, :]
    A = _row_normalised(Xr)
    codes = np.asarray(y_codes, dtype=np.int64)
    if n_classes <= 2 and not class_sums:
        signs = 2.0 * codes - 1.0
        return np.asarray(A.T @ signs).reshape(1, -1)
    onehot = sp.csr_array((np.ones(codes.size), (codes, np.arange(codes.size))),
                          shape=(n_classes, codes.size))
    return (onehot @ A).toarray()


def screening_scores(noisy, score):
    r"""Per-column screening scores from the noisy statistic (post-processing).

    ``"mass"``: the noisy mass.  ``"gradient"``: the magnitude of the loss
    gradient at the zero model, which scores the first Frank-Wolfe step's
    vertices: two classes, :math:`|\tilde d_j|` (twice :math:`|\nabla_j|` of the
    logistic loss at :math:`w = 0`, :math:`\sum_i x_{ij}(1/2 - y_i)`); K classes,
    :math:`\max_k |\sum_l \tilde S_{lj}/K - \tilde S_{kj}|` (the softmax
    cross-entropy's gradient at :math:`W = 0` is
    :math:`\sum_i x_{ij}(1/K - [y_i = k])`).

    Per-class sums (``class_sums`` of :func:`screening_statistic`) with
    ``"mass"``: their column sums (the noisy masses of data without negative
    entries, with the noise of both rows).

    Parameters
    ----------
    noisy : ndarray of shape (1, n_features) or (n_classes, n_features)
        Modified in place (except per-class sums with ``"mass"``).
    score : {"mass", "gradient"}

    Returns
    -------
    ndarray of shape (n_features,)
    """
    if score == "mass":
        return noisy[0] if noisy.shape[0] == 1 else noisy.sum(axis=0)
    if noisy.shape[0] == 1:
        return np.abs(noisy[0], out=noisy[0])
    mean = noisy.mean(axis=0)
    noisy -= mean
    np.abs(noisy, out=noisy)
    return noisy.max(axis=0)


def noisy_top_columns(statistic, k, noise_multiplier, rng, *, sensitivity=1.0,
                      score="mass", keep_statistic=False):
    """The ``k`` columns of largest score after the Gaussian release of ``statistic``.

    Parameters
    ----------
    statistic : ndarray of shape (n_rows, n_features), float64
        From :func:`screening_statistic` (or its sum over row blocks); modified in
        place.
    k : int
        1 <= k <= n_features.
    noise_multiplier : float
        Gaussian noise std divided by the L2 sensitivity.
    rng : numpy.random.Generator
    sensitivity : float, default=1.0
        1 for add/remove, 2 for replace-one.
    score : {"mass", "gradient"}, default="mass"
    keep_statistic : bool, default=False
        Leave ``statistic`` holding the noisy statistic (the scores are computed
        from a copy).

    Returns
    -------
    ndarray of shape (k,), int64, sorted
    """
    statistic += rng.normal(0.0, noise_multiplier * sensitivity, statistic.shape)
    scores = screening_scores(statistic.copy() if keep_statistic else statistic, score)
    np.negative(scores, out=scores)
    return np.sort(np.argpartition(scores, k - 1)[:k]).astype(np.int64)


#: A candidate enters the naive-Bayes start only if its noisy column sum exceeds
#: this many standard deviations of its noise: of the 2^20 columns of hashed text,
#: about 33 pure-noise columns pass (the normal tail beyond 4 is 3.2e-5), against
#: the few hundred frequent ones; the noise-only candidates would otherwise
#: dominate the per-class totals of the ratios and bias every margin towards the
#: larger class (on 20 Newsgroups comp.* vs rec.* at epsilon 1, without the
#: threshold the start alone classified 11-14% of the documents as rec.*, 45% are).
START_THRESHOLD = 4.0


def naive_bayes_start(sums, columns, l1_bound, noise_std, threshold=START_THRESHOLD):
    r"""A starting point of the L1 ball from the noisy per-class sums (two classes).

    Post-processing of the screening's release (no data read, no privacy cost).
    Over the candidates R whose noisy column sum :math:`\tilde S_{0j} + \tilde
    S_{1j}` exceeds ``threshold`` times its noise standard deviation
    :math:`\sqrt 2\,s`, the multinomial naive-Bayes log-count ratios (Wang and
    Manning 2012, Section 2.1, with each class's sums normalised over R and the
    smoothing equal to the noise standard deviation s, as in
    :class:`~dptoolkit.linear_model.DPNBLogisticClassifier`):

    .. math:: r_j = \log\frac{p_{1j}}{p_{0j}}, \qquad
              p_{cj} = \frac{\max(\tilde S_{cj}, 0) + s}{\sum_{l \in R}(\max(\tilde S_{cl}, 0) + s)},

    and :math:`w_0 = \lambda\, r / \|r\|_1` (a point of the sphere of the L1
    ball; 0 where R is empty).  :math:`r_j > 0` favours the positive class
    (index 1), as :math:`-\nabla_j` of the logistic loss at :math:`w = 0` does.

    Parameters
    ----------
    sums : ndarray of shape (2, n_features)
        The released (noisy) per-class sums; not modified.
    columns : ndarray of shape (k,), int
        The candidate columns (the start's coordinates, in this order).
    l1_bound : float
        Radius :math:`\lambda` of the ball.
    noise_std : float
        Standard deviation s of the noise on each entry of ``sums``.
    threshold : float, default=START_THRESHOLD

    Returns
    -------
    ndarray of shape (k,), float64
    """
    S = np.asarray(sums, dtype=np.float64)[:, columns]
    total = S[0] + S[1]
    kept = total > threshold * np.sqrt(2.0) * noise_std
    w0 = np.zeros(columns.size)
    if not kept.any():
        return w0
    p = np.maximum(S[:, kept], 0.0) + noise_std
    p /= p.sum(axis=1, keepdims=True)
    r = np.log(p[1]) - np.log(p[0])
    norm = np.abs(r).sum()
    if norm > 0:
        w0[kept] = l1_bound * r / norm
    return w0


#: ``start_steps="auto"``: :math:`t_0 = T\,\min(\mathrm{nnz}(w_0), 1024) / 4`.  The
#: start spreads the radius over its nnz(w0) coordinates, a step puts its weight on
#: one: the steps' total weight in :math:`w_T`, about :math:`2T/t_0 =
#: 8/\mathrm{nnz}(w_0)`, is that of 8 average coordinates of the start, enough for
#: the few frequent features the loss asks for first (the model has no intercept)
#: without washing out the start (on the development sets 10 instead of 4 lost up
#: to 0.09 on Reuters acq against the rest at epsilon 1; t0 = 10 T lost more;
#: docs/studies/frank_wolfe_defaults.rst).
START_COORDINATES_PER_STEP = 4.0

#: ``start_steps="auto"`` counts at most this many coordinates of the start
#: (``MIN_AUTO_CANDIDATES``, the candidates ``k="auto"`` keeps when
#: ``max_iter`` is at most 1024): :math:`t_0 \le 256\,T`, so the steps keep about
#: :math:`1 - (256/257)^2 \approx 1/128` of the weight of :math:`w_T`.  Why:
#: Jaggi's (2013, Theorem 1) induction from a start worth :math:`t_0` steps bounds
#: the error of :math:`w_T` by
#: :math:`\pi h_0 + 2C_fT/(T+t_0)^2` with :math:`\pi \approx (t_0/(T+t_0))^2`
#: the start's weight and :math:`h_0` its error (plus the mechanism's error,
#: as from the zero start), which is smallest at :math:`t_0^* = 2C_f/h_0`: a
#: property of the start, not growing with T.  The uncapped rule grows like
#: :math:`T\,\mathrm{nnz}(w_0)`, and nnz(w0) grows with the scale :math:`N
#: \varepsilon` as T does (about 8T on the development sets, every candidate at
#: 8.4 million rows), so without a cap the steps' weight falls like 1/T: on the
#: KDDA-shaped problem (4,000 candidates, all in the start) every step's size was
#: about 5e-7 (docs/studies/scaling.rst).  The cap is the largest start the rule
#: was set on, so it changes no fit whose start has at most 1024 coordinates
#: (every fit with ``k="auto"`` and ``max_iter`` at most 1024, which includes
#: every development set at epsilon up to 8).
START_MAX_COORDINATES = 1024


def start_steps(max_iter, w0, given=None):
    """:math:`t_0` of the start ``w0``: ``given`` (``start_steps``), or for
    ``"auto"`` (None) ``max_iter * min(nnz(w0), START_MAX_COORDINATES) /
    START_COORDINATES_PER_STEP`` (a function of T and of the release).

    Parameters
    ----------
    max_iter : int
        T.
    w0 : ndarray of shape (k,)
        The start (:func:`naive_bayes_start`).
    given : float or None, default=None

    Returns
    -------
    float
    """
    if given is not None:
        return float(given)
    counted = min(np.count_nonzero(w0), START_MAX_COORDINATES)
    return float(max_iter) * counted / START_COORDINATES_PER_STEP


def private_top_columns(Xr, k, noise_multiplier, rng, *, sensitivity=1.0, score="mass",
                        y_codes=None, n_classes=2, class_sums=False):
    """The ``k`` columns of largest noisy score, sorted by index:
    :func:`noisy_top_columns` (same ``k``, ``noise_multiplier``, ``rng``,
    ``sensitivity`` and ``score``) of the :func:`screening_statistic` of ``Xr``
    (same ``score``, ``y_codes``, ``n_classes`` and ``class_sums``).

    Returns
    -------
    ndarray of shape (k,), int64
        And, with ``class_sums``, the released per-class sums, shape
        (n_classes, n_features).
    """
    stat = screening_statistic(Xr, score, y_codes, n_classes, class_sums)
    columns = noisy_top_columns(stat, k, noise_multiplier, rng, sensitivity=sensitivity,
                                score=score, keep_statistic=class_sums)
    return (columns, stat) if class_sums else columns
