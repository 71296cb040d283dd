"""Side-by-side measurements of DSAL (Bao, Wu, Xian, Huang, IJCAI 2022) and baselines.

Every number printed comes from runs made one after the other in the same
process (the MPI runs: child processes started by it) on the same data, so
machine load affects all sides alike; the load average is printed with them.

    python scripts/bench_dsal.py correctness   # vs scikit-learn: a9a, w8a, colon, 20news, IMDB
    python scripts/bench_dsal.py libsvm        # vs scikit-learn: time on every LIBSVM set
    python scripts/bench_dsal.py speed         # time to relative gap 1e-6 on IMDB
    python scripts/bench_dsal.py imdb_small    # IMDB at small alphas: working-set variants
    python scripts/bench_dsal.py subproblem    # working sets: CD against SVRG sub-problems
    python scripts/bench_dsal.py path          # DSAL to 1e-6 uncapped: cold vs warm-started path
    python scripts/bench_dsal.py threads       # 2 threads vs 1 (kernel epoch and whole fit)
    python scripts/bench_dsal.py mpi           # Dis-DSAL with 1, 2, 3 workers
    python scripts/bench_dsal.py all

Data: IMDB train (25,000 reviews) hashed to 2^20 binary unigram+bigram features
with :func:`dptoolkit.datasets.load_text_corpus`; targets -1/+1 (regression on the
labels).  ``--cache DIR`` keeps the hashed matrix as .npz between runs (the MPI
runs read it from there in any case).  ``--json PATH`` writes every measurement.

"Time to relative gap 1e-6" is the wall time of ``fit`` (validation and format
conversion included) with ``tol=1e-6``, for scikit-learn's ``Lasso`` (coordinate
descent with Gap Safe screening) the wall time of ``fit`` with its ``tol`` set so
that its own stopping test is the same relative gap (``tol = 1e-6 P* / (2 P(0))``);
the reported gap is recomputed from the returned coefficients in every case.
A run that hits its iteration cap is reported as not reached, with the gap at
the cap.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

from dptoolkit.datasets import get_data_path, load_libsvm, load_text_corpus
from dptoolkit.linear_model import DSALLasso, ProxASAGALasso, ProxSVRGLasso
from dptoolkit.dsal import (ActiveProblem, Evaluation, inner_epoch, lasso_alpha_max,
                            lasso_duality_gap, prepare_problem, solve_working_set)

RESULTS = {}


def load_avg():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def header(title):
    print(f"\n## {title}  ({load_avg()}, {os.cpu_count()} cores)", flush=True)


def sklearn_ready(X):
    """scikit-learn's Lasso takes sparse input with 32-bit indices only."""
    X = sp.csc_matrix(X)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def imdb(args):
    cache = Path(args.cache) if args.cache else Path(tempfile.gettempdir()) / "dptoolkit-dsal"
    cache.mkdir(parents=True, exist_ok=True)
    xf, yf = cache / "imdb_train_2p20_X.npz", cache / "imdb_train_2p20_y.npy"
    if xf.exists() and yf.exists():
        X, y = sp.csr_array(sp.load_npz(xf)), np.load(yf)
    else:
        t0 = time.perf_counter()
        X, y01, _ = load_text_corpus(get_data_path("text/aclImdb-train-test.tar.xz"), "train",
                                     n_features=2**20, ngram_range=(1, 2))
        y = 2.0 * y01 - 1.0
        sp.save_npz(xf, sp.csr_matrix(X), compressed=False)
        np.save(yf, y)
        print(f"# hashed IMDB in {time.perf_counter() - t0:.1f} s", flush=True)
    print(f"# IMDB train: {X.shape[0]} x {X.shape[1]}, nnz {X.nnz}", flush=True)
    return X, y, xf, yf


