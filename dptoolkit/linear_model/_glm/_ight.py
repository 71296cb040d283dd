r"""Iterative gradient hard thresholding, private or not (Wang & Gu, IJCAI 2019)."""
import dataclasses
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from . import _ight_fast
from ..._docstrings import fill_doc
from ..._private import (data_dependent_error, PrivateEstimatorMixin,
                         sensitivity_factor)
from ..._validation import (Boolean, CLASSES,
                            DELTA_GAUSSIAN, FRACTION_OPEN, Interval, NEIGHBOURING,
                            Options, POSITIVE, PRIVATE_COMMON, SCREENING)
from ...accounting import calibrate_parameter, epsilon_of_event
from ...accounting.events import ComposedEvent, GaussianEvent, SelfComposedEvent, ZCDPEvent
from ...exceptions import ScreeningUnavailableError
from ._base import MAX_ITER, calibrate_noise_scale
from ..._estimator import _ClassifierOutputs, _store_params
from .._frank_wolfe._screening import DEFAULT_N_CANDIDATES, private_top_columns

__all__ = ["DPIGHTClassifier"]

#: learning_rate="auto" is this over R^2 (R the row-norm bound): the mean logistic
#: loss is R^2/4-smooth, the softmax cross-entropy R^2/2-smooth (its Hessian in the
#: margins, diag(p) - p p^T, has largest eigenvalue <= 1/2; Boehning 1992).
_SMOOTH_STEP = {False: 4.0, True: 2.0}


@fill_doc
@dataclasses.dataclass(frozen=True)
class IGHTParams:
    """The parameters a DP-IGHT fit runs with (its privacy plan's ``params``);
    the noise multipliers are None for a non-private fit."""
    private: bool
    sparsity: int
    max_iter: int
    learning_rate: float
    data_norm: float
    screening: int
    noise_multiplier: float
    screening_noise_multiplier: float
    n_samples: int


