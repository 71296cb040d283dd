"""Which default models never predict a class that is frequent in the training set.

For each model of ``study_multiclass.MODELS`` at its defaults (delta = 1e-5,
``n_samples_public`` = the training size, the label set given) and ``--seeds``
seeds, the number of test documents predicted as each class, next to the
class's share of the training examples, and the share of test rows whose largest
decision score is tied between classes (``predict`` then takes the first); a class with at least ``--frequent`` of
the training examples that a fit never predicts on the test set is listed.
Page: docs/studies/multiclass.rst.

``--groups`` keeps the documents whose label name starts with one of the given
prefixes (``--corpus 20news --groups comp. rec.``: the 9 comp.* and rec.*
newsgroups); ``--set name=value`` passes a parameter to every model (a Python
literal, e.g. ``--set start='naive_bayes'``).

Usage::

    python scripts/study_predicted_classes.py --corpus r8 --epsilon 1 --seeds 2
    python scripts/study_predicted_classes.py --corpus 20news --groups comp. rec. \
        --epsilon 1 --seeds 3 --models FW --set start='naive_bayes'
"""
import argparse
import ast
import warnings

import numpy as np

from dptoolkit.datasets import get_data_path, load_text_corpus

from study_multiclass import CORPORA, MODELS


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="r8")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--frequent", type=float, default=0.05)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--groups", nargs="+", default=None)
    parser.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    params = {k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in args.set)}
    path = get_data_path(CORPORA[args.corpus])
    X, y, names = load_text_corpus(path, "train")
    Xt, yt, _ = load_text_corpus(path, "test")
    if args.groups:
        kept = [i for i, n in enumerate(names) if n.startswith(tuple(args.groups))]
        X, y = X[np.isin(y, kept)], y[np.isin(y, kept)]
        Xt, yt = Xt[np.isin(yt, kept)], yt[np.isin(yt, kept)]
    classes = np.unique(np.concatenate([y, yt]))
    train_share = np.array([np.mean(y == c) for c in classes])
    frequent = classes[train_share >= args.frequent]
    print(f"{args.corpus}: {X.shape[0]} training documents, {classes.size} classes; "
          "training shares " + ", ".join(f"{c}: {s:.3f}" for c, s in zip(classes, train_share)))
    for m in args.models:
        accuracy = []
        for seed in range(args.seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")    # the study's seeds are not a release
                clf = MODELS[m](epsilon=args.epsilon, delta=args.delta,
                                n_samples_public=X.shape[0], classes=classes,
                                random_state=seed, **params).fit(X, y)
            pred = clf.predict(Xt)
            accuracy.append(np.mean(pred == yt))
            counts = [int(np.sum(pred == c)) for c in classes]
            never = [c for c in frequent if not np.any(pred == c)]
            scores = clf.decision_function(Xt)
            ties = np.mean(np.sum(scores == scores.max(axis=1, keepdims=True), axis=1) > 1)
            print(f"{m:>6} seed {seed}: accuracy {np.mean(pred == yt):.3f}; test documents "
                  "predicted per class " + " ".join(map(str, counts))
                  + f"; rows whose largest score is tied {ties:.3f}"
                  + f"; frequent classes never predicted: {never or 'none'}", flush=True)
        print(f"{m:>6} mean accuracy {np.mean(accuracy):.3f}", flush=True)


if __name__ == "__main__":
    main()
