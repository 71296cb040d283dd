"""LIBSVM/SVMlight files: :func:`load_libsvm`."""
import bz2
import gzip
import lzma
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from .._validation import check_positive_int
from ._csr import _index_dtype

__all__ = ["load_libsvm"]

#: Largest feature index (and ``n_features``) the reader takes: scikit-learn's
#: parser stores indices as C ints.
MAX_FEATURE_INDEX = np.iinfo(np.int32).max


def _open(path):
    """The file as scikit-learn's reader opens it (by suffix: .gz, .bz2, else plain)."""
    name = str(path)
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    return open(path, "rb")


def _excerpt(text, limit=40):
    """``repr`` of ``text``, cut to ``limit`` characters (a CSV header can be a whole
    line of thousands of characters)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def _line_problem(line, n_features):
    """What is wrong with one LIBSVM line (``None`` if nothing)."""
    content = line.split(b"#", 1)[0].strip()
    if not content:
        return None
    tokens = content.split()
    try:
        float(tokens[0])
    except ValueError:
        label = tokens[0].decode("latin-1")
        hint = (" (comma-separated: a CSV file? LIBSVM lines are 'label index:value "
                "...')" if label.count(",") >= 2 else "")
        return f"the label {_excerpt(label)} is not a number{hint}"
    rest = tokens[1:]
    if rest and rest[0].startswith(b"qid:"):
        rest = rest[1:]
    previous = 0
    for tok in rest:
        text = tok.decode("latin-1")
        index, sep, value = tok.partition(b":")
        if not sep:
            return f"expected index:value, got {_excerpt(text)}"
        try:
            index = int(index)
        except ValueError:
            return f"the feature index in {_excerpt(text)} is not an integer"
        try:
            float(value)
        except ValueError:
            return f"the value in {_excerpt(text)} is not a number"
        if index < 1:
            return f"feature index {index} in {_excerpt(text)} (indices start at 1)"
        if index > MAX_FEATURE_INDEX:
            return (f"feature index {index} is too large (at most {MAX_FEATURE_INDEX} = "
                    "2**31 - 1)")
        if n_features is not None and index > n_features:
            return f"feature index {index} exceeds n_features={n_features}"
        if index <= previous:
            return f"feature indices must be sorted and unique ({index} after {previous})"
        previous = index
    return None


def _locate(path, n_features):
    """``(line number, problem)`` of the first bad line, ``(lines read, None)`` if the
    lines are fine, or ``(lines read, "decompression")`` if the file ends early."""
    lineno = 0
    try:
        with _open(path) as f:
            for lineno, line in enumerate(f, start=1):
                problem = _line_problem(line, n_features)
                if problem is not None:
                    return lineno, problem
    except (EOFError, OSError, lzma.LZMAError, zlib.error):
        return lineno, "decompression"
    return lineno, None


def _check_n_features(n_features):
    if n_features is None:
        return None
    n_features = check_positive_int(n_features, "n_features")
    if n_features > MAX_FEATURE_INDEX:
        raise ValueError(f"n_features must be <= 2**31 - 1 (the largest feature index a "
                         f"LIBSVM file can hold here), got {n_features}")
    return int(n_features)


def _read_error(path, exc, n_features):
    """A ValueError naming ``path`` (and the line, when it can be found) for ``exc``."""
    detail = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
    lineno, problem = _locate(path, n_features)
    if problem == "decompression" or isinstance(exc, (EOFError, lzma.LZMAError, zlib.error)):
        where = (f"the data breaks off after line {lineno}" if lineno else
                 "no complete line can be read")
        return ValueError(f"{path}: truncated or corrupt compressed file ({where}): {detail}")
    if problem is not None:
        # the reader's own message, unless it repeats a long line
        reader = f" ({detail})" if len(detail) <= 120 else ""
        return ValueError(f"{path}, line {lineno}: not a LIBSVM/SVMlight line: "
                          f"{problem}{reader}")
    return ValueError(f"{path}: not a readable LIBSVM/SVMlight file: {detail}")


def _binary_labels(y, name="y"):
    classes = np.unique(y)
    if classes.size == 2:
        return (y == classes[1]).astype(np.float64), classes
    return y, classes


def load_libsvm(path, n_features=None, *, binary_labels=True):
    """Load a LIBSVM/SVMlight file (plain or .bz2/.gz) as CSR float64.

    Parameters
    ----------
    path : str or path-like
        File to read, through :func:`sklearn.datasets.load_svmlight_file`.
    n_features : int, optional
        Number of features, ``1 <= n_features <= 2**31 - 1``.  Pass it: some
        files do not reach their top feature index (a1a, a8a.t, a9a.t), and
        train/test files must agree.
    binary_labels : bool, default=True
        When the file has exactly two distinct labels, map them to {0, 1}
        (the larger label to 1) whatever the coding (-1/+1, 0/1, 1/2, 2/4).
        Other label sets (regression, multiclass) are returned unchanged.

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_samples, n_features), float64
        Canonical CSR (sorted indices).  The ``indices`` and ``indptr`` arrays
        are int32 when the number of stored entries and ``n_features`` fit in
        int32 (as scipy chooses), else int64, so that ``X`` can be passed to
        scikit-learn estimators whose sparse code takes int32 indices only
        (:class:`~sklearn.linear_model.Lasso`,
        :class:`~sklearn.linear_model.ElasticNet`).  dptoolkit's estimators
        accept either.
    y : ndarray of shape (n_samples,), float64

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        Naming the file (and the first bad line when it can be found): a line
        that is not LIBSVM (``label index:value ...``, indices from 1, sorted
        and unique), a feature index above ``n_features`` or above
        ``2**31 - 1``, a truncated or corrupt ``.bz2``/``.gz`` file, a file
        without examples (empty, or comments only), a NaN or infinite value or
        label; ``n_features`` < 1 or > ``2**31 - 1``.
    TypeError
        If ``n_features`` is not an integer or None, or ``binary_labels`` not a
        bool.
    """
    n_features = _check_n_features(n_features)
    if not isinstance(binary_labels, (bool, np.bool_)):
        raise TypeError(f"binary_labels must be a bool, got {type(binary_labels).__name__}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no LIBSVM file at {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a LIBSVM file")
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64,
                                  zero_based=False)
    except (ValueError, OverflowError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise _read_error(path, exc, n_features) from exc
    except OSError as exc:
        if getattr(exc, "errno", None) is not None:  # a system error (permissions, ...)
            raise
        raise _read_error(path, exc, n_features) from exc  # corrupt .gz/.bz2 data
    if X.shape[0] == 0:
        raise ValueError(f"{path} holds no examples (empty file, or comments only)")
    # the parser takes "nan" and "inf" as numbers: refuse them here, by example
    bad = np.flatnonzero(~np.isfinite(X.data))
    if bad.size:
        row = int(np.searchsorted(X.indptr, bad[0], side="right")) - 1
        raise ValueError(f"{path}: example {row + 1} (not counting comment lines) has a "
                         "non-finite feature value (NaN or infinity)")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise ValueError(f"{path}: example {int(bad[0]) + 1} (not counting comment lines) "
                         "has a non-finite label (NaN or infinity)")
    # load_svmlight_file gives int64 index arrays, which scikit-learn's sparse
    # coordinate descent (Lasso, ElasticNet) refuses: int32 when they fit.
    index_dtype = _index_dtype(X.nnz, X.shape[1])
    X = sp.csr_array((X.data, X.indices.astype(index_dtype, copy=False),
                      X.indptr.astype(index_dtype, copy=False)), shape=X.shape)
    if binary_labels:
        y, _ = _binary_labels(y)
    return X, np.asarray(y, dtype=np.float64)
