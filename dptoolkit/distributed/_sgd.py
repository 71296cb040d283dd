r"""DP-SGD over row blocks: Poisson lots drawn per block, clipped sums on the
workers, the Gaussian noise drawn once per step on the client.

Algorithm 1 of Abadi et al. (CCS 2016) with the data split into row blocks
(a :class:`dask.array.Array` of CSR blocks, or one in-memory matrix: the local
backend of :func:`~dptoolkit.distributed.block_sum`).  Step :math:`t`:

1. **Lot.**  Block :math:`b` includes each of its rows independently with
   probability :math:`q`, using its own stream
   :math:`G_{b,t}` = ``PCG64(SeedSequence(w_b, spawn_key=(t,)))``, where the
   words :math:`w_b` = ``child_b.generate_state(8)`` come from the ``b``-th child
   :class:`~numpy.random.SeedSequence` spawned on the client from the
   estimator's generator (:func:`block_seeds`).  Independent Bernoulli(q)
   inclusions per block are, jointly, independent Bernoulli(q) inclusions of
   every row: the lot has the law of global Poisson sampling (Zhu and Wang
   2019; Mironov, Talwar and Zhang 2019), whatever the partition.  A task is a
   pure function of its block and of :math:`(w_b, t)`, so a retried task draws
   the same lot.  Only the hashed words travel to the workers, never the
   client generator's entropy or state (from which its noise could be
   regenerated).
2. **Clipped sum.**  Each block returns the sum over its lot rows of
   :math:`\mathrm{clip}_C(\ell'(x_i^\top\theta)\,x_i)` (sparse: the columns its
   lot touches) and its lot size; the client adds them in block order.
3. **Noise, once.**  The client draws :math:`z \sim N(0, I_M)` from the
   estimator's generator and sets
   :math:`\theta \leftarrow (1 - \eta\lambda)\theta - \eta g / L + (\eta\sigma C / L) z`.

**Rounds per step: one** (:math:`\theta` to the workers, the sparse sums
back).  The margins of a lot must be taken at the :math:`\theta` of the start
of the step, which includes the noise of the previous step, and the noise of a
coordinate cannot be drawn lazily on the client without knowing, before the
step, which coordinates the lot reads (a second round); so the noise is dense,
:math:`M` normals per step, drawn where the generator is.  The in-memory
kernel's lazy noise (:mod:`dptoolkit.linear_model._glm._dpsgd`) has the same
law: the two fits are the same randomised algorithm (same privacy event) but
do not consume the generator in the same order, so they are not equal draw
for draw; the in-memory kernel keeps its order (reference fits).

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
import operator
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from . import _blocksum
from ._blocksum import _blocks, _shared, is_dask_array

__all__ = ["block_seeds", "sgd_over_blocks", "LOSSES"]

#: Losses of the linear models (labels in {-1, +1} for logistic and hinge).
LOSSES = ("squared", "logistic", "hinge")

#: 32-bit words of seed material per block (256 bits).
_SEED_WORDS = 8


def block_seeds(rng, n_blocks):
    """Seed words of the per-block sampling streams, spawned from ``rng``.

    The ``b``-th child of ``rng``'s :class:`~numpy.random.SeedSequence`
    (``rng.bit_generator.seed_seq.spawn``) gives ``generate_state(8)``; block
    ``b`` draws the lot of step ``t`` from
    ``PCG64(SeedSequence(words[b], spawn_key=(t,)))``.  Spawning does not move
    ``rng``'s state (its noise stream is unchanged); it is deterministic given
    the seed.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_blocks : int

    Returns
    -------
    words : ndarray of shape (n_blocks, 8), uint32

    Raises
    ------
    ValueError
        ``rng``'s bit generator has no :class:`~numpy.random.SeedSequence`.
    """
    seq = getattr(rng.bit_generator, "seed_seq", None)
    if not isinstance(seq, np.random.SeedSequence):
        raise ValueError("random_state must be None, an int, a SeedSequence or a "
                         "Generator seeded by a SeedSequence (the per-block sampling "
                         "streams are spawned from it)")
    return np.array([c.generate_state(_SEED_WORDS) for c in seq.spawn(n_blocks)],
                    dtype=np.uint32).reshape(n_blocks, _SEED_WORDS)


def _step_stream(words, step):
    return np.random.Generator(np.random.PCG64(
        np.random.SeedSequence([int(w) for w in words], spawn_key=(int(step),))))


def _prepare_block(Xb, yb, transform, transform_args):
    """The block as the model sees it: ``transform(Xb, *args) -> (Xt, sq)``,
    with the row norms, the targets and the warnings it raised."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Xt, sq = transform(Xb, *transform_args)
    Xt = sp.csr_array(Xt)
    return (Xt, np.sqrt(np.asarray(sq, dtype=np.float64)),
            np.asarray(yb, dtype=np.float64),
            tuple((w.category, str(w.message)) for w in seen))


