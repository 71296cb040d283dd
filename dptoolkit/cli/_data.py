"""Data of the command line: LIBSVM files, text corpora, synthetic problems.

What the command line takes from the data, and what it takes as public
constants (its guarantee is stated for the training examples, under the
estimators' neighbouring relation):

* **Feature dimension**: a public constant, never the largest index seen.  A
  LIBSVM file needs ``--n-features`` (a file reaching a higher index is an
  error); a text corpus is hashed to ``--n-features`` columns (default the
  loader's, :data:`CORPUS_N_FEATURES`), a map fixed before any document is read.
* **Label set**: public.  A corpus's classes are its class folders or its
  documented labels (as :func:`dptoolkit.datasets.load_text_corpus` names them);
  a LIBSVM file's are ``--classes`` or, by default, the LIBSVM binary
  convention: -1 or 0 is the negative class, +1 the positive one.  Labels become
  class indices ``0 .. K-1`` and the estimator is given all ``K`` classes, so a
  class missing from the training data does not change the model's shape.
  Exception: without ``--positive``/``--negative``, a ``label<TAB>text`` file
  (SMS spam) has the labels its lines carry and Reuters-21578 its most frequent
  topics (:func:`dptoolkit.datasets.corpus_labels_from_examples`); the data
  description then says that this label set is read from the examples and is
  outside the guarantee.
* **Random split** (a LIBSVM file without ``--test``, a corpus without its own
  split, the synthetic problem): each example is held out when a keyed hash
  (BLAKE2b, key ``--split-seed``) of its own features, read as a number in
  [0, 1), is below ``--test-size``.  An example's side depends on that example
  alone, so the training parts of two files that differ in one example differ
  in at most that example: add/remove neighbours stay add/remove neighbours (a
  stratified or permutation split, which depends on every example, would
  reshuffle both parts).  Identical feature vectors fall on the same side; the
  held-out fraction is ``--test-size`` in expectation.
"""
import hashlib
import inspect
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import datasets

__all__ = ["CORPUS_SUFFIXES", "is_corpus", "load_train_test", "load_for_model",
           "CORPUS_N_FEATURES", "held_out", "BINARY_CONVENTION", "data_description",
           "corpus_featurisation", "BINARY_LABELS"]

CORPUS_SUFFIXES = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar")
#: Hashed features of a corpus when ``--n-features`` is not given (the loader's default).
CORPUS_N_FEATURES = inspect.signature(datasets.load_text_corpus).parameters[
    "n_features"].default
#: Class names of a LIBSVM file read with the binary convention (no ``--classes``).
BINARY_CONVENTION = ["-1 or 0", "+1"]
#: Labels written by ``predict`` for the binary convention's classes 0 and 1.
BINARY_LABELS = [-1.0, 1.0]
#: Held-out fraction of the random split when ``--test-size`` is not given.
DEFAULT_TEST_SIZE = 0.25
#: ``--split-seed`` when not given (the split is public: it is not noise).
DEFAULT_SPLIT_SEED = 0


class _OwnSplit(Exception):
    """A split option given for a corpus that has its own split."""


def is_corpus(path):
    """A corpus folder, a tar archive of one, or a ``label<TAB>text`` file
    (``SMSSpamCollection``, ``*.tsv``); anything else is read as LIBSVM."""
    path = Path(path)
    return path.is_dir() or str(path).endswith(CORPUS_SUFFIXES) or datasets.is_tsv_corpus(path)