class DPIGHTClassifier(_ClassifierOutputs, PrivateEstimatorMixin, ClassifierMixin,
                       BaseEstimator):
    r"""Sparse logistic regression by (DP) iterative gradient hard thresholding
    (multinomial, with group sparsity, for more than two classes).

    The "private IGHT" of Wang and Gu (2019, Algorithm 1, full batch), the
    baseline of Khanna, Lu and Raff (2023) (Section 4.2): starting from :math:`\theta_0 = 0`, for
    :math:`t = 1, \dots, T`

    .. math:: \theta_t = H_s\Big(\theta_{t-1} - \frac{\eta}{N}\big(\textstyle\sum_i
              \nabla\ell(\theta_{t-1}; x_i, y_i) + b_t\big)\Big),\qquad
              b_t \sim \mathcal N(0, \sigma^2 \Delta^2 I_p),

    where :math:`H_s` keeps the ``sparsity`` largest :math:`|\theta_j|` (ties to the
    lower index) and :math:`\ell` is the logistic loss with labels in {0, 1}.  The
    output :math:`\theta_T` has at most ``sparsity`` non-zeros.  With an explicit
    ``epsilon=None`` (the default is ``epsilon=1.0``) the fit is the non-private
    IGHT: :math:`b_t = 0`, no row clipping, no screening, nothing charged.

    **Privacy** (``epsilon`` given).  Neighbouring datasets differ by adding or
    removing one example (``"replace_one"``: replacing one).  The normaliser ``N``
    of the step must be a public constant: ``n_samples_public``; without it the
    dataset size is read from the data, which under add/remove is not public (a
    :class:`~dptoolkit.exceptions.PrivacyLeakWarning` says so; under replace-one
    the size is public).  Every example satisfies the public bound
    :math:`\|x_i\|_2 \le C` (``data_norm``; rows above it are scaled down, a
    local operation).  Since :math:`|\sigma(x_i^\top\theta) - y_i| < 1`, one
    example's gradient :math:`(\sigma(x_i^\top\theta) - y_i) x_i` has L2 norm at
    most :math:`C`, so the summed gradient has L2 sensitivity :math:`\Delta = C`
    (:math:`2C` for replace-one).  Each step is the Gaussian mechanism with noise
    multiplier :math:`\sigma` on the summed gradient at the released
    :math:`\theta_{t-1}` (the equation above: noise standard deviation
    :math:`\sigma\Delta` on every coordinate); the thresholding and the update are
    post-processing of :math:`\theta_{t-1}` and the noisy sum.  The :math:`T`
    steps compose adaptively in Renyi DP (:math:`T\alpha/(2\sigma^2)` at order
    :math:`\alpha`, Mironov 2017, Proposition 7 and Corollary 2; exact for the
    full-batch Gaussian mechanism), converted to :math:`(\varepsilon, \delta)`;
    :math:`\sigma` is the smallest value meeting the budget
    (:func:`dptoolkit.accounting.calibrate_parameter` on the event of the
    full-batch steps, bisection to relative tolerance 1e-6).  Wang and Gu
    calibrate the same Gaussian noise through the loss's L2-Lipschitz constant and a
    composition theorem; the RDP calibration is never looser.  With ``k``,
    a first Gaussian mechanism on the column masses (sensitivity 1, 2 for
    replace-one; ``dptoolkit.linear_model._frank_wolfe._screening``) spends
    ``selection_share`` of the zCDP budget and restricts the steps to its
    ``k`` columns; the event is the composition of both.

    **More than two classes** (:math:`K > 2` labels): one multinomial model
    :math:`W \in \mathbb{R}^{p\times K}` (``coef_`` is :math:`W^\top`, shape (K,
    n_features)) on the softmax cross-entropy :math:`\ell(W; x, y) = -\log
    \mathrm{softmax}(W^\top x)_y`, with the same step and *group* hard
    thresholding: :math:`H_s` keeps the ``sparsity`` features (rows of :math:`W`)
    of largest :math:`\|W_j\|_2`, so the model reads at most ``sparsity``
    features for all classes together.  One example's gradient is
    :math:`x_i (p_i - e_{y_i})^\top` with Frobenius norm
    :math:`\|x_i\|_2\|p_i - e_{y_i}\|_2 \le \sqrt 2\, C`
    (:math:`\|p - e_y\|_2^2 = (1-p_y)^2 + \sum_{c\ne y}p_c^2 \le 2(1-p_y)^2`;
    tight when :math:`p` puts its mass on one wrong class), so the summed gradient
    has L2 (Frobenius) sensitivity :math:`\Delta = \sqrt 2\, C` (:math:`2\sqrt 2\,
    C` for replace-one) whatever :math:`K`, and the noise
    :math:`N(0, \sigma^2\Delta^2)` goes on each of the :math:`pK` entries.  The
    steps, the mechanism, the composition and therefore ``privacy_event_`` are those
    of a binary fit at the same budget (one event; :math:`\sigma` calibrated by the
    same call); only :math:`\Delta` is :math:`\sqrt 2` times larger.  Why
    multinomial rather than one-vs-rest: :math:`K` binary models would have joint
    sensitivity :math:`\sqrt K\, C` (the :math:`K` residuals
    :math:`\sigma(x^\top\theta_c) - 1[y = c]` can all be near 1), i.e.
    :math:`\sqrt{K/2}` times the noise (3.2 times for 20 classes).
    ``learning_rate="auto"`` is :math:`2/R^2`: the cross-entropy's Hessian in the
    margins, :math:`\mathrm{diag}(p) - pp^\top`, has largest eigenvalue at most
    1/2 (Boehning 1992), so the mean loss is :math:`R^2/2`-smooth.

    **Computation** (``dptoolkit.linear_model._glm._ight_fast``, all ``T`` steps in one typed
    loop without the GIL): the data is converted once to CSC (dense input too, so
    it costs what its non-zeros cost); the margins :math:`X\theta_{t-1}` read only
    the ``s`` columns of the support, the gradient is one pass over the non-zeros,
    :math:`H_s` is a linear-time radix selection on :math:`|u_j|`.

    Parameters
    ----------
    sparsity : int or "auto", default="auto"
        Number of non-zeros ``s`` kept at every step, ``1 <= s <= n_features``;
        "auto": ``min(1000, n_features)``.
    max_iter : int, default=300
        Number of iterations ``T``, in [1, 10**7] (the Khanna, Lu and Raff (2023)
        study uses 1000).  ``T`` does not change the noise the iterate
        accumulates: ``T`` full-batch Gaussian steps of multiplier
        :math:`\sigma` are exactly one Gaussian release of multiplier
        :math:`\sigma/\sqrt T` in Renyi DP (Mironov 2017, Proposition 7), so the
        calibrated :math:`\sigma` grows as :math:`\sqrt T` and the summed noise
        :math:`\sigma\Delta\sqrt T` as :math:`T`, like the summed gradients.
        ``T`` buys optimisation only: with rows scaled to norm :math:`C` a word's
        weight grows by at most :math:`\eta\rho/C` per step (:math:`\rho` its
        mean signed frequency), so weights of order 1 on rows of ~100 words take
        hundreds of steps; past that the noisy hard thresholding churns
        (the development-set curve and where it learns:
        :ref:`study_accuracy_vs_epsilon`).
    learning_rate : float or "auto", default="auto"
        Step size :math:`\eta > 0` on the mean gradient.  The mean logistic loss is
        :math:`R^2/4`-smooth when every :math:`\|x_i\|_2 \le R`, so
        :math:`\eta \le 4/R^2` is a descent step without noise.  "auto":
        :math:`4/R^2` with :math:`R` = ``data_norm`` for a private fit (4.0 at
        the default bound 1) and :math:`R = \max_i \|x_i\|_2` for a non-private one;
        :math:`2/R^2` for more than two classes (see below).
    epsilon : float or None, default=1.0
        Total :math:`\varepsilon > 0`.  ``None`` (only when given explicitly): the
        non-private IGHT, without a warning (``privacy_spent_`` None).
    delta : float, default=1e-5
        :math:`\delta \in (0, 1)` of a private fit (ignored when ``epsilon`` is None).
    data_norm : float, default=1.0
        Public bound :math:`C > 0` on :math:`\|x_i\|_2` (private fits).
    n_samples_public : int or None, default=None
        Public dataset size ``N`` used in the step :math:`\eta/N`; None reads it from
        the data (with a ``PrivacyLeakWarning`` for a private fit under add/remove).
    neighbouring : {"add_remove", "replace_one"}, default="add_remove"
    k : int, "auto" or None, default="auto"
        Private candidate screening before the iterations (as for
        :class:`FrankWolfeLassoClassifier`: the Gaussian mechanism on the column
        masses of the row-normalised data, ``dptoolkit.linear_model._frank_wolfe._screening``),
        keeping this many features, at least ``sparsity``; "auto": 4096 for a private
        fit with more features, else off; None: off.  On hashed text the noisy
        gradient's top ``s`` coordinates are otherwise mostly noise.  An int needs a
        private fit.
    selection_share : float, default=0.1
        Share of the zCDP budget the screening spends, in (0, 1).
    clip_data : bool, default=True
        Private fits: rows with :math:`\|x_i\|_2 > C` are scaled to norm :math:`C`
        with a :class:`~dptoolkit.exceptions.DataClippedWarning` if True; an error
        if False.  Both messages say *that* rows were above the bound, never how
        many (``dptoolkit._private.data_dependent_warning()``).
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set: two or more distinct labels (with two,
        ``classes_[1]``, the larger, is the positive class; with more, one
        multinomial model, see above).  When given, the fit never reads the label
        set from ``y``: a declared class absent from ``y`` is fine, a label of ``y``
        outside it raises ``ValueError``.  None: ``np.unique(y)``, with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning` for private fits (a
        neighbour that adds a new label or removes the only row of a class would
        change the model's shape).
    %(accountant)s
    %(random_state)s

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        :math:`\theta_T`, at most ``sparsity`` non-zeros (more than two classes:
        :math:`W_T^\top`, at most ``sparsity`` non-zero columns).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Zero (no intercept).
    classes_ : ndarray of shape (n_classes,)
        The declared ``classes`` (sorted), else the labels of ``y``.
    n_iter_ : int
    learning_rate_ : float
        The step size :math:`\eta` used.
    noise_multiplier_ : float or None
        :math:`\sigma` (noise standard deviation / sensitivity); None if not private.
    screened_features_ : ndarray of shape (screening,) or None
        The columns the steps ran on (sorted), or None without screening.
    privacy_spent_ : tuple (epsilon, delta) or None
        The RDP accountant's epsilon at the calibrated :math:`\sigma` (at most the
        requested one) and ``delta``.
    privacy_event_ : PrivacyEvent or None
        ``max_iter`` Gaussian mechanisms of noise multiplier ``noise_multiplier_``
        (after the screening's Gaussian mechanism, if any), for any number of
        classes.
    n_features_in_ : int

    References
    ----------
    L. Wang, Q. Gu. Differentially Private Iterative Gradient Hard Thresholding for
    Sparse Learning. IJCAI 2019, Algorithm 1.

    A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression (Khanna, Lu and Raff, 2023),
    Section 4.2 (the baseline).

    I. Mironov. Renyi Differential Privacy. CSF 2017 (Gaussian mechanism RDP).

    D. Boehning. Multinomial Logistic Regression Algorithm. Annals of the Institute
    of Statistical Mathematics 44, 1992 (the bound 1/2 on the softmax Hessian).

    Examples
    --------
    >>> import numpy as np
    >>> from dptoolkit.linear_model import DPIGHTClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 20)) / 5
    >>> y = (X[:, 0] - X[:, 1] > 0).astype(int)
    >>> clf = DPIGHTClassifier(sparsity=2, epsilon=2.0, n_samples_public=400,
    ...                        random_state=0).fit(X, y)
    >>> int(np.count_nonzero(clf.coef_)) <= 2
    True
    """

    #: The command line's ``--model`` name (dptoolkit._discovery.cli_name).
    _cli_name = "dp-ight"

    _privacy_label = "DP-IGHT"

    _parameter_constraints = {
        **PRIVATE_COMMON, "delta": DELTA_GAUSSIAN,
        "sparsity": [Options("auto"), Interval("int", 1, None)],
        "max_iter": [Interval("int", 1, MAX_ITER)],
        "learning_rate": [Options("auto"), *POSITIVE], "data_norm": POSITIVE,
        "neighbouring": NEIGHBOURING, "k": SCREENING,
        "selection_share": FRACTION_OPEN, "clip_data": [Boolean()], "classes": CLASSES,
    }

    def __init__(self, *, sparsity="auto", max_iter=300, learning_rate="auto",
                 epsilon=1.0, delta=1e-5, data_norm=1.0, n_samples_public=None,
                 neighbouring="add_remove", k="auto", selection_share=0.1,
                 clip_data=True, classes=None, accountant=None, random_state=None):
        _store_params(self, locals())

    def _check_params(self, n_features, private):
        if isinstance(self.sparsity, str) and self.sparsity == "auto":
            sparsity = min(1000, n_features)
        else:
            sparsity = int(self.sparsity)     # ranges: the constraint table (validated)
        if sparsity > n_features:           # a rule between the parameter and the data
            raise ValueError(f"sparsity must be in [1, n_features] = [1, {n_features}], got "
                             f"{sparsity}")
        max_iter = int(self.max_iter)
        if isinstance(self.learning_rate, str) and self.learning_rate == "auto":
            eta = None
        else:
            eta = float(self.learning_rate)
        bound = float(self.data_norm)
        screening = self._screening_size(n_features, sparsity, private)
        return sparsity, max_iter, eta, bound, screening

    def _screening_size(self, n_features, sparsity, private):
        """k of the candidate screening, or None (no screening)."""
        k = self.k
        if k is None:
            return None
        if isinstance(k, str) and k == "auto":
            if not private:
                return None
            k = DEFAULT_N_CANDIDATES
        else:
            k = int(k)
            if not private:
                raise ScreeningUnavailableError(
                    "an int k (the private candidate screening) needs a private fit "
                    "(epsilon given); the non-private fit uses every feature")
        if k < sparsity:
            raise ValueError(f"k={k} (the candidates screened) must be >= "
                             f"sparsity={sparsity}")
        return k if k < n_features else None

    def _privacy(self, epsilon, delta, max_iter, screening):
        """(event, (epsilon, delta), sigma, sigma_screen) from public quantities only."""
        screen = ()
        if screening is not None:
            # the candidate screening gets a share of the zCDP budget (as for
            # Frank-Wolfe: dptoolkit.linear_model._frank_wolfe._screening)
            rho = calibrate_parameter(lambda r: ZCDPEvent(r), target_epsilon=epsilon,
                                      delta=delta, low=1e-12, high=1e6, composition="rdp")
            screen = (GaussianEvent(
                1.0 / math.sqrt(2.0 * float(self.selection_share) * rho)),)

        def event_of(sigma):
            # max_iter full-batch Gaussian gradient steps (sensitivity factor * bound)
            steps = SelfComposedEvent(GaussianEvent(sigma), max_iter)
            return ComposedEvent(screen + (steps,)) if screen else steps

        sigma = calibrate_noise_scale(event_of, epsilon=epsilon, delta=delta,
                                      what=f"{max_iter} full-batch steps")
        event = event_of(sigma)
        spent = epsilon_of_event(event, delta)
        return event, (spent, delta), sigma, (screen[0].noise_multiplier if screen else None)

    @fill_doc
    def fit(self, X, y):
        """Fit (DP-)IGHT.

        %(params_fit_Xy)s
            Two or more classes; with two, ``classes_[1]`` is the positive one.

        %(returns_self)s

        Raises
        ------
        ValueError
            Invalid hyper-parameters, a single class, labels outside the
            declared ``classes``, NaN/inf, rows above the public norm bound with
            ``clip_data=False`` (private fits), a non-finite iterate
            (``learning_rate`` too large).
        BudgetExceededError
            The accountant cannot pay (epsilon, delta); nothing is fitted.
        TypeError
            Non-numeric parameters or data.
        """
        return super().fit(X, y)

    # private fits: rows above the public L2 bound are clipped (or refused) before
    # the spend is checked
    _public_bound = ("l2", "data_norm")

    def _validate_fit_data(self, X, y):
        # one conversion: the kernel reads CSC arrays, dense input included
        X, y, classes = self._classifier_data(X, y)
        return sp.csr_array(X), y, classes

    def _fit_private(self, X, y, plan, rng):
        """The (noisy) iterative gradient hard thresholding (the class docstring)."""
        params, classes, Xr = plan.params, self.classes_, X
        private, sparsity, max_iter, eta, bound, screening, sigma, n_public = (
            params.private, params.sparsity, params.max_iter, params.learning_rate,
            params.data_norm, params.screening, params.noise_multiplier, params.n_samples)
        # K > 2 classes: one multinomial model, same event (see Notes)
        multinomial = classes.size > 2
        n_rows, n_features = Xr.shape
        if eta is None:     # non-private learning_rate="auto": from the data
            with np.errstate(over="ignore"):
                sq = np.asarray(Xr.multiply(Xr).sum(axis=1)).ravel()
            eta = _SMOOTH_STEP[multinomial] / max(float(sq.max(initial=0.0)), 1e-300)
        if not private and self.learning_rate == "auto" and not eta / n_public > 0.0:
            # 4 / max ||x_i||^2 underflows (or the squares overflow): no step exists
            raise ValueError("X has entries too large for float64 arithmetic: the step "
                             "4 / (N max_i ||x_i||_2^2) of learning_rate='auto' is 0 "
                             "(squared row norms overflow beyond about 1e154); rescale X")
        columns = None
        factor = sensitivity_factor(self.neighbouring)
        if screening is not None:
            columns = private_top_columns(Xr, screening, params.screening_noise_multiplier, rng,
                                          sensitivity=factor)
            Xc = sp.csc_array(Xr[:, columns])
        else:
            Xc = sp.csc_array(Xr)
        Xc.sum_duplicates()
        # L2 sensitivity of the summed gradient: the residual has norm < 1 (binary)
        # or <= sqrt(2) (softmax), times the row bound, twice for replace-one
        sensitivity = factor * bound * (math.sqrt(2.0) if multinomial else 1.0)
        args = (Xc.data, Xc.indices.astype(np.int64, copy=False),
                Xc.indptr.astype(np.int64, copy=False))
        kw = dict(step=eta / n_public, noise_std=sigma * sensitivity if private else 0.0,
                  sparsity=sparsity, max_iter=max_iter,
                  bit_generator=rng.bit_generator if private else None)
        if multinomial:
            theta = np.zeros((Xc.shape[1], classes.size))
            status, n_iter = _ight_fast.ight_softmax(
                *args, np.searchsorted(classes, y).astype(np.int64), theta, **kw)
        else:
            theta = np.zeros(Xc.shape[1])
            status, n_iter = _ight_fast.ight(*args, (y == classes[1]).astype(np.float64),
                                             theta, **kw)
        if status != _ight_fast.STATUS_OK:
            if private:  # the step at which it diverged depends on the data: not shown
                raise data_dependent_error(f"IGHT diverged (a non-finite iterate): "
                                           f"learning_rate={eta:g} is too large")
            raise ValueError(f"IGHT diverged (a non-finite iterate after {n_iter} of "
                             f"{max_iter} iterations): learning_rate={eta:g} is too large")
        coef = np.zeros((classes.size if multinomial else 1, n_features))
        coef[:, columns if columns is not None else slice(None)] = theta.T if multinomial \
            else theta
        self.coef_ = coef
        self.screened_features_ = columns
        self.intercept_ = np.zeros(coef.shape[0])
        self.n_iter_ = max_iter
        self.learning_rate_ = float(eta)
        self.noise_multiplier_ = sigma

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`);
        ``params`` an :class:`IGHTParams` (``learning_rate`` None for a non-private
        ``"auto"``: the fit takes it from the data)."""
        classes = self._planned_classes(classes)
        epsilon, delta = self._check_budget(optional=True, delta_required=True)
        private = epsilon is not None
        sparsity, max_iter, eta, bound, screening = self._check_params(n_features, private)
        if classes.size < 2:   # only without declared classes (a declared set has two)
            raise ValueError(f"DPIGHTClassifier needs at least two classes in y, got "
                             f"{classes.size} class; declare the public label set as "
                             "classes=")
        event = spent = sigma = sigma_screen = None
        if private:
            event, spent, sigma, sigma_screen = self._privacy(epsilon, delta, max_iter,
                                                              screening)
            if eta is None:
                eta = _SMOOTH_STEP[classes.size > 2] / bound ** 2
        n_public = self._n_samples(n_samples, private=private, uses="the step eta / N")
        return self._plan(event, spent, IGHTParams(
            private, sparsity, max_iter, eta, bound, screening, sigma, sigma_screen,
            n_public))

    _poor_score = True  # private: noisy by design
    _multi_class = True

    def _margins(self, X):
        """Margins :math:`x_i^\\top\\theta`: shape (n_samples,), or (n_samples,
        n_classes) for K > 2 classes."""
        if self.coef_.shape[0] > 1:
            return np.asarray(X @ self.coef_.T)
        return np.asarray(X @ self.coef_[0]).ravel()
