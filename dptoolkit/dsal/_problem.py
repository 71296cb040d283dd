r"""Problem set-up of the DSAL solvers: losses and penalties, feature blocks, the
compact active sub-problem (:class:`ActiveProblem`), row sampling, and the
preparation of X and y shared by every solver.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets

from . import _prox_fast
from .._validation import check_sparse_X


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


#: The full-gradient passes use at most nnz / _MIN_NNZ_PER_THREAD threads: below
#: that, waking threads costs more than the pass.
_MIN_NNZ_PER_THREAD = 50_000


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
        ``Blocks.ptr``.
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


#: Below this many stored entries :func:`prepare_problem` converts a canonical
#: CSR or CSC matrix by one compiled transpose instead of SciPy's conversions,
#: which cost more than a whole fit of a small problem (2 * 50,000 non-zeros
#: per thread; docs/studies/dsal.rst).
COMPILED_LOOP_MAX_NNZ = 2 * _MIN_NNZ_PER_THREAD


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
    SciPy's own transpose of the int32 arrays is faster.  None for any other input, which
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
