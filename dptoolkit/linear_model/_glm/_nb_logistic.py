r"""Private naive-Bayes-scaled logistic regression: the toolkit's private text model.

Wang and Manning (2012) showed that scaling bag-of-words features by their
naive-Bayes log-count ratios before a linear classifier ("NBSVM") is a strong
sentiment and topic baseline.  Both ingredients have cheap private versions on
data with a public bound, and they share one release:

1. **One Gaussian release of the per-class feature sums.**  Every row is scaled
   to L2 norm 1 (a local operation), and :math:`S_c = \sum_{i: y_i = c} \hat x_i`
   for every class is released with Gaussian noise.  Adding or removing one
   example changes one :math:`S_c` by a vector of L2 norm at most 1, so the
   release is the Gaussian mechanism with noise multiplier :math:`\sigma_1`
   (Mironov 2017, Proposition 7), for any number of classes K.  These sums are
   the document frequencies (the vocabulary) and the naive-Bayes statistics at once.
2. **Post-processing.**  Keep the ``k`` features S of largest noisy
   total :math:`S_0 + S_1` and compute the multinomial naive-Bayes log-count
   ratios :math:`r_j = \log(p_{1j}) - \log(p_{0j})`, :math:`p_{cj} = (\max(S_{cj},
   0) + s) / \sum_{l \in S} (\max(S_{cl}, 0) + s)`, with the smoothing ``s`` equal
   to the noise standard deviation (each class's sums normalised, as in Wang and
   Manning 2012: without it a class with more examples adds the same constant to
   every ratio).
3. **Per-example transformation** (local): row :math:`x` becomes
   :math:`z = (x_S \odot r, 1) / \|(x_S \odot r, 1)\|_2`; the constant entry is
   the intercept.  With K > 2 classes there is no single ratio: with
   :math:`L_{cj}` the multinomial naive-Bayes log-probabilities
   :math:`\log(\max(S_{cj}, 0) + s) - \log \sum_l (\max(S_{cl}, 0) + s)` of the
   kept features, centred over the classes, feature ``j`` is scaled by their
   spread :math:`r_j \propto \operatorname{std}_c L_{cj}` (mean 1 over the kept
   features; the K-class analogue of :math:`|r_j|`), and the softmax model
   starts from :math:`\theta_{jc} = L_{cj} / r_j`, naive Bayes's argmax
   (post-processing of the release).  Scaling features before DP-SGD matters
   because the noise is the same on every coordinate (Sun, Suresh and Menon
   2024; measured in :ref:`study_multiclass` and :ref:`study_data_needed`).
4. **DP-SGD** (Abadi et al. 2016) on the logistic loss over the :math:`z`,
   starting from naive Bayes: :math:`\theta = (1, \dots, 1, 0)` gives
   :math:`z^\top\theta = \sum_{j \in S} x_j r_j / \|(x_S \odot r, 1)\|`, the
   naive-Bayes log-odds with a uniform prior times a positive factor
   (post-processing of the release, as for K > 2 classes):
   Poisson sampling with rate ``sampling_rate``, sum of the per-example
   gradients (norm at most 1 since :math:`\|z\| = 1` and :math:`|\ell'| < 1`, so the
   clipping bound 1 never changes one), Gaussian noise of standard deviation
   :math:`\sigma_2`, divided by the public expected batch size :math:`qN`;
   step ``learning_rate`` and L2 penalty ``alpha``.  The default step is
   :math:`(1/\beta) / \sqrt{1 + \rho^2}`: :math:`1/\beta = 4` for the
   :math:`\tfrac14`-smooth logistic loss on unit rows, and
   :math:`\rho = \sqrt{k + 1}\,\sigma_2 / (qN)` the norm of a step's noise over the
   gradient bound 1, as the step of averaged SGD scales with the inverse root of
   the stochastic gradient's second moment (Nemirovski et al. 2009, Section 2.3).
   The released model is the average of the iterates of the last
   ``averaging_fraction`` of the steps (at most 25 evenly spaced ones, for
   memory; post-processing).  With K > 2 classes the
   loss is the softmax cross-entropy, whose per-example gradient
   :math:`z (p - e_y)^\top` has Frobenius norm at most :math:`\sqrt 2`; it is
   clipped to 1, so the lot's summed gradient has L2 sensitivity 1 and the
   privacy event is the binary one.

**Privacy.**  Neighbouring relation: add or remove one (document, label); the
number of examples ``N`` (``n_samples_public``), the feature hashing and every
hyperparameter are public.  The release (``selection_share`` of the budget)
and the ``T = ceil(n_epochs / q)`` subsampled Gaussian steps (Mironov, Talwar
and Zhang 2019) compose adaptively in Renyi DP: :math:`\sigma_1` is the
noise of a single Gaussian release at ``(epsilon, delta)`` divided by
:math:`\sqrt{f}` (it spends a fraction ``f`` of the zCDP budget), and
:math:`\sigma_2` is the smallest noise multiplier for which the composition of
both is ``(epsilon, delta)``-DP (bisection by
:func:`~dptoolkit.accounting.calibrate_parameter` on the composed event of the
release and the steps).

The defaults (``sampling_rate=0.04``, ``n_epochs=20``; for two classes
``selection_share=0.75``) come from the smoothness of the loss, the large-batch
DP-SGD practice of De et al. (2022) and Ponomareva et al. (2023), and small
a-priori grids on 20 Newsgroups and a9a (``docs/studies/private_utility.rst``).
For two classes the vocabulary and the step are functions of the public noise:
``k`` is the largest k with :math:`\rho \le 1`, between 5,000 and
50,000 (``_binary_vocabulary()``; 50,000 without noise), and ``learning_rate`` is
:math:`4 / \sqrt{1 + \rho^2}` (``_auto_learning_rate()``); measured in
:ref:`study_private_utility`.  For more classes
the vocabulary and the split are functions of K (``_auto_defaults()``; step 4),
developed on 20 Newsgroups comp.* + rec.* (9 classes) and Reuters R8.  None was
chosen on the data the toolkit reports (IMDB, 20 Newsgroups with 20 classes).

References
----------
S. Wang, C. Manning. Baselines and Bigrams: Simple, Good Sentiment and Topic
Classification. ACL 2012.
M. Abadi et al. Deep Learning with Differential Privacy. CCS 2016.
A. Nemirovski, A. Juditsky, G. Lan, A. Shapiro. Robust Stochastic Approximation
Approach to Stochastic Programming. SIAM J. Optim. 19(4), 2009.
I. Mironov, K. Talwar, L. Zhang. Renyi Differential Privacy of the Sampled
Gaussian Mechanism. 2019.
Z. Sun, A. T. Suresh, A. K. Menon. The Importance of Feature Preprocessing for
Differentially Private Linear Optimization. ICLR 2024.
S. De, L. Berrada, J. Hayes, S. Smith, B. Balle. Unlocking High-Accuracy
Differentially Private Image Classification through Scale. 2022.
N. Ponomareva et al. How to DP-fy ML: A Practical Guide to Machine Learning with
Differential Privacy. JAIR 2023.
"""
import dataclasses
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..._docstrings import fill_doc
from . import _sgd_fast
from ..._private import data_dependent_error, PrivateEstimatorMixin
from ..._validation import (CLASSES, DELTA_GAUSSIAN, FRACTION_OPEN, NON_NEGATIVE, POSITIVE,
                            PRIVATE_COMMON, Interval, Options, check_positive_int,
                            check_X_y_named, validate_params)
