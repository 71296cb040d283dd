"""The Sparsifier against Frank-Wolfe, its base, at the same total budget.

Test accuracy of :class:`~dptoolkit.linear_model.SparsifiedLassoClassifier` and
:class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`, both at their defaults
(delta = 1e-5, ``n_samples_public`` = the training size, the label set given), and
of the majority class, mean over ``--seeds`` seeds (the same seeds for both).
Page: docs/studies/sparse_lasso.rst.

Usage::

    python scripts/study_sparsifier_vs_frank_wolfe.py --corpus comp-vs-rec --seeds 4
    python scripts/study_sparsifier_vs_frank_wolfe.py --corpus reuters-earn --seeds 4
"""
import argparse
import warnings

import numpy as np

from dptoolkit.linear_model import FrankWolfeLassoClassifier, SparsifiedLassoClassifier

from study_frank_wolfe_defaults import load


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=["comp-vs-rec", "a9a", "reuters-earn",
                                             "reuters-acq", "imdb"], default="comp-vs-rec")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--seeds", type=int, default=4)
    args = parser.parse_args()
    X, y, Xt, yt = load(args.corpus)
    N, classes = X.shape[0], np.unique(np.concatenate([y, yt]))
    _, counts = np.unique(yt, return_counts=True)
    print(f"{args.corpus}: {N} training and {Xt.shape[0]} test documents, "
          f"{X.shape[1]} features; majority class {counts.max() / yt.size:.3f} of the test set")
    print(f"{'epsilon':>8} {'FW':>7} {'(se)':>6} {'Sparsifier':>10} {'(se)':>6} "
          f"{'nnz FW':>7} {'nnz Sp':>7}")
    for eps in args.epsilons:
        acc = {"FW": [], "Sp": []}
        nnz = {"FW": [], "Sp": []}
        for seed in range(args.seeds):
            common = dict(epsilon=eps, delta=args.delta, n_samples_public=N,
                          classes=classes, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the study's seeds are not a release
                for name, cls in (("FW", FrankWolfeLassoClassifier),
                                  ("Sp", SparsifiedLassoClassifier)):
                    clf = cls(**common).fit(X, y)
                    acc[name].append(clf.score(Xt, yt))
                    nnz[name].append(np.count_nonzero(clf.coef_))
        se = {k: np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
              for k, v in acc.items()}
        print(f"{eps:>8g} {np.mean(acc['FW']):>7.3f} {se['FW']:>6.3f} "
              f"{np.mean(acc['Sp']):>10.3f} {se['Sp']:>6.3f} "
              f"{np.mean(nnz['FW']):>7.0f} {np.mean(nnz['Sp']):>7.0f}", flush=True)


if __name__ == "__main__":
    main()
