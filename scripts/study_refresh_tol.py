"""Study: model quality of the fast Frank-Wolfe solver against its staleness bound.

``FrankWolfeLassoClassifier(solver="fast")`` (Raff, Khanna and Lu 2023, Algorithm 2)
recomputes every stale row gradient whenever the product of ``(1 - eta_t)`` since
the last refresh drops below ``1 - refresh_tol``; ``refresh_tol=inf`` is Algorithm
2 as printed.  This script MEASURES what the bound does to the fitted model at
refresh_tol in {0.3 (the default ``DEFAULT_REFRESH_TOL``), 0.5, 0.7, inf}; it
measures no time.

* Part A, non-private optimisation quality (deterministic, one fit each):
  ``FrankWolfeLassoClassifier(epsilon=None, solver="fast", l1_bound=50,
  max_iter=T, k=None, classes=[0, 1])`` for each refresh_tol and each
  non-private selector (``"argmax"`` and ``"pairing_heap"``; ``"auto"`` resolves
  to one of them, ``nonprivate_fast_selector``), and ``solver="standard"``
  (Algorithm 1) once as the reference.  Recorded: the mean logistic loss of
  ``coef_`` on the training set and the exact Frank-Wolfe gap of that mean loss,
  both computed from scratch (``objective``/``exact_gap`` of
  ``scripts/bench_frank_wolfe.py``), test accuracy, ``solver_stats_["n_refresh"]``.
* Part B, private accuracy at the estimator's defaults except ``refresh_tol``:
  ``FrankWolfeLassoClassifier(epsilon=eps, delta=1e-5, n_samples_public=N,
  classes=[0, 1], random_state=seed, refresh_tol=rho)`` (k="auto" screening,
  naive-Bayes start, l1_bound="auto", max_iter="auto"), and
  ``SparsifiedLassoClassifier(epsilon=eps, delta=1e-5, n_samples_public=N,
  classes=[0, 1], random_state=seed)`` at its defaults with the staleness bound
  of its inner fits set to rho by monkeypatching (the package is not edited):
  its private Frank-Wolfe fit is built by ``_private_estimator`` without a
  ``refresh_tol`` (so it takes ``FrankWolfeLassoClassifier``'s default), and its
  non-private count fit reads the module-level ``DEFAULT_REFRESH_TOL`` of
  ``_sparsifier`` (used only with ``nonprivate_solver="frank_wolfe"``, not at the
  default ``"projected_gradient"``); both are patched.  The same seed draws the
  same noise stream for every rho, so the summary reports paired differences.
  ``memory`` caches the sparsifier's non-private fit (it does not depend on rho).
  Model ``FrankWolfeLasso-kNone`` (not a default fit): the same with ``k=None``,
  so no screening and the zero start (``t_0 = 0``, the refreshes of Part A).

Data: ``load(name)`` of ``scripts/study_accuracy_vs_epsilon.py`` (news20: 20
Newsgroups comp.* (1) vs rec.* (0), hashed 2^20 binary features; a9a: LIBSVM
a9a/a9a.t, 123 binary features; imdb: aclImdb, hashed 2^20).

Output: one CSV row per fit appended to
``docs/studies/frank_wolfe/refresh_tol_study_<dataset>.csv`` (rows already present
are skipped, so an interrupted run resumes).  Columns: dataset, part, model,
solver, mechanism (the selector used), refresh_tol, epsilon, seed, max_iter (the
steps run), l1_bound (the radius used), objective, gap (for private fits: of the
released ``coef_`` at the fit's radius, over all features), test_acc, n_refresh
(for the sparsifier: its private fit's), nnz, coef_sha1 (first 12 hex digits of
the SHA-1 of ``coef_``'s bytes, to see bit-identical models), load1.
``summary`` writes ``docs/studies/frank_wolfe/refresh_tol_study.md``.

Commands (repository root, one process at a time)::

    python scripts/study_refresh_tol.py run --part A --datasets a9a news20
    python scripts/study_refresh_tol.py run --part A --datasets a9a news20 \
        --max-iter 1000 --mechanisms argmax      # and again with --max-iter 2000
    python scripts/study_refresh_tol.py run --part A --datasets a9a news20 \
        --max-iter 1000 --mechanisms argmax --rhos 0   # and 2000, 4000: the check
                                                       # that rho = 0 is Algorithm 1
    python scripts/study_refresh_tol.py run --part B --datasets news20 a9a
    python scripts/study_refresh_tol.py run --part B --datasets news20 a9a \
        --models SparsifiedLasso --epsilons 1
    python scripts/study_refresh_tol.py run --part A --datasets imdb \
        --mechanisms argmax                      # and --max-iter 1000, 2000
    python scripts/study_refresh_tol.py run --part B --datasets imdb --epsilons 1 \
        --seeds 0 1 2 3 4
    python scripts/study_refresh_tol.py run --part B --datasets a9a --seeds $(seq 10 39)
    python scripts/study_refresh_tol.py run --part B --datasets a9a \
        --models SparsifiedLasso --epsilons 1 --seeds $(seq 10 39)
    python scripts/study_refresh_tol.py run --part B --datasets news20 \
        --models FrankWolfeLasso-kNone --epsilons 0.5 1 2 --seeds $(seq 0 39)
    python scripts/study_refresh_tol.py run --part B --datasets imdb \
        --models FrankWolfeLasso-kNone --epsilons 1 --seeds $(seq 0 39)
    python scripts/study_refresh_tol.py summary --datasets news20 a9a imdb
    python scripts/study_refresh_tol.py summary --datasets news20 a9a imdb \
        --summary-seeds $(seq 0 9)
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import csv  # noqa: E402
import hashlib  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frank_wolfe import exact_gap, load1, objective  # noqa: E402
from study_accuracy_vs_epsilon import load  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "docs" / "studies" / "frank_wolfe"
DELTA = 1e-5
RHOS = (0.3, 0.5, 0.7, math.inf)
FIELDS = (
    "dataset", "part", "model", "solver", "mechanism", "refresh_tol", "epsilon",
    "seed", "max_iter", "l1_bound", "objective", "gap", "test_acc", "n_refresh",
    "nnz", "coef_sha1", "load1",
)
KEY = ("dataset", "part", "model", "solver", "refresh_tol", "epsilon", "seed")


def key_of(row):
    """Resume key: Part A's fits also differ by selector and T (Part B's are the
    defaults)."""
    key = tuple(fmt(row[k]) for k in KEY)
    return key + (fmt(row["mechanism"]), fmt(row["max_iter"])) if row["part"] == "A" else key


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "inf" if math.isinf(v) else repr(v)
    return str(v)


def sha(coef):
    return hashlib.sha1(np.ascontiguousarray(coef, dtype=np.float64).tobytes()).hexdigest()[:12]


class Store:
    """Rows of one data set's CSV: appended one at a time, keyed for resuming."""

    def __init__(self, dataset, out_dir):
        self.path = Path(out_dir) / f"refresh_tol_study_{dataset}.csv"
        self.done = set()
        if self.path.exists():
            with open(self.path, newline="") as f:
                self.done = {key_of(r) for r in csv.DictReader(f)}

    def has(self, **key):
        return key_of(key) in self.done

    def add(self, row):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists()
        with open(self.path, "a", newline="") as f:
            w = csv.DictWriter(f, FIELDS)
            if new:
                w.writeheader()
            w.writerow({k: fmt(row.get(k)) for k in FIELDS})
        self.done.add(key_of(row))
        print({k: row.get(k) for k in FIELDS if k not in ("coef_sha1",)}, flush=True)