from ...accounting import calibrate_parameter
from ...accounting.events import ComposedEvent, GaussianEvent
from ...distributed import class_feature_sums, is_dask_array, row_aligned, validate_dask_X_y
from ...distributed import unit_rows as _unit_rows  # noqa: F401 (the tests' reference)
from ..._estimator import _ClassifierOutputs, _store_params
from ._base import calibrate_noise_scale, subsampled_gaussian_steps
from ._dask_sgd import sgd_over_blocks

__all__ = ["DPNBLogisticClassifier"]


#: ``"auto"`` defaults for two classes: the release's share of the budget chosen a priori
#: on 20 Newsgroups and a9a (docs/studies/private_utility.rst); the vocabulary is
#: resolved after the calibration (:func:`_binary_vocabulary`), between these bounds.
BINARY_DEFAULTS = {"f": 0.75}
BINARY_MIN_FEATURES = 5000
BINARY_MAX_FEATURES = 50_000
#: ``1 / beta`` of the logistic loss (and of the clipped softmax cross-entropy as used
#: here) on unit rows: the largest stable step, the ``"auto"`` step without noise.
SMOOTH_STEP = 4.0
#: For K > 2 classes at most this many weights (K times the kept features), and the
#: release's share of the budget.
MULTICLASS_MAX_WEIGHTS = 2**20
MULTICLASS_RELEASE_FRACTION = 0.5
#: The released weights average at most this many evenly spaced iterates of the last
#: ``averaging_fraction`` of the steps (memory: that many copies of the K x k weights).
AVERAGED_ITERATES = 25


