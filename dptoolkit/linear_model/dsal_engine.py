r"""The DSAL engine: problem set-up, Gap Safe screening, step control, outer loop.

This module is the solver behind :class:`~dptoolkit.linear_model.DSALLasso`,
:class:`~dptoolkit.linear_model.ProxSVRGLasso` and
:class:`~dptoolkit.linear_model.ProxASAGALasso` (shared memory, threads) and behind
:func:`dptoolkit.distributed.dsal.fit_distributed` (MPI).  The estimators validate
their parameters and call :func:`solve`; the distributed solver runs the same
pieces (:class:`ActiveProblem`, :class:`Evaluation`, :func:`screen`,
:class:`StepControl`) with the per-row sums reduced over workers.  Benchmarks time
one inner epoch with :func:`inner_epoch`.

Paper: R. Bao, X. Wu, W. Xian, H. Huang, *Doubly Sparse Asynchronous Learning for
Stochastic Composite Optimization*, IJCAI 2022 (DSAL).  Every solver minimises

.. math:: P(w) = \frac{1}{n}\sum_{i=1}^n f_i(x_i^\top w) + \alpha\,\Omega(w),

with :math:`f_i(z) = (z - y_i)^2/2` (``loss="squared"``; :math:`P` is then exactly
the objective of :class:`sklearn.linear_model.Lasso` without intercept) or
:math:`f_i(z) = \log(1 + e^{-y_i z})`, :math:`y_i = \pm 1` (``loss="logistic"``), and
:math:`\Omega(w) = \|w\|_1` (``penalty="l1"``) or :math:`\sum_B \|w_B\|_2` over a
partition of the features into blocks (``penalty="group_l1"``).

Screening (Section 2.1, eq. 2-3 of the paper) follows the Gap Safe rules of Ndiaye,
Fercoq, Gramfort and Salmon (JMLR 2017) for the objective exactly as scaled above.
The paper's eq. 2-3 mix two normalisations of the regulariser (:math:`n\lambda`
and :math:`\lambda`), so they cannot be applied as printed; the rules below are
derived in one scaling, and the tests check that no feature active at the optimum
is ever removed.  Written for
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

The cost of a stochastic step is the non-zeros of the sampled row restricted to
the active set (the "doubly sparse" update of Section 2.1): the active
sub-matrix is stored compactly (:class:`ActiveProblem`) and the kernel
(:func:`inner_epoch`) never touches a coordinate outside the sampled row.

The interface, in the order a solver uses it:

Problem set-up
    :func:`check_loss_penalty`, :func:`prepare_targets`, :func:`prepare_problem`,
    :class:`Blocks`, :class:`Compressed`, :class:`ActiveProblem`,
    :func:`row_sampling`, :func:`segment_sq_norms`, :func:`block_opnorms`.
Evaluation and screening
    :func:`loss_values`, :func:`loss_derivative`, :func:`conjugate_values`,
    :func:`block_norms`, :func:`local_pass`, :class:`Evaluation`,
    :func:`gap_safe_keep`, :func:`screen`, :func:`drop_blocks`.
Step and outer loop
    :func:`default_step`, :class:`StepControl`, :func:`inner_epoch`, :func:`solve`,
    :func:`expand_solution`.
Working sets with dual extrapolation
    :func:`solve_working_set` (small penalties; the default of
    :class:`~dptoolkit.linear_model.DSALLasso`), :func:`solve_subproblem`,
    :func:`extrapolate_residuals`, :func:`dual_objective`,
    :func:`working_set_columns`; the gap they report is that of the full problem.
Public helpers
    :func:`lasso_alpha_max`, :func:`lasso_duality_gap`.
Constants
    :data:`LOSSES`, :data:`PENALTIES`, :data:`SAMPLINGS`, :data:`METHODS`,
    :data:`GAMMA`, :data:`STEP_FACTOR`, :data:`WS_P0`, :data:`WS_K`,
    :data:`WS_CHECK`, :data:`WS_TOL_RATIO`, :data:`WS_MAX_EPOCHS`,
    :data:`COMPILED_LOOP_MAX_NNZ`.

References
----------
E. Ndiaye, O. Fercoq, A. Gramfort, J. Salmon. Gap Safe screening rules for
sparsity enforcing penalties. JMLR 18(128), 2017 (the sphere test above).

F. Pedregosa, R. Leblond, S. Lacoste-Julien. Breaking the nonsmooth barrier: a
scalable parallel method for composite optimization. NeurIPS 2017 (the SAGA
method of :func:`solve`).

M. Massias, A. Gramfort, J. Salmon. Celer: a fast solver for the Lasso with dual
extrapolation. ICML 2018; M. Massias, S. Vaiter, A. Gramfort, J. Salmon. Dual
extrapolation for sparse generalized linear models. JMLR 21(234), 2020 (the
working sets and the extrapolated dual point of :func:`solve_working_set`).

Q. Bertrand, M. Massias. Anderson acceleration of coordinate descent. AISTATS
2021 (the primal extrapolation of :func:`solve_subproblem`).
"""
import time

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, xlogy
from sklearn.utils.multiclass import check_classification_targets

