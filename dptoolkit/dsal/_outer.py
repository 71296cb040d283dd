r"""The DSAL outer loop (Bao et al., IJCAI 2022, Algorithm 1): step-size control,
one compiled inner epoch, screening between epochs (:func:`solve`).
"""
import time

import numpy as np

from . import _prox_fast
from ._problem import ActiveProblem, GAMMA, block_opnorms
from ._screening import Evaluation, drop_blocks, screen


#: Default step size factor: step = STEP_FACTOR * gamma / L_max, with
#: L_max = max_i ||x_{i,A}||^2 (see :func:`default_step`).
STEP_FACTOR = 1.0


class StepControl:
    """Safeguard of the step size between inner loops (not in the paper).

    :meth:`accept` is called with the objective before and after an inner loop
    and the duality gap before it.  SGD (Algorithm 1): any increase undoes the
    loop and halves the step, which is its decreasing step schedule.  SVRG /
    SAGA: the objective is not monotone along the iterations, so an inner loop
    is undone (and the step halved) only when the objective rose by more than
    the certified suboptimality of its starting point (its duality gap), or by
    more than 0.1% when that gap is larger; and the step is halved
    (keeping the result) when the objective rose in 5 of the last 10 loops, the
    sign of a step too large for variance reduction to work (noisy
    oscillation without divergence).

    Parameters
    ----------
    method : {"sgd", "svrg", "saga"}

    Attributes
    ----------
    scale : float
        Factor of the base step (1, halved at every halving).
    n_halvings : int
        Halvings so far.
    """

    WINDOW, MAX_RISES, MAX_SLACK = 10, 5, 1e-3

    def __init__(self, method):
        self.method = method
        self.scale = 1.0
        self.n_halvings = 0
        self.rises = []

    def _halve(self):
        self.scale *= 0.5
        self.n_halvings += 1
        self.rises = []

    def accept(self, primal_old, gap_old, primal_new):
        """Record one inner loop; False when it must be undone.

        Parameters
        ----------
        primal_old, gap_old : float
            Objective and duality gap before the loop.
        primal_new : float
            Objective after it (may be non-finite).

        Returns
        -------
        bool
            True: keep the new point.  False: go back to the old point (the
            step has been halved).
        """
        slack = 0.0 if self.method == "sgd" else min(max(gap_old, 0.0),
                                                       self.MAX_SLACK * abs(primal_old))
        if not np.isfinite(primal_new) or primal_new > primal_old + slack:
            self._halve()
            return False
        if self.method != "sgd":
            self.rises.append(primal_new > primal_old + 1e-14 * abs(primal_old))
            self.rises = self.rises[-self.WINDOW:]
            if sum(self.rises) >= self.MAX_RISES:
                self._halve()
        return True


def default_step(l_max, loss, step_size=None):
    """Base step of an inner loop: ``step_size``, or STEP_FACTOR * gamma / L.

    Parameters
    ----------
    l_max : float
        Smoothness constant of the sampling on the active set
        (``ActiveProblem.l_max``).
    loss : {"squared", "logistic"}
    step_size : float or None, default=None
        A user step, returned unchanged.

    Returns
    -------
    float
        Before the :class:`StepControl` scale.
    """
    if step_size is not None:
        return step_size
    return STEP_FACTOR * GAMMA[loss] / max(l_max, 1e-300)


def inner_epoch(prob, y, w, mem, gbar, *, loss, penalty, method, step, alpha, n_steps,
                generators, dblock=None):
    """Run ``n_steps`` sparse proximal stochastic steps (the compiled kernel).

    Each step samples a row :math:`i` (the problem's sampling), forms the
    estimate of eq. 4-5 (SVRG), plain SGD or SAGA on the support of
    :math:`x_i` in the active set, and applies the block-reweighted sparse
    proximal operator of eq. 6 with weights :math:`d_B`.  The threads (one per
    generator) update ``w`` lock-free; runs without the GIL.

    Parameters
    ----------
    prob : ActiveProblem
    y : ndarray of shape (prob.n,)
    w : ndarray of shape (prob.n_features,)
        Updated in place.
    mem : ndarray of shape (prob.n,)
        Per-row derivatives: the snapshot's :math:`f'(z)` (SVRG), the SAGA table
        (updated in place), zeros (SGD).
    gbar : ndarray of shape (prob.n_features,)
        Full gradient at the snapshot (SVRG), the SAGA average (updated in
        place), zeros (SGD).
    loss : {"squared", "logistic"}
    penalty : {"l1", "group_l1"}
    method : {"sgd", "svrg", "saga"}
    step, alpha : float
    n_steps : int
        Steps, all threads together.
    generators : list of numpy.random.Generator
        One per thread.
    dblock : ndarray of shape (n_active_blocks,), default=None
        Block weights; None uses ``prob.dblock`` (a distributed worker passes
        those of the workers' joint sampling).
    """
    _prox_fast.sparse_prox_epoch(
        prob.csr.data, prob.csr.indices, prob.csr.indptr, y, w, mem, gbar,
        prob.dblock if dblock is None else dblock, prob.block_of, prob.block_ptr,
        _prox_fast.LOSS_CODES[loss], _prox_fast.PENALTY_CODES[penalty],
        _prox_fast.METHOD_CODES[method], float(step), float(alpha), int(n_steps),
        generators, **prob.sampling_kwargs())


