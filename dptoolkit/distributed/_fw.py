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
a fit is bound by the latency of a round, not by bytes.  A round of Dask tasks
costs the scheduler milliseconds per task.  So pure Dask tasks prepare the blocks (clipped,
restricted to the kept columns), then one **Dask actor per worker** holds
them (``_BlockHolder``, made on the worker that holds them: the rows never
move) with their margins for the whole fit.  The worker holding the most
blocks gets the **coordinator** (:class:`_Coordinator`, a holder that also
runs the loop): the client calls it once per chunk of ``_CHUNK_STEPS`` (128)
steps, sending the loop's state and the chunk's uniforms (below); at each
step it sends the round to the other holders over its worker's own
connections (:class:`~dptoolkit.distributed._peer.Peer`: worker to worker, the message a Dask actor call
sends), computes its own blocks while they compute theirs, adds the outputs
in block order and selects the next vertex, then returns the state after the
chunk, the chunk's gaps and the rounds' arguments (the client's log, for
replays).  A round is then one message and reply between two workers,
instead of client to scheduler to every worker and back, which halves a
step's latency (measured in :ref:`study_scaling`).  The
alternatives: a long-running task per worker exchanging messages through
``distributed.Queue`` or ``Variable`` goes through the scheduler's state for
every message; Pub/Sub would rebuild the request-reply and error handling
that actor calls already give; fewer rounds would need the rows in one place
(the step's change of :math:`\alpha` is a function of the rows holding the
chosen column).  The scheduler runs the same tasks whatever :math:`T`.

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
**Failures.**  The preparation tasks are pure: a worker lost while they run
is recomputed from their inputs, and workers dying repeatedly stop the fit
before its first step with ``RuntimeError``.  Dask does *not* recompute an
actor: a worker lost mid-chunk takes its holder's margins with it (or the
coordinator), and the chunk's call fails.  The client then makes new holders
for every block (the survivors are somewhere inside the chunk; the lost
blocks' pure tasks are recomputed by Dask) and has them **replay every round
before the chunk** from its log of their arguments (public to the engine like
every round): the margins are rebuilt bit for bit, and the chunk runs again
from its first step with the same state and the same uniforms, so it makes the
same draws and the fit goes on to the model of a run without the failure; no
noise is drawn again.  More lost workers than
``distributed.scheduler.allowed-failures``, or a replacement lost too, stop
the fit with ``RuntimeError``: nothing is released or charged (the estimator
records its privacy event only after the loop), and the noise drawn so far
only entered the discarded iterate.  Each round carries its number and a
holder refuses a round out of sequence, so a holder that Dask would make
afresh behind the client's back (at a replacement worker, possibly at the old
address) is never taken for one that ran the steps.

The holders, their rounds' log and replay serve the multinomial model too
(:func:`dptoolkit.distributed.multinomial_frank_wolfe_over_blocks`): a holder
is given *what* its blocks hold and a round computes (``model``: this module's
binary :class:`_Logistic` by default).  Its loop still runs on the client, a
round per step from the client to every holder (:meth:`_Blocks.run`, a lost
holder replaced and replayed at once): its selectors draw from the bit
generator inside the compiled multinomial kernel, which has no path from
shipped uniforms yet.

