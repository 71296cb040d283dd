r"""Differentially private stochastic coordinate descent (Damaskinos et al., 2021), SCD / SDCA.

The problem is L2-regularised empirical risk minimisation (Damaskinos et al. (2021), eq. 1)

.. math:: F(\theta) = \frac{1}{N}\sum_{i=1}^N \ell_i(x_i^\top\theta)
          + \frac{\lambda}{2}\|\theta\|^2 ,

with the squared loss :math:`\ell_i(a) = (a - y_i)^2/2` (ridge regression), the
logistic loss :math:`\log(1 + e^{-y_i a})` or the hinge loss
:math:`\max(0, 1 - y_i a)`, :math:`y_i \in \{-1, +1\}` for the classifiers.  The
dual (eq. 3) is solved by coordinate descent on the dual variables
:math:`\alpha \in \mathbb{R}^N`, keeping the shared vector :math:`v = X^\top\alpha
\in \mathbb{R}^M`; the model is :math:`\theta = v / (\lambda N)`.

Privacy model shared by every estimator of this module and of
``dptoolkit.linear_model._glm._dpsgd``: neighbouring datasets differ by adding or
removing one example (add/remove-one).  The dataset size :math:`N` enters every
step (the sampling rate :math:`q = L/N`, the number of steps, :math:`\lambda N` in
every coordinate update and :math:`\theta = v/(\lambda N)`), so under add/remove it
must be a *public constant*, given as ``n_samples_public``, not read from the
data, as in Abadi et al. (2016): a neighbour with one more row then changes only
that row's own update.  When ``n_samples_public`` is None a private fit takes
:math:`N` = ``X.shape[0]`` with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`;
the guarantee then covers only neighbouring datasets of the same size.  The
actual number of rows may differ from the public :math:`N`: the algorithms then
minimise :math:`\frac{1}{N}\sum_{i} \ell_i(x_i^\top\theta) +
\frac{\lambda}{2}\|\theta\|^2` with the public :math:`N` and the sum over the
rows actually present (eq. 1 with a constant in place of the row count), with
Poisson sampling of each present row at rate :math:`q`.  What is released is
the sequence of models (for the dual variants the shared vector :math:`v_t` after
every step); the dual vector :math:`\alpha` is *never* released, see the Notes of
:class:`DPSCDClassifier`.
"""
import copy
import dataclasses
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin

from . import _scd_fast
from ._scd_softmax import _softmax_dual_scd
from ._scd_defaults import (_LOGISTIC_BOX, _auto_batch, _auto_clip, _auto_clip_softmax,
                            _auto_epochs, _softmax_step, _SOFTMAX_MAX_AUTO_EPOCHS)
from ..._docstrings import fill_doc
from ..._private import data_dependent_error
from ._base import (_BaseLinearDP, _calibrate, _class_doc, _fit_doc, _linear_dp_constraints,
                    _record_steps, MAX_N_EPOCHS, primal_objective)
from ..._estimator import (_ClassifierOutputs, _RegressorOutputs, _softmax, _store_params,
                           ovr_proba)
from ..._validation import Boolean, Interval, Options, POSITIVE

__all__ = ["DPSCDClassifier", "DPSCDRegressor", "primal_objective"]

_VARIANTS = ("dual", "primal", "sequential")
_MULTI_CLASS = ("auto", "multinomial", "ovr")


# --------------------------------------------------------------------------- helpers
_N_EPOCHS = [Options("auto"), Interval("real", 0.0, MAX_N_EPOCHS, closed="right")]
#: What N sets in a dual or sequential fit, and in a primal one (the text of the
#: PrivacyLeakWarning).
_N_USES = ("the sampling rate q = L/N, the number of steps and lambda*N in every "
           "coordinate update")
_N_USES_PRIMAL = ("1/N in every coordinate update, n_samples_used_ and, with "
                  "n_epochs='auto', the number of epochs and steps")


