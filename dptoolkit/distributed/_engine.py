r"""One block-actor engine: row blocks held on their workers for a whole fit, one
round of actor calls per step, replay after a lost worker.

The iterative fits on a Dask array (Frank-Wolfe, binary and multinomial; DP-SGD)
make :math:`T` sequential rounds: each step's arguments depend on the previous
step's outputs (and, for a private fit, on noise drawn on the client).  A round
of Dask tasks costs the scheduler milliseconds per task, so this engine makes
the rounds actor calls instead:

* **Placement.**  Pure Dask tasks prepare the blocks (``prepare(X_b, y_b,
  *args)``, the family's transformation); then one **holder** per worker
  (:class:`BlockActor`, a Dask actor made on the worker that holds the blocks:
  the rows never move) keeps its blocks and their states.  The worker holding
  the most blocks gets the **coordinator** (:class:`Coordinator`, a holder
  that also runs chunks of steps).
* **Rounds.**  What a round computes is the family's ``model`` (in its wing):
  ``model.start(prep, b)`` makes block ``b``'s state, ``model.round(prep,
  state, *args)`` its output; ``model.stateful`` says whether a round changes
  the state (then rounds are numbered, logged and replayed), and
  ``model.in_thread`` whether the coordinator computes its own blocks in a
  thread (its event loop then stays free to exchange the peers' messages).
  Outputs are returned in block order, whatever worker holds which block.
* **Two drivers.**  A family's loop is a generator that yields a round's
  arguments and is sent the blocks' outputs (:func:`drive`).
  :meth:`BlockEngine.run_chunk` runs such a generator on the coordinator,
  which calls the other holders directly, worker to worker
  (:class:`~dptoolkit.distributed._peer.Peer`), with no scheduler or client in
  between: one client call per chunk of steps.  :meth:`BlockEngine.run` runs it
  on the client's event loop, a round being one call per holder (for loops
  whose random draws need the estimator's generator at every step).
* **Failures.**  The preparation tasks are pure: Dask recomputes a lost block
  from its lineage.  Dask does not recompute an actor: a worker lost mid-chunk
  takes its holder's state with it, and the call fails with ``OSError`` or
  ``RuntimeError`` (the scheduler marked the actor lost, a peer was unreachable,
  :class:`~dptoolkit.distributed._peer.PeerLostError`, or a holder refused a
  round out of sequence, :class:`StaleBlocksError`): lost-worker detection is by
  exception type.  The engine then waits until the scheduler has noticed,
  releases the old holders, places new ones on the recomputed blocks, replays
  the logged rounds (a round is a deterministic function of the blocks and of
  its arguments: the states are rebuilt bit for bit) and runs the chunk or the
  round again with the same arguments.  Nothing on a worker draws a random
  number, so the fit goes on to the model of a run without the failure and no
  noise is drawn again.  More losses than
  ``distributed.scheduler.allowed-failures`` stop the fit with
  ``RuntimeError``; nothing is released.  Each round carries its number and a
  stateful holder refuses one out of sequence, so a holder that Dask would make
  afresh behind the client's back is never taken for one that ran the rounds.
* **Without a cluster** (in memory: one block; Dask's local schedulers: the
  prepared blocks computed into this process) one holder in the client's
  process runs the same rounds.

:func:`~dptoolkit.distributed._blocksum.release_from_workers` makes the workers
forget the holders and the blocks when the fit ends, whatever its outcome.
"""
from ..exceptions import nothing_released
from . import _blocksum
from ._blocksum import _blocks, is_dask_array, release_from_workers
from ._peer import Peer

__all__ = ["BlockEngine", "StaleBlocksError", "drive", "drive_async"]


class StaleBlocksError(RuntimeError):
    """A block holder's state is not the one the client's rounds built."""


def drive(steps, round_fn):
    """Run the generator ``steps``, answering each yielded round with ``round_fn``;
    its return value."""
    try:
        args = next(steps)
        while True:
            args = steps.send(round_fn(*args))
    except StopIteration as done:
        return done.value


async def drive_async(steps, round_fn):
    """:func:`drive` with a coroutine ``round_fn``."""
    try:
        args = next(steps)
        while True:
            args = steps.send(await round_fn(*args))
    except StopIteration as done:
        return done.value


def distributed_client():
    """The ``distributed`` client Dask computes with, or None (a local scheduler:
    no client, or ``dask.config.set(scheduler="threads")`` and the like)."""
    from dask.base import get_scheduler

    client = getattr(get_scheduler(), "__self__", None)
    return client if type(client).__name__ == "Client" else None


