r"""Frank-Wolfe (Algorithm 2 with bounded staleness) over row blocks: the rows'
margins stay on the workers, the gradient and the vertex choice on the client.

The fast solver of :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`
(Raff, Khanna and Lu, NeurIPS 2023, Algorithm 2, with the exact refresh of
:mod:`dptoolkit.linear_model._frank_wolfe`) keeps :math:`w = w_m \tilde w`, the
scaled margins :math:`\tilde v = X\tilde w`, the row gradients
:math:`q_i = \sigma(w_m \tilde v_i) - y_i` and :math:`\alpha = X^\top q` over the
``k`` (screened) columns.  Here:

* **on each block** (a pure task, its state passed from the previous task):
  its rows' :math:`\tilde v` and :math:`q`, and its restricted rows (CSR and
  CSC);
* **on the client**: :math:`\alpha \in \mathbb{R}^k`, :math:`\tilde w`,
  :math:`w_m`, the product of :math:`(1-\eta)` since the last refresh, the gap
  term :math:`h = \langle\alpha, \tilde w\rangle` and the selector (the
  estimator's: the grouped sampler or the argmax), which draws from the
  estimator's generator: **no task draws a random number**.

**One round per step.**  After the client chose the vertex of step :math:`t`
(coordinate :math:`j`, sign, hence the increment :math:`\delta` of
:math:`\tilde w_j` and the new :math:`w_m`), it sends
:math:`(j, \delta, w_m)` to every block, which updates the margins and gradients
of its rows containing :math:`j` (those rows only: Algorithm 2) and returns
its part of the change of :math:`\alpha`, :math:`X_b^\top(q^{new} - q^{old})`
over those rows (a ``k``-vector), and its part of the change of :math:`h`.  Whether the next step starts with a refresh depends only
on the step sizes (public), so when it does, the same round also runs the
**exact refresh as a map-reduce**: every block folds :math:`w_m` into its
margins, recomputes :math:`q` for all its rows and returns
:math:`X_b^\top q_b`; the client sets :math:`\alpha` to their sum.  The last
step needs no round (the model is :math:`w_m\tilde w`, on the client).  So a
fit of :math:`T` steps makes :math:`T` rounds of ``n_blocks`` tasks (one to set
up and refresh first, :math:`T - 1` steps), each moving
:math:`O(k)` numbers per block, never rows of X.

Every per-row operation is the in-memory kernel's, in the same order, so the
blocks' margins are those of the in-memory fit bit for bit; :math:`\alpha` is
the same sum added in another order (block order), so with the same seed the
selector's draws are the same (a draw could only differ if a uniform fell
within rounding of a boundary of the sampler's cumulative sums) and the
released model equals the in-memory one up to that rounding.

**Privacy.**  Unchanged from :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`:
the exponential mechanism at each step scores the vertices with the same
:math:`\alpha` (sensitivity :math:`\lambda L` under add/remove-one, whatever
the partition), the screening's Gaussian noise is drawn once on the client
from the sum of the blocks' column masses.  A lost worker's tasks are
recomputed from their inputs (pure); a fit whose tasks fail for good stops
with ``RuntimeError`` and releases nothing.

References
----------
E. Raff, A. Khanna, F. Lu. Scaling Up Differentially Private LASSO Regularized
Logistic Regression via Faster Frank-Wolfe Iterations. NeurIPS 2023,
Algorithm 2.
"""
import numpy as np
import scipy.sparse as sp

from . import _blocksum
from ._blocksum import _blocks, _csr_block, is_dask_array

__all__ = ["frank_wolfe_over_blocks"]


