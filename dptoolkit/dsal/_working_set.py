r"""Working sets with dual extrapolation (Massias, Gramfort and Salmon, ICML 2018;
Massias et al., JMLR 2020), the default solver of small penalties
(:func:`solve_working_set`); the gap it reports is that of the full problem.
"""
import time

import numpy as np
import scipy.sparse as sp

from . import _prox_fast
from ._outer import solve
from ._problem import Blocks, COMPILED_LOOP_MAX_NNZ, Compressed, GAMMA, _MIN_NNZ_PER_THREAD, _canonical, block_opnorms
from ._screening import _SCREEN_MARGIN, _dual_scale, block_norms, conjugate_values, loss_derivative, loss_values


#: First working-set size, in blocks (Massias, Gramfort, Salmon 2018, ``p0``).
WS_P0 = 10


#: Residuals kept for the Anderson extrapolation of the dual point (``K`` of
#: Massias et al. 2018, Section 3; 2020, Section 3).
WS_K = 5


#: Coordinate-descent epochs between two checks of the sub-problem's gap
#: (the ``f`` of Massias et al. 2018, Algorithm 3).
WS_CHECK = 10


#: A sub-problem is solved to a duality gap of WS_TOL_RATIO times the gap of
#: the full problem at its start (Massias et al. 2018, Algorithm 4: 0.3).
WS_TOL_RATIO = 0.3


#: Cap on the coordinate-descent epochs of one sub-problem.
WS_MAX_EPOCHS = 50_000


def extrapolate_residuals(residuals):
    r"""Anderson extrapolation of the last :math:`K + 1` residual vectors.

    With :math:`r^{(0)}, \dots, r^{(K)}` the residuals (here :math:`f'(Xw)`) of
    the iterates at every :data:`WS_CHECK`-th epoch and
    :math:`U = [r^{(1)} - r^{(0)}, \dots, r^{(K)} - r^{(K-1)}]`, solve
    :math:`(U^\top U) z = \mathbf{1}`, :math:`c = z / \mathbf{1}^\top z` and
    return :math:`r_{\text{accel}} = \sum_{k=1}^K c_k r^{(k)}` (Massias,
    Gramfort, Salmon, ICML 2018, eq. 9-10 and Proposition 5; Massias, Vaiter,
    Gramfort, Salmon, JMLR 2020, Section 3).  Once the support is identified,
    coordinate descent iterates a linear map on the residuals, whose limit the
    extrapolation estimates; the point is then rescaled into the dual feasible
    set like the plain residual (:func:`dual_objective`), so the gap it gives is
    a valid certificate whatever its quality.

    Parameters
    ----------
    residuals : sequence of ndarray of shape (n_samples,)
        :math:`K + 1 \ge 2` residual vectors, oldest first.

    Returns
    -------
    r_accel : ndarray of shape (n_samples,) or None
        None when :math:`U^\top U` is singular (e.g. converged iterates).
    c : ndarray of shape (K,) or None
        The weights, so that any linear image of ``r_accel`` (e.g.
        :math:`X^\top r_{\text{accel}}`) is the same combination of the images
        of ``residuals[1:]``.
    """
    R = np.asarray(residuals, dtype=np.float64)
    U = np.diff(R, axis=0)
    try:
        z = np.linalg.solve(U @ U.T, np.ones(U.shape[0]))
    except np.linalg.LinAlgError:
        return None, None
    s = z.sum()
    if not np.all(np.isfinite(z)) or s == 0.0:
        return None, None
    c = z / s
    return c @ R[1:], c


def dual_objective(v, block_dual, y, alpha, loss):
    r"""Dual objective of the point built from ``v`` by rescaling into feasibility.

    The dual point is :math:`\theta = -c\,v/(n\alpha)` with
    :math:`c = \alpha / \max(\alpha, \Omega^D(X^\top v)/n)`, so that
    :math:`\Omega^D(X^\top\theta) \le 1` (module docstring, with :math:`v` in the
    place of :math:`f'(Xw)`); its objective is
    :math:`D(\theta) = -\frac1n\sum_i f_i^*(c\,v_i)`.

    Parameters
    ----------
    v : ndarray of shape (n_samples,)
        A residual vector (:math:`f'(Xw)` or an extrapolation of several).
    block_dual : ndarray of shape (n_blocks,)
        :math:`\|X_B^\top v\|_* / n` over the blocks the constraint is taken on
        (all of them for the full problem).
    y : ndarray of shape (n_samples,)
    alpha : float
    loss : {"squared", "logistic"}

    Returns
    -------
    dual : float
        :math:`D(\theta)`; ``-inf`` when :math:`c\,v` is outside the domain of
        :math:`f^*` (logistic: :math:`-c v_i y_i \notin [0, 1]`, which an
        extrapolated vector can be) or not finite.
    c : float
        The scale.
    """
    n = y.size
    dual_norm = float(block_dual.max()) if block_dual.size else 0.0
    c = _dual_scale(dual_norm, alpha)
    if not np.isfinite(c):
        return -np.inf, c
    if loss == "logistic":
        s = -c * v * y
        if np.any(s < 0.0) or np.any(s > 1.0):
            return -np.inf, c
    dual = -float(conjugate_values(v, y, loss, c).sum()) / n
    return (dual if np.isfinite(dual) else -np.inf), c