def allowed_failures():
    """``distributed.scheduler.allowed-failures`` (3 unless configured)."""
    import dask

    return int(dask.config.get("distributed.scheduler.allowed-failures", 3))


def worker_lost(exc):
    """Whether ``exc``, raised by an actor call, means that a worker holding blocks
    was lost: ``OSError`` (unreachable) or ``RuntimeError`` (the scheduler marked
    the actor lost; :class:`~dptoolkit.distributed._peer.PeerLostError`;
    :class:`StaleBlocksError`)."""
    return isinstance(exc, (OSError, RuntimeError))


def workers_lost(what, n_lost, exc, mid_fit):
    """The error of a fit whose lost block holders could not all be made again."""
    drawn = ("The noise drawn so far entered only iterates that are discarded: "
             if mid_fit else "No noise was drawn and ")
    when = "mid-fit" if mid_fit else "before the first step"
    return nothing_released(RuntimeError(
        f"the Dask workers holding {what} died repeatedly ({n_lost} lost {when}, more "
        "than distributed.scheduler.allowed-failures; last error: "
        f"{type(exc).__name__}: {exc}).  {drawn}nothing was released or charged; fix "
        "the workers and fit again."))


class BlockActor:
    """The prepared row blocks ``preps`` (global indices ``indices``) of one worker
    and their states, for a whole fit.

    On a ``distributed`` cluster a Dask *actor* made on the worker that holds the
    blocks; without one an ordinary object in the client's process.  It draws
    no random number: a round is a deterministic function of the blocks and of
    the rounds' arguments."""

    def __init__(self, model, indices, *preps):
        self.model, self.preps = model, preps
        self.states = [model.start(p, b) for p, b in zip(preps, indices)]
        self.n_rounds = 0

    def round(self, number, *args):
        """Round ``number`` on every held block; their outputs in the order held.

        Raises :class:`StaleBlocksError` (a stateful model) unless the holder has
        run exactly the ``number`` rounds before: a holder that Dask made again
        after its worker died (a new worker may take the old address) has lost
        the states."""
        if self.model.stateful and number != self.n_rounds:
            raise StaleBlocksError(f"round {number} asked of blocks that ran "
                                   f"{self.n_rounds} rounds")
        self.n_rounds += 1
        return [self.model.round(p, s, *args) for p, s in zip(self.preps, self.states)]

    def replay(self, log):
        """Rounds ``0, 1, ...`` with the arguments ``log`` (a tuple per round) on
        fresh blocks: the states of the holders that ran them."""
        for number, args in enumerate(log):
            self.round(number, *args)


class Coordinator(BlockActor):
    """The holder that runs chunks of steps (a Dask actor on the worker holding
    the most blocks): it holds its worker's blocks and calls the other holders
    (``peers``) directly, worker to worker, once a round.

    ``order[b] = (h, i)``: block ``b`` is the ``i``-th of holder ``h`` (0: this
    one, ``h >= 1``: ``peers[h - 1]``)."""

    def __init__(self, model, indices, order, *preps):
        super().__init__(model, indices, *preps)
        self.order = list(order)

    async def run(self, peers, chunk, *args):
        """Drive the generator ``chunk(*args)`` (it yields a round's arguments and
        is sent the blocks' outputs in block order) with the rounds on every
        holder, the others at ``peers`` (:class:`~dptoolkit.distributed._peer.Peer`,
        in holder order); a coroutine on this worker's event loop.  Returns
        ``(value, log)``: the generator's return value and the arguments of the
        rounds run (stateful models; else empty)."""
        import asyncio

        log = []

        async def round_on_blocks(*args):
            number = self.n_rounds
            # the peers' calls go out first; this worker's blocks meanwhile
            calls = [asyncio.ensure_future(p.call("round", number, *args)) for p in peers]
            try:
                if self.model.in_thread:
                    # the event loop stays free to send the calls and read the replies
                    mine = await asyncio.get_running_loop().run_in_executor(
                        None, self.round, number, *args)
                else:
                    await asyncio.sleep(0)    # the calls leave before the arithmetic
                    mine = self.round(number, *args)
                outs = [mine]
                for call in calls:
                    outs.append(await call)
            finally:
                for call in calls:
                    call.cancel()             # no-op for those done
            if self.model.stateful:
                log.append(args)
            return [outs[h][i] for h, i in self.order]

        return await drive_async(chunk(*args), round_on_blocks), log


