r"""DP-SGD over row blocks: Poisson lots drawn per block, clipped sums on the
workers, the Gaussian noise drawn once per step on the client.

Algorithm 1 of Abadi et al. (CCS 2016) with the data split into row blocks
(a :class:`dask.array.Array` of CSR blocks, or one in-memory matrix), on the
block-actor engine of :mod:`dptoolkit.distributed._engine`.  Step :math:`t`:

1. **Lot.**  Block :math:`b` includes each of its rows independently with
   probability :math:`q`, using its own stream
   :math:`G_{b,t}` = ``PCG64(SeedSequence(w_b, spawn_key=(t,)))``, where the
   words :math:`w_b` = ``child_b.generate_state(8)`` come from the ``b``-th child
   of the *sampling* :class:`~numpy.random.SeedSequence`, seeded on the client
   by the SHA-256 digest of 32 bytes drawn from the estimator's generator
   (:func:`~dptoolkit.distributed.block_seeds`); no noise is drawn from it.  Independent Bernoulli(q)
   inclusions per block are, jointly, independent Bernoulli(q) inclusions of
   every row: the lot has the law of global Poisson sampling (Zhu and Wang
   2019; Mironov, Talwar and Zhang 2019), whatever the partition.  A task is a
   pure function of its block and of :math:`(w_b, t)`, so a retried task draws
   the same lot.  Only these words travel to the workers; inverting the
   SeedSequence mixing gives at most the digest, from which neither the noise
   generator's state nor any of its noise draws can be rebuilt (its argument in
   :func:`~dptoolkit.distributed.block_seeds`).
2. **Clipped sum.**  Each block returns the sum over its lot rows of
   :math:`\mathrm{clip}_C(\ell'(x_i^\top\theta)\,x_i)` (sparse: the columns its
   lot touches) and its lot size; they are added in block order (by the
   coordinating worker, below, or the client).
3. **Noise, once.**  The client draws :math:`z \sim N(0, I_M)` from the
   estimator's generator (for a chunk of steps at a time, below), and
   :math:`\theta \leftarrow (1 - \eta\lambda)\theta - \eta g / L + (\eta\sigma C / L) z`.

**One exchange per step.**  The margins of a lot must be taken at the
:math:`\theta` of the start of the step, which includes the noise of the
previous step, and the noise of a coordinate cannot be drawn lazily without
knowing, before the step, which coordinates the lot reads (a second exchange);
so the noise is dense, :math:`M` normals per step, drawn where the generator
is, on the client.  The in-memory kernel's lazy noise
(:mod:`dptoolkit.linear_model._glm._dpsgd`) has the same law: the two fits are
the same randomised algorithm (same privacy event) but do not consume the
generator in the same order, so they are not equal draw for draw; the
in-memory kernel keeps its order (reference fits).

**Engine.**  The steps are sequential (a step's margins need the previous
step's noisy :math:`\theta`), so their latency bounds the fit's time.  The
transformed blocks are held by the engine's block actors, one per worker
(:class:`~dptoolkit.distributed._engine.BlockEngine`; a round per step is
:class:`_Lots`: the lots' clipped sums, no state), and the coordinator runs
**a chunk of steps per client call**: the client draws the chunk's noise
(``standard_normal((n,) + theta.shape)``, the same draws in the same order as
one call per step) and sends it with :math:`\theta`; at every step the
coordinator calls the other holders directly, worker to worker (no scheduler,
no client), computes its own blocks meanwhile, adds the blocks' sums in block
order and the step's noise (:func:`_steps`, the arithmetic of every engine),
and returns the weights after the chunk and the iterates recorded in it.  A
chunk holds ``_CHUNK_BYTES`` (4 MiB) of noise: 26 steps of 20,000 weights,
10 of 50,001, so the client holds a few MiB more than one step's noise.
Every call is a pure function of the blocks and of its arguments (the seed
words, the steps, :math:`\theta`, the noise): when a worker dies, its blocks
are recomputed from their lineage, the actors rebuilt and the chunk run again
from its first step with the same :math:`\theta` and noise, to the same
result; after more losses than ``distributed.scheduler.allowed-failures`` the
fit stops (``RuntimeError``).  Without a cluster (in memory, or Dask's local
schedulers) the same rounds run in this process.

**Privacy.**  Add/remove-one neighbours with the public ``N``
(``n_samples_public``; block sizes are never used as N).  The summed clipped
gradient has L2 sensitivity :math:`C` whatever the partition; the lot is a
Poisson sample of rate :math:`q = L/N`; each step is the subsampled Gaussian
mechanism with noise multiplier :math:`\sigma` and the :math:`T` steps compose
in RDP, exactly as in memory.  No task draws noise; a step whose tasks fail
for good stops the fit (``RuntimeError``) and nothing is released.

References
----------
M. Abadi et al. Deep Learning with Differential Privacy. CCS 2016, Algorithm 1.
Y. Zhu, Y.-X. Wang. Poisson Subsampled Renyi Differential Privacy. ICML 2019.
"""
import math
import threading
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import softmax