class _BaseSCD(_BaseLinearDP):
    def _check_params(self):
        autos = [name for name in ("clip", "n_epochs") if isinstance(getattr(self, name), str)]
        for name in autos:
            if getattr(self, name) != "auto":
                raise ValueError(f"{name} must be 'auto' or a number > 0"
                                 f"{' (or None)' if name == 'clip' else ''}, got "
                                 f"{getattr(self, name)!r}")
        if autos:
            # the shared checks validate numbers; "auto" is resolved in fit from the
            # public lambda, N, epsilon and sigma' (_auto_clip, _auto_epochs), so check
            # the rest on a copy
            shadow = copy.copy(self)
            for name in autos:
                setattr(shadow, name, 1.0)
            p = dataclasses.replace(shadow._check_common(), **dict.fromkeys(autos, "auto"))
        else:
            p = self._check_common()
        # rules between parameters (each one's range is the constraint table's)
        if self.variant == "primal" and self.loss == "hinge":
            raise ValueError("variant='primal' needs a smooth loss: exact coordinate "
                             "minimisation of the non-smooth hinge loss in the primal can "
                             "stall away from the optimum; use variant='dual' (SDCA)")
        if (self.normalize is None and p.private
                and self.variant in ("dual", "sequential")):
            raise ValueError("a private dual fit needs ||x_i|| <= 1 (Damaskinos et al. (2021), Lemma 1): "
                             "use normalize='l2' or 'clip'")
        if getattr(self, "multi_class", "ovr") == "multinomial" and not self._multinomial_possible():
            raise ValueError("multi_class='multinomial' needs loss='logistic', "
                             "variant='dual' and perturb_dual=False; use multi_class='ovr'")
        return p

    def _multinomial_possible(self):
        return (getattr(self, "loss", None) == "logistic" and self.variant == "dual"
                and not self.perturb_dual)

    def _is_multinomial(self, n_classes):
        """Whether a fit on ``n_classes`` classes is the one multinomial model."""
        multi_class = getattr(self, "multi_class", "ovr")
        return (n_classes > 2 and multi_class != "ovr" and self._multinomial_possible())

    @_fit_doc(invalid="``batch_size`` outside [1, N] or, for ``variant=\"primal\"``, "
                      "[1, n_features]",
              failure="", warns="Private dual or sequential fit", n_enters="")
    def fit(self, X, y):
        return super().fit(X, y)

    def _fit_private(self, X, t, plan, rng):
        """The variant's coordinate-descent kernel (once, or once a class against the
        rest) on the transformed rows."""
        steps, p = plan.params, plan.params.validated
        Xt, sq = self._prepare(X, p)
        N, L, clip, q, n_steps = (steps.n_constant, steps.batch_size, steps.clip,
                                  steps.sampling_rate, steps.n_steps)
        lam, private, n_epochs, noise_std = (p.alpha, p.private, p.n_epochs,
                                             steps.noise_std)
        n_models = steps.n_classes if steps.n_classes > 2 else 1
        code = _scd_fast.LOSS_CODES[self._kernel_loss()]
        rec_steps, rec_epochs = _record_steps(n_steps, n_epochs)
        if not self.keep_coef_path:
            rec_steps = rec_steps[:0]
        if self.variant == "primal":
            Xc = sp.csc_array(Xt)
            Xc.sort_indices()
            Xc.indices = Xc.indices.astype(np.int64, copy=False)
            Xc.indptr = Xc.indptr.astype(np.int64, copy=False)
        run = dict(rng=rng, code=code, L=L, N=N, lam=lam, clip=clip, q=q, private=private,
                   n_steps=n_steps, noise_std=noise_std, rec_steps=rec_steps)
        self._multinomial = self._is_multinomial(steps.n_classes)
        if self._multinomial:
            w, path, alpha = _softmax_dual_scd(
                Xt, t.astype(np.int64), steps.n_classes, rng=rng,
                step=_softmax_step(lam, N, L, private), lam_n=lam * N, clip=clip, sampling_rate=q if private else None,
                batch_size=L, n_steps=n_steps, noise_std=noise_std, rec_steps=rec_steps)
            if w is None:
                if private:
                    raise data_dependent_error("non-finite values during the fit; the "
                                               "problem is badly scaled (check alpha and "
                                               "the data)")
                raise ValueError("non-finite values during the fit; the problem is badly "
                                 "scaled (check alpha and the data)")
        elif n_models == 1:
            w, path, alpha = self._run_kernel(Xc if self.variant == "primal" else Xt, sq,
                                              t, **run)
        else:   # class c against the rest, labels +1 / -1, in class order
            fits = [self._run_kernel(Xc if self.variant == "primal" else Xt, sq,
                                     np.where(t == c, 1.0, -1.0), **run)
                    for c in range(n_models)]
            w = np.column_stack([f[0] for f in fits])
            path = np.stack([f[1] for f in fits], axis=2)
            alpha = np.column_stack([f[2] for f in fits]) if fits[0][2] is not None \
                else None
        # alpha is internal state of a private run and is not released
        self.dual_coef_ = None if private else alpha
        self._finish(w, path if self.keep_coef_path else None, rec_epochs, plan)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        ``total_steps`` subsampled Gaussian steps; ``params`` a :class:`GLMSteps`."""
        p = self._check_params()
        K = self._planned_n_classes(classes)
        M = n_features + bool(self.fit_intercept)   # columns after transform_rows
        # N of eq. 1 in q = L/N, lambda N and theta = v/(lambda N): public for a
        # private fit (the kernels sample and update the rows actually present).
        # The primal's per-step guarantee does not depend on N (each coordinate
        # update is clipped to C whatever N is, and q = 1), but N is shown in
        # n_samples_used_ and n_epochs="auto" sets the number of steps
        # (n_epochs_, n_steps_, the noise multiplier and the event) from it: a
        # private primal fit taking N from the data warns as the others do.
        N = self._n_constant(p, n_samples, uses=(
            _N_USES_PRIMAL if self.variant == "primal" else _N_USES))
        lam = p.alpha
        private = p.private
        if self.variant == "primal":
            n_epochs = _auto_epochs(p, N, 100.0)
            p = dataclasses.replace(p, n_epochs=n_epochs)
            L = self._batch(self.batch_size, M, "n_features")
            clip = _auto_clip(p, loss=self._kernel_loss(), lam=lam, N=N, sigma_p=None)
            n_steps = int(math.ceil(n_epochs * math.ceil(M / L)))
            q = 1.0
            sensitivity = 2.0 * clip * math.sqrt(L)
        else:
            L = self._example_lot(N, public=private and p.n_samples_public,
                                  batch_size=_auto_batch(self.batch_size, p, N, self.variant))
            # sigma' = L damps the dual variant's updates (_auto_epochs); sigma' = 1
            # for the sequential one; the multinomial model's cap is 20 passes
            n_epochs = _auto_epochs(p, N, L if self.variant == "dual" else 100.0,
                                    **({"cap": _SOFTMAX_MAX_AUTO_EPOCHS}
                                       if self._is_multinomial(K) else {}))
            p = dataclasses.replace(p, n_epochs=n_epochs)
            if private:
                q = L / N
                n_steps = int(math.ceil(n_epochs / q))
            else:
                q = None
                n_steps = int(math.ceil(n_epochs * math.ceil(N / L)))
            clip = _auto_clip(p, loss=self._kernel_loss(), lam=lam, N=N,
                              sigma_p=1.0 if self.variant == "sequential" else float(L))
            if self.variant == "dual":
                sensitivity = (math.sqrt(2.0) if self.perturb_dual else 1.0) * clip
            else:
                sensitivity = 2.0 * clip * math.sqrt(L * (L + 1.0))
        if self._is_multinomial(K):
            # one softmax model: each step adds x_k zeta_k^T with ||zeta_k||_2 <= C,
            # Frobenius sensitivity C; one event of n_steps steps (Notes, "More
            # than two classes")
            clip = _auto_clip_softmax(p, step=_softmax_step(lam, N, L, private), n_classes=K)
            sensitivity = clip
            total_steps = n_steps
        else:
            # K > 2 classes: K one-vs-rest fits of n_steps steps each, one event of
            # K n_steps steps (see "More than two classes" in the Notes)
            total_steps = (K if K > 2 else 1) * n_steps
        sigma = (_calibrate(epsilon=p.epsilon, delta=p.delta, sampling_rate=q,
                            steps=total_steps) if private else 0.0)
        return self._steps_plan(
            p, n_constant=N, batch_size=L, sampling_rate=q, n_steps=n_steps,
            total_steps=total_steps, noise_multiplier=sigma, sensitivity=sensitivity,
            noise_std=sigma * sensitivity if private else 0.0, clip=clip, n_classes=K)

    def _run_kernel(self, X, sq, t, *, rng, code, L, N, lam, clip, q, private, n_steps,
                    noise_std, rec_steps):
        """One (binary or one-vs-rest) run of the variant's kernel on labels ``t``.

        Returns ``(w, path, alpha)``: the weights of shape (M,), the recorded
        weights of shape (len(rec_steps), M) and the dual vector (None for the
        primal variant).  ``X`` is CSC for the primal variant, CSR otherwise."""
        M = X.shape[1]
        n_rows = X.shape[0]
        trace = np.zeros((rec_steps.shape[0], M))
        if self.variant == "primal":
            theta = np.zeros(M)
            v = np.zeros(n_rows)
            status, done = _scd_fast.primal_scd(
                X.data, X.indices, X.indptr, t, theta, v, loss=code, sigma_p=float(L),
                lam=lam, n_public=float(N), clip=clip, batch_size=L, n_steps=n_steps,
                noise_theta=noise_std, bit_generator=rng.bit_generator,
                record_steps=rec_steps, trace=trace)
            w, path, alpha = theta, trace, None
        else:
            sequential = self.variant == "sequential"
            alpha = np.zeros(n_rows)
            v = np.zeros(M)
            status, done = _scd_fast.dual_scd(
                X.data, X.indices, X.indptr, t, sq, alpha, v, loss=code,
                sequential=sequential, sigma_p=1.0 if sequential else float(L),
                lam_n=lam * N, clip=clip, sampling_rate=q if private else 0.0,
                batch_size=L, batch_cap=L, n_steps=n_steps, noise_v=noise_std,
                noise_alpha=noise_std if (sequential or self.perturb_dual) else 0.0,
                alpha_noise_all=sequential, exact=True, box=_LOGISTIC_BOX,
                bit_generator=rng.bit_generator, record_steps=rec_steps, trace=trace)
            w = v / (lam * N)
            path = trace / (lam * N)
        if status != _scd_fast.STATUS_OK:
            if private:  # the step at which it failed depends on the data: not shown
                raise data_dependent_error("non-finite values during the fit; the problem "
                                           "is badly scaled (check alpha and the data)")
            raise ValueError(f"non-finite values after {done} of {n_steps} steps; the "
                             "problem is badly scaled (check alpha and the data)")
        return w, path, alpha


_SCD_DOC_PARAMS = r"""
    epsilon : float or None, default=1.0
        Privacy budget :math:`\varepsilon > 0`.  ``None`` (only when given
        explicitly) fits without privacy and without a warning (plain SCD / SDCA:
        no noise, batches from a permutation reshuffled every epoch, exact
        coordinate minimisation, ``clip=None`` allowed; ``privacy_spent_`` None).
    delta : float, default=1e-5
        :math:`\delta \in (0, 1)` of a private fit.
    n_samples_public : int or None, default=None
        Public dataset size :math:`N \ge 1` of a private fit: the constant in the
        sampling rate :math:`q = L/N`, the number of steps, :math:`\lambda N` in every
        coordinate update and :math:`\theta = v/(\lambda N)` (and :math:`1/N` in the
        primal updates).  It must not be read from the private data (e.g. the size
        of a fixed, published collection): the add/remove-one guarantee needs
        :math:`N` to be the same for neighbouring datasets.  The rows actually
        present may be more or fewer; the fit then minimises eq. 1 with this
        :math:`N` in place of the row count.  ``None`` takes :math:`N` =
        ``X.shape[0]`` with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`
        (every variant): the guarantee then covers only neighbouring datasets of
        the same size.  Ignored when ``epsilon=None`` (the non-private
        fit uses ``X.shape[0]``).
    alpha : float, default=1e-4
        Regularisation strength :math:`\lambda > 0` of eq. 1 (the paper's value for
        Phishing and YearPredictionMSD, Appendix E; :math:`\lambda N` of order 1 for
        :math:`N \approx 10^4`, as scikit-learn's ``C=1``).
    batch_size : int or "auto", default="auto"
        Mini-batch size :math:`L`: the expected number of examples per step, in
        [1, N] with :math:`N` = ``n_samples_public`` for a private fit and
        ``n_samples`` otherwise (the sampling rate of a private fit is
        :math:`q = L/N`); for ``variant="primal"`` the number of coordinates per
        step, in [1, n_features].  "auto": for a private ``variant="dual"`` fit
        :math:`\lceil 3\sqrt N\rceil` in [100, 1000], at most N (``_auto_batch``: 219 for
        N = 5,325, 475 for N = 25,000); otherwise ``min(100, limit)``.
    clip : float, "auto" or None, default="auto"
        Scaling bound :math:`C > 0`: every coordinate update is scaled to
        :math:`|\zeta_j| \le C` (Algorithm 1, step 8); the noise is proportional to
        :math:`C`.  "auto": for a private dual or sequential fit, the size of the
        first unscaled update of a unit-norm example at :math:`\alpha = 0`,
        :math:`v = 0` (public constants only; :math:`\lambda N/(\lambda N +
        \sigma')` for the squared loss, :math:`\min(1, \lambda N/\sigma')` for the
        hinge loss, the root of :math:`\mathrm{logit}(z) + \sigma' z/(\lambda N)`
        for the logistic loss; :math:`\sigma' = L` for "dual", 1 for
        "sequential"; see Notes), 1 for "primal", and no scaling without privacy;
        for the multinomial model the bound is on the L2 norm of an example's
        :math:`K` updates, "auto" :math:`0.3\,s\sqrt{1 - 1/K}` (Notes, "More than
        two classes").
        ``None`` (only with ``epsilon=None``) disables scaling.
    n_epochs : float or "auto", default="auto" (classifier), 10 (regressor)
        Number of passes, in (0, 10**6]: :math:`T = \lceil n\_epochs / q\rceil` steps for a private
        dual fit (:math:`\lceil n\_epochs \cdot \lceil M/L\rceil\rceil` for the
        primal), the paper's :math:`T = 10N` updates for 10 epochs.  "auto": for a
        private fit :math:`\sqrt{\varepsilon N L}/180` in [1, 10] (in [1, 20] for
        the multinomial model) with :math:`N` =
        ``n_samples_public`` and :math:`L` the batch size (100 for the
        sequential and primal variants): the bias-noise balance of the noise
        summed over the epochs, see ``_auto_epochs``; 6.0 for
        :math:`\varepsilon = 1`, N = 5,325, L = 219; 10 without privacy.
    variant : {"dual", "primal", "sequential"}, default="dual"
        "dual": DP-SCD (Algorithm 1), :math:`L` independent updates per mini-batch on
        the subproblem of eq. 8 (:math:`\sigma' = L`).  "sequential": seqDP-SCD
        (Algorithm 3), the updates of a mini-batch applied one after the other
        (:math:`\sigma' = 1`, i.e. SDCA).  "primal": Algorithm 2, :math:`L` primal
        coordinates per step (not for the hinge loss).
    perturb_dual : bool, default=False
        Dual variant only.  True (Algorithm 1 as printed): noise
        :math:`N(0, 2\sigma^2C^2)` on :math:`\alpha_{\mathcal B}` and on :math:`v`,
        calibrated to the sensitivity :math:`\sqrt2 C` of :math:`[\Delta\alpha;
        \Delta v]`.  False: :math:`\alpha` is kept as private per-example state and
        only :math:`v` is perturbed, :math:`N(0, \sigma^2C^2)`, calibrated to the
        sensitivity :math:`C` of :math:`\Delta v`; the same guarantee with
        :math:`\sqrt2` less noise (Notes).  False is the default because the noise
        on :math:`\alpha` also corrupts the label constraints of the updates
        (Notes, "Defaults").
    normalize : {"l2", "clip"} or None, default="l2"
        Per-example (local) bound :math:`\|x_i\|_2 \le 1` needed by the sensitivity
        analysis: "l2" scales every non-zero row to unit norm (the paper's
        normalisation), "clip" scales only rows with norm above 1
        (``DataClippedWarning``).  ``None`` leaves X unchanged; not allowed for a
        private dual or sequential fit.  The same transformation is applied to X in
        ``predict``.  No per-feature (data-derived) scaling is done.
    fit_intercept : bool, default=False
        Append a constant feature 1 (before ``normalize``); its
        weight is regularised like the others.
    %(random_state)s
    %(accountant)s
"""

_SCD_DOC_ATTRS = r"""
    coef_ : ndarray
        Model :math:`\theta` (:math:`v/(\lambda N)` for the dual variants), without
        the intercept weight: shape (n_features,) (regressor), (1, n_features) (two
        classes) or (n_classes, n_features) (one class a row: the softmax model's
        weights, or one one-vs-rest model a row).
    intercept_ : float or ndarray of shape (1,) or (n_classes,)
        Weight of the constant feature (0 without
        ``fit_intercept``).
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_classes), or None
        Dual vector :math:`\alpha` of a non-private dual fit (for more than two
        classes the dual blocks :math:`\alpha_i` of the softmax model as rows, or
        one column per one-vs-rest model); ``None`` for private
        fits (never released) and for the primal variant.
    batch_size_ : int
        :math:`L` used.
    n_samples_used_ : int
        :math:`N` used in :math:`q = L/N`, :math:`\lambda N` and
        :math:`\theta = v/(\lambda N)`: ``n_samples_public`` for a private fit that
        was given it, ``X.shape[0]`` otherwise.
    n_steps_ : int
        Number of mini-batch steps :math:`T` (:math:`KT`, the steps of all
        :math:`K` one-vs-rest fits, for :math:`K > 2` classes).
    n_epochs_ : float
    sensitivity_ : float
        :math:`L_2` sensitivity of one step's released update (see Notes).
    sampling_rate_ : float or None
        :math:`q` given to the accountant (Poisson sampling); 1 for the primal.
    noise_multiplier_ : float or None
        :math:`\sigma` from :func:`dptoolkit.accounting.calibrate_parameter`.
    noise_std_ : float or None
        Standard deviation :math:`\sigma \cdot` ``sensitivity_`` of the Gaussian noise.
    privacy_event_ : SelfComposedEvent or None
        ``n_steps_`` Poisson-subsampled Gaussian steps (``sampling_rate_``,
        ``noise_multiplier_``); None when non-private.
    privacy_spent_ : tuple (epsilon, delta) or None
        Epsilon of the run computed by the RDP accountant for
        (``noise_multiplier_``, ``sampling_rate_``, ``n_steps_``); at most
        ``epsilon``.
    coef_path_, intercept_path_, epoch_path_ : ndarray
        With ``keep_coef_path = True`` set on the instance before ``fit`` (a
        diagnostic attribute, not a parameter): the model at epochs 0, 1, 2, ...
        and at the end (released intermediate models, covered by the guarantee).
    n_features_in_ : int
