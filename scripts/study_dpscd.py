"""Study of Damaskinos et al. (2021) (DP-SCD): Figures 1-3 on data held here.

Protocol (Damaskinos et al. (2021), Section 5 and Appendix E), with the reductions listed in
docs/studies/dpscd.rst:

* logistic regression on ``phishing`` (75/25 train/test split), SVM (hinge) on
  ``a9a`` (the Adult data in LIBSVM form, its own test file), ridge regression on
  ``abalone`` (75/25) and on a larger synthetic set standing in for
  YearPredictionMSD; 25% of each training set is held out for validation;
* epsilon in {0.1, 0.5, 1, 2}, delta = 1e-3; lambda fixed per data set;
  10 epochs;
* every configuration of the (reduced) grid is fitted once (seed 0) and scored
  on the validation split; the best one per (data set, method, epsilon) is then
  refitted with seeds 1..10 and scored on the test split; the median (and the
  quartiles) over the 10 seeds is reported;
* Figure 2: training objective against epochs (synthetic ridge, epsilon 0.1 and
  1); Figure 3: validation MSE of DP-SCD against L for several C (synthetic
  ridge, epsilon = 1, median of 3 seeds).

Every private fit uses Poisson sampling with rate L/N and the noise multiplier of
``dptoolkit.accounting.calibrate_noise_multiplier`` (done inside the estimators).
N is passed as ``n_samples_public`` = the size of the training split: the
assumption (as in the paper and Abadi et al. 2016) is that the training-set size
is public, so the add/remove-one guarantee is stated for that N.

Usage::

    python scripts/study_dpscd.py                 # the full study (about 15-30 min)
    python scripts/study_dpscd.py --quick         # smoke test, tiny grid
    python scripts/study_dpscd.py --out DIR --datasets a9a abalone
    python scripts/study_dpscd.py --lambda-check  # DP-SCD vs DP-SGD as lambda changes
    python scripts/study_dpscd.py --defaults      # the defaults on a9a and 20news

Outputs in ``--out`` (default docs/studies/dpscd): ``grid.csv`` (every validation
fit), ``results.csv`` (test medians), ``figure1.png``, ``figure2.png``,
``figure3.png``, ``figure2.csv``, ``figure3.csv``, ``summary.csv``, ``timing.csv``
(and ``lambda_check.csv`` with ``--lambda-check``, ``defaults.csv`` with
``--defaults``).
"""
import argparse
import csv
import itertools
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split

from dptoolkit.datasets import get_data_path, load_libsvm
from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.linear_model import (DPSCDClassifier, DPSCDRegressor, DPSGDClassifier,
                                    DPSGDRegressor)
from dptoolkit.linear_model import primal_objective
from dptoolkit.linear_model import transform_rows as _transform_rows

EPSILONS = [0.1, 0.5, 1.0, 2.0]
DELTA = 1e-3
N_EPOCHS = 10
TEST_SEEDS = list(range(1, 11))

# reduced grids (paper: C, eta in 1e-8..1e4, L in {5,...,2000}; see the docs page)
GRID_L = [5, 10, 50, 100, 200, 500, 1000, 2000]
GRID_C_SCD = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]
GRID_C_SGD = [0.1, 1.0, 10.0]
GRID_ETA = [1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0]

QUICK = dict(L=[50, 500], C_SCD=[1e-3, 1e-1], C_SGD=[1.0], ETA=[1.0, 10.0],
             EPSILONS=[0.5, 2.0], SEEDS=[1, 2, 3], L_FIG3=[10, 100, 1000])

METHODS = ["DP-SCD", "DP-SCD (v only)", "seqDP-SCD", "DP-SGD", "SCD", "SGD"]


