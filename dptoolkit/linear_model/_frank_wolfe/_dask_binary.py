r"""Frank-Wolfe (Algorithm 2 with bounded staleness) over row blocks: the rows'
margins stay on the workers; the gradient, the vertex choice and the step loop
on one coordinating worker, fed by the client a chunk of steps at a time.

The fast solver of :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`
(Raff, Khanna and Lu, NeurIPS 2023, Algorithm 2, with the exact refresh of
:mod:`dptoolkit.linear_model._frank_wolfe`) keeps :math:`w = w_m \tilde w`, the
scaled margins :math:`\tilde v = X\tilde w`, the row gradients
:math:`q_i = \sigma(w_m \tilde v_i) - y_i` and :math:`\alpha = X^\top q` over the
``k`` (screened) columns.  Here:

* **on each block**: its rows' :math:`\tilde v` and :math:`q`, and its
  restricted rows (CSR and CSC), held for the whole fit by one *holder* per
  worker (below);
* **in the solver's loop** (:func:`_run_steps`): :math:`\alpha \in
  \mathbb{R}^k`, :math:`\tilde w`, :math:`w_m`, the product of
  :math:`(1-\eta)` since the last refresh, the gap term :math:`h =
  \langle\alpha, \tilde w\rangle` and the selector (the estimator's: the
  grouped sampler or the argmax).  The loop runs on the client in memory and
  on a local scheduler, and on the coordinating worker on a cluster (below);
  either way the selector's randomness comes from the estimator's generator,
  on the client: **nothing on a worker draws a random number**.

**One round per step.**  After the vertex of step :math:`t` is chosen
(coordinate :math:`j`, sign, hence the increment :math:`\delta` of
:math:`\tilde w_j` and the new :math:`w_m`), :math:`(j, \delta, w_m)` goes to
every block, which updates the margins and gradients of its rows containing
:math:`j` (those rows only: Algorithm 2) and returns its part of the change of
:math:`\alpha`, :math:`X_b^\top(q^{new} - q^{old})` over those rows (its
non-zero entries and their columns), and its part of the change of :math:`h`.
Whether the next step starts with a refresh depends only on the step sizes
(public), so when it does, the same round also runs the **exact refresh as a
map-reduce**: every block folds :math:`w_m` into its margins, recomputes
:math:`q` for all its rows and returns :math:`X_b^\top q_b`; :math:`\alpha` is
set to their sum.  The last step needs no round.  So a fit of :math:`T` steps
makes :math:`T` rounds (one to set up and refresh first, :math:`T - 1` steps),
each moving :math:`O(k)` numbers per block, never rows of X.

**Rounds without the client or the scheduler.**  A step's vertex depends on
the previous step's :math:`\alpha`, so the :math:`T` rounds are sequential and
a fit is bound by the latency of a round, not by bytes.  The rounds run on the
block-actor engine (:class:`~dptoolkit.distributed._engine.BlockEngine`): pure
Dask tasks prepare the blocks (clipped, restricted to the kept columns), one
actor per worker holds them with their margins for the whole fit (the rows
never move), and the coordinator (on the worker holding the most blocks) runs
the loop (:func:`_run_steps`) a chunk of ``_CHUNK_STEPS`` (128) steps per
client call: at each step it sends the round to the other holders, worker to
worker, computes its own blocks while they compute theirs, adds the outputs in
block order and selects the next vertex, then returns the state after the
chunk and the chunk's gaps (the engine logs the rounds' arguments, for
replays).  A round is then one message and reply between two workers, instead
of client to scheduler to every worker and back (:ref:`study_scaling`).  The
alternatives: a long-running task per worker exchanging messages through
``distributed.Queue`` or ``Variable`` goes through the scheduler's state for
every message; Pub/Sub would rebuild the request-reply and error handling
that actor calls already give; fewer rounds would need the rows in one place
(the step's change of :math:`\alpha` is a function of the rows holding the
chosen column).

**The uniforms.**  The coordinator must make the in-memory fit's draws without
the estimator's generator (which could regenerate the fit's noise and stays
on the client).  The grouped sampler's draw consumes the bit generator's next
doubles (``uniform(rng)``: a group, then an item; a rejection, with
probability about :math:`4\cdot 10^{-10}` a draw, takes one more) and the sign one
more, and ``Generator.random(n)`` returns those same doubles in that order.
So for a chunk of :math:`n` steps the client draws ``rng.random(3 n + 8)``
and the coordinator's selector consumes them
(:meth:`GroupedExpSampler.draw_from_uniforms`: the sampler's own ``sample``
code, its bit generator reading the buffer); if they run out (rejections), the
chunk ends at a step boundary and the client sends the next one from there.
After each chunk the client puts its generator back to its state before the
chunk and draws the uniforms consumed again, so after the fit the generator is
where the in-memory fit leaves it, whatever the chunks (the unused uniforms
were never used).  The argmax needs none.  The loop's state (the sampler's
whole state, pickled exactly; never the generator) travels each way per chunk:
:math:`O(k)`.

A block's round is a compiled kernel (``_fw_block_fast``: the NumPy
reference's arithmetic in its order, without its temporaries of the rows'
size, each of which costs a Dask worker a fresh allocation, its nanny having
set ``MALLOC_TRIM_THRESHOLD_``).  Every per-row operation is the in-memory
kernel's, in the same order and with the same C library ``exp`` (the NumPy
reference's ``np.exp`` may differ in the last bit), so the blocks' margins are
those of the in-memory fit bit for bit; :math:`\alpha` is
the same sum added in another order (block order, whatever worker holds which
block), so with the same seed the selector's draws are the same (a draw could
only differ if a uniform fell within rounding of a boundary of the sampler's
cumulative sums) and the released model equals the in-memory one up to that
rounding.

**Privacy.**  Unchanged from :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`:
the exponential mechanism at each step scores the vertices with the same
:math:`\alpha` (sensitivity :math:`\lambda L` under add/remove-one, whatever
the partition), the screening's Gaussian noise is drawn once on the client
from the sum of the blocks' column masses.  The coordinating worker holds
:math:`\alpha` and one chunk's uniforms, as the client did: the workers hold
the raw rows already, and the guarantee covers the release, not the cluster.
**Failures** are the engine's: a worker lost mid-chunk is replaced, the new
holders replay every round before the chunk from the engine's log of their
arguments (public to the engine like every round), so the margins are rebuilt
bit for bit and the chunk runs again from its first step with the same state
and the same uniforms: the same draws, and the model of a run without the
failure; no noise is drawn again.  More lost workers than
``distributed.scheduler.allowed-failures`` stop the fit with ``RuntimeError``:
nothing is released or charged (the estimator records its privacy event only
after the loop), and the noise drawn so far only entered the discarded iterate.

The multinomial model (:mod:`._dask_multinomial`) holds its blocks on the same
engine, with its own round; its loop runs on the client, a round per step from
the client to every holder: its selectors draw from the bit generator inside
the compiled multinomial kernel, which has no path from shipped uniforms yet.

References
----------
E. Raff, A. Khanna, F. Lu. Scaling Up Differentially Private LASSO Regularized
Logistic Regression via Faster Frank-Wolfe Iterations. NeurIPS 2023,
Algorithm 2.
"""
import numpy as np
import scipy.sparse as sp

