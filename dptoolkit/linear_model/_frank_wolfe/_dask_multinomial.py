r"""Multinomial Frank-Wolfe over row blocks: the rows' K margins stay on the
workers, the summed gradient and the vertex choice on the client.

The multinomial private LASSO of
:class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` (Khanna, Lu and Raff
2023, Appendix A, Algorithm 3; in-memory kernel ``MultinomialFW``) keeps
:math:`W = w_m \tilde W` (K x k over the k screened candidate columns), the
scaled margins :math:`\tilde V = X\tilde W^\top` (N x K), and at every step
recomputes :math:`Q = \mathrm{softmax}(w_m\tilde V) - Y` and the whole
gradient :math:`G = X^\top Q` (k x K): a step changes every row's softmax, so
there is no sparse update of :math:`G` to exploit (no staleness, unlike the
binary fast solver).  Here:

* **on each block**: its rows' :math:`\tilde V_b` (N_b x K) and class indices,
  and its restricted rows (CSR and CSC), held for the whole fit by the
  block-actor engine (:class:`~dptoolkit.distributed._engine.BlockEngine`, an
  actor per worker), with this module's :class:`_Softmax` as what a round
  computes;
* **on the client**: :math:`\tilde W`, :math:`w_m` and the selection, run by
  the in-memory kernel's own code on the summed gradient
  (``_fw_multinomial_fast.select_vertices``: the exponential mechanism, the
  Gumbel or Laplace report noisy max, or the argmax, one vertex per class)
  with the estimator's generator: **nothing on a worker draws a random
  number**.

**One round per step.**  The client sends the step's vertices (for each class
k its coordinate :math:`j_k` and the increment :math:`\delta_k` of
:math:`\tilde W_{kj_k}`), the new :math:`w_m` and the rescaling of
:math:`\tilde V` (1 unless :math:`w_m` underflows, as in the kernel); every
block adds :math:`\delta_k X_{b,:j_k}` to column k of its margins (the rows
holding :math:`j_k` only, the kernel's update), recomputes its rows' softmax and
returns its part :math:`G_b = X_b^\top Q_b` (k x K numbers: 1024 x K with
``k="auto"``, every column when the fit is not screened; or, when the
block holds few of the k columns, the rows of its non-empty ones and their
indices, whichever is fewer numbers; never a row of X).  The client adds the parts in block order
and selects the next vertices.
The first round (no step) returns the gradient at :math:`W = 0`; the last step
needs no round.  So a fit of :math:`T` steps makes :math:`T` rounds, sequential
(each step's vertices depend on the previous gradient), each one actor call
per worker: no task, no graph, no scheduler state
(:mod:`._dask_binary` gives the reasons for this choice).

The margins' update is the kernel's, in the same order, so the blocks' margins
are the in-memory ones bit for bit; the softmax and the sum :math:`X_b^\top
Q_b` are NumPy's and SciPy's, and :math:`G` is the same sum added in another
order (the blocks', then the blocks in order), so it differs from the kernel's
by rounding only, and with the same seed the selection makes the same draws (a
draw could only differ if a uniform fell within rounding of a boundary of the
cumulative sums) and the released model equals the in-memory one up to that
rounding.

**Privacy.**  Unchanged from the in-memory fit
(``dptoolkit.linear_model._frank_wolfe._multinomial``): each step's K
selections score the vertices with the same :math:`G` (sensitivity of all
classes' scores together :math:`L = 2` under add/remove-one, whatever the
partition), with noise drawn on the client only; the screening's Gaussian
noise is added on the client to the sum of the blocks' statistics.
**Failures** are the engine's: a worker lost mid-fit is replaced and the new
holders replay the logged rounds (the vertices, increments and
scalings, public to the engine like every round), so the fit goes on to the
model of a run without the failure and no noise is drawn again; beyond
``distributed.scheduler.allowed-failures`` the fit stops with
``RuntimeError`` and nothing is released or charged.

References
----------
A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression, 2023,
Appendix A (Algorithm 3).
"""
import numpy as np
import scipy.sparse as sp

from ._dask_binary import _gather, _prepare_block
from ...distributed import BlockEngine

__all__ = ["multinomial_frank_wolfe_over_blocks"]