def _sigmoid(v):
    """The kernels' logistic function: 1/(1+exp(-v)) for v >= 0, e/(1+e) else."""
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _prepare_block(Xb, yb, columns, bound):
    """The block's rows (entries clipped to [-bound, bound] if ``bound``) on the
    kept ``columns``, as CSR and CSC, its labels in {0, 1} and zero margins."""
    Xb = _csr_block(Xb)
    Xb.sum_duplicates()
    if bound is not None:
        Xb.data = np.clip(Xb.data, -bound, bound)
    if columns is not None:
        Xb = Xb[:, columns]
    Xb = sp.csr_array(Xb)
    Xb.sort_indices()
    y = np.asarray(yb, dtype=np.float64)
    zeros = np.zeros(Xb.shape[0])
    return (Xb, sp.csc_array(Xb), y), ((zeros, zeros), None)


def _block_round(prep, previous, step, fold):
    """One round on one block: the step ``(j, delta, w_m, rescale)`` on its rows
    containing ``j``, then (``fold`` not None) the exact refresh.

    ``previous`` is the previous round's result (its first item is the state).
    Returns ``(new_state, out)``: ``out`` is ``("full", X_b^T q_b)`` after a
    refresh, else ``("delta", X_b^T gamma, dh)``.  Pure: the input state is not
    modified."""
    Xr, Xc, y = prep
    state = previous[0]
    vt, q = state[0].copy(), state[1].copy()
    if step is not None:
        j, delta, w_m, rescale = step
        if rescale != 1.0:
            vt *= rescale
        lo, hi = Xc.indptr[j], Xc.indptr[j + 1]
        rows = Xc.indices[lo:hi]
        vti = vt[rows] + delta * Xc.data[lo:hi]
        vt[rows] = vti
        qn = _sigmoid(w_m * vti) - y[rows]
        gamma = qn - q[rows]
        q[rows] = qn
        changed = gamma != 0.0
        rows, gamma = rows[changed], gamma[changed]
        dh = float(np.dot(gamma, vti[changed]))
    if fold is not None:
        if fold != 1.0:
            vt *= fold
        q = _sigmoid(vt) - y
        return (vt, q), ("full", _gather(Xc, q))
    if rows.size > _FULL_PASS_FRACTION * vt.size:
        # most rows changed: one gather over all columns beats copying the rows
        g = np.zeros(vt.size)
        g[rows] = gamma
        return (vt, q), ("delta", _gather(Xc, g), dh)
    return (vt, q), ("delta", np.asarray(Xr[rows].T @ gamma, dtype=np.float64), dh)


#: Share of a block's rows above which a step's change of alpha is one pass
#: over the block's columns rather than a scatter of the changed rows.
_FULL_PASS_FRACTION = 0.125


def _gather(Xc, v):
    """X_b^T v by columns (CSC: one gather per column), float64."""
    return np.asarray(Xc.T @ v, dtype=np.float64)


class _Blocks:
    """The row blocks and their states: on the Dask workers (persisted, each
    round's tasks depending on the previous round's states) or in memory."""

    def __init__(self, X, y01, columns, bound):
        self.dask = is_dask_array(X)
        if not self.dask:
            self.prep, self.state = zip(*[_prepare_block(X, y01, columns, bound)])
            return
        import dask
        from dask import delayed

        xs, ys = _blocks(X, y01)
        cols = delayed(columns, pure=True) if columns is not None else None
        made = dask.persist(*[delayed(_prepare_block, pure=True, nout=2)(xb, yb, cols,
                                                                          bound)
                              for xb, yb in zip(xs, ys)])   # kept on the workers
        self.prep = list(dask.persist(*[m[0] for m in made]))
        self.state = list(dask.persist(*[m[1] for m in made]))

    def round(self, step, fold):
        """Run one round on every block; the outputs in block order."""
        if not self.dask:
            self.state = [_block_round(p, s, step, fold)
                          for p, s in zip(self.prep, self.state)]
            return [r[1] for r in self.state]
        import dask
        from dask import delayed

        # the round's results stay on the workers (the next round's inputs);
        # only their small second items come to the client: 2 tasks per block
        fn = delayed(_block_round, pure=True, nout=2)
        self.state = dask.persist(*[fn(p, s, step, fold)
                                    for p, s in zip(self.prep, self.state)])
        return _blocksum._compute([r[1] for r in self.state], "the Frank-Wolfe updates")


