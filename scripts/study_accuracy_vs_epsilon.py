"""Study: accuracy against epsilon of every private classifier, at its defaults.

The privacy-utility table the project reports.  This script MEASURES; it does not
tune anything.  Every private classifier of dptoolkit is fitted at its defaults
(only ``epsilon``, ``delta``, ``n_samples_public`` and ``random_state`` are given)
at epsilon in {0.25, 0.5, 1, 2, 4, 8}, delta = 1e-5, n_samples_public = the
training size, seeds 0 and 1, next to non-private references on the same features.
Optionally (``--tuned``) the two private hyperparameter searches of the brief run
around DPNBLogisticClassifier and FrankWolfeLassoClassifier with the search's cost
included in epsilon.

Data (from ``dptoolkit.datasets.get_data_path``):

* ``imdb``: aclImdb train/test, hashed 2^20 binary uni+bigrams (the report set);
* ``news20``: 20 Newsgroups bydate, comp.* (1) vs rec.* (0), same featurisation;
* ``a9a``: LIBSVM a9a / a9a.t, 123 binary features.

Output: one CSV row per fit appended to ``<out-dir>/<dataset>.csv`` (rows already
present are skipped, so an interrupted run resumes), and ``<out-dir>/<dataset>.png``
(accuracy against epsilon, mean over seeds; non-private references as horizontal
lines).  Columns: dataset, model, setting (defaults / tuned / nonprivate), epsilon,
seed, accuracy, auc, nnz (non-zeros of coef_), fit_seconds, eps_spent, delta_spent,
load1 (1-minute load average when the model's fit started), note.

A model whose first fit (at epsilon = 1, run first) takes more than
``--slow-seconds`` (default 300) on a data set is run at epsilon = 1 only there.

Commands that produced docs/studies/accuracy_vs_epsilon.rst (repository root,
one process at a time)::

    python scripts/study_accuracy_vs_epsilon.py run --datasets news20 a9a imdb
    python scripts/study_accuracy_vs_epsilon.py run --datasets imdb news20 --tuned \
        --seeds 0
    python scripts/study_accuracy_vs_epsilon.py plot --datasets news20 a9a imdb
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

DELTA = 1e-5
EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
TUNED_EPSILONS = (0.5, 1.0, 2.0, 4.0)
SEEDS = (0, 1)
DEFAULT_MODELS = (
    "DPNBLogistic",
    "FrankWolfeLasso",
    "DPSGD",
    "DPSCD",
    "DPIGHT",
    "SparsifiedLasso",
    "DPSIS+FrankWolfe",
)
NONPRIVATE = ("LogReg-L2", "LogReg-L1", "FrankWolfeLasso-nonprivate")
TUNED = ("DPNBLogistic", "FrankWolfeLasso")
FIELDS = (
    "dataset", "model", "setting", "epsilon", "seed", "accuracy", "auc", "nnz",
    "fit_seconds", "eps_spent", "delta_spent", "load1", "note",
)
REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "docs" / "studies" / "accuracy_vs_epsilon"
CACHE = Path(os.environ.get("AVE_CACHE", "/tmp/accuracy_vs_epsilon_cache"))


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
def _load_uncached(name):
    from dptoolkit.datasets import get_data_path, load_libsvm, load_text_corpus

    if name == "imdb":
        path = get_data_path("text/aclImdb-train-test.tar.xz")
        Xtr, ytr = load_text_corpus(path, "train")[:2]
        Xte, yte = load_text_corpus(path, "test")[:2]
    elif name == "news20":
        path = get_data_path("text/20news-bydate.tar.xz")
        kw = dict(positive="comp.", negative="rec.")
        Xtr, ytr = load_text_corpus(path, "train", **kw)[:2]
        Xte, yte = load_text_corpus(path, "test", **kw)[:2]
    elif name.startswith("reuters-"):  # one ModApte topic against the rest
        path = get_data_path("text/reuters21578.tar.xz")
        Xtr, ytr = load_text_corpus(path, "train", positive=name[8:])[:2]
        Xte, yte = load_text_corpus(path, "test", positive=name[8:])[:2]
    elif name == "a9a":
        Xtr, ytr = load_libsvm(get_data_path("a9a.bz2"), n_features=123)[:2]
        Xte, yte = load_libsvm(get_data_path("a9a.t.bz2"), n_features=123)[:2]
    else:
        raise ValueError(f"unknown data set {name!r}")
    return Xtr, ytr, Xte, yte


def load(name):
    """Train/test CSR float64 and {0, 1} labels, cached as .npz in CACHE."""
    CACHE.mkdir(parents=True, exist_ok=True)
    files = [CACHE / f"{name}_{p}.npz" for p in ("Xtr", "Xte")]
    yfile = CACHE / f"{name}_y.npz"
    if all(f.exists() for f in files) and yfile.exists():
        Xtr, Xte = (sp.csr_array(sp.load_npz(f)) for f in files)
        ys = np.load(yfile)
        return Xtr, ys["ytr"], Xte, ys["yte"]
    Xtr, ytr, Xte, yte = _load_uncached(name)
    sp.save_npz(files[0], sp.csr_matrix(Xtr))
    sp.save_npz(files[1], sp.csr_matrix(Xte))
    np.savez(yfile, ytr=ytr, yte=yte)
    return sp.csr_array(Xtr), ytr, sp.csr_array(Xte), yte


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------
def make_private(model, eps, seed, n, memory, n_features):
    from dptoolkit.linear_model import (
        DPIGHTClassifier,
        DPNBLogisticClassifier,
        DPSCDClassifier,
        DPSGDClassifier,
        FrankWolfeLassoClassifier,
        SparsifiedLassoClassifier,
    )
    from dptoolkit.selection import DPSIS, PrivateSelectThenFit

    # every data set is binary with labels {0, 1} (load): the public label set
    common = dict(delta=DELTA, n_samples_public=n, classes=[0, 1], random_state=seed)
    if model == "DPNBLogistic":
        return DPNBLogisticClassifier(epsilon=eps, **common)
    if model == "FrankWolfeLasso":
        return FrankWolfeLassoClassifier(epsilon=eps, **common)
    if model == "DPSGD":
        return DPSGDClassifier(epsilon=eps, **common)
    if model == "DPSCD":
        return DPSCDClassifier(epsilon=eps, **common)
    if model == "DPIGHT":
        return DPIGHTClassifier(epsilon=eps, **common)
    if model == "SparsifiedLasso":
        # epsilon is the total; 5% of it for the private count (Khanna, Lu and Raff (2023),
        # Section 4.1: 0.05 of 1)
        return SparsifiedLassoClassifier(epsilon=eps, epsilon_count=0.05 * eps,
                                         memory=memory, **common)
    if model == "DPSIS+FrankWolfe":
        # mechanism="auto" and k="auto" (the defaults): with delta and D > N the
        # Gaussian release of all scores, k from the public N, eps, delta and D
        # (dptoolkit.selection.gaussian_auto_k); the pipeline's total budget sets
        # both steps' (epsilon, delta) so that their composition spends (eps, DELTA)
        # (selection_share at its default)
        return PrivateSelectThenFit(
            DPSIS(y_bounds=(0, 1), n_samples_public=n, random_state=seed),
            FrankWolfeLassoClassifier(n_samples_public=n, random_state=seed),
            epsilon=eps, delta=DELTA, classes=[0, 1],
        )
    raise ValueError(model)


def make_tuned(model, eps, seed, n):
    from dptoolkit.linear_model import DPNBLogisticClassifier, FrankWolfeLassoClassifier
    from dptoolkit.model_selection import PrivateHyperparameterSearch

    # the search sets epsilon/delta of each run; n_samples_public is the
    # estimator's own (the search trains on its training split, N(1-0.2) rows:
    # passing the full N is what the brief asks for; see the page)
    if model == "DPNBLogistic":
        est = DPNBLogisticClassifier(n_samples_public=n, random_state=seed, epsilon=None)
        grid = {
            "k": [1000, 5000, 20000],
            "n_epochs": [10, 20],
            "selection_share": [0.5, 0.75],
        }
    elif model == "FrankWolfeLasso":
        est = FrankWolfeLassoClassifier(n_samples_public=n, random_state=seed, epsilon=None)
        grid = {"l1_bound": [10, 50, 200]}
    else:
        raise ValueError(model)
    # the search's own public N: its split sizes and best_score_'s scale (n is the
    # training set's public size, as for the estimator; the estimator keeps its own)
    return PrivateHyperparameterSearch(
        est, grid, epsilon=eps, delta=DELTA, n_samples_public=n, classes=[0, 1],
        random_state=seed
    )


def make_nonprivate(model, seed):
    from sklearn.linear_model import LogisticRegression

    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    if model == "LogReg-L2":
        return LogisticRegression()
    if model == "LogReg-L1":
        # scikit-learn >= 1.8: penalty= is deprecated, l1_ratio=1 means L1
        return LogisticRegression(solver="liblinear", l1_ratio=1.0, C=1.0)
    if model == "FrankWolfeLasso-nonprivate":
        return FrankWolfeLassoClassifier(max_iter=1000, random_state=seed, epsilon=None)
    raise ValueError(model)


def _coef(m):
    for obj in (m, getattr(m, "best_estimator_", None), getattr(m, "estimator_", None)):
        if obj is not None and hasattr(obj, "coef_"):
            return np.asarray(obj.coef_)
    return None


def _scores(m, X):
    try:
        return np.asarray(m.decision_function(X)).ravel()
    except (AttributeError, NotImplementedError):
        try:
            return np.asarray(m.predict_proba(X))[:, 1]
        except (AttributeError, NotImplementedError):
            return None


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def evaluate(m, Xtr, ytr, Xte, yte):
    from sklearn.metrics import roc_auc_score

    t0 = time.perf_counter()
    m.fit(Xtr, ytr)
    secs = time.perf_counter() - t0
    acc = float(np.mean(m.predict(Xte) == yte))
    s = _scores(m, Xte)
    auc = float(roc_auc_score(yte, s)) if s is not None and np.all(np.isfinite(s)) else ""
    c = _coef(m)
    nnz = int(np.count_nonzero(c)) if c is not None else ""
    spent = getattr(m, "privacy_spent_", None)
    eps_s, del_s = (spent if spent is not None else ("", ""))
    return dict(accuracy=acc, auc=auc, nnz=nnz, fit_seconds=round(secs, 3),
                eps_spent=eps_s, delta_spent=del_s)


# ---------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------
def read_rows(path):
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def append_row(path, row):
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        w.writerow(row)
        f.flush()


def _key(model, setting, eps, seed):
    return (model, setting, f"{float(eps):g}", str(seed))


def run(args):
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    memdir = tempfile.mkdtemp(prefix="ave_joblib_")
    try:
        import joblib

        memory = joblib.Memory(memdir, verbose=0)
        for name in args.datasets:
            _run_dataset(name, args, out_dir, memory)
    finally:
        shutil.rmtree(memdir, ignore_errors=True)


def _run_dataset(name, args, out_dir, memory):
    path = out_dir / f"{name}.csv"
    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte = load(name)
    n = Xtr.shape[0]
    print(f"== {name}: train {Xtr.shape} nnz {Xtr.nnz}, test {Xte.shape}, "
          f"majority {max(np.mean(yte), 1 - np.mean(yte)):.4f}, "
          f"loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    done = {(r["model"], r["setting"], f"{float(r['epsilon']):g}" if r["epsilon"] else "",
             r["seed"]) for r in read_rows(path) if r["accuracy"] != ""}  # errors retried
    # epsilon = 1 first, so that a slow model can be cut to epsilon = 1 only
    eps_order = sorted(args.epsilons, key=lambda e: (e != 1.0, e))

    def one(model, setting, eps, seed, factory):
        key = _key(model, setting, eps, seed) if eps != "" else (model, setting, "", str(seed))
        if key in done:
            return None
        row = dict(dataset=name, model=model, setting=setting, epsilon=eps, seed=seed,
                   load1=load1(), note="")
        print(f"  {model:28s} {setting:10s} eps={eps!s:5s} seed={seed} "
              f"load={row['load1']:.2f} ...", end="", flush=True)
        try:
            m = factory()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                row.update(evaluate(m, Xtr, ytr, Xte, yte))
            msgs = sorted({f"{x.category.__name__}: {str(x.message)[:120]}" for x in w})
            if msgs:
                row["note"] = " | ".join(msgs)
                for msg in msgs:
                    print(f"\n    warning: {msg}", end="")
            if setting == "tuned":
                row["note"] = (row["note"] + " | " if row["note"] else "") + (
                    f"best={m.best_params_} eps_run={m.epsilon_run_:.4g}")
            print(f" acc={row['accuracy']:.4f} auc={row['auc'] if row['auc'] == '' else round(row['auc'], 4)}"
                  f" nnz={row['nnz']} {row['fit_seconds']:.1f}s spent={row['eps_spent']}",
                  flush=True)
        except Exception as exc:  # report, record, continue
            tb = traceback.format_exc()
            print(f" ERROR {type(exc).__name__}: {exc}", flush=True)
            with open(out_dir / f"{name}_errors.log", "a") as f:
                f.write(f"--- {model} {setting} eps={eps} seed={seed}\n{tb}\n")
            row.update(accuracy="", auc="", nnz="", fit_seconds="", eps_spent="",
                       delta_spent="", note=f"ERROR {type(exc).__name__}: {str(exc)[:200]}")
        append_row(path, row)
        done.add(key)
        return row

    if not args.skip_nonprivate:
        for model in NONPRIVATE:
            if model in args.exclude:
                continue
            one(model, "nonprivate", "", 0, lambda m=model: make_nonprivate(m, 0))

    if not args.tuned:
        for model in args.models:
            slow = False
            for eps in eps_order:
                for seed in args.seeds:
                    if slow and not (eps == 1.0 and seed == args.seeds[0]):
                        continue
                    row = one(model, "defaults", eps, seed,
                              lambda m=model, e=eps, s=seed: make_private(m, e, s, n, memory, Xtr.shape[1]))
                    if (row is not None and eps == 1.0 and seed == args.seeds[0]
                            and row["fit_seconds"] != ""
                            and row["fit_seconds"] > args.slow_seconds):
                        slow = True
                        print(f"  {model}: {row['fit_seconds']:.0f} s > "
                              f"{args.slow_seconds} s: epsilon = 1 only", flush=True)
            if slow:
                print(f"  {model}: run at epsilon = 1, seed {args.seeds[0]} only", flush=True)
    else:
        for model in args.tuned_models:
            for eps in sorted(args.tuned_epsilons, key=lambda e: (e != 1.0, e)):
                for seed in args.seeds:
                    one(model, "tuned", eps, seed,
                        lambda m=model, e=eps, s=seed: make_tuned(m, e, s, n))
    plot(name, out_dir)


# ---------------------------------------------------------------------------
# plot
# ---------------------------------------------------------------------------
def summarise(rows):
    """{(model, setting): {eps: (mean acc, n seeds)}} over rows without errors."""
    out = {}
    for r in rows:
        if r["accuracy"] == "":
            continue
        eps = float(r["epsilon"]) if r["epsilon"] else None
        out.setdefault((r["model"], r["setting"]), {}).setdefault(eps, []).append(
            float(r["accuracy"]))
    return {k: {e: (float(np.mean(v)), len(v)) for e, v in d.items()} for k, d in out.items()}


def plot(name, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(out_dir) / f"{name}.csv"
    summ = summarise(read_rows(path))
    if not summ:
        return
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colours = dict(zip(DEFAULT_MODELS, plt.get_cmap("tab10").colors))
    styles = {"defaults": "-o", "tuned": "--s"}
    np_colours = {"LogReg-L2": "grey", "LogReg-L1": "black",
                  "FrankWolfeLasso-nonprivate": "tab:brown"}
    order = list(DEFAULT_MODELS) + list(NONPRIVATE)
    for (model, setting), d in sorted(summ.items(), key=lambda kv: (
            order.index(kv[0][0]) if kv[0][0] in order else 99, kv[0][1])):
        if setting == "nonprivate":
            ax.axhline(d[None][0], ls=":", lw=1.2, color=np_colours.get(model, "grey"),
                       label=f"{model} (non-private)")
            continue
        e = sorted(d)
        ax.plot(e, [d[x][0] for x in e], styles[setting], ms=4,
                color=colours.get(model), mfc="none" if setting == "tuned" else None,
                label=f"{model}" + (" (private search)" if setting == "tuned" else ""))
    yfile = CACHE / f"{name}_y.npz"
    if yfile.exists():
        yte = np.load(yfile)["yte"]
        ax.axhline(max(np.mean(yte), 1 - np.mean(yte)), ls="-", lw=0.8, color="red",
                   alpha=0.5, label="majority class")
    ax.set_xscale("log", base=2)
    ax.set_xticks(EPSILONS)
    ax.set_xticklabels([f"{x:g}" for x in EPSILONS])
    ax.set_xlabel(r"$\varepsilon$ ($\delta = 10^{-5}$)")
    ax.set_ylabel("test accuracy (mean over seeds)")
    ax.set_title(f"{name}: accuracy against epsilon, private classifiers at defaults")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(Path(out_dir) / f"{name}.png", dpi=110)
    plt.close(fig)
    print(f"  wrote {Path(out_dir) / f'{name}.png'}", flush=True)


def table(name, out_dir):
    """Print an RST simple table: mean test accuracy per model x epsilon (over the
    seeds without errors), AUC, non-zeros and fit seconds at epsilon = 1."""
    rows = [r for r in read_rows(Path(out_dir) / f"{name}.csv") if r["accuracy"] != ""]
    groups = {}
    for r in rows:
        eps = float(r["epsilon"]) if r["epsilon"] else None
        groups.setdefault((r["model"], r["setting"]), {}).setdefault(eps, []).append(r)
    order = {"defaults": 0, "tuned": 1, "nonprivate": 2}
    models = list(DEFAULT_MODELS) + list(NONPRIVATE)
    keys = sorted(groups, key=lambda k: (order[k[1]], models.index(k[0])
                                         if k[0] in models else 99))
    eps_all = sorted({e for d in groups.values() for e in d if e is not None})
    head = ["model", "setting"] + [f"{e:g}" for e in eps_all] + [
        "no DP", "seeds", "AUC@1", "nnz@1", "fit s@1"]
    lines = []
    if not eps_all:
        return
    for k in keys:
        d = groups[k]
        mean = {e: np.mean([float(r["accuracy"]) for r in v]) for e, v in d.items()}
        ref = d.get(1.0) or d.get(None) or next(iter(d.values()))
        nseed = "/".join(sorted({str(len(v)) for v in d.values()}))
        cells = [k[0], k[1]]
        if k[1] == "nonprivate":
            cells += ["" for _ in eps_all] + [f"{mean[None]:.3f}"]
        else:
            cells += [f"{mean[e]:.3f}" if e in mean else "--" for e in eps_all] + [""]
        aucs = [float(r["auc"]) for r in ref if r["auc"] != ""]
        cells += [nseed, f"{np.mean(aucs):.3f}" if aucs else "--",
                  f"{np.mean([float(r['nnz']) for r in ref]):.0f}",
                  f"{np.mean([float(r['fit_seconds']) for r in ref]):.1f}"]
        lines.append(cells)
    widths = [max(len(str(c)) for c in col) for col in zip(head, *lines)]
    rule = "  ".join("=" * w for w in widths)
    def fmt(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    print(rule)
    print(fmt(head))
    print(rule)
    for cells in lines:
        print(fmt(cells))
    print(rule)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="fit and append CSV rows (resumes)")
    r.add_argument("--datasets", nargs="+", default=["news20", "a9a", "imdb"],
                   choices=["imdb", "news20", "a9a"])
    r.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS),
                   choices=list(DEFAULT_MODELS))
    r.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    r.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    r.add_argument("--tuned", action="store_true",
                   help="run the private hyperparameter searches instead")
    r.add_argument("--tuned-models", nargs="+", default=list(TUNED), choices=list(TUNED))
    r.add_argument("--tuned-epsilons", nargs="+", type=float, default=list(TUNED_EPSILONS))
    r.add_argument("--skip-nonprivate", action="store_true")
    r.add_argument("--exclude", nargs="*", default=[], help="non-private models to skip")
    r.add_argument("--slow-seconds", type=float, default=300.0)
    r.add_argument("--out-dir", default=str(OUT_DIR))
    for name in ("plot", "table"):
        q = sub.add_parser(name)
        q.add_argument("--datasets", nargs="+", default=["news20", "a9a", "imdb"])
        q.add_argument("--out-dir", default=str(OUT_DIR))
    args = p.parse_args(argv)
    if args.cmd == "run":
        run(args)
    else:
        for name in args.datasets:
            (plot if args.cmd == "plot" else table)(name, args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