from .. import _prox_fast
from .._validation import check_scalar_range, check_sparse_X

__all__ = [
    "LOSSES", "PENALTIES", "SAMPLINGS", "METHODS", "GAMMA", "STEP_FACTOR",
    "loss_values", "loss_derivative", "conjugate_values", "block_norms",
    "gap_safe_keep", "Blocks", "Compressed", "ActiveProblem", "segment_sq_norms",
    "row_sampling", "block_opnorms", "local_pass", "Evaluation", "StepControl",
    "screen", "drop_blocks", "default_step", "inner_epoch", "solve", "expand_solution",
    "WS_P0", "WS_K", "WS_CHECK", "WS_TOL_RATIO", "WS_MAX_EPOCHS", "COMPILED_LOOP_MAX_NNZ",
    "extrapolate_residuals",
    "dual_objective", "working_set_columns", "solve_subproblem", "solve_working_set",
    "check_loss_penalty", "prepare_targets", "prepare_problem",
    "lasso_alpha_max", "lasso_duality_gap",
]

#: Losses :math:`f_i`: ``"squared"`` :math:`(z - y_i)^2/2`, ``"logistic"``
#: :math:`\log(1 + e^{-y_i z})`.
LOSSES = ("squared", "logistic")
#: Penalties :math:`\Omega`: ``"l1"`` :math:`\|w\|_1`, ``"group_l1"`` :math:`\sum_B \|w_B\|_2`.
PENALTIES = ("l1", "group_l1")
#: Row samplings of the inner loop (see :func:`row_sampling`).
SAMPLINGS = ("uniform", "importance")
#: Inner-loop gradient estimates: ``"sgd"`` (DSAL-Naive, Algorithm 1), ``"svrg"``
#: (DSAL / ProxSVRG, eq. 4-5), ``"saga"`` (ProxASAGA).
METHODS = ("sgd", "svrg", "saga")
#: :math:`1/\gamma` is the smoothness constant of :math:`f_i`: :math:`f_i'' \le 1`
#: (squared), :math:`\le 1/4` (logistic).
GAMMA = {"squared": 1.0, "logistic": 4.0}
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
#: Default step size factor: step = STEP_FACTOR * gamma / L_max, with
#: L_max = max_i ||x_{i,A}||^2 (see :func:`default_step`).
STEP_FACTOR = 1.0


# ---------------------------------------------------------------------------
# losses, penalties, duality gap
# ---------------------------------------------------------------------------

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
        Dual scale, :math:`0 < c \le 1` (:attr:`Evaluation.c`).

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
        :math:`\|g_B\|_*` per block (:attr:`Evaluation.block_dual`).
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


# ---------------------------------------------------------------------------
# block structure and the active sub-problem
# ---------------------------------------------------------------------------

