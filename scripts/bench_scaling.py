"""Scaling of private Frank-Wolfe: per-iteration cost against D and N, peak memory.

Fast (Raff, Khanna and Lu, NeurIPS 2023, Algorithm 2 with bounded-staleness
refresh, the grouped Big-Step Little-Step sampler of Algorithm 4) and standard
(Algorithm 1, exponential mechanism by an O(D) inverse-CDF draw) private
Frank-Wolfe on synthetic sparse data with a fixed number of non-zeros per row,
so that nnz(X) = N * k does not grow with D and the D-dependence is that of the
solvers' O(D) parts.  The theory: a standard step costs O(nnz(X) + D); a fast
step costs O(touched non-zeros) plus the sampler's draw, O(D / g + g) with
groups of g = sqrt(D) coordinates, i.e. O(sqrt(D)), plus the refreshes,
O(nnz(X) + D) each but only O(log T) of them in T steps.

    python scripts/bench_scaling.py d        # against D (>= 5 log-spaced points)
    python scripts/bench_scaling.py n        # against N (>= 4 points)
    python scripts/bench_scaling.py memory   # peak RSS of the main job (child process)
    python scripts/bench_scaling.py plot     # log-log plot and least-squares slopes
    python scripts/bench_scaling.py all      # everything, in that order

Timing (CPU seconds, ``time.process_time``; wall seconds alongside): the kernels
of :mod:`dptoolkit.kernels` run on canonical CSR/CSC views (int64 indices)
prepared once, outside the timing, with the exponential
mechanism's coefficient of the estimator's own budget split for a fit of
``--t-budget`` steps (epsilon = 1, delta = 1e-6, lambda = 50, advanced
composition, no screening: the setting of the README's Table 3 analogue).
The per-iteration cost is the time of steps 2..k divided by k - 1 after a
first step run untimed (the initial full refresh and the selector's build), i.e.
(fit(k) - fit(1)) / (k - 1) without the set-up of two fits.  The fast solver
runs every step of a ``--t-budget``-step fit (its refreshes, frequent early,
amortised as in a real fit); the standard solver, whose step cost does not
depend on t, runs ``--standard-iters`` steps.  Best of ``--repeat`` fresh
kernels.  Each row records the 1-minute load average.

Data (``--generator``):

``zipf`` (default)
    Rows of exactly ``--nnz-per-row`` distinct features drawn from a Zipf(1)
    popularity over the columns (ranks shuffled, as
    hashing does), values 1, labels from a planted sparse logistic model:
    hashed text with every document of the same length.  Drawn with a seeded
    ``numpy.random.Generator`` (``dptoolkit.datasets.make_sparse_classification``
    draws 1 + Poisson(k - 1) features per row with merged repeats, i.e. a
    fixed *mean* number of non-zeros, so it is not used here).
``uniform``
    ``scipy.sparse.random_array`` with density k / D (uniform columns, values 1;
    k non-zeros per row on average), labels as above.

Peak memory: ``ru_maxrss`` of a child process (``resource.getrusage(
RUSAGE_CHILDREN)``) running the main job ``python -m dptoolkit train --data
<IMDB> --epsilon 1`` at its defaults, and the same with ``--model frank-wolfe``.

Outputs (``--out``, default ``docs/studies/scaling``): ``d.csv``, ``n.csv``,
``memory.csv``, ``slopes.csv``, ``scaling.png``.
"""
import argparse
import csv
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dptoolkit.datasets import get_data_path
from dptoolkit.kernels import fw_fast
from dptoolkit.linear_model import FrankWolfeLassoClassifier

REPO = Path(__file__).resolve().parents[1]
L1_BOUND = 50.0
EPSILON = 1.0
DELTA = 1e-6
# (label, solver, selector, refresh_tol) of the private kernels compared: the
# fast solver at its default refresh_tol (None) and without refreshes (inf, the
# paper's Algorithm 2 as printed: separates the steps from the refreshes)
SOLVERS = [("fast", "fast", "grouped", None),
           ("fast_no_refresh", "fast", "grouped", float("inf")),
           ("standard", "standard", "exponential", None)]


def load1():
    """1-minute load average (the machine may be shared)."""
    return round(os.getloadavg()[0], 2)


