"""How much data a privacy budget needs: test accuracy of the default model against N.

For each training size N (a random subset of the training part, drawn per seed; the
test part is always whole), epsilon and seed, the test accuracy of
:class:`~dptoolkit.linear_model.DPNBLogisticClassifier` at its defaults (the command
line's default model; delta = 1e-5, ``n_samples_public`` = N, the corpus's label set
given), beside the majority class of the test part and the same model fitted
without noise on the same subset.  The last column is the rule of thumb of the
command line, :meth:`~dptoolkit.linear_model.DPNBLogisticClassifier.n_samples_needed`
(public quantities only), at each epsilon.

Usage::

    python scripts/study_data_needed.py --corpus imdb --out docs/studies/data_needed
    python scripts/study_data_needed.py --corpus 20news --sizes 1000 2000 5000 11314

Corpora: ``imdb`` (IMDB reviews, 25,000 train / 25,000 test, 2 classes), ``20news``
(20 Newsgroups by date, 20 classes, 11,314 / 7,532), and the development tasks
``comprec`` (20 Newsgroups comp.* vs rec.*, 5,325 / 3,545) and ``r8`` (Reuters-21578
ModApte R8, 5,485 / 2,189).  Word 1-2-grams hashed to 2^20 binary features by
:func:`dptoolkit.datasets.load_text_corpus` (cached after the first load), as the
command line's main job.  With ``--out`` the table is also written as CSV and the
curves as a PNG figure (matplotlib) in that folder.
"""
import argparse
import csv
import time
import warnings
from pathlib import Path

import numpy as np

from dptoolkit.datasets import get_data_path, load_text_corpus
from dptoolkit.linear_model import DPNBLogisticClassifier

CORPORA = {
    "imdb": ("text/aclImdb-train-test.tar.xz", {}),
    "20news": ("text/20news-bydate.tar.xz", {}),
    "comprec": ("text/20news-bydate.tar.xz", dict(positive="comp.", negative="rec.")),
    "r8": ("text/reuters21578.tar.xz", {}),
}
DEFAULT_SIZES = {"imdb": [1000, 2000, 5000, 10000, 25000],
                 "20news": [1000, 2000, 5000, 11314],
                 "comprec": [250, 500, 1000, 2000, 5325],
                 "r8": [250, 500, 1000, 2000, 5485]}


def fit_score(X, y, Xt, yt, classes, n, epsilon, delta, seed):
    """Test accuracy of the default model on a random subset of n training rows."""
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the study's seeds are not a release
        clf = DPNBLogisticClassifier(epsilon=epsilon, delta=delta, n_samples_public=n,
                                     classes=classes, random_state=seed)
        clf.fit(X[rows], y[rows])
    return clf.score(Xt, yt)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="imdb")
    parser.add_argument("--sizes", type=int, nargs="+")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1, 4])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--out", type=Path, help="folder for <corpus>.csv and .png")
    parser.add_argument("--from-csv", action="store_true",
                        help="redraw <out>/<corpus>.png from <out>/<corpus>.csv (no fit)")
    args = parser.parse_args()
    if args.from_csv:
        return redraw(args)
    path, kw = CORPORA[args.corpus]
    path = get_data_path(path)
    X, y, names = load_text_corpus(path, "train", **kw)
    Xt, yt, _ = load_text_corpus(path, "test", **kw)
    classes = np.arange(len(names), dtype=np.float64)   # the corpus's public label set
    majority = max(np.mean(yt == c) for c in classes)
    sizes = [min(n, X.shape[0]) for n in (args.sizes or DEFAULT_SIZES[args.corpus])]
    print(f"{args.corpus}: train {X.shape[0]} x {X.shape[1]}, test {Xt.shape[0]}, "
          f"{classes.size} classes, majority {majority:.3f}, {args.seeds} seeds")
    needed = rule_of_thumb(args.epsilons, args.delta, classes.size)
    print("rule of thumb (N needed): " + ", ".join(
        f"epsilon {eps:g}: {n:,.0f}" for eps, n in needed.items()))
    header = ["N"] + [f"eps={eps:g}" for eps in args.epsilons] + ["non-private"]
    print(" ".join(f"{h:>11}" for h in header))
    rows = []
    t0 = time.perf_counter()
    for n in sizes:
        row = {"N": n}
        for eps in list(args.epsilons) + [None]:
            acc = [fit_score(X, y, Xt, yt, classes, n, eps, args.delta, seed)
                   for seed in range(args.seeds)]
            row["non-private" if eps is None else f"eps={eps:g}"] = float(np.mean(acc))
            row[("non-private" if eps is None else f"eps={eps:g}") + " spread"] = \
                float(np.ptp(acc))
        rows.append(row)
        print(" ".join(f"{row[h]:>11.3f}" if h != "N" else f"{n:>11d}" for h in header),
              flush=True)
    print(f"majority {majority:.3f}; {time.perf_counter() - t0:.0f} s wall")
    if args.out is not None:
        for row in rows:
            row["majority"] = majority
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / f"{args.corpus}.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        draw(args, rows, header, majority, needed)


def rule_of_thumb(epsilons, delta, n_classes):
    """epsilon -> the N the command line's rule of thumb asks for (public quantities)."""
    return {eps: DPNBLogisticClassifier(epsilon=eps, delta=delta)
            .n_samples_needed(n_classes) for eps in epsilons}


def redraw(args):
    """The figure again from the CSV (e.g. after a change of the rule of thumb)."""
    with open(args.out / f"{args.corpus}.csv", newline="") as f:
        rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
    header = ["N"] + [f"eps={eps:g}" for eps in args.epsilons] + ["non-private"]
    n_classes = {"imdb": 2, "comprec": 2, "20news": 20, "r8": 8}[args.corpus]
    needed = rule_of_thumb(args.epsilons, args.delta, n_classes)
    print("rule of thumb (N needed): " + ", ".join(
        f"epsilon {eps:g}: {n:,.0f}" for eps, n in needed.items()))
    draw(args, rows, header, rows[0]["majority"], needed)


def draw(args, rows, header, majority, needed):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = [r["N"] for r in rows]
    for i, h in enumerate(header[1:]):
        line, = ax.plot(sizes, [r[h] for r in rows], marker="o",
                        linestyle="--" if h == "non-private" else "-",
                        color="black" if h == "non-private" else f"C{i}",
                        label=h.replace("eps=", "epsilon "))
        if h != "non-private":   # the rule of thumb at this epsilon
            ax.axvline(needed[float(h[4:])], color=line.get_color(), linestyle=":",
                       linewidth=1)
    ax.axhline(majority, color="grey", linewidth=1, label="majority class")
    ax.set_xscale("log")
    ax.set_xlabel("training documents N (dotted: rule of thumb, same colour)")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"{args.corpus}: default model, delta {args.delta:g}, "
                 f"mean of {args.seeds} seeds")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out / f"{args.corpus}.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