References
----------
E. Raff, A. Khanna, F. Lu. Scaling Up Differentially Private LASSO Regularized
Logistic Regression via Faster Frank-Wolfe Iterations. NeurIPS 2023,
Algorithm 2.
"""
import numpy as np
import scipy.sparse as sp

from ..exceptions import nothing_released
from . import _blocksum, _fw_block_fast
from ._blocksum import _blocks, _csr_block, is_dask_array, release_from_workers
from ._peer import Peer

__all__ = ["frank_wolfe_over_blocks"]


def _sigmoid(v):
    """The kernels' logistic function: 1/(1+exp(-v)) for v >= 0, e/(1+e) else."""
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _prepare_block(Xb, yb, columns, bound):
    """The block's rows (entries clipped to [-bound, bound] if ``bound``) on the
    kept ``columns``, as CSR and CSC, and its labels in {0, 1}.  Pure."""
    Xb = _csr_block(Xb)
    Xb.sum_duplicates()
    if bound is not None:
        Xb.data = np.clip(Xb.data, -bound, bound)
    if columns is not None:
        Xb = Xb[:, columns]
    Xb = sp.csr_array(Xb)
    Xb.sort_indices()
    return Xb, sp.csc_array(Xb), np.asarray(yb, dtype=np.float64)


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
    if start is not None:
        vt[:] = Xr @ start
    if step is not None:
        j, delta, w_m, rescale = step
        if rescale != 1.0:
            vt *= rescale
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
    if start is not None:
        vt[:] = Xr @ start
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
    """What a holder runs on each block for the binary model: the state
    ``[vt, q]`` (and scratch) and the round :func:`_block_round` with arguments ``(step, fold)``.
    (The multinomial model: :class:`dptoolkit.distributed._fw_multinomial._Softmax`.)"""

    round = staticmethod(_block_round)

    @staticmethod
    def start(prep):
        n, k = prep[0].shape
        return [np.zeros(n), np.zeros(n), np.zeros(k), np.zeros(k, dtype=np.uint8),
                np.empty(k, dtype=np.int64)]


_LOGISTIC = _Logistic()


class _BlockHolder:
    """The prepared row blocks of one worker and their states, for a whole fit.

    On a ``distributed`` cluster this is a Dask *actor* (one per worker, made
    on the worker that holds the blocks): the client calls :meth:`round`
    on the worker, without creating tasks.  Without a cluster (or in
    memory) it is an ordinary object in the client's process.  It draws no
    random number: a round is a deterministic function of the blocks and of
    the rounds' arguments, all sent by the client.  ``model`` says what a block
    holds and what a round computes (its ``start(prep)`` and
    ``round(prep, state, *args)``): the binary model by default."""

    def __init__(self, *preps, model=_LOGISTIC):
        self.preps, self.model = preps, model
        self.states = [model.start(p) for p in preps]
        self.n_rounds = 0

    def round(self, number, *args):
        """Round ``number`` on every held block; their outputs in the order held.

        Raises :class:`StaleBlocksError` unless the holder has run exactly the
        ``number`` rounds before: a holder that Dask made again after its worker
        died (a new worker may take the old address) has lost the margins."""
        if number != self.n_rounds:
            raise StaleBlocksError(f"round {number} asked of blocks that ran "
                                   f"{self.n_rounds} rounds")
        self.n_rounds += 1
        return [self.model.round(p, s, *args) for p, s in zip(self.preps, self.states)]

    def replay(self, log):
        """Rounds ``0, 1, ...`` with the arguments ``log`` (a tuple per round)
        on fresh blocks; the last round's outputs.  Brings a holder made again
        after its worker died to the state of the others: a round is a
        deterministic function of the blocks and of its arguments."""
        out = None
        for number, args in enumerate(log):
            out = self.round(number, *args)
        return out


class StaleBlocksError(RuntimeError):
    """A block holder's state is not the one the client's rounds built."""


class _Coordinator(_BlockHolder):
    """The holder that runs chunks of steps (a Dask actor on the worker holding
    the most blocks): it holds its worker's blocks and calls the other holders
    (``peers``) directly, worker to worker, once a round.

    ``order[b] = (h, i)``: block ``b`` is the ``i``-th of holder ``h`` (0: this
    one, ``h >= 1``: ``peers[h - 1]``).  A chunk is :func:`_run_steps` with the
    uniforms the client drew: the coordinator draws nothing, and a chunk is a
    function of the blocks' state at its start and of its arguments, so a chunk
    broken by a lost worker runs again, on new holders replayed to its start,
    to the same result."""

    def __init__(self, order, *preps, model=_LOGISTIC):
        super().__init__(*preps, model=model)
        self.order = list(order)

    async def run(self, peers, loop, uniforms, n_steps, params, selector=None):
        """At most ``n_steps`` steps from ``loop`` (None: from the start, with
        ``selector``), the selector drawing from ``uniforms`` (None: it needs
        none), the other holders at ``peers`` (:class:`~dptoolkit.distributed._peer.Peer`, in holder order);
        a coroutine on this worker's event loop.  Returns ``(loop, gaps, log,
        consumed)``: the state after the last step run, their gaps, the
        arguments of the rounds run (the client's log, for replays) and the
        uniforms consumed."""
        import asyncio

        log = []

        async def round_on_blocks(*args):
            number = self.n_rounds
            # the peers' calls go out first; this worker's blocks meanwhile
            calls = [asyncio.ensure_future(p.call("round", number, *args)) for p in peers]
            await asyncio.sleep(0)        # the calls leave before the arithmetic
            try:
                outs = [self.round(number, *args)]
                for call in calls:
                    outs.append(await call)
            finally:
                for call in calls:
                    call.cancel()         # no-op for those done
            log.append(args)
            return [outs[h][i] for h, i in self.order]

        chosen = loop.selector if loop is not None else selector
        chosen.feed(uniforms)
        loop, gaps = await _drive_async(_run_steps(loop, n_steps, params, selector),
                                        round_on_blocks)
        consumed = loop.selector.consumed
        loop.selector.feed(None)
        return loop, gaps, log, consumed


