"""Multiclass private text classification, side by side in one run.

For each corpus and epsilon (delta = 1e-5, ``n_samples_public`` = the training size,
the public label set given, mean of ``--seeds`` seeds), the test accuracy of

* the one-release baseline: one Gaussian release of the per-class sums of unit rows
  (L2 sensitivity 1 under add/remove of one example), the ``--vocabulary`` columns
  of largest noisy total, and the argmax of the smoothed multinomial naive-Bayes
  log-probabilities (uniform prior);
* :class:`~dptoolkit.linear_model.DPNBLogisticClassifier` at its defaults (the same
  release, then softmax DP-SGD), the command line's default model;
* :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` at its defaults: the
  multinomial private LASSO (Khanna, Lu and Raff 2023, Appendix A) with the
  private screening to 4096 candidates and ``l1_bound``/``max_iter`` "auto";
* the general linear models at their defaults: :class:`DPSGDClassifier` (one
  softmax model), :class:`DPSCDClassifier` (one softmax model; ``DPSCD-ovr``: its
  one-vs-rest fits, one privacy event) and :class:`DPIGHTClassifier` (one
  softmax model), and :class:`SparsifiedLassoClassifier` (``Sparsifier``), chosen
  with ``--models``;
* non-private references on the same features (``epsilon=None``, the epsilon
  column does not apply): ``SCD`` (SDCA on the softmax loss) and ``SGD``.

Usage::

    python scripts/study_multiclass.py --corpus 20news --epsilons 1 2 4 8
    python scripts/study_multiclass.py --corpus r8 --epsilons 0.5 1 2
    python scripts/study_multiclass.py --corpus 20news --epsilons 1 2 8 --seeds 1 \
        --models baseline DPNB DPSGD DPSCD DPIGHT
    python scripts/study_multiclass.py --corpus 20news --epsilons 1 --seeds 3 \
        --models DPSCD DPSGD --params n_epochs=10

``--params NAME=VALUE ...`` sets parameters of every private model of the run
(numbers as floats), e.g. the passes, to isolate one difference between models.

Corpora: ``20news`` (20 Newsgroups by date, 20 classes), ``comprec`` (its comp.*
and rec.* groups as a 9-class task) and ``r8`` (Reuters-21578 ModApte, the 8 most
frequent single-label topics), word 1-2-grams hashed to 2^20
binary features by :func:`dptoolkit.datasets.load_text_corpus`.
"""
import argparse
import functools
import time
import warnings

import numpy as np
import scipy.sparse as sp

from dptoolkit.accounting import calibrate_parameter
from dptoolkit.accounting.events import GaussianEvent
from dptoolkit.datasets import get_data_path, load_text_corpus
from dptoolkit.linear_model import (DPIGHTClassifier, DPNBLogisticClassifier,
                                    DPSCDClassifier, DPSGDClassifier,
                                    FrankWolfeLassoClassifier, SparsifiedLassoClassifier)

CORPORA = {"20news": "text/20news-bydate.tar.xz", "r8": "text/reuters21578.tar.xz",
           "comprec": "text/20news-bydate.tar.xz"}


def unit_rows(X):
    X = sp.csr_array(X, dtype=np.float64, copy=True)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X.data /= np.repeat(np.where(norms > 0, norms, 1.0), np.diff(X.indptr))
    return X


def one_release_baseline(X, y, Xt, classes, epsilon, delta, vocabulary, rng):
    """Argmax of naive-Bayes log-probabilities from one Gaussian release."""
    sigma = calibrate_parameter(lambda s: GaussianEvent(s), target_epsilon=epsilon,
                                delta=delta, low=1e-3, high=1e6, increasing=False,
                                composition="rdp", rtol=1e-9)
    Xn = unit_rows(X)
    sums = np.vstack([np.asarray(Xn[y == c].sum(axis=0)).ravel() for c in classes])
    noisy = sums + rng.normal(0.0, sigma, sums.shape)
    k = min(vocabulary, X.shape[1])
    columns = np.argpartition(-noisy.sum(axis=0), k - 1)[:k]
    pos = np.maximum(noisy[:, columns], 0.0) + sigma
    log_prob = np.log(pos) - np.log(pos.sum(axis=1, keepdims=True))
    scores = sp.csr_array(Xt)[:, columns] @ log_prob.T
    return classes[np.argmax(scores, axis=1)]


