r"""DSAL: doubly sparse asynchronous Lasso (paper 002) and its baselines.

Paper 002 is Bao, Wu, Xian and Huang, *Doubly Sparse Asynchronous Learning for
Stochastic Composite Optimization*, IJCAI 2022.  Every solver here minimises

.. math:: P(w) = \frac{1}{n}\sum_{i=1}^n f_i(x_i^\top w) + \alpha\,\Omega(w),

with :math:`f_i(z) = (z - y_i)^2/2` (``loss="squared"``; :math:`P` is then exactly
the objective of :class:`sklearn.linear_model.Lasso` without intercept) or
:math:`f_i(z) = \log(1 + e^{-y_i z})`, :math:`y_i = \pm 1` (``loss="logistic"``), and
:math:`\Omega(w) = \|w\|_1` (``penalty="l1"``) or :math:`\sum_B \|w_B\|_2` over a
partition of the features into blocks (``penalty="group_l1"``).

Screening (eq. 2-3 of the paper) follows the Gap Safe rules of Ndiaye, Fercoq,
Gramfort and Salmon (JMLR 2017) for the objective exactly as scaled above, not the
paper's mixed normalisation (papers/README.md, 002 item 1).  Written for
:math:`nP(w) = \sum_i f_i(x_i^\top w) + \lambda\Omega(w)` with :math:`\lambda = n\alpha`
and :math:`f_i` :math:`1/\gamma`-smooth (:math:`\gamma = 1` squared, :math:`\gamma = 4`
logistic), with :math:`g = \nabla F(w) = X^\top f'(Xw)/n`:

* dual point :math:`\theta = -c\, f'(Xw)/\lambda`, :math:`c = \alpha / \max(\alpha, \Omega^D(g))`,
  feasible: :math:`\Omega^D(X^\top\theta) \le 1`;
* dual objective :math:`D(\theta) = -\frac{1}{n}\sum_i f_i^*(c\, f_i'(x_i^\top w))` (scaled
  by :math:`1/n` like :math:`P`), duality gap :math:`G = P(w) - D(\theta) \ge P(w) - P^*`;
* the optimum :math:`\theta^*` lies in the ball of centre :math:`\theta` and radius
  :math:`r = \sqrt{2 n G / \gamma} / (n\alpha)`, so a block with
  :math:`\|g_B\|_* / \max(\alpha, \Omega^D(g)) + r\,\|X_B\|_2 < 1` is zero at the
  optimum and is removed for good (:math:`\|X_B\|_2` is the column norm for l1 and the
  spectral norm of the block for group l1).

The test uses the dual norm over the *active* blocks only, i.e. the Gap Safe rule of
the restricted problem, which has the same optimum as the full one because every
removed block is zero there; the gap reported is the gap of the restricted problem,
which bounds :math:`P(w) - P^*` all the same.
"""
import numbers
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, xlogy
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _prox_fast
from .._validation import (check_positive_int, check_random_state, check_scalar_range,
                           check_sparse_X)

__all__ = [
    "DSALLasso",
    "ProxSVRGLasso",
    "ProxASAGALasso",
    "lasso_alpha_max",
    "lasso_duality_gap",
]

_LOSSES = ("squared", "logistic")
_PENALTIES = ("l1", "group_l1")
_SAMPLINGS = ("uniform", "importance")
#: 1/gamma is the smoothness constant of f_i: f_i'' <= 1 (squared), <= 1/4 (logistic).
_GAMMA = {"squared": 1.0, "logistic": 4.0}
#: Relative guard of the sphere test against rounding: a block is removed only if
#: its score is below 1 - _SCREEN_MARGIN (its score is >= 1 at the optimum when it
#: is non-zero there, up to rounding in X^T f'(Xw)).
_SCREEN_MARGIN = 1e-9
#: The full-gradient passes use at most nnz / _MIN_NNZ_PER_THREAD threads: below
#: that, waking threads costs more than the pass.
_MIN_NNZ_PER_THREAD = 50_000
#: The active sub-matrix is rebuilt when the screened blocks hold at least this
#: fraction of its non-zeros (so a step costs at most 1/(1 - 0.1) times the
#: non-zeros of the row restricted to the blocks not yet screened).
_REBUILD_FRACTION = 0.1
#: Default step size factor: step = _STEP_FACTOR / L_max, L_max = max_i ||x_{i,A}||^2 / gamma.
_STEP_FACTOR = 1.0


# ---------------------------------------------------------------------------
# losses, penalties, duality gap
# ---------------------------------------------------------------------------

def _loss_values(z, y, loss):
    if loss == "squared":
        return 0.5 * (z - y) ** 2
    return np.logaddexp(0.0, -y * z)


def _loss_derivative(z, y, loss):
    if loss == "squared":
        return z - y
    return -y * expit(-y * z)


def _conjugate_values(fp, y, loss, c):
    """f_i^*(c f_i'(z_i)) given fp = f'(z) and a scale 0 < c <= 1."""
    u = c * fp
    if loss == "squared":
        return 0.5 * u * u + u * y
    s = np.clip(-u * y, 0.0, 1.0)  # = c * sigmoid(-y z) in [0, 1]
    return xlogy(s, s) + xlogy(1.0 - s, 1.0 - s)


def _block_norms(v, block_ptr, penalty):
    """|v_j| (l1) or ||v_B||_2 per block (group l1)."""
    if penalty == "l1":
        return np.abs(v)
    if v.size == 0:
        return np.zeros(0)
    return np.sqrt(np.add.reduceat(v * v, block_ptr[:-1]))


def _gap_from_sums(loss_sum, conj_sum, pen, alpha, n):
    primal = loss_sum / n + alpha * pen
    dual = -conj_sum / n
    return primal, dual, primal - dual