def quality(X, y, Xte, yte, est, l1_bound):
    w = np.asarray(est.coef_[0], dtype=np.float64)
    return dict(objective=objective(X, y, w), gap=exact_gap(X, y, w, l1_bound),
                test_acc=float(est.score(Xte, yte)), nnz=int(np.count_nonzero(w)),
                coef_sha1=sha(w))


# ---------------------------------------------------------------------------
# Part A
# ---------------------------------------------------------------------------
def part_a(name, data, store, args):
    from dptoolkit.linear_model import FrankWolfeLassoClassifier
    from dptoolkit.linear_model._frank_wolfe._budget import nonprivate_fast_selector

    X, y, Xte, yte = data
    T, lam = args.max_iter, 50.0
    base = dict(epsilon=None, l1_bound=lam, max_iter=T, k=None, classes=[0, 1])
    auto = nonprivate_fast_selector(X.shape[1], X.nnz).name
    print(f"{name}: mechanism='auto' resolves to {auto!r} (D={X.shape[1]}, nnz={X.nnz})",
          flush=True)
    common = dict(dataset=name, part="A", model="FrankWolfeLasso", epsilon=None, seed=None)
    runs = [("standard", None, "auto")]
    mechs = [auto] + [m for m in args.mechanisms if m != auto]
    runs += [("fast", rho, m) for m in mechs for rho in args.rhos]
    for solver, rho, mech in runs:
        key = dict(common, solver=solver, mechanism=mech if solver == "fast" else "argmax",
                   refresh_tol=rho, max_iter=T)
        if store.has(**key):
            continue
        kw = dict(base, solver=solver)
        if solver == "fast":
            kw.update(mechanism=mech, refresh_tol=rho)
        lo = load1()
        est = FrankWolfeLassoClassifier(**kw).fit(X, y)
        row = dict(key, mechanism=est.mechanism_, max_iter=est.n_iter_, l1_bound=lam,
                   n_refresh=est.solver_stats_.get("n_refresh", ""), load1=lo,
                   **quality(X, y, Xte, yte, est, lam))
        store.add(row)


