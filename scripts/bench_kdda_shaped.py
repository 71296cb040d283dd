"""Private fits on a synthetic data set shaped like KDDA, on one machine.

KDD Cup 2010 (algebra), LIBSVM's "kdda": 8,407,752 rows, 20,216,830 columns,
305,613,510 non-zeros (36.35 per row).  The data here has that shape (or a
``--fraction`` of its rows, D unchanged), drawn by
:func:`dptoolkit.datasets.make_sparse_classification_blocked` (Zipf(1) column
popularity with shuffled ranks, binary rows, planted sparse logistic labels;
deterministic from ``--seed``), built block by block with no second copy.

    python scripts/bench_kdda_shaped.py all [--fraction F]   # the three jobs below
    python scripts/bench_kdda_shaped.py fw [--fraction F]    # fast private Frank-Wolfe
    python scripts/bench_kdda_shaped.py dpnb [--fraction F]  # DPNBLogisticClassifier
    python scripts/bench_kdda_shaped.py standard [--fraction F]

``fw``: ``FrankWolfeLassoClassifier(epsilon=1, delta=1e-6, max_iter=4000,
n_samples_public=N, classes=[0, 1])``, every other parameter at its default (fast
solver, grouped sampler, bounded-staleness refresh, screening "auto").
``dpnb``: ``DPNBLogisticClassifier(epsilon=1, n_samples_public=N, classes=[0, 1])``
at its defaults.  ``fw`` also records the kernel's work counters (steps that
updated the gradient by a full pass, non-zeros touched), which a private fit
does not release, and, when the fit starts from naive Bayes, the start
:math:`w_0` (read where the fit builds it) with the training logistic loss and
accuracy of the start and of the fit (what the steps add); ``--epsilon``,
``--screening`` (with ``--selection-share``) and ``--start-steps`` change its
privacy, screening and :math:`t_0` parameters.
``standard``: the step of the standard private Frank-Wolfe (Raff, Khanna and
Lu, NeurIPS 2023, Algorithm 1: margins ``X w``, the full gradient ``X^T q``, the
exponential mechanism over the 2D vertices) by the toolkit's
``StandardFW`` kernel on int64 CSR/CSC views of the same data: one
untimed step, then ``--standard-steps`` timed; the ratio to the fast solver's
mean step time is the speed-up of the sparse-aware algorithm.

``all`` runs each job in a child process under ``/usr/bin/time -v`` (one after
the other, never in parallel: each needs most of the memory bandwidth) and
records wall time, peak RSS ("Maximum resident set size") and the 1-minute load
average before and after, in ``--out`` (default
``docs/studies/scaling/kdda_shaped.csv``).  A job prints one JSON line with its
own timings (data generation apart from the fit).
"""
import argparse
import csv
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dptoolkit.datasets import KDDA_SHAPE, make_sparse_classification_blocked

REPO = Path(__file__).resolve().parents[1]
EPSILON, DELTA, T = 1.0, 1e-6, 4000


def load1():
    return round(os.getloadavg()[0], 2)