def _dual_scale(dual_norm, alpha):
    return alpha / max(alpha, dual_norm)


def _gap_safe_keep(block_dual, dual_norm, alpha, gap, n, gamma, block_opnorm):
    """Boolean mask of the blocks the Gap Safe sphere test cannot remove."""
    radius = np.sqrt(2.0 * max(gap, 0.0) / (gamma * n)) / alpha
    score = block_dual / max(alpha, dual_norm) + radius * block_opnorm
    return score >= 1.0 - _SCREEN_MARGIN


# ---------------------------------------------------------------------------
# block structure and the active sub-problem
# ---------------------------------------------------------------------------

class _Blocks:
    """A partition of the features into contiguous blocks after a permutation.

    ``perm[k]`` is the original index of permuted feature ``k``; block ``b`` is
    permuted features ``ptr[b] .. ptr[b+1]-1``.
    """

    def __init__(self, perm, ptr):
        self.perm = perm
        self.ptr = ptr

    @property
    def n_blocks(self):
        return self.ptr.size - 1

    @property
    def sizes(self):
        return np.diff(self.ptr)

    @classmethod
    def singletons(cls, p):
        return cls(np.arange(p, dtype=np.int64), np.arange(p + 1, dtype=np.int64))

    @classmethod
    def from_groups(cls, groups, p):
        """Validate ``groups`` (a partition of range(p)) and build the blocks."""
        if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
            raise TypeError("groups must be a sequence of integer arrays of feature indices")
        if len(groups) == 0:
            raise ValueError("groups must contain at least one group")
        parts = []
        for k, g in enumerate(groups):
            arr = np.asarray(g)
            if arr.ndim != 1:
                raise ValueError(f"groups[{k}] must be a 1-D array of feature indices")
            if arr.size == 0:
                raise ValueError(f"groups[{k}] is empty; groups must partition the features")
            if arr.dtype.kind not in "iu":
                integral = np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
                if arr.dtype.kind == "f" and integral:
                    arr = arr.astype(np.int64)
                else:
                    raise TypeError(f"groups[{k}] must hold integer feature indices, "
                                    f"got dtype {arr.dtype}")
            arr = arr.astype(np.int64)
            if arr.min() < 0 or arr.max() >= p:
                raise ValueError(f"groups[{k}] has feature indices outside [0, {p - 1}]")
            parts.append(arr)
        perm = np.concatenate(parts)
        counts = np.bincount(perm, minlength=p)
        if np.any(counts > 1):
            dup = np.flatnonzero(counts > 1)[:5].tolist()
            raise ValueError(f"groups must partition the features: features {dup} "
                             "belong to more than one group")
        if perm.size != p:
            missing = np.flatnonzero(counts == 0)[:5].tolist()
            raise ValueError(f"groups must partition the features: features {missing} "
                             f"(of {p}) are in no group")
        ptr = np.zeros(len(parts) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([a.size for a in parts])
        return cls(perm, ptr)


def _canonical(M, fmt):
    M = sp.csr_array(M) if fmt == "csr" else sp.csc_array(M)
    if not M.has_sorted_indices:
        M.sort_indices()
    M.indices = M.indices.astype(np.int64, copy=False)
    M.indptr = M.indptr.astype(np.int64, copy=False)
    M.data = M.data.astype(np.float64, copy=False)
    return M


def _segment_sq_norms(data, indptr):
    out = np.empty(indptr.size - 1)
    _prox_fast.compressed_sq_norms(data, indptr, out)
    return out


def _row_sampling(row_sq, sampling):
    """Row probabilities (None: uniform) and the smoothness constant of the step.

    ``"uniform"``: every row with probability 1/n; the step uses
    L_max = max_i ||x_i||^2.  ``"importance"``: half uniform, half proportional to
    ||x_i||^2 (partially biased sampling, Needell, Srebro and Ward 2016):
    p_i = 1/(2n) + ||x_i||^2 / (2 n L_avg); the data term of row i is weighted by
    1/(n p_i), whose smoothness max_i ||x_i||^2 / (n p_i) <= 2 L_avg replaces
    L_max (text data: a few very long documents make L_max >> L_avg).
    """
    l_max = float(row_sq.max()) if row_sq.size else 0.0
    if sampling == "uniform" or l_max == 0.0:
        return None, l_max
    n = row_sq.size
    prob = 0.5 / n + 0.5 * row_sq / float(row_sq.sum())
    return prob, float((row_sq / (n * prob)).max())


def _block_opnorms(Xc, ptr, penalty):
    """||x_j||_2 per column (l1) or spectral norm ||X_B||_2 per block (group l1).

    Blocks of more than 256 columns use the Frobenius norm, a safe upper bound
    (a larger radius term only makes the test more conservative).
    """
    col_sq = _segment_sq_norms(Xc.data, Xc.indptr)
    if penalty == "l1":
        return np.sqrt(col_sq)
    sizes = np.diff(ptr)
    out = np.sqrt(np.add.reduceat(col_sq, ptr[:-1]))  # Frobenius norms
    for b in np.flatnonzero((sizes > 1) & (sizes <= 256)):
        XB = Xc[:, ptr[b]:ptr[b + 1]]
        gram = (XB.T @ XB).toarray()
        out[b] = np.sqrt(max(np.linalg.eigvalsh(gram)[-1], 0.0))
    return out


class _Compressed:
    """Raw CSR or CSC arrays (float64 data, int64 indices and indptr)."""

    __slots__ = ("data", "indices", "indptr")

    def __init__(self, data, indices, indptr):
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)

    @classmethod
    def of(cls, M):
        return cls(M.data, M.indices, M.indptr)

    @property
    def nnz(self):
        return int(self.indptr[-1])