# ----------------------------------------------------------------------------- data
def _split(X, y, seed=0):
    """75/25 train/test, then 25% of the training part for validation (fixed seed)."""
    Xa, Xte, ya, yte = train_test_split(X, y, test_size=0.25, random_state=seed)
    Xtr, Xva, ytr, yva = train_test_split(Xa, ya, test_size=0.25, random_state=seed)
    return Xtr, ytr, Xva, yva, Xte, yte


def load(name):
    """(task, lambda, fit_intercept, Xtr, ytr, Xva, yva, Xte, yte)."""
    if name == "phishing":
        X, y = load_libsvm(get_data_path("phishing.bz2"), n_features=68)
        return ("logistic", 1e-4, False) + _split(X, y)
    if name == "a9a":
        X, y = load_libsvm(get_data_path("a9a.bz2"), n_features=123)
        Xte, yte = load_libsvm(get_data_path("a9a.t.bz2"), n_features=123)
        Xtr, Xva, ytr, yva = train_test_split(X, y, test_size=0.25, random_state=0)
        return ("hinge", 1e-5, False, Xtr, ytr, Xva, yva, Xte, yte)
    if name == "abalone":
        X, y = load_libsvm(get_data_path("abalone.bz2"), n_features=8, binary_labels=False)
        X = X.toarray()
        sex = X[:, 0].astype(int)          # public category coding 1, 2, 3 -> one-hot
        onehot = np.eye(3)[sex - 1]
        X = np.hstack([onehot, X[:, 1:]])  # measurements: public units (mm/200, g/200)
        return ("squared", 1e-4, True) + _split(X, y)
    if name == "synthetic":
        rng = np.random.default_rng(2021)
        n, m = 60_000, 90
        X = rng.normal(size=(n, m))
        X /= np.linalg.norm(X, axis=1, keepdims=True)   # unit rows by construction
        w = rng.normal(size=m) * math.sqrt(m)           # signal variance about m = 90
        y = X @ w + 0.5 * rng.normal(size=n)
        # CSR once: the estimators would convert a dense array at every fit
        return ("squared", 1e-4, False) + _split(sp.csr_array(X), y)
    raise ValueError(name)


# --------------------------------------------------------------------------- models
def make(method, task, lam, icpt, *, n_public, L=None, C=None, eta=None, eps=None,
         seed=0, keep_path=False):
    """``n_public``: the public dataset size N of a private fit (the training-set
    size, assumed public)."""
    clf = task != "squared"
    common = dict(alpha=lam, n_epochs=N_EPOCHS, random_state=seed, fit_intercept=icpt,
                  epsilon=None)
    if eps is not None:
        common.update(epsilon=eps, delta=DELTA, n_samples_public=n_public)
        if clf:  # the public label set: load's classification data are binary {0, 1}
            common.update(classes=[0, 1])
    if method in ("DP-SCD", "DP-SCD (v only)", "seqDP-SCD", "SCD"):
        kw = dict(common, batch_size=L, clip=C,
                  variant="sequential" if method == "seqDP-SCD" else "dual",
                  perturb_dual=method != "DP-SCD (v only)")
        est = DPSCDClassifier(task, **kw) if clf else DPSCDRegressor(**kw)
    else:
        kw = dict(common, batch_size=L, clip=C, learning_rate=eta)
        est = DPSGDClassifier(task, **kw) if clf else DPSGDRegressor(**kw)
    est.keep_coef_path = keep_path   # a diagnostic attribute, not a parameter
    return est


def score(model, X, y, task):
    if task == "squared":
        return float(np.mean((model.predict(X) - y) ** 2))
    return float(model.score(X, y))


def better(a, b, task):
    """Is score a better than b (accuracy: larger, MSE: smaller)?"""
    if b is None or not np.isfinite(b):
        return True
    if a is None or not np.isfinite(a):
        return False
    return a < b if task == "squared" else a > b