def peak_rss_gb():
    """Peak resident set size of this process so far, GB (Linux: ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def data(fraction, seed):
    n_rows, n_cols, nnz = KDDA_SHAPE
    t0 = time.perf_counter()
    X, y, _ = make_sparse_classification_blocked(
        max(1, round(fraction * n_rows)), n_cols, avg_nnz=nnz / n_rows, random_state=seed)
    return X, y, time.perf_counter() - t0


def job(args):
    X, y, gen_s = data(args.fraction, args.seed)
    out = dict(job=args.command, fraction=args.fraction, epsilon=args.epsilon,
               n_samples=X.shape[0], n_features=X.shape[1], nnz=int(X.nnz),
               generate_s=round(gen_s, 1), rss_after_generate_gb=peak_rss_gb(),
               load1_start=load1())
    if args.command == "standard":
        out.update(standard_steps(X, y, args))
    else:
        from dptoolkit.linear_model import DPNBLogisticClassifier, FrankWolfeLassoClassifier
        if args.command == "fw":
            screening = {} if args.screening is None else dict(
                k=args.screening, selection_share=args.selection_share)
            if args.start_steps is not None:
                screening["start_steps"] = args.start_steps
            est = FrankWolfeLassoClassifier(epsilon=args.epsilon, delta=DELTA, max_iter=T,
                                            n_samples_public=X.shape[0], classes=[0.0, 1.0],
                                            random_state=args.seed, **screening)
        else:
            est = DPNBLogisticClassifier(epsilon=EPSILON, n_samples_public=X.shape[0],
                                         classes=[0.0, 1.0], random_state=args.seed)
        kernels = _keep_kernel(est) if args.command == "fw" else []
        starts = _keep_start() if args.command == "fw" else []
        c0, t0 = time.process_time(), time.perf_counter()
        try:
            est.fit(X, y)
        finally:
            _keep_start(restore=True)
        out.update(fit_s=round(time.perf_counter() - t0, 1),
                   fit_cpu_s=round(time.process_time() - c0, 1),
                   nonzero_coef=int(np.count_nonzero(est.coef_)))
        if args.command == "fw":
            out.update(n_iter=est.n_iter_, n_refresh=est.solver_stats_["n_refresh"],
                       mean_step_ms=round(1e3 * out["fit_s"] / est.n_iter_, 3),
                       k=str(est.screened_features_ is not None))
            # the kernel's work counters (a private fit does not release them)
            stats = kernels[0].stats.as_dict()
            out.update({k: stats[k] for k in ("n_full_steps", "n_full_refresh",
                                              "touched_rows", "touched_nnz")})
        # training accuracy only as a sanity check that the fit is a model
        out["train_accuracy"] = round(float(np.mean(est.predict(X) == y)), 4)
        if starts:  # what the steps add: the training objective of the start and the fit
            w0, t0_used = starts[-1]
            start = np.zeros(X.shape[1])
            start[est.screened_features_] = w0
            out.update(start_nonzero=int(np.count_nonzero(w0)), start_steps=t0_used,
                       start_loss=round(logistic_loss(X, y, start), 6),
                       fit_loss=round(logistic_loss(X, y, est.coef_.ravel()), 6),
                       start_train_accuracy=round(float(np.mean((X @ start > 0) == (y == 1))), 4))
    out.update(peak_rss_gb=peak_rss_gb(), load1_end=load1())
    print(json.dumps(out), flush=True)


def logistic_loss(X, y, w):
    """Mean logistic loss of the model w (no intercept) on rows X, labels y in {0, 1}."""
    margins = (2.0 * np.asarray(y, dtype=np.float64) - 1.0) * (X @ w)
    return float(np.mean(np.logaddexp(0.0, -margins)))


def _keep_start(restore=False):
    """Record the naive-Bayes start and its t0 where the fit resolves t0 (the
    estimator module's ``start_steps``), or put the original back (``restore``)."""
    from dptoolkit.linear_model._frank_wolfe import _estimator, _screening

    if restore:
        _estimator.start_steps = _screening.start_steps
        return []
    kept = []

    def keep(max_iter, w0, given=None):
        t0 = _screening.start_steps(max_iter, w0, given)
        kept.append((np.array(w0), t0))
        return t0
    _estimator.start_steps = keep
    return kept


def _keep_kernel(est):
    """Keep the fit's kernel in the returned list (its work counters: steps by a
    full pass, non-zeros touched), by wrapping the estimator's ``_run``."""
    kept, run = [], est._run

    def keep(kernel, *a):
        kept.append(kernel)
        return run(kernel, *a)
    est._run = keep
    return kept


def standard_steps(X, y, args):
    """Per-step time of the standard (dense-gradient) private Frank-Wolfe kernel."""
    import scipy.sparse as sp

    from dptoolkit.kernels import fw_fast
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    t0 = time.perf_counter()
    Xr = sp.csr_array((X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)),
                      shape=X.shape)
    del X
    Xc = Xr.tocsc()
    Xc.indices, Xc.indptr = Xc.indices.astype(np.int64), Xc.indptr.astype(np.int64)
    views_s = time.perf_counter() - t0
    # the grouped sampler's coefficient of a T-step fit (as scripts/bench_scaling.py):
    # the standard step's cost depends neither on which vertex is drawn nor on the
    # radius, so a fixed l1_bound stands for the default "auto"
    est = FrankWolfeLassoClassifier(max_iter=T, epsilon=EPSILON, delta=DELTA, l1_bound=50.0,
                                    mechanism="grouped", k=None,
                                    n_samples_public=Xr.shape[0], random_state=0)
    coef = est.budget(Xr.shape[1], n_samples=Xr.shape[0]).kernel_parameter
    kern = fw_fast.StandardFW(Xr.data, Xr.indices, Xr.indptr, Xc.data, Xc.indices,
                              Xc.indptr, y, est.l1_bound, fw_fast.SELECTOR_CODES["exponential"],
                              coef, np.random.default_rng(args.seed).bit_generator)
    gaps = np.empty(args.standard_steps + 1)
    kern.run(1, gaps)
    c0, t0 = time.process_time(), time.perf_counter()
    kern.run(args.standard_steps, gaps)
    wall = time.perf_counter() - t0
    return dict(views_s=round(views_s, 1), standard_steps=args.standard_steps,
                standard_step_s=round(wall / args.standard_steps, 3),
                standard_step_cpu_s=round((time.process_time() - c0) / args.standard_steps, 3))