from . import _fw_block_fast
from ...distributed import BlockEngine, csr_block

__all__ = ["frank_wolfe_over_blocks"]


def _sigmoid(v):
    """The kernels' logistic function: 1/(1+exp(-v)) for v >= 0, e/(1+e) else."""
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _prepare_block(Xb, yb, columns, bound):
    """The block's rows (entries clipped to [-bound, bound] if ``bound``) on the
    kept ``columns``, as CSR and CSC, and its labels in {0, 1}.  Pure."""
    Xb = csr_block(Xb)
    Xb.sum_duplicates()
    if bound is not None:
        Xb.data = np.clip(Xb.data, -bound, bound)
    if columns is not None:
        Xb = Xb[:, columns]
    Xb = sp.csr_array(Xb)
    Xb.sort_indices()
    return Xb, sp.csc_array(Xb), np.asarray(yb, dtype=np.float64)


def _start_and_rescale(Xr, vt, step, start):
    """A round's first arithmetic on the block's scaled margins ``vt``: set to
    :math:`X_b w_0` with ``start`` (each row summed in order, as the in-memory
    kernel's ``set_start``), then scaled by the step's ``rescale`` (1 unless
    :math:`w_m` underflowed)."""
    if start is not None:
        vt[:] = Xr @ start
    if step is not None and step[3] != 1.0:
        vt *= step[3]