def held_out(X, test_size, seed):
    """Which rows of ``X`` the random split holds out.

    Row ``i`` is held out when the BLAKE2b hash of its feature vector (column
    indices and values of the canonical CSR row), keyed with ``seed`` and read
    as a number in [0, 1), is below ``test_size``.

    Parameters
    ----------
    X : scipy.sparse matrix of shape (n_samples, n_features)
    test_size : float in (0, 1)
    seed : int in [0, 2**128 - 1]

    Returns
    -------
    mask : ndarray of shape (n_samples,), bool
    """
    X = sp.csr_array(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    indptr = X.indptr
    indices = X.indices.astype(np.int64, copy=False)
    data = X.data.astype(np.float64, copy=False)
    key = int(seed).to_bytes(16, "little")
    u = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        start, stop = indptr[i], indptr[i + 1]
        h = hashlib.blake2b(indices[start:stop].tobytes(), digest_size=8, key=key)
        h.update(data[start:stop].tobytes())
        u[i] = int.from_bytes(h.digest(), "little") / 2.0**64
    return u < test_size


def _test_size(args):
    return DEFAULT_TEST_SIZE if args.test_size is None else args.test_size


def _split_seed(args):
    return DEFAULT_SPLIT_SEED if args.split_seed is None else args.split_seed


def _split(X, y, args):
    mask = held_out(X, _test_size(args), _split_seed(args))
    return X[~mask], y[~mask], X[mask], y[mask]


def _split_text(args):
    return (f"random split: an example is held out when a hash of its features keyed "
            f"with --split-seed {_split_seed(args)} falls below --test-size "
            f"{_test_size(args):g} (its side depends on it alone)")


def _corpus_kw(args, n_features):
    kw = {"n_features": n_features}
    if args.positive is not None or args.negative is not None:
        kw.update(positive=args.positive, negative=args.negative)
    if getattr(args, "cache_dir", None) is not None:
        kw["cache_dir"] = args.cache_dir
    return kw


#: Appended to a corpus's description when its label set comes from its examples.
LABELS_FROM_EXAMPLES = ("; label set read from the corpus's examples, outside the "
                        "guarantee: declare the task with --positive/--negative")


def _label_note(args, kw):
    """:data:`LABELS_FROM_EXAMPLES` when the corpus's label set comes from its examples."""
    if args.positive is not None or args.negative is not None:
        return ""
    from_examples = datasets.corpus_labels_from_examples(args.data, kw.get("cache_dir"))
    return LABELS_FROM_EXAMPLES if from_examples else ""


def _own_split(args, kw):
    """Whether the corpus has its own train/test split (split options then refused)."""
    own = datasets.corpus_has_own_split(args.data, kw.get("cache_dir"))
    if own:
        for flag, dest in (("--test-size", "test_size"), ("--split-seed", "split_seed")):
            if getattr(args, dest, None) is not None:
                raise _OwnSplit(f"{flag} does not apply: {args.data} has its own "
                                "train/test split")
    return own


def _libsvm_labels(y, classes, path):
    """Labels of a LIBSVM file as class indices 0 .. K-1 (float64)."""
    if classes is None:
        bad = ~np.isin(y, (-1.0, 0.0, 1.0))
        if bad.any():
            raise ValueError(f"{path}: label {y[bad][0]:g} is outside the LIBSVM binary "
                             "convention (-1 or 0 negative, +1 positive); give the labels "
                             "of the task with --classes")
        return (y == 1.0).astype(np.float64)
    out = np.full(y.shape, -1.0)
    for index, label in enumerate(classes):
        out[y == label] = index
    bad = out < 0
    if bad.any():
        raise ValueError(f"{path}: label {y[bad][0]:g} is not one of --classes "
                         f"{' '.join(f'{c:g}' for c in classes)}")
    return out


def _libsvm(path, n_features, classes, *, labels=True):
    X, y = datasets.load_libsvm(path, n_features=n_features, binary_labels=False)
    return X, (_libsvm_labels(y, classes, path) if labels else y)


def _libsvm_class_names(classes):
    return BINARY_CONVENTION if classes is None else [float(c) for c in classes]


def _libsvm_description(args, n_features):
    labels = ("--classes " + " ".join(f"{c:g}" for c in args.classes)
              if getattr(args, "classes", None) is not None
              else "the LIBSVM binary convention: -1 or 0 negative, +1 positive")
    return (f"LIBSVM file {args.data}, {n_features} features, classes from {labels}")


def load_train_test(args):
    """Training and test data for ``train``.

    Returns
    -------
    X_train, y_train, X_test, y_test : sparse matrices and label arrays
        Labels are class indices ``0 .. K-1`` (float64).
    info : dict
        ``source``, ``path``, ``description``, ``split``, ``n_features`` and
        ``classes`` (the public class names, in class order) for the output and
        the report.
    """
    if args.data is None:
        n, d, seed = args.synthetic_samples, args.synthetic_features, _split_seed(args)
        X, y, _ = datasets.make_sparse_classification(n_samples=n, n_features=d,
                                                      random_state=seed)
        Xtr, ytr, Xte, yte = _split(X, y, args)
        return Xtr, ytr, Xte, yte, {
            "source": "synthetic", "path": None, "n_features": d, "classes": [0, 1],
            "description": (f"synthetic sparse problem: make_sparse_classification("
                            f"n_samples={n}, n_features={d}, random_state={seed}) "
                            "(public: the data are synthetic)"),
            "split": _split_text(args)}
    if is_corpus(args.data):
        kw = _corpus_kw(args, args.n_features or CORPUS_N_FEATURES)
        if _own_split(args, kw):
            Xtr, ytr, names = datasets.load_text_corpus(args.data, subset="train", **kw)
            Xte, yte, _ = datasets.load_text_corpus(args.data, subset="test", **kw)
            split = "the corpus's own train/test split"
        else:
            X, y, names = datasets.load_text_corpus(args.data, subset="all", **kw)
            Xtr, ytr, Xte, yte = _split(X, y, args)
            split = _split_text(args)
        return Xtr, ytr, Xte, yte, {
            "source": "corpus", "path": str(args.data), "n_features": kw["n_features"],
            "classes": list(names),
            "description": (f"text corpus {args.data}, word 1-2-grams hashed to "
                            f"{kw['n_features']} binary features, classes {list(names)}"
                            f"{_label_note(args, kw)}"),
            "split": split}
    d = args.n_features
    X, y = _libsvm(args.data, d, args.classes)
    info = {"source": "libsvm", "path": str(args.data), "n_features": d,
            "classes": _libsvm_class_names(args.classes),
            "description": _libsvm_description(args, d)}
    if args.test is not None:
        Xte, yte = _libsvm(args.test, d, args.classes)
        return X, y, Xte, yte, dict(info, split=f"test file {args.test}")
    Xtr, ytr, Xte, yte = _split(X, y, args)
    return Xtr, ytr, Xte, yte, dict(info, split=_split_text(args))


def _part(X, y, subset, args):
    """``subset`` of the random split ``train`` makes (same seed, size)."""
    if subset == "all":
        return X, y, "all examples"
    Xtr, ytr, Xte, yte = _split(X, y, args)
    text = f"{subset} part of the {_split_text(args)}, as made by train"
    return (Xtr, ytr, text) if subset == "train" else (Xte, yte, text)


def load_for_model(args, n_features, *, labels=True):
    """Data to score a saved model with ``n_features`` inputs (``predict``/``evaluate``).

    ``--subset`` chooses the examples: a corpus with its own split reads that
    split (default ``test``); a corpus without one, or a LIBSVM file, is split
    as ``train`` splits it (``--test-size``, ``--split-seed``) for ``train`` and
    ``test``; ``all`` reads everything.  Defaults: ``test`` for a corpus,
    ``all`` for a LIBSVM file (a separate test file).  A corpus is hashed to
    ``n_features`` features.

    Parameters
    ----------
    args : argparse.Namespace
    n_features : int
    labels : bool, default=True
        Map a LIBSVM file's labels to class indices (``--classes`` or the binary
        convention); ``predict`` ignores the labels and reads any.

    Returns
    -------
    X, y, info : sparse matrix, labels, dict
    """
    if is_corpus(args.data):
        kw = _corpus_kw(args, n_features)
        subset = args.subset or "test"
        if _own_split(args, kw):
            X, y, names = datasets.load_text_corpus(args.data, subset=subset, **kw)
            split = f"the corpus's own {subset} split"
        else:
            X, y, names = datasets.load_text_corpus(args.data, subset="all", **kw)
            X, y, split = _part(X, y, subset, args)
        return X, y, {"source": "corpus", "path": str(args.data), "classes": list(names),
                      "n_features": n_features,
                      "description": (f"text corpus {args.data}, hashed to {n_features} "
                                      f"binary features, classes {list(names)}"
                                      f"{_label_note(args, kw)}"),
                      "split": split}
    classes = getattr(args, "classes", None)
    X, y = _libsvm(args.data, n_features, classes, labels=labels)
    X, y, split = _part(X, y, args.subset or "all", args)
    return X, y, {"source": "libsvm", "path": str(args.data), "n_features": n_features,
                  "classes": _libsvm_class_names(classes),
                  "description": _libsvm_description(args, n_features), "split": split}


def corpus_featurisation(n_features):
    """How a corpus becomes features: the loader's hashing settings (public constants)."""
    params = inspect.signature(datasets.load_text_corpus).parameters
    return {"kind": "hashed word n-grams (HashingVectorizer: lower-cased, binary, "
                    "norm=None, alternate_sign=False)",
            "n_features": int(n_features),
            "ngram_range": list(params["ngram_range"].default)}


def data_description(info, args):
    """The public description of the training data, saved with the model.

    ``classes`` are the original labels in class order (class index ``i`` is
    ``classes[i]``): a LIBSVM file's ``--classes`` values (or ``[-1, 1]`` under
    the binary convention, ``label_convention`` ``"binary"``), a corpus's class
    names, the synthetic problem's ``[0, 1]``.  ``featurisation`` says how raw
    data become the ``n_features`` columns; ``task`` holds a corpus's
    ``--positive``/``--negative``.  Only public constants: the file is released
    with the model.
    """
    source, d = info["source"], int(info["n_features"])
    desc = {"source": source, "n_features": d}
    if source == "libsvm":
        classes = getattr(args, "classes", None)
        desc["classes"] = BINARY_LABELS if classes is None else [float(c) for c in classes]
        desc["label_convention"] = "binary" if classes is None else "declared"
        desc["featurisation"] = {"kind": "LIBSVM feature indices 1 .. n_features",
                                 "n_features": d}
    elif source == "corpus":
        desc["classes"] = [str(c) for c in info["classes"]]
        desc["featurisation"] = corpus_featurisation(d)
        desc["task"] = {"positive": args.positive, "negative": args.negative}
    else:
        desc["classes"] = [0, 1]
        desc["featurisation"] = {"kind": "make_sparse_classification", "n_features": d}
    return desc


def class_counts(y, n_classes):
    """Examples per class index (a figure of the data: outside the guarantee)."""
    return [int(c) for c in np.bincount(np.asarray(y, dtype=np.int64), minlength=n_classes)]