# ---------------------------------------------------------------------------
# Part B
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def sparsifier_refresh_tol(rho):
    """Set the staleness bound of SparsifiedLassoClassifier's inner fits to rho."""
    from dptoolkit.linear_model import _sparsifier

    cls = _sparsifier.SparsifiedLassoClassifier
    old_private, old_default = cls._private_estimator, _sparsifier.DEFAULT_REFRESH_TOL

    def private_estimator(self, *a, **kw):
        est = old_private(self, *a, **kw)
        assert est.refresh_tol == old_default  # the default it would take otherwise
        return est.set_params(refresh_tol=rho)

    cls._private_estimator = private_estimator
    _sparsifier.DEFAULT_REFRESH_TOL = rho
    try:
        yield
    finally:
        cls._private_estimator = old_private
        _sparsifier.DEFAULT_REFRESH_TOL = old_default


def part_b(name, data, store, args):
    from dptoolkit.linear_model import FrankWolfeLassoClassifier, SparsifiedLassoClassifier

    X, y, Xte, yte = data
    n = X.shape[0]
    common = dict(delta=DELTA, n_samples_public=n, classes=[0, 1])
    for model in args.models:
        for eps in args.epsilons:
            for seed in args.seeds:
                for rho in args.rhos:
                    key = dict(dataset=name, part="B", model=model, solver="fast",
                               refresh_tol=rho, epsilon=eps, seed=seed)
                    if store.has(**key):
                        continue
                    lo = load1()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if model.startswith("FrankWolfeLasso"):
                            extra = dict(k=None) if model == "FrankWolfeLasso-kNone" else {}
                            est = FrankWolfeLassoClassifier(
                                epsilon=eps, random_state=seed, refresh_tol=rho,
                                **extra, **common).fit(X, y)
                            inner = est
                        else:
                            with sparsifier_refresh_tol(rho):
                                est = SparsifiedLassoClassifier(
                                    epsilon=eps, random_state=seed,
                                    memory=args.memory, **common).fit(X, y)
                            inner = est.estimator_
                            assert inner.refresh_tol == rho
                    lam = float(inner.l1_bound_)
                    row = dict(key, mechanism=inner.mechanism_ if model != "SparsifiedLasso"
                               else "auto", max_iter=inner.n_iter_, l1_bound=lam,
                               n_refresh=inner.solver_stats_.get("n_refresh", ""),
                               load1=lo, **quality(X, y, Xte, yte, est, lam))
                    store.add(row)


# ---------------------------------------------------------------------------
# summary
# ---------------------------------------------------------------------------
def read_rows(datasets, out_dir):
    rows = []
    for name in datasets:
        path = Path(out_dir) / f"refresh_tol_study_{name}.csv"
        if path.exists():
            with open(path, newline="") as f:
                rows += list(csv.DictReader(f))
    return rows


