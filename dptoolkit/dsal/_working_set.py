r"""Working sets with dual extrapolation (Massias, Gramfort and Salmon, ICML 2018;
Massias et al., JMLR 2020), the default solver of small penalties
(:func:`solve_working_set`); the gap it reports is that of the full problem.

The loop runs in one compiled kernel (``_prox_fast.working_set``); this module
validates, prepares its arrays and, for ``subsolver="svrg"``, hands it the
screened SVRG loop of ``_outer.solve`` as the sub-problem solver.
"""
import time

import numpy as np
import scipy.sparse as sp

from . import _prox_fast
from ._outer import solve
from ._problem import Blocks, Compressed, GAMMA, _canonical, block_opnorms
from ._screening import _SCREEN_MARGIN


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


#: Cap on the epochs of one sub-problem.
WS_MAX_EPOCHS = 50_000


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


def _svrg_subsolver(csc, y, blocks, alpha, loss, penalty, n_jobs, generators, max_epochs,
                    sampling):
    """The sub-problem solver ``subsolver="svrg"``: the screened SVRG loop of :func:`solve`
    on the working-set columns, called back by the kernel."""
    ptr = blocks.ptr
    sizes = np.diff(ptr)
    n = y.size

    def subsolve(ws, w_ws, tol, primal):
        wsizes = sizes[ws]
        bptr = np.zeros(ws.size + 1, dtype=np.int64)
        np.cumsum(wsizes, out=bptr[1:])
        feats = (ws if penalty == "l1" else
                 np.repeat(ptr[ws] - bptr[:-1], wsizes) + np.arange(bptr[-1], dtype=np.int64))
        sub = working_set_columns(csc, feats)
        m = w_ws.size
        Xc = sp.csc_array((sub.data, sub.indices, sub.indptr), shape=(n, m))
        Xr = _canonical(Xc.tocsr(), "csr")
        res = solve(Xr, _canonical(Xc, "csc"), y, alpha, loss=loss, penalty=penalty,
                    blocks=Blocks(np.arange(m, dtype=np.int64), bptr), method="svrg",
                    screening=True, n_jobs=n_jobs, step_size=None, n_inner=n,
                    tol=tol / max(abs(primal), 1e-300), max_outer=max_epochs,
                    generators=generators, sampling=sampling, w_init=w_ws)
        w_ws[:] = 0.0
        w_ws[res["problem"].feat] = res["w"]
        return res["evaluation"].fp, res["n_iter"]

    return subsolve