"""

_SCD_DOC_NOTES = r"""
    **Privacy.**  Neighbouring datasets differ by adding or removing one example;
    :math:`N` is the public constant ``n_samples_public`` (see the module
    docstring), so a neighbour with one more or one fewer row has the same
    :math:`q`, :math:`T`, :math:`\lambda N` and :math:`\theta = v/(\lambda N)`.
    (With ``n_samples_public=None`` :math:`N` is the row count, every update of a
    step changes with it, and the sensitivities below hold only between datasets
    of the same size; a ``PrivacyLeakWarning`` says so.)  Every example is
    scaled to :math:`\|x_i\| \le 1` locally (``normalize``) and every coordinate
    update to :math:`|\zeta_j| \le C`.  Mechanism: the Gaussian mechanism on each
    step's update, composed over :math:`T` steps by the RDP accountant
    (:func:`dptoolkit.accounting.calibrate_parameter` gives the smallest
    noise multiplier :math:`\sigma` meeting (epsilon, delta), by bisection to
    relative tolerance 1e-6; Damaskinos et al. (2021), Algorithm 1 step 2, chooses sigma by a
    "variance of the moments-accountant output" criterion, which is not a
    definition; bisection on epsilon is).  Per-step budget and composition: each step is one (subsampled)
    Gaussian mechanism with noise multiplier :math:`\sigma` and sampling rate
    :math:`q`, whose Renyi-DP curve :math:`\varepsilon_q(\alpha)` is the per-step
    budget; the :math:`T` steps compose additively in RDP,
    :math:`T\varepsilon_q(\alpha)`, which the accountant converts to
    (epsilon, delta) (``privacy_spent_``).  Per variant:

    * ``"dual"`` (Algorithm 1).  Each example of the step is drawn independently
      with probability :math:`q = L/N` (Poisson sampling, which is what the
      accountant assumes -- Algorithm 1 as printed draws exactly :math:`L`, which
      the Poisson bound does not cover), so each step is a subsampled Gaussian mechanism with
      sampling rate :math:`q`, :math:`T = \lceil n\_epochs/q\rceil` steps.  The
      updates of a batch are computed independently from the released :math:`v`,
      with the public constant :math:`\sigma' = L` in eq. 8 (not the realised batch
      size, which would make every update depend on whether the target example was
      drawn) and with the public :math:`\lambda N` in every :math:`\zeta_j`, so
      adding or removing example :math:`k` changes only :math:`\zeta_k x_k`:
      sensitivity :math:`C` for :math:`\Delta v` and :math:`\sqrt{2}C` for
      :math:`[\Delta\alpha;\Delta v]` (Lemma 1; verified in tests/test_scd.py on
      datasets of :math:`n` and :math:`n + 1` rows with the same public :math:`N`).
    * ``"sequential"`` (Algorithm 3).  Each update sees the previous ones of the
      batch, so one example moves every later update: with a Poisson batch put in
      random order and truncated to at most :math:`L` examples, adding example
      :math:`k` either inserts it (difference at most :math:`C` on
      :math:`\alpha_k`, :math:`2C` on each later :math:`\alpha_j`, :math:`C(2L-1)`
      on :math:`v`) or, when the batch is full, swaps it for one example at the same
      position; both are within :math:`2C\sqrt{L(L+1)}` (Lemma 5).  Because the
      other examples' :math:`\alpha_j` then depend on example :math:`k`,
      :math:`\alpha` must be released too: noise goes on *every* coordinate of
      :math:`\alpha` after every step (drawn lazily, one normal with the summed
      variance when a coordinate is next read), not only on
      :math:`\alpha_{\mathcal B}` -- which would reveal the batch and void the
      amplification by subsampling.
    * ``"primal"`` (Algorithm 2).  Every step reads every example (:math:`q = 1`)
      and updates :math:`L` coordinates chosen independently of the data; each
      update can change by :math:`2C` when one example is added, so the released
      :math:`\Delta\theta_{\mathcal B}` has sensitivity :math:`2C\sqrt{L}`.  This
      bound comes from the clipping alone, so it holds even when :math:`N` is the
      row count.  But :math:`N` sets the :math:`1/N` of the objective, is shown
      as ``n_samples_used_``, and with ``n_epochs="auto"`` sets the number of
      steps, hence the noise multiplier and the event: a private fit without
      ``n_samples_public`` warns (:class:`~dptoolkit.exceptions.PrivacyLeakWarning`)
      as the other variants do.  The
      margins :math:`v = X\theta` are per-example state kept exactly consistent with
      the released noisy :math:`\theta` and are not released, so no noise is needed
      on them.  (Lemma 4's :math:`2C\sqrt{L(L+1)}` is for releasing a noisy
      :math:`v` as well, and holds only if every feature column has unit norm -- a
      normalisation across examples that is itself not private.)

    **Why** :math:`\alpha` **is never released (dual variant).**  In Algorithm 1
    only the coordinates :math:`\alpha_{\mathcal B}` receive noise, so a released
    :math:`\alpha` would reveal the batch, and the subsampled-Gaussian accounting
    (which needs the batch hidden) would not apply.  Here only :math:`v_t` (and
    :math:`\theta = v_T/(\lambda N)`) is released.  :math:`\alpha_j` depends only on
    example :math:`j`, on its own sampling and noise, and on the released
    :math:`v`'s; conditioning on the other examples' sampling and noise, each step's
    output given the past is a Gaussian with the target example's contribution
    (norm :math:`\le C`) present with probability :math:`q`, mixed over the target's
    own hidden state, and joint convexity of the Renyi divergence bounds it by the
    subsampled-Gaussian RDP; adaptive composition gives the total.  So the noise on
    :math:`\alpha` (``perturb_dual=True``, the paper) is not needed for privacy;
    ``perturb_dual=False`` uses noise :math:`\sigma C` on :math:`v` only.

    **Dense state.**  :math:`v \in \mathbb{R}^M` is dense, and the noise touches all
    of it every step: a step costs :math:`O(\mathrm{nnz}(X_{\mathcal B}) + M)`
    instead of :math:`O(\mathrm{nnz}(X_{\mathcal B}))`, i.e. an epoch
    :math:`O(\mathrm{nnz}(X) + M N / L)` (Damaskinos et al. (2021), Appendix A.1).  For M = 10^6
    features and N/L = 1000 steps per epoch that is 10^9 Gaussian draws per epoch.
    The primal variant adds noise to :math:`L` coordinates only but reads all
    examples every step.

    **Label constraints** (Appendix A.2): for the hinge and logistic losses
    :math:`y_j\alpha_j` is projected onto [0, 1] (logistic: the open interval,
    numerically [1e-300, 1 - 2^-53]) *before* the update, using only example
    :math:`j`'s label; the stored :math:`\alpha_j` moves by the same :math:`\zeta_j`
    that moves :math:`v`.  The logistic subproblem (8) is minimised exactly
    (safeguarded Newton on :math:`\mathrm{logit}(y_j\alpha_j)`) with or without
    privacy: :math:`\zeta_j` is a deterministic function of example :math:`j` and
    of the released :math:`v`, so the sensitivity is unchanged, and the paper's
    single Newton step from :math:`y_j\alpha_j = 10^{-4}` (Section 3) moves
    :math:`y_j\alpha_j` by only about :math:`10^{-3}` on the first visit.

    **Defaults** (found by comparing with the non-private fit, tests/test_scd.py).
    The updates of Algorithm 1 are small: with :math:`\sigma' = L` a unit-norm
    example with unit residual moves by about :math:`\lambda N/(\lambda N + L)`
    (squared, hinge; a few times more for the logistic loss), i.e. 0.005-0.08 for
    :math:`\lambda = 10^{-4}`, :math:`L = 100` and :math:`N` from
    :math:`5\cdot 10^3` to :math:`3\cdot 10^4`, and :math:`|\zeta_j| \le 1`
    always for the logistic and hinge losses.  The former default :math:`C = 1`
    therefore never scaled anything and only set the noise 10-200 times above the
    updates, so the accumulated noise in :math:`\theta = v/(\lambda N)` (per
    coordinate :math:`\sigma C\sqrt{T}/(\lambda N)`) swamped the model even at
    epsilon = 1000.  Worse, with ``perturb_dual=True`` the noise
    :math:`N(0, 2\sigma^2C^2)` on :math:`\alpha_j` soon leaves the feasible
    interval [0, 1] of :math:`y_j\alpha_j`; the projection then pins the update at
    the boundary (:math:`y_j\alpha_j` at 0 can only increase, at 1 only
    decrease), whatever the margin of example :math:`j`, and the model drifts to
    chance or below.  Hence ``clip="auto"`` (``_auto_clip()``: the first update
    of an example, the step of the paper's Lemma 2 analysis) and
    ``perturb_dual=False``.  :math:`\lambda` is the paper's (Appendix E:
    :math:`\lambda = 10^{-4}`); a private dual fit takes :math:`L = \lceil
    3\sqrt N\rceil` (``_auto_batch``; the paper's grid holds :math:`L = 100`,
    still the batch of the other variants); its 10 epochs are the regressor's default and the classifier's cap:
    the classifier's ``n_epochs="auto"`` (``_auto_epochs``) takes fewer passes
    when :math:`\varepsilon N` is small, because the noise summed over the
    epochs grows with their number while the optimisation error falls only as
    their inverse.
