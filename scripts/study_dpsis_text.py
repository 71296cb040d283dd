"""Study: DP-SIS selectors on hashed text, inside select-then-fit with Frank-Wolfe.

Measures ``PrivateSelectThenFit(DPSIS -> FrankWolfeLassoClassifier)`` with the
split of ``scripts/study_accuracy_vs_epsilon.py`` (selection and model at
epsilon / 2 each; delta = 1e-5 split in two halves when the selection uses one)
on the hashed 2^20 binary uni+bigram features of that study (its ``load``), for:

* ``gaussian``: ``DPSIS(mechanism="gaussian")``, one Gaussian release of the
  scores of unit-norm rows, top-k of the noisy magnitudes; ``k="auto"``
  (``dptoolkit.selection.gaussian_auto_k``) and fixed k in ``--ks``;
* ``canonical_lipschitz``: the pure-DP selector with its ``k="auto"``
  (``dptoolkit.selection.auto_k``), the former default.

Every other parameter is a default; ``n_samples_public`` is the training size.
Develop on ``news20`` (comp.* vs rec.*); ``imdb`` is the report set (run it once,
after the choices).  Output: ``<out>/text_selection.csv`` (one row per fit,
appended; rows present are skipped) and ``<out>/text_selection.png`` (mean test
accuracy against epsilon per data set and selector).  From the repository root::

    python scripts/study_dpsis_text.py --datasets news20 --epsilons 0.5 1 2 4 \
        --seeds 0 1 2 3 --ks 100 300 1024
    python scripts/study_dpsis_text.py --datasets imdb --epsilons 1 --seeds 0 1 --ks
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import functools  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_accuracy_vs_epsilon import DELTA, load  # noqa: E402

FIELDS = ("dataset", "selector", "k_setting", "nominal", "k", "epsilon", "seed", "accuracy",
          "eps_spent", "delta_spent", "fit_seconds", "load1")


def make(selector, k, eps, seed, n):
    from dptoolkit.linear_model import FrankWolfeLassoClassifier
    from dptoolkit.selection import DPSIS, PrivateSelectThenFit

    if selector == "gaussian":
        sel = DPSIS(k=k, epsilon=eps / 2, delta=DELTA / 2, mechanism="gaussian",
                    y_bounds=(0, 1), n_samples_public=n, random_state=seed)
        model_delta = DELTA / 2
    else:
        sel = DPSIS(k=k, epsilon=eps / 2, mechanism=selector, y_bounds=(0, 1),
                    n_samples_public=n, random_state=seed)
        model_delta = DELTA
    return PrivateSelectThenFit(sel, FrankWolfeLassoClassifier(
        epsilon=eps / 2, delta=model_delta, n_samples_public=n, classes=[0, 1],
        random_state=seed), epsilon=None)


@functools.lru_cache(maxsize=None)
def nominal_for_spend(selector, k, eps, n, d):
    """The nominal epsilon (eps / 2 to each step) whose pipeline spends ``eps`` by the
    accountant's composition of the two events (``privacy_spent_``).  The Gaussian
    release and Frank-Wolfe's zCDP steps compose in Renyi DP, so two steps at
    (eps / 2, delta / 2) spend less than eps; this is the split that spends the
    whole budget.  Public quantities only: the spend is read from fits on a public
    stand-in of the data's shape (all-zero rows, alternating labels), since the
    event depends on the shape, N, epsilon, delta and k only."""
    import scipy.sparse as sp

    X0 = sp.csr_array((n, d))
    y0 = np.arange(n) % 2

    def spent(nominal):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return make(selector, k, nominal, 0, n).fit(X0, y0).privacy_spent_[0]
    lo, hi = eps, 4.0 * eps
    if spent(lo) >= eps:
        return eps
    for _ in range(20):         # to 3 * 2**-20 eps
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if spent(mid) <= eps else (lo, mid)
    return lo


def run(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / ("text_selection_spend.csv" if args.spend_total else "text_selection.csv")
    done = set()
    if path.exists():
        with open(path) as fh:
            done = {(r["dataset"], r["selector"], r["k_setting"], float(r["epsilon"]),
                     int(r["seed"])) for r in csv.DictReader(fh)}
    configs = [("gaussian", "auto")] + [("gaussian", str(k)) for k in args.ks] + [
        ("canonical_lipschitz", "auto")]
    new = not path.exists()
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if new:
            writer.writeheader()
        for ds in args.datasets:
            Xtr, ytr, Xte, yte = load(ds)
            n = Xtr.shape[0]
            for eps in args.epsilons:
                for selector, k_setting in configs:
                    for seed in args.seeds:
                        if (ds, selector, k_setting, eps, seed) in done:
                            continue
                        k = k_setting if k_setting == "auto" else int(k_setting)
                        nominal = (nominal_for_spend(selector, k, eps, n, Xtr.shape[1])
                                   if args.spend_total else eps)
                        load1 = os.getloadavg()[0]
                        t = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            m = make(selector, k, nominal, seed, n).fit(Xtr, ytr)
                        row = dict(dataset=ds, selector=selector, k_setting=k_setting,
                                   nominal=round(nominal, 4),
                                   k=m.selector_.k_, epsilon=eps, seed=seed,
                                   accuracy=round(float(m.score(Xte, yte)), 4),
                                   eps_spent=round(m.privacy_spent_[0], 4),
                                   delta_spent=m.privacy_spent_[1],
                                   fit_seconds=round(time.perf_counter() - t, 1),
                                   load1=round(load1, 2))
                        writer.writerow(row)
                        fh.flush()
                        print(row, flush=True)
    plot(path, path.with_suffix(".png"), args.spend_total)


def plot(path, png, spend_total=False):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.read_csv(path)
    df["label"] = df.selector + ", k=" + df.k_setting.astype(str)
    sets = list(dict.fromkeys(df.dataset))
    fig, axes = plt.subplots(1, len(sets), figsize=(5.5 * len(sets), 4), squeeze=False)
    for ax, ds in zip(axes[0], sets):
        sub = df[df.dataset == ds]
        for label, g in sub.groupby("label", sort=False):
            m = g.groupby("epsilon").accuracy.agg(["mean", "count"])
            ax.plot(m.index, m["mean"], "o-", label=f"{label}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("epsilon spent (privacy_spent_ of the composed events)"
                      if spend_total else
                      "epsilon (selection and model: epsilon / 2 each)")
        ax.set_ylabel("test accuracy (mean over seeds)")
        ax.set_title(f"{ds}: DPSIS -> Frank-Wolfe")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=["news20"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0, 4.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    p.add_argument("--ks", nargs="*", type=int, default=[100, 300, 1024],
                   help="fixed k of the Gaussian selector, besides k='auto'")
    p.add_argument("--spend-total", action="store_true",
                   help="epsilon is the pipeline's composed spend (privacy_spent_): each "
                        "step gets nominal / 2 with the nominal found from the plan; "
                        "output text_selection_spend.csv")
    p.add_argument("--out", default="docs/studies/feature_selection")
    run(p.parse_args(argv))


if __name__ == "__main__":
    main()
