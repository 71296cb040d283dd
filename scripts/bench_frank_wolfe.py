"""Side-by-side measurements of the Frank-Wolfe solvers (Raff et al. 2023, Tables 3-4).

Every ratio printed here comes from runs made one after the other in the same
process on the same data, so machine load affects both sides alike.

    python scripts/bench_frank_wolfe.py speed      # Table 3 analogue (IMDB, 2^20 features)
    python scripts/bench_frank_wolfe.py staleness  # refresh_tol study
    python scripts/bench_frank_wolfe.py work       # touched non-zeros per iteration
    python scripts/bench_frank_wolfe.py baseline   # standard step vs SciPy gradient
    python scripts/bench_frank_wolfe.py pernnz     # ns per touched non-zero of a fast
                                                   # step vs SciPy's ns per non-zero
    python scripts/bench_frank_wolfe.py renumber   # the same steps with the columns
                                                   # numbered by frequency or not
    python scripts/bench_frank_wolfe.py fits       # CPU of whole fast private fits
                                                   # over --seeds random states
    python scripts/bench_frank_wolfe.py perstep    # per-step time of private fits at
                                                   # the defaults, fast vs standard
    python scripts/bench_frank_wolfe.py nonprivate # standard vs fast (each selector)
                                                   # on every data set, non-private

Every estimator is built with k=None and composition="advanced" and the
given --l1-bound/--max-iter (the estimator's defaults are l1_bound=50,
max_iter="auto", k="auto", composition="auto"), so the figures compare
with the README's Table 3 analogue.  Each row records the 1-minute load average
(``load1``) when it was measured: the machine may be shared.

Options: --data (LIBSVM file or corpus; default the IMDB train set hashed to
2^20 binary features), --l1-bound, --max-iter, --standard-iters (run the standard
solver for fewer iterations and extrapolate its per-step time, fit(k) - fit(1),
to T: its per-iteration cost does not depend on t; the table's
``standard_iters_run`` says when this is done), --threads (OpenMP and BLAS
threads of every fit: 1 compares the two solvers on one core each, as the
standard solver's passes run on one; CPU time counts a waiting thread's spin,
wall time does not), --out (CSV).
"""
import argparse
import csv
import os
import sys
import time
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from dptoolkit.kernels import fw_fast as _fw_fast
from dptoolkit.datasets import get_data_path, load_libsvm, load_text_corpus
from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.linear_model import DEFAULT_REFRESH_TOL

# fixed explicitly: the estimator's defaults (k="auto", composition="auto")
# would change the budget split and the features the solver sees
FIXED = dict(k=None, composition="advanced")


def load1():
    """1-minute load average (the machine may be shared)."""
    return round(os.getloadavg()[0], 2)


