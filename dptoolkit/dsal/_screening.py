r"""Evaluation, duality gap and Gap Safe screening of the DSAL solvers (Ndiaye,
Fercoq, Gramfort and Salmon, JMLR 2017; the scaling is derived in
:mod:`dptoolkit.dsal`), and the public helpers :func:`lasso_alpha_max` and
:func:`lasso_duality_gap`.
"""

import numpy as np
from scipy.special import expit, xlogy

from . import _prox_fast
from .._validation import check_scalar_range
from ._problem import ActiveProblem, _MIN_NNZ_PER_THREAD, prepare_problem


#: Relative guard of the sphere test against rounding: a block is removed only if
#: its score is below 1 - _SCREEN_MARGIN (its score is >= 1 at the optimum when it
#: is non-zero there, up to rounding in X^T f'(Xw)).
_SCREEN_MARGIN = 1e-9


#: The active sub-matrix is rebuilt when the screened blocks hold at least this
#: fraction of its non-zeros (so a step costs at most 1/(1 - 0.1) times the
#: non-zeros of the row restricted to the blocks not yet screened).
_REBUILD_FRACTION = 0.1


def loss_values(z, y, loss):
    r"""Per-row losses :math:`f_i(z_i)`.

    Parameters
    ----------
    z : ndarray of shape (n_samples,)
        Margins :math:`x_i^\top w`.
    y : ndarray of shape (n_samples,)
        Targets (squared) or labels in :math:`\{-1, +1\}` (logistic).
    loss : {"squared", "logistic"}

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    if loss == "squared":
        return 0.5 * (z - y) ** 2
    return np.logaddexp(0.0, -y * z)


def loss_derivative(z, y, loss):
    """Per-row derivatives :math:`f_i'(z_i)` (parameters as :func:`loss_values`).

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    if loss == "squared":
        return z - y
    return -y * expit(-y * z)


def conjugate_values(fp, y, loss, c):
    r"""Conjugates :math:`f_i^*(c\,f_i'(z_i))` at the scaled dual point.

    Parameters
    ----------
    fp : ndarray of shape (n_samples,)
        Derivatives :math:`f_i'(z_i)` (:func:`loss_derivative`).
    y : ndarray of shape (n_samples,)
    loss : {"squared", "logistic"}
    c : float
        Dual scale, :math:`0 < c \le 1` (``Evaluation.c``).

    Returns
    -------
    ndarray of shape (n_samples,)
        Their sum, divided by :math:`-n`, is the dual objective.
    """
    u = c * fp
    if loss == "squared":
        return 0.5 * u * u + u * y
    s = np.clip(-u * y, 0.0, 1.0)  # = c * sigmoid(-y z) in [0, 1]
    return xlogy(s, s) + xlogy(1.0 - s, 1.0 - s)


def block_norms(v, block_ptr, penalty):
    r""":math:`|v_j|` (l1) or :math:`\|v_B\|_2` per block (group l1).

    Parameters
    ----------
    v : ndarray of shape (n_features,)
        Features in block order.
    block_ptr : ndarray of int64 of shape (n_blocks + 1,)
        Block ``b`` is ``v[block_ptr[b]:block_ptr[b + 1]]``.
    penalty : {"l1", "group_l1"}

    Returns
    -------
    ndarray of shape (n_blocks,)
        The penalty is their sum; the dual norm :math:`\Omega^D` their maximum.
    """
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


def gap_safe_keep(block_dual, dual_norm, alpha, gap, n, gamma, block_opnorm):
    r"""Boolean mask of the blocks the Gap Safe sphere test cannot remove.

    A block is removed when :math:`\|g_B\|_* / \max(\alpha, \Omega^D(g)) +
    r\|X_B\|_2 < 1` with :math:`r = \sqrt{2G/(\gamma n)}/\alpha` (module
    docstring; eq. 3 of the paper in the scaling of Ndiaye et al. 2017), less a
    relative margin of 1e-9 against rounding.

    Parameters
    ----------
    block_dual : ndarray of shape (n_blocks,)
        :math:`\|g_B\|_*` per block (``Evaluation.block_dual``).
    dual_norm : float
        :math:`\Omega^D(g)`.
    alpha : float
        Regularisation strength.
    gap : float
        Duality gap :math:`G` at the point.
    n : int
        Number of rows.
    gamma : float
        :data:`GAMMA` of the loss.
    block_opnorm : ndarray of shape (n_blocks,)
        :math:`\|X_B\|_2` per block (:func:`block_opnorms`).

    Returns
    -------
    ndarray of bool of shape (n_blocks,)
    """
    radius = np.sqrt(2.0 * max(gap, 0.0) / (gamma * n)) / alpha
    score = block_dual / max(alpha, dual_norm) + radius * block_opnorm
    return score >= 1.0 - _SCREEN_MARGIN