def _transpose_matvec(csc, v, n_jobs):
    """X^T v for a Compressed CSC matrix, threaded above 50,000 non-zeros per thread."""
    n_jobs = max(1, min(n_jobs, csc.nnz // _MIN_NNZ_PER_THREAD))
    out = np.empty(csc.indptr.size - 1)
    _prox_fast.compressed_matvec(csc.data, csc.indices, csc.indptr, v, out, 1.0, n_jobs)
    return out


def working_set_columns(csc, feats):
    """The columns ``feats`` of a CSC matrix as a compact CSC matrix.

    Parameters
    ----------
    csc : Compressed
        CSC arrays of shape (n_samples, n_features).
    feats : ndarray of int64 of shape (m,)
        Column indices, in the order wanted.

    Returns
    -------
    Compressed
        CSC arrays of shape (n_samples, m), row indices unchanged.
    """
    starts = csc.indptr[feats]
    lens = csc.indptr[feats + 1] - starts
    ptr = np.zeros(feats.size + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    idx = np.repeat(starts - ptr[:-1], lens) + np.arange(ptr[-1], dtype=np.int64)
    return Compressed(csc.data[idx], csc.indices[idx], ptr)


def solve_subproblem(sub, y, w, z, lipschitz, block_ptr, alpha, *, loss, penalty, tol,
                     max_epochs=WS_MAX_EPOCHS, accelerate=True, cycle=True):
    r"""Solve the problem restricted to a working set by proximal coordinate descent.

    Runs the nogil kernel ``cd_epochs`` (cyclic proximal coordinate descent,
    step :math:`1/L_B` per block) in rounds of :data:`WS_CHECK` epochs.  After
    each round it evaluates the sub-problem's duality gap with the best of two
    dual points, both rescaled into the sub-problem's feasible set
    (:func:`dual_objective`): the residual :math:`f'(z)` and the Anderson
    extrapolation of the last :data:`WS_K` + 1 residuals
    (:func:`extrapolate_residuals`), and stops once the gap is <= ``tol``
    (Massias, Gramfort, Salmon, ICML 2018, Algorithm 3).  The extrapolated
    :math:`X_W^\top r_{\text{accel}}` is the same combination of the stored
    :math:`X_W^\top r^{(k)}`, so the extrapolation costs no pass over the data.

    ``accelerate=True`` also extrapolates the primal iterates: after every
    :data:`WS_K` + 1 epochs, the Anderson combination of those iterates
    replaces the current one if it has a smaller objective (Bertrand and
    Massias, *Anderson acceleration of coordinate descent*, AISTATS 2021,
    Algorithm 2); its margins are the same combination of the stored margins.
    The test keeps the objective monotone, so convergence is that of
    coordinate descent.

    Parameters
    ----------
    sub : Compressed
        CSC arrays of the working-set columns (:func:`working_set_columns`).
    y : ndarray of shape (n_samples,)
    w : ndarray of shape (m,)
        Coefficients of the working set, updated in place.
    z : ndarray of shape (n_samples,)
        Margins :math:`Xw` (every coefficient outside the working set is
        zero), updated in place.
    lipschitz : ndarray of shape (n_ws_blocks,)
        :math:`\|X_B\|_2^2/(\gamma n)` per block of the working set.
    block_ptr : ndarray of int64 of shape (n_ws_blocks + 1,)
    alpha : float
    loss : {"squared", "logistic"}
    penalty : {"l1", "group_l1"}
    tol : float
        Absolute duality gap of the sub-problem to reach.
    max_epochs : int, default=WS_MAX_EPOCHS
    accelerate : bool, default=True
        Anderson extrapolation of the primal iterates.
    cycle : bool, default=True
        Active set cycling: the first epoch of every round of :data:`WS_CHECK`
        visits every block of the working set, the others only the blocks that
        were non-zero after it (Friedman, Hastie and Tibshirani, *Regularization
        paths for generalized linear models via coordinate descent*, J. Stat.
        Softw. 2010, Section 2.6).  The stopping test is over the whole working
        set either way.

    Returns
    -------
    v : ndarray of shape (n_samples,)
        The residual vector (plain or extrapolated) whose rescaling gave the
        best sub-problem dual objective at the last check; the caller rescales
        it for the full problem.
    n_epochs : int
        Epochs run.
    gap : float
        Sub-problem duality gap at the last check.
    """
    n = y.size
    loss_code = _prox_fast.LOSS_CODES[loss]
    pen_code = _prox_fast.PENALTY_CODES[penalty]

    def objective(zz, ww):
        return (float(loss_values(zz, y, loss).sum()) / n
                + alpha * float(block_norms(ww, block_ptr, penalty).sum()))

    residuals, images = [], []
    iterates, margins = [], []
    epochs = 0
    v, gap = None, np.inf
    with np.errstate(over="ignore", invalid="ignore"):
        order = None
        while epochs < max_epochs:
            # a full pass at the start of every round of WS_CHECK epochs, passes
            # over the non-zero blocks in between (active set cycling)
            full = not cycle or epochs % WS_CHECK == 0
            _prox_fast.cd_epochs(sub.data, sub.indices, sub.indptr, y, w, z, lipschitz,
                                 block_ptr, loss_code, pen_code, float(alpha), 1,
                                 None if full else order)
            if full and cycle:
                order = np.flatnonzero(block_norms(w, block_ptr, penalty))
            epochs += 1
            if accelerate:
                iterates.append(w.copy())
                margins.append(z.copy())
                if len(iterates) == WS_K + 1:
                    w_acc, c = extrapolate_residuals(iterates)
                    if w_acc is not None:
                        # z = X_W w is linear in w: the same combination, no pass
                        z_acc = c @ np.asarray(margins[1:])
                        if objective(z_acc, w_acc) < objective(z, w):
                            w[:] = w_acc
                            z[:] = z_acc
                    iterates, margins = [], []
            if epochs % WS_CHECK and epochs < max_epochs:
                continue
            fp = loss_derivative(z, y, loss)
            primal = objective(z, w)
            gw = _transpose_matvec(sub, fp, 1) / n
            residuals.append(fp)
            images.append(gw)
            del residuals[:-(WS_K + 1)], images[:-(WS_K + 1)]
            best, v = dual_objective(fp, block_norms(gw, block_ptr, penalty), y, alpha,
                                     loss)[0], fp
            if len(residuals) == WS_K + 1:
                r_acc, c = extrapolate_residuals(residuals)
                if r_acc is not None:
                    g_acc = c @ np.asarray(images[1:])
                    d_acc = dual_objective(r_acc, block_norms(g_acc, block_ptr, penalty),
                                           y, alpha, loss)[0]
                    if d_acc > best:
                        best, v = d_acc, r_acc
            gap = primal - best
            if gap <= tol:
                break
    return v, epochs, gap


def _svrg_subproblem(sub, y, w, block_ptr, alpha, loss, penalty, rel_tol, n_jobs,
                     generators, max_epochs, sampling):
    """Sub-problem by the screened SVRG loop of :func:`solve`."""
    m = w.size
    Xc = sp.csc_array((sub.data, sub.indices, sub.indptr), shape=(y.size, m))
    Xr = _canonical(Xc.tocsr(), "csr")
    blocks = Blocks(np.arange(m, dtype=np.int64), block_ptr)
    res = solve(Xr, _canonical(Xc, "csc"), y, alpha, loss=loss, penalty=penalty,
                blocks=blocks, method="svrg", screening=True, n_jobs=n_jobs, step_size=None,
                n_inner=y.size, tol=rel_tol, max_outer=max_epochs, generators=generators,
                sampling=sampling, w_init=w)
    w[:] = 0.0
    w[res["problem"].feat] = res["w"]
    return res["evaluation"].fp, res["n_iter"]


def solve_working_set(Xc, y, alpha, *, loss, penalty, blocks, screening, n_jobs, tol,
                      max_outer, w_init=None, p0=WS_P0, max_epochs=WS_MAX_EPOCHS,
                      accelerate=True, cycle=True, subsolver="cd", generators=None,
                      sampling="importance", compiled_loop=None):
    r"""DSAL with working sets and dual extrapolation (small penalties).

    The outer loop of Massias, Gramfort and Salmon (*Celer: a fast solver for
    the Lasso with dual extrapolation*, ICML 2018, Algorithm 4) and Massias,
    Vaiter, Gramfort and Salmon (*Dual extrapolation for sparse GLMs*, JMLR 2020,
    Algorithm 2), on top of the Gap Safe screening of DSAL (module docstring):

    1. *Certificate.*  Over **all** features (the full problem, not the working
       set), rescale into the dual feasible set the residual :math:`f'(Xw)` and
       the best residual of the last sub-problem (plain or extrapolated,
       :func:`solve_subproblem`); keep the dual point of largest objective among
       them and the best one so far (the dual problem never changes, so a
       feasible point stays feasible).  Gap :math:`G = P(w) - D(\theta)`; stop
       when :math:`G \le` ``tol`` :math:`P(w)`.  The gap returned is this
       full-problem gap, a certificate :math:`P(w) - P^* \le G`.
    2. *Screening* (``screening=True``): the Gap Safe sphere test at that dual
       point removes blocks for good (:func:`gap_safe_keep`); a removed block
       that was non-zero is set to zero.
    3. *Working set.*  Priority of block :math:`B` is its distance to the dual
       constraint, :math:`d_B = (1 - \|X_B^\top\theta\|_*)/\|X_B\|_2` (the
       distance from :math:`\theta` to the hyperplane
       :math:`|x_j^\top\theta| = 1` for l1), with :math:`\theta` the better
       of this iteration's two dual points, and :math:`-\infty` on the support
       of :math:`w`.  The working set is the ``ws_size`` blocks of smallest
       priority, ``ws_size = max(p0, 2 |supp(w)|, previous ws_size)`` (at most
       the blocks left): it grows geometrically while the support does, never
       shrinks, and doubles when it would be the previous set again.
    4. *Sub-problem*: :func:`solve_subproblem` to a gap of
       :data:`WS_TOL_RATIO` :math:`G` (coordinate descent in a nogil kernel
       with its own dual extrapolation), or by DSAL's screened SVRG loop
       (``subsolver="svrg"``); which is faster depends on the data
       (docs/studies/dsal.rst).

    Parameters
    ----------
    Xc : scipy.sparse.csc_array of shape (n_samples, n_features)
        Canonical matrix with columns in block order (:func:`prepare_problem`,
        which can skip the CSR matrix: ``csr=False``).
    y : ndarray of shape (n_samples,)
        Solver targets (:func:`prepare_targets`).
    alpha : float
    loss : {"squared", "logistic"}
    penalty : {"l1", "group_l1"}
    blocks : Blocks
    screening : bool
    n_jobs : int
        Threads of the full-gradient passes.
    tol : float
        Relative duality gap of the full problem.
    max_outer : int
        Maximum number of working sets (sub-problems).
    w_init : ndarray of shape (n_features,), default=None
        Start in block order; None starts from zero.
    p0 : int, default=WS_P0
        First working-set size, in blocks.
    max_epochs : int, default=WS_MAX_EPOCHS
        Coordinate-descent epochs per sub-problem at most.
    accelerate : bool, default=True
        Anderson extrapolation of the primal iterates in the sub-problems
        (:func:`solve_subproblem`).
    cycle : bool, default=True
        Active set cycling in the sub-problems (:func:`solve_subproblem`).
    subsolver : {"cd", "svrg"}, default="cd"
        ``"cd"``: :func:`solve_subproblem`.  ``"svrg"``: the screened SVRG outer
        loop of :func:`solve` (``n_inner = n_samples``, default step) on the
        working-set columns, to the same relative sub-problem gap.  Which is
        faster depends on the data (docs/studies/dsal.rst,
        ``scripts/bench_dsal.py subproblem``).
    generators : list of numpy.random.Generator or None, default=None
        ``subsolver="svrg"`` only: one per thread (None: seeded with 0).
    sampling : {"uniform", "importance"}, default="importance"
        ``subsolver="svrg"`` only: the row sampling (:func:`row_sampling`).
    compiled_loop : bool or None, default=None
        Run the whole loop above (certificates, screening, working sets and
        coordinate-descent sub-problems) in one nogil kernel
        (``_prox_fast.working_set_l1``) instead of NumPy calls per step: the
        same steps in the same order, equal to rounding (sequential instead of
        pairwise sums, ties of the priorities broken by feature index).  Only
        for ``penalty="l1"`` and ``subsolver="cd"``.  The kernel runs on one
        thread.  None: compiled when those hold and either ``n_jobs=1`` or
        ``Xc`` has fewer than :data:`COMPILED_LOOP_MAX_NNZ` non-zeros (where
        the NumPy loop's passes would run on one thread anyway); the rule uses
        ``n_jobs`` and the matrix's size only.

    Returns
    -------
    dict
        ``w`` (all features, block order), ``active`` (bool per feature: block
        never screened), ``dual_point`` (:math:`\theta`, shape (n_samples,),
        :math:`\Omega^D(X^\top\theta) \le 1` over all features), ``primal``,
        ``dual``, ``gap``, ``n_iter`` (sub-problems solved), ``n_epochs``
        (coordinate-descent epochs in all), ``converged``, ``times``,
        ``primals``, ``gaps`` (per evaluation), ``active_sizes`` (features not
        screened), ``ws_sizes`` (working-set features) and ``ws_epochs``
        (coordinate-descent epochs) per sub-problem.
    """
    if subsolver not in ("cd", "svrg"):
        raise ValueError(f"subsolver must be 'cd' or 'svrg', got {subsolver!r}")
    if subsolver == "svrg" and generators is None:
        generators = np.random.default_rng(0).spawn(n_jobs)
    n, p = Xc.shape
    t_start = time.perf_counter()
    gamma = GAMMA[loss]
    compiled_ok = penalty == "l1" and subsolver == "cd"
    if compiled_loop is None:
        compiled_loop = compiled_ok and (n_jobs == 1 or Xc.nnz < COMPILED_LOOP_MAX_NNZ)
    elif compiled_loop and not compiled_ok:
        raise ValueError("compiled_loop=True needs penalty='l1' and subsolver='cd'")
    if compiled_loop:
        return _working_set_compiled(Xc, y, alpha, loss, screening, tol, max_outer, w_init,
                                     p0, max_epochs, accelerate, cycle, t_start)
    ptr = blocks.ptr
    nb = blocks.n_blocks
    sizes = np.diff(ptr)
    csc = Compressed.of(Xc)
    opnorm = block_opnorms(Xc, ptr, penalty)
    lips = opnorm ** 2 / (gamma * n)
    usable = opnorm > 0.0   # a block no row meets is zero at every optimum
    w = np.zeros(p) if w_init is None else np.array(w_init, dtype=np.float64)
    w[np.repeat(~usable, sizes)] = 0.0
    alive = np.ones(nb, dtype=bool)

    def margins():
        z = np.zeros(n)   # X w from the columns of the support only
        _prox_fast.compressed_scatter(csc.data, csc.indices, csc.indptr, w, z)
        return z

    z = margins()
    best = {"dual": -np.inf, "block_dual": np.zeros(nb), "u": np.zeros(n)}

    def evaluate(extra):
        """Primal at w; the best full-problem dual point among the candidates.

        Returns the primal, the gap (best dual point so far) and the scaled
        block dual norms of the better of this evaluation's two candidates (the
        priorities rank the blocks by the constraint at the current point: the
        best point so far can be old, and would select the same set again)."""
        current = (-np.inf, None)
        with np.errstate(over="ignore", invalid="ignore"):
            fp = loss_derivative(z, y, loss)
            primal = (float(loss_values(z, y, loss).sum()) / n
                      + alpha * float(block_norms(w, ptr, penalty).sum()))
            for v in [fp] + ([extra] if extra is not None else []):
                bd = block_norms(_transpose_matvec(csc, v, n_jobs) / n, ptr, penalty)
                dual, c = dual_objective(v, bd, y, alpha, loss)
                if dual > current[0] or current[1] is None:
                    current = (dual, c * bd)
                if dual > best["dual"]:
                    best.update(dual=dual, block_dual=c * bd, u=c * v)
        return primal, primal - best["dual"], current[1]

    times, primals, gaps, active_sizes, ws_sizes, ws_epochs = [], [], [], [], [], []
    primal, gap, prio_dual = evaluate(None)
    n_iter = n_epochs = 0
    ws_size = 0
    ws = np.zeros(0, dtype=np.int64)
    converged = False
    while True:
        if screening and alive.any():
            radius = np.sqrt(2.0 * max(gap, 0.0) / (gamma * n)) / alpha
            score = best["block_dual"] / alpha + radius * opnorm
            removed = alive & (score < 1.0 - _SCREEN_MARGIN)
            if removed.any():
                alive &= ~removed
                dropped = np.repeat(removed, sizes)
                if np.any(w[dropped] != 0.0):   # the point moves: evaluate again
                    w[dropped] = 0.0
                    z = margins()
                    primal, gap, prio_dual = evaluate(None)
        times.append(time.perf_counter() - t_start)
        primals.append(primal)
        gaps.append(gap)
        if gap <= tol * abs(primal):
            converged = True
            break
        cand = alive & usable
        n_cand = int(cand.sum())
        if n_iter == max_outer or n_cand == 0:
            break
        supp = block_norms(w, ptr, penalty) != 0.0
        ws_size = min(n_cand, max(p0, 2 * int(supp.sum()), ws_size))
        prio = np.full(nb, np.inf)
        prio[cand] = (1.0 - prio_dual[cand] / alpha) / opnorm[cand]
        prio[supp] = -np.inf
        prev_ws = ws
        while True:
            if ws_size < n_cand:
                ws = np.sort(np.argpartition(prio, ws_size - 1)[:ws_size])
            else:
                ws = np.flatnonzero(cand)
            # the same set again would give the same sub-problem: grow it
            if ws_size >= n_cand or not np.array_equal(ws, prev_ws):
                break
            ws_size = min(n_cand, 2 * ws_size)
        wsizes = sizes[ws]
        bptr = np.zeros(ws.size + 1, dtype=np.int64)
        np.cumsum(wsizes, out=bptr[1:])
        feats = (ws if penalty == "l1" else
                 np.repeat(ptr[ws] - bptr[:-1], wsizes) + np.arange(bptr[-1], dtype=np.int64))
        sub = working_set_columns(csc, feats)
        w_ws = np.ascontiguousarray(w[feats])
        active_sizes.append(int(sizes[alive].sum()))
        ws_sizes.append(int(feats.size))
        if subsolver == "cd":
            v, epochs, _ = solve_subproblem(sub, y, w_ws, z, np.ascontiguousarray(lips[ws]),
                                            bptr, alpha, loss=loss, penalty=penalty,
                                            tol=WS_TOL_RATIO * gap, max_epochs=max_epochs,
                                            accelerate=accelerate, cycle=cycle)
        else:
            v, epochs = _svrg_subproblem(sub, y, w_ws, bptr, alpha, loss, penalty,
                                         WS_TOL_RATIO * gap / max(abs(primal), 1e-300),
                                         n_jobs, generators, max_epochs, sampling)
        w[feats] = w_ws
        n_iter += 1
        n_epochs += epochs
        ws_epochs.append(epochs)
        z = margins()  # exact margins of w for the certificate (no drift of the updates)
        primal, gap, prio_dual = evaluate(v)
    theta = -best["u"] / (n * alpha)
    return {
        "w": w, "active": np.repeat(alive, sizes), "dual_point": theta,
        "primal": primal, "dual": best["dual"], "gap": gap, "n_iter": n_iter,
        "n_epochs": n_epochs, "converged": converged, "times": np.array(times),
        "primals": np.array(primals), "gaps": np.array(gaps),
        "active_sizes": np.array(active_sizes, dtype=np.int64),
        "ws_sizes": np.array(ws_sizes, dtype=np.int64),
        "ws_epochs": np.array(ws_epochs, dtype=np.int64),
    }


def _working_set_compiled(Xc, y, alpha, loss, screening, tol, max_outer, w_init, p0,
                          max_epochs, accelerate, cycle, t_start):
    """:func:`solve_working_set` (l1, coordinate descent) by the compiled loop."""
    n, p = Xc.shape
    w = np.zeros(p) if w_init is None else np.array(w_init, dtype=np.float64)
    big = 2**62   # the kernel counts in int64; a larger cap means no cap
    out = _prox_fast.working_set_l1(
        np.ascontiguousarray(Xc.data, dtype=np.float64),
        np.ascontiguousarray(Xc.indices, dtype=np.int64),
        np.ascontiguousarray(Xc.indptr, dtype=np.int64),
        np.ascontiguousarray(y, dtype=np.float64), w, float(alpha),
        _prox_fast.LOSS_CODES[loss], bool(screening), float(tol), min(int(max_outer), big),
        int(p0), min(int(max_epochs), big), bool(accelerate), bool(cycle), WS_K, WS_CHECK, WS_TOL_RATIO,
        _SCREEN_MARGIN, GAMMA[loss], t_start)
    out["w"] = w
    out["active"] = out.pop("alive")
    out["dual_point"] = -out.pop("best_u") / (n * alpha)
    return out