def run_solver(name, make, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        model = make().fit(X, y)
        wall = time.perf_counter() - t0
    rel = model.dual_gap_ / abs(model.objective_)
    return {
        "solver": name, "wall_s": wall, "reached": bool(rel <= model.tol),
        "relative_gap": float(rel), "objective": float(model.objective_),
        "n_iter": int(model.n_iter_), "nnz": int(np.count_nonzero(model.coef_)),
        "active_final": int(model.active_set_size_[-1]) if model.n_iter_ else None,
        "active_sizes": model.active_set_size_.tolist(),
        "working_set_sizes": model.working_set_size_.tolist(),
        "epochs": float(model.n_epochs_),
        "time_history": model.time_history_.tolist(),
        "gap_history": (model.gap_history_ / np.abs(model.objective_history_)).tolist(),
        "step_halvings": int(model.n_step_halvings_),
    }, model


def run_sklearn(X, y, alpha, p_star, budget_s):
    """Lasso with its stopping test set to relative gap 1e-6 (w.r.t. p_star)."""
    Xs = sklearn_ready(X)
    p0 = 0.5 * float(y @ y) / y.size
    tol = 1e-6 * p_star / (2.0 * p0)
    # per-epoch cost from a short run, then a cap that fits in the budget
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        Lasso(alpha=alpha, fit_intercept=False, tol=tol, max_iter=20).fit(Xs, y)
        per_epoch = (time.perf_counter() - t0) / 20
        max_iter = int(max(50, budget_s / max(per_epoch, 1e-6)))
        t0 = time.perf_counter()
        m = Lasso(alpha=alpha, fit_intercept=False, tol=tol, max_iter=max_iter).fit(Xs, y)
        wall = time.perf_counter() - t0
    primal, _, gap = lasso_duality_gap(X, y, m.coef_, alpha)
    return {
        "solver": "sklearn Lasso (CD)", "wall_s": wall, "reached": bool(gap <= 1e-6 * primal),
        "relative_gap": float(gap / primal), "objective": float(primal),
        "n_iter": int(m.n_iter_), "nnz": int(np.count_nonzero(m.coef_)),
        "active_final": None, "max_iter": max_iter, "sklearn_tol": tol,
    }, m


def fmt_row(r, p_best):
    t = f"{r['wall_s']:.1f}" if r["reached"] else f"> {r['wall_s']:.1f} (gap {r['relative_gap']:.1e})"
    act = "" if r.get("active_final") is None else str(r["active_final"])
    return (f"| {r['solver']:<28} | {t:>24} | {r['n_iter']:>6} | {act:>8} | {r['nnz']:>6} | "
            f"{(r['objective'] - p_best) / p_best:>9.1e} |")


# ---------------------------------------------------------------------------
# correctness
# ---------------------------------------------------------------------------

def correctness(args):
    header("correctness: DSALLasso vs scikit-learn Lasso (same alpha scaling), regression on +-1")
    sets = []
    for name, p in [("a9a.bz2", 123), ("w8a.bz2", 300), ("colon-cancer.bz2", 2000)]:
        X, y = load_libsvm(get_data_path(name), n_features=p)
        sets.append((name.split(".")[0], sp.csr_array(X), 2.0 * y - 1.0))
    X, y, _ = load_text_corpus(get_data_path("text/20news-bydate.tar.xz"), "train",
                               n_features=2**20, ngram_range=(1, 2),
                               positive="comp.", negative="rec.")
    sets.append(("20news comp/rec 2^20", sp.csr_array(X), 2.0 * y - 1.0))
    if args.with_imdb:
        X, y, _, _ = imdb(args)
        sets.append(("IMDB 2^20", X, y))
    rows = []
    print("| data | alpha/alpha_max | DSAL rel. gap | (P_DSAL - P_sk)/P_sk | sklearn nnz "
          "| screened | sklearn non-zeros screened |")
    print("|---|---|---|---|---|---|---|")
    for name, X, y in sets:
        amax = lasso_alpha_max(X, y)
        ratios = [0.999, 0.5, 0.1, 0.05] if "IMDB" not in name else [0.5, 0.1]
        for ratio in ratios:
            alpha = ratio * amax
            n_inner = 10 * X.shape[0] if X.shape[0] < 1000 else None
            m = DSALLasso(alpha=alpha, tol=1e-6, max_outer=2000, n_inner=n_inner,
                          random_state=0).fit(X, y)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                sk = Lasso(alpha=alpha, fit_intercept=False, tol=1e-10,
                           max_iter=100_000).fit(sklearn_ready(X), y)
            p_sk = lasso_duality_gap(X, y, sk.coef_, alpha)[0]
            bad = int(np.sum((sk.coef_ != 0) & ~m.active_features_))
            row = {"data": name, "ratio": ratio, "relative_gap": m.dual_gap_ / m.objective_,
                   "objective_diff": (m.objective_ - p_sk) / p_sk,
                   "sklearn_nnz": int(np.count_nonzero(sk.coef_)),
                   "screened": int((~m.active_features_).sum()), "unsafe": bad}
            rows.append(row)
            print(f"| {name} | {ratio} | {row['relative_gap']:.1e} | {row['objective_diff']:+.1e} "
                  f"| {row['sklearn_nnz']} | {row['screened']} | {bad} |", flush=True)
    RESULTS["correctness"] = rows


# ---------------------------------------------------------------------------
# every LIBSVM set: DSAL (working sets) against scikit-learn's Lasso
# ---------------------------------------------------------------------------

#: Every LIBSVM file of the shared data folder, with its number of features.
LIBSVM_SETS = [("a1a", 123), ("a1a.t", 123), ("a8a", 123), ("a8a.t", 123), ("a9a", 123),
               ("a9a.t", 123), ("w8a", 300), ("phishing", 68), ("mushrooms", 112),
               ("splice", 60), ("splice.t", 60), ("australian", 14),
               ("breast-cancer_scale", 10), ("colon-cancer", 2000), ("abalone", 8),
               ("housing", 13)]


def _best_of(repeats, fn):
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def libsvm(args):
    """Wall time of fit to relative gap 1e-6, DSALLasso (defaults: working sets)
    against Lasso(fit_intercept=False) with its tol set to the same relative gap,
    best of ``--repeats`` fits each, one solver after the other on each set."""
    header("time to relative duality gap 1e-6 on every LIBSVM set: DSALLasso (working "
           f"sets) vs scikit-learn Lasso (CD), best of {args.repeats}")
    rows = []
    print("| data | n x p | alpha/alpha_max | DSAL s | DSAL rel. gap | sklearn s | "
          "sklearn rel. gap | sklearn / DSAL | (P_DSAL - P_sk)/P_sk |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, p in LIBSVM_SETS:
        X, y = load_libsvm(get_data_path(name + ".bz2"), n_features=p)
        X = sp.csr_array(X)
        if set(np.unique(y)) <= {0.0, 1.0}:
            y = 2.0 * y - 1.0   # binary labels as +-1 targets
        Xs = sklearn_ready(X)
        amax = lasso_alpha_max(X, y)
        for ratio in args.libsvm_ratios:
            alpha = ratio * amax
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                t_ds, m = _best_of(args.repeats, lambda: DSALLasso(alpha=alpha, tol=1e-6)
                                   .fit(X, y))
                tol_sk = 1e-6 * m.objective_ / (2.0 * (0.5 * float(y @ y) / y.size))
                t_sk, sk = _best_of(args.repeats, lambda: Lasso(
                    alpha=alpha, fit_intercept=False, tol=tol_sk, max_iter=1_000_000)
                    .fit(Xs, y))
            p_sk, _, g_sk = lasso_duality_gap(X, y, sk.coef_, alpha)
            row = {"data": name, "shape": X.shape, "ratio": ratio, "dsal_s": t_ds,
                   "dsal_relative_gap": m.dual_gap_ / m.objective_, "sklearn_s": t_sk,
                   "sklearn_relative_gap": g_sk / p_sk, "speedup": t_sk / t_ds,
                   "objective_diff": (m.objective_ - p_sk) / p_sk,
                   "dsal_outer": int(m.n_iter_), "dsal_epochs": float(m.n_epochs_),
                   "sklearn_epochs": int(sk.n_iter_)}
            rows.append(row)
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {ratio:g} | {t_ds:.4f} | "
                  f"{row['dsal_relative_gap']:.1e} | {t_sk:.4f} | "
                  f"{row['sklearn_relative_gap']:.1e} | {row['speedup']:.2f} | "
                  f"{row['objective_diff']:+.1e} |", flush=True)
    slower = [r for r in rows if r["speedup"] < 1.0]
    print(f"# {len(rows) - len(slower)} of {len(rows)} (set, alpha) pairs at least as fast "
          f"as scikit-learn; slower: "
          + (", ".join(f"{r['data']} {r['ratio']:g} ({r['speedup']:.2f}x)" for r in slower)
             or "none") + f"  ({load_avg()})")
    RESULTS["libsvm"] = rows


def subproblem(args):
    """The working-set solver with its two sub-problem solvers, whole fits."""
    sets = []
    for name, p in [("a9a", 123), ("w8a", 300)]:
        X, y = load_libsvm(get_data_path(name + ".bz2"), n_features=p)
        sets.append((name, sp.csr_array(X), 2.0 * y - 1.0))
    if args.with_imdb:
        X, y, _, _ = imdb(args)
        sets.append(("IMDB 2^20", X, y))
    header("working sets: sub-problems by coordinate descent (with and without primal "
           "extrapolation) or by the screened SVRG loop, whole fits to relative gap 1e-6")
    rows = []
    print("| data | alpha/alpha_max | sub-problem solver | seconds | sub-problems | "
          "epochs | rel. gap |")
    print("|---|---|---|---|---|---|---|")
    for name, X, y in sets:
        Xr, Xc, yv, _, blocks = prepare_problem(X, y, "squared", "l1", None)
        amax = lasso_alpha_max(X, y)
        for ratio in args.ratios:
            for label, kw in [("CD + primal extrapolation", {}),
                              ("CD", {"accelerate": False}),
                              ("screened SVRG (DSAL inner loop)", {"subsolver": "svrg"})]:
                t0 = time.perf_counter()
                r = solve_working_set(Xc, yv, ratio * amax, loss="squared", penalty="l1",
                                      blocks=blocks, screening=True, n_jobs=1, tol=1e-6,
                                      max_outer=args.max_outer, **kw)
                wall = time.perf_counter() - t0
                row = {"data": name, "ratio": ratio, "solver": label, "wall_s": wall,
                       "n_iter": r["n_iter"], "epochs": int(r["n_epochs"]),
                       "relative_gap": r["gap"] / r["primal"]}
                rows.append(row)
                print(f"| {name} | {ratio:g} | {label} | {wall:.2f} | {r['n_iter']} | "
                      f"{row['epochs']} | {row['relative_gap']:.1e} |  ({load_avg()})",
                      flush=True)
    RESULTS["subproblem"] = rows


# ---------------------------------------------------------------------------
# speed
# ---------------------------------------------------------------------------

def speed(args):
    X, y, _, _ = imdb(args)
    amax = lasso_alpha_max(X, y)
    out = {}
    for ratio in args.ratios:
        alpha = ratio * amax
        header(f"time to relative duality gap 1e-6, IMDB 2^20, alpha = {ratio:g} alpha_max")
        common = dict(alpha=alpha, tol=1e-6, random_state=0)
        sto = dict(working_set=False, max_outer=args.max_outer)
        runs = [
            ("DSAL (working sets)", lambda: DSALLasso(max_outer=args.max_outer, **common)),
            ("DSAL, stochastic loop", lambda: DSALLasso(**sto, **common)),
            ("DSAL, stochastic, uniform", lambda: DSALLasso(sampling="uniform", **sto,
                                                            **common)),
            ("DSAL-Naive", lambda: DSALLasso(variance_reduction=False, working_set=False,
                                             max_outer=args.max_outer_naive, **common)),
            ("ProxSVRG", lambda: ProxSVRGLasso(max_outer=args.max_outer, **common)),
            ("ProxASAGA", lambda: ProxASAGALasso(max_outer=args.max_outer, **common)),
        ]
        results = []
        for name, make in runs:
            r, _ = run_solver(name, make, X, y)
            results.append(r)
            print(f"#   {name}: {r['wall_s']:.1f} s, {r['n_iter']} outer, rel. gap "
                  f"{r['relative_gap']:.1e} ({load_avg()})", flush=True)
        p_best = min(r["objective"] for r in results)
        r, _ = run_sklearn(X, y, alpha, p_best, args.sklearn_budget)
        results.append(r)
        print(f"#   sklearn: {r['wall_s']:.1f} s, {r['n_iter']} epochs, rel. gap "
              f"{r['relative_gap']:.1e} ({load_avg()})", flush=True)
        p_best = min(p_best, r["objective"])
        print("| solver | seconds to rel. gap 1e-6 | outer it. | active | nnz | "
              "(P - P_best)/P_best |")
        print("|---|---|---|---|---|---|")
        for r in results:
            print(fmt_row(r, p_best))
        dsal = results[0]
        print("DSAL working-set size per outer iteration:",
              " ".join(str(s) for s in dsal["working_set_sizes"]), f"({dsal['epochs']:g} "
              "coordinate-descent epochs in all)")
        print("DSAL active-set size per outer iteration:",
              " ".join(str(s) for s in dsal["active_sizes"][::max(1, len(dsal["active_sizes"]) // 30)]),
              f"(final {dsal['active_final']}, of {X.shape[1]} features)")
        out[str(ratio)] = results
    RESULTS["speed"] = out


def imdb_small(args):
    """IMDB at small penalties: DSAL with working sets, its two sub-problem solvers,
    and (``--with-stochastic``) the paper's stochastic loop, each to relative gap
    1e-6 from w = 0, one after the other."""
    X, y, _, _ = imdb(args)
    amax = lasso_alpha_max(X, y)
    out = {}
    for ratio in args.ratios:
        alpha = ratio * amax
        header(f"time to relative duality gap 1e-6, IMDB 2^20, alpha = {ratio:g} alpha_max")
        common = dict(alpha=alpha, tol=1e-6, random_state=0, max_outer=args.max_outer)
        runs = [("DSAL, working sets + CD", lambda: DSALLasso(**common)),
                ("DSAL, working sets + SVRG", lambda: DSALLasso(subproblem_solver="svrg",
                                                                **common))]
        if args.with_stochastic:
            runs.append(("DSAL, stochastic loop", lambda: DSALLasso(working_set=False,
                                                                    **common)))
        results = []
        for name, make in runs:
            r, _ = run_solver(name, make, X, y)
            results.append(r)
            print(f"#   {name}: {r['wall_s']:.1f} s, {r['n_iter']} outer, {r['epochs']:g} "
                  f"epochs, rel. gap {r['relative_gap']:.1e}, nnz {r['nnz']}, objective "
                  f"{r['objective']:.12f} ({load_avg()})", flush=True)
            print("#     working sets:", " ".join(str(v) for v in r["working_set_sizes"]),
                  flush=True)
        out[str(ratio)] = results
    RESULTS["imdb_small"] = out


def path(args):
    """DSAL cold from w = 0 against a warm-started path from alpha_max, no cap that
    matters (``--max-outer-long``): how long DSAL takes to certify 1e-6."""
    X, y, _, _ = imdb(args)
    amax = lasso_alpha_max(X, y)
    out = {}
    for ratio in args.ratios:
        alpha = ratio * amax
        header(f"DSAL to relative gap 1e-6 without a binding cap, IMDB 2^20, alpha = "
               f"{ratio:g} alpha_max: cold start vs warm-started path")
        results = []
        r, _ = run_solver("DSAL, cold start", lambda: DSALLasso(
            alpha=alpha, tol=1e-6, max_outer=args.max_outer_long, random_state=0), X, y)
        results.append(r)
        print(f"#   cold: {r['wall_s']:.1f} s, {r['n_iter']} outer, rel. gap "
              f"{r['relative_gap']:.1e} ({load_avg()})", flush=True)
        # geometric path alpha_max * 10^(-j / per_decade), tol 1e-6 at every alpha
        n_steps = int(round(-np.log10(ratio) * args.path_per_decade))
        ratios = np.logspace(0.0, np.log10(ratio), n_steps + 1)[1:]
        model = DSALLasso(tol=1e-6, warm_start=True, max_outer=args.max_outer_long,
                          random_state=0)
        t0 = time.perf_counter()
        n_iter = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for rr in ratios:
                model.set_params(alpha=rr * amax).fit(X, y)
                n_iter += model.n_iter_
        wall = time.perf_counter() - t0
        rel = model.dual_gap_ / model.objective_
        r = {"solver": f"DSAL, warm-started path ({n_steps} alphas)", "wall_s": wall,
             "reached": bool(rel <= 1e-6), "relative_gap": float(rel),
             "objective": float(model.objective_), "n_iter": n_iter,
             "nnz": int(np.count_nonzero(model.coef_)),
             "active_final": int(model.active_set_size_[-1]) if model.n_iter_ else None}
        results.append(r)
        print(f"#   path: {wall:.1f} s, {n_iter} outer in all, rel. gap {rel:.1e} "
              f"({load_avg()})", flush=True)
        p_best = min(r["objective"] for r in results)
        print("| solver | seconds to rel. gap 1e-6 | outer it. | active | nnz | "
              "(P - P_best)/P_best |")
        print("|---|---|---|---|---|---|")
        for r in results:
            print(fmt_row(r, p_best))
        out[str(ratio)] = results
    RESULTS["path"] = out


# ---------------------------------------------------------------------------
# threads
# ---------------------------------------------------------------------------

def threads(args):
    X, y, _, _ = imdb(args)
    header("2 threads vs 1: one inner epoch of the kernel (n = 25,000 SVRG steps, importance "
           "sampling, all 2^20 features)")
    Xr, Xc, yv, _, blocks = prepare_problem(X, y, "squared", "l1", None)
    prob = ActiveProblem.full(Xr, Xc, blocks, "l1", "importance")
    alpha = 0.01 * lasso_alpha_max(X, y)
    w0 = np.zeros(prob.n_features)
    ev = Evaluation.local(prob, w0, yv, alpha, "squared", "l1", 1)
    step = 1.0 / prob.l_max
    times = {1: [], 2: []}
    for rep in range(args.repeats):
        for n_jobs in (1, 2):
            w = w0.copy()
            gens = np.random.default_rng(rep).spawn(n_jobs)
            t0 = time.perf_counter()
            inner_epoch(prob, yv, w, ev.fp.copy(), ev.g.copy(), loss="squared",
                        penalty="l1", method="svrg", step=step, alpha=alpha,
                        n_steps=yv.size, generators=gens)
            times[n_jobs].append(time.perf_counter() - t0)
    best = {k: min(v) for k, v in times.items()}
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"epoch time, best of {args.repeats}: 1 thread {best[1]:.3f} s, 2 threads "
          f"{best[2]:.3f} s, speedup {best[1] / best[2]:.2f}x (medians {med[1]:.3f} / "
          f"{med[2]:.3f} s, {med[1] / med[2]:.2f}x)  ({load_avg()})")
    header("2 threads vs 1: whole DSALLasso fit (stochastic loop) to relative gap 1e-6, "
           "alpha = 1e-2 alpha_max")
    fits = {}
    for n_jobs in (1, 2):
        r, _ = run_solver(f"DSAL n_jobs={n_jobs}", lambda: DSALLasso(
            alpha=alpha, tol=1e-6, n_jobs=n_jobs, max_outer=args.max_outer,
            working_set=False, random_state=0), X, y)
        fits[n_jobs] = r
        print(f"n_jobs={n_jobs}: {r['wall_s']:.1f} s, {r['n_iter']} outer iterations, "
              f"rel. gap {r['relative_gap']:.1e}  ({load_avg()})", flush=True)
    print(f"speedup of the fit: {fits[1]['wall_s'] / fits[2]['wall_s']:.2f}x")
    RESULTS["threads"] = {"epoch_times": times, "fits": fits}


# ---------------------------------------------------------------------------
# MPI
# ---------------------------------------------------------------------------

def mpi(args):
    X, y, xf, yf = imdb(args)
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
        "mpiexec")
    if mpiexec is None:
        print("# mpiexec not found: pip install 'dptoolkit[mpi]'")
        return
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    ratio = args.mpi_ratio
    header(f"Dis-DSAL on MPI, IMDB 2^20, alpha = {ratio:g} alpha_max, 1 server + k workers "
           f"(oversubscribed: {os.cpu_count()} cores)")
    rows = []
    for k in args.workers:
        cmd = [mpiexec, "--oversubscribe", "-n", str(k + 1), sys.executable, "-m",
               "dptoolkit.dsal", "--data", str(xf), "--target", str(yf),
               "--alpha-ratio", repr(ratio), "--tol", "1e-6",
               "--max-outer", str(args.max_outer), "--seed", "0"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(f"# {k} workers failed: {proc.stderr[-2000:]}")
            continue
        s = json.loads(proc.stdout.strip().splitlines()[-1])
        s.update(workers=k, wall_s_total=wall)
        rows.append(s)
        print(f"#   {k} workers: fit {s['time']:.1f} s (program {wall:.1f} s), "
              f"{s['n_iter']} outer, rel. gap {s['relative_gap']:.1e} ({load_avg()})",
              flush=True)
    r, model = run_solver("DSAL shared memory, 1 thread", lambda: DSALLasso(
        alpha=ratio * lasso_alpha_max(X, y), tol=1e-6, max_outer=args.max_outer,
        working_set=False, random_state=0), X, y)
    print("| run | fit seconds | outer it. | rel. gap | objective | step halvings | "
          "messages | steps per message (median) | replies held | "
          "doubles sent / received |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in rows:
        print(f"| {s['workers']} worker(s) | {s['time']:.1f} | {s['n_iter']} | "
              f"{s['relative_gap']:.1e} | {s['objective']:.10f} | {s['n_step_halvings']} | "
              f"{s['messages']} | {np.median(s['batch_history']):g} | "
              f"{s['held_replies']} | {s['doubles_sent']} / {s['doubles_received']} |")
    print(f"| shared memory, 1 thread | {r['wall_s']:.1f} | {r['n_iter']} | "
          f"{r['relative_gap']:.1e} | {r['objective']:.10f} | {r['step_halvings']} | | | | |")
    RESULTS["mpi"] = {"runs": rows, "shared_memory": r}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["correctness", "libsvm", "speed", "imdb_small",
                                         "subproblem", "path", "threads", "mpi", "all"])
    parser.add_argument("--ratios", type=lambda s: [float(v) for v in s.split(",")],
                        default=[1e-2, 1e-3], help="alpha / alpha_max for the speed table")
    parser.add_argument("--libsvm-ratios", type=lambda s: [float(v) for v in s.split(",")],
                        default=[0.1, 0.01, 0.001], help="alpha / alpha_max, libsvm table")
    parser.add_argument("--max-outer", type=int, default=1000)
    parser.add_argument("--max-outer-naive", type=int, default=150)
    parser.add_argument("--max-outer-long", type=int, default=10000,
                        help="cap of the 'path' runs (meant not to bind)")
    parser.add_argument("--path-per-decade", type=int, default=5,
                        help="alphas per decade of the warm-started path")
    parser.add_argument("--sklearn-budget", type=float, default=1200.0,
                        help="seconds of coordinate descent allowed (sets max_iter)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=lambda s: [int(v) for v in s.split(",")],
                        default=[1, 2, 3])
    parser.add_argument("--mpi-ratio", type=float, default=1e-2)
    parser.add_argument("--with-stochastic", action="store_true",
                        help="imdb_small: also the stochastic loop (working_set=False)")
    parser.add_argument("--with-imdb", action="store_true",
                        help="correctness: include IMDB 2^20 (slow)")
    parser.add_argument("--cache", help="folder for the hashed IMDB matrix (.npz)")
    parser.add_argument("--json", help="write all measurements here")
    args = parser.parse_args(argv)
    print(f"# {platform.platform()}, Python {platform.python_version()}, numpy {np.__version__}"
          f", {os.cpu_count()} cores, {load_avg()}")
    todo = (["correctness", "libsvm", "speed", "subproblem", "threads", "mpi"]
            if args.what == "all" else [args.what])
    for what in todo:
        globals()[what](args)
    if args.json:
        Path(args.json).write_text(json.dumps(RESULTS, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