def local_pass(problem, w, y, loss, n_jobs):
    r"""One pass over the active rows: margins, derivatives, gradient sum, loss sum.

    Parameters
    ----------
    problem : ActiveProblem
    w : ndarray of shape (problem.n_features,)
        Point on the active set.
    y : ndarray of shape (n_rows,)
        The rows' targets (a worker passes its own rows).
    loss : {"squared", "logistic"}
    n_jobs : int
        Threads at most (fewer below 50,000 non-zeros per thread).

    Returns
    -------
    z : ndarray of shape (n_rows,)
        :math:`X_\mathcal{A} w`.
    fp : ndarray of shape (n_rows,)
        :math:`f'(z)`.
    gsum : ndarray of shape (problem.n_features,)
        :math:`X_\mathcal{A}^\top f'(z)`, a sum over the rows (not divided by n).
    loss_sum : float
        :math:`\sum_i f_i(z_i)`.
    """
    n = y.size
    if problem.csr.nnz < _MIN_NNZ_PER_THREAD * n_jobs:
        n_jobs = max(1, problem.csr.nnz // _MIN_NNZ_PER_THREAD)
    z = np.empty(n)
    _prox_fast.compressed_matvec(problem.csr.data, problem.csr.indices,
                                 problem.csr.indptr, w, z, 1.0, n_jobs)
    fp = loss_derivative(z, y, loss)
    gsum = np.empty(problem.n_features)
    _prox_fast.compressed_matvec(problem.csc.data, problem.csc.indices,
                                 problem.csc.indptr, fp, gsum, 1.0, n_jobs)
    return z, fp, gsum, float(loss_values(z, y, loss).sum())


class Evaluation:
    r"""Gradient, dual scaling, primal/dual objectives and gap at w.

    Built in two steps so that the distributed solver can sum the per-row
    parts over the workers: the constructor takes the full gradient ``g`` and
    computes the block dual norms and the dual scale ``c``; :meth:`finish`
    takes the sums of f_i(z_i) and of f_i^*(c f_i'(z_i)).  :meth:`local` does
    both on one machine (and keeps ``fp`` = f'(z), the SVRG snapshot).

    Parameters
    ----------
    g : ndarray of shape (n_features,)
        Full gradient :math:`X_\mathcal{A}^\top f'(Xw)/n` on the active set.
    w : ndarray of shape (n_features,)
        The point.
    block_ptr : ndarray of int64
        ``ActiveProblem.block_ptr``.
    alpha : float
    penalty : {"l1", "group_l1"}

    Attributes
    ----------
    fp : ndarray of shape (n_samples,) or None
        :math:`f'(z)` (:meth:`local` only).
    g : ndarray of shape (n_features,)
    block_dual : ndarray of shape (n_active_blocks,)
        :math:`\|g_B\|_*` per block.
    dual_norm : float
        :math:`\Omega^D(g)`.
    c : float
        Dual scale :math:`\alpha/\max(\alpha, \Omega^D(g))`.
    penalty_value : float
        :math:`\Omega(w)`.
    primal, dual, gap : float
        :math:`P(w)`, :math:`D(\theta)` and their difference (after :meth:`finish`).
    """

    __slots__ = ("fp", "g", "block_dual", "dual_norm", "c", "penalty_value",
                 "primal", "dual", "gap")

    def __init__(self, g, w, block_ptr, alpha, penalty):
        self.fp = None
        self.g = g
        self.block_dual = block_norms(g, block_ptr, penalty)
        self.dual_norm = float(self.block_dual.max()) if self.block_dual.size else 0.0
        self.penalty_value = float(block_norms(w, block_ptr, penalty).sum())
        self.c = _dual_scale(self.dual_norm, alpha)

    def finish(self, loss_sum, conj_sum, alpha, n):
        r"""Set ``primal``, ``dual`` and ``gap`` from the per-row sums.

        Parameters
        ----------
        loss_sum : float
            :math:`\sum_i f_i(x_i^\top w)`.
        conj_sum : float
            :math:`\sum_i f_i^*(c\,f_i'(x_i^\top w))` (:func:`conjugate_values`).
        alpha : float
        n : int

        Returns
        -------
        self
        """
        self.primal, self.dual, self.gap = _gap_from_sums(
            loss_sum, conj_sum, self.penalty_value, alpha, n)
        return self

    @classmethod
    def local(cls, problem, w, y, alpha, loss, penalty, n_jobs):
        """The whole evaluation on one machine (:func:`local_pass`, then :meth:`finish`).

        Parameters
        ----------
        problem : ActiveProblem
        w : ndarray of shape (problem.n_features,)
        y : ndarray of shape (n_samples,)
        alpha : float
        loss : {"squared", "logistic"}
        penalty : {"l1", "group_l1"}
        n_jobs : int

        Returns
        -------
        Evaluation
        """
        n = y.size
        # an inner loop with too large a step can overflow; the step control
        # rejects the non-finite objective, so no RuntimeWarning
        with np.errstate(over="ignore", invalid="ignore"):
            _, fp, gsum, loss_sum = local_pass(problem, w, y, loss, n_jobs)
            ev = cls(gsum / n, w, problem.block_ptr, alpha, penalty)
            ev.fp = fp
            conj = float(conjugate_values(fp, y, loss, ev.c).sum())
        return ev.finish(loss_sum, conj, alpha, n)

    def restrict(self, keep_feat, keep_blocks):
        """The same evaluation for a sub-problem where only zero blocks were removed.

        Parameters
        ----------
        keep_feat : ndarray of bool of shape (n_features,)
        keep_blocks : ndarray of bool of shape (n_active_blocks,)

        Returns
        -------
        self
        """
        self.g = self.g[keep_feat]
        self.block_dual = self.block_dual[keep_blocks]
        return self


def screen(ev, prob, opnorm, alpha, n, gamma, final):
    """Gap Safe test of the active blocks at the evaluation ``ev``.

    Rebuilding the sub-problem costs a few passes over the sub-matrix, so it is
    done once the screened blocks hold >= 10% of its non-zeros (or when
    ``final``); until then they stay in the (still valid) sub-problem and are
    tested again later.  Screening decisions are final: the test is safe.

    Parameters
    ----------
    ev : Evaluation
        At the current point of ``prob``.
    prob : ActiveProblem
    opnorm : ndarray of shape (n_blocks,)
        :func:`block_opnorms` of all blocks (indexed by ``prob.blocks``).
    alpha : float
    n : int
        Number of rows.
    gamma : float
        :data:`GAMMA` of the loss.
    final : bool
        The point already meets the tolerance: rebuild whatever was screened.

    Returns
    -------
    ndarray of bool of shape (n_active_blocks,) or None
        The blocks to keep when the sub-problem should be rebuilt, else None.
    """
    keep = gap_safe_keep(ev.block_dual, ev.dual_norm, alpha, ev.gap, n, gamma,
                         opnorm[prob.blocks])
    if keep.all():
        return None
    removed_nnz = prob.block_nnz[~keep].sum()
    if final or removed_nnz >= _REBUILD_FRACTION * prob.csr.nnz:
        return keep
    return None


def drop_blocks(prob, w, keep):
    """Remove screened blocks from the problem and the point.

    Parameters
    ----------
    prob : ActiveProblem
    w : ndarray of shape (prob.n_features,)
    keep : ndarray of bool of shape (n_active_blocks,)
        From :func:`screen`.

    Returns
    -------
    prob : ActiveProblem
        ``prob.restrict(keep)``.
    w : ndarray
        The kept coordinates (contiguous).
    keep_feat : ndarray of bool of shape (n_features,)
        ``keep`` per feature (for :meth:`Evaluation.restrict`).
    moved : bool
        A removed coordinate was non-zero, so the point changed and must be
        evaluated again; otherwise the old evaluation restricts exactly.
    """
    keep_feat = np.repeat(keep, np.diff(prob.block_ptr))
    moved = bool(np.any(w[~keep_feat] != 0.0))
    return prob.restrict(keep), np.ascontiguousarray(w[keep_feat]), keep_feat, moved


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
        As in :class:`~dptoolkit.linear_model.DSALLasso`.

    Returns
    -------
    float
    """
    Xr, Xc, yv, _, blocks = prepare_problem(X, y, loss, penalty, groups)
    n = yv.size
    g = Xc.T @ loss_derivative(np.zeros(n), yv, loss) / n
    return float(block_norms(g, blocks.ptr, penalty).max())


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
        As in :class:`~dptoolkit.linear_model.DSALLasso`.

    Returns
    -------
    primal, dual, gap : float
    """
    alpha = check_scalar_range(alpha, "alpha", low=0.0, low_open=True)
    Xr, Xc, yv, _, blocks = prepare_problem(X, y, loss, penalty, groups)
    coef = np.asarray(coef, dtype=np.float64).ravel()
    if coef.size != Xr.shape[1]:
        raise ValueError(f"coef must have {Xr.shape[1]} entries, got {coef.size}")
    if not np.all(np.isfinite(coef)):
        raise ValueError("coef contains NaN or infinity")
    prob = ActiveProblem.full(Xr, Xc, blocks, penalty)
    ev = Evaluation.local(prob, np.ascontiguousarray(coef[blocks.perm]), yv, alpha, loss,
                          penalty, 1)
    return ev.primal, ev.dual, ev.gap