def _block_round(prep, state, step, fold, start=None):
    """One round on one block: the step ``(j, delta, w_m, rescale)`` on its rows
    containing ``j`` (none for the first round), then (``fold`` not None) the
    exact refresh.  ``start`` (the first round of a fit from :math:`w_0`, over the
    kept columns): the margins are first set to :math:`X_b w_0`, each row summed
    in order, as the in-memory kernel's ``set_start``.

    ``state`` is the block's ``[vt, q, acc, seen, touched]`` (scaled margins and
    row gradients, and the compiled kernels' scratch over the block's columns,
    kept zero between rounds), updated in place.  Returns ``("full", X_b^T
    q_b)`` after a refresh, else ``("delta", cols, values, dh)``: the change of
    :math:`\\alpha` restricted to its non-zero entries ``cols`` (sorted) and the
    change of the gap term.  :func:`_block_round_reference`'s arithmetic, by the
    compiled kernels (``_fw_block_fast``, without its temporaries)."""
    Xr, Xc, y = prep
    vt, q, acc, seen, touched = state
    dh = 0.0
    _start_and_rescale(Xr, vt, step, start)
    if step is not None:
        j, delta, w_m, _ = step
        n, dh = _fw_block_fast.step_rows(Xc.data, Xc.indices, Xc.indptr, Xr.data,
                                         Xr.indices, Xr.indptr, y, vt, q, j, delta,
                                         w_m, acc, seen, touched)
        cols = np.sort(touched[:n])
        values = acc[cols]
        acc[cols] = 0.0                  # the scratch is zero again for the next round
        seen[cols] = 0
    if fold is not None:
        out = np.empty(Xc.shape[1])
        _fw_block_fast.refresh_rows(Xc.data, Xc.indices, Xc.indptr, y, vt, q, fold, out)
        return "full", out
    nonzero = values != 0.0              # only these go over the network
    return "delta", cols[nonzero], values[nonzero], dh


def _block_round_reference(prep, state, step, fold, start=None):
    """:func:`_block_round` in NumPy (the reference of the compiled kernels; the
    state ``[vt, q]``).  Its change of the gap term is a BLAS dot product, so it
    may differ from the kernels' in the last bits; everything else is the same
    arithmetic in the same order."""
    Xr, Xc, y = prep
    vt, q = state[:2]
    _start_and_rescale(Xr, vt, step, start)
    if step is not None:
        j, delta, w_m, _ = step
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
        q[:] = _sigmoid(vt) - y
        return "full", _gather(Xc, q)
    if rows.size > _FULL_PASS_FRACTION * vt.size:
        # most rows changed: one gather over all columns beats copying the rows
        g = np.zeros(vt.size)
        g[rows] = gamma
        change = _gather(Xc, g)
    else:
        change = np.asarray(Xr[rows].T @ gamma, dtype=np.float64)
    cols = np.flatnonzero(change)      # only these go over the network
    return "delta", cols, change[cols], dh


#: Share of a block's rows above which a step's change of alpha is one pass
#: over the block's columns rather than a scatter of the changed rows (the
#: crossover of the two on IMDB blocks of 6,250 rows and 4,096 kept columns was
#: at 0.4 of the rows, for the rows holding one column; both sum every entry in
#: row order, so the choice never changes the result).
_FULL_PASS_FRACTION = 0.35


#: Steps a coordinator runs per client call.  A call costs a round trip and the
#: solver's state both ways (O(k)); a lost worker costs the rerun of at most a
#: chunk.
_CHUNK_STEPS = 128

#: Uniforms the client draws for a chunk beyond ``uniforms_per_step`` a step: the
#: sampler's rejections (probability about 4e-10 a step) take more.
_SPARE_UNIFORMS = 8


def _gather(Xc, v):
    """X_b^T v by columns (CSC: one gather per column), float64."""
    return np.asarray(Xc.T @ v, dtype=np.float64)


class _Logistic:
    """What a block actor computes for the binary model: the state ``[vt, q]``
    (and scratch) and the round :func:`_block_round` with arguments ``(step,
    fold)``.  (The multinomial model: :class:`._dask_multinomial._Softmax`.)"""

    stateful, in_thread = True, False
    round = staticmethod(_block_round)

    @staticmethod
    def start(prep, b=None):
        n, k = prep[0].shape
        return [np.zeros(n), np.zeros(n), np.zeros(k), np.zeros(k, dtype=np.uint8),
                np.empty(k, dtype=np.int64)]