def load(args):
    path = args.data or str(get_data_path("text/aclImdb-train-test.tar.xz"))
    t0 = time.perf_counter()
    if args.npz_prefix:  # a cache written by a previous run with --save-npz
        X = sp.load_npz(f"{args.npz_prefix}_train_X.npz")
        y = np.load(f"{args.npz_prefix}_train_y.npy")
        Xt = sp.load_npz(f"{args.npz_prefix}_test_X.npz")
        yt = np.load(f"{args.npz_prefix}_test_y.npy")
        print(f"# data {args.npz_prefix}_*: train {X.shape} nnz {X.nnz}", flush=True)
        return sp.csr_array(X), y, sp.csr_array(Xt), yt
    if path.endswith((".tar.xz", ".tar.gz")):
        X, y, _ = load_text_corpus(path, subset="train", n_features=args.n_features)
        Xt, yt, _ = load_text_corpus(path, subset="test", n_features=args.n_features)
    else:
        X, y = load_libsvm(path)
        Xt, yt = X, y
    print(f"# data {path}: train {X.shape} nnz {X.nnz}, test {Xt.shape}; "
          f"loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    return sp.csr_array(X), y, sp.csr_array(Xt), yt


def timed_fit(X, y, cpu=False, **kw):
    """Fit and return (clf, wall seconds) or, with cpu=True, (clf, wall, CPU seconds).

    CPU time (time.process_time) is less sensitive than wall time to other
    processes competing for the cores; both are reported by ``speed``.
    """
    # the public label set, declared (not read from y): every data set timed here
    # is binary with labels {0, 1} (load_libsvm's binary convention; the corpora's
    # neg=0/pos=1 or negative=0/positive=1); a y with other labels is refused
    # non-private unless kw gives epsilon (the estimator's default is private)
    clf = FrankWolfeLassoClassifier(**{**FIXED, "classes": [0, 1], "epsilon": None, **kw})
    t0, c0 = time.perf_counter(), time.process_time()
    clf.fit(X, y)
    wall, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    return (clf, wall, cpu_s) if cpu else (clf, wall)


def exact_gap(X, y, w, l1_bound):
    """Frank-Wolfe gap of the mean logistic loss, computed from scratch."""
    v = X @ w
    grad = X.T @ (0.5 * (1 + np.tanh(0.5 * v)) - y) / X.shape[0]
    return float(grad @ w + l1_bound * np.abs(grad).max())


def objective(X, y, w):
    v = X @ w
    return float(np.mean(np.logaddexp(0.0, v) - y * v))


def speed(args, X, y, Xt, yt):
    rows = []
    T, lam = args.max_iter, args.l1_bound
    delta = 1.0 / X.shape[0]
    configs = [(f"eps={e:g}", e) for e in args.epsilons]
    if args.nonprivate:
        configs.insert(0, ("non-private", None))
    for label, eps in configs:
        base = dict(l1_bound=lam, epsilon=eps, delta=None if eps is None else delta,
                    random_state=0)
        t_std_iters = min(args.standard_iters or T, T)
        rep = args.fast_repeat if t_std_iters < T else 1

        def best(n_iter, solver, repeat, **kw):
            fits = [timed_fit(X, y, cpu=True, max_iter=n_iter, solver=solver, **base, **kw)
                    for _ in range(repeat)]
            return min(f[1] for f in fits), min(f[2] for f in fits)

        # best of --fast-repeat for both solvers (standard: when extrapolated)
        t_std, c_std = best(t_std_iters, "standard", rep)
        t_1, c_1 = best(1, "standard", args.fast_repeat)
        if t_std_iters < T:
            # the standard step's cost does not depend on t: extrapolate the
            # per-step part only (fit(k) - fit(1)), not the one-off set-up
            k = (T - 1) / (t_std_iters - 1)
            t_std_full = t_1 + (t_std - t_1) * k
            c_std_full = c_1 + (c_std - c_1) * k
        else:
            t_std_full, c_std_full = t_std, c_std
        fast_selectors = ["pairing_heap", "fibonacci_heap"] if eps is None else (
            args.private_selectors)
        for sel in fast_selectors:
            # one-off set-up of a fast fit (validation, CSR/CSC copies, first
            # refresh): a 1-iteration fit, best of --fast-repeat
            setup_cpu = min(timed_fit(X, y, cpu=True, max_iter=1, solver="fast",
                                      mechanism=sel, **base)[2]
                            for _ in range(args.fast_repeat))
            # the O(D)-per-step noisy-max ablation is run at the default rho only
            rhos = args.refresh_tols if sel != "noisy_max" else [DEFAULT_REFRESH_TOL]
            for rho in rhos:
                # best of --fast-repeat fits (by CPU time): the machine may be shared
                fits = [timed_fit(X, y, cpu=True, max_iter=T, solver="fast", mechanism=sel,
                                  refresh_tol=rho, **base)
                        for _ in range(args.fast_repeat)]
                fast, t_fast, c_fast = min(fits, key=lambda f: f[2])
                t_fast = min(f[1] for f in fits)
                row = dict(setting=label, solver=f"fast+{sel}", refresh_tol=rho,
                           wall_s=round(t_fast, 3), cpu_s=round(c_fast, 3),
                           fast_setup_cpu_s=round(setup_cpu, 3),
                           standard_wall_s=round(t_std_full, 2),
                           standard_cpu_s=round(c_std_full, 2),
                           standard_iters_run=t_std_iters,
                           speedup_wall=round(t_std_full / t_fast, 1),
                           speedup_cpu=round(c_std_full / c_fast, 1),
                           # iterations only: both fits minus their 1-iteration fit
                           speedup_cpu_iterations=round(
                               (c_std_full - c_1) / (c_fast - setup_cpu), 1),
                           refreshes=fast.solver_stats_["n_refresh"],
                           test_acc=round(fast.score(Xt, yt), 4),
                           nnz=int(np.count_nonzero(fast.coef_)),
                           threads=args.threads or "default", load1=load1())
                rows.append(row)
                print(row, flush=True)
    return rows


def staleness(args, X, y, Xt, yt):
    rows = []
    T, lam = args.max_iter, args.l1_bound
    pT = args.private_max_iter or T
    plam = args.private_l1_bound or lam
    if not (args.private_only or args.skip_standard):
        std, t_std = timed_fit(X, y, max_iter=T, solver="standard", l1_bound=lam)
        w = std.coef_[0]
        rows.append(dict(refresh_tol="standard", objective=objective(X, y, w),
                         gap=exact_gap(X, y, w, lam), time_s=round(t_std, 2),
                         refreshes=T))
        print(rows[-1], flush=True)
    for rho in args.refresh_tols:
        row = dict(refresh_tol=rho)
        if not args.private_only:
            fast, t_fast = timed_fit(X, y, max_iter=T, solver="fast", l1_bound=lam,
                                     refresh_tol=rho, mechanism="pairing_heap")
            w = fast.coef_[0]
            row.update(objective=objective(X, y, w), gap=exact_gap(X, y, w, lam),
                       time_s=round(t_fast, 3), refreshes=fast.solver_stats_["n_refresh"])
        accs, times = [], []
        for seed in range(args.seeds):
            priv, t_priv = timed_fit(X, y, max_iter=pT, solver="fast", l1_bound=plam,
                                     refresh_tol=rho, epsilon=args.staleness_epsilon,
                                     delta=1.0 / X.shape[0], random_state=seed)
            accs.append(priv.score(Xt, yt))
            times.append(t_priv)
        row.update(private_epsilon=args.staleness_epsilon, private_max_iter=pT,
                   private_l1_bound=plam, private_acc_mean=float(np.mean(accs)),
                   private_acc_sd=float(np.std(accs)),
                   private_time_s=round(float(np.mean(times)), 3))
        row.update(load1=load1())
        rows.append(row)
        print(rows[-1], flush=True)
    return rows


def baseline(args, X, y, Xt, yt):
    """Standard solver's per-iteration time vs one sparse gradient + one O(D) pass.

    The reference is SciPy: v = X @ w (CSR), alpha = X^T q (CSC), then one O(D)
    pass (argmax |alpha|).  Both are timed in CPU seconds, best of ``--repeat``.
    """
    Xc = sp.csc_array(X)
    n, d = X.shape
    rng = np.random.default_rng(0)
    w = np.zeros(d)
    w[rng.choice(d, 50, replace=False)] = rng.normal(size=50)
    q = rng.uniform(-1, 1, n)

    def reference():
        v = X @ w
        alpha = Xc.T @ q
        return v, int(np.argmax(np.abs(alpha)))

    def best(fn):
        times = []
        for _ in range(args.repeat):
            c0 = time.process_time()
            fn()
            times.append(time.process_time() - c0)
        return min(times)

    ref = best(reference)
    rows = []
    k = args.baseline_iters
    for label, kw in [("non-private argmax", {}),
                      ("private exponential", dict(epsilon=1.0, delta=1e-6)),
                      ("private noisy_max", dict(epsilon=1.0, delta=1e-6,
                                                 mechanism="noisy_max"))]:
        def fit(n_iter):
            return timed_fit(X, y, cpu=True, solver="standard", l1_bound=args.l1_bound,
                             max_iter=n_iter, random_state=0, **kw)[2]
        # per-iteration cost: difference of a k+1- and a 1-iteration fit (removes
        # the fixed set-up cost of validation and the CSC copy)
        per_iter = (min(fit(k + 1) for _ in range(args.repeat))
                    - min(fit(1) for _ in range(args.repeat))) / k
        rows.append(dict(standard=label, per_iter_cpu_s=round(per_iter, 4),
                         reference_cpu_s=round(ref, 4), ratio=round(per_iter / ref, 2),
                         load1=load1()))
        print(rows[-1], flush=True)
    return rows


def _private_fast_kernel(Xr, Xc, y01, eps, lam, T, rho, seed=0, renumber=-1):
    """FastFW with the grouped sampler, configured as a private fit of T steps
    (the estimator's own budget split gives the log-weight coefficient)."""
    est = FrankWolfeLassoClassifier(l1_bound=lam, max_iter=T, epsilon=eps,
                                    delta=1.0 / Xr.shape[0], **FIXED)
    coef = est.budget(Xr.shape[1], n_samples=Xr.shape[0]).kernel_parameter
    return _fw_fast.FastFW(Xr.data, Xr.indices, Xr.indptr, Xc.data, Xc.indices,
                           Xc.indptr, y01, lam, _fw_fast.SELECTOR_CODES["grouped"], coef,
                           np.random.default_rng(seed).bit_generator, refresh_tol=rho,
                           renumber=renumber)


def _timed_steps(k, T):
    """Run kernel ``k`` one step, then time its T - 1 next steps (CPU seconds);
    returns (seconds, the steps' increments of the kernel's counters)."""
    gaps = np.zeros(T)
    k.run(1, gaps)
    before = k.stats.as_dict()
    c0 = time.process_time()
    k.run(T - 1, gaps)
    seconds = time.process_time() - c0
    after = k.stats.as_dict()
    return seconds, {key: after[key] - before[key] for key in after}


def pernnz(args, X, y, Xt, yt):
    """ns per touched non-zero of a fast private step vs SciPy's ns per non-zero.

    The fast kernel (grouped sampler, the budget of a T-step fit) runs T - 1 steps
    after its first step (which includes the initial full refresh) with
    refresh_tol=inf, so only step work is timed; a touched non-zero is one entry
    of a row containing the chosen feature (its alpha update; about 0.4 selector
    updates per non-zero on IMDB, counted apart).  A second run with the default
    refresh_tol gives the refreshes' cost per non-zero they process.  SciPy's
    reference is the CSR mat-vec X @ w (and X^T q) on the same arrays, best of
    --repeat, measured before and after the kernel runs in the same process.
    CPU seconds throughout; the work counters are read from the kernel (a
    benchmark: private fits do not release them).
    """
    Xr = sp.csr_array(X)
    Xc = sp.csc_array(Xr)
    n, d = Xr.shape
    y01 = (y == np.unique(y)[1]).astype(np.float64)
    rng = np.random.default_rng(0)
    w = rng.normal(size=d)
    q = rng.uniform(-1, 1, n)
    T, lam = args.max_iter, args.l1_bound

    def scipy_ns():
        out = {}
        for name, fn in (("Xw", lambda: Xr @ w), ("XTq", lambda: Xr.T @ q)):
            best = np.inf
            for _ in range(args.repeat):
                c0 = time.process_time()
                fn()
                best = min(best, time.process_time() - c0)
            out[name] = best / Xr.nnz * 1e9
        return out

    rows = []
    for eps in args.epsilons:
        ref0 = scipy_ns()
        c_steps, done = _timed_steps(_private_fast_kernel(Xr, Xc, y01, eps, lam, T, np.inf), T)
        touched, updates = done["touched_nnz"], done["selector_updates"]
        k2 = _private_fast_kernel(Xr, Xc, y01, eps, lam, T, DEFAULT_REFRESH_TOL)
        c_rho, done2 = _timed_steps(k2, T)
        ref1 = scipy_ns()
        ref = {key: min(ref0[key], ref1[key]) for key in ref0}
        ns_nnz = c_steps / touched * 1e9
        refresh_nnz = done2["refresh_nnz"]
        rows.append(dict(
            epsilon=eps, steps=T - 1, step_cpu_s=round(c_steps, 3),
            touched_nnz_per_step=round(touched / (T - 1)),
            updates_per_step=round(updates / (T - 1)),
            ns_per_touched_nnz=round(ns_nnz, 2),
            ns_per_selector_update=round(c_steps / updates * 1e9, 1),
            scipy_Xw_ns_per_nnz=round(ref["Xw"], 2),
            scipy_XTq_ns_per_nnz=round(ref["XTq"], 2),
            ratio_vs_Xw=round(ns_nnz / ref["Xw"], 2),
            refresh_tol=DEFAULT_REFRESH_TOL, refreshes=k2.stats.n_refresh,
            full_refreshes=k2.stats.n_full_refresh,
            refresh_nnz_passes=round(refresh_nnz / Xr.nnz, 2),
            refresh_cpu_s=round(c_rho - c_steps, 3),
            refresh_ns_per_nnz=round((c_rho - c_steps) / max(refresh_nnz, 1) * 1e9, 2),
            load1=load1()))
        print(rows[-1], flush=True)
    return rows


def renumber(args, X, y, Xt, yt):
    """CPU time of T - 1 fast private steps (refresh_tol=inf, after the first) with
    the columns in their own order (renumber=0) and in column_order's numbering
    (renumber=1), for --seeds seeds each, one after the other in one process.
    The two numberings draw other vertices from the same uniforms, so a seed's
    work differs between them; ns per touched non-zero compares the two on runs
    without a full-pass step (a step that drew a feature in more than a third
    of the rows: its non-zeros cost a gather's, a few times less)."""
    Xr = sp.csr_array(X)
    Xc = sp.csc_array(Xr)
    y01 = (y == np.unique(y)[1]).astype(np.float64)
    T, lam = args.max_iter, args.l1_bound
    rows = []
    for eps in args.epsilons:
        for seed in range(args.seeds):
            for ren in (0, 1):
                c, done = _timed_steps(
                    _private_fast_kernel(Xr, Xc, y01, eps, lam, T, np.inf, seed, ren), T)
                touched = done["touched_nnz"]
                rows.append(dict(epsilon=eps, seed=seed, renumber=ren, step_cpu_s=round(c, 4),
                                 touched_nnz=touched, full_steps=done["n_full_steps"],
                                 ns_per_touched_nnz=round(c / touched * 1e9, 2),
                                 load1=load1()))
                print(rows[-1], flush=True)
    return rows


def fits(args, X, y, Xt, yt):
    """CPU seconds of whole fast private fits (grouped sampler) at random_state
    0 .. --seeds - 1 and each of --fit-refresh-tols (default: the default
    refresh_tol), the settings of one seed one after the other: a fit's work
    depends on the vertices its noise draws (a frequent feature drawn costs a
    full pass), so a comparison of two kernels whose draws differ needs several
    seeds.  With --standard-iters k, the standard solver's fit of T steps is
    extrapolated from k steps (as in ``speed``) once per epsilon and each row
    gives the whole fit's ratio to it."""
    rows = []
    rhos = args.fit_refresh_tols or [DEFAULT_REFRESH_TOL]
    for eps in args.epsilons:
        kw = dict(l1_bound=args.l1_bound, epsilon=eps, delta=1.0 / X.shape[0])
        c_std = None
        if args.standard_iters:
            k = args.standard_iters
            c_k = timed_fit(X, y, cpu=True, max_iter=k, solver="standard", random_state=0,
                            **kw)[2]
            c_1 = min(timed_fit(X, y, cpu=True, max_iter=1, solver="standard",
                                random_state=0, **kw)[2] for _ in range(3))
            c_std = c_1 + (c_k - c_1) * (args.max_iter - 1) / (k - 1)
        for seed in range(args.seeds):
            for rho in rhos:
                _, wall, cpu = timed_fit(X, y, cpu=True, max_iter=args.max_iter,
                                         random_state=seed, refresh_tol=rho, **kw)
                row = dict(epsilon=eps, seed=seed, refresh_tol=rho, wall_s=round(wall, 3),
                           cpu_s=round(cpu, 3))
                if c_std is not None:
                    row.update(standard_cpu_s=round(c_std, 2),
                               speedup_cpu=round(c_std / cpu, 1))
                rows.append(dict(row, threads=args.threads or "default", load1=load1()))
                print(rows[-1], flush=True)
    return rows


def work(args, X, y, Xt, yt):
    rows = []
    T, lam = args.max_iter, args.l1_bound
    # non-private only: private fits do not expose their data-dependent counters
    for eps in [None]:
        for rho in args.refresh_tols:
            clf, t = timed_fit(X, y, max_iter=T, solver="fast", l1_bound=lam,
                               refresh_tol=rho, random_state=0)
            s = clf.solver_stats_
            rows.append(dict(epsilon=eps, refresh_tol=rho, time_s=round(t, 3),
                             refreshes=s["n_refresh"],
                             touched_nnz_per_iter=s["touched_nnz"] / T,
                             nnz_X=X.nnz,
                             work_ratio_vs_standard=2 * X.nnz * T / s["touched_nnz"],
                             load1=load1()))
            print(rows[-1], flush=True)
    return rows


#: perstep: the estimator's defaults, l1_bound 10 / max_iter 300, and the latter
#: without screening (all 2^20 features: the steps that fall back to a full pass)
PERSTEP_SETTINGS = {
    "defaults": {},
    "l1_bound=10, max_iter=300": dict(l1_bound=10.0, max_iter=300),
    "unscreened, l1_bound=10, max_iter=300": dict(l1_bound=10.0, max_iter=300,
                                                  k=None, composition="advanced"),
}


def perstep(args, X, y, Xt, yt):
    """Per-step CPU time of private fits, fast vs standard, at the estimator's
    defaults (k="auto", composition="auto", max_iter="auto"), at
    l1_bound=10, max_iter=300 (the other parameters at their defaults) and at the
    latter without screening (``PERSTEP_SETTINGS``; ``--perstep-settings``).

    delta = 1e-5 and n_samples_public = N (the README's privacy-utility setting).
    Per step: (fit(T) - fit(1)) / (T - 1), CPU seconds, best of --fast-repeat,
    the two solvers side by side.  The standard solver runs at most
    --standard-iters steps (its step cost does not depend on t).
    """
    rows = []
    n = X.shape[0]
    for eps in args.epsilons:
        for label, kw in PERSTEP_SETTINGS.items():
            if args.perstep_settings and label not in args.perstep_settings:
                continue
            # the estimator's defaults (timed_fit fixes screening/accounting otherwise)
            base = dict(epsilon=eps, delta=1e-5, n_samples_public=n, random_state=0,
                        **{"k": "auto", "composition": "auto", **kw})
            T = kw.get("max_iter") or int(min(1e5, max(10, np.ceil((n * eps) ** (2 / 3)))))
            row = dict(epsilon=eps, setting=label, T=T)
            for solver in ("fast", "standard"):
                k = T if solver == "fast" else min(T, args.standard_iters or T)

                def cpu(n_iter):
                    return min(timed_fit(X, y, cpu=True, solver=solver,
                                         **{**base, "max_iter": n_iter})[2]
                               for _ in range(args.fast_repeat))
                t1, tk = cpu(1), cpu(k)
                row[f"{solver}_ms_per_step"] = round((tk - t1) / (k - 1) * 1e3, 3)
                row[f"{solver}_setup_s"] = round(t1, 3)
            row["ratio_fast_over_standard"] = round(
                row["fast_ms_per_step"] / row["standard_ms_per_step"], 3)
            row["load1"] = load1()
            rows.append(row)
            print(row, flush=True)
    return rows


#: Binary-label LIBSVM files of DPTOOLKIT_DATA (abalone and housing are regression
#: targets, not classification problems).
NONPRIVATE_LIBSVM = ["a1a", "a8a", "a9a", "w8a", "phishing", "mushrooms", "splice",
                     "australian", "breast-cancer_scale", "colon-cancer"]


def _nonprivate_sets(args):
    """(name, X, y) of every set the nonprivate mode times: the LIBSVM files, then
    20 Newsgroups comp.* vs rec.* and the IMDB train set (2^20 hashed binary
    1-2-gram features, the speed table's featurisation)."""
    for name in args.sets or NONPRIVATE_LIBSVM + ["news20", "imdb"]:
        if name == "news20":
            X, y, _ = load_text_corpus(str(get_data_path("text/20news-bydate.tar.xz")),
                                       subset="train", n_features=args.n_features,
                                       positive="comp.", negative="rec.")
        elif name == "imdb" and args.npz_prefix:
            X = sp.load_npz(f"{args.npz_prefix}_train_X.npz")
            y = np.load(f"{args.npz_prefix}_train_y.npy")
        elif name == "imdb":
            X, y, _ = load_text_corpus(str(get_data_path("text/aclImdb-train-test.tar.xz")),
                                       subset="train", n_features=args.n_features)
        else:
            X, y = load_libsvm(str(get_data_path(f"{name}.bz2")))
        yield name, sp.csr_array(X), y


def nonprivate(args, *_):
    """Non-private fits: standard solver vs the fast one with every selector, and
    the selector ``"auto"`` picks, on every data set (``--sets``).

    CPU seconds of whole fits (best of --fast-repeat), side by side per set.  The
    standard solver runs ``--standard-iters`` steps (default: all) and is scaled
    to T as in ``speed`` (fit(k) - fit(1)); the fast fits run T steps.
    """
    rows = []
    T, lam = args.max_iter, args.l1_bound
    for name, X, y in _nonprivate_sets(args):
        base = dict(l1_bound=lam, random_state=0)

        def cpu(n_iter, **kw):
            return min(timed_fit(X, y, cpu=True, max_iter=n_iter, **base, **kw)[2]
                       for _ in range(args.fast_repeat))

        k = min(args.standard_iters or T, T)
        t_std = cpu(k, solver="standard")
        if k < T:
            t_1 = cpu(1, solver="standard")
            t_std = t_1 + (t_std - t_1) * (T - 1) / (k - 1)
        auto = timed_fit(X, y, max_iter=1, **base)[0].mechanism_
        row = dict(data=name, n_samples=X.shape[0], n_features=X.shape[1], nnz=X.nnz,
                   T=T, standard_cpu_s=round(t_std, 4), standard_iters_run=k)
        for sel in ["argmax", "pairing_heap", "fibonacci_heap"]:
            row[f"fast_{sel}_cpu_s"] = round(cpu(T, solver="fast", mechanism=sel), 4)
        best = min(("argmax", "pairing_heap", "fibonacci_heap"),
                   key=lambda s: row[f"fast_{s}_cpu_s"])
        row.update(auto=auto, fastest=best,
                   auto_vs_standard=round(t_std / row[f"fast_{auto}_cpu_s"], 2),
                   auto_vs_fastest=round(row[f"fast_{best}_cpu_s"]
                                         / row[f"fast_{auto}_cpu_s"], 2),
                   load1=load1())
        rows.append(row)
        print(row, flush=True)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["speed", "staleness", "work", "baseline", "pernnz",
                                    "nonprivate", "perstep", "renumber", "fits"])
    p.add_argument("--data")
    p.add_argument("--n-features", type=int, default=2 ** 20)
    p.add_argument("--l1-bound", type=float, default=50.0)
    p.add_argument("--max-iter", type=int, default=4000)
    p.add_argument("--standard-iters", type=int, default=None,
                   help="speed: run the standard solver for this many iterations "
                        "and extrapolate its per-step time (fit(k) - fit(1)) to T")
    p.add_argument("--fast-repeat", type=int, default=3,
                   help="speed: best of this many fits of each configuration (CPU "
                        "time; the standard one only when extrapolated)")
    p.add_argument("--private-selectors", nargs="+", default=["grouped", "noisy_max"],
                   help="speed: fast private selectors (noisy_max is O(D) per step "
                        "and timed at the default refresh_tol only)")
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    p.add_argument("--refresh-tols", type=float, nargs="+",
                   default=[float("inf"), 0.5, 0.3, 0.1])
    p.add_argument("--staleness-epsilon", type=float, default=1.0)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=3, help="baseline: best of")
    p.add_argument("--baseline-iters", type=int, default=10)
    p.add_argument("--skip-standard", action="store_true",
                   help="staleness: do not re-run the standard solver")
    p.add_argument("--private-only", action="store_true",
                   help="staleness: only the private part")
    p.add_argument("--private-max-iter", type=int, default=None)
    p.add_argument("--private-l1-bound", type=float, default=None)
    p.add_argument("--out")
    p.add_argument("--nonprivate", action="store_true",
                   help="speed: also time the non-private solvers (slow on IMDB)")
    p.add_argument("--npz-prefix", help="load X/y from PREFIX_{train,test}_{X.npz,y.npy}")
    p.add_argument("--perstep-settings", nargs="+", default=None,
                   choices=list(PERSTEP_SETTINGS), help="perstep: settings (default all)")
    p.add_argument("--fit-refresh-tols", type=float, nargs="+", default=None,
                   help="fits: refresh_tol values (default: the estimator's default)")
    p.add_argument("--threads", type=int, default=None,
                   help="limit the OpenMP (and BLAS) threads of every fit to this "
                        "many (threadpoolctl; default: the libraries' own)")
    p.add_argument("--sets", nargs="+", default=None,
                   help="nonprivate: data sets (LIBSVM names, news20, imdb; default all)")
    args = p.parse_args(argv)
    with (threadpool_limits(limits=args.threads) if args.threads else nullcontext()):
        if args.mode == "nonprivate":
            rows = nonprivate(args)
        else:
            X, y, Xt, yt = load(args)
            rows = {"speed": speed, "staleness": staleness, "work": work,
                    "baseline": baseline, "pernnz": pernnz, "perstep": perstep,
                    "renumber": renumber, "fits": fits}[args.mode](
                args, X, y, Xt, yt)
    if args.out and rows:
        with open(args.out, "w", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
