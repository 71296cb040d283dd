"""Side-by-side measurements of the Frank-Wolfe solvers (Raff et al. 2023, Tables 3-4).

Every ratio printed here comes from runs made one after the other in the same
process on the same data, so machine load affects both sides alike.

    python scripts/bench_frank_wolfe.py speed      # Table 3 analogue (IMDB, 2^20 features)
    python scripts/bench_frank_wolfe.py staleness  # refresh_tol study
    python scripts/bench_frank_wolfe.py work       # touched non-zeros per iteration
    python scripts/bench_frank_wolfe.py baseline   # standard step vs SciPy gradient

Options: --data (LIBSVM file or corpus; default the IMDB train set hashed to
2^20 binary features), --l1-bound, --max-iter, --standard-iters (run the standard
solver for fewer iterations and scale its time linearly: its per-iteration cost
does not depend on t; the printed table says when this is done), --out (CSV).
"""
import argparse
import csv
import sys
import time

import numpy as np
import scipy.sparse as sp

from dptoolkit.datasets import get_data_path, load_libsvm, load_text_corpus
from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.linear_model._frank_wolfe import DEFAULT_REFRESH_TOL


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
    clf = FrankWolfeLassoClassifier(**kw)
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
        std, t_std, c_std = timed_fit(X, y, cpu=True, max_iter=t_std_iters,
                                      solver="standard", **base)
        scale = T / t_std_iters  # the standard step's cost does not depend on t
        t_std_full, c_std_full = t_std * scale, c_std * scale
        fast_selectors = ["pairing_heap", "fibonacci_heap"] if eps is None else [
            "grouped", "noisy_max"]
        for sel in fast_selectors:
            # the O(D)-per-step noisy-max ablation is run at the default rho only
            rhos = args.refresh_tols if sel != "noisy_max" else [DEFAULT_REFRESH_TOL]
            for rho in rhos:
                fast, t_fast, c_fast = timed_fit(X, y, cpu=True, max_iter=T,
                                                 solver="fast", selector=sel,
                                                 refresh_tol=rho, **base)
                row = dict(setting=label, solver=f"fast+{sel}", refresh_tol=rho,
                           wall_s=round(t_fast, 3), cpu_s=round(c_fast, 3),
                           standard_wall_s=round(t_std_full, 2),
                           standard_cpu_s=round(c_std_full, 2),
                           standard_iters_run=t_std_iters,
                           speedup_wall=round(t_std_full / t_fast, 1),
                           speedup_cpu=round(c_std_full / c_fast, 1),
                           refreshes=fast.solver_stats_["n_refresh"],
                           test_acc=round(fast.score(Xt, yt), 4),
                           nnz=int(np.count_nonzero(fast.coef_)))
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
                                     refresh_tol=rho, selector="pairing_heap")
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
                                                 selector="noisy_max"))]:
        def fit(n_iter):
            return timed_fit(X, y, cpu=True, solver="standard", l1_bound=args.l1_bound,
                             max_iter=n_iter, random_state=0, **kw)[2]
        # per-iteration cost: difference of a k+1- and a 1-iteration fit (removes
        # the fixed set-up cost of validation and the CSC copy)
        per_iter = (min(fit(k + 1) for _ in range(args.repeat))
                    - min(fit(1) for _ in range(args.repeat))) / k
        rows.append(dict(standard=label, per_iter_cpu_s=round(per_iter, 4),
                         reference_cpu_s=round(ref, 4), ratio=round(per_iter / ref, 2)))
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
                             work_ratio_vs_standard=2 * X.nnz * T / s["touched_nnz"]))
            print(rows[-1], flush=True)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["speed", "staleness", "work", "baseline"])
    p.add_argument("--data")
    p.add_argument("--n-features", type=int, default=2 ** 20)
    p.add_argument("--l1-bound", type=float, default=50.0)
    p.add_argument("--max-iter", type=int, default=4000)
    p.add_argument("--standard-iters", type=int, default=None)
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    p.add_argument("--refresh-tols", type=float, nargs="+",
                   default=[float("inf"), 0.3, 0.1, 0.03, 0.0])
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
    args = p.parse_args(argv)
    X, y, Xt, yt = load(args)
    rows = {"speed": speed, "staleness": staleness, "work": work,
            "baseline": baseline}[args.mode](
        args, X, y, Xt, yt)
    if args.out and rows:
        with open(args.out, "w", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