_LOGISTIC = _Logistic()


def _run_chunks(engine, params, selector):
    """The solver's steps, chunks of them run by the coordinator (:func:`_chunk`);
    the selector's uniforms drawn here, from its generator, for a chunk at a
    time (a chunk broken by a lost worker runs again with them).  Returns
    :func:`frank_wolfe_over_blocks`'s result."""
    rng, per_step = selector.rng, selector.uniforms_per_step
    loop, gaps, spare = None, [], _SPARE_UNIFORMS
    while loop is None or not loop.done:
        n = min(_CHUNK_STEPS, params[1] - (loop.t if loop is not None else 0))
        uniforms = state = None
        if per_step:
            # the generator's state is put back after the chunk and moved by
            # the uniforms consumed only: after the fit it is the in-memory
            # fit's, whatever the chunks
            state = rng.bit_generator.state
            uniforms = rng.random(per_step * n + spare)
        ran = -(loop.t if loop is not None else 0)
        loop, chunk_gaps, consumed = engine.run_chunk(
            _chunk, loop, uniforms, n, params, selector if loop is None else None)
        ran += loop.t
        gaps.extend(chunk_gaps)
        if per_step:
            rng.bit_generator.state = state
            rng.random(consumed)
        # a chunk without a step (rejections ate the spare uniforms): more spare
        spare = (_SPARE_UNIFORMS if ran > 0 or loop.done
                 else 2 * abs(spare) + per_step * n)
    return loop.result(gaps, params[1])


def _chunk(loop, uniforms, n_steps, params, selector=None):
    """At most ``n_steps`` steps from ``loop`` (None: from the start, with
    ``selector``), the selector drawing from ``uniforms`` (None: it needs none),
    as a generator of rounds (run on the coordinator).  Returns ``(loop, gaps,
    consumed)``: the state after the last step run, their gaps and the uniforms
    consumed.  A function of the blocks' states at its start and of its
    arguments: a chunk broken by a lost worker runs again to the same result."""
    chosen = loop.selector if loop is not None else selector
    chosen.feed(uniforms)
    loop, gaps = yield from _run_steps(loop, n_steps, params, selector)
    consumed = loop.selector.consumed
    loop.selector.feed(None)
    return loop, gaps, consumed


