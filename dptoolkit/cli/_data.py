"""Data of the command line: LIBSVM files, text corpora, synthetic problems."""
import inspect
from pathlib import Path

import numpy as np

from .. import datasets

__all__ = ["CORPUS_SUFFIXES", "is_corpus", "load_train_test", "load_for_model",
           "CORPUS_N_FEATURES"]

CORPUS_SUFFIXES = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar")
#: Hashed features of a corpus when ``--n-features`` is not given (the loader's default).
CORPUS_N_FEATURES = inspect.signature(datasets.load_text_corpus).parameters[
    "n_features"].default


class _OwnSplit(Exception):
    """``--test-size`` given for a corpus that has its own split."""


def is_corpus(path):
    """A corpus folder, a tar archive of one, or a ``label<TAB>text`` file
    (``SMSSpamCollection``, ``*.tsv``); anything else is read as LIBSVM."""
    path = Path(path)
    return path.is_dir() or str(path).endswith(CORPUS_SUFFIXES) or datasets.is_tsv_corpus(path)


def _split(X, y, test_size, seed):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=test_size, random_state=seed, stratify=y)


def _corpus_kw(args, n_features):
    kw = {"n_features": n_features}
    if args.positive is not None or args.negative is not None:
        kw.update(positive=args.positive, negative=args.negative)
    if getattr(args, "cache_dir", None) is not None:
        kw["cache_dir"] = args.cache_dir
    return kw


def _own_split(args, kw):
    """Whether the corpus has its own train/test split; if not, the loader makes the
    seeded stratified split itself (``test_size``, ``random_state``)."""
    own = datasets.corpus_has_own_split(args.data, kw.get("cache_dir"))
    if own and args.test_size is not None:
        raise _OwnSplit(f"--test-size does not apply: {args.data} has its own "
                        "train/test split")
    return own


def _seeded(args):
    """The loader's split arguments for a corpus without its own split."""
    return {"test_size": _test_size(args), "random_state": args.seed}


def _split_text(args):
    return (f"random stratified {1 - _test_size(args):.0%}/{_test_size(args):.0%} split "
            f"(seed {args.seed}; the corpus has none; made by load_text_corpus, "
            "stratified by class)")


def _test_size(args):
    return 0.25 if args.test_size is None else args.test_size


def load_train_test(args):
    """Training and test data for ``train``.

    Returns
    -------
    X_train, y_train, X_test, y_test : sparse matrices and label arrays
    description : dict
        ``source``, ``path``, ``split`` and ``classes`` (for the report).
    """
    seed = args.seed
    if args.data is None:
        n, d = args.synthetic_samples, args.synthetic_features
        X, y, _ = datasets.make_sparse_classification(n_samples=n, n_features=d,
                                                      random_state=seed)
        Xtr, Xte, ytr, yte = _split(X, y, _test_size(args), seed)
        return Xtr, ytr, Xte, yte, {
            "source": "synthetic", "path": None,
            "description": (f"synthetic sparse problem: make_sparse_classification("
                            f"n_samples={n}, n_features={d}, random_state={seed})"),
            "split": f"random stratified {1 - _test_size(args):.0%}/"
                     f"{_test_size(args):.0%} split (seed {seed})"}
    if is_corpus(args.data):
        kw = _corpus_kw(args, args.n_features or CORPUS_N_FEATURES)
        if _own_split(args, kw):
            split = "the corpus's own train/test split"
        else:
            kw.update(_seeded(args))
            split = _split_text(args)
        Xtr, ytr, names = datasets.load_text_corpus(args.data, subset="train", **kw)
        Xte, yte, _ = datasets.load_text_corpus(args.data, subset="test", **kw)
        return Xtr, ytr, Xte, yte, {
            "source": "corpus", "path": str(args.data),
            "description": (f"text corpus {args.data}, word 1-2-grams hashed to "
                            f"{kw['n_features']} binary features, classes {list(names)}"),
            "split": split}
    X, y = datasets.load_libsvm(args.data, n_features=args.n_features_libsvm)
    if args.test is not None:
        Xte, yte = datasets.load_libsvm(args.test, n_features=X.shape[1])
        return X, y, Xte, yte, {"source": "libsvm", "path": str(args.data),
                                "description": f"LIBSVM file {args.data}",
                                "split": f"test file {args.test}"}
    Xtr, Xte, ytr, yte = _split(X, y, _test_size(args), seed)
    return Xtr, ytr, Xte, yte, {
        "source": "libsvm", "path": str(args.data),
        "description": f"LIBSVM file {args.data}",
        "split": f"random stratified {1 - _test_size(args):.0%}/{_test_size(args):.0%} "
                 f"split (seed {seed})"}


def _part(X, y, subset, args):
    """``subset`` of the reproducible random split ``train`` makes (same seed, size)."""
    if subset == "all":
        return X, y, "all examples"
    Xtr, Xte, ytr, yte = _split(X, y, _test_size(args), args.seed)
    text = (f"{subset} part of the random stratified {1 - _test_size(args):.0%}/"
            f"{_test_size(args):.0%} split (seed {args.seed}), as made by train")
    return (Xtr, ytr, text) if subset == "train" else (Xte, yte, text)


def load_for_model(args, n_features):
    """Data to score a saved model with ``n_features`` inputs (``predict``/``evaluate``).

    ``--subset`` chooses the examples: a corpus with its own split reads that
    split (default ``test``); a corpus without one, or a LIBSVM file, is split
    as ``train`` splits it (``--test-size``, ``--seed``) for ``train`` and
    ``test``; ``all`` reads everything.  Defaults: ``test`` for a corpus,
    ``all`` for a LIBSVM file (a separate test file).  A corpus is hashed to
    ``n_features`` features.

    Returns
    -------
    X, y, description : sparse matrix, labels, dict
    """
    if is_corpus(args.data):
        kw = _corpus_kw(args, n_features)
        subset = args.subset or "test"
        if _own_split(args, kw):
            split = f"the corpus's own {subset} split"
        elif subset == "all":
            split = "all examples"
        else:
            kw.update(_seeded(args))
            split = f"{subset} part of the {_split_text(args)}, as made by train"
        X, y, names = datasets.load_text_corpus(args.data, subset=subset, **kw)
        return X, y, {"source": "corpus", "path": str(args.data),
                      "description": (f"text corpus {args.data}, hashed to {n_features} "
                                      f"binary features, classes {list(names)}"),
                      "split": split}
    X, y = datasets.load_libsvm(args.data, n_features=n_features)
    X, y, split = _part(X, y, args.subset or "all", args)
    return X, y, {"source": "libsvm", "path": str(args.data),
                  "description": f"LIBSVM file {args.data}", "split": split}


def class_list(y):
    """Sorted distinct labels as JSON-friendly Python scalars."""
    return [v.item() if hasattr(v, "item") else v for v in np.unique(y)]