def grid(method, g):
    if method in ("DP-SCD", "DP-SCD (v only)", "seqDP-SCD"):
        return [dict(L=L, C=C) for L, C in itertools.product(g["L"], g["C_SCD"])]
    if method == "DP-SGD":
        return [dict(L=L, C=C, eta=e) for L, C, e in itertools.product(g["L"], g["C_SGD"],
                                                                    g["ETA"])]
    if method == "SGD":
        return [dict(L=L, C=None, eta=e) for L, e in itertools.product(g["L"], g["ETA"])]
    return [dict(L=1, C=None)]  # SCD: plain SDCA, nothing to tune


def fit_score(method, data, params, eps, seed, Xs, ys):
    task, lam, icpt, Xtr, ytr = data[:5]
    L = min(params["L"], Xtr.shape[0])
    model = make(method, task, lam, icpt, n_public=Xtr.shape[0], L=L, C=params.get("C"),
                 eta=params.get("eta"), eps=eps, seed=seed)
    try:
        model.fit(Xtr, ytr)
    except ValueError as exc:       # DP-SGD divergence at a large learning rate
        if "diverged" not in str(exc):
            raise
        return None, None
    return score(model, Xs, ys, task), model


# ------------------------------------------------------------------------ figure 1
def run_figure1(names, g, out, timing):
    grid_rows, result_rows = [], []
    for name in names:
        t0 = time.perf_counter()
        data = load(name)
        task, lam, icpt, Xtr, ytr, Xva, yva, Xte, yte = data
        print(f"[{name}] train {Xtr.shape}, val {Xva.shape[0]}, test {Xte.shape[0]}, "
              f"loss {task}, lambda {lam}", flush=True)
        for method in METHODS:
            eps_list = [None] if method in ("SCD", "SGD") else g["EPSILONS"]
            for eps in eps_list:
                t1 = time.perf_counter()
                best, best_p = None, None
                for params in grid(method, g):
                    s, _ = fit_score(method, data, params, eps, 0, Xva, yva)
                    grid_rows.append(dict(dataset=name, method=method, epsilon=eps,
                                          L=params["L"], C=params.get("C"),
                                          eta=params.get("eta"), val_score=s))
                    if better(s, best, task):
                        best, best_p = s, params
                tests = [fit_score(method, data, best_p, eps, sd, Xte, yte)[0]
                         for sd in g["SEEDS"]]
                tests = np.array([np.nan if t is None else t for t in tests])
                q1, med, q3 = np.nanpercentile(tests, [25, 50, 75])
                result_rows.append(dict(dataset=name, task=task, method=method,
                                        epsilon=eps, L=best_p["L"], C=best_p.get("C"),
                                        eta=best_p.get("eta"), val_score=best,
                                        test_median=med, test_q1=q1, test_q3=q3,
                                        n_seeds=len(tests)))
                print(f"  {method:16s} eps={eps!s:5s} best {best_p} val={best:.4f} "
                      f"test median={med:.4f} [{q1:.4f}, {q3:.4f}] "
                      f"({time.perf_counter() - t1:.1f}s)", flush=True)
        timing.append(dict(stage=f"figure1:{name}", seconds=time.perf_counter() - t0))
    _write_csv(out / "grid.csv", grid_rows)
    _write_csv(out / "results.csv", result_rows)
    return result_rows