def _dloss(loss, a, y):
    """Derivative (hinge: a subgradient) of the loss in the margin ``a``."""
    if loss == "squared":
        return a - y
    if loss == "logistic":
        return -y * expit(-y * a)
    return np.where(y * a < 1.0, -y, 0.0)


def _lot_gradient(prep, words, step, sampling_rate, theta, loss, clip):
    """The block's Poisson lot of ``step`` and the sum of its clipped gradients.

    Returns ``(columns, sums, lot_size)``: the columns the lot touches (sorted)
    and the summed clipped gradient on them.  Pure: a function of the block and
    of public arguments (the seed words, the step, theta)."""
    Xt, rownorm, t = prep[:3]
    rows = np.flatnonzero(_step_stream(words, step).random(Xt.shape[0]) < sampling_rate)
    Xs = Xt[rows]
    s = _dloss(loss, np.asarray(Xs @ theta).ravel(), t[rows])
    gn = np.abs(s) * rownorm[rows]
    over = gn > clip
    s[over] *= clip / gn[over]
    cols, inv = np.unique(Xs.indices, return_inverse=True)
    sums = np.bincount(inv.ravel(), weights=Xs.data * np.repeat(s, np.diff(Xs.indptr)),
                       minlength=cols.size)
    return cols, sums, rows.size


def sgd_over_blocks(X, y, *, transform, transform_args=(), n_features, loss,
                    alpha, learning_rate, clip, sampling_rate, denominator, n_steps,
                    noise_std, rng, record_steps=()):
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
    loss : {"squared", "logistic", "hinge"}
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
        The estimator's generator: the noise, and the per-block streams spawned
        from it (:func:`block_seeds`).
    record_steps : sequence of int
        0-based steps after which :math:`\theta` is recorded.

    Returns
    -------
    theta : ndarray of shape (n_features,)
    trace : ndarray of shape (len(record_steps), n_features)
    finite : bool
        False if :math:`\theta` became non-finite (the fit stopped there).
    done : int
        Steps run.

    Raises
    ------
    ValueError
        Unknown ``loss``; ``noise_std > 0`` with ``denominator <= 0``; a Dask
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
    if is_dask_array(X):
        import dask
        from dask import delayed

        xs, ys = _blocks(X, y)
        prep = [delayed(_prepare_block, pure=True)(xb, yb, transform, transform_args)
                for xb, yb in zip(xs, ys)]
        prep = list(dask.persist(*prep))      # on the workers, not on the client
        step_fn = delayed(_lot_gradient, pure=True)

        def lot_sums(words, step, theta):
            th = _shared((theta,))[0]
            return _blocksum._compute(
                [step_fn(pb, wb, step, sampling_rate, th, loss, clip)
                 for pb, wb in zip(prep, words)], "the clipped gradient sums")

        seen = _blocksum._compute([delayed(operator.getitem, pure=True)(pb, 3)
                                   for pb in prep], "the transformed rows")
    else:
        prep = [_prepare_block(X, y, transform, transform_args)]
        seen = [prep[0][3]]

        def lot_sums(words, step, theta):
            return [_lot_gradient(prep[0], words[0], step, sampling_rate, theta, loss,
                                  clip)]

    for block_warnings in seen:   # once each, as the in-memory transformation warns
        for category, message in dict.fromkeys(block_warnings):
            warnings.warn(message, category, stacklevel=3)
    words = block_seeds(rng, len(prep))
    record = np.asarray(record_steps, dtype=np.int64)
    trace = np.zeros((record.size, M))
    theta = np.zeros(M)
    decay = 1.0 - learning_rate * alpha
    c = learning_rate * noise_std / denominator if noise_std > 0 else 0.0
    r, done, finite = 0, 0, True
    for step in range(int(n_steps)):
        grad = np.zeros(M)
        count = 0
        for cols, sums, size in lot_sums(words, step, theta):   # block order
            grad[cols] += sums
            count += size
        den = denominator if denominator > 0 else max(count, 1)
        theta = decay * theta - learning_rate * grad / den
        if c > 0:
            theta += c * rng.standard_normal(M)     # the step's noise, once, here
        done = step + 1
        while r < record.size and record[r] == step:
            trace[r] = theta
            r += 1
        if not np.all(np.isfinite(theta)):
            finite = False
            break
    return theta, trace, finite, done
