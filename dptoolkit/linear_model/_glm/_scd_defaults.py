r"""The "auto" rules of DP-SCD (:mod:`dptoolkit.linear_model._glm._scd`): the clip
bound, the mini-batch size and the number of epochs, each a function of public
quantities (N, epsilon, the loss, lambda) only, never of the data."""
import math

from . import _scd_fast

#: (kernel option exact=False only, not used by the estimators) yalpha is
#: projected onto [box, 1 - box] before the single Newton step of the
#: private logistic update (the authors' implementation uses 1e-4).
_LOGISTIC_BOX = 1e-4


def _auto_clip(p, *, loss, lam, N, sigma_p):
    r"""Scaling bound :math:`C` for ``clip="auto"`` (public constants only).

    For a dual variant (``sigma_p`` = :math:`\sigma'` of eq. 8: :math:`L` for
    Algorithm 1, 1 for Algorithm 3), :math:`C = |\zeta^0|`, the unscaled minimiser
    of subproblem (8) for an example with :math:`\|x_j\| = 1`, :math:`y_j = 1`,
    at :math:`\alpha_j = 0` and :math:`v = 0` -- the first update of an example at
    the start of training:

    * squared loss: :math:`\lambda N/(\lambda N + \sigma')`;
    * hinge loss: :math:`\min(1, \lambda N/\sigma')`;
    * logistic loss: the root :math:`z` of :math:`\log\frac{z}{1-z} +
      \sigma' z/(\lambda N) = 0`, about :math:`W(\sigma'/\lambda N)\,\lambda
      N/\sigma'` (:math:`W` Lambert's function) for :math:`\sigma' \gg
      \lambda N`.

    This is also the step the convergence analysis takes (Damaskinos et al. (2021), proof of
    Lemma 2, Appendix D.1): :math:`\zeta_j = s(u_j - \alpha_j)` with
    :math:`s = \mu\lambda N/(\mu\lambda N + L)` and :math:`|u_j - \alpha_j| \le 1`
    (:math:`1/\mu`-smooth losses: :math:`\mu = 1` squared, 4 logistic, for which
    :math:`4\lambda N/(4\lambda N + L)` is of the order of the root above: 0.0208
    against 0.0205 for :math:`\lambda N = 0.53`, :math:`L = 100`, and 0.115 against
    0.080 for :math:`\lambda N = 3.26`).
    Later updates are mostly smaller (the dual residuals shrink), so Step 8 of
    Algorithm 1 seldom binds (the paper's :math:`\kappa \approx 0` in eq. 10)
    while the noise, proportional to :math:`C`, matches the size of the updates.
    A fixed :math:`C = 1` is far larger: for the logistic and hinge losses
    :math:`|\zeta_j| \le 1` always, so it never scales anything, and with
    :math:`\lambda = 10^{-4}`, :math:`L = 100` and :math:`N \approx 10^4` the
    noise is 30-100 times the updates (the cause of the chance-level accuracy of
    the earlier default, see tests/test_scd.py).  With ``perturb_dual=False`` the
    noise added to :math:`\theta = v/(\lambda N)` over :math:`T` steps then has
    per-coordinate standard deviation :math:`\sigma C\sqrt{T}/(\lambda N)`, about
    :math:`\sigma\sqrt{T}/(\lambda N + \sigma')` for the squared and hinge losses.
    For the regressor this assumes targets of order 1 (scale ``y`` by a public
    bound, or pass ``clip``).  For the primal variant (Algorithm 2) the update size
    depends on column statistics of the data, and "auto" is 1.  Without privacy
    "auto" means no scaling (SDCA).

    Parameters
    ----------
    p : dict
        Checked parameters (``clip`` and ``private`` are read).
    loss : {"squared", "logistic", "hinge"}
        Loss of the fit.
    lam : float
        :math:`\lambda`.
    N : int
        The public :math:`N` of the fit.
    sigma_p : float or None
        :math:`\sigma'` of the dual subproblem; None for the primal variant.

    Returns
    -------
    float
        :math:`C` (``math.inf`` for no scaling).
    """
    if p.clip != "auto":
        return p.clip
    if not p.private:
        return math.inf
    if sigma_p is None:
        return 1.0
    return abs(_scd_fast.dual_delta(_scd_fast.LOSS_CODES[loss], 0.0, 1.0, 0.0, 1.0,
                                    float(sigma_p), lam * N, True, _LOGISTIC_BOX))