async def _results(holders, *args):
    """``round(*args)`` called on every holder (Dask actors) at once, then their
    results, in order; the error instead of the result of a holder whose worker
    was lost.  Awaited on the client's event loop, and run on each worker's
    event loop (``separate_thread=False``): a round wakes no other thread."""
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
        except Exception as exc:
            if not worker_lost(exc):
                raise
            outs.append(exc)
    return outs


def _collect(futures):
    """The results of actor calls or tasks (futures), in order."""
    return [f.result() for f in futures]


class BlockEngine:
    """The row blocks of ``X`` (and ``y``), prepared by the pure ``prepare(X_b, y_b,
    *prepare_args)`` and held with the states of ``model`` (module docstring):
    in holders, one per Dask worker (actors, ``self.actors``), or in one holder
    in the client's process (in memory: one block; Dask without a cluster).

    ``what`` names the blocks in errors; ``noise_before``: noise was drawn before
    the engine was made (the error of a failed fit says so).  Use as a context
    manager, or call :meth:`close`: the holders and blocks leave the workers.

    Raises
    ------
    ValueError
        A Dask ``X`` or ``y`` not chunked as required; the preparation's errors.
    RuntimeError
        Workers died repeatedly while preparing the blocks (nothing released).
    """

    def __init__(self, X, y, prepare, prepare_args, model, *, what, noise_before=False):
        self.model, self.what, self.noise_before = model, what, noise_before
        self.actors, self.client, self.started = False, None, False
        self.futures, self.blocks, self.peers, self.addresses = [], [], [], set()
        self.n_rounds, self.n_lost, self.log = 0, 0, []
        if not is_dask_array(X):
            self.preps = [prepare(X, y, *prepare_args)]
            self._hold_here()
            return
        from dask import delayed

        xs, ys = _blocks(X, y)
        args = _blocksum._shared(prepare_args)   # arrays: one key each, not a copy a task
        tasks = [delayed(prepare, pure=True)(xb, yb, *args) for xb, yb in zip(xs, ys)]
        client = distributed_client()
        if client is None:      # a local scheduler: the blocks are in this process
            self.preps = list(_blocksum._compute(tasks, what))
            self._hold_here()
            return
        self.client = client
        try:
            self.blocks = client.compute(tasks)
            self._place()
        except BaseException as exc:    # an interrupt too: nothing stays on the workers
            self.close()
            if isinstance(exc, OSError):
                raise workers_lost(what, 1, exc, noise_before) from exc
            raise
        self.actors = True

    def _hold_here(self):
        self.holders = [BlockActor(self.model, range(len(self.preps)), *self.preps)]
        self.order = [(0, b) for b in range(len(self.preps))]

    @property
    def n_blocks(self):
        return len(self.order)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _place(self):
        """One holder actor per worker with the prepared blocks it holds (their pure
        tasks recomputed by Dask where lost); the worker holding the most blocks
        gets the :class:`Coordinator`, made first; the old holders are released."""
        from distributed import wait

        client = self.client
        release_from_workers(client, self.futures)   # the holders, not the blocks
        self.futures, self.holders, self.peers = [], [], []
        wait(self.blocks)
        for f in self.blocks:
            if f.status == "error":
                exc = f.exception()
                if type(exc).__name__ == "KilledWorker":
                    raise _blocksum._workers_died(
                        self.what, self.started or self.noise_before) from exc
                f.result()             # the preparation's own error (NaN, ...)
        where = client.who_has(self.blocks)
        by_worker = {}
        for b, f in enumerate(self.blocks):   # "": just lost, Dask will recompute it
            by_worker.setdefault(min(where.get(f.key) or [""]), []).append(b)
        # the coordinator's worker first: the most blocks (then the first address)
        groups = sorted(by_worker.items(), key=lambda g: (-len(g[1]), g[0]))
        self.order = [None] * len(self.blocks)
        for h, (_, held) in enumerate(groups):
            for i, b in enumerate(held):
                self.order[b] = (h, i)
        for h, (worker, held) in enumerate(groups):
            cls, first = (Coordinator, (self.order,)) if h == 0 else (BlockActor, ())
            self.futures.append(client.submit(
                cls, self.model, held, *first, *[self.blocks[b] for b in held],
                workers=[worker] if worker else None, allow_other_workers=True,
                actor=True, pure=False))
        self.holders = [f.result() for f in self.futures]
        placed = client.who_has(self.futures)
        self.addresses = {a for f in self.futures for a in placed.get(f.key, ())}
        # the coordinator's peers: where the other holders are (called over its
        # worker's connections: a worker-side Actor handle never answers for a
        # lost worker)
        self.peers = [Peer(min(placed.get(f.key) or [""]), f.key)
                      for f in self.futures[1:]]

    def _recover(self, exc):
        """After a lost worker: new holders for every block, replayed to the
        rounds run so far.  More losses than ``allowed-failures`` stop the fit."""
        self.n_lost += 1
        mid_fit = self.started or self.noise_before
        if self.n_lost > allowed_failures():
            raise workers_lost(self.what, self.n_lost, exc, mid_fit) from exc
        try:
            if not isinstance(exc, StaleBlocksError):
                self._wait_for_scheduler()
            self._place()
            if self.log:
                for call in [h.replay(self.log) for h in self.holders]:
                    call.result()
        except Exception as again:  # lost again, or the blocks cannot be rebuilt
            if not worker_lost(again):
                raise
            raise workers_lost(self.what, self.n_lost, again, mid_fit) from again

    def _wait_for_scheduler(self, timeout=60.0):
        """Until the scheduler has noticed a lost worker (its blocks are then
        recomputed elsewhere), at most ``timeout`` seconds."""
        import time

        stop = time.monotonic() + timeout
        while time.monotonic() < stop:
            if not self.addresses <= set(self.client.scheduler_info()["workers"]):
                return
            time.sleep(0.05)

    def _retrying(self, call):
        """``call()``; after a lost worker, :meth:`_recover` and ``call()`` again."""
        while True:
            try:
                return call()
            except Exception as exc:
                if not worker_lost(exc):
                    raise
                self._recover(exc)

    def map(self, func, *args):
        """``func(prep, *args)`` (pure) of every prepared block, in block order."""
        if not self.actors:
            return [func(p, *args) for p in self.preps]
        client = self.client
        return self._retrying(lambda: _collect([client.submit(func, pb, *args, pure=True)
                                                for pb in self.blocks]))

    def round(self, *args):
        """One round on every block (in this process); the outputs in block order."""
        number, self.n_rounds = self.n_rounds, self.n_rounds + 1
        outs = [h.round(number, *args) for h in self.holders]
        return [outs[h][i] for h, i in self.order]

    def run_chunk(self, chunk, *args):
        """The generator ``chunk(*args)`` driven with a round per yield, on the
        coordinator (a cluster) or here; its return value.  A chunk broken by a
        lost worker runs again from its start on new holders replayed to it, so
        ``chunk`` must be a function of the blocks' states and of its arguments."""
        self.started = True
        if not self.actors:
            return drive(chunk(*args), self.round)
        value, log = self._retrying(
            lambda: _collect([self.holders[0].run(self.peers, chunk, *args)])[0])
        self.log.extend(log)
        self.n_rounds += len(log)
        return value

    def run(self, steps):
        """Drive the generator ``steps`` with a round per yield from the client: on
        a cluster, one call per holder, the loop a coroutine on the client's event
        loop (left to recover a lost worker, then resumed at the same round)."""
        self.started = True
        if not self.actors:
            return drive(steps, self.round)
        try:
            args = next(steps)
        except StopIteration as done:
            return done.value
        while True:
            lost, value = self.client.sync(self._rounds_on_workers, steps, args)
            if lost is None:
                return value
            if not worker_lost(lost):
                raise lost
            self._recover(lost)
            args = value

    async def _rounds_on_workers(self, steps, args):
        """Rounds from ``args`` on; ``(None, value)`` when ``steps`` returns, or
        ``(error, args)`` at a round a holder's worker was lost."""
        try:
            while True:
                outs = await _results(self.holders, self.n_rounds, *args)
                for out in outs:
                    if isinstance(out, Exception):
                        return out, args
                self.n_rounds += 1
                if self.model.stateful:
                    self.log.append(args)
                args = steps.send([outs[h][i] for h, i in self.order])
        except StopIteration as done:
            return None, done.value

    def close(self):
        """Release the holders and the blocks (they leave the workers' memory)."""
        if self.client is not None:
            release_from_workers(self.client, self.futures, self.blocks)
        self.futures, self.holders, self.blocks, self.peers = [], [], [], []