def _auto_defaults(p, n_classes):
    """``k`` and ``selection_share`` for ``"auto"``: public quantities only.

    Two classes: the release's share from :data:`BINARY_DEFAULTS`; the vocabulary
    stays ``"auto"`` until the noise is known (:func:`_binary_vocabulary`).  K > 2
    classes: the rows DP-SGD sees have
    unit norm, so the noise of a margin does not grow with the number of kept
    features k; more features add signal up to the memory of K k weights
    (k = min(50000, 2**20 // K)), and the softmax model has K times the weights to
    learn, so the release gets half the budget instead of three quarters (chosen
    on 20 Newsgroups comp.* + rec.* as a 9-class task: :ref:`study_multiclass`).
    """
    multi = n_classes > 2
    out = {}
    if p.k == "auto" and multi:
        out["k"] = min(50_000, MULTICLASS_MAX_WEIGHTS // n_classes)
    if p.f == "auto":
        out["f"] = MULTICLASS_RELEASE_FRACTION if multi else BINARY_DEFAULTS["f"]
    return out


def _gradient_noise_ratio(k, sigma2, q, n_public):
    """``rho``: the L2 norm of a step's noise, ``sqrt(k + 1) sigma_2 / (q N)``, over the
    gradient bound 1 (the transformed rows have k + 1 entries and unit norm)."""
    return math.sqrt(k + 1) * sigma2 / (q * n_public)


def _binary_vocabulary(sigma2, q, n_public):
    r"""``k="auto"`` for two classes: as many features as keep ``rho <= 1``.

    A larger vocabulary raises what the model can reach without noise, but every kept feature adds
    a coordinate of DP-SGD noise: the noise of
    a step has norm :math:`\rho = \sqrt{k + 1}\, \sigma_2 / (qN)` relative to the
    gradient bound 1.  The vocabulary is the largest k with :math:`\rho \le 1` (the
    noise never dominates the averaged gradient's bound), kept between
    :data:`BINARY_MIN_FEATURES` (the former fixed default) and
    :data:`BINARY_MAX_FEATURES` (memory).  Public quantities only; without noise,
    the maximum.
    """
    if sigma2 == 0.0:
        return BINARY_MAX_FEATURES
    k = math.floor((q * n_public / sigma2) ** 2) - 1
    return int(min(max(k, BINARY_MIN_FEATURES), BINARY_MAX_FEATURES))


def _auto_learning_rate(k, n_classes, sigma2, q, n_public):
    r"""``learning_rate="auto"``: :math:`(1/\beta) / \sqrt{1 + \rho^2}` for two classes.

    For averaged SGD on a convex, :math:`\beta`-smooth loss the best constant step
    is :math:`\eta \propto R / (G \sqrt T)` with :math:`G^2` the second moment of
    the stochastic gradient (Nemirovski, Juditsky, Lan and Shapiro 2009, Section
    2.3); in DP-SGD on unit rows :math:`G^2 \le 1 + \rho^2`
    (:func:`_gradient_noise_ratio`), so the step is divided by
    :math:`\sqrt{1 + \rho^2}`; the unknown constant R/sqrt(T) is set so that the
    step without noise is the smooth step :data:`SMOOTH_STEP` (4).  Starting from
    naive Bayes (module docstring, step 4) the distance R is short, and the smaller
    step under strong noise keeps the iterates near it.  K > 2 classes: 4 (the
    multiclass model was developed with it).
    """
    if n_classes > 2:
        return SMOOTH_STEP
    rho = _gradient_noise_ratio(k, sigma2, q, n_public)
    return SMOOTH_STEP / math.sqrt(1.0 + rho * rho)


#: The rule of thumb's signal: the margin ``<x, mu_c - mu_c'>`` of a typical unit-norm
#: bag-of-words row on the difference of two class means, a public constant of text
#: classification set on the binary development task (20 Newsgroups comp.* vs rec.*;
#: conservative on Reuters R8; docs/studies/data_needed.rst), never on the data fitted.
TYPICAL_TEXT_MARGIN = 0.01


def _class_spread(centred):
    """Per-feature scale for K > 2 classes: the spread of the centred log-probabilities.

    ``centred`` (K, k) holds the noisy naive-Bayes log-probabilities of the kept
    features, centred over the classes.  Their standard deviation over the classes
    is how much a feature tells the classes apart (for two classes it is half the
    absolute log-count ratio); scaled to mean 1 so that the constant entry of the
    rows (the intercept) keeps its weight whatever the noise level.  Post-processing
    of the release.
    """
    spread = centred.std(axis=0)
    mean = spread.mean()
    return spread / mean if mean > 0 else np.ones_like(spread)


def _dp_sgd(X, codes, n_classes, theta, columns, ratios, rng, *, lam, learning_rate,
            sampling_rate, denominator, batch_size, n_steps, noise_std, record_steps):
    """Step (4): DP-SGD on the transformed rows (clip 1: they have unit norm).

    In memory, the compiled kernel (lazy per-coordinate noise; the reference
    fits); on a Dask ``X``, ``sgd_over_blocks``: the
    rows are transformed and kept on the workers, each block draws its Poisson
    lots from its own stream and the client draws the dense noise.  The same
    randomised algorithm and privacy event; not the same draws.  ``theta`` is the
    starting point, updated in place in memory.  Returns ``(status, trace)``.
    """
    binary = n_classes == 2
    targets = np.where(codes == 1, 1.0, -1.0) if binary else codes.astype(np.float64)
    if is_dask_array(X):
        _, trace, finite, _ = sgd_over_blocks(
            X, row_aligned(targets, X), transform=_transform_block,
            transform_args=(columns, ratios), n_features=columns.size + 1,
            loss="logistic" if binary else "softmax", n_classes=n_classes, alpha=lam,
            learning_rate=learning_rate, clip=1.0, sampling_rate=sampling_rate,
            denominator=denominator, n_steps=n_steps, noise_std=noise_std, rng=rng,
            record_steps=record_steps, theta0=theta)
        return (_sgd_fast.STATUS_OK if finite else _sgd_fast.STATUS_NONFINITE), trace
    Z = _transform(X, columns, ratios)
    args = dict(lam=lam, learning_rate=learning_rate, clip=1.0, sampling_rate=sampling_rate,
                batch_size=batch_size, denominator=denominator, n_steps=n_steps,
                noise_std=noise_std, bit_generator=rng.bit_generator,
                record_steps=record_steps, trace=np.zeros((record_steps.size, theta.size)))
    if binary:
        status, _ = _sgd_fast.dpsgd(Z.data, Z.indices, Z.indptr, targets,
                                    np.ones(Z.shape[0]), theta,
                                    loss=_sgd_fast.LOSS_CODES["logistic"], **args)
    else:
        status, _ = _sgd_fast.dpsgd_softmax(Z.data, Z.indices, Z.indptr,
                                            codes.astype(np.int64), np.ones(Z.shape[0]),
                                            theta, **args)
    return status, args["trace"]


def _transform_block(Xb, columns, ratios):
    """A row block transformed for DP-SGD on the workers, with its squared row norms."""
    Z = _transform(Xb, columns, ratios)
    return Z, np.ones(Z.shape[0])


def _transform(X, columns, ratios):
    """Rows ``(x_S * r, 1) / ||(x_S * r, 1)||`` as CSR (int64 indices) and their norms."""
    Xs = sp.csr_array(X)[:, columns]
    Xs = sp.csr_array(Xs.multiply(ratios[None, :]))
    ones = sp.csr_array(np.ones((Xs.shape[0], 1)))
    Z = sp.hstack([Xs, ones], format="csr")
    Z.sum_duplicates()
    norms = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=1)).ravel())
    Z.data /= np.repeat(norms, np.diff(Z.indptr))
    Z.indices = Z.indices.astype(np.int64)
    Z.indptr = Z.indptr.astype(np.int64)
    return Z