class _Softmax:
    """What a holder runs on each block for the multinomial model: the state
    ``[vt, labels, cols, Xp]`` (the rows' scaled margins, N_b x K, their class
    indices, and, when the block holds few of the k columns, those columns and
    the block's CSC restricted to them, sharing its arrays) and the round
    :meth:`round`."""

    stateful, in_thread = True, False

    def __init__(self, n_classes):
        self.n_classes = n_classes

    def start(self, prep, b=None):
        _, Xc, y = prep
        K = self.n_classes
        cols, Xp = None, Xc
        present = np.flatnonzero(np.diff(Xc.indptr))
        # the block's other columns have G_b = 0: send the present ones with their
        # indices when that is fewer numbers (k K against |present| (K + 1))
        if present.size * (K + 1) < Xc.shape[1] * K:
            indptr = np.append(Xc.indptr[present], Xc.indptr[-1])
            cols = present
            Xp = sp.csc_array((Xc.data, Xc.indices, indptr),
                              shape=(Xc.shape[0], present.size))
        return [np.zeros((Xc.shape[0], K)), np.asarray(y, dtype=np.int64), cols, Xp]

    @staticmethod
    def round(prep, state, step):
        """The step ``(best, delta, w_m, rescale)`` on the block's rows holding
        the chosen columns (none for the first round), then the block's part
        :math:`X_b^\\top(\\mathrm{softmax}(w_m \\tilde V_b) - Y_b)` as ``(cols,
        part)``: ``part`` of shape (k, K) with ``cols`` None, or its rows ``cols``
        (the block's other columns are zero)."""
        _, Xc, _ = prep
        vt, labels, cols, Xp = state
        w_m = 1.0
        if step is not None:
            best, delta, w_m, rescale = step
            if rescale != 1.0:
                vt *= rescale
            for k, (j, d) in enumerate(zip(best, delta)):
                lo, hi = Xc.indptr[j], Xc.indptr[j + 1]
                rows = Xc.indices[lo:hi]       # distinct: a CSC column's rows
                vt[rows, k] += d * Xc.data[lo:hi]
        z = w_m * vt
        z -= z.max(axis=1, keepdims=True)
        q = np.exp(z)
        q /= q.sum(axis=1, keepdims=True)
        q[np.arange(q.shape[0]), labels] -= 1.0
        return cols, _gather(Xp, q)


def multinomial_frank_wolfe_over_blocks(X, codes, *, n_classes, columns, bound, l1_bound,
                                        max_iter, select, stop=-np.inf):
    r"""Multinomial Frank-Wolfe (Algorithm 3) over the row blocks of X (module
    docstring).

    Parameters
    ----------
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)
        In memory: one block.  Dask: CSR row blocks, chunked along rows only.
    codes : array-like or dask.array.Array of shape (n_samples,)
        Each row's class index in ``range(n_classes)``, X's row chunks.
    n_classes : int
        K > 2.
    l1_bound : float
        :math:`\lambda`, the L1 bound of every class's row of W.
    columns, bound, max_iter
        As for :func:`._dask_binary.frank_wolfe_over_blocks` (the
        screened columns, the public bound of the entries, :math:`T`).
    select : callable
        ``select(G) -> (best, sigma)``: the vertices
        :math:`\sigma_k\lambda e_{j_k}` of every class from the summed gradient
        ``G`` of shape (n_kept, K) (the estimator's mechanism, its randomness
        from its own generator).
    stop : float, default=-inf
        As for :func:`._dask_binary.frank_wolfe_over_blocks`.

    Returns
    -------
    coef : ndarray of shape (n_classes, n_kept)
    gaps : ndarray of shape (max_iter,)
        Sum-form gaps, NaN after the last step run.
    n_iter : int

    Raises
    ------
    ValueError, RuntimeError
        Those of :func:`._dask_binary.frank_wolfe_over_blocks` (bad
        chunks or NaN; workers lost beyond ``allowed-failures``: nothing released).
    """
    n_kept = X.shape[1] if columns is None else len(columns)
    with BlockEngine(X, codes, _prepare_block, (columns, bound), _Softmax(int(n_classes)),
                     what="the Frank-Wolfe blocks",
                     noise_before=columns is not None) as blocks:
        return blocks.run(_steps(n_kept, int(n_classes), l1_bound, max_iter, select, stop))


def _steps(n_kept, n_classes, l1_bound, max_iter, select, stop):
    """The solver's loop on the client, as a generator: it yields each round's
    arguments ``(step,)`` and receives the blocks' parts of the gradient in
    block order; it returns the result.  The kernel's ``_run``, step for step."""
    outs = yield (None,)
    gaps = np.full(max_iter, np.nan)
    wt, w_m, t = np.zeros((n_classes, n_kept)), 1.0, 0
    g = np.empty((n_kept, n_classes))
    cls = np.arange(n_classes)
    support = [np.zeros(0, dtype=np.int64) for _ in cls]   # sorted, per class
    for t in range(1, max_iter + 1):
        g.fill(0.0)
        for cols, part in outs:                    # block order
            if cols is None:
                g += part
            else:
                g[cols] += part
        best, sigma = select(g)
        # <G, W~> over each class's support: the kernel's sum less its zero terms
        gap = w_m * sum(float(np.dot(g[support[k], k], wt[k, support[k]])) for k in cls)
        for k in cls:
            gap -= sigma[k] * l1_bound * g[best[k], k]
        gaps[t - 1] = gap
        eta = 2.0 / (t + 2.0)
        w_m *= 1.0 - eta
        rescale = 1.0
        if w_m < 1e-150:    # keep wt finite (never for T < 1e70), as the kernel
            wt *= w_m
            rescale, w_m = w_m, 1.0
        delta = eta * sigma * l1_bound / w_m
        wt[cls, best] += delta
        for k in cls:
            if not np.isin(best[k], support[k]):
                support[k] = np.sort(np.append(support[k], best[k]))
        if gap <= stop or t == max_iter:
            break
        outs = yield ((tuple(int(j) for j in best), tuple(float(d) for d in delta), w_m,
                       rescale),)
    return wt * w_m, gaps, t