class _ActiveProblem:
    """The sub-matrix of the active blocks in a compact numbering.

    Attributes: ``blocks`` (active block ids), ``feat`` (permuted feature
    positions), ``csr`` / ``csc`` (:class:`_Compressed`, compact column
    numbers), ``block_ptr``, ``block_of``, ``dblock`` (d_B = 1 / P(the
    sampled row meets B), n / n_B under uniform sampling),
    ``l_max`` (max squared row norm).  :meth:`full` builds the problem on every
    block; :meth:`restrict` drops blocks by filtering the stored entries (a few
    vectorised passes over the non-zeros, no sparse format conversion).
    """

    def __init__(self, n, csr, csc, blocks, feat, block_ptr, penalty, sampling="uniform"):
        self.n = n
        self.csr, self.csc = csr, csc
        self.blocks, self.feat, self.block_ptr = blocks, feat, block_ptr
        self.penalty, self.sampling = penalty, sampling
        self.block_of = np.repeat(np.arange(blocks.size, dtype=np.int64), np.diff(block_ptr))
        col_nnz = np.diff(csc.indptr)
        self.block_nnz = (col_nnz if penalty == "l1" else
                          np.add.reduceat(col_nnz, block_ptr[:-1]) if blocks.size else col_nnz)
        self.row_sq = _segment_sq_norms(csr.data, csr.indptr)
        prob, self.l_max = _row_sampling(self.row_sq, sampling)
        # d_B = 1 / P(the sampled row meets B): n / n_B under uniform sampling
        reach = self._block_reach(prob)
        self.dblock = np.zeros(blocks.size)
        nz = reach > 0
        self.dblock[nz] = (n if prob is None else 1.0) / reach[nz]
        if prob is None:
            self.row_weight = self.alias_prob = self.alias_idx = None
        else:
            self.row_weight = 1.0 / (n * prob)
            self.alias_prob, self.alias_idx = _prox_fast.build_alias(prob)

    @classmethod
    def full(cls, Xr, Xc, blocks, penalty, sampling="uniform"):
        return cls(Xr.shape[0], _Compressed.of(Xr), _Compressed.of(Xc),
                   np.arange(blocks.n_blocks, dtype=np.int64),
                   np.arange(Xr.shape[1], dtype=np.int64), blocks.ptr.copy(), penalty,
                   sampling)

    def sampling_kwargs(self):
        """Keyword arguments of the kernel for this problem's row sampling."""
        return {"row_weight": self.row_weight, "alias_prob": self.alias_prob,
                "alias_idx": self.alias_idx}

    def restrict(self, keep):
        """The sub-problem of the blocks where ``keep`` (one bool per block) is True."""
        sizes = np.diff(self.block_ptr)
        keep_feat = np.repeat(keep, sizes)
        remap = np.cumsum(keep_feat, dtype=np.int64) - 1
        csr = self.csr
        entry = keep_feat[csr.indices]
        cum = np.zeros(csr.indices.size + 1, dtype=np.int64)
        np.cumsum(entry, out=cum[1:])
        new_csr = _Compressed(csr.data[entry], remap[csr.indices[entry]], cum[csr.indptr])
        csc = self.csc
        col_nnz = np.diff(csc.indptr)
        centry = np.repeat(keep_feat, col_nnz)
        cptr = np.zeros(int(keep_feat.sum()) + 1, dtype=np.int64)
        np.cumsum(col_nnz[keep_feat], out=cptr[1:])
        new_csc = _Compressed(csc.data[centry], csc.indices[centry], cptr)
        block_ptr = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
        np.cumsum(sizes[keep], out=block_ptr[1:])
        return _ActiveProblem(self.n, new_csr, new_csc, self.blocks[keep], self.feat[keep_feat],
                              block_ptr, self.penalty, self.sampling)

    @property
    def n_features(self):
        return self.feat.size

    def _block_reach(self, prob):
        """Per block: the number of rows whose support meets it (``prob`` None),
        or the probability that the sampled row meets it."""
        if self.penalty == "l1":
            col_nnz = np.diff(self.csc.indptr)
            if prob is None:
                return col_nnz
            out = np.zeros(col_nnz.size)
            _prox_fast.compressed_matvec(np.ones(self.csc.nnz), self.csc.indices,
                                         self.csc.indptr, prob, out)
            return out
        csr = self.csr
        if csr.nnz == 0:
            return np.zeros(self.blocks.size)
        bi = self.block_of[csr.indices]
        first = np.ones(csr.nnz, dtype=bool)
        first[1:] = bi[1:] != bi[:-1]
        first[csr.indptr[:-1][np.diff(csr.indptr) > 0]] = True
        weights = None
        if prob is not None:
            rows = np.repeat(np.arange(self.n), np.diff(csr.indptr))
            weights = prob[rows[first]]
        return np.bincount(bi[first], weights=weights, minlength=self.blocks.size)