class Blocks:
    """A partition of the features into contiguous blocks after a permutation.

    Parameters
    ----------
    perm : ndarray of int64 of shape (n_features,)
        ``perm[k]`` is the original index of permuted feature ``k``.
    ptr : ndarray of int64 of shape (n_blocks + 1,)
        Block ``b`` is permuted features ``ptr[b] .. ptr[b+1]-1``.

    Attributes
    ----------
    perm, ptr : ndarray
        As given.
    n_blocks : int
    sizes : ndarray of int64 of shape (n_blocks,)
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
        """One block per feature, identity permutation (``penalty="l1"``)."""
        return cls(np.arange(p, dtype=np.int64), np.arange(p + 1, dtype=np.int64))

    @classmethod
    def from_groups(cls, groups, p):
        """Validate ``groups`` (a partition of ``range(p)``) and build the blocks.

        Parameters
        ----------
        groups : sequence of array-like of int
            Every feature in exactly one non-empty group.
        p : int
            Number of features.

        Returns
        -------
        Blocks

        Raises
        ------
        TypeError
            ``groups`` not a sequence, or a group of non-integer indices.
        ValueError
            An empty group, an index outside ``[0, p)``, or not a partition.
        """
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


def segment_sq_norms(data, indptr):
    """Squared norms of the rows (CSR) or columns (CSC) of compressed arrays.

    Parameters
    ----------
    data : ndarray of float64 of shape (nnz,)
    indptr : ndarray of int64 of shape (n_segments + 1,)

    Returns
    -------
    ndarray of shape (n_segments,)
    """
    out = np.empty(indptr.size - 1)
    _prox_fast.compressed_sq_norms(data, indptr, out)
    return out


def row_sampling(row_sq, sampling):
    r"""Row probabilities (None: uniform) and the smoothness constant of the step.

    ``"uniform"``: every row with probability 1/n; the step uses
    L_max = max_i ||x_i||^2.  ``"importance"``: half uniform, half proportional to
    ||x_i||^2 (partially biased sampling, Needell, Srebro and Ward 2016):
    p_i = 1/(2n) + ||x_i||^2 / (2 n L_avg); the data term of row i is weighted by
    1/(n p_i), whose smoothness max_i ||x_i||^2 / (n p_i) <= 2 L_avg replaces
    L_max (text data: a few very long documents make L_max >> L_avg).

    Parameters
    ----------
    row_sq : ndarray of shape (n_samples,)
        Squared row norms on the active set.
    sampling : {"uniform", "importance"}

    Returns
    -------
    prob : ndarray of shape (n_samples,) or None
        Row probabilities; None for uniform sampling (or all-zero rows).
    l_max : float
        :math:`\max_i \|x_i\|^2` (uniform) or :math:`\max_i \|x_i\|^2/(np_i)`.

    References
    ----------
    D. Needell, N. Srebro, R. Ward. Stochastic gradient descent, weighted sampling,
    and the randomized Kaczmarz algorithm. Math. Program. 155, 2016.
    """
    l_max = float(row_sq.max()) if row_sq.size else 0.0
    if sampling == "uniform" or l_max == 0.0:
        return None, l_max
    n = row_sq.size
    prob = 0.5 / n + 0.5 * row_sq / float(row_sq.sum())
    return prob, float((row_sq / (n * prob)).max())


def block_opnorms(Xc, ptr, penalty):
    """||x_j||_2 per column (l1) or spectral norm ||X_B||_2 per block (group l1).

    Blocks of more than 256 columns use the Frobenius norm, a safe upper bound
    (a larger radius term only makes the test more conservative).

    Parameters
    ----------
    Xc : scipy.sparse.csc_array of shape (n_samples, n_features)
        Canonical CSC matrix, columns in block order.
    ptr : ndarray of int64 of shape (n_blocks + 1,)
        :attr:`Blocks.ptr`.
    penalty : {"l1", "group_l1"}

    Returns
    -------
    ndarray of shape (n_blocks,)
    """
    col_sq = segment_sq_norms(Xc.data, Xc.indptr)
    if penalty == "l1":
        return np.sqrt(col_sq)
    sizes = np.diff(ptr)
    out = np.sqrt(np.add.reduceat(col_sq, ptr[:-1]))  # Frobenius norms
    for b in np.flatnonzero((sizes > 1) & (sizes <= 256)):
        XB = Xc[:, ptr[b]:ptr[b + 1]]
        gram = (XB.T @ XB).toarray()
        out[b] = np.sqrt(max(np.linalg.eigvalsh(gram)[-1], 0.0))
    return out


class Compressed:
    """Raw CSR or CSC arrays (float64 data, int64 indices and indptr).

    The kernels take these three arrays, never SciPy objects; the distributed
    solver sends them to its workers.

    Parameters
    ----------
    data : array-like of shape (nnz,)
    indices : array-like of shape (nnz,)
    indptr : array-like of shape (n_segments + 1,)

    Attributes
    ----------
    data, indices, indptr : ndarray
        Contiguous float64, int64, int64 copies (no copy when already so).
    nnz : int
    """

    __slots__ = ("data", "indices", "indptr")

    def __init__(self, data, indices, indptr):
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)

    @classmethod
    def of(cls, M):
        """The arrays of a SciPy CSR or CSC matrix ``M``."""
        return cls(M.data, M.indices, M.indptr)

    @property
    def nnz(self):
        return int(self.indptr[-1])


class ActiveProblem:
    r"""The sub-matrix of the active blocks in a compact numbering.

    :meth:`full` builds the problem on every block; :meth:`restrict` drops
    blocks by filtering the stored entries (a few vectorised passes over the
    non-zeros, no sparse format conversion).

    Parameters
    ----------
    n : int
        Number of rows.
    csr, csc : Compressed
        The active sub-matrix, columns numbered ``0 .. n_features - 1``.
    blocks : ndarray of int64 of shape (n_active_blocks,)
        Ids of the active blocks (in :class:`Blocks` numbering).
    feat : ndarray of int64 of shape (n_features,)
        Permuted feature position of each active column.
    block_ptr : ndarray of int64 of shape (n_active_blocks + 1,)
        Active block ``b`` is compact columns ``block_ptr[b] .. block_ptr[b+1]-1``.
    penalty : {"l1", "group_l1"}
    sampling : {"uniform", "importance"}, default="uniform"
        Row sampling of the inner loop (:func:`row_sampling`).

    Attributes
    ----------
    block_of : ndarray of int64 of shape (n_features,)
        Active block of each compact column.
    block_nnz : ndarray of int64 of shape (n_active_blocks,)
        Stored non-zeros per block.
    row_sq : ndarray of shape (n,)
        Squared row norms on the active set.
    l_max : float
        Smoothness constant of the sampling (:func:`row_sampling`).
    dblock : ndarray of shape (n_active_blocks,)
        :math:`d_B = 1/P(\text{the sampled row meets } B)` (:math:`n/n_B` under
        uniform sampling; 0 for a block no row meets), the block reweighting
        :math:`D_i` of eq. 6.
    row_weight, alias_prob, alias_idx : ndarray or None
        Importance weights :math:`1/(np_i)` and the alias table of the
        sampling; None under uniform sampling.
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
        self.row_sq = segment_sq_norms(csr.data, csr.indptr)
        prob, self.l_max = row_sampling(self.row_sq, sampling)
        # d_B = 1 / P(the sampled row meets B): n / n_B under uniform sampling
        reach = self.block_reach(prob)
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
        """The problem on every block.

        Parameters
        ----------
        Xr, Xc : scipy.sparse.csr_array, scipy.sparse.csc_array
            Canonical matrices from :func:`prepare_problem`.
        blocks : Blocks
        penalty : {"l1", "group_l1"}
        sampling : {"uniform", "importance"}, default="uniform"

        Returns
        -------
        ActiveProblem
        """
        return cls(Xr.shape[0], Compressed.of(Xr), Compressed.of(Xc),
                   np.arange(blocks.n_blocks, dtype=np.int64),
                   np.arange(Xr.shape[1], dtype=np.int64), blocks.ptr.copy(), penalty,
                   sampling)

    def sampling_kwargs(self):
        """Keyword arguments of the kernel for this problem's row sampling.

        Returns
        -------
        dict
            ``row_weight``, ``alias_prob``, ``alias_idx``.
        """
        return {"row_weight": self.row_weight, "alias_prob": self.alias_prob,
                "alias_idx": self.alias_idx}

    def restrict(self, keep):
        """The sub-problem of the blocks where ``keep`` is True.

        Parameters
        ----------
        keep : ndarray of bool of shape (n_active_blocks,)

        Returns
        -------
        ActiveProblem
            Same sampling; ``dblock``, ``l_max`` and the alias table recomputed
            on the sub-matrix.
        """
        sizes = np.diff(self.block_ptr)
        keep_feat = np.repeat(keep, sizes)
        remap = np.cumsum(keep_feat, dtype=np.int64) - 1
        csr = self.csr
        entry = keep_feat[csr.indices]
        cum = np.zeros(csr.indices.size + 1, dtype=np.int64)
        np.cumsum(entry, out=cum[1:])
        new_csr = Compressed(csr.data[entry], remap[csr.indices[entry]], cum[csr.indptr])
        csc = self.csc
        col_nnz = np.diff(csc.indptr)
        centry = np.repeat(keep_feat, col_nnz)
        cptr = np.zeros(int(keep_feat.sum()) + 1, dtype=np.int64)
        np.cumsum(col_nnz[keep_feat], out=cptr[1:])
        new_csc = Compressed(csc.data[centry], csc.indices[centry], cptr)
        block_ptr = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
        np.cumsum(sizes[keep], out=block_ptr[1:])
        return ActiveProblem(self.n, new_csr, new_csc, self.blocks[keep], self.feat[keep_feat],
                              block_ptr, self.penalty, self.sampling)

    @property
    def n_features(self):
        """Number of active features (compact columns)."""
        return self.feat.size

    def abs_column_sums(self, weights):
        r""":math:`|X_\mathcal{A}|^\top v`: per active column, the weighted sum of the
        absolute values of its entries.

        Parameters
        ----------
        weights : ndarray of shape (n,)
            One weight :math:`v_i` per row.

        Returns
        -------
        ndarray of shape (n_features,)
        """
        out = np.empty(self.n_features)
        _prox_fast.compressed_matvec(np.abs(self.csc.data), self.csc.indices,
                                     self.csc.indptr, weights, out)
        return out

    def block_reach(self, prob):
        """Per block: the number of rows whose support meets it, or the probability
        that the sampled row meets it.

        Parameters
        ----------
        prob : ndarray of shape (n,) or None
            Row probabilities; None counts rows.

        Returns
        -------
        ndarray of shape (n_active_blocks,)
        """
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
        :attr:`ActiveProblem.block_ptr`.
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