def parse_time_v(text):
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    parts = [float(p) for p in wall.group(1).split(":")] if wall else []
    seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    return dict(time_v_max_rss_gb=round(int(rss.group(1)) / 2**20, 2) if rss else None,
                time_v_wall_s=round(seconds, 1))


def run_all(args):
    rows = []
    for name in args.jobs:
        cmd = ["/usr/bin/time", "-v", sys.executable, __file__, name,
               "--fraction", str(args.fraction), "--seed", str(args.seed),
               "--standard-steps", str(args.standard_steps), "--epsilon", str(args.epsilon),
               "--selection-share", str(args.selection_share)]
        if args.screening is not None:
            cmd += ["--screening", str(args.screening)]
        if args.start_steps is not None:
            cmd += ["--start-steps", str(args.start_steps)]
        before = load1()
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        sys.stderr.write(proc.stderr[-4000:] if proc.returncode else "")
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        row = json.loads(lines[-1]) if lines else dict(job=name, error=proc.returncode)
        row.update(parse_time_v(proc.stderr), load1_before=before, load1_after=load1())
        print(json.dumps(row), flush=True)
        rows.append(row)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"# wrote {args.out}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["all", "fw", "dpnb", "standard"])
    ap.add_argument("--fraction", type=float, default=1.0,
                    help="fraction of KDDA's rows, in (0, 1] (D is kept)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--standard-steps", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=EPSILON,
                    help="fw: epsilon (10 at --fraction 0.1 keeps the full size's epsilon * N)")
    ap.add_argument("--screening", type=int, default=None,
                    help="fw: candidates kept by the screening (default: the estimator's 'auto')")
    ap.add_argument("--selection-share", type=float, default=0.25,
                    help="fw, with --screening: the screening's share of the budget")
    ap.add_argument("--start-steps", type=int, default=None,
                    help="fw: start_steps, the t0 of the naive-Bayes start (default: 'auto')")
    ap.add_argument("--jobs", nargs="+", default=["fw", "dpnb", "standard"],
                    choices=["fw", "dpnb", "standard"])
    ap.add_argument("--out", type=Path,
                    default=REPO / "docs" / "studies" / "scaling" / "kdda_shaped.csv")
    args = ap.parse_args(argv)
    if not 0 < args.fraction <= 1:
        ap.error(f"--fraction must be in (0, 1], got {args.fraction}")
    if not (args.epsilon > 0 and 0 < args.selection_share < 1):
        ap.error("--epsilon must be > 0 and --selection-share in (0, 1)")
    if args.screening is not None and args.screening < 1:
        ap.error(f"--screening must be >= 1, got {args.screening}")
    if args.standard_steps < 1:
        ap.error(f"--standard-steps must be >= 1, got {args.standard_steps}")
    if args.command == "all":
        run_all(args)
    else:
        job(args)


if __name__ == "__main__":
    main()
