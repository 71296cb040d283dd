"""Study: the select-then-fit pipeline's total budget on the development sets.

Measures ``PrivateSelectThenFit(DPSIS -> FrankWolfeLassoClassifier, epsilon=eps,
delta=1e-5, selection_share=s)`` (both steps' budgets set by the pipeline so that
their composed event spends exactly (eps, delta)) against the former split
(``--configs before``: each step at eps / 2 and delta / 2), on the features of
``scripts/study_accuracy_vs_epsilon.py`` (its ``load``).  Every other parameter is a
default: ``DPSIS(y_bounds=(0, 1))``, Frank-Wolfe at its defaults, ``n_samples_public``
the training size, the public label set {0, 1}.

A configuration is ``K:SCREENING:SHARE[:START]``: DP-SIS's ``k`` ("auto" or an
int), Frank-Wolfe's ``k`` ("auto", "none" or an int; an int is kept, so
``2048:1024:0.5`` screens the 2,048 selected columns again to 1,024),
``selection_share``, and Frank-Wolfe's ``start`` (default "auto": with
``k`` "auto" the pipeline keeps Frank-Wolfe's release of the per-class
sums on all the selected columns for its naive-Bayes start; ``:zero`` is the
former pipeline, ``k`` "auto" turned off and the zero start); or
``before``.

Develop on ``news20`` (comp.* vs rec.*), ``reuters-acq`` (ModApte acq against the
rest) and ``a9a``; IMDB (``imdb``) is the report set, run once after the choices.  Output: one
row per fit appended to ``<out>/select_then_fit_budget.csv`` (rows present are
skipped).  From the repository root::

    python scripts/study_select_then_fit_budget.py --datasets news20 a9a \
        --configs before auto:auto:0.25:zero auto:auto:0.5:zero auto:auto:0.75:zero
    python scripts/study_select_then_fit_budget.py --datasets news20 reuters-acq \
        --epsilons 0.5 1 2 8 --seeds 0 1 2 3 4 5 6 7 \
        --configs auto:auto:0.5:zero auto:auto:0.25 auto:auto:0.5 auto:auto:0.75
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import itertools  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_accuracy_vs_epsilon import DELTA, load  # noqa: E402

FIELDS = ("dataset", "config", "epsilon", "seed", "accuracy", "k", "screening", "n_iter",
          "selector_epsilon", "estimator_epsilon", "eps_spent", "delta_spent",
          "fit_seconds", "load1")


def make(config, eps, seed, n):
    from dptoolkit.linear_model import FrankWolfeLassoClassifier
    from dptoolkit.selection import DPSIS, PrivateSelectThenFit

    if config == "before":
        return PrivateSelectThenFit(
            DPSIS(epsilon=eps / 2, delta=DELTA / 2, y_bounds=(0, 1), n_samples_public=n,
                  random_state=seed),
            FrankWolfeLassoClassifier(epsilon=eps / 2, delta=DELTA / 2, n_samples_public=n,
                                      classes=[0, 1], random_state=seed), epsilon=None)
    k, screening, share, start = (config + ":auto").split(":")[:4]
    k = k if k == "auto" else int(k)
    screening = {"auto": "auto", "none": None}.get(screening) or int(screening)
    return PrivateSelectThenFit(
        DPSIS(k=k, y_bounds=(0, 1), n_samples_public=n, random_state=seed),
        FrankWolfeLassoClassifier(n_samples_public=n, k=screening, start=start,
                                  random_state=seed),
        epsilon=eps, delta=DELTA, selection_share=float(share), classes=[0, 1])


def fit_row(ds, config, eps, seed, data):
    """One fit, as a CSV row."""
    Xtr, ytr, Xte, yte = data
    load1 = os.getloadavg()[0]
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = make(config, eps, seed, Xtr.shape[0]).fit(Xtr, ytr)
    fw = m.estimator_
    return dict(dataset=ds, config=config, epsilon=eps, seed=seed,
                accuracy=round(float(m.score(Xte, yte)), 4), k=int(m.support_.sum()),
                screening=fw.k, n_iter=fw.n_iter_,
                selector_epsilon=round(m.selector_.epsilon, 4),
                estimator_epsilon=round(fw.epsilon, 4), eps_spent=m.privacy_spent_[0],
                delta_spent=m.privacy_spent_[1],
                fit_seconds=round(time.perf_counter() - t, 1), load1=round(load1, 2))


def run(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "select_then_fit_budget.csv"
    rows = []
    if path.exists():
        with open(path) as fh:
            rows = list(csv.DictReader(fh))
    done = {(r["dataset"], r["config"], float(r["epsilon"]), int(r["seed"])) for r in rows}
    for ds in args.datasets:
        data = load(ds)
        todo = [key for key in itertools.product(args.configs, args.epsilons, args.seeds)
                if (ds, *key) not in done]
        for config, eps, seed in todo:
            row = fit_row(ds, config, eps, seed, data)
            with open(path, "a", newline="") as fh:     # one row at a time: resumable
                writer = csv.DictWriter(fh, FIELDS)
                if fh.tell() == 0:
                    writer.writeheader()
                writer.writerow(row)
            rows.append(row)
    means = {}
    for r in rows:
        means.setdefault((r["dataset"], r["config"], float(r["epsilon"])), []).append(
            float(r["accuracy"]))
    for (ds, config, eps), accs in means.items():
        print(f"{ds} {config} eps={eps:g}: mean accuracy {np.mean(accs):.4f} over "
              f"{len(accs)} seeds")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=["news20"],
                   choices=["news20", "a9a", "reuters-acq", "reuters-earn", "imdb"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    p.add_argument("--configs", nargs="+", default=["before", "auto:auto:0.5"],
                   help="K:SCREENING:SHARE[:START] (see the module docstring) or 'before'")
    p.add_argument("--out", default="docs/studies/feature_selection")
    run(p.parse_args(argv))


if __name__ == "__main__":
    main()