def solve_working_set(Xc, y, alpha, *, loss, penalty, blocks, screening, n_jobs, tol,
                      max_outer, w_init=None, p0=WS_P0, max_epochs=WS_MAX_EPOCHS,
                      accelerate=True, cycle=True, subsolver="cd", generators=None,
                      sampling="importance"):
    r"""DSAL with working sets and dual extrapolation (small penalties).

    The outer loop of Massias, Gramfort and Salmon (*Celer: a fast solver for
    the Lasso with dual extrapolation*, ICML 2018, Algorithm 4) and Massias,
    Vaiter, Gramfort and Salmon (*Dual extrapolation for sparse GLMs*, JMLR 2020,
    Algorithm 2), on top of the Gap Safe screening of DSAL (module docstring),
    run in one nogil kernel (``_prox_fast.working_set``, also
    :mod:`dptoolkit.kernels` ``prox_fast.working_set``); the pure-Python
    reference it is tested against is ``tests/_dsal_reference.py``.

    1. *Certificate.*  Over **all** features (the full problem, not the working
       set), rescale into the dual feasible set (:math:`\theta = -c\,v/(n\alpha)`,
       :math:`c = \alpha/\max(\alpha, \Omega^D(X^\top v)/n)`) the residual
       :math:`v = f'(Xw)` and the best residual of the last sub-problem (plain
       or Anderson-extrapolated); keep the dual point of largest objective among
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
       priority (ties by block index), ``ws_size = max(p0, 2 |supp(w)|,
       previous ws_size)`` (at most the blocks left): it grows geometrically
       while the support does, never shrinks, and doubles when it would be the
       previous set again.
    4. *Sub-problem*, to a gap of :data:`WS_TOL_RATIO` :math:`G`: cyclic
       proximal coordinate (block) descent, step :math:`1/L_B` with
       :math:`L_B = \|X_B\|_2^2/(\gamma n)`, in rounds of :data:`WS_CHECK`
       epochs, with active set cycling (``cycle``: the first epoch of a round
       visits every block, the others the non-zero ones; Friedman, Hastie and
       Tibshirani, J. Stat. Softw. 2010, Section 2.6), Anderson extrapolation of
       the primal iterates (``accelerate``: every :data:`WS_K` + 1 epochs, kept
       when it lowers the objective; Bertrand and Massias, AISTATS 2021,
       Algorithm 2) and of the residuals (the sub-problem's dual point, eq. 9-10
       of Massias et al. 2018); or DSAL's screened SVRG loop
       (``subsolver="svrg"``, :func:`solve` on the working-set columns).  Which
       is faster depends on the data (docs/studies/dsal.rst).

    Parameters
    ----------
    Xc : scipy.sparse.csc_array of shape (n_samples, n_features)
        As in :func:`solve` (:func:`prepare_problem` can skip the CSR matrix:
        ``csr=False``); so are ``y``, ``alpha``, ``loss``, ``penalty``,
        ``blocks`` and ``screening``.
    n_jobs : int
        Threads of the full-problem passes (one column a thread: the result
        does not depend on ``n_jobs``) and of the SVRG sub-problems.
    tol : float
        Relative duality gap of the full problem.
    max_outer : int
        Maximum number of working sets (sub-problems).
    w_init : ndarray of shape (n_features,), default=None
        Start in block order; None starts from zero.
    p0 : int, default=WS_P0
        First working-set size, in blocks.
    max_epochs : int, default=WS_MAX_EPOCHS
        Coordinate-descent epochs (SVRG: outer iterations) per sub-problem at most.
    accelerate : bool, default=True
        Anderson extrapolation of the primal iterates in the sub-problems.
    cycle : bool, default=True
        Active set cycling in the sub-problems.
    subsolver : {"cd", "svrg"}, default="cd"
        ``"cd"``: coordinate descent in the kernel.  ``"svrg"``: the screened
        SVRG outer loop of :func:`solve` (``n_inner = n_samples``, default step)
        on the working-set columns, to the same relative sub-problem gap
        (``scripts/bench_dsal.py subproblem``).
    generators : list of numpy.random.Generator or None, default=None
        ``subsolver="svrg"`` only: one per thread (None: seeded with 0).
    sampling : {"uniform", "importance"}, default="importance"
        ``subsolver="svrg"`` only: the row sampling (:func:`row_sampling`).

    Returns
    -------
    dict
        ``w`` (all features, block order), ``active`` (bool per feature: block
        never screened), ``dual_point`` (:math:`\theta`, shape (n_samples,),
        :math:`\Omega^D(X^\top\theta) \le 1` over all features), ``primal``,
        ``dual``, ``gap``, ``n_iter`` (sub-problems solved), ``n_epochs``
        (sub-problem epochs in all), ``converged``, ``times``, ``primals``,
        ``gaps`` (per evaluation), ``active_sizes`` (features not screened),
        ``ws_sizes`` (working-set features) and ``ws_epochs`` (epochs) per
        sub-problem.

    Raises
    ------
    ValueError
        ``subsolver`` not ``"cd"`` or ``"svrg"``.
    """
    if subsolver not in ("cd", "svrg"):
        raise ValueError(f"subsolver must be 'cd' or 'svrg', got {subsolver!r}")
    t_start = time.perf_counter()
    n, p = Xc.shape
    subsolve = None
    if subsolver == "svrg":
        if generators is None:
            generators = np.random.default_rng(0).spawn(n_jobs)
        subsolve = _svrg_subsolver(Compressed.of(Xc), y, blocks, alpha, loss, penalty,
                                   n_jobs, generators, max_epochs, sampling)
    w = np.zeros(p) if w_init is None else np.array(w_init, dtype=np.float64)
    big = 2**62   # the kernel counts in int64; a larger cap means no cap
    out = _prox_fast.working_set(
        np.ascontiguousarray(Xc.data, dtype=np.float64),
        np.ascontiguousarray(Xc.indices, dtype=np.int64),
        np.ascontiguousarray(Xc.indptr, dtype=np.int64),
        np.ascontiguousarray(y, dtype=np.float64), w,
        np.ascontiguousarray(blocks.ptr, dtype=np.int64),
        np.ascontiguousarray(block_opnorms(Xc, blocks.ptr, penalty), dtype=np.float64),
        float(alpha), _prox_fast.LOSS_CODES[loss], _prox_fast.PENALTY_CODES[penalty],
        bool(screening), float(tol), min(int(max_outer), big), int(p0),
        min(int(max_epochs), big), bool(accelerate), bool(cycle), WS_K, WS_CHECK,
        WS_TOL_RATIO, _SCREEN_MARGIN, GAMMA[loss], t_start, int(n_jobs), subsolve)
    out["w"] = w
    out["active"] = np.repeat(out.pop("alive"), np.diff(blocks.ptr))
    out["dual_point"] = -out.pop("best_u") / (n * alpha)
    return out