def frank_wolfe_over_blocks(X, y01, *, columns, bound, l1_bound, max_iter, refresh_tol,
                            selector, stop=-np.inf):
    r"""The fast Frank-Wolfe solver over the row blocks of X (module docstring).

    Parameters
    ----------
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features)
        In memory: one block.  Dask: CSR row blocks, chunked along rows only.
    y01 : array-like or dask.array.Array of shape (n_samples,)
        Labels in {0, 1}, X's row chunks.
    columns : ndarray of int or None
        The kept (screened) columns, sorted; None keeps all.
    bound : float or None
        Clip every entry to ``[-bound, bound]`` first (the public bound of a
        private fit), or None.
    l1_bound : float
        :math:`\lambda`.
    max_iter : int
        :math:`T \ge 1`.
    refresh_tol : float
        :math:`\rho \in [0, \infty]`: refresh when the product of
        :math:`(1-\eta)` since the last refresh drops below :math:`1-\rho`.
    selector : object
        ``selector.update(alpha, items, first)`` after :math:`\alpha` changed
        at ``items`` (sorted; all of them with ``first``) and
        ``selector.select(alpha) -> (j, sign)``, the vertex
        :math:`\mathrm{sign}\cdot\lambda e_j` (the estimator's mechanism, its
        randomness from its own generator).
    stop : float, default=-inf
        Stop after a step whose (sum-form) gap is ``<= stop`` (non-private fits).

    Returns
    -------
    coef : ndarray of shape (n_kept,)
    gaps : ndarray of shape (max_iter,)
        Sum-form gaps, NaN after the last step run.
    n_iter, n_refresh : int

    Raises
    ------
    ValueError
        A Dask X or y not chunked as required; NaN or infinity in X.
    RuntimeError
        Dask workers died repeatedly; the fit stops and releases nothing.
    """
    blocks = _Blocks(X, y01, columns, bound)
    alpha = np.zeros(0)
    for out in blocks.round(None, 1.0):     # set-up and the first refresh (t = 1)
        alpha = out[1].copy() if alpha.size == 0 else alpha + out[1]
    k = alpha.size
    selector.update(alpha, np.arange(k), True)
    wt = np.zeros(k)
    support = []
    w_m, prod, h, n_refresh = 1.0, 1.0, 0.0, 1
    gaps = np.full(max_iter, np.nan)
    t = 0
    for t in range(1, max_iter + 1):
        j, sign = selector.select(alpha)
        s = sign * l1_bound
        gap = w_m * h - s * alpha[j]
        gaps[t - 1] = gap
        eta = 2.0 / (t + 2.0)
        w_m *= 1.0 - eta
        prod *= 1.0 - eta
        rescale = 1.0
        if w_m < 1e-150:    # keep wt finite (never for T < 1e70), as the kernel
            wt *= w_m
            h *= w_m
            rescale, w_m = w_m, 1.0
        delta = eta * s / w_m
        wt[j] += delta
        if j not in support:
            support.append(j)
        h += alpha[j] * delta
        if gap <= stop or t == max_iter:
            break
        refresh = prod < 1.0 - refresh_tol          # before step t + 1: public
        outs = blocks.round((int(j), delta, w_m, rescale), w_m if refresh else None)
        if refresh:
            if w_m != 1.0:
                wt[support] *= w_m
                w_m = 1.0
            new = outs[0][1].copy()
            for out in outs[1:]:                     # block order
                new += out[1]
            items = np.flatnonzero(new != alpha)
            alpha = new
            h = 0.0
            for c in sorted(support):
                h += alpha[c] * wt[c]
            prod = 1.0
            n_refresh += 1
        else:
            changed = np.zeros(k, dtype=bool)
            for out in outs:                         # block order
                alpha += out[1]
                h += out[2]
                changed |= out[1] != 0.0
            items = np.flatnonzero(changed)
        selector.update(alpha, items, False)
    return wt * w_m, gaps, t, n_refresh