from . import _lot_fast
from ...distributed import BlockEngine, block_seeds, step_stream

__all__ = ["sgd_over_blocks", "LOSSES"]

#: Losses of the linear models (labels in {-1, +1} for logistic and hinge; for
#: "softmax", the multinomial cross-entropy, class indices 0 .. K-1).
LOSSES = ("squared", "logistic", "hinge", "softmax")

#: Bytes of noise the client draws and sends per call (a chunk of steps).
_CHUNK_BYTES = 4 * 2 ** 20


def _chunk_steps(n_weights):
    """Steps per chunk: as many as ``_CHUNK_BYTES`` of noise hold, at least one."""
    return max(1, _CHUNK_BYTES // (8 * int(n_weights)))


def _prepare_block(Xb, yb, transform, transform_args):
    """The block as the model sees it: ``transform(Xb, *args) -> (Xt, sq)``,
    with the row norms, the targets and the warnings it raised."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Xt, sq = transform(Xb, *transform_args)
    Xt = sp.csr_array(Xt)
    return (Xt, np.sqrt(np.asarray(sq, dtype=np.float64)),
            np.ascontiguousarray(yb, dtype=np.float64),
            tuple((w.category, str(w.message)) for w in seen))


#: The C library's ``exp`` elementwise (NumPy's own ``exp`` may differ in the last bit).
_libm_exp = np.frompyfunc(math.exp, 1, 1)


def _sigmoid(v):
    """The kernels' logistic function (``_math.sigmoid``, C library ``exp``):
    1/(1+exp(-v)) for v >= 0, e/(1+e) with e = exp(v) else."""
    e = _libm_exp(-np.abs(v)).astype(np.float64)
    return np.where(v >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _dloss(loss, a, y):
    """Derivative (hinge: a subgradient) of the loss in the margin ``a``, as the
    kernels' ``_glm_kernels._dloss``."""
    if loss == "squared":
        return a - y
    if loss == "logistic":
        return -y * _sigmoid(-y * a)
    return np.where(y * a < 1.0, -y, 0.0)


def _lot_rows(prep, words, step, sampling_rate):
    """The block's Poisson lot of ``step``: its rows, increasing (int64)."""
    return np.flatnonzero(step_stream(words, step).random(prep[0].shape[0]) < sampling_rate)


#: Per-thread scratch of the compiled lot sums (``acc``, ``seen``, ``touched``), kept
#: zero between calls: a Dask worker pays for every fresh allocation of the size of
#: the model (its ``MALLOC_TRIM_THRESHOLD_`` returns freed memory at once).
_scratch = threading.local()


def _scratch_for(n_columns):
    buf = getattr(_scratch, "buffers", None)
    if buf is None or buf[0].shape[0] < n_columns:
        buf = (np.zeros(n_columns), np.zeros(n_columns, dtype=np.uint8),
               np.empty(n_columns, dtype=np.int64))
        _scratch.buffers = buf
    return buf


def _lot_gradient(prep, words, step, sampling_rate, theta, loss, clip):
    """The block's Poisson lot of ``step`` and the sum of its clipped gradients:
    :func:`_lot_gradient_reference`'s result, by the compiled kernel
    (``_lot_fast.lot_sums``, the same arithmetic in the same order) for the binary
    and regression losses."""
    if loss == "softmax":
        return _lot_gradient_reference(prep, words, step, sampling_rate, theta, loss, clip)
    Xt, rownorm, t = prep[:3]
    rows = _lot_rows(prep, words, step, sampling_rate)
    n_columns = Xt.shape[1]
    acc, seen, touched = _scratch_for(n_columns)
    n = _lot_fast.lot_sums(Xt.data, Xt.indices, Xt.indptr, rows, t, rownorm,
                           np.ascontiguousarray(theta, dtype=np.float64),
                           _lot_fast.LOSS_CODES[loss], float(clip), acc, seen, touched)
    if 2 * n > n_columns:
        # most columns touched: copy the sums out whole and clear the scratch whole
        dense = acc[:n_columns].copy()
        acc[:n_columns] = 0.0
        seen[:n_columns] = 0
        if 2 * np.count_nonzero(dense) > n_columns:  # most columns: dense is half the bytes
            return slice(None), dense, rows.size
        cols = np.flatnonzero(dense)    # the non-zero sums, as the reference keeps
        return cols, dense[cols], rows.size
    cols = np.sort(touched[:n])
    sums = acc[cols]
    acc[cols] = 0.0              # the scratch is zero again for the next call
    seen[cols] = 0
    nonzero = sums != 0.0        # a zero adds nothing (the reference's non-zero sums)
    return cols[nonzero], sums[nonzero], rows.size


def _lot_gradient_reference(prep, words, step, sampling_rate, theta, loss, clip):
    """The block's Poisson lot of ``step`` and the sum of its clipped gradients
    (NumPy; the reference of the compiled kernel, and the softmax path).

    Returns ``(columns, sums, lot_size)``: the columns where the sum is not zero
    (``"softmax"``: that the lot touches), sorted, or ``slice(None)``, all of
    them, when they are most of them, and the summed
    clipped gradient on them (one row per column, K entries each
    for ``"softmax"``, whose per-example gradient :math:`x (p - e_y)^\top` is
    clipped in Frobenius norm).  Pure: a function of the block and of public
    arguments (the seed words, the step, theta)."""
    Xt, rownorm, t = prep[:3]
    rows = _lot_rows(prep, words, step, sampling_rate)
    Xs = Xt[rows]
    if loss == "softmax":
        # the columns the lot touches, sorted (a count per column: O(nnz + M),
        # where np.unique would sort the lot's indices)
        cols = np.flatnonzero(np.bincount(Xs.indices, minlength=Xt.shape[1]))
        resid = softmax(np.asarray(Xs @ theta), axis=1)
        resid[np.arange(rows.size), t[rows].astype(np.int64)] -= 1.0
        gn = np.sqrt((resid ** 2).sum(axis=1)) * rownorm[rows]
        over = gn > clip
        resid[over] *= (clip / gn[over])[:, None]
        # the lot's rows on the columns they touch: X_lot^T resid, (n_cols, K)
        compact = sp.csr_array((Xs.data, np.searchsorted(cols, Xs.indices), Xs.indptr),
                               shape=(rows.size, cols.size))
        return cols, np.asarray(compact.T @ resid), rows.size
    s = _dloss(loss, np.asarray(Xs @ theta).ravel(), t[rows])
    gn = np.abs(s) * rownorm[rows]
    over = gn > clip
    s[over] *= clip / gn[over]
    sums = np.bincount(Xs.indices, weights=Xs.data * np.repeat(s, np.diff(Xs.indptr)),
                       minlength=Xt.shape[1])
    # the non-zero sums (a zero adds nothing: the same total as the touched columns)
    cols = np.flatnonzero(sums)
    if 2 * cols.size > Xt.shape[1]:   # most columns: dense is half the bytes
        return slice(None), sums, rows.size
    return cols, sums[cols], rows.size


def _steps(words, theta, first, noise, n, record, rule):
    """Steps ``first, ..., first + n - 1`` of the update from ``theta``, as a
    generator: it yields a round's arguments ``(words, step, lot_args)``
    (:class:`_Lots`) and is sent the blocks' ``(columns, sums, lot_size)`` of
    that step's lots, in block order (:func:`~dptoolkit.distributed._engine.drive`).

    ``noise`` holds the steps' standard normals, shape ``(n,) + theta.shape``
    (None without noise), drawn on the client from the estimator's generator;
    ``record`` the steps (sorted) whose iterate is kept; ``rule`` the public
    ``(sampling_rate, loss, clip, decay, learning_rate, c, denominator)``.
    Returns ``(theta, iterates, done, finite)``: the weights after the last step
    run, one iterate per entry of ``record`` reached, the steps run and False if
    the weights became non-finite (the run stops there).  Every engine runs
    this same arithmetic, so they release the same model bit for bit."""
    _, _, _, decay, learning_rate, c, denominator = rule
    iterates, r = [], 0
    for i in range(int(n)):
        step = first + i
        grad = np.zeros(theta.shape)
        count = 0
        for cols, sums, size in (yield words, step, _lot_args(rule, theta)):
            grad[cols] += sums           # block order
            count += size
        den = denominator if denominator > 0 else max(count, 1)
        theta = decay * theta - learning_rate * grad / den
        if c > 0:
            theta += c * noise[i]        # the step's noise, drawn on the client
        while r < len(record) and record[r] == step:
            iterates.append(theta)
            r += 1
        if not np.all(np.isfinite(theta)):
            return theta, iterates, i + 1, False
    return theta, iterates, int(n), True


def _lot_args(rule, theta):
    """The arguments of :func:`_lot_gradient` after the block, its words and the step."""
    return (rule[0], theta, rule[1], rule[2])


class _Lots:
    """What a block actor computes for DP-SGD: no state but the block's index
    ``b``; a round ``(words, step, lot_args)`` is the clipped sum of the block's
    lot of ``step`` (:func:`_lot_gradient`, pure; no noise)."""

    stateful = False
    #: the coordinator computes its blocks in a thread: its event loop stays free
    #: to exchange the peers' messages meanwhile
    in_thread = True

    @staticmethod
    def start(prep, b):
        return b

    @staticmethod
    def round(prep, b, words, step, lot_args):
        return _lot_gradient(prep, words[b], step, *lot_args)


def _warnings_of(prep):
    """The warnings the transformation raised on the block."""
    return prep[3]


def sgd_over_blocks(X, y, *, transform, transform_args=(), n_features, loss,
                    alpha, learning_rate, clip, sampling_rate, denominator, n_steps,
                    noise_std, rng, record_steps=(), n_classes=2, theta0=None):
    r"""Mini-batch (DP-)SGD over the row blocks of X (module docstring).

    Parameters
    ----------
    X : {ndarray, sparse matrix} or dask.array.Array of shape (n_samples, n_features_in)
        In memory: one block.  Dask: CSR row blocks, chunked along rows only.
    y : array-like or dask.array.Array of shape (n_samples,)
        Targets (``{-1, +1}`` for the logistic and hinge losses), X's row chunks.
    transform : callable
        Pure, picklable ``transform(X_b, *transform_args) -> (Xt_b, sq_b)``: the
        per-example transformation (rows of norm <= 1, intercept column) and the
        squared row norms.  Warnings it raises are re-raised on the client.
    transform_args : tuple
    n_features : int
        Columns :math:`M` of the transformed rows.
    loss : {"squared", "logistic", "hinge", "softmax"}
        ``"softmax"``: the multinomial cross-entropy, ``y`` the class indices,
        weights of shape ``(n_features, n_classes)``, each per-example gradient
        :math:`x (p - e_y)^\top` clipped in Frobenius norm (so the lot's sum has
        L2 sensitivity :math:`C`, as for the binary losses).
    alpha : float
        L2 regularisation :math:`\lambda`.
    learning_rate : float
        :math:`\eta`.
    clip : float
        Per-example gradient norm bound :math:`C` (``inf``: no clipping).
    sampling_rate : float
        :math:`q \in (0, 1]`, the Poisson inclusion probability.
    denominator : float
        The public divisor :math:`L` of a private fit; ``<= 0`` divides by the
        realised lot size (non-private fits only, as in memory).
    n_steps : int
    noise_std : float
        :math:`\sigma C` (0: no noise).
    rng : numpy.random.Generator
        The estimator's generator: the noise, drawn after the 32 bytes that seed
        the separate sampling sequence of the per-block streams (:func:`block_seeds`).
    record_steps : sequence of int
        0-based steps after which :math:`\theta` is recorded.
    n_classes : int, default=2
        K, the columns of the weights with ``loss="softmax"`` (ignored otherwise).
    theta0 : ndarray of shape (n_features,) or (n_features, n_classes) or None
        The starting weights (public: post-processing of earlier releases);
        None starts from zero.

    Returns
    -------
    theta : ndarray of shape (n_features,) or (n_features, n_classes)
    trace : ndarray of shape (len(record_steps),) + theta.shape
    finite : bool
        False if :math:`\theta` became non-finite (the fit stopped there).
    done : int
        Steps run.

    Raises
    ------
    ValueError
        Unknown ``loss``; ``noise_std > 0`` with ``denominator <= 0``;
        ``theta0`` of the wrong shape; a Dask
        ``X``/``y`` not chunked as required; NaN or infinity in X (from the
        transformation, raised on the client).
    RuntimeError
        Dask workers died repeatedly: the fit stops, nothing is released.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if noise_std > 0 and denominator <= 0:
        raise ValueError("noise_std > 0 needs a constant denominator > 0")
    M = int(n_features)
    shape = (M, int(n_classes)) if loss == "softmax" else (M,)
    theta = np.zeros(shape) if theta0 is None else np.array(theta0, dtype=np.float64)
    if theta.shape != shape:
        raise ValueError(f"theta0 must have shape {shape}, got {theta.shape}")
    with BlockEngine(X, y, _prepare_block, (transform, transform_args), _Lots(),
                     what="the clipped gradient sums") as blocks:
        for block_warnings in blocks.map(_warnings_of):   # once each, as in memory
            for category, message in dict.fromkeys(block_warnings):
                warnings.warn(message, category, stacklevel=3)
        words = block_seeds(rng, blocks.n_blocks)
        record = np.asarray(record_steps, dtype=np.int64)
        trace = np.zeros((record.size,) + shape)
        c = learning_rate * noise_std / denominator if noise_std > 0 else 0.0
        rule = (sampling_rate, loss, clip, 1.0 - learning_rate * alpha, learning_rate, c,
                denominator)
        chunk = _chunk_steps(theta.size)
        r, done, finite = 0, 0, True
        while finite and done < int(n_steps):
            n = min(chunk, int(n_steps) - done)
            # the chunk's noise, from the estimator's generator: the same draws, in
            # the same order, as one standard_normal(shape) per step
            noise = rng.standard_normal((n,) + shape) if c > 0 else None
            todo = record[(record >= done) & (record < done + n)]
            theta, iterates, ran, finite = blocks.run_chunk(_steps, words, theta, done, noise,
                                                            n, todo, rule)
            for it in iterates:
                trace[r] = it
                r += 1
            done += ran
    return theta, trace, finite, done