def frank_wolfe_over_blocks(X, y01, *, columns, bound, l1_bound, max_iter, refresh_tol,
                            selector, stop=-np.inf, start=None):
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
    start : (ndarray of shape (n_kept,), float) or None, default=None
        ``(w0, t0)``: start from :math:`w_0` (in the L1 ball) with the step size
        :math:`2/(t + t_0 + 2)`, as the in-memory kernel's ``set_start``; None:
        from 0 with :math:`2/(t+2)`.

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
        Dask workers died repeatedly while preparing the blocks, or workers
        holding blocks (their actors) were lost mid-fit more often than
        ``distributed.scheduler.allowed-failures``; the fit stops and releases
        nothing.
    """
    params = (l1_bound, max_iter, refresh_tol, stop, start)
    # the holders' blocks and states leave the workers when the fit ends
    with BlockEngine(X, y01, _prepare_block, (columns, bound), _LOGISTIC,
                     what="the Frank-Wolfe blocks",
                     noise_before=columns is not None) as blocks:
        if blocks.actors:
            return _run_chunks(blocks, params, selector)
        return blocks.run(_steps(params, selector))


def _steps(params, selector):
    """The solver's loop on the client (:func:`frank_wolfe_over_blocks`), as a
    generator: it yields each round's ``(step, fold)`` and receives the blocks'
    outputs in block order; it returns the result."""
    loop, gaps = yield from _run_steps(None, params[1], params, selector)
    return loop.result(gaps, params[1])


class _Loop:
    r"""The solver's state between two steps (:func:`_run_steps`): :math:`\alpha`,
    :math:`\tilde w`, its support (in the order first chosen), :math:`w_m`, the
    product of :math:`(1-\eta)` since the last refresh, the gap term :math:`h`,
    the refreshes and steps done, and the selector (its sampler's state).  Pickled
    whole between the client and the coordinator (``O(k)``); the selector's
    generator never is (:class:`~dptoolkit.linear_model._frank_wolfe._distributed._GroupedSelector`)."""

    def __init__(self, alpha, selector, w0=None):
        self.alpha, self.selector = alpha, selector
        self.wt = np.zeros(alpha.size) if w0 is None else np.array(w0, dtype=np.float64)
        # the start's support in increasing order, and its gap term over it, as
        # the kernel's first refresh
        self.support = [int(c) for c in np.flatnonzero(self.wt)]
        h = 0.0
        for c in self.support:
            h += alpha[c] * self.wt[c]
        self.w_m, self.prod, self.h, self.n_refresh, self.t = 1.0, 1.0, h, 1, 0
        self.done = False

    def result(self, gaps, max_iter):
        """``(coef, gaps, n_iter, n_refresh)`` of :func:`frank_wolfe_over_blocks`
        from the steps' gaps (a list of every step's)."""
        full = np.full(max_iter, np.nan)
        full[:len(gaps)] = gaps
        return self.wt * self.w_m, full, self.t, self.n_refresh


def _run_steps(loop, n_steps, params, selector=None):
    """At most ``n_steps`` steps of the solver from ``loop`` (None: from the
    start, with ``selector``, after the set-up round), as a generator: it yields
    each round's ``(step, fold)`` and receives the blocks' outputs in block
    order; it returns ``(loop, gaps)``, the state after the last step run and
    their gaps.  Ends early, at a step boundary, when the selector has no draw
    (``select`` returns None: its uniforms ran out) or the fit is done
    (``loop.done``).  ``params``: ``(l1_bound, max_iter, refresh_tol, stop,
    start)``, ``start`` None or ``(w0, t0)`` (:func:`frank_wolfe_over_blocks`).
    Every engine runs this code, so they release the same model."""
    l1_bound, max_iter, refresh_tol, stop, start = params
    w0, t0 = (None, 0.0) if start is None else start
    if loop is None:
        alpha = np.zeros(0)
        first = (None, 1.0) if w0 is None else (None, 1.0, w0)
        for out in (yield first):         # set-up and the first refresh (t = 1)
            alpha = out[1].copy() if alpha.size == 0 else alpha + out[1]
        selector.update(alpha, np.arange(alpha.size), True)
        loop = _Loop(alpha, selector, w0)
    alpha, wt, support, selector = loop.alpha, loop.wt, loop.support, loop.selector
    gaps = []
    for _ in range(n_steps):
        if loop.done:
            break
        pick = selector.select(alpha)
        if pick is None:                  # out of uniforms: the client sends more
            break
        j, sign = pick
        t = loop.t = loop.t + 1
        s = sign * l1_bound
        gap = loop.w_m * loop.h - s * alpha[j]
        gaps.append(gap)
        eta = 2.0 / (t + t0 + 2.0)        # the kernel's, t0 = 0 without a start
        loop.w_m *= 1.0 - eta
        loop.prod *= 1.0 - eta
        rescale = 1.0
        if loop.w_m < 1e-150:    # keep wt finite (never for T < 1e70), as the kernel
            wt *= loop.w_m
            loop.h *= loop.w_m
            rescale, loop.w_m = loop.w_m, 1.0
        w_m = loop.w_m
        delta = eta * s / w_m
        wt[j] += delta
        if j not in support:
            support.append(j)
        loop.h += alpha[j] * delta
        if gap <= stop or t == max_iter:
            loop.done = True
            break
        refresh = loop.prod < 1.0 - refresh_tol          # before step t + 1: public
        outs = yield (int(j), delta, w_m, rescale), w_m if refresh else None
        if refresh:
            if w_m != 1.0:
                wt[support] *= w_m
                loop.w_m = 1.0
            new = outs[0][1].copy()
            for out in outs[1:]:                     # block order
                new += out[1]
            items = np.flatnonzero(new != alpha)
            alpha[:] = new
            h = 0.0
            for c in sorted(support):
                h += alpha[c] * wt[c]
            loop.h = h
            loop.prod = 1.0
            loop.n_refresh += 1
        else:
            changed = np.zeros(alpha.size, dtype=bool)
            for _, cols, values, dh in outs:         # block order
                alpha[cols] += values
                loop.h += dh
                changed[cols] = True
            items = np.flatnonzero(changed)
        selector.update(alpha, items, False)
    return loop, gaps
