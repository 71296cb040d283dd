"""Fit time and test accuracy of every private classifier at its defaults on IMDB.

The question this script answers: does each private estimator of
:mod:`dptoolkit.linear_model` (and the select-then-fit pipeline) fit the README's
main job -- IMDB train, 25,000 reviews hashed to 2^20 binary unigram+bigram
features -- within a minute at its defaults?  Only ``epsilon``, ``delta``,
``n_samples_public`` and ``random_state`` are set (epsilon 1, delta 1e-5,
n_samples_public 25,000, seed 0); every other hyper-parameter is the estimator's
default.  The pipeline is :class:`~dptoolkit.selection.PrivateSelectThenFit` of
``DPSIS(k=1000, y_bounds=(0, 1))`` and a default
:class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`, the budget split
evenly, as in ``scripts/study_accuracy_vs_epsilon.py`` (the pipeline itself has
no default steps).

The fits run one after the other in this one process; each row gives the wall
time of ``fit`` (validation included, data loading excluded) and its CPU time
(``time.process_time``, less sensitive to other jobs on the machine), the test accuracy
on the 25,000 IMDB test reviews, the spent (epsilon, delta), the 1-minute load
average when the fit started and the ``git`` commit of the working tree.  The
machine may be shared: run it alone, e.g.::

    flock /tmp/dptoolkit-bench.lock python scripts/bench_default_fits.py

(the header names the dptoolkit it imported: run from a source tree with
``PYTHONPATH=.`` to measure that tree rather than the installed package).

Options: ``--models`` (a subset, names as printed), ``--epsilon``, ``--seed``,
``--cache DIR`` (keep the hashed matrices as .npz between runs; default
``$DPTOOLKIT_BENCH_CACHE`` or no cache), ``--out`` (CSV of the rows).
"""
import os

# one BLAS thread: the fits are compared on a shared machine (as the studies do)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

DELTA = 1e-5
MODELS = ("FrankWolfeLasso", "DPNBLogistic", "DPSGD", "DPSCD", "DPIGHT",
          "SparsifiedLasso", "DPSIS+FrankWolfe")
FIELDS = ("model", "fit_seconds", "cpu_seconds", "accuracy", "nnz", "eps_spent", "delta_spent", "load1",
          "commit", "warnings")
REPO = Path(__file__).resolve().parent.parent


def load1():
    """1-minute load average."""
    return os.getloadavg()[0]


def commit():
    """Short hash of HEAD, with ``+dirty`` when the tree has uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO, capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_imdb(cache):
    """IMDB train/test as CSR float64 (25,000 x 2^20 each) and {0, 1} labels."""
    from dptoolkit.datasets import get_data_path, load_text_corpus

    if cache is not None:
        cache = Path(cache)
        files = [cache / f"imdb_{p}.npz" for p in ("Xtr", "Xte")]
        yfile = cache / "imdb_y.npz"
        if all(f.exists() for f in files) and yfile.exists():
            Xtr, Xte = (sp.csr_array(sp.load_npz(f)) for f in files)
            ys = np.load(yfile)
            return Xtr, ys["ytr"], Xte, ys["yte"]
    path = get_data_path("text/aclImdb-train-test.tar.xz")
    Xtr, ytr = load_text_corpus(path, "train")[:2]
    Xte, yte = load_text_corpus(path, "test")[:2]
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        sp.save_npz(files[0], sp.csr_matrix(Xtr))
        sp.save_npz(files[1], sp.csr_matrix(Xte))
        np.savez(yfile, ytr=ytr, yte=yte)
    return sp.csr_array(Xtr), ytr, sp.csr_array(Xte), yte


def make(model, eps, seed, n):
    """The estimator ``model`` at its defaults (only the budget, N and seed set)."""
    from dptoolkit.linear_model import (DPIGHTClassifier, DPNBLogisticClassifier,
                                        DPSCDClassifier, DPSGDClassifier,
                                        FrankWolfeLassoClassifier,
                                        SparsifiedLassoClassifier)
    from dptoolkit.selection import DPSIS, PrivateSelectThenFit

    # IMDB's public label set (neg=0, pos=1), declared rather than read from y
    common = dict(epsilon=eps, delta=DELTA, n_samples_public=n, classes=[0, 1],
                  random_state=seed)
    classes = {
        "FrankWolfeLasso": FrankWolfeLassoClassifier,
        "DPNBLogistic": DPNBLogisticClassifier,
        "DPSGD": DPSGDClassifier,
        "DPSCD": DPSCDClassifier,
        "DPIGHT": DPIGHTClassifier,
        "SparsifiedLasso": SparsifiedLassoClassifier,
    }
    if model in classes:
        return classes[model](**common)
    if model == "DPSIS+FrankWolfe":
        half = dict(common, epsilon=eps / 2)
        return PrivateSelectThenFit(
            DPSIS(k=1000, epsilon=eps / 2, y_bounds=(0, 1), random_state=seed),
            FrankWolfeLassoClassifier(**half), epsilon=None)
    raise ValueError(f"unknown model {model!r}; expected one of {MODELS}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", default=os.environ.get("DPTOOLKIT_BENCH_CACHE"))
    parser.add_argument("--out", default=None, help="CSV file for the rows")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte = load_imdb(args.cache)
    n = Xtr.shape[0]
    rev = commit()
    import dptoolkit

    print(f"# dptoolkit from {Path(dptoolkit.__file__).parent}", flush=True)
    print(f"# IMDB train {Xtr.shape} nnz {Xtr.nnz}, test {Xte.shape}; loaded in "
          f"{time.perf_counter() - t0:.1f} s; epsilon {args.epsilon:g}, delta {DELTA:g}, "
          f"n_samples_public {n}, seed {args.seed}; {platform.processor() or platform.machine()}"
          f", {os.cpu_count()} cores; commit {rev}", flush=True)
    print(f"{'model':18s} {'fit s':>8s} {'CPU s':>8s} {'accuracy':>9s} {'nnz':>8s} {'eps':>7s} "
          f"{'delta':>8s} {'load1':>6s}", flush=True)
    rows = []
    for model in args.models:
        est = make(model, args.epsilon, args.seed, n)
        row = dict(model=model, load1=round(load1(), 2), commit=rev)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start, cpu = time.perf_counter(), time.process_time()
            est.fit(Xtr, ytr)
            row["fit_seconds"] = round(time.perf_counter() - start, 2)
            row["cpu_seconds"] = round(time.process_time() - cpu, 2)
        row["accuracy"] = round(float(np.mean(est.predict(Xte) == yte)), 4)
        coef = getattr(est, "coef_", None)
        if coef is None:
            coef = est.estimator_.coef_
        row["nnz"] = int(np.count_nonzero(coef))
        row["eps_spent"], row["delta_spent"] = (round(float(v), 6) for v in est.privacy_spent_)
        row["warnings"] = " | ".join(sorted({f"{w.category.__name__}: {str(w.message)[:80]}"
                                             for w in caught}))
        rows.append(row)
        print(f"{model:18s} {row['fit_seconds']:8.1f} {row['cpu_seconds']:8.1f} "
              f"{row['accuracy']:9.4f} {row['nnz']:8d} "
              f"{row['eps_spent']:7.4g} {row['delta_spent']:8.2g} {row['load1']:6.2f}"
              + (f"  [{row['warnings']}]" if row["warnings"] else ""), flush=True)
    print(f"# load average at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.out:
        with open(args.out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