def zipf_rows(n_samples, n_features, k, rng):
    """CSR indices: ``k`` distinct columns per row, Zipf(1) column popularity.

    Draws k columns per row from the popularity, then redraws the repeated ones
    until every row holds k distinct columns (repeats are rare past the top
    ranks; a row needs a few rounds at most).
    """
    if k > n_features:
        raise ValueError(f"nnz_per_row must be <= n_features, got {k} > {n_features}")
    cdf = np.cumsum(1.0 / np.arange(1, n_features + 1))
    cdf /= cdf[-1]
    perm = rng.permutation(n_features)          # rank -> column (hashing shuffles)

    def draw(size):
        return perm[np.minimum(np.searchsorted(cdf, rng.random(size)), n_features - 1)]

    cols = draw((n_samples, k))
    while True:
        cols.sort(axis=1)
        dup = np.zeros_like(cols, dtype=bool)
        dup[:, 1:] = cols[:, 1:] == cols[:, :-1]
        if not dup.any():
            return cols
        cols[dup] = draw(int(dup.sum()))


def make_data(generator, n_samples, n_features, k, seed=0):
    """(X, y): CSR float64 of shape (n_samples, n_features), labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    if generator == "zipf":
        cols = zipf_rows(n_samples, n_features, k, rng)
        indptr = np.arange(0, n_samples * k + 1, k, dtype=np.int64)
        X = sp.csr_array((np.ones(n_samples * k), cols.ravel(), indptr),
                         shape=(n_samples, n_features))
    elif generator == "uniform":
        X = sp.random_array((n_samples, n_features), density=k / n_features,
                            format="csr", dtype=np.float64, rng=rng,
                            data_sampler=lambda size: np.ones(size))
    else:
        raise ValueError(f"generator must be 'zipf' or 'uniform', got {generator!r}")
    X.sort_indices()
    # planted sparse logistic model on 20 of the 100 most frequent columns
    counts = np.bincount(X.indices, minlength=n_features)
    top = np.argsort(counts)[::-1][:100]
    w = np.zeros(n_features)
    w[rng.choice(top, 20, replace=False)] = rng.choice([-2.0, 2.0], 20)
    margin = X @ w
    y = (rng.random(n_samples) < 1.0 / (1.0 + np.exp(-(margin - margin.mean())))).astype(
        np.float64)
    return X, y


def views(X):
    """CSR and CSC views with int64 indices, canonical (sorted, no duplicates):
    what the kernels take (FastFW keeps int32 copies of the index arrays)."""
    Xr = sp.csr_array(X, dtype=np.float64, copy=True)
    Xr.sum_duplicates()                 # also sorts the indices
    Xc = sp.csc_array(Xr)
    Xc.sum_duplicates()
    for M in (Xr, Xc):
        M.indices, M.indptr = M.indices.astype(np.int64), M.indptr.astype(np.int64)
    return Xr, Xc


def kernel(Xr, Xc, y, solver, selector, t_budget, seed=0, refresh_tol=None,
           epsilon=EPSILON):
    """A fresh private kernel with the per-step budget of a ``t_budget``-step fit.

    Both solvers get the coefficient of the fast solver's budget split (the
    grouped sampler's): the standard step's cost does not depend on which
    feature is drawn, and for D >= 10^6 the estimator refuses the standard
    solver's O(D) inverse-CDF draw at these settings (its floating-point delta
    over T draws, which grows with D, exceeds delta).
    """
    est = FrankWolfeLassoClassifier(l1_bound=L1_BOUND, max_iter=t_budget, solver="fast",
                                    mechanism="grouped", epsilon=epsilon, delta=DELTA,
                                    k=None, composition="advanced",
                                    random_state=seed)
    coef = est.budget(Xr.shape[1], n_samples=Xr.shape[0]).kernel_parameter
    args = (Xr.data, Xr.indices, Xr.indptr, Xc.data, Xc.indices, Xc.indptr, y,
            L1_BOUND, fw_fast.SELECTOR_CODES[selector], coef,
            np.random.default_rng(seed).bit_generator)
    if solver == "fast":
        return fw_fast.FastFW(*args, refresh_tol=(est.refresh_tol if refresh_tol is None
                                                   else refresh_tol))
    return fw_fast.StandardFW(*args)


def epsilon_of(args, n_samples):
    """epsilon of a run: EPSILON, or ``--epsilon-times-n`` / N (same selectivity)."""
    return EPSILON if args.epsilon_times_n is None else args.epsilon_times_n / n_samples


def per_iteration(Xr, Xc, y, solver, selector, refresh_tol, args):
    """Best-of-``args.repeat`` (CPU s, wall s) per step over steps 2..k, and counters."""
    k = args.t_budget if solver == "fast" else args.standard_iters
    best_cpu, best_wall, stats = np.inf, np.inf, None
    for r in range(args.repeat):
        kern = kernel(Xr, Xc, y, solver, selector, args.t_budget, seed=r,
                      refresh_tol=refresh_tol, epsilon=epsilon_of(args, Xr.shape[0]))
        gaps = np.empty(k)
        kern.run(1, gaps)                   # untimed: first refresh, selector build
        c0, t0 = time.process_time(), time.perf_counter()
        kern.run(k - 1, gaps)
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        if cpu < best_cpu:
            best_cpu, stats = cpu, kern.stats.as_dict()
        best_wall = min(best_wall, wall)
    return best_cpu / (k - 1), best_wall / (k - 1), k, stats


def sweep(args, points, axis):
    rows = []
    for n_samples, n_features in points:
        t0 = time.perf_counter()
        X, y = make_data(args.generator, n_samples, n_features, args.nnz_per_row)
        Xr, Xc = views(X)
        del X
        gen_s = time.perf_counter() - t0
        for label, solver, selector, rho in SOLVERS:
            cpu, wall, k, st = per_iteration(Xr, Xc, y, solver, selector, rho, args)
            row = dict(axis=axis, generator=args.generator,
                       epsilon=round(epsilon_of(args, n_samples), 6), n_samples=n_samples,
                       n_features=n_features, nnz=int(Xr.nnz),
                       nnz_per_row=round(Xr.nnz / n_samples, 2), solver=label,
                       selector=selector,
                       refresh_tol=("default" if rho is None else rho) if solver == "fast" else "",
                       steps_timed=k - 1,
                       cpu_ms_per_iter=round(cpu * 1e3, 4),
                       wall_ms_per_iter=round(wall * 1e3, 4),
                       touched_nnz_per_iter=round(st["touched_nnz"] / st["n_iter"], 1),
                       refreshes=st["n_refresh"], data_s=round(gen_s, 1), load1=load1())
            rows.append(row)
            print(row, flush=True)
        del Xr, Xc
    return rows


def write_csv(rows, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"# wrote {path}", flush=True)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def run_d(args):
    ds = np.unique(np.round(np.logspace(np.log10(args.d_min), np.log10(args.d_max),
                                        args.d_points)).astype(np.int64))
    rows = sweep(args, [(args.n_fixed, int(d)) for d in ds], "D")
    write_csv(rows, args.out / f"d_{args.generator}.csv")


def run_n(args):
    ns = [int(args.n_min * 2 ** i) for i in range(args.n_points)]
    rows = sweep(args, [(n, args.d_fixed) for n in ns], "N")
    tag = "" if args.epsilon_times_n is None else "_epsN"
    write_csv(rows, args.out / f"n_{args.generator}{tag}.csv")


def run_memory(args):
    """Peak RSS of the main job, one child process per command."""
    corpus = str(get_data_path("text/aclImdb-train-test.tar.xz"))
    cmds = [("main job (defaults)",
             [sys.executable, "-m", "dptoolkit", "train", "--data", corpus, "--epsilon", "1"]),
            ("main job, --model frank-wolfe",
             [sys.executable, "-m", "dptoolkit", "train", "--data", corpus, "--epsilon", "1",
              "--model", "frank-wolfe"])]
    rows = []
    for label, cmd in cmds:
        # ru_maxrss of RUSAGE_CHILDREN is the largest of the waited-for children:
        # run each command from a fresh intermediate process so it is that
        # command's own peak
        probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
                 "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                 "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
                 "round(time.perf_counter() - t, 1), p.returncode); "
                 "sys.stderr.write(p.stdout[-3000:] + p.stderr[-2000:])")
        p = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=REPO,
                           capture_output=True, text=True)
        if p.returncode != 0 or not p.stdout.strip():
            raise RuntimeError(f"{label} failed:\n{p.stderr}")
        kib, wall, rc = p.stdout.split()
        if int(rc) != 0:
            raise RuntimeError(f"{label} exited {rc}:\n{p.stderr}")
        row = dict(run=label, command=" ".join(["python"] + cmd[1:]).replace(str(REPO) + "/", ""),
                   peak_rss_mib=round(int(kib) / 1024, 1), wall_s=float(wall), load1=load1())
        rows.append(row)
        print(row, flush=True)
        print(p.stderr, flush=True)
    write_csv(rows, args.out / "memory.csv")


def slope(x, y):
    """Least-squares slope of log y against log x (and its standard error)."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, res, *_ = np.linalg.lstsq(A, ly, rcond=None)
    n = len(lx)
    resid = ly - A @ coef
    se = np.sqrt(resid @ resid / (n - 2) / np.sum((lx - lx.mean()) ** 2)) if n > 2 else np.nan
    return float(coef[0]), float(se)