"""

_SCD_DOC_MULTI_CLASS_PARAM = r"""
    multi_class : {"auto", "multinomial", "ovr"}, default="auto"
        More than two classes only.  "multinomial": one softmax model, the
        multinomial dual of Algorithm 1 (Notes, "More than two classes"); it
        needs ``loss="logistic"``, ``variant="dual"`` and ``perturb_dual=False``.
        "ovr": :math:`K` one-vs-rest binary fits.  "auto": "multinomial" where it
        applies, else "ovr".
"""

_SCD_DOC_MULTICLASS = r"""
    **More than two classes** (``DPSCDClassifier`` with :math:`K > 2` labels).
    Rows of ``coef_`` are the classes; ``predict`` takes the largest column of
    ``decision_function``.

    *Multinomial* (``multi_class="multinomial"``, the default for the logistic
    dual fit): one softmax model.  The dual of eq. 1 with the softmax
    cross-entropy :math:`\ell_i(a) = \log\sum_c e^{a_c} - a_{y_i}` has a block
    :math:`\alpha_i \in e_{y_i} - \Delta_K` per example (:math:`\Delta_K` the
    simplex; its conjugate is the negative entropy), the shared matrix
    :math:`V = \sum_i x_i\alpha_i^\top \in \mathbb R^{M\times K}` and
    :math:`\Theta = V/(\lambda N)`.  The block subproblem has no closed form, so
    each example of a batch takes the SDCA step for smooth losses
    (Shalev-Shwartz and Zhang 2013, Section 3):
    :math:`\zeta_i = s(e_{y_i} - \mathrm{softmax}(\Theta^\top x_i) - \alpha_i)`,
    :math:`s = \mu\lambda N/(\mu\lambda N + \sigma')` with :math:`\mu = 2` (the
    softmax loss is :math:`1/2`-smooth); it keeps :math:`\alpha_i` feasible.
    ``epsilon=None`` takes the safe :math:`\sigma' = L` of the binary analysis and
    converges to the multinomial optimum; a private fit, which runs a few epochs
    only, takes :math:`\sigma' = L/10` (``_softmax_step``; chosen on development
    sets, not covered by the convergence bound, and without effect on privacy);
    its ``n_epochs="auto"`` is capped at 20 passes instead of 10 (the number of
    steps :math:`T`, hence the noise multiplier calibrated for the :math:`T`
    steps, follows).  Privacy: the same
    neighbouring relation (add/remove one example, public :math:`N`); the
    updates of a batch are computed independently from the released :math:`V`
    and each :math:`\zeta_i` is scaled to :math:`\|\zeta_i\|_2 \le C`, so adding
    or removing example :math:`k` changes a step's :math:`V` by
    :math:`x_k\zeta_k^\top`, of Frobenius norm at most :math:`C` (Lemma 1 of
    Damaskinos et al. (2021) with a :math:`K`-dimensional block; tested on
    neighbouring datasets).  Mechanism: :math:`N(0, \sigma^2C^2)` on every entry
    of :math:`V` after every step, a Poisson-subsampled Gaussian mechanism of
    rate :math:`q` per step, :math:`T` steps composed in RDP: the binary fit's
    event and noise multiplier whatever :math:`K`.  ``clip="auto"`` is 0.3 times
    the norm of the first update, :math:`0.3\,s\sqrt{1 - 1/K}` (every update has
    norm at most :math:`s\sqrt 2`; ``_auto_clip_softmax``).  ``predict_proba`` is
    the softmax.

    *One-vs-rest* (``multi_class="ovr"``, and "auto" with the hinge loss or the
    primal and sequential variants, whose multinomial forms are not
    implemented): row :math:`c` of ``coef_`` is the binary model of class
    :math:`c` (+1) against the rest (-1), fitted by the chosen variant exactly as
    a binary fit, one class after the other; ``predict_proba`` (logistic loss)
    normalises the :math:`K` sigmoids to sum to 1 (as scikit-learn's
    ``OneVsRestClassifier``).  Every step of every one of the :math:`K` fits is
    the binary variant's (subsampled) Gaussian mechanism with the binary
    sensitivity, so the whole model is :math:`KT` such steps composed
    adaptively in RDP: ``privacy_event_`` is ONE event of :math:`KT` steps and
    :math:`\sigma` is calibrated once for :math:`KT` steps at the requested
    (epsilon, delta).  Equivalently, the :math:`K` updates of one example have
    joint L2 sensitivity :math:`\sqrt K` times the binary one, against
    :math:`\sqrt 2` for the softmax model (whose update is a difference of two
    points of the simplex): the noise multiplier is about :math:`\sqrt K` times
    the binary one, which is why one-vs-rest falls far behind the multinomial
    model and DP-SGD's softmax model as :math:`K` grows (measured in
    :ref:`study_multiclass_dpscd`).
