"""Private Frank-Wolfe at its defaults against the former defaults (two classes).

For each epsilon (delta = 1e-5, ``n_samples_public`` = the training size, the label
set given), the test accuracy of :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`
at its defaults (``l1_bound`` and ``max_iter`` "auto") and at the former defaults
(``l1_bound=50``, ``max_iter`` = ceil((N epsilon)^(2/3))), mean of ``--seeds`` seeds.

``--against screening`` compares instead with the former candidate screening
(``k=4096``, ``selection_share=0.1``; now at least 1024 candidates and
0.25 of the budget).  ``--against score`` compares the default screening score
(the column masses) with the gradient score (the label-signed sums,
ranked by the loss gradient at the zero model), at ``--candidates`` candidates
(default: "auto") and ``--fraction`` of the budget (default: the estimator's) for
both.  ``--against start`` compares the default start (``"auto"``: the naive-Bayes
start built from the screening's release of the per-class sums, at ``--fraction``
of the budget, default "auto": 0.75; ``--start-steps`` its t0, default "auto")
with the former default, ``start="zero"`` (selection_share 0.25); the same
seeds for both.

Usage::

    python scripts/study_frank_wolfe_defaults.py --corpus comp-vs-rec --epsilons 0.25 1 4
    python scripts/study_frank_wolfe_defaults.py --corpus a9a --epsilons 0.25 1 4 --seeds 3
    python scripts/study_frank_wolfe_defaults.py --corpus comp-vs-rec --against screening \
        --epsilons 0.5 1 2 4 --seeds 8
    python scripts/study_frank_wolfe_defaults.py --corpus r8 --against screening \
        --epsilons 1 2 4 --seeds 4
    python scripts/study_frank_wolfe_defaults.py --corpus comp-vs-rec --against score \
        --epsilons 0.5 1 1.5 2 3 4 8 --seeds 16
    python scripts/study_frank_wolfe_defaults.py --corpus comp-vs-rec --against score \
        --epsilons 1 2 4 --seeds 16 --candidates 256 --fraction 0.4
    python scripts/study_frank_wolfe_defaults.py --corpus comp-vs-rec --against start \
        --epsilons 0.5 1 2 4 8 --seeds 16

Develop on ``comp-vs-rec`` (20 Newsgroups comp.* vs rec.*), ``a9a``, ``r8``
(Reuters R8, 8 classes) and ``reuters-earn`` / ``reuters-acq`` (ModApte, one topic
against the rest); ``imdb`` is a report set.  Page: docs/studies/frank_wolfe_defaults.rst.
"""
import argparse
import math
import warnings

import numpy as np

from dptoolkit.datasets import get_data_path, load_libsvm, load_text_corpus
from dptoolkit.linear_model import FrankWolfeLassoClassifier


def load(corpus):
    if corpus == "a9a":
        X, y = load_libsvm(get_data_path("a9a.bz2"), n_features=123)
        Xt, yt = load_libsvm(get_data_path("a9a.t.bz2"), n_features=123)
        return X, y, Xt, yt
    if corpus == "imdb":
        path, kw = get_data_path("text/aclImdb-train-test.tar.xz"), {}
    elif corpus == "r8":
        path, kw = get_data_path("text/reuters21578.tar.xz"), {}
    elif corpus.startswith("reuters-"):  # one ModApte topic against the rest
        path, kw = get_data_path("text/reuters21578.tar.xz"), dict(positive=corpus[8:])
    else:
        path = get_data_path("text/20news-bydate.tar.xz")
        kw = dict(positive="rec.", negative="comp.")
    X, y, _ = load_text_corpus(path, "train", **kw)
    Xt, yt, _ = load_text_corpus(path, "test", **kw)
    return X, y, Xt, yt


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=["comp-vs-rec", "a9a", "r8", "reuters-earn",
                                             "reuters-acq", "imdb"],
                        default="comp-vs-rec")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.25, 1, 4])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--against", choices=["former", "screening", "score", "start"],
                        default="former",
                        help="former: l1_bound=50, T=(N eps)^(2/3); screening: "
                             "k=4096, selection_share=0.1; score: "
                             "the gradient screening score; start: start='zero'")
    parser.add_argument("--candidates", type=int, default=None,
                        help="--against score: candidates kept by both (default: auto)")
    parser.add_argument("--fraction", type=float, default=None,
                        help="--against score: selection_share of both; --against "
                             "start: of the default (naive-Bayes start) fit")
    parser.add_argument("--start-steps", type=int, default=None,
                        help="--against start: start_steps (t0; default: auto)")
    args = parser.parse_args()
    X, y, Xt, yt = load(args.corpus)
    classes = np.unique(np.concatenate([y, yt]))
    N = X.shape[0]
    majority = max(np.mean(yt == c) for c in classes)
    print(f"{args.corpus}: train {N} x {X.shape[1]}, test {Xt.shape[0]}, "
          f"majority {majority:.3f}")
    old = {"score": "gradient", "start": "zero"}.get(args.against, "old")
    print(f"{'epsilon':>8} {'new':>7} {'T':>6} {'l1_bound':>9} {old:>8} {'T old':>6}")
    for eps in args.epsilons:
        old_T = int(min(1e5, max(10, math.ceil((N * eps) ** (2 / 3)))))
        if args.against == "screening":
            old_T = "auto"
            settings = {"new": {}, "old": dict(k=4096, selection_share=0.1)}
        elif args.against == "score":
            old_T = "auto"
            both = {}
            if args.candidates is not None:
                both["k"] = args.candidates
            if args.fraction is not None:
                both["selection_share"] = args.fraction
            settings = {"new": both, "old": dict(both, _screening_score="gradient")}
        elif args.against == "start":
            old_T = "auto"
            start = {}
            if args.fraction is not None:
                start["selection_share"] = args.fraction
            if args.start_steps is not None:
                start["start_steps"] = args.start_steps
            settings = {"new": start, "old": dict(start="zero")}
        else:
            settings = {"new": {}, "old": dict(l1_bound=50.0, max_iter=old_T)}
        acc, fitted, spread = {}, {}, {}
        for name, kw in settings.items():
            scores = []
            kw = dict(kw)
            score = kw.pop("_screening_score", None)   # the internal constant, replaced
            for seed in range(args.seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the study's seeds are not a release
                    clf = FrankWolfeLassoClassifier(
                        epsilon=eps, delta=args.delta, n_samples_public=N,
                        classes=classes, random_state=seed, **kw)
                    if score is not None:
                        clf._screening_score = lambda score=score: score
                    clf.fit(X, y)
                scores.append(clf.score(Xt, yt))
            acc[name], fitted[name] = np.mean(scores), clf
            spread[name] = np.std(scores, ddof=1) / np.sqrt(len(scores)) if len(scores) > 1 else 0
        lam = fitted["new"].l1_bound_
        if old_T == "auto":
            old_T = fitted["old"].n_iter_
        print(f"{eps:>8g} {acc['new']:>7.3f} {fitted['new'].n_iter_:>6} {lam:>9.2f} "
              f"{acc['old']:>8.3f} {old_T:>6}   (standard errors {spread['new']:.3f}, "
              f"{spread['old']:.3f})", flush=True)


if __name__ == "__main__":
    main()