def plot_figure1(rows, out, names):
    """Top row: every method; bottom row: the same without seqDP-SCD (zoom)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(names), figsize=(4.2 * len(names), 7.0), squeeze=False)
    styles = {"DP-SCD": ("C0", "o"), "DP-SCD (v only)": ("C9", "s"),
              "seqDP-SCD": ("C3", "v"), "DP-SGD": ("C1", "^")}
    for col, name in enumerate(names):
        sub = [r for r in rows if r["dataset"] == name]
        task = sub[0]["task"]
        for row in (0, 1):
            ax = axes[row, col]
            for m, (colour, mk) in styles.items():
                if row == 1 and m == "seqDP-SCD":
                    continue
                rs = sorted([r for r in sub if r["method"] == m], key=lambda r: r["epsilon"])
                e = [r["epsilon"] for r in rs]
                med = np.array([r["test_median"] for r in rs])
                err = np.array([[r["test_median"] - r["test_q1"] for r in rs],
                                [r["test_q3"] - r["test_median"] for r in rs]])
                ax.errorbar(e, med, yerr=err, color=colour, marker=mk, capsize=3, label=m)
            for m, ls in (("SCD", "--"), ("SGD", ":")):
                r = [r for r in sub if r["method"] == m]
                if r:
                    ax.axhline(r[0]["test_median"], color="k", ls=ls, lw=1, label=m)
            ax.set_xscale("log")
            ax.set_xlabel("epsilon (delta = 1e-3)")
            ax.set_ylabel("test MSE" if task == "squared" else "test accuracy")
            if task == "squared" and row == 0:
                ax.set_yscale("log")
            kind = "ridge" if task == "squared" else task
            ax.set_title(f"{name} ({kind})" + (" - zoom, no seqDP-SCD" if row else ""),
                         fontsize=9)
        axes[0, col].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figure1.png", dpi=75)
    plt.close(fig)


# ------------------------------------------------------------------------ figure 2
def run_figure2(rows, g, out, timing, name="synthetic"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t0 = time.perf_counter()
    data = load(name)
    task, lam, icpt, Xtr, ytr = data[:5]
    Xt, _ = _transform_rows(Xtr, "l2", icpt, 1.0)
    ref = Ridge(alpha=lam * Xtr.shape[0], fit_intercept=False, tol=1e-12).fit(Xt, ytr)
    f_star = primal_objective(Xt, ytr, ref.coef_, loss="squared", alpha=lam)
    curves = []
    eps_fig2 = [e for e in (0.1, 1.0) if e in g["EPSILONS"]] or g["EPSILONS"][:1]
    for method, eps in ([("SCD", None), ("SGD", None)]
                        + [(m, e) for e in eps_fig2 for m in ("DP-SCD", "DP-SGD")]):
        r = next(r for r in rows if r["dataset"] == name and r["method"] == method
                 and r["epsilon"] == eps)
        objs = []
        for sd in g["SEEDS"]:
            m = make(method, task, lam, icpt, n_public=Xtr.shape[0],
                     L=min(r["L"], Xtr.shape[0]),
                     C=None if _isnan(r["C"]) else r["C"],
                     eta=None if _isnan(r["eta"]) else r["eta"], eps=eps, seed=sd,
                     keep_path=True).fit(Xtr, ytr)
            objs.append(m._path_objectives(Xtr, ytr))
            epochs = m.epoch_path_
        med = np.median(np.array(objs), axis=0)
        curves.append((method, eps, epochs, med))
    fig, ax = plt.subplots(figsize=(5.5, 4))
    rows2 = []
    for method, eps, epochs, med in curves:
        lab = method if eps is None else f"{method} (eps={eps:g})"
        ls = "-" if eps is None or eps == max(eps_fig2) else "--"
        ax.plot(epochs, med - f_star, ls, marker=".", label=lab)
        rows2 += [dict(method=method, epsilon=eps, epoch=e, objective=o, f_star=f_star)
                  for e, o in zip(epochs, med)]
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("F(theta) - F* (training set)")
    ax.set_title(f"{name} ridge: median of {len(g['SEEDS'])} seeds")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figure2.png", dpi=110)
    plt.close(fig)
    _write_csv(out / "figure2.csv", rows2)
    timing.append(dict(stage="figure2", seconds=time.perf_counter() - t0))


# ------------------------------------------------------------------------ figure 3
def run_figure3(g, out, timing, name="synthetic", eps=1.0, seeds=(1, 2, 3)):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t0 = time.perf_counter()
    data = load(name)
    task, lam, icpt, Xtr, ytr, Xva, yva = data[:7]
    Ls = [L for L in g.get("L_FIG3", [5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000])
          if L <= Xtr.shape[0]]
    Cs = g.get("C_FIG3", [1e-3, 1e-2, 1e-1, 1.0, 10.0])
    rows3 = []
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for C in Cs:
        meds = []
        for L in Ls:
            vals = [fit_score("DP-SCD", data, dict(L=L, C=C), eps, sd, Xva, yva)[0]
                    for sd in seeds]
            meds.append(float(np.median(vals)))
            rows3.append(dict(C=C, L=L, val_mse_median=meds[-1], epsilon=eps))
        ax.plot(Ls, meds, marker="o", label=f"C = {C:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("mini-batch size L")
    ax.set_ylabel("validation MSE")
    ax.set_title(f"DP-SCD on {name}, eps = {eps:g}: median of {len(seeds)} seeds")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figure3.png", dpi=110)
    plt.close(fig)
    _write_csv(out / "figure3.csv", rows3)
    timing.append(dict(stage="figure3", seconds=time.perf_counter() - t0))


# ------------------------------------------------------------------- lambda check
def run_lambda_check(g, out, timing, name="synthetic", eps=1.0,
                     lambdas=(1e-4, 1e-3, 1e-2)):
    """DP-SCD against DP-SGD as lambda N / L changes (same grids, epsilon = 1).

    Mini-batch SDCA with the safe sigma' = L moves each dual variable by about
    lambda N / L of its residual per visit, so its progress per epoch depends on
    lambda N / L; this checks whether the DP-SCD / DP-SGD ranking depends on it.
    """
    t0 = time.perf_counter()
    base = load(name)
    rows = []
    for lam in lambdas:
        data = (base[0], lam) + base[2:]
        task, Xva, yva, Xte, yte = data[0], data[5], data[6], data[7], data[8]
        for method in ("SCD", "SGD", "DP-SCD", "DP-SCD (v only)", "DP-SGD"):
            e = None if method in ("SCD", "SGD") else eps
            best, best_p = None, None
            for params in grid(method, g):
                sc, _ = fit_score(method, data, params, e, 0, Xva, yva)
                if better(sc, best, task):
                    best, best_p = sc, params
            tests = np.array([fit_score(method, data, best_p, e, sd, Xte, yte)[0]
                              for sd in g["SEEDS"]], dtype=float)
            q1, med, q3 = np.nanpercentile(tests, [25, 50, 75])
            rows.append(dict(dataset=name, lam=lam, lam_n=lam * data[3].shape[0],
                             method=method, epsilon=e, L=best_p["L"], C=best_p.get("C"),
                             eta=best_p.get("eta"), val_score=best, test_median=med,
                             test_q1=q1, test_q3=q3))
            print(f"  lambda={lam:g} {method:16s} best {best_p} test median={med:.4f}",
                  flush=True)
    _write_csv(out / "lambda_check.csv", rows)
    timing.append(dict(stage="lambda_check", seconds=time.perf_counter() - t0))


# ------------------------------------------------------------------------ summary
# ------------------------------------------------------------------ defaults table
DEFAULTS_EPSILONS = [0.5, 1.0, 2.0, 4.0, 8.0]
DEFAULTS_DELTA = 1e-5
DEFAULTS_SEEDS = [0, 1, 2]


def load_defaults_data(name):
    """(Xtr, ytr, Xte, yte) of the data sets used to check the defaults.

    ``a9a``: the LIBSVM training and test files.  ``20news``: 20 Newsgroups
    "bydate", comp.* (label 1) against rec.* (label 0), its own train/test split,
    hashed word uni- and bigrams (2^20 binary features, the loader's default).
    """
    if name == "a9a":
        Xtr, ytr = load_libsvm(get_data_path("a9a.bz2"), n_features=123)
        Xte, yte = load_libsvm(get_data_path("a9a.t.bz2"), n_features=123)
        return Xtr, ytr, Xte, yte
    if name == "20news":
        from dptoolkit.datasets import load_text_corpus

        path = get_data_path("text/20news-bydate.tar.xz")
        kw = dict(n_features=2**20, ngram_range=(1, 2), positive="comp.", negative="rec.")
        Xtr, ytr, _ = load_text_corpus(path, "train", **kw)
        Xte, yte, _ = load_text_corpus(path, "test", **kw)
        return sp.csr_array(Xtr), ytr, sp.csr_array(Xte), yte
    raise ValueError(name)


def run_defaults_table(names, out, seeds=DEFAULTS_SEEDS, with_sgd=True, alphas=None):
    """Test accuracy of DPSCDClassifier at its defaults (logistic loss, lambda=1e-4,
    L=100, clip="auto", perturb_dual=False, 10 epochs): non-private and
    epsilon in {0.5, 1, 2, 4, 8}, delta = 1e-5, N = training-set size (public),
    median over ``seeds``.  DPSGDClassifier at its defaults for comparison.  With
    ``alphas``, DP-SCD at epsilon = 1 for each lambda (sensitivity of the default;
    development data only)."""
    rows = []
    for name in names:
        Xtr, ytr, Xte, yte = load_defaults_data(name)
        N = Xtr.shape[0]
        methods = [("DP-SCD", DPSCDClassifier)] + ([("DP-SGD", DPSGDClassifier)]
                                                    if with_sgd else [])
        for method, cls in methods:
            for eps in [None] + DEFAULTS_EPSILONS:
                accs, secs = [], []
                for seed in seeds:
                    kw = dict(random_state=seed)
                    if eps is not None:
                        # public: N and the label set (load_defaults_data: {0, 1})
                        kw.update(epsilon=eps, delta=DEFAULTS_DELTA, n_samples_public=N,
                                  classes=[0, 1])
                    t0 = time.perf_counter()
                    model = cls(**kw).fit(Xtr, ytr)
                    secs.append(time.perf_counter() - t0)
                    accs.append(model.score(Xte, yte))
                    if eps is None:
                        break          # non-private: deterministic up to batch order
                rows.append(dict(dataset=name, method=method,
                                 epsilon="none" if eps is None else eps,
                                 delta="" if eps is None else DEFAULTS_DELTA,
                                 n_train=N, median_acc=float(np.median(accs)),
                                 min_acc=float(np.min(accs)), max_acc=float(np.max(accs)),
                                 seeds=len(accs), seconds=float(np.median(secs))))
                print(rows[-1], flush=True)
        for lam in alphas or []:
            accs = [DPSCDClassifier(alpha=lam, epsilon=1.0, delta=DEFAULTS_DELTA,
                                    n_samples_public=N, classes=[0, 1], random_state=seed)
                    .fit(Xtr, ytr).score(Xte, yte) for seed in seeds]
            rows.append(dict(dataset=name, method=f"DP-SCD alpha={lam:g}", epsilon=1.0,
                             delta=DEFAULTS_DELTA, n_train=N,
                             median_acc=float(np.median(accs)), min_acc=float(np.min(accs)),
                             max_acc=float(np.max(accs)), seeds=len(accs), seconds=""))
            print(rows[-1], flush=True)
    _write_csv(out / "defaults.csv", rows)
    return rows


def summarize(out):
    """Pivot results.csv into summary.csv: one row per (data set, method), the test
    median [q1, q3] per epsilon, and the selected hyper-parameters."""
    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    table = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        for method in METHODS:
            rs = [r for r in rows if r["dataset"] == name and r["method"] == method]
            if not rs:
                continue
            entry = {"data set": name, "method": method}
            for r in rs:
                key = "no privacy" if r["epsilon"] == "" else f"eps={float(r['epsilon']):g}"
                entry[key] = (f"{float(r['test_median']):.4g} "
                              f"[{float(r['test_q1']):.4g}, {float(r['test_q3']):.4g}]")
                hp = f"L={r['L']}" + (f" C={r['C']}" if r["C"] else "") + (
                    f" eta={r['eta']}" if r["eta"] else "")
                entry.setdefault("selected (L, C, eta) per epsilon", []).append(hp)
            entry["selected (L, C, eta) per epsilon"] = "; ".join(
                entry["selected (L, C, eta) per epsilon"])
            table.append(entry)
    keys = ["data set", "method", "eps=0.1", "eps=0.5", "eps=1", "eps=2", "no privacy",
            "selected (L, C, eta) per epsilon"]
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, restval="")
        w.writeheader()
        w.writerows(table)


# -------------------------------------------------------------------------- utils
def _isnan(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def _write_csv(path, rows):
    if not rows:
        return
    keys = list(rows[0].keys())
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r[k] is None else (f"{r[k]:.6g}" if isinstance(r[k], float)
                                                     else r[k])) for k in keys})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/studies/dpscd")
    ap.add_argument("--datasets", nargs="+",
                    default=["phishing", "a9a", "abalone", "synthetic"])
    ap.add_argument("--quick", action="store_true", help="tiny grid (smoke test)")
    ap.add_argument("--skip-figures-2-3", action="store_true")
    ap.add_argument("--lambda-check", action="store_true",
                    help="only run the lambda N / L check on the synthetic set")
    ap.add_argument("--summarize-only", action="store_true",
                    help="only rewrite summary.csv from an existing results.csv")
    ap.add_argument("--defaults", nargs="*", metavar="DATASET",
                    help="only the table of the estimators' defaults (defaults.csv) on "
                         "a9a and/or 20news (default: both)")
    ap.add_argument("--defaults-alphas", nargs="*", type=float, default=[],
                    help="with --defaults: also DP-SCD at epsilon=1 for these lambdas")
    ap.add_argument("--defaults-skip-sgd", action="store_true",
                    help="with --defaults: DP-SCD only")
    args = ap.parse_args(argv)
    warnings.simplefilter("error", category=PrivacyLeakWarning)  # N must be public
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.summarize_only:
        summarize(out)
        return 0
    if args.defaults is not None:
        run_defaults_table(args.defaults or ["a9a", "20news"], out,
                           with_sgd=not args.defaults_skip_sgd, alphas=args.defaults_alphas)
        return 0
    if args.lambda_check:
        g = dict(L=GRID_L, C_SCD=GRID_C_SCD, C_SGD=GRID_C_SGD, ETA=GRID_ETA,
                 EPSILONS=EPSILONS, SEEDS=TEST_SEEDS)
        timing = []
        run_lambda_check(g, out, timing)
        print(timing)
        return 0
    if args.quick:
        g = QUICK
    else:
        g = dict(L=GRID_L, C_SCD=GRID_C_SCD, C_SGD=GRID_C_SGD, ETA=GRID_ETA,
                 EPSILONS=EPSILONS, SEEDS=TEST_SEEDS)
    timing = []
    t0 = time.perf_counter()
    warnings.simplefilter("ignore", category=UserWarning)
    # every private fit gets the public N; a fit that read N from the data must fail
    warnings.simplefilter("error", category=PrivacyLeakWarning)
    rows = run_figure1(args.datasets, g, out, timing)
    plot_figure1(rows, out, args.datasets)
    summarize(out)
    if not args.skip_figures_2_3 and "synthetic" in args.datasets:
        run_figure2(rows, g, out, timing)
        run_figure3(dict(g, C_FIG3=[1e-3, 1e-2, 1e-1, 1.0]) if not args.quick
                    else dict(g, C_FIG3=[1e-2, 1e-1]), out, timing)
    timing.append(dict(stage="total", seconds=time.perf_counter() - t0))
    _write_csv(out / "timing.csv", timing)
    for t in timing:
        print(f"{t['stage']:20s} {t['seconds']:8.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