def summary(args):
    from scipy.stats import binomtest, ttest_1samp

    def tpval(x):
        if x.size < 2 or not np.any(x != 0):
            return 1.0
        return float(ttest_1samp(x, 0.0).pvalue)

    rows = read_rows(args.datasets, args.out_dir)
    out = []
    a = [r for r in rows if r["part"] == "A"]
    if a:
        out += ["## Part A: non-private, l1_bound = 50, k = None (one deterministic fit each)",
                "", "| data set | solver | selector | refresh_tol | T | refreshes | objective "
                "| exact FW gap | test acc | nnz |", "|---|---|---|---|---|---|---|---|---|---|"]
        a.sort(key=lambda r: (r["dataset"], int(r["max_iter"]), r["solver"] != "standard",
                              r["mechanism"], float(r["refresh_tol"] or 0)))
        for r in a:
            out.append(f"| {r['dataset']} | {r['solver']} | {r['mechanism']} | "
                       f"{r['refresh_tol'] or '-'} | {r['max_iter']} | "
                       f"{r['n_refresh'] if r['solver'] == 'fast' else '-'} | "
                       f"{float(r['objective']):.6f} | {float(r['gap']):.5f} | "
                       f"{float(r['test_acc']):.4f} | {r['nnz']} |")
        out.append("")
    b = [r for r in rows if r["part"] == "B"
         and (args.summary_seeds is None or int(r["seed"]) in args.summary_seeds)]
    groups = {}
    for r in b:
        groups.setdefault((r["dataset"], r["model"], r["epsilon"]), []).append(r)
    if groups:
        out += ["## Part B: private, defaults except refresh_tol (delta = 1e-5)", "",
                "Per rho: mean test accuracy over the seeds, refreshes of the (inner) "
                "Frank-Wolfe fit (min-max over seeds), steps T (min-max), and the "
                "paired difference to rho = 0.3 over the same seeds: mean, standard "
                "deviation, seeds where rho is better / worse / equal, the two-sided "
                "sign test's p-value (ties dropped), seeds whose coef_ is "
                "bit-identical to rho = 0.3's, and the mean (sd) paired difference of the "
                "training objective (mean logistic loss of the released coef_) with the "
                "two-sided paired t-test's p-value.", "",
                "| data set | model | eps | rho | seeds | mean acc (sd) | refreshes | T "
                "| mean diff vs 0.3 | sd diff | better/worse/equal | sign p | identical coef_ "
                "| objective diff vs 0.3 (sd) | objective t-test p |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        order = {name: i for i, name in enumerate(args.datasets)}
        for (name, model, eps), rs in sorted(
                groups.items(), key=lambda g: (order[g[0][0]], g[0][1], float(g[0][2]))):
            by = {}
            for r in rs:
                by.setdefault(r["refresh_tol"], {})[r["seed"]] = r
            ref = by.get("0.3", {})
            for rho in sorted(by, key=float):
                d = by[rho]
                acc = np.array([float(r["test_acc"]) for r in d.values()])
                nr = [int(r["n_refresh"]) for r in d.values()]
                ts = [int(r["max_iter"]) for r in d.values()]
                seeds = [s for s in d if s in ref]
                diff = np.array([float(d[s]["test_acc"]) - float(ref[s]["test_acc"])
                                 for s in seeds])
                dobj = np.array([float(d[s]["objective"]) - float(ref[s]["objective"])
                                 for s in seeds])
                same = sum(d[s]["coef_sha1"] == ref[s]["coef_sha1"] for s in seeds)
                if rho == "0.3" or not seeds:
                    dtxt = "- | - | - | - | - | - | -"
                else:
                    sd = diff.std(ddof=1) if diff.size > 1 else float("nan")
                    up, down = int((diff > 0).sum()), int((diff < 0).sum())
                    pval = binomtest(up, up + down).pvalue if up + down else 1.0
                    dtxt = (f"{diff.mean():+.4f} | {sd:.4f} | {up}/{down}/"
                            f"{(diff == 0).sum()} | {pval:.2f} | {same}/{len(seeds)} | "
                            f"{dobj.mean():+.2e} ({dobj.std(ddof=1) if dobj.size > 1 else 0:.1e}) | "
                            f"{tpval(dobj):.3g}")
                sd_acc = acc.std(ddof=1) if acc.size > 1 else float("nan")
                out.append(f"| {name} | {model} | {eps} | {rho} | {acc.size} | "
                           f"{acc.mean():.4f} ({sd_acc:.4f}) | {min(nr)}-{max(nr)} | {min(ts)}-{max(ts)} | "
                           f"{dtxt} |")
        out.append("")
    text = "\n".join(out)
    print(text)
    if args.write:
        Path(args.write).write_text(text + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("command", choices=("run", "summary"))
    p.add_argument("--part", choices=("A", "B"), default="A")
    p.add_argument("--datasets", nargs="+", default=["news20", "a9a"])
    p.add_argument("--rhos", nargs="+", type=float, default=list(RHOS))
    p.add_argument("--max-iter", type=int, default=4000, help="Part A: T of every fit")
    p.add_argument("--mechanisms", nargs="+", default=["argmax", "pairing_heap"],
                   help="Part A: non-private selectors of the fast solver")
    p.add_argument("--models", nargs="+", default=["FrankWolfeLasso"],
                   choices=("FrankWolfeLasso", "SparsifiedLasso", "FrankWolfeLasso-kNone"),
                   help="FrankWolfeLasso-kNone: the defaults but k=None (no screening, "
                   "so the zero start: not a default fit)")
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    p.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    p.add_argument("--memory", default="/tmp/refresh_tol_study_cache",
                   help="joblib cache of the sparsifier's non-private fit")
    p.add_argument("--out-dir", default=str(OUT_DIR))
    p.add_argument("--write", default=None, help="summary: write the tables here")
    p.add_argument("--summary-seeds", nargs="+", type=int, default=None,
                   help="summary: Part B rows of these seeds only (default all)")
    args = p.parse_args(argv)
    if args.command == "summary":
        return summary(args)
    for name in args.datasets:
        data = load(name)
        store = Store(name, args.out_dir)
        (part_a if args.part == "A" else part_b)(name, data, store, args)


if __name__ == "__main__":
    main()