def solve(Xr, Xc, y, alpha, *, loss, penalty, blocks, method, screening, n_jobs,
          step_size, n_inner, tol, max_outer, generators, sampling="uniform", w_init=None):
    """Run the outer loop of DSAL (Algorithm 2) or of a baseline.

    Every outer iteration: evaluate at the current point (full gradient, dual
    point, gap), stop if the relative gap is <= tol, screen, run ``n_inner``
    stochastic steps on the active set.  Safeguard (not in the paper):
    :class:`StepControl`.

    Parameters
    ----------
    Xr, Xc : scipy.sparse.csr_array, scipy.sparse.csc_array
        Canonical matrices with columns in block order (:func:`prepare_problem`).
    y : ndarray of shape (n_samples,)
        Solver targets (:func:`prepare_targets`).
    alpha : float
    loss : {"squared", "logistic"}
    penalty : {"l1", "group_l1"}
    blocks : Blocks
    method : {"svrg", "sgd", "saga"}
        DSAL / ProxSVRG, DSAL-Naive, ProxASAGA.
    screening : bool
    n_jobs : int
    step_size : float or None
        None: :func:`default_step`.
    n_inner : int
    tol : float
        Relative duality gap.
    max_outer : int
    generators : list of numpy.random.Generator
        One per thread.
    sampling : {"uniform", "importance"}, default="uniform"
    w_init : ndarray of shape (n_features,), default=None
        Starting point with features in block order (``coef[blocks.perm]``);
        None starts from zero.

    Returns
    -------
    dict
        ``w`` (compact solution), ``problem`` (final :class:`ActiveProblem`),
        ``evaluation`` (at ``w``), ``n_iter``, ``converged``, ``times``,
        ``primals``, ``gaps``, ``sizes`` (per evaluation), ``active_sizes`` (per
        outer iteration), ``step_scale``, ``n_halvings``.
    """
    n = y.size
    t_start = time.perf_counter()
    gamma = GAMMA[loss]
    opnorm = block_opnorms(Xc, blocks.ptr, penalty) if screening else None

    prob = ActiveProblem.full(Xr, Xc, blocks, penalty, sampling)
    w = np.zeros(prob.n_features) if w_init is None else np.array(w_init, dtype=np.float64)
    if w_init is not None:
        # a block no row meets is zero at every optimum, and no step ever touches
        # it (d_B = 0): a warm start must not carry a value there
        w[np.repeat(prob.block_nnz == 0, np.diff(prob.block_ptr))] = 0.0
    ev = Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
    times, primals, gaps, sizes_hist = [], [], [], []
    active_sizes = []

    def record():
        times.append(time.perf_counter() - t_start)
        primals.append(ev.primal)
        gaps.append(ev.gap)
        sizes_hist.append(prob.n_features)

    record()
    control = StepControl(method)
    n_iter = 0
    converged = False
    mem = gbar = None
    if method == "saga":
        mem, gbar = ev.fp.copy(), ev.g.copy()
    for _ in range(max_outer + 1):
        keep = (screen(ev, prob, opnorm, alpha, n, gamma, ev.gap <= tol * abs(ev.primal))
                if screening else None)
        if keep is not None:
            prob, w, keep_feat, moved = drop_blocks(prob, w, keep)
            if moved:  # removed coordinates were non-zero: the point changed
                ev = Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
            else:
                ev = ev.restrict(keep_feat, keep)
        if ev.gap <= tol * abs(ev.primal):
            converged = True
            break
        if n_iter == max_outer:
            break
        active_sizes.append(prob.n_features)
        if prob.n_features == 0:
            n_iter += 1
            ev = Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
            record()
            continue
        step = default_step(prob.l_max, loss, step_size) * control.scale
        w0, ev0 = w.copy(), ev
        if method == "svrg":
            mem, gbar = ev.fp.copy(), ev.g.copy()
        elif method == "sgd":
            mem, gbar = np.zeros(n), np.zeros(prob.n_features)
        inner_epoch(prob, y, w, mem, gbar, loss=loss, penalty=penalty, method=method,
                    step=step, alpha=alpha, n_steps=n_inner, generators=generators)
        n_iter += 1
        ev = Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
        if not control.accept(ev0.primal, ev0.gap, ev.primal):
            w, ev = w0, ev0
            if method == "saga":
                mem, gbar = ev.fp.copy(), ev.g.copy()
        record()
    return {
        "w": w, "problem": prob, "evaluation": ev, "n_iter": n_iter,
        "converged": converged, "times": np.array(times), "primals": np.array(primals),
        "gaps": np.array(gaps), "sizes": np.array(sizes_hist, dtype=np.int64),
        "active_sizes": np.array(active_sizes, dtype=np.int64),
        "step_scale": control.scale, "n_halvings": control.n_halvings,
    }