def run_plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = sorted(args.out.glob("d_*.csv")) + sorted(args.out.glob("n_*.csv"))
    if not files:
        raise SystemExit(f"no d_*.csv / n_*.csv in {args.out}: run 'd' and 'n' first")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    slopes = []
    for path in files:
        rows = read_csv(path)
        axis = rows[0]["axis"]
        ax = axes[0 if axis == "D" else 1]
        key = "n_features" if axis == "D" else "n_samples"
        for label, solver, selector, rho in SOLVERS:
            sel = [r for r in rows if r["solver"] == label]
            if not sel:
                continue
            x = [int(r[key]) for r in sel]
            y = [float(r["cpu_ms_per_iter"]) for r in sel]
            b, se = slope(x, y)
            # the upper half of the range (x >= its geometric middle): the
            # asymptotic regime, where the terms that grow with x dominate
            mid = np.sqrt(min(x) * max(x))
            upper = [(xi, yi) for xi, yi in zip(x, y) if xi >= mid * (1 - 1e-9)]
            b_up = slope(*zip(*upper))[0] if len(upper) >= 2 else float("nan")
            gen = rows[0]["generator"]
            if path.stem.endswith("_epsN"):
                gen += ", eps*N fixed"
            slopes.append(dict(axis=axis, generator=gen, solver=label,
                               fixed=(f"N={sel[0]['n_samples']}" if axis == "D"
                                      else f"D={sel[0]['n_features']}"),
                               points=len(x), x_min=min(x), x_max=max(x),
                               slope=round(b, 4), slope_se=round(se, 4),
                               slope_upper_half=round(b_up, 4), upper_points=len(upper),
                               ms_min=min(y), ms_max=max(y)))
            style = {"fast": "o-", "fast_no_refresh": "^:", "standard": "s--"}[label]
            ax.loglog(x, y, style, label=f"{label} ({gen}), slope {b:.2f}")
        ax.set_xlabel("D (features)" if axis == "D" else "N (rows)")
        ax.set_ylabel("CPU ms per iteration")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_title("against D (N = 20,000 fixed, 50 nnz/row)"
                      if args.n_fixed == 20_000 and args.nnz_per_row == 50 else "against D")
    axes[1].set_title(f"against N (D = {args.d_fixed:,} fixed, 50 nnz/row)"
                      if args.nnz_per_row == 50 else "against N")
    fig.tight_layout()
    fig.savefig(args.out / "scaling.png", dpi=110)
    print(f"# wrote {args.out / 'scaling.png'}")
    write_csv(slopes, args.out / "slopes.csv")
    for s in slopes:
        print(s)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["d", "n", "memory", "plot", "all"])
    p.add_argument("--generator", choices=["zipf", "uniform"], default="zipf")
    p.add_argument("--nnz-per-row", type=int, default=50)
    p.add_argument("--n-fixed", type=int, default=20_000, help="N of the D sweep")
    p.add_argument("--d-min", type=float, default=1e5)
    p.add_argument("--d-max", type=float, default=1e7)
    p.add_argument("--d-points", type=int, default=6)
    p.add_argument("--d-fixed", type=int, default=2**17, help="D of the N sweep")
    p.add_argument("--n-min", type=int, default=10_000)
    p.add_argument("--n-points", type=int, default=5, help="N = n_min * 2^i")
    p.add_argument("--t-budget", type=int, default=4000,
                   help="steps of the fit whose per-step budget the kernels get; the "
                        "fast solver runs all of them")
    p.add_argument("--standard-iters", type=int, default=11)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--epsilon-times-n", type=float, default=None,
                   help="run at epsilon = this / N instead of epsilon = 1: the "
                        "mechanism's selectivity (scores grow with N, the "
                        "sensitivity does not) then stays the same across N")
    p.add_argument("--out", type=Path, default=REPO / "docs" / "studies" / "scaling")
    args = p.parse_args(argv)
    for name in ("nnz_per_row", "n_fixed", "d_points", "d_fixed", "n_min", "n_points",
                 "t_budget", "standard_iters", "repeat"):
        if getattr(args, name) < (2 if name in ("t_budget", "standard_iters") else 1):
            p.error(f"--{name.replace('_', '-')} is too small")
    import dptoolkit
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip()
    print(f"# dptoolkit from {Path(dptoolkit.__file__).parent} (checkout {REPO} at "
          f"{commit or '?'}); {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load {load1()}", flush=True)
    if Path(dptoolkit.__file__).resolve().parents[1] != REPO:
        print(f"# warning: dptoolkit is not imported from this checkout; run with "
              f"PYTHONPATH={REPO}", flush=True)
    if args.what in ("d", "all"):
        run_d(args)
    if args.what in ("n", "all"):
        run_n(args)
    if args.what in ("memory", "all"):
        run_memory(args)
    if args.what in ("plot", "all"):
        run_plot(args)


if __name__ == "__main__":
    main()
