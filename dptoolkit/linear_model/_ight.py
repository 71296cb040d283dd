r"""Differentially private iterative gradient hard thresholding (Wang & Gu, IJCAI 2019)."""
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data

from .._docstrings import fill_doc
from .._private import PrivateEstimatorMixin
from .._validation import check_positive_int, check_random_state, check_scalar_range
from ..accounting import RDPAccountant, calibrate_noise_multiplier, calibrate_parameter
from ..accounting.events import ComposedEvent, GaussianEvent, SelfComposedEvent, ZCDPEvent
from ._base import MAX_ITER, _ClassifierOutputs, _sigmoid, _store_params
from ._fw_screening import DEFAULT_N_CANDIDATES, private_top_columns
from ..datasets import clip_rows
from ..exceptions import DataClippedWarning, PrivacyLeakWarning
from ._sparsifier import keep_largest

__all__ = ["DPIGHTClassifier"]


class DPIGHTClassifier(_ClassifierOutputs, PrivateEstimatorMixin, ClassifierMixin,
                       BaseEstimator):
    r"""Sparse logistic regression by DP iterative gradient hard thresholding (DP-IGHT).

    The baseline "private IGHT" of paper 001 (Section 4.2): starting from
    :math:`\theta_0 = 0`, for :math:`t = 1, \dots, T`

    .. math:: \theta_t = H_s\Big(\theta_{t-1} - \frac{\eta}{N}\big(\textstyle\sum_i
              \nabla\ell(\theta_{t-1}; x_i, y_i) + b_t\big)\Big),\qquad
              b_t \sim \mathcal N(0, \sigma^2 \Delta^2 I_p),

    where :math:`H_s` keeps the ``sparsity`` largest :math:`|\theta_j|` (ties to the
    lower index) and :math:`\ell` is the logistic loss with labels in {0, 1}.  The
    output :math:`\theta_T` has at most ``sparsity`` non-zeros.

    **Privacy.**  Neighbouring datasets differ by adding or removing one example
    (``"replace_one"``: replacing one).  The normaliser ``N`` of the step must be a
    public constant: ``n_samples_public``; without it the dataset size is read from
    the data, which under add/remove is not public (a
    :class:`~dptoolkit.exceptions.PrivacyLeakWarning` says so; under replace-one the
    size is public).  Every example satisfies the public bound
    :math:`\|x_i\|_2 \le C` (``row_norm_bound``; rows above it are scaled down, a
    local operation).  Since :math:`|\sigma(x_i^\top\theta) - y_i| < 1`, one
    example's gradient has L2 norm at most :math:`C`, so the summed gradient has L2
    sensitivity :math:`\Delta = C` (:math:`2C` for replace-one).  Each step is the
    Gaussian mechanism with noise multiplier :math:`\sigma`; the thresholding and the
    update are post-processing of the previous (released) iterate and the noisy sum.
    The :math:`T` steps compose in Renyi DP (:math:`T\alpha/(2\sigma^2)` at order
    :math:`\alpha`, exact for the full-batch Gaussian mechanism), converted to
    :math:`(\varepsilon, \delta)`; :math:`\sigma` is the smallest value meeting the
    budget (:func:`dptoolkit.accounting.calibrate_noise_multiplier` with
    ``sampling_rate=1``, bisection to relative tolerance 1e-6).  Wang & Gu calibrate
    the same Gaussian noise through the loss's L2-Lipschitz constant; the RDP
    calibration used here is tighter than a composition-theorem bound and never
    looser.

    Parameters
    ----------
    sparsity : int or "auto", default="auto"
        Number of non-zeros ``s`` kept at every step, ``1 <= s <= n_features``;
        "auto": ``min(1000, n_features)``.
    max_iter : int, default=100
        Number of iterations ``T``, in [1, 10**7] (the paper 001 study uses 1000; every full-batch
        step costs noise, and 100 steps of size :math:`1/\beta` suffice for the
        smooth loss).
    learning_rate : float, default=4.0
        Step size :math:`\eta > 0` on the mean gradient.  The mean logistic loss is
        :math:`C^2/4`-smooth, so :math:`\eta \le 4/C^2` is a descent step without
        noise; the default is :math:`1/\beta` for ``row_norm_bound=1``.
    epsilon : float, default=1.0
        Total :math:`\varepsilon > 0`.
    delta : float, default=1e-5
        :math:`\delta \in (0, 1)`.
    row_norm_bound : float, default=1.0
        Public bound :math:`C > 0` on :math:`\|x_i\|_2`.
    n_samples_public : int or None, default=None
        Public dataset size ``N`` used in the step :math:`\eta/N`; None reads it from
        the data (with a ``PrivacyLeakWarning`` under add/remove).
    neighbouring : {"add_remove", "replace_one"}, default="add_remove"
    screening : int, "auto" or None, default="auto"
        Private candidate screening before the iterations (as for
        :class:`FrankWolfeLassoClassifier`: the Gaussian mechanism on the column
        masses of the row-normalised data, :mod:`dptoolkit.linear_model._fw_screening`),
        keeping this many features; "auto": 4096 when there are more features;
        None: off.  On hashed text the noisy gradient's top ``s`` coordinates are
        otherwise mostly noise.
    screening_fraction : float, default=0.1
        Share of the zCDP budget the screening spends, in (0, 1).
    clip_data : bool, default=True
        Rows with :math:`\|x_i\|_2 > C` are scaled to norm :math:`C` with a
        :class:`~dptoolkit.exceptions.DataClippedWarning` if True; an error if False.
    accountant : BudgetAccountant or None, default=None
        If given, (epsilon, delta) is checked before any work and spent after.
    random_state : None, int or numpy.random.Generator, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        :math:`\theta_T`, at most ``sparsity`` non-zeros.
    intercept_ : ndarray of shape (1,)
        Zero (no intercept).
    classes_ : ndarray of shape (2,)
    n_iter_ : int
    noise_multiplier_ : float
        :math:`\sigma` (noise standard deviation / sensitivity).
    privacy_spent_ : tuple (epsilon, delta)
        The RDP accountant's epsilon at the calibrated :math:`\sigma` (at most the
        requested one) and ``delta``.
    privacy_event_ : SelfComposedEvent
        ``max_iter`` Gaussian mechanisms of noise multiplier ``noise_multiplier_``.
    n_features_in_ : int

    References
    ----------
    L. Wang, Q. Gu. Differentially Private Iterative Gradient Hard Thresholding for
    Sparse Learning. IJCAI 2019, Algorithm 1.

    A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression (paper 001),
    Section 4.2 (the baseline).

    I. Mironov. Renyi Differential Privacy. CSF 2017 (Gaussian mechanism RDP).
    """

    _privacy_label = "DP-IGHT"

    def __init__(self, *, sparsity="auto", max_iter=100, learning_rate=4.0, epsilon=1.0,
                 delta=1e-5, row_norm_bound=1.0, n_samples_public=None,
                 neighbouring="add_remove", screening="auto", screening_fraction=0.1,
                 clip_data=True, accountant=None, random_state=None):
        _store_params(self, locals())

    def _check_params(self, n_features):
        if isinstance(self.sparsity, str) and self.sparsity == "auto":
            sparsity = min(1000, n_features)
        else:
            sparsity = check_positive_int(self.sparsity, "sparsity")
        if sparsity > n_features:
            raise ValueError(f"sparsity must be in [1, n_features] = [1, {n_features}], got "
                             f"{sparsity}")
        # every step is a full-batch gradient: more than MAX_ITER cannot run
        max_iter = check_positive_int(self.max_iter, "max_iter", maximum=MAX_ITER)
        eta = check_scalar_range(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        epsilon = check_scalar_range(self.epsilon, "epsilon", low=0.0, low_open=True)
        delta = check_scalar_range(self.delta, "delta", low=0.0, high=1.0, low_open=True,
                                   high_open=True)
        bound = check_scalar_range(self.row_norm_bound, "row_norm_bound", low=0.0,
                                   low_open=True)
        if self.neighbouring not in ("add_remove", "replace_one"):
            raise ValueError("neighbouring must be 'add_remove' or 'replace_one', got "
                             f"{self.neighbouring!r}")
        if not isinstance(self.clip_data, (bool, np.bool_)):
            raise TypeError(f"clip_data must be a bool, got {type(self.clip_data).__name__}")
        if self.n_samples_public is not None:
            check_positive_int(self.n_samples_public, "n_samples_public")
        return sparsity, max_iter, eta, epsilon, delta, bound

    @fill_doc
    def fit(self, X, y):
        """Fit DP-IGHT.

        %(params_fit_Xy)s
            Two classes; ``classes_[1]`` is the positive one.

        %(returns_self)s

        Raises
        ------
        ValueError
            Invalid hyper-parameters, not exactly two classes, NaN/inf, rows above the
            public norm bound with ``clip_data=False``.
        BudgetExceededError
            The accountant cannot pay (epsilon, delta); nothing is fitted.
        TypeError
            Non-numeric parameters or data.
        """
        X, y = validate_data(self, X, y, accept_sparse=True, dtype=np.float64,
                             ensure_all_finite=True, y_numeric=False)
        sparsity, max_iter, eta, epsilon, delta, bound = self._check_params(X.shape[1])
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size > 2:
            raise ValueError("Only binary classification is supported. The type of the "
                             f"target is {type_of_target(y)} ({classes.size} classes).")
        if classes.size != 2:
            raise ValueError(f"DPIGHTClassifier needs two classes in y, got {classes.size} "
                             "class")
        # dense input stays dense (BLAS mat-vecs); sparse input becomes CSR
        Xr = sp.csr_array(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if sp.issparse(Xr) and not np.all(np.isfinite(Xr.data)):
            raise ValueError("Input X contains NaN or infinity")
        Xr, n_clipped = clip_rows(Xr, bound, "l2")
        if n_clipped:
            if not self.clip_data:
                raise ValueError(f"{n_clipped} row(s) have L2 norm above row_norm_bound="
                                 f"{bound}; scale X with public constants or set "
                                 "clip_data=True")
            warnings.warn(f"{n_clipped} example(s) had L2 norm above row_norm_bound={bound}; "
                          "they were scaled to the public bound", DataClippedWarning,
                          stacklevel=2)
        y01 = (y == classes[1]).astype(np.float64)

        k = self._screening_size(Xr.shape[1], sparsity)
        template, sigma_screen = RDPAccountant(), None
        if k is not None:
            # the candidate screening gets a share of the zCDP budget (as for
            # Frank-Wolfe: dptoolkit.linear_model._fw_screening)
            rho = calibrate_parameter(lambda r: ZCDPEvent(r), target_epsilon=epsilon,
                                      delta=delta, low=1e-12, high=1e6, method="rdp")
            sigma_screen = 1.0 / math.sqrt(2.0 * self.screening_fraction * rho)
            template.compose_gaussian(noise_multiplier=sigma_screen)
        sigma = calibrate_noise_multiplier(target_epsilon=epsilon, delta=delta,
                                           sampling_rate=1.0, steps=max_iter,
                                           accountant=template)
        spent = template.copy().compose_gaussian(noise_multiplier=sigma,
                                                 steps=max_iter).get_epsilon(delta)
        # max_iter full-batch Gaussian gradient steps (sensitivity factor * bound)
        event = SelfComposedEvent(GaussianEvent(sigma), max_iter)
        if k is not None:
            event = ComposedEvent((GaussianEvent(sigma_screen), event))
        self._check_spend(event, (spent, delta))
        rng = check_random_state(self.random_state)
        factor = 2.0 if self.neighbouring == "replace_one" else 1.0
        std = sigma * factor * bound
        n_features = Xr.shape[1]
        columns = None
        if k is not None:
            Xr = sp.csr_array(Xr)
            columns = private_top_columns(Xr, k, sigma_screen, rng, sensitivity=factor)
            Xr = Xr[:, columns]
        n, d = Xr.shape
        XcT = sp.csr_array(Xr.T) if sp.issparse(Xr) else np.ascontiguousarray(Xr.T)
        theta = np.zeros(d)
        n_public = self.n_samples_public
        if n_public is None:
            n_public = n
            if self.neighbouring == "add_remove":
                warnings.warn("n_samples_public is None: the step eta / N uses the dataset "
                              "size read from the data, which is not public under "
                              "add/remove neighbouring; pass the public size as "
                              "n_samples_public", PrivacyLeakWarning, stacklevel=2)
        step = eta / n_public
        for _ in range(max_iter):
            grad = XcT @ (_sigmoid(Xr @ theta) - y01)
            theta = keep_largest(theta - step * (grad + std * rng.standard_normal(d)),
                                 sparsity)
        coef = np.zeros((1, n_features))
        coef[0, columns if columns is not None else slice(None)] = theta
        self.coef_ = coef
        self.screened_features_ = columns
        self.intercept_ = np.zeros(1)
        self.classes_ = classes
        self.n_iter_ = max_iter
        self.noise_multiplier_ = sigma
        return self._record_spend(event, (spent, delta))

    def _screening_size(self, n_features, sparsity):
        """k of the candidate screening, or None (no screening)."""
        screening_fraction = check_scalar_range(self.screening_fraction,
                                                "screening_fraction", low=0.0, high=1.0,
                                                low_open=True, high_open=True)
        k = self.screening
        if k is None:
            return None
        if isinstance(k, str) and k == "auto":
            k = DEFAULT_N_CANDIDATES
        else:
            k = check_positive_int(k, "screening")
        del screening_fraction
        if k < sparsity:
            raise ValueError(f"screening={k} must be >= sparsity={sparsity}")
        return k if k < n_features else None

    _poor_score = True  # private: noisy by design

    def _margins(self, X):
        """Margins :math:`x_i^\\top\\theta`, shape (n_samples,)."""
        return np.asarray(X @ self.coef_[0]).ravel()
