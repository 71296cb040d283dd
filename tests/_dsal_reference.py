"""Pure-Python reference of DSAL's working-set solver (the kernel
``dptoolkit.dsal._prox_fast.working_set`` behind :func:`dptoolkit.dsal.solve_working_set`
is tested against it in tests/test_dsal.py).

The same steps, in the same order and with the same constants as the kernel, in
NumPy: the certificate with the rescaled and the Anderson-extrapolated residuals
(Massias, Gramfort and Salmon, ICML 2018, eq. 9-10, Algorithm 4; Massias, Vaiter,
Gramfort and Salmon, JMLR 2020), the Gap Safe sphere test (Ndiaye et al., JMLR
2017), the working sets, and coordinate-descent sub-problems with active set
cycling and Anderson extrapolation of the primal iterates (Bertrand and Massias,
AISTATS 2021), one coordinate (block) at a time in Python.  The sums are NumPy's
(pairwise) and the linear solve LAPACK's, so the two agree to rounding.
"""
import time

import numpy as np

from dptoolkit.dsal._problem import block_opnorms, Compressed, GAMMA
from dptoolkit.dsal._screening import block_norms, conjugate_values, loss_derivative, loss_values
from dptoolkit.dsal._working_set import working_set_columns, WS_CHECK, WS_K, WS_MAX_EPOCHS, WS_P0, WS_TOL_RATIO
from dptoolkit.dsal._screening import _SCREEN_MARGIN, _dual_scale


def cd_epoch(sub, y, w, z, lipschitz, block_ptr, alpha, loss, penalty, order=None):
    """One cyclic pass of proximal coordinate (block) descent, in place (the
    ``_cd_pass`` of the kernel): for each block B visited, ``g_B = X_B^T f'(z) / n``,
    ``w_B <- prox_{(alpha / L_B) Omega_B}(w_B - g_B / L_B)`` and ``z`` updated."""
    n = y.size
    blocks = range(len(block_ptr) - 1) if order is None else order
    for b in blocks:
        L = lipschitz[b]
        if L <= 0.0:
            continue
        cols = range(block_ptr[b], block_ptr[b + 1])
        u = np.empty(len(cols))
        for t, j in enumerate(cols):
            rows = sub.indices[sub.indptr[j]:sub.indptr[j + 1]]
            vals = sub.data[sub.indptr[j]:sub.indptr[j + 1]]
            g = float(vals @ loss_derivative(z[rows], y[rows], loss))
            u[t] = w[j] - g / n / L
            if penalty == "l1":
                new = np.sign(u[t]) * max(abs(u[t]) - alpha / L, 0.0)
                z[rows] += (new - w[j]) * vals
                w[j] = new
        if penalty == "l1":
            continue
        nrm = np.linalg.norm(u)
        new = np.zeros_like(u) if nrm <= alpha / L else (1.0 - alpha / (L * nrm)) * u
        for t, j in enumerate(cols):
            rows = sub.indices[sub.indptr[j]:sub.indptr[j + 1]]
            z[rows] += (new[t] - w[j]) * sub.data[sub.indptr[j]:sub.indptr[j + 1]]
            w[j] = new[t]


def _transpose_matvec(csc, v):
    """X^T v of a Compressed CSC matrix."""
    out = np.zeros(csc.indptr.size - 1)
    for j in range(out.size):
        sl = slice(csc.indptr[j], csc.indptr[j + 1])
        out[j] = csc.data[sl] @ v[csc.indices[sl]]
    return out


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
            cd_epoch(sub, y, w, z, lipschitz, block_ptr, alpha, loss, penalty,
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
            gw = _transpose_matvec(sub, fp) / n
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


def solve_working_set(Xc, y, alpha, *, loss, penalty, blocks, screening, tol, max_outer,
                      w_init=None, p0=WS_P0, max_epochs=WS_MAX_EPOCHS, accelerate=True,
                      cycle=True):
    """The working-set solver with coordinate-descent sub-problems, in NumPy; the
    arguments and the result are those of :func:`dptoolkit.dsal.solve_working_set`."""
    n, p = Xc.shape
    t_start = time.perf_counter()
    gamma = GAMMA[loss]
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
        return np.asarray(Xc @ w, dtype=np.float64)

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
                bd = block_norms(_transpose_matvec(csc, v) / n, ptr, penalty)
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
        v, epochs, _ = solve_subproblem(sub, y, w_ws, z, np.ascontiguousarray(lips[ws]),
                                        bptr, alpha, loss=loss, penalty=penalty,
                                        tol=WS_TOL_RATIO * gap, max_epochs=max_epochs,
                                        accelerate=accelerate, cycle=cycle)
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
