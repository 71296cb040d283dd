r"""DP-SGD (Abadi et al. 2016) for the L2-regularised linear models of Damaskinos et al. (2021).

The baseline of Damaskinos et al.'s (2021) experiments: mini-batch SGD on eq. 1 of
:mod:`dptoolkit.linear_model._glm._scd` (same losses, same regularisation, same
per-example normalisation), with per-example gradient clipping, Gaussian noise
on the summed clipped gradients, Poisson-sampled lots and RDP accounting.
"""
import math
from types import MappingProxyType

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from sklearn.utils.multiclass import check_classification_targets

from . import _sgd_fast
from ._dask_sgd import sgd_over_blocks
from ...distributed import is_dask_array, row_aligned, validate_dask_X_y
from ..._docstrings import fill_doc
from ..._private import data_dependent_error
from ..._validation import Options, POSITIVE
from ._base import (_BaseLinearDP, _calibrate, _class_doc, _fit_doc, _linear_dp_constraints,
                    _record_steps, transform_rows)
from ..._estimator import _ClassifierOutputs, _RegressorOutputs, _store_params

__all__ = ["DPSGDClassifier", "DPSGDRegressor"]

#: Smoothness beta of each loss on rows of norm <= 1 (learning_rate="auto" is 1/beta).
#: "softmax": the Hessian of the cross-entropy in the margins, diag(p) - p p^T, has
#: largest eigenvalue at most 1/2 (Boehning 1992), so on unit rows beta = 1/2.
_SMOOTHNESS = {"logistic": 0.25, "squared": 1.0, "hinge": 1.0, "softmax": 0.5}