# ---------------------------------------------------------------------------
# the solver
# ---------------------------------------------------------------------------

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


def default_step(l_max, loss, step_size=None):
    """Base step of an inner loop: ``step_size``, or STEP_FACTOR * gamma / L.

    Parameters
    ----------
    l_max : float
        Smoothness constant of the sampling on the active set
        (:attr:`ActiveProblem.l_max`).
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


# ---------------------------------------------------------------------------
# the working-set solver with dual extrapolation
# ---------------------------------------------------------------------------

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
#: :func:`solve_working_set` runs its whole loop in one compiled call (l1
#: penalty, coordinate-descent sub-problems) with ``n_jobs=1``, and with more
#: threads below this many non-zeros, where the NumPy loop's full-gradient passes
#: run on one thread anyway (2 * 50,000 non-zeros per thread).  Measured
#: (docs/studies/dsal.rst): on the small LIBSVM sets the NumPy calls of each outer
#: iteration were most of a fit; on a8a.t, a9a.t, mushrooms, a9a and w8a the
#: compiled loop was 1.5 to 2.2 times faster, on IMDB 1.9 times (CPU time).
COMPILED_LOOP_MAX_NNZ = 2 * _MIN_NNZ_PER_THREAD


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


def expand_solution(blocks, prob, w, n_features):
    """Coefficients and active mask in the original feature order.

    Parameters
    ----------
    blocks : Blocks
    prob : ActiveProblem
        The final active problem.
    w : ndarray of shape (prob.n_features,)
        Compact solution.
    n_features : int

    Returns
    -------
    coef : ndarray of shape (n_features,)
        Zero outside the active set.
    active : ndarray of bool of shape (n_features,)
        Features never screened.
    """
    coef = np.zeros(n_features)
    coef[blocks.perm[prob.feat]] = w
    active = np.zeros(n_features, dtype=bool)
    active[blocks.perm[prob.feat]] = True
    return coef, active


# ---------------------------------------------------------------------------
# input handling shared by the estimators and the public helpers
# ---------------------------------------------------------------------------

def check_loss_penalty(loss, penalty, groups):
    """Check ``loss`` and ``penalty``, and that ``groups`` goes with ``"group_l1"``.

    Parameters
    ----------
    loss : str
    penalty : str
    groups : sequence of array-like of int or None

    Raises
    ------
    ValueError
        Unknown loss or penalty, ``"group_l1"`` without groups, or groups with
        ``"l1"``.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    if penalty == "group_l1" and groups is None:
        raise ValueError("penalty='group_l1' needs groups (a partition of the features)")
    if penalty == "l1" and groups is not None:
        raise ValueError("groups is only used with penalty='group_l1'")