#: Epochs of ``n_epochs="auto"``: ``sqrt(epsilon N L) / _EPOCHS_PER_ROOT``, in
#: [1, _MAX_AUTO_EPOCHS] (in [1, _SOFTMAX_MAX_AUTO_EPOCHS] for the multinomial model).
_EPOCHS_PER_ROOT = 180.0
_MAX_AUTO_EPOCHS = 10.0
#: The multinomial model's cap: DP-SGD's default passes (docs/studies/multiclass.rst,
#: "DP-SCD for K classes": its accuracy still rises past 10 passes where the rule
#: asks for them).
_SOFTMAX_MAX_AUTO_EPOCHS = 20.0
#: Mini-batch of ``batch_size="auto"`` for a private dual fit:
#: ``ceil(_BATCH_PER_ROOT sqrt(N))``, in [100, min(_MAX_AUTO_BATCH, N)] (the cap is
#: the end of the range studied in :ref:`study_dpscd`).
_BATCH_PER_ROOT = 3.0
_MAX_AUTO_BATCH = 1000


def _auto_batch(batch_size, p, N, variant):
    r"""Mini-batch size :math:`L` of ``batch_size="auto"`` (public constants only).

    A private dual fit (Algorithm 1) takes :math:`L = \lceil 3\sqrt N\rceil`, at
    least 100 and at most 1,000 and :math:`N`; every other fit 100 (at most the limit,
    ``_BaseLinearDP._batch``).  Larger Poisson batches make the subsampled Gaussian
    mechanism cheaper per example (the noise multiplier grows more slowly than
    :math:`q`; De et al. 2022), while the dual subproblem with :math:`\sigma' = L`
    damps every update by :math:`1/L` (``_auto_epochs``).  The constant was
    chosen on the development sets (:ref:`study_dpscd`).
    """
    if not (isinstance(batch_size, str) and p.private and variant == "dual"):
        return batch_size
    return int(min(max(100, math.ceil(_BATCH_PER_ROOT * math.sqrt(N))), _MAX_AUTO_BATCH, N))


def _auto_epochs(p, N, L, *, cap=_MAX_AUTO_EPOCHS):
    r"""Number of passes for ``n_epochs="auto"`` (public constants only).

    Poisson-subsampled Gaussian steps at rate :math:`q` need, for a fixed
    :math:`(\varepsilon, \delta)` and :math:`q\sqrt T` small, a noise multiplier
    :math:`\sigma \approx c\, q\sqrt{T}/\varepsilon` (Abadi et al. 2016,
    Theorem 1), so the noise summed into :math:`v` over :math:`T = E/q` steps
    has standard deviation :math:`\sigma C\sqrt T \propto E/\varepsilon`,
    against a signal of :math:`N` examples: relative noise
    :math:`\propto E/(\varepsilon N)`.  The optimisation error after
    :math:`E` epochs of mini-batch dual coordinate ascent with the safe
    :math:`\sigma' = L` falls as :math:`L/E` (each of the :math:`L` updates of a
    step is damped by :math:`1/\sigma'`: Takac, Bijral, Richtarik and Srebro
    2013, Theorem 1, whose epoch count grows linearly with :math:`\beta = L`
    when :math:`L \gg \lambda N`).  Their sum is smallest at
    :math:`E \propto \sqrt{\varepsilon N L}`: :math:`E = \sqrt{\varepsilon N
    L}/180`, in [1, ``cap``]; the constant was chosen on the development set
    (:ref:`study_dpscd`).  ``cap`` bounds the work: 10 for the binary and
    one-vs-rest fits, 20 for the multinomial model (``_SOFTMAX_MAX_AUTO_EPOCHS``,
    the passes of DP-SGD's default; where the rule asks for more than 10 passes
    the multinomial fit still gains from them, :ref:`study_multiclass_dpscd`).
    The non-private fit (SDCA) uses 10.
    """
    if p.n_epochs != "auto":
        return p.n_epochs
    if not p.private:
        return 10.0
    return min(max(math.sqrt(p.epsilon * N * L) / _EPOCHS_PER_ROOT, 1.0), cap)