class _BaseSGD(_BaseLinearDP):
    @_fit_doc(invalid="``learning_rate <= 0``, ``batch_size`` outside [1, N]",
              failure=",\n        or a run that diverged (non-finite weights: ``learning_rate`` "
                      "too large)",
              warns="Private fit", n_enters=" (hence :math:`q` and the number of steps)")
    def fit(self, X, y):
        return super().fit(X, y)

    def _validate_fit_data(self, X, y):
        if not is_dask_array(X):
            return super()._validate_fit_data(X, y)
        # X stays on the workers (_dask_sgd.sgd_over_blocks)
        X, y_local, _ = validate_dask_X_y(self, X, y, private=self.epsilon is not None)
        if isinstance(self, ClassifierMixin):
            check_classification_targets(y_local)
        t = self._targets(y_local)
        return X, t, self.classes_ if isinstance(self, ClassifierMixin) else None

    def _fit_private(self, X, t, plan, rng):
        """DP-SGD (Abadi et al. 2016, Algorithm 1) on the transformed rows, in memory
        or over a Dask array's blocks."""
        distributed = is_dask_array(X)
        # K > 2 classes: one multinomial (softmax) model, weights of shape (M, K)
        steps, p = plan.params, plan.params.validated
        private, K, N, L, clip = p.private, steps.n_classes, steps.n_constant, \
            steps.batch_size, steps.clip
        q, n_steps, noise_std = steps.sampling_rate, steps.n_steps, steps.noise_std
        lr, denominator = steps.extra["learning_rate"], steps.extra["denominator"]
        if not distributed:
            Xt, sq = self._prepare(X, p)
            M = Xt.shape[1]
        else:
            M = X.shape[1] + bool(self.fit_intercept)
        rec_steps, rec_epochs = _record_steps(n_steps, p.n_epochs)
        if not self.keep_coef_path:
            rec_steps = rec_steps[:0]
        step_args = dict(lam=p.alpha, learning_rate=lr, clip=clip,
                         sampling_rate=q if private else 0.0, batch_size=L,
                         denominator=denominator, n_steps=n_steps, noise_std=noise_std,
                         bit_generator=rng.bit_generator, record_steps=rec_steps)
        if distributed:
            theta, trace, finite, done = sgd_over_blocks(
                X, row_aligned(t, X), transform=transform_rows,
                transform_args=(self.normalize, self.fit_intercept,
                                p.intercept_scaling),
                n_features=M, loss="softmax" if K > 2 else self.loss, n_classes=K,
                alpha=p.alpha, learning_rate=lr,
                clip=clip, sampling_rate=q if private else min(1.0, L / N),
                denominator=denominator, n_steps=n_steps, noise_std=noise_std, rng=rng,
                record_steps=rec_steps)
            status = _sgd_fast.STATUS_OK if finite else _sgd_fast.STATUS_NONFINITE
        elif K > 2:
            # the per-example gradient x (p - e_y)^T is clipped to Frobenius norm C
            # as a whole: the lot's sum has L2 sensitivity C, as in the binary case,
            # and the noise N(0, (sigma C)^2) goes on each of the M K entries
            theta = np.zeros((M, K))
            trace = np.zeros((rec_steps.shape[0], M * K))
            status, done = _sgd_fast.dpsgd_softmax(
                Xt.data, Xt.indices, Xt.indptr, t, np.sqrt(sq), theta, trace=trace,
                **step_args)
            trace = trace.reshape(-1, M, K)
        else:
            theta = np.zeros(M)
            trace = np.zeros((rec_steps.shape[0], M))
            status, done = _sgd_fast.dpsgd(
                Xt.data, Xt.indices, Xt.indptr, t, np.sqrt(sq), theta,
                loss=_sgd_fast.LOSS_CODES[self.loss], trace=trace, **step_args)
        if status != _sgd_fast.STATUS_OK:
            if private:  # the step at which it diverged depends on the data: not shown
                raise data_dependent_error(f"SGD diverged (non-finite weights): "
                                           f"learning_rate={lr} is too large for this "
                                           "problem")
            raise ValueError(f"SGD diverged (non-finite weights after {done} of {n_steps} "
                             f"steps): learning_rate={lr} is too large for this problem")
        self._finish(theta, trace if self.keep_coef_path else None, rec_epochs, plan)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        ``n_steps`` Poisson-subsampled Gaussian steps; ``params`` a :class:`GLMSteps`
        (``extra``: the learning rate and the lot's denominator)."""
        p = self._check_common()
        private = p.private
        if isinstance(self.learning_rate, str) and self.learning_rate == "auto":
            lr = None  # 1 / beta of the loss, set below from alpha
        else:
            lr = float(self.learning_rate)     # validated by the constraint table
        K = self._planned_n_classes(classes)
        # N enters only q = L/N and the number of steps; public for a private fit
        N = self._n_constant(p, n_samples,
                             uses="the sampling rate q = L/N and the number of steps")
        if lr is None:
            lr = 1.0 / (_SMOOTHNESS["softmax" if K > 2 else self.loss] + p.alpha)
        if private and isinstance(self.batch_size, str):
            # large lots (q = 1/25): the noise per example shrinks as 1/L while the
            # privacy cost grows more slowly (De et al. 2022; Ponomareva et al. 2023)
            L = max(1, int(round(N / 25)))
        else:
            L = self._example_lot(N, public=private and p.n_samples_public)
        if private:
            q = L / N
            n_steps = int(math.ceil(p.n_epochs / q))
            sigma = _calibrate(epsilon=p.epsilon, delta=p.delta, sampling_rate=q,
                               steps=n_steps)
            denominator = float(L)
        else:
            q = None
            n_steps = int(math.ceil(p.n_epochs * math.ceil(N / L)))
            sigma = 0.0
            denominator = 0.0  # the actual batch size
        return self._steps_plan(
            p, n_constant=N, batch_size=L, sampling_rate=q, n_steps=n_steps,
            total_steps=n_steps, noise_multiplier=sigma, sensitivity=p.clip,
            noise_std=sigma * p.clip if private else 0.0, clip=p.clip, n_classes=K,
            extra=MappingProxyType({"learning_rate": lr, "denominator": denominator}))


_SGD_DOC_PARAMS = r"""
    epsilon : float or None, default=1.0
        Privacy budget :math:`\varepsilon > 0`.  ``None`` (only when given
        explicitly) runs plain mini-batch SGD without a warning (permutation
        batches, mean over the actual batch, ``clip=None`` allowed;
        ``privacy_spent_`` None).
    delta : float, default=1e-5
        :math:`\delta \in (0, 1)` of a private fit.
    n_samples_public : int or None, default=None
        Public dataset size :math:`N \ge 1` of a private fit, used in the sampling
        rate :math:`q = L/N` given to the accountant (and to the Poisson sampler)
        and in the number of steps :math:`T`; the update divides by the constant
        :math:`L`, so :math:`N` enters nothing else.  It must not be read from the
        private data: the add/remove-one guarantee needs the same :math:`q` and
        :math:`T` for neighbouring datasets.  The rows actually present may be more
        or fewer (each is sampled with probability :math:`q`).  ``None`` takes
        :math:`N` = ``X.shape[0]`` with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning`: the guarantee then
        covers only neighbouring datasets of the same size.  Ignored when
        ``epsilon=None``.
    alpha : float, default=1e-4
        Regularisation strength :math:`\lambda > 0` of eq. 1.
    learning_rate : float or "auto", default="auto"
        Constant step size :math:`\eta > 0`.  "auto": :math:`1/\beta` with
        :math:`\beta` the smoothness of the regularised loss on rows of norm at most
        1: :math:`1/(1/4 + \lambda)` for the logistic loss, :math:`1/(1 + \lambda)`
        for the squared loss, :math:`1/(1 + \lambda)` for the hinge loss (not
        smooth; its subgradients are bounded by 1), :math:`1/(1/2 + \lambda)` for
        the softmax cross-entropy of more than two classes.
    batch_size : int or "auto", default="auto"
        Lot size :math:`L` in [1, N] (:math:`N` = ``n_samples_public`` for a private
        fit, ``n_samples`` otherwise): the expected number of examples per step;
        the sampling rate of a private fit is :math:`q = L/N`.  "auto" is
        :math:`N/25` for a private fit (large lots: De et al. 2022, Ponomareva et
        al. 2023) and ``min(100, N)`` otherwise.
    clip : float or None, default=1.0
        Per-example gradient norm bound :math:`C > 0`; ``None`` (only with
        ``epsilon=None``) disables clipping.
    n_epochs : float, default=20
        In (0, 10**6]:
        :math:`T = \lceil n\_epochs / q\rceil` steps (private) or
        :math:`\lceil n\_epochs \lceil N/L\rceil\rceil` (not private).
    normalize : {"l2", "clip"} or None, default="l2"
        Per-example bound on :math:`\|x_i\|` as for :class:`DPSCDClassifier` (not
        needed for privacy here -- the gradient clipping bounds the sensitivity --
        but it keeps the data the same as for DP-SCD).  Applied in ``predict`` too.
    fit_intercept : bool, default=False
        Append a constant feature 1 (before ``normalize``).
    %(random_state)s
    %(accountant)s
"""

_SGD_DOC_ATTRS = r"""
    coef_ : ndarray
        Model :math:`\theta` without the intercept weight: shape (n_features,)
        (regressor), (1, n_features) (two classes) or (n_classes, n_features).
    intercept_ : float or ndarray of shape (1,) or (n_classes,)
    batch_size_, n_steps_, n_epochs_ : int, int, float
    n_samples_used_ : int
        :math:`N` used in :math:`q = L/N` and :math:`T`: ``n_samples_public`` for a
        private fit that was given it, ``X.shape[0]`` otherwise.
    sensitivity_ : float
        :math:`C`, the L2 sensitivity of the summed clipped gradients.
    sampling_rate_, noise_multiplier_, noise_std_ : float or None
        :math:`q = L/N`, :math:`\sigma` from
        :func:`dptoolkit.accounting.calibrate_parameter` and
        :math:`\sigma C` (None without privacy).
    privacy_event_ : SelfComposedEvent or None
        ``n_steps_`` Poisson-subsampled Gaussian steps (``sampling_rate_``,
        ``noise_multiplier_``); None when non-private.
    privacy_spent_ : tuple (epsilon, delta) or None
    coef_path_, intercept_path_, epoch_path_ : ndarray
        With ``keep_coef_path = True`` set on the instance before ``fit`` (a
        diagnostic attribute, not a parameter).
    n_features_in_ : int
"""

_SGD_DOC_NOTES = r"""
    Step (Abadi et al. 2016, Algorithm 1): draw a lot :math:`\mathcal B` by including
    every example independently with probability :math:`q = L/N`; with the margins at
    the current :math:`\theta`,

    .. math:: g = \sum_{i\in\mathcal B} \mathrm{clip}_C\big(\ell_i'(x_i^\top\theta)
              x_i\big) + N(0, \sigma^2 C^2 I_M),\qquad
              \theta \leftarrow \theta - \eta\,(g / L + \lambda\theta),

    dividing by the expected lot size :math:`L` (a public constant), not the realised
    one.  The hinge loss uses the subgradient :math:`-y_i x_i` where
    :math:`y_i x_i^\top\theta < 1`.

    **Privacy.**  Neighbouring datasets differ by adding or removing one example;
    :math:`N` is the public constant ``n_samples_public`` (so :math:`q`, :math:`T`
    and the divisor :math:`L` are the same for both neighbours; without it a
    ``PrivacyLeakWarning`` says :math:`N` came from the data and only datasets of
    the same size are covered).  The summed clipped gradient has L2 sensitivity
    :math:`C`;
    the Gaussian mechanism with noise multiplier :math:`\sigma` on a Poisson sample
    with rate :math:`q` is the subsampled Gaussian mechanism; its RDP curve is the
    per-step budget and the :math:`T` steps compose additively in RDP, converted to
    (epsilon, delta) by the accountant; :math:`\sigma` is the smallest value (bisection,
    relative tolerance 1e-6) meeting (epsilon, delta)
    (:func:`dptoolkit.accounting.calibrate_parameter` on the event of the
    Poisson-subsampled steps).  The regularisation term does not read the data.

    **Lazy noise.**  :math:`\theta \in \mathbb{R}^M` and the noise are dense, but a
    step reads and updates only the coordinates of its lot's rows.  Between two
    reads a coordinate only decays by :math:`d = 1 - \eta\lambda` per step and
    gathers the steps' noise, so when a lot reads it (and at the end) the kernel
    draws the noise it has missed since its last read as one normal of variance
    :math:`(\eta\sigma C/L)^2 \sum_{j<k} d^{2j}` over those :math:`k` steps.  The
    values the algorithm reads and the weights it returns have exactly the law of
    the dense algorithm above (the noise of different steps and coordinates is
    independent), so the privacy analysis is unchanged; a step costs
    :math:`O(\mathrm{nnz}(X_{\mathcal B}))` and the run :math:`O(M)` once more.
    On IMDB (lots of 1,000 reviews touch about 130,000 of the :math:`2^{20}`
    coordinates) this saves about a fifth of the time of dense noise.

    **On a Dask array.**  ``X`` may be a :class:`dask.array.Array` of CSR row
    blocks (``y`` a Dask array of the same row chunks): the rows stay on the
    workers (``_glm._dask_sgd.sgd_over_blocks``), for two classes
    (or regression) and for :math:`K > 2` classes (the softmax model below, each
    per-example gradient clipped in Frobenius norm).  Every block draws its
    Poisson lot of each step from its own stream (from a sampling
    ``SeedSequence`` seeded on the client by a hash of a draw of the noise
    generator, which draws no noise: the workers cannot regenerate the noise;
    ``dptoolkit.distributed.block_seeds``) and sums its lot's clipped gradients; the
    sums are added in block order, and the dense noise is drawn on the client,
    once per step (for a chunk of steps at a time, sent with the call that runs
    them).  Per-block Poisson sampling is global Poisson sampling, so the
    privacy event is the in-memory one; the draws are not the in-memory
    kernel's (it draws lots and lazy noise from one stream), so the model
    differs from the in-memory model draw for draw, not in law.  A private fit
    needs ``n_samples_public`` (block sizes are never used as :math:`N`).
    See ``docs/tutorials/distributed.rst``.
"""


_SGD_DOC_MULTICLASS = r"""
    **More than two classes** (``DPSGDClassifier`` with :math:`K > 2` labels, only
    ``loss="logistic"``).  One multinomial model :math:`W \in \mathbb{R}^{M\times
    K}` (``coef_`` is :math:`W^\top` without the intercept row, shape (K,
    n_features)); example :math:`i` with class :math:`y_i` has the loss
    :math:`\ell_i(W) = -\log \mathrm{softmax}(W^\top x_i)_{y_i}` and the gradient

    .. math:: \nabla_W \ell_i = x_i (p_i - e_{y_i})^\top,\qquad
              p_i = \mathrm{softmax}(W^\top x_i),

    of Frobenius norm :math:`\|x_i\|_2 \|p_i - e_{y_i}\|_2 \le \sqrt 2\,\|x_i\|_2`,
    since :math:`\|p - e_y\|_2^2 = (1 - p_y)^2 + \sum_{c\ne y} p_c^2 \le
    (1 - p_y)^2 + (\sum_{c\ne y} p_c)^2 = 2(1 - p_y)^2 \le 2`; the bound is approached
    when the mass of :math:`p` sits on one wrong class.  The step is the binary one
    with :math:`\mathrm{clip}_C` in Frobenius norm on the whole :math:`M\times K`
    gradient and :math:`N(0, \sigma^2 C^2)` on each of its :math:`MK` entries.
    Privacy: the same neighbouring relation (add/remove one example, public
    :math:`N`); adding or removing one example changes the lot's summed clipped
    gradient by at most :math:`C` in Frobenius (= L2 of the flattened matrix)
    norm, whatever :math:`K`; so every step is the same Poisson-subsampled
    Gaussian mechanism (rate :math:`q`, multiplier :math:`\sigma`) and the
    :math:`T` steps compose in RDP exactly as in the binary case (Abadi et al.
    2016, Algorithm 1 and Theorem 1; Mironov, Talwar and Zhang 2019): one
    ``privacy_event_``, calibrated by the same call as a binary fit.  With the
    default :math:`C = 1`, clipping binds only for examples with
    :math:`\|p_i - e_{y_i}\| > 1` (mostly the misclassified ones).
    ``learning_rate="auto"`` is :math:`1/(1/2 + \lambda)`: the cross-entropy's
    Hessian in the margins, :math:`\mathrm{diag}(p) - pp^\top`, has largest
    eigenvalue at most 1/2 (Boehning 1992), so the loss is :math:`1/2`-smooth on
    unit rows.  ``predict_proba`` is the softmax of the margins.
"""


@fill_doc
class DPSGDClassifier(_ClassifierOutputs, ClassifierMixin, _BaseSGD):
    __doc__ = _class_doc(r"""Linear classifier (logistic regression, multinomial for more
    than two classes, or binary SVM) by (differentially private) mini-batch SGD -- the
    DP-SGD baseline of Damaskinos et al. (2021).

    Minimises eq. 1 of Damaskinos et al. (2021) (mean loss plus :math:`\lambda/2\|\theta\|^2`) with
    the logistic or the hinge loss, labels mapped to :math:`\{-1, +1\}`; for
    :math:`K > 2` classes the multinomial logistic (softmax cross-entropy) loss with
    weights :math:`W \in \mathbb{R}^{M\times K}` (see Notes).""", classifier=True,
        params=_SGD_DOC_PARAMS, attrs=_SGD_DOC_ATTRS,
        notes=_SGD_DOC_NOTES + _SGD_DOC_MULTICLASS, references=r"""
    M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang.
    Deep Learning with Differential Privacy. CCS 2016.
    G. Damaskinos et al. Differentially Private Stochastic Coordinate Descent.
    AAAI 2021 (Damaskinos et al., 2021), Section 5.
    I. Mironov, K. Talwar, L. Zhang. Renyi Differential Privacy of the Sampled
    Gaussian Mechanism. 2019.
    D. Boehning. Multinomial Logistic Regression Algorithm. Annals of the
    Institute of Statistical Mathematics 44, 1992 (the bound 1/2 on the Hessian).""",
        examples=r"""
    >>> import numpy as np
    >>> from dptoolkit.linear_model import DPSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5)); y = (X[:, 0] > 0).astype(int)
    >>> clf = DPSGDClassifier(epsilon=1.0, n_samples_public=2000, learning_rate=1.0,
    ...                       batch_size=100, n_epochs=5, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    >>> y3 = np.digitize(X[:, 0], [-0.5, 0.5])          # three classes: softmax
    >>> clf3 = DPSGDClassifier(epsilon=1.0, n_samples_public=2000, classes=[0, 1, 2],
    ...                        n_epochs=5, random_state=0).fit(X, y3)
    >>> clf3.coef_.shape, clf3.predict_proba(X[:2]).shape
    ((3, 5), (2, 3))""")

    #: The command line's ``--model`` name (dptoolkit._discovery.cli_name).
    _cli_name = "dp-sgd"
    #: ``fit`` takes a Dask array of CSR row blocks (the command line's cluster fits).
    _fits_dask_arrays = True

    _losses = ("logistic", "hinge")
    _parameter_constraints = _linear_dp_constraints(
        _losses, classifier=True, clip=[None, *POSITIVE],
        learning_rate=[Options("auto"), *POSITIVE])
    _multiclass_scheme = "softmax"
    _multi_class = True

    def _check_multiclass_loss(self):
        if self.loss != "logistic":
            raise ValueError(f"loss={self.loss!r} is binary only in {type(self).__name__}: "
                             f"{self.classes_.size} classes are fitted with the multinomial "
                             "logistic (softmax) loss; use loss='logistic'")

    def __init__(self, loss="logistic", *, epsilon=1.0, delta=1e-5,
                 n_samples_public=None, alpha=1e-4, learning_rate="auto",
                 batch_size="auto", clip=1.0, n_epochs=20, normalize="l2", fit_intercept=False,
                 classes=None, random_state=None, accountant=None):
        _store_params(self, locals())


@fill_doc
class DPSGDRegressor(_RegressorOutputs, RegressorMixin, _BaseSGD):
    __doc__ = _class_doc(r"""Ridge regression by (differentially private) mini-batch SGD -- the
    DP-SGD baseline of Damaskinos et al. (2021).

    Minimises eq. 1 of Damaskinos et al. (2021) with the squared loss :math:`(a - y_i)^2/2`.""", classifier=False,
        params=_SGD_DOC_PARAMS, attrs=_SGD_DOC_ATTRS, notes=_SGD_DOC_NOTES, references=r"""
    M. Abadi et al. Deep Learning with Differential Privacy. CCS 2016.
    G. Damaskinos et al. Differentially Private Stochastic Coordinate Descent.
    AAAI 2021 (Damaskinos et al., 2021), Section 5.""", examples=r"""
    >>> import numpy as np
    >>> from dptoolkit.linear_model import DPSGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 5)); y = X @ np.ones(5)
    >>> reg = DPSGDRegressor(epsilon=None, alpha=1e-4, learning_rate=0.5, batch_size=500,
    ...                      clip=None, n_epochs=2000).fit(X, y)
    >>> reg.score(X, y) > 0.9
    True""")

    loss = "squared"
    _losses = ("squared",)
    _parameter_constraints = _linear_dp_constraints(
        _losses, classifier=False, clip=[None, *POSITIVE],
        learning_rate=[Options("auto"), *POSITIVE])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a constant step size for a fixed number of epochs may underfit (R^2 < 0.5
        # on scikit-learn's check data with the defaults)
        tags.regressor_tags.poor_score = True
        return tags

    def __init__(self, *, epsilon=1.0, delta=1e-5, n_samples_public=None, alpha=1e-4,
                 learning_rate="auto", batch_size="auto", clip=1.0, n_epochs=20,
                 normalize="l2", fit_intercept=False, random_state=None, accountant=None):
        _store_params(self, locals())