def _local_pass(problem, w, y, loss, n_jobs):
    """z = X_A w, f'(z), X_A^T f'(z) (a sum over the rows) and sum_i f_i(z_i)."""
    n = y.size
    if problem.csr.nnz < _MIN_NNZ_PER_THREAD * n_jobs:
        n_jobs = max(1, problem.csr.nnz // _MIN_NNZ_PER_THREAD)
    z = np.empty(n)
    _prox_fast.compressed_matvec(problem.csr.data, problem.csr.indices,
                                 problem.csr.indptr, w, z, 1.0, n_jobs)
    fp = _loss_derivative(z, y, loss)
    gsum = np.empty(problem.n_features)
    _prox_fast.compressed_matvec(problem.csc.data, problem.csc.indices,
                                 problem.csc.indptr, fp, gsum, 1.0, n_jobs)
    return z, fp, gsum, float(_loss_values(z, y, loss).sum())


class _Evaluation:
    """Gradient, dual scaling, primal/dual objectives and gap at w.

    Built in two steps so that the distributed solver can sum the per-row
    parts over the workers: the constructor takes the full gradient ``g`` and
    computes the block dual norms and the dual scale ``c``; :meth:`finish`
    takes the sums of f_i(z_i) and of f_i^*(c f_i'(z_i)).  :meth:`local` does
    both on one machine (and keeps ``fp`` = f'(z), the SVRG snapshot).
    """

    __slots__ = ("fp", "g", "block_dual", "dual_norm", "c", "penalty_value",
                 "primal", "dual", "gap")

    def __init__(self, g, w, block_ptr, alpha, penalty):
        self.fp = None
        self.g = g
        self.block_dual = _block_norms(g, block_ptr, penalty)
        self.dual_norm = float(self.block_dual.max()) if self.block_dual.size else 0.0
        self.penalty_value = float(_block_norms(w, block_ptr, penalty).sum())
        self.c = _dual_scale(self.dual_norm, alpha)

    def finish(self, loss_sum, conj_sum, alpha, n):
        self.primal, self.dual, self.gap = _gap_from_sums(
            loss_sum, conj_sum, self.penalty_value, alpha, n)
        return self

    @classmethod
    def local(cls, problem, w, y, alpha, loss, penalty, n_jobs):
        n = y.size
        # an inner loop with too large a step can overflow; the step control
        # rejects the non-finite objective, so no RuntimeWarning
        with np.errstate(over="ignore", invalid="ignore"):
            _, fp, gsum, loss_sum = _local_pass(problem, w, y, loss, n_jobs)
            ev = cls(gsum / n, w, problem.block_ptr, alpha, penalty)
            ev.fp = fp
            conj = float(_conjugate_values(fp, y, loss, ev.c).sum())
        return ev.finish(loss_sum, conj, alpha, n)

    def restrict(self, keep_feat, keep_blocks):
        """The same evaluation for a sub-problem where only zero blocks were removed."""
        self.g = self.g[keep_feat]
        self.block_dual = self.block_dual[keep_blocks]
        return self


# ---------------------------------------------------------------------------
# the solver
# ---------------------------------------------------------------------------

class _StepControl:
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


def _screen(ev, prob, opnorm, alpha, n, gamma, final):
    """Gap Safe test of the active blocks at the evaluation ``ev``.

    Returns the mask of blocks to keep when the sub-problem should be rebuilt,
    else None.  Rebuilding costs a few passes over the sub-matrix, so it is done
    once the screened blocks hold >= _REBUILD_FRACTION of its non-zeros (or when
    ``final``); until then they stay in the (still valid) sub-problem and are
    tested again later.  Screening decisions are final: the test is safe.
    """
    keep = _gap_safe_keep(ev.block_dual, ev.dual_norm, alpha, ev.gap, n, gamma,
                          opnorm[prob.blocks])
    if keep.all():
        return None
    removed_nnz = prob.block_nnz[~keep].sum()
    if final or removed_nnz >= _REBUILD_FRACTION * prob.csr.nnz:
        return keep
    return None


def _solve(Xr, Xc, y, alpha, *, loss, penalty, blocks, method, screening, n_jobs,
           step_size, n_inner, tol, max_outer, generators, sampling="uniform", w_init=None):
    """Run the outer loop; return a dict with the compact solution and histories.

    ``w_init`` (features in block order, i.e. ``coef[blocks.perm]``) is the
    starting point; None starts from zero.

    ``method`` is "svrg" (DSAL / ProxSVRG), "sgd" (DSAL-Naive) or "saga"
    (ProxASAGA).  ``Xr``/``Xc`` are the canonical CSR/CSC matrices with columns in
    block order.  Every outer iteration: evaluate at the current point (full
    gradient, dual point, gap), stop if the relative gap is <= tol, screen,
    run ``n_inner`` stochastic steps on the active set.  Safeguard (not in the
    paper): :class:`_StepControl`.
    """
    n = y.size
    t_start = time.perf_counter()
    gamma = _GAMMA[loss]
    lcode = _prox_fast.LOSS_CODES[loss]
    pcode = _prox_fast.PENALTY_CODES[penalty]
    mcode = _prox_fast.METHOD_CODES[method]
    opnorm = _block_opnorms(Xc, blocks.ptr, penalty) if screening else None

    prob = _ActiveProblem.full(Xr, Xc, blocks, penalty, sampling)
    w = np.zeros(prob.n_features) if w_init is None else np.array(w_init, dtype=np.float64)
    if w_init is not None:
        # a block no row meets is zero at every optimum, and no step ever touches
        # it (d_B = 0): a warm start must not carry a value there
        w[np.repeat(prob.block_nnz == 0, np.diff(prob.block_ptr))] = 0.0
    ev = _Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
    times, primals, gaps, sizes_hist = [], [], [], []
    active_sizes = []

    def record():
        times.append(time.perf_counter() - t_start)
        primals.append(ev.primal)
        gaps.append(ev.gap)
        sizes_hist.append(prob.n_features)

    record()
    control = _StepControl(method)
    n_iter = 0
    converged = False
    mem = gbar = None
    if method == "saga":
        mem, gbar = ev.fp.copy(), ev.g.copy()
    for _ in range(max_outer + 1):
        keep = (_screen(ev, prob, opnorm, alpha, n, gamma, ev.gap <= tol * abs(ev.primal))
                if screening else None)
        if keep is not None:
            keep_feat = np.repeat(keep, np.diff(prob.block_ptr))
            moved = bool(np.any(w[~keep_feat] != 0.0))
            w = w[keep_feat]
            prob = prob.restrict(keep)
            if moved:  # removed coordinates were non-zero: the point changed
                ev = _Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
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
            ev = _Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
            record()
            continue
        base = (step_size if step_size is not None else
                _STEP_FACTOR * gamma / max(prob.l_max, 1e-300))
        step = base * control.scale
        w0, ev0 = w.copy(), ev
        if method == "svrg":
            mem, gbar = ev.fp.copy(), ev.g.copy()
        elif method == "sgd":
            mem, gbar = np.zeros(n), np.zeros(prob.n_features)
        _prox_fast.sparse_prox_epoch(
            prob.csr.data, prob.csr.indices, prob.csr.indptr, y, w, mem, gbar,
            prob.dblock, prob.block_of, prob.block_ptr, lcode, pcode, mcode,
            float(step), float(alpha), int(n_inner), generators, **prob.sampling_kwargs())
        n_iter += 1
        ev = _Evaluation.local(prob, w, y, alpha, loss, penalty, n_jobs)
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


# ---------------------------------------------------------------------------
# input handling shared by the estimators and the public helpers
# ---------------------------------------------------------------------------

def _check_loss_penalty(loss, penalty, groups):
    if loss not in _LOSSES:
        raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
    if penalty not in _PENALTIES:
        raise ValueError(f"penalty must be one of {_PENALTIES}, got {penalty!r}")
    if penalty == "group_l1" and groups is None:
        raise ValueError("penalty='group_l1' needs groups (a partition of the features)")
    if penalty == "l1" and groups is not None:
        raise ValueError("groups is only used with penalty='group_l1'")


def _prepare_targets(y, loss):
    """Return (y used by the solver, classes or None)."""
    y = np.asarray(y)
    if loss == "squared":
        y = y.astype(np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity")
        return y, None
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"loss='logistic' needs exactly two classes in y, got {classes.size}")
    return np.where(y == classes[1], 1.0, -1.0), classes


def _prepare_problem(X, y, loss, penalty, groups):
    """Canonical CSR/CSC in block order, targets and blocks."""
    _check_loss_penalty(loss, penalty, groups)
    Xr, Xc = check_sparse_X(X, formats=("csr", "csc"))
    if np.any(Xr.data == 0):
        Xr = Xr.copy()
        Xr.eliminate_zeros()
        Xc = Xc.copy()
        Xc.eliminate_zeros()
    n, p = Xr.shape
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must be 1-D with {n} entries (one per row of X), got shape {y.shape}")
    yv, classes = _prepare_targets(y, loss)
    if penalty == "l1":
        blocks = _Blocks.singletons(p)
    else:
        blocks = _Blocks.from_groups(groups, p)
        if not np.array_equal(blocks.perm, np.arange(p)):
            Xc = _canonical(Xc[:, blocks.perm], "csc")
            Xr = _canonical(Xc.tocsr(), "csr")
    return Xr, Xc, yv, classes, blocks


def lasso_alpha_max(X, y, *, loss="squared", penalty="l1", groups=None):
    r"""Smallest :math:`\alpha` for which :math:`w = 0` is optimal.

    :math:`\alpha_{\max} = \Omega^D(X^\top f'(0)) / n`: for the squared loss and l1
    penalty :math:`\|X^\top y\|_\infty / n` (scikit-learn's ``Lasso`` scaling).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Targets (squared) or two class labels (logistic).
    loss, penalty, groups
        As in :class:`DSALLasso`.

    Returns
    -------
    float
    """
    Xr, Xc, yv, _, blocks = _prepare_problem(X, y, loss, penalty, groups)
    n = yv.size
    g = Xc.T @ _loss_derivative(np.zeros(n), yv, loss) / n
    return float(_block_norms(g, blocks.ptr, penalty).max())


def lasso_duality_gap(X, y, coef, alpha, *, loss="squared", penalty="l1", groups=None):
    """Primal objective, dual objective and duality gap of ``coef``.

    The dual point is the rescaled residual of the module docstring, over all
    features (no screening).  Used to compare any solver's output (e.g.
    scikit-learn's ``Lasso``) on the same scale.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    coef : array-like of shape (n_features,)
    alpha : float
        Regularisation strength, > 0.
    loss, penalty, groups
        As in :class:`DSALLasso`.

    Returns
    -------
    primal, dual, gap : float
    """
    alpha = check_scalar_range(alpha, "alpha", low=0.0, low_open=True)
    Xr, Xc, yv, _, blocks = _prepare_problem(X, y, loss, penalty, groups)
    coef = np.asarray(coef, dtype=np.float64).ravel()
    if coef.size != Xr.shape[1]:
        raise ValueError(f"coef must have {Xr.shape[1]} entries, got {coef.size}")
    prob = _ActiveProblem.full(Xr, Xc, blocks, penalty)
    ev = _Evaluation.local(prob, np.ascontiguousarray(coef[blocks.perm]), yv, alpha, loss,
                           penalty, 1)
    return ev.primal, ev.dual, ev.gap


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------

class _SparseProxLassoBase(RegressorMixin, BaseEstimator):
    """Shared fit/predict of the sparse proximal stochastic Lasso solvers."""

    _method = "svrg"
    _screening_param = False

    def _solver_settings(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def _validate_params_common(self):
        alpha = check_scalar_range(self.alpha, "alpha", low=0.0, low_open=True)
        n_jobs = check_positive_int(self.n_jobs, "n_jobs")
        tol = check_scalar_range(self.tol, "tol", low=0.0)
        max_outer = check_positive_int(self.max_outer, "max_outer")
        step_size = (None if self.step_size is None else
                     check_scalar_range(self.step_size, "step_size", low=0.0, low_open=True))
        n_inner = None if self.n_inner is None else check_positive_int(self.n_inner, "n_inner")
        if self.sampling not in _SAMPLINGS:
            raise ValueError(f"sampling must be one of {_SAMPLINGS}, got {self.sampling!r}")
        return alpha, n_jobs, tol, max_outer, step_size, n_inner

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; any scipy.sparse format or dense.  Converted once to
            CSR and CSC float64 with int64 indices.
        y : array-like of shape (n_samples,)
            Targets (``loss="squared"``) or two class labels (``loss="logistic"``).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``alpha <= 0``, ``n_jobs < 1``, ``groups`` not a partition of the
            features, NaN or infinity in ``X`` or ``y``, inconsistent shapes.
        TypeError
            Non-numeric parameters or data.
        """
        alpha, n_jobs, tol, max_outer, step_size, n_inner = self._validate_params_common()
        method, screening = self._solver_settings()
        _check_loss_penalty(self.loss, self.penalty, self.groups)
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise TypeError(f"warm_start must be a bool, got {type(self.warm_start).__name__}")
        previous_coef = getattr(self, "coef_", None)
        X, y = validate_data(self, X, y, accept_sparse=True, dtype=np.float64,
                             y_numeric=self.loss == "squared", ensure_min_samples=1)
        Xr, Xc, yv, classes, blocks = _prepare_problem(X, y, self.loss, self.penalty,
                                                       self.groups)
        n, p = Xr.shape
        w_init = None
        if self.warm_start and previous_coef is not None:
            if previous_coef.shape != (p,):
                raise ValueError(f"warm_start=True needs coef_ of shape ({p},) from the "
                                 f"previous fit, got {previous_coef.shape}; refit with "
                                 "warm_start=False")
            w_init = np.ascontiguousarray(previous_coef[blocks.perm])
        rng = check_random_state(self.random_state)
        generators = rng.spawn(n_jobs)
        res = _solve(Xr, Xc, yv, alpha, loss=self.loss, penalty=self.penalty, blocks=blocks,
                     method=method, screening=screening, n_jobs=n_jobs, step_size=step_size,
                     n_inner=n if n_inner is None else n_inner, tol=tol,
                     max_outer=max_outer, generators=generators, sampling=self.sampling,
                     w_init=w_init)
        prob = res["problem"]
        coef = np.zeros(p)
        coef[blocks.perm[prob.feat]] = res["w"]
        active = np.zeros(p, dtype=bool)
        active[blocks.perm[prob.feat]] = True
        self.coef_ = coef
        self.intercept_ = 0.0
        if classes is not None:
            self.classes_ = classes
        ev = res["evaluation"]
        self.dual_gap_ = float(ev.gap)
        self.objective_ = float(ev.primal)
        self.n_iter_ = res["n_iter"]
        self.active_set_size_ = res["active_sizes"]
        self.active_features_ = active
        self.objective_history_ = res["primals"]
        self.gap_history_ = res["gaps"]
        self.time_history_ = res["times"]
        self.n_step_halvings_ = res["n_halvings"]
        base = step_size if step_size is not None else (
            _STEP_FACTOR * _GAMMA[self.loss] / max(prob.l_max, 1e-300))  # l_max: of the sampling
        self.step_size_ = float(base * res["step_scale"])
        if not res["converged"] and tol > 0:
            warnings.warn(
                f"{type(self).__name__} did not reach the relative duality gap tol={tol:g} "
                f"in max_outer={max_outer} outer iterations (gap {ev.gap:.3g}, "
                f"objective {ev.primal:.6g}); increase max_outer or n_inner.",
                ConvergenceWarning, stacklevel=2)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _linear_predictor(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=True, dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel()

    def predict(self, X):
        """Predicted targets (squared loss) or class labels (logistic loss).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        d = self._linear_predictor(X)  # X @ coef_
        if self.loss == "logistic":
            return self.classes_[(d > 0).astype(int)]
        return d

    def score(self, X, y, sample_weight=None):
        """R^2 for the squared loss, accuracy for the logistic loss."""
        if self.loss == "logistic":
            return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))
        return super().score(X, y, sample_weight=sample_weight)