def _lost(exc, n_lost):
    """The error of a fit whose lost block holders (Dask actors) could not all be
    made again."""
    return nothing_released(RuntimeError(
        f"Dask workers holding Frank-Wolfe blocks were lost mid-fit ({n_lost} lost) "
        "and their blocks could not be rebuilt within distributed.scheduler."
        f"allowed-failures (last error: {type(exc).__name__}: {exc}).  The fit "
        "stopped: nothing was released or charged, and the noise drawn so far only "
        "entered the discarded iterate; fix the workers and fit again."))


async def _results(holders, *args):
    """``round(*args)`` called on every holder (Dask actors) at once, then their
    results, in order; the error instead of the result of a holder whose worker
    was lost.

    Awaited on the client's event loop, and run on each worker's event loop
    (``separate_thread=False``): a round wakes no other thread, which on a busy
    machine costs more than the round's arithmetic."""
    calls = []
    for h in holders:
        try:
            calls.append(h.round(*args, separate_thread=False))
        except RuntimeError as exc:      # the scheduler marked the actor lost
            calls.append(exc)
    outs = []
    for call in calls:
        try:
            outs.append(call if isinstance(call, Exception) else await call)
        except (OSError, RuntimeError) as exc:
            # OSError: the worker is unreachable; RuntimeError: the scheduler marked
            # the actor lost, or a holder refused a round out of sequence
            outs.append(exc)
    return outs