def prepare_targets(y, loss):
    r"""Targets of the solver.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Real targets (squared loss) or two class labels (logistic loss).
    loss : {"squared", "logistic"}

    Returns
    -------
    y : ndarray of float64 of shape (n_samples,)
        The targets, or the labels coded :math:`\pm 1` (``classes[1]`` is +1).
    classes : ndarray of shape (2,) or None
        Logistic loss only.

    Raises
    ------
    ValueError
        NaN or infinity in real targets; not exactly two classes.
    """
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


def _csc_of_canonical(X):
    """Canonical CSC float64/int64 copy of a small canonical CSR or CSC matrix, or None.

    One pass of a compiled transpose: on a small matrix (fewer than
    :data:`COMPILED_LOOP_MAX_NNZ` stored entries) :func:`check_sparse_X` makes
    several SciPy conversions, which cost more than a whole fit.  On large ones
    SciPy's own transpose of the int32 arrays is faster (IMDB, 8.8 million
    non-zeros: 0.35 s against 1.0 s).  None for any other input, which
    :func:`check_sparse_X` then converts.
    """
    if not (sp.issparse(X) and X.format in ("csr", "csc") and X.ndim == 2
            and X.nnz < COMPILED_LOOP_MAX_NNZ
            and X.dtype.kind in "biuf" and X.indices.dtype == X.indptr.dtype
            and X.indptr.dtype in (np.int32, np.int64) and min(X.shape) > 0
            and X.has_canonical_format):
        return None
    n, p = X.shape
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    if X.format == "csr":
        arrays = _prox_fast.compressed_transpose(
            data, np.ascontiguousarray(X.indices, dtype=np.int64),
            np.ascontiguousarray(X.indptr, dtype=np.int64), p)
    else:
        if not np.all(np.isfinite(data)):
            arrays = None
        else:
            keep = data != 0
            indptr = X.indptr.astype(np.int64)
            if keep.all():
                arrays = data.copy(), X.indices.astype(np.int64), indptr
            else:
                cum = np.zeros(data.size + 1, dtype=np.int64)
                np.cumsum(keep, out=cum[1:])
                arrays = data[keep], X.indices[keep].astype(np.int64), cum[indptr]
    if arrays is None:
        raise ValueError("X contains NaN or infinity")
    return sp.csc_array(arrays, shape=(n, p))