_COMMON_PARAMS_DOC = r"""
    alpha : float, default=1.0
        Regularisation strength :math:`\alpha > 0` (scikit-learn's ``Lasso`` scaling;
        see :func:`lasso_alpha_max`).
    loss : {"squared", "logistic"}, default="squared"
        :math:`f_i(z) = (z - y_i)^2/2` or :math:`\log(1 + e^{-y_i z})` with the two
        classes of ``y`` coded :math:`\pm 1`.
    penalty : {"l1", "group_l1"}, default="l1"
        :math:`\|w\|_1` or :math:`\sum_B \|w_B\|_2`.
    groups : sequence of array-like of int, default=None
        The blocks of ``"group_l1"``: a partition of ``range(n_features)`` (every
        feature in exactly one non-empty group).  Must be None for ``"l1"``.
    n_jobs : int, default=1
        Number of threads (>= 1) of the inner loop and of the full-gradient passes.
        Threads update the shared iterate lock-free (coordinate-wise atomic adds).
        The kernels are compiled with OpenMP; without it they run on one thread."""


class DSALLasso(_SparseProxLassoBase):
    r"""Doubly sparse asynchronous Lasso: screened, variance-reduced, sparse, threaded.

    Sha-DSAL (Algorithm 2 of Bao, Wu, Xian and Huang, IJCAI 2022) for
    :math:`P(w) = \frac{1}{n}\sum_i f_i(x_i^\top w) + \alpha\Omega(w)` (module
    docstring).  Each outer iteration computes the full gradient on the active set,
    the dual point and duality gap (eq. 2), removes the blocks the Gap Safe sphere
    test (eq. 3, in the correct scaling of Ndiaye et al. 2017) proves zero, then runs
    ``n_inner`` stochastic steps on the remaining blocks with the SVRG estimate
    (eq. 4-5) and the block-reweighted sparse proximal operator (eq. 6): a step on
    row :math:`i` costs the non-zeros of :math:`x_i` in the active set (plus the
    active blocks it meets, for group l1), never :math:`O(p)`.
    ``variance_reduction=False`` gives Sha-DSAL-Naive (Algorithm 1).
    ``screening=False`` gives the sparse proximal SVRG baseline
    (:class:`ProxSVRGLasso`).

    Parameters
    ----------%s
    screening : bool, default=True
        Apply the Gap Safe sphere test at every outer iteration.
    variance_reduction : bool, default=True
        SVRG gradient estimate (eq. 5).  False: plain stochastic gradient
        (Algorithm 1, Sha-DSAL-Naive); its step is halved whenever an inner loop
        does not decrease the objective, which makes it converge (slowly).
    sampling : {"importance", "uniform"}, default="importance"
        How the inner loop draws rows.  ``"uniform"``: as in the paper.
        ``"importance"`` (an addition to the paper): row :math:`i` with
        probability :math:`p_i = \frac{1}{2n} + \frac{\|x_{i,\mathcal{A}}\|^2}
        {2\sum_k \|x_{k,\mathcal{A}}\|^2}` (partially biased sampling of Needell,
        Srebro and Ward 2016; the importance sampling of Prox-SVRG, Xiao and Zhang
        2014, Section 3), the data term of row :math:`i` weighted by
        :math:`1/(np_i)` and :math:`d_B = 1/P(x_i \text{ meets } B)`, so the
        estimate stays unbiased and :math:`E\phi_i = \Omega`; the step then uses
        :math:`\max_i \|x_{i,\mathcal{A}}\|^2/(np_i) \le 2\bar L` instead of
        :math:`L_{\max}`, which matters when a few rows are much longer than the
        others (text: on 20 Newsgroups at 0.1 alpha_max, 18 outer iterations
        instead of 65; docs/studies/dsal.rst).
    step_size : float or None, default=None
        Step :math:`\eta > 0`.  None: :math:`\gamma / L` with
        :math:`L = \max_i \|x_{i,\mathcal{A}}\|^2` (uniform sampling; the weighted
        maximum above for importance sampling) over the rows restricted
        to the current active set :math:`\mathcal{A}` (recomputed when it shrinks;
        :math:`1/\gamma` bounds :math:`f_i''`).  The theory of SVRG/SAGA asks for
        about a third of that; measured on the data sets of the tests and of the
        study (docs/studies/dsal.rst), :math:`1/L_{\max}` converges with fewer
        epochs, and the safeguard below catches the cases where it is too large.
        Safeguard in every solver (not in the paper): an inner loop after which
        the objective exceeds its starting value by more than the starting
        duality gap (at most 1e-3 times the objective) is undone and the step
        halved; the step is also halved when
        the objective rose after 5 of the last 10 inner loops (oscillation).
    n_inner : int or None, default=None
        Stochastic steps per outer iteration, all threads together (paper: K per
        thread).  None: ``n_samples``.
    tol : float, default=1e-6
        Stop when the duality gap is <= ``tol * P(w)`` (relative duality gap).
    max_outer : int, default=500
        Maximum number of outer iterations.
    warm_start : bool, default=False
        Start from ``coef_`` of the previous fit (same number of features)
        instead of zero, as scikit-learn's ``warm_start``: fitting a decreasing
        sequence of alphas this way (a regularisation path) lets the Gap Safe
        test screen from the first outer iteration, since each start is close
        to the next solution.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds one generator per thread (``Generator.spawn``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        Always 0 (no intercept, as in the paper's eq. 8).
    classes_ : ndarray of shape (2,)
        Logistic loss only.
    dual_gap_ : float
        Duality gap at ``coef_`` (of the problem restricted to the blocks not
        screened, which bounds :math:`P(w) - P^*`).
    objective_ : float
        :math:`P(\text{coef\_})`.
    n_iter_ : int
        Outer iterations run (each: one inner loop of ``n_inner`` steps).
    active_set_size_ : ndarray of shape (``n_iter_``,)
        Number of active features during each outer iteration's inner loop.
    active_features_ : ndarray of shape (n_features,), bool
        Features never screened (every other feature is zero at the optimum).
    objective_history_, gap_history_, time_history_ : ndarray of shape (``n_iter_ + 1``,)
        :math:`P`, duality gap and seconds since the start of the fit at every
        evaluation (before the first and after each outer iteration).
    step_size_ : float
        Step size of the last inner loop.
    n_step_halvings_ : int
        Times the safeguard halved the step.
    n_features_in_ : int

    References
    ----------
    R. Bao, X. Wu, W. Xian, H. Huang. Doubly Sparse Asynchronous Learning for
    Stochastic Composite Optimization. IJCAI 2022 (Algorithms 1-2, eq. 2-6).

    E. Ndiaye, O. Fercoq, A. Gramfort, J. Salmon. Gap Safe screening rules for
    sparsity enforcing penalties. JMLR 18(128), 2017.

    F. Pedregosa, R. Leblond, S. Lacoste-Julien. Breaking the nonsmooth barrier: a
    scalable parallel method for composite optimization. NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from dptoolkit.linear_model import DSALLasso
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 50)); y = X[:, :3] @ [1.0, -2.0, 0.5]
    >>> model = DSALLasso(alpha=0.1, random_state=0).fit(X, y)
    >>> bool(model.dual_gap_ <= 1e-6 * model.objective_)
    True
    """

    def __init__(self, alpha=1.0, *, loss="squared", penalty="l1", groups=None, n_jobs=1,
                 screening=True, variance_reduction=True, sampling="importance", step_size=None,
                 n_inner=None, tol=1e-6, max_outer=500, warm_start=False, random_state=None):
        self.alpha = alpha
        self.loss = loss
        self.penalty = penalty
        self.groups = groups
        self.n_jobs = n_jobs
        self.screening = screening
        self.variance_reduction = variance_reduction
        self.sampling = sampling
        self.step_size = step_size
        self.n_inner = n_inner
        self.tol = tol
        self.max_outer = max_outer
        self.warm_start = warm_start
        self.random_state = random_state

    def _solver_settings(self):
        for name in ("screening", "variance_reduction"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        return ("svrg" if self.variance_reduction else "sgd"), bool(self.screening)


DSALLasso.__doc__ = DSALLasso.__doc__ % _COMMON_PARAMS_DOC


class _BaselineLasso(_SparseProxLassoBase):
    """Parameters of the baselines (no screening, no variance-reduction switch)."""

    def __init__(self, alpha=1.0, *, loss="squared", penalty="l1", groups=None, n_jobs=1,
                 sampling="importance", step_size=None, n_inner=None, tol=1e-6, max_outer=500,
                 warm_start=False, random_state=None):
        self.alpha = alpha
        self.loss = loss
        self.penalty = penalty
        self.groups = groups
        self.n_jobs = n_jobs
        self.sampling = sampling
        self.step_size = step_size
        self.n_inner = n_inner
        self.tol = tol
        self.max_outer = max_outer
        self.warm_start = warm_start
        self.random_state = random_state


class ProxSVRGLasso(_BaselineLasso):
    r"""Sparse proximal SVRG for the Lasso (baseline of paper 002, no screening).

    The variance-reduced inner loop of :class:`DSALLasso` (eq. 4-6: SVRG estimate,
    block reweighting :math:`D_i`, sparse proximal step; Xiao and Zhang 2014 with the
    sparse updates of Leblond et al. 2017) on all features, threaded the same way.
    Equivalent to ``DSALLasso(screening=False)``; the paper's asynchronous ProxSVRG
    baseline (Meng et al. 2017).

    Parameters
    ----------%s
    sampling, step_size, n_inner, tol, max_outer, warm_start, random_state
        As in :class:`DSALLasso`.

    Attributes
    ----------
    coef_ : ndarray
        As in :class:`DSALLasso`, and so are ``intercept_``, ``classes_``,
        ``dual_gap_``, ``objective_``, ``n_iter_``, ``active_set_size_``,
        ``active_features_``, ``objective_history_``, ``gap_history_``,
        ``time_history_``, ``step_size_``, ``n_step_halvings_`` and
        ``n_features_in_`` (no feature is ever screened).

    References
    ----------
    L. Xiao, T. Zhang. A proximal stochastic gradient method with progressive
    variance reduction. SIAM J. Optim. 24(4), 2014.

    Q. Meng et al. Asynchronous stochastic proximal optimization algorithms with
    variance reduction. AAAI 2017.
    """

    def _solver_settings(self):
        return "svrg", False


ProxSVRGLasso.__doc__ = ProxSVRGLasso.__doc__ % _COMMON_PARAMS_DOC


class ProxASAGALasso(_BaselineLasso):
    r"""Sparse proximal (asynchronous) SAGA for the Lasso (baseline of paper 002).

    ProxASAGA (Pedregosa, Leblond and Lacoste-Julien, NeurIPS 2017, Algorithm 1):
    a table of the last derivative :math:`f_i'` of every row and their running
    average :math:`\bar g = \frac{1}{n}\sum_i \alpha_i x_i`; a step on row :math:`i`
    uses :math:`v = (f_i'(x_i^\top\hat w) - \alpha_i)x_i + D_i\bar g` and the sparse
    proximal operator of eq. 6, touching only the support of :math:`x_i`; ``n_jobs``
    threads run lock-free with atomic coordinate updates.  No screening.  Every
    ``n_inner`` steps the exact duality gap is evaluated (one pass) for the stopping
    test; the memory is kept across these checks.

    Parameters
    ----------%s
    step_size : float or None, default=None
        None: :math:`\gamma / L_{\max}` with the safeguard of :class:`DSALLasso`
        (Pedregosa et al.'s theory uses :math:`1/(3L_{\max})`).
    n_inner : int or None, default=None
        Steps between two gap evaluations.  None: ``n_samples``.
    sampling, tol, max_outer, warm_start, random_state
        As in :class:`DSALLasso` (``max_outer`` counts gap evaluations; a warm
        start also initialises the stored derivatives at ``coef_``).

    Attributes
    ----------
    coef_ : ndarray
        As in :class:`DSALLasso`, and so are ``intercept_``, ``classes_``,
        ``dual_gap_``, ``objective_``, ``n_iter_``, ``active_set_size_``,
        ``active_features_``, ``objective_history_``, ``gap_history_``,
        ``time_history_``, ``step_size_``, ``n_step_halvings_`` and
        ``n_features_in_``; ``n_iter_`` counts blocks of ``n_inner`` steps.

    References
    ----------
    F. Pedregosa, R. Leblond, S. Lacoste-Julien. Breaking the nonsmooth barrier: a
    scalable parallel method for composite optimization. NeurIPS 2017.
    """

    def _solver_settings(self):
        return "saga", False


ProxASAGALasso.__doc__ = ProxASAGALasso.__doc__ % _COMMON_PARAMS_DOC