class _Blocks:
    """The row blocks and their states: in holders, one per Dask worker (actors)
    or one in the client's process (in memory, or Dask without a cluster).
    ``y`` is the labels the ``model`` reads (binary: {0, 1}; multinomial: the
    class indices)."""

    def __init__(self, X, y, columns, bound, model=_LOGISTIC, coordinated=False):
        self.actors, self.futures, self.preps = False, [], []
        self.coordinated, self.blocks, self.peers = coordinated, [], []
        self.n_rounds, self.n_lost, self.log, self.model = 0, 0, [], model
        if not is_dask_array(X):
            self.holders = [_BlockHolder(_prepare_block(X, y, columns, bound), model=model)]
            self.order = [(0, 0)]
            return
        from dask import delayed

        xs, ys = _blocks(X, y)
        cols = delayed(columns, pure=True) if columns is not None else None
        preps = [delayed(_prepare_block, pure=True)(xb, yb, cols, bound)
                 for xb, yb in zip(xs, ys)]
        client = _distributed_client()
        if client is None:      # a local scheduler: the blocks are in this process
            self.holders = [_BlockHolder(*_blocksum._compute(preps, "the blocks"),
                                         model=model)]
            self.order = [(0, b) for b in range(len(preps))]
            return
        self.client = client
        self._start_actors(client, preps)

    def _start_actors(self, client, preps):
        """Prepare the blocks on the workers, then one holder actor per worker
        with the blocks it holds (the rows never leave the workers)."""

        futures = client.compute(preps)
        self.blocks = futures
        try:
            self._place(futures)
        except BaseException as exc:    # an interrupt too: nothing stays on the workers
            self.close()
            if not isinstance(exc, Exception):
                raise
            if type(exc).__name__ == "KilledWorker":
                raise RuntimeError(
                    "the Dask workers preparing the Frank-Wolfe blocks died repeatedly, "
                    "so the scheduler stopped retrying (distributed.scheduler."
                    "allowed-failures).  The fit stopped before any step: nothing was "
                    "released or charged; fix the workers and fit again.") from exc
            if isinstance(exc, OSError):
                raise _lost(exc, 1) from exc
            raise
        self.actors = True

    def _place(self, futures):
        """One holder actor per worker with the prepared blocks it holds (their
        pure tasks recomputed by Dask where lost); coordinated: the worker
        holding the most blocks gets the :class:`_Coordinator`, made last with
        the others' handles."""
        from distributed import wait

        client = self.client
        wait(futures)
        bad = [f for f in futures if f.status == "error"]
        if bad:
            bad[0].result()             # the block's own error (NaN, ...)
        where = client.who_has(futures)
        by_worker = {}
        for b, f in enumerate(futures):     # "": just lost, Dask will recompute it
            by_worker.setdefault(min(where.get(f.key) or [""]), []).append(b)
        groups = sorted(by_worker.items())
        if self.coordinated:     # the coordinator's worker first: most blocks
            groups.sort(key=lambda g: -len(g[1]))
        self.order = [None] * len(futures)
        self.futures, self.preps = [], []
        for h, (worker, held) in enumerate(groups):
            self.preps.append([futures[b] for b in held])
            for i, b in enumerate(held):
                self.order[b] = (h, i)
        for h, (worker, held) in enumerate(groups):
            cls, first = ((_Coordinator, (self.order,)) if self.coordinated and h == 0
                          else (_BlockHolder, ()))
            self.futures.append(client.submit(
                cls, *first, *self.preps[h], workers=[worker] if worker else None,
                allow_other_workers=True, actor=True, pure=False, model=self.model))
        self.holders = [f.result() for f in self.futures]
        placed = client.who_has(self.futures)
        self.addresses = {a for f in self.futures for a in placed.get(f.key, ())}
        # the coordinator's peers: where the other holders are
        self.peers = [Peer(min(placed.get(f.key) or [""]), f.key)
                      for f in self.futures[1:]]

    def run_chunks(self, params, selector):
        """The solver's steps, chunks of them run by the coordinator; the
        selector's uniforms drawn here, from its generator, for a chunk at a
        time; a chunk broken by a lost worker runs again (:meth:`_rebuild`).
        Returns :func:`frank_wolfe_over_blocks`'s result."""
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
            while True:
                try:
                    out = self._chunk(loop, uniforms, n, params,
                                      selector if loop is None else None)
                    break
                except (OSError, RuntimeError) as exc:
                    self._rebuild(exc)
            ran = out[0].t - (loop.t if loop is not None else 0)
            loop, log, consumed = out[0], out[2], out[3]
            gaps.extend(out[1])
            self.log.extend(log)
            if per_step:
                rng.bit_generator.state = state
                rng.random(consumed)
            # a chunk without a step (rejections ate the spare uniforms): more spare
            spare = (_SPARE_UNIFORMS if ran > 0 or loop.done
                     else 2 * abs(spare) + per_step * n)
        return loop.result(gaps, params[1])

    def _chunk(self, loop, uniforms, n, params, selector):
        """One chunk on the coordinator: ``(loop, gaps, log, consumed)``."""
        return self.holders[0].run(self.peers, loop, uniforms, n, params,
                                   selector).result()

    def _rebuild(self, exc):
        """New holders for every block after a lost worker (the survivors are past
        the chunk's start), replayed to the chunk's start from the client's log
        of the rounds.  More losses than ``distributed.scheduler.allowed-failures``
        stop the fit."""
        import dask

        self.n_lost += 1
        if self.n_lost > dask.config.get("distributed.scheduler.allowed-failures", 3):
            raise _lost(exc, self.n_lost) from exc
        try:
            if not isinstance(exc, StaleBlocksError):
                self._wait_for_scheduler()
            release_from_workers(self.client, self.futures)   # the holders, not the blocks
            self._place(self.blocks)
            for call in [h.replay(self.log) for h in self.holders]:
                call.result()
        except Exception as again:  # lost again, or the blocks cannot be rebuilt
            raise _lost(again, self.n_lost) from again

    def _wait_for_scheduler(self, timeout=60.0):
        """Until the scheduler has noticed a lost worker (its blocks are then
        recomputed elsewhere), at most ``timeout`` seconds."""
        import time

        stop = time.monotonic() + timeout
        while time.monotonic() < stop:
            if not self.addresses <= set(self.client.scheduler_info()["workers"]):
                return
            time.sleep(0.05)

    def round(self, *args):
        """Run one round on every block (in this process); the outputs in block order."""
        number, self.n_rounds = self.n_rounds, self.n_rounds + 1
        outs = [h.round(number, *args) for h in self.holders]
        return [outs[h][i] for h, i in self.order]

    async def round_on_workers(self, *args):
        """:meth:`round` on the actors, awaited on the client's event loop; a
        holder whose worker was lost is made again (:meth:`_replace`)."""
        number, self.n_rounds = self.n_rounds, self.n_rounds + 1
        self.log.append(args)
        outs = await _results(self.holders, number, *args)
        for h, out in enumerate(outs):
            if isinstance(out, Exception):
                outs[h] = await self._replace(h, out)
        return [outs[h][i] for h, i in self.order]

    async def _replace(self, h, exc):
        """A new holder for the blocks of holder ``h``, whose worker was lost:
        Dask recomputes the blocks from their pure tasks wherever it can, and
        the new holder replays every round so far (the client's log of their
        arguments).  Its margins are then the lost ones bit for bit, and the
        current round's outputs what the lost holder would have returned; no
        noise is drawn again.  More losses than
        ``distributed.scheduler.allowed-failures`` stop the fit."""
        import dask

        self.n_lost += 1
        if self.n_lost > dask.config.get("distributed.scheduler.allowed-failures", 3):
            raise _lost(exc, self.n_lost) from exc
        self.futures[h].release()
        self.futures[h] = self.client.submit(_BlockHolder, *self.preps[h], actor=True,
                                             pure=False, model=self.model)
        try:
            self.holders[h] = await self.futures[h]
            return await self.holders[h].replay(self.log, separate_thread=False)
        except Exception as again:   # lost again, or the blocks cannot be rebuilt
            raise _lost(again, self.n_lost) from again

    def run(self, steps):
        """Drive the solver's generator ``steps`` (it yields a round's arguments
        and receives the round's outputs) to its return value.  On a cluster the
        whole loop runs as one coroutine on the client's event loop (the
        multinomial model; the binary one runs :meth:`run_chunks`)."""
        if not self.actors:
            return _drive(steps, self.round)
        return self.client.sync(_drive_async, steps, self.round_on_workers)

    def close(self):
        """Release the actors and the blocks (they leave the workers' memory)."""
        if self.actors or self.futures or self.blocks:
            release_from_workers(self.client, self.futures, self.blocks + [
                f for held in self.preps for f in held])
        self.futures, self.holders, self.preps, self.blocks = [], [], [], []
        self.peers = []


def _drive(steps, round_fn):
    """Run the generator ``steps``, answering each yielded round with ``round_fn``."""
    try:
        args = next(steps)
        while True:
            args = steps.send(round_fn(*args))
    except StopIteration as done:
        return done.value


async def _drive_async(steps, round_fn):
    """:func:`_drive` with a coroutine ``round_fn``."""
    try:
        args = next(steps)
        while True:
            args = steps.send(await round_fn(*args))
    except StopIteration as done:
        return done.value


def _distributed_client():
    """The ``distributed`` client Dask computes with, or None (a local scheduler:
    no client, or ``dask.config.set(scheduler="threads")`` and the like)."""
    from dask.base import get_scheduler

    client = getattr(get_scheduler(), "__self__", None)
    return client if type(client).__name__ == "Client" else None


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
    blocks = _Blocks(X, y01, columns, bound, coordinated=True)
    try:
        params = (l1_bound, max_iter, refresh_tol, stop, start)
        if blocks.actors:
            return blocks.run_chunks(params, selector)
        return blocks.run(_steps(params, selector))
    finally:
        blocks.close()   # the actors' blocks and states leave the workers


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