# --------------------------------------------------------------------------- DP-SCD


#: Strong convexity of the conjugate of the softmax cross-entropy: the loss
#: :math:`\log\sum_c e^{a_c} - a_y` has Hessian :math:`\mathrm{diag}(p) - pp^\top`,
#: whose largest eigenvalue is at most 1/2: the loss is (1/2)-smooth and its
#: conjugate 2-strongly convex.
_SOFTMAX_MU = 2.0


#: sigma' of a private multinomial fit: L / _SOFTMAX_PRIVATE_DAMPING (and the
#: clip a fraction _SOFTMAX_CLIP_FRACTION of the first update), chosen on the
#: development sets (docs/studies/multiclass.rst, "DP-SCD for K classes").
_SOFTMAX_PRIVATE_DAMPING = 10.0
_SOFTMAX_CLIP_FRACTION = 0.3


def _softmax_step(lam, N, L, private=False):
    r"""Step :math:`s` of the multinomial dual update (public constants only).

    The mini-batch SDCA step for a :math:`(1/\mu)`-smooth loss and unit-norm rows,
    :math:`s = \mu\lambda N/(\mu\lambda N + \sigma')` with :math:`\mu = 2` for the
    softmax cross-entropy (Shalev-Shwartz and Zhang 2013, the update
    :math:`\Delta\alpha_i = s(u_i - \alpha_i)` of their Section 3 for smooth
    losses).  Without privacy :math:`\sigma' = L`, the value that is safe for
    :math:`L` independent updates whatever the data (Takac, Bijral, Richtarik and
    Srebro 2013; the step of the binary analysis of ``_auto_clip``); the fit then
    converges to the multinomial optimum.  A private fit runs a few epochs only,
    and at :math:`\sigma' = L` it stays far from the optimum (the model is then
    close to the first step's noisy class means), so it takes :math:`\sigma' =
    L/10`.  Privacy does not depend on :math:`s` (the clip bounds every update);
    only convergence does, and the smaller damping is not covered by the safe
    bound."""
    sigma_p = L / _SOFTMAX_PRIVATE_DAMPING if private else L
    return _SOFTMAX_MU * lam * N / (_SOFTMAX_MU * lam * N + sigma_p)


def _auto_clip_softmax(p, *, step, n_classes):
    r"""Scaling bound :math:`C` of ``clip="auto"`` for the multinomial dual fit.

    :math:`C = 0.3\,s\sqrt{1 - 1/K}`: 0.3 times the norm of the first update of
    an example (at :math:`\alpha_i = 0`, :math:`V = 0`, so :math:`p_i` uniform,
    :math:`s\|e_y - \mathbf 1/K\|_2 = s\sqrt{1 - 1/K}`).  Every update has norm at
    most :math:`s\sqrt 2` (a difference of two points of the simplex).  With the
    private step (``_softmax_step``) the scaling binds on most updates early in
    the fit, which bounds the noise while the larger step moves the model
    further.  Without privacy "auto" means no scaling."""
    if p.clip != "auto":
        return p.clip
    if not p.private:
        return math.inf
    return _SOFTMAX_CLIP_FRACTION * step * math.sqrt(1.0 - 1.0 / n_classes)