def prepare_problem(X, y, loss, penalty, groups, *, csr=True):
    """Canonical CSR/CSC in block order, targets and blocks.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    loss : {"squared", "logistic"}
    penalty : {"l1", "group_l1"}
    groups : sequence of array-like of int or None
        Blocks of ``"group_l1"`` (:meth:`Blocks.from_groups`).

    csr : bool, default=True
        Also build the CSR matrix (the stochastic solvers need it; the
        working-set solver works on columns only).

    Returns
    -------
    Xr : scipy.sparse.csr_array of shape (n_samples, n_features) or None
        Float64 data, int64 sorted indices, no explicit zeros, columns in block
        order (None when ``csr=False``).
    Xc : scipy.sparse.csc_array of shape (n_samples, n_features)
        The same matrix in CSC.
    y : ndarray of float64 of shape (n_samples,)
        :func:`prepare_targets`.
    classes : ndarray of shape (2,) or None
    blocks : Blocks

    Raises
    ------
    ValueError, TypeError
        As :func:`check_loss_penalty`, :func:`prepare_targets`,
        :meth:`Blocks.from_groups`; NaN or infinity in ``X``; shapes that differ.
    """
    check_loss_penalty(loss, penalty, groups)
    if csr:
        Xr, Xc = check_sparse_X(X, formats=("csr", "csc"))
    else:
        Xr, Xc = None, _csc_of_canonical(X)
        if Xc is None:
            (Xc,) = check_sparse_X(X, formats=("csc",))
    if np.any(Xc.data == 0):
        Xc = Xc.copy()
        Xc.eliminate_zeros()
        if csr:
            Xr = Xr.copy()
            Xr.eliminate_zeros()
    n, p = Xc.shape
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must be 1-D with {n} entries (one per row of X), got shape {y.shape}")
    yv, classes = prepare_targets(y, loss)
    if penalty == "l1":
        blocks = Blocks.singletons(p)
    else:
        blocks = Blocks.from_groups(groups, p)
        if not np.array_equal(blocks.perm, np.arange(p)):
            Xc = _canonical(Xc[:, blocks.perm], "csc")
            Xr = _canonical(Xc.tocsr(), "csr") if csr else None
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