#: The private models of the study, each at its defaults (with the public N and
#: label set given by main()).
MODELS = {"DPNB": DPNBLogisticClassifier, "FW": FrankWolfeLassoClassifier,
          "DPSGD": DPSGDClassifier, "DPSCD": DPSCDClassifier, "DPIGHT": DPIGHTClassifier,
          "DPSCD-ovr": functools.partial(DPSCDClassifier, multi_class="ovr"),
          "Sparsifier": SparsifiedLassoClassifier}
#: Non-private references (``epsilon=None``; the epsilon column does not apply).
NONPRIVATE = {"SCD": DPSCDClassifier, "SGD": DPSGDClassifier}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="20news")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--vocabulary", type=int, default=5000)
    parser.add_argument("--models", nargs="+", default=["baseline", "DPNB", "FW"],
                        choices=["baseline", *MODELS, *NONPRIVATE])
    parser.add_argument("--params", nargs="+", default=[], metavar="NAME=VALUE",
                        help="parameters set on every private model of the run")
    args = parser.parse_args()
    params = {}
    for item in args.params:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--params takes NAME=VALUE items, got {item!r}")
        try:
            params[name] = float(value)
        except ValueError:
            params[name] = value
    path = get_data_path(CORPORA[args.corpus])
    X, y, names = load_text_corpus(path, "train")
    Xt, yt, _ = load_text_corpus(path, "test")
    if args.corpus == "comprec":    # the comp.* and rec.* groups as a 9-class task
        keep = np.flatnonzero([n.startswith(("comp.", "rec.")) for n in names])
        X, y = X[np.isin(y, keep)], y[np.isin(y, keep)]
        Xt, yt = Xt[np.isin(yt, keep)], yt[np.isin(yt, keep)]
    classes = np.unique(np.concatenate([y, yt]))   # the corpus's documented label set
    majority = max(np.mean(yt == c) for c in classes)
    print(f"{args.corpus}: train {X.shape[0]} x {X.shape[1]}, test {Xt.shape[0]}, "
          f"{classes.size} classes, majority {majority:.3f}")
    print(f"{'epsilon':>8} " + " ".join(f"{m:>9} {'fit s':>7}" for m in args.models))
    for eps in args.epsilons:
        acc = {m: [] for m in args.models}
        secs = {m: [] for m in args.models}
        for seed in range(args.seeds):
            for m in args.models:
                t0 = time.perf_counter()
                if m == "baseline":
                    pred = one_release_baseline(X, y, Xt, classes, eps, args.delta,
                                                args.vocabulary,
                                                np.random.default_rng(seed))
                    secs[m].append(time.perf_counter() - t0)
                    acc[m].append(np.mean(pred == yt))
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")    # the study's seeds are not a release
                    if m in NONPRIVATE:
                        clf = NONPRIVATE[m](epsilon=None, classes=classes,
                                            random_state=seed).fit(X, y)
                    else:
                        clf = MODELS[m](epsilon=eps, delta=args.delta,
                                        n_samples_public=X.shape[0], classes=classes,
                                        random_state=seed, **params).fit(X, y)
                secs[m].append(time.perf_counter() - t0)
                acc[m].append(clf.score(Xt, yt))
        print(f"{eps:>8g} " + " ".join(f"{np.mean(acc[m]):>9.3f} {np.mean(secs[m]):>7.1f}"
                                        for m in args.models), flush=True)


if __name__ == "__main__":
    main()