@fill_doc
@dataclasses.dataclass(frozen=True)
class NBValidated:
    """The validated hyper-parameters of DPNB: ``epsilon`` and ``delta`` (None when not
    private), ``k`` (``k``) and ``f`` (``selection_share``), either
    ``"auto"`` until the label set is known, ``q`` (``sampling_rate``), ``n_epochs``,
    ``lr`` (``learning_rate``), ``alpha`` and ``avg`` (``averaging_fraction``)."""
    epsilon: float
    delta: float
    k: object
    f: object
    q: float
    n_epochs: float
    lr: float
    alpha: float
    avg: float


@dataclasses.dataclass(frozen=True)
class NBParams:
    """The parameters a DPNB fit runs with (its privacy plan's ``params``):
    ``validated`` (an :class:`NBValidated`, ``"auto"`` resolved),
    the public N, the vocabulary size ``k``, the noise multipliers ``(sigma1,
    sigma2)`` of the class sums and of DP-SGD (0 when not private), the steps."""
    validated: "NBValidated"
    private: bool
    n_samples: int
    k: int
    noise_multipliers: tuple
    n_steps: int


class DPNBLogisticClassifier(_ClassifierOutputs, PrivateEstimatorMixin, ClassifierMixin,
                             BaseEstimator):
    r"""Private naive-Bayes-scaled logistic regression for sparse text (any number of classes).

    A private release of the per-class feature sums picks the vocabulary and the
    naive-Bayes feature scaling; DP-SGD then fits a logistic regression on the
    scaled, row-normalised features.  The model has at most ``k``
    non-zero weights.  See ``dptoolkit.linear_model._glm._nb_logistic`` for the
    mechanism and the privacy analysis.

    Parameters
    ----------
    epsilon : float or None, default=1.0
        Total privacy budget, > 0.  ``None`` (only when given explicitly) fits the
        same model without noise and without a warning (naive-Bayes ratios with
        Laplace smoothing 1, then SGD; ``privacy_spent_`` None).
    delta : float, default=1e-5
        In (0, 1); ignored when ``epsilon`` is None.
    k : int or "auto", default="auto"
        Features kept after the release (>= 1); the model's non-zeros.  ``"auto"``:
        for two classes the largest k whose DP-SGD step noise
        :math:`\rho = \sqrt{k+1}\,\sigma_2 / (qN)` is at most 1, between 5000 and
        50000 (50000 without noise; ``_binary_vocabulary()``); for K > 2
        ``min(50000, 2**20 // K)`` (``_auto_defaults()``).  Public quantities only.
    selection_share : float or "auto", default="auto"
        Share ``f`` of the zCDP budget given to the release, in (0, 1).  ``"auto"``:
        0.75 for two classes, 0.5 for more.
    sampling_rate : float, default=0.04
        Poisson sampling rate ``q`` of DP-SGD (expected batch ``qN``), in (0, 1].
    n_epochs : float, default=20
        DP-SGD steps ``T = ceil(n_epochs / q)``, > 0.
    learning_rate : float or "auto", default="auto"
        Step size, > 0.  ``"auto"``: for two classes :math:`4 / \sqrt{1 + \rho^2}`
        (``4 = 1/beta`` of the logistic loss on unit rows, smaller when the step's
        noise is large; ``_auto_learning_rate()``), 4 for K > 2.
    alpha : float, default=1e-4
        L2 penalty, >= 0.
    averaging_fraction : float, default=0.5
        The released weights average the iterates of the last
        ``averaging_fraction`` of the steps (at most 25 evenly spaced ones), in
        (0, 1].
    n_samples_public : int or None, default=None
        Public N (sets ``qN``); ``None`` reads it from the data with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning` (refused for a private
        fit on a Dask array, whose block sizes are not public).
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set: two or more distinct labels (with two,
        ``classes_[1]`` is the positive class).  When given, the fit never reads the label set from
        ``y`` (a declared class absent from ``y`` is fine; a label of ``y``
        outside it raises ``ValueError``).  None: ``np.unique(y)``, with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning` for private fits.
    %(accountant)s
    %(random_state)s

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        A linear model with the same predictions (``coef_[S] = r * theta``; one row
        per class when there are more than two); the probabilities use the row
        normalisation (:meth:`predict_proba`).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    feature_indices_ : ndarray of shape (k,)
        The kept features S.
    log_count_ratios_ : ndarray of shape (k,)
        The private naive-Bayes ratios r (for more than two classes, the spread
        of the centred log-probabilities over the classes, mean 1).
    theta_ : ndarray of shape (k + 1,) or (k + 1, n_classes)
        Weights on the transformed rows (the last row multiplies the constant).
    classes_ : ndarray of shape (n_classes,)
        The declared ``classes`` (sorted), else the labels of ``y``.
    noise_multipliers_ : tuple (sigma_1, sigma_2) or None
    learning_rate_ : float
        The step used (``learning_rate`` resolved).
    n_steps_ : int
    privacy_event_ : ComposedEvent or None
        ``GaussianEvent(sigma_1)`` then ``T`` Poisson-subsampled Gaussian steps.
    privacy_spent_ : tuple (epsilon, delta) or None
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from dptoolkit.linear_model import DPNBLogisticClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = sp.csr_array((rng.random((4000, 200)) < 0.05).astype(float))
    >>> y = (X[:, [0, 1, 2]].sum(axis=1) > X[:, [3, 4, 5]].sum(axis=1)).astype(int)
    >>> clf = DPNBLogisticClassifier(epsilon=2.0, k=50,
    ...                              n_samples_public=4000, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.7
    True
    """

    #: The command line's ``--model`` name (dptoolkit._discovery.cli_name).
    _cli_name = "dp-nb-logistic"
    #: ``fit`` takes a Dask array of CSR row blocks (the command line's cluster fits).
    _fits_dask_arrays = True

    _privacy_label = "DP naive-Bayes logistic regression"

    _parameter_constraints = {
        **PRIVATE_COMMON, "delta": DELTA_GAUSSIAN,
        "k": [Options("auto"), Interval("int", 1, None)],
        "selection_share": [Options("auto")] + FRACTION_OPEN,
        "sampling_rate": [Interval("real", 0.0, 1.0, closed="right")],
        "n_epochs": [Interval("real", 0.0, 1e4, closed="right")],
        "learning_rate": [Options("auto")] + POSITIVE, "alpha": NON_NEGATIVE,
        "averaging_fraction": [Interval("real", 0.0, 1.0, closed="right")],
        "classes": CLASSES,
    }

    def __init__(self, *, epsilon=1.0, delta=1e-5, k="auto",
                 selection_share="auto", sampling_rate=0.04, n_epochs=20, learning_rate="auto",
                 alpha=1e-4, averaging_fraction=0.5, n_samples_public=None, classes=None,
                 accountant=None, random_state=None):
        _store_params(self, locals())

    def _check_params(self):
        """The validated parameters (ranges: the constraint table, checked once by
        the template) as floats; ``"auto"`` kept."""
        epsilon, delta = self._check_budget(optional=True, delta_required=True)
        k, f, lr = self.k, self.selection_share, self.learning_rate
        return NBValidated(
            epsilon=epsilon, delta=delta, k=k if k == "auto" else int(k),
            f=f if f == "auto" else float(f), q=float(self.sampling_rate),
            n_epochs=float(self.n_epochs), lr=lr if lr == "auto" else float(lr),
            alpha=float(self.alpha), avg=float(self.averaging_fraction))

    def _budget(self, p):
        """(sigma_1, sigma_2, T, event) from public quantities."""
        eps, delta, f, q = p.epsilon, p.delta, p.f, p.q
        n_steps = int(math.ceil(p.n_epochs / q))
        sigma_all = calibrate_parameter(lambda s: GaussianEvent(s), target_epsilon=eps,
                                        delta=delta, low=1e-3, high=1e6, increasing=False,
                                        composition="rdp", rtol=1e-9)
        sigma1 = sigma_all / math.sqrt(f)

        def event_of(sigma2):
            return ComposedEvent((GaussianEvent(sigma1),
                                  subsampled_gaussian_steps(sigma2, q, n_steps)))

        sigma2 = calibrate_noise_scale(event_of, epsilon=eps, delta=delta,
                                       what=f"the release and {n_steps} DP-SGD steps")
        return sigma1, sigma2, n_steps, event_of(sigma2)

    def n_samples_needed(self, n_classes):
        r"""Training size below which this model is not expected to beat the majority class.

        A rule of thumb from public quantities only (``epsilon``, ``delta``, the
        release's share of the budget and the number of classes; never the data).
        The model starts from the release of the per-class sums of unit rows with
        Gaussian noise of standard deviation :math:`\sigma_1` per entry (module
        docstring, step 1).  With classes of about ``N / K`` examples, the
        naive-Bayes direction between two classes, :math:`\hat S_c / (N/K) -
        \hat S_{c'} / (N/K)`, gives a unit row :math:`x` the margin
        :math:`\langle x, \mu_c - \mu_{c'} \rangle` plus Gaussian noise of
        standard deviation :math:`\sqrt 2 K \sigma_1 \|x_S\| / N \le \sqrt 2 K
        \sigma_1 / N`, whatever the number of kept features (the rows have unit
        norm, so the dimension ``n_features`` does not enter).  The release
        separates the classes when that noise is below the typical margin
        :math:`\gamma` (``TYPICAL_TEXT_MARGIN``, 0.01):

        .. math:: N \ge N_{\min} = \sqrt 2 \, K \, \sigma_1(\varepsilon, \delta, f)
                  / \gamma .

        Since :math:`\sigma_1 \approx c(\delta) / \varepsilon`, this is a bound
        on :math:`N \varepsilon`.  Checked against the measured curves of test
        accuracy against N in ``docs/studies/data_needed.rst``.

        Parameters
        ----------
        n_classes : int
            The public number of classes K, >= 2.

        Returns
        -------
        float
            :math:`N_{\min}` (examples).

        Raises
        ------
        ValueError
            ``epsilon`` is None (a non-private fit needs no budget), invalid
            parameters, or ``n_classes`` below 2.
        """
        validate_params(self)
        n_classes = check_positive_int(n_classes, "n_classes")
        if n_classes < 2:
            raise ValueError(f"n_classes must be >= 2, got {n_classes}")
        p = self._check_params()
        if p.epsilon is None:
            raise ValueError("epsilon is None: a non-private fit needs no data for a "
                             "budget; give epsilon")
        p = dataclasses.replace(p, **_auto_defaults(p, n_classes))
        sigma1 = self._budget(p)[0]
        return math.sqrt(2.0) * n_classes * sigma1 / TYPICAL_TEXT_MARGIN

    @fill_doc
    def fit(self, X, y):
        """Fit the private model.

        Parameters
        ----------
        %(X_fit)s
            Non-negative features (e.g. binary bag of words); any scale (rows are
            normalised).  Or a :class:`dask.array.Array` of CSR row blocks
            (chunked along rows only, ``y`` with the same chunks): the release's
            sums, the transformed rows and DP-SGD's clipped gradient sums are
            computed on the workers (no row comes to the client), the noise on
            the client (``_glm._dask_sgd.sgd_over_blocks``).  DP-SGD's
            lots are then drawn per block: the same randomised algorithm and
            privacy event as in memory, not the same draws, so the released
            model differs from the in-memory one as two seeds' models do.
        y : array-like of shape (n_samples,)
            Class labels (two or more; with two, ``classes_[1]`` is the positive
            one).  With ``classes`` declared, labels from it (some may be absent).

        %(returns_self)s

        Raises
        ------
        ValueError
            Invalid parameters (named), fewer than two classes, labels of ``y``
            outside ``classes``, NaN/inf in X, DP-SGD diverged (a data-dependent
            error: lower ``learning_rate``; the fit is charged, since its noise
            ran, and no model is kept); a private fit on a Dask array without
            ``n_samples_public``, or one not chunked along rows only.
        RuntimeError
            Dask workers died repeatedly; no noise was drawn, nothing released.
        BudgetExceededError
            The accountant cannot pay; nothing is computed.
        """
        return super().fit(X, y)

    def _validate_fit_data(self, X, y):
        """In memory: X float64 CSR; on a Dask array X stays on the workers and
        ``y`` is ``(labels on the client, labels by block)``."""
        if is_dask_array(X):  # X stays on the workers; only y comes to the client
            X, y, y_blocks = validate_dask_X_y(self, X, y, private=self.epsilon is not None)
            check_classification_targets(y)
            return X, (y, y_blocks), self._resolve_classes(y, private=self.epsilon is not None)
        check_X_y_named(X, y)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             ensure_all_finite=True, y_numeric=False)
        check_classification_targets(y)
        return X, (y, y), self._resolve_classes(y, private=self.epsilon is not None)

    def _fit_private(self, X, y, plan, rng):
        """Release the class sums, then DP-SGD from naive Bayes (the class docstring)."""
        (y, y_blocks), classes = y, self.classes_
        p, private, N, k = (plan.params.validated, plan.params.private, plan.params.n_samples,
                            plan.params.k)
        (sigma1, sigma2), n_steps = plan.params.noise_multipliers, plan.params.n_steps
        n_features = X.shape[1]
        codes = np.searchsorted(classes, y)
        # (1) the release: per-class sums of unit rows + N(0, sigma1^2) each entry; a
        # row adds to exactly one class's sum, so the L2 sensitivity is 1 for any K
        # (exact sums from the workers when X is a Dask array; the noise is drawn here)
        sums = class_feature_sums(X, y_blocks, classes,
                                  normalize_rows=True)
        noisy = sums + rng.normal(0.0, sigma1, sums.shape)
        # (2) post-processing: vocabulary (largest noisy totals) and naive Bayes
        columns = np.sort(np.argpartition(-noisy.sum(axis=0), k - 1)[:k])
        smooth = sigma1 if private else 1.0  # the noise std; Laplace smoothing without
        pos = np.maximum(noisy[:, columns], 0.0) + smooth
        start = int(math.floor((1.0 - p.avg) * n_steps))
        rec = np.arange(start, n_steps, dtype=np.int64)
        if rec.size > AVERAGED_ITERATES:
            # evenly spaced iterates of the tail, the last one included
            rec = rec[np.unique(np.round(np.linspace(
                0, rec.size - 1, AVERAGED_ITERATES)).astype(np.int64))]
        if classes.size == 2:
            # the multinomial naive-Bayes log-count ratios (each class's sums
            # normalised to a distribution, as in Wang and Manning 2012)
            ratios = (np.log(pos[1]) - np.log(pos[1].sum())) - \
                (np.log(pos[0]) - np.log(pos[0].sum()))
            # DP-SGD starts from naive Bayes: theta = (1, ..., 1, 0) gives
            # z @ theta = sum_j x_j r_j / ||.||, the naive-Bayes log-odds (uniform
            # prior) of the kept features, a positive factor apart; post-processing
            # of the release, as for K > 2 classes
            theta = np.ones(k + 1)
            theta[k] = 0.0
        else:
            # (2') the multinomial naive-Bayes log-probabilities of the kept features,
            # centred over the classes; a feature is scaled by their spread over the
            # classes (the K-class |log-count ratio|) and the softmax model starts
            # from them: before any step its argmax is naive Bayes's (uniform prior)
            log_prob = np.log(pos) - np.log(pos.sum(axis=1, keepdims=True))
            centred = log_prob - log_prob.mean(axis=0)
            ratios = _class_spread(centred)
            theta = np.zeros((k + 1, classes.size))
            np.divide(centred.T, ratios[:, None], out=theta[:k], where=ratios[:, None] > 0)
        # (3) local transformation (on the workers for a Dask X), (4) DP-SGD on the
        # logistic loss, or with K > 2 classes on the softmax cross-entropy: its
        # per-example gradient z (p - e_y)^T has Frobenius norm <= sqrt(2) and is
        # clipped to 1, so a lot's summed gradient has L2 sensitivity 1, as in the
        # binary case, and the event is the same
        status, trace = _dp_sgd(
            X, codes, classes.size, theta, columns, ratios, rng,
            lam=p.alpha, learning_rate=p.lr, sampling_rate=p.q,
            denominator=p.q * N, batch_size=max(1, int(round(p.q * N))),
            n_steps=n_steps, noise_std=sigma2, record_steps=rec)
        if status != _sgd_fast.STATUS_OK:
            raise data_dependent_error(  # not how many steps ran: that depends on the data
                f"DP-SGD diverged: learning_rate={p.lr} is too large; lower it")
        theta_avg = trace.mean(axis=0).reshape(theta.shape)
        self.feature_indices_ = columns
        self.log_count_ratios_ = ratios
        self.theta_ = theta_avg
        n_out = 1 if classes.size == 2 else classes.size
        coef = np.zeros((n_out, n_features))
        coef[:, columns] = (ratios[:, None] * theta_avg[:k].reshape(k, -1)).T
        self.coef_ = coef
        self.intercept_ = np.atleast_1d(theta_avg[k]).astype(np.float64)
        self.noise_multipliers_ = (float(sigma1), float(sigma2)) if private else None
        self.learning_rate_ = float(p.lr)
        self.n_steps_ = n_steps

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        the Gaussian release of the class sums and the DP-SGD steps; ``params`` a
        :class:`NBParams`."""
        classes = self._planned_classes(classes)
        p = self._check_params()
        if classes.size < 2:   # only without declared classes (a declared set has two)
            raise ValueError("y has one class; DPNBLogisticClassifier needs at least "
                             "two classes (declare the public label set as classes=)")
        p = dataclasses.replace(p, **_auto_defaults(p, classes.size))
        private = p.epsilon is not None
        N = self._n_samples(n_samples, private=private,
                            uses="the expected batch size qN of DP-SGD")
        if private:
            sigma1, sigma2, n_steps, event = self._budget(p)
            spent = (p.epsilon, p.delta)
        else:  # the same algorithm without noise (NBSVM with SGD)
            sigma1 = sigma2 = 0.0
            n_steps, event, spent = int(math.ceil(p.n_epochs / p.q)), None, None
        if p.k == "auto":  # two classes: from the noise (public quantities only)
            p = dataclasses.replace(p, k=_binary_vocabulary(sigma2, p.q, N))
        k = min(p.k, n_features)
        if p.lr == "auto":
            p = dataclasses.replace(p, lr=_auto_learning_rate(k, classes.size, sigma2, p.q, N))
        return self._plan(event, spent, NBParams(
            validated=p, private=private, n_samples=N,
            k=k, noise_multipliers=(sigma1, sigma2), n_steps=n_steps))

    # ----------------------------------------------------------------- outputs
    _accept_sparse = "csr"
    _multi_class = True  # scikit-learn's default tag (kept)
    _poor_score = True

    def _margins(self, X):
        """Margins on the transformed rows, shape (n_samples,) or (n_samples, n_classes).

        ``X @ coef_.T + intercept_`` times a positive per-row factor (same sign, same
        argmax).
        """
        Z = _transform(X, self.feature_indices_, self.log_count_ratios_)
        margins = np.asarray(Z @ self.theta_)
        return margins.ravel() if margins.ndim == 1 else margins