"""

_SCD_DOC_REFS = r"""
    G. Damaskinos, C. Mendler-Duenner, R. Guerraoui, N. Papandreou, T. Parnell.
    Differentially Private Stochastic Coordinate Descent. AAAI 2021 (Damaskinos et al., 2021).
    S. Shalev-Shwartz, T. Zhang. Stochastic Dual Coordinate Ascent Methods for
    Regularized Loss Minimization. JMLR 14, 2013."""


@fill_doc
class DPSCDClassifier(_ClassifierOutputs, ClassifierMixin, _BaseSCD):
    __doc__ = _class_doc(r"""Linear classifier by (differentially private) stochastic
    coordinate descent: DP-SCD, seqDP-SCD, primal DP-SCD and, without ``epsilon``,
    SDCA.

    Minimises eq. 1 of Damaskinos et al. (2021) with the logistic or the hinge loss (L2-regularised
    logistic regression or SVM), labels mapped to :math:`\{-1, +1\}`
    (``classes_[1]`` is +1).  Dual coordinate updates are closed form for the hinge
    loss and an exact one-dimensional (safeguarded Newton) minimisation for
    the logistic loss.  More than two classes: one softmax model (the
    multinomial dual) or one-vs-rest, one privacy event (see Notes).  See the
    module docstring for the objective and the Notes for the privacy analysis.""",
        classifier=True, attrs=_SCD_DOC_ATTRS,
        params=_SCD_DOC_PARAMS.replace(   # after perturb_dual, as in the signature
            "    normalize : ", _SCD_DOC_MULTI_CLASS_PARAM.lstrip("\n") + "    normalize : ", 1),
        notes=_SCD_DOC_NOTES + _SCD_DOC_MULTICLASS, references=_SCD_DOC_REFS + r"""
    C. Ma, V. Smith, M. Jaggi, M. Jordan, P. Richtarik, M. Takac. Adding vs.
    Averaging in Distributed Primal-Dual Optimization. ICML 2015.
    I. Mironov, K. Talwar, L. Zhang. Renyi Differential Privacy of the Sampled
    Gaussian Mechanism. 2019.""", examples=r"""
    >>> import numpy as np
    >>> from dptoolkit.linear_model import DPSCDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 5)); y = (X[:, 0] > 0).astype(int)
    >>> clf = DPSCDClassifier("hinge", epsilon=None, alpha=1e-3, n_epochs=5,
    ...                       random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True""")

    #: The command line's ``--model`` name (dptoolkit._discovery.cli_name).
    _cli_name = "dp-scd"

    _losses = ("logistic", "hinge")
    _parameter_constraints = _linear_dp_constraints(
        _losses, classifier=True, clip=[Options("auto"), None, *POSITIVE],
        n_epochs=_N_EPOCHS, variant=[Options(*_VARIANTS)], perturb_dual=[Boolean()],
        multi_class=[Options(*_MULTI_CLASS)])
    _multi_class = True

    def _multiclass_proba(self, margins):
        """Probabilities over K > 2 classes: the softmax of the multinomial model,
        the normalised sigmoids of one-vs-rest."""
        return (_softmax if getattr(self, "_multinomial", False) else ovr_proba)(margins)

    def __init__(self, loss="logistic", *, epsilon=1.0, delta=1e-5,
                 n_samples_public=None, alpha=1e-4, batch_size="auto", clip="auto",
                 n_epochs="auto", variant="dual", perturb_dual=False, multi_class="auto",
                 normalize="l2", fit_intercept=False, classes=None, random_state=None,
                 accountant=None):
        _store_params(self, locals())


@fill_doc
class DPSCDRegressor(_RegressorOutputs, RegressorMixin, _BaseSCD):
    __doc__ = _class_doc(r"""Ridge regression by (differentially private) stochastic coordinate
    descent: DP-SCD, seqDP-SCD, primal DP-SCD and, without ``epsilon``, SDCA.

    Minimises eq. 1 of Damaskinos et al. (2021) with the squared loss
    :math:`\ell_i(a) = (a - y_i)^2/2`, i.e. scikit-learn's ``Ridge`` with
    ``alpha = lambda * N`` and no intercept on the transformed rows.  Dual coordinate
    updates are closed form.  See the module docstring for the objective and
    :class:`DPSCDClassifier` for the privacy analysis (Notes).""", classifier=False,
        params=_SCD_DOC_PARAMS, attrs=_SCD_DOC_ATTRS, notes=_SCD_DOC_NOTES,
        references=_SCD_DOC_REFS, examples=r"""
    >>> import numpy as np
    >>> from dptoolkit.linear_model import DPSCDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 5)); y = X @ np.ones(5)
    >>> reg = DPSCDRegressor(epsilon=None, alpha=1e-4, batch_size=1, clip=None,
    ...                      n_epochs=30).fit(X, y)
    >>> reg.score(X, y) > 0.9
    True""")

    loss = "squared"
    _losses = ("squared",)
    _parameter_constraints = _linear_dp_constraints(
        _losses, classifier=False, clip=[Options("auto"), None, *POSITIVE],
        n_epochs=_N_EPOCHS, variant=[Options(*_VARIANTS)], perturb_dual=[Boolean()])

    def __init__(self, *, epsilon=1.0, delta=1e-5, n_samples_public=None, alpha=1e-4,
                 batch_size="auto", clip="auto", n_epochs=10, variant="dual",
                 perturb_dual=False, normalize="l2", fit_intercept=False,
                 random_state=None, accountant=None):
        _store_params(self, locals())
