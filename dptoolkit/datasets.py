"""Datasets: LIBSVM files, text corpora, public-bounds clipping, synthetic data.

Real data lives outside the repository.  :func:`get_data_path` resolves a name
against the environment variable ``DPTOOLKIT_DATA`` (default ``../shared/data``,
relative to the current directory); tests and benchmarks use it and nothing else.

Privacy notes
-------------
The private estimators of dptoolkit assume a public bound on every example,
usually ``||x_i||_inf <= 1``.  The loaders here keep that bound public:

* :func:`load_text_corpus` hashes tokens with scikit-learn's
  :class:`~sklearn.feature_extraction.text.HashingVectorizer`.  The feature map
  is a fixed hash function, chosen before any data is seen, so building it
  reveals nothing about the documents (a vocabulary fitted on the data would:
  the presence of a rare word in the vocabulary discloses that some document
  contains it).  With ``binary=True`` every entry is 0 or 1, so
  ``||x_i||_inf <= 1`` holds by construction.
* :func:`clip_rows` enforces a public bound (inf-, l2- or l1-norm) row by row.
  Clipping is per example, so it costs no privacy.
* :func:`scale_by_max_abs` derives the scale from the data; it is offered for
  non-private baselines and warns with
  :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.
"""
import hashlib
import numbers
import os
import shutil
import tarfile
import tempfile
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_files, load_svmlight_file
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import MaxAbsScaler

from ._validation import check_positive_int, check_random_state, check_scalar_range
from .exceptions import PrivacyLeakWarning

__all__ = [
    "get_data_path",
    "load_libsvm",
    "load_text_corpus",
    "clip_rows",
    "scale_by_max_abs",
    "make_sparse_classification",
    "make_correlated_classification",  # paper 001, Sec. 4.2 (issue 7)
]


def get_data_path(name=""):
    """Path of a file or folder in the data directory.

    Parameters
    ----------
    name : str or path-like, default=""
        Relative name such as ``"a9a.bz2"`` or ``"text/aclImdb-train-test.tar.xz"``.

    Returns
    -------
    pathlib.Path
        ``$DPTOOLKIT_DATA/name``.  When the variable is unset: ``../shared/data/name``
        relative to the current directory, or, if that folder does not exist,
        relative to the repository of an editable install (so that scripts run
        from a sub-folder, like the Sphinx gallery, find the data too).
        The path is not checked for existence.
    """
    env = os.environ.get("DPTOOLKIT_DATA")
    if env:
        return Path(env).expanduser() / name
    root = Path("../shared/data")
    if not root.is_dir():
        repo_relative = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
        if repo_relative.is_dir():
            root = repo_relative
    return root / name


def _index_dtype(nnz, n_features):
    """int32 when the CSR index arrays fit in it (scipy's own rule), else int64.

    scikit-learn's Cython estimators for sparse input (e.g. Lasso and
    ElasticNet) accept int32 indices only; dptoolkit's kernels convert to int64
    themselves.
    """
    return np.int32 if max(nnz, n_features) < np.iinfo(np.int32).max else np.int64


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
        Number of features.  Pass it: some files do not reach their top feature
        index (a1a, a8a.t, a9a.t), and train/test files must agree.
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
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no LIBSVM file at {path}")
    X, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64,
                              zero_based=False)
    # load_svmlight_file gives int64 index arrays, which scikit-learn's sparse
    # coordinate descent (Lasso, ElasticNet) refuses: int32 when they fit.
    index_dtype = _index_dtype(X.nnz, X.shape[1])
    X = sp.csr_array((X.data, X.indices.astype(index_dtype, copy=False),
                      X.indptr.astype(index_dtype, copy=False)), shape=X.shape)
    if binary_labels:
        y, _ = _binary_labels(y)
    return X, np.asarray(y, dtype=np.float64)


# ----------------------------------------------------------------------------
# Text corpora
# ----------------------------------------------------------------------------

_ARCHIVE_SUFFIXES = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar")
_SUBSETS = ("train", "test", "all")


def _default_cache_dir():
    """``$DPTOOLKIT_CACHE``, else ``$XDG_CACHE_HOME/dptoolkit``, else ``~/.cache/dptoolkit``."""
    if os.environ.get("DPTOOLKIT_CACHE"):
        return Path(os.environ["DPTOOLKIT_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "dptoolkit"


def _file_sha256(path, chunk=1 << 22):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _safe_members(tar, dest):
    """Members of ``tar`` that stay inside ``dest`` (fallback without tarfile filters)."""
    dest = os.path.realpath(dest)
    for member in tar.getmembers():
        target = os.path.realpath(os.path.join(dest, member.name))
        if not (member.isfile() or member.isdir()):
            continue  # links, devices and fifos are never needed for a corpus
        if os.path.commonpath([dest, target]) != dest:
            raise ValueError(f"unsafe path in archive: {member.name!r}")
        yield member


def _extract_archive(path, cache_dir):
    """Extract a tar archive once into ``cache_dir``; return the extracted folder.

    The folder is named after the archive and the first 16 hex digits of its
    SHA-256, so a changed archive is extracted again and the same archive
    copied elsewhere is not.  Extraction goes to a temporary folder that is
    renamed when complete, so an interrupted or concurrent extraction never
    leaves a half-written corpus behind.
    """
    cache_dir = Path(_default_cache_dir() if cache_dir is None else cache_dir).expanduser()
    stem = path.name
    for suffix in _ARCHIVE_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    target = cache_dir / "corpora" / f"{stem}-{_file_sha256(path)[:16]}"
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{stem}-", dir=target.parent))
    try:
        try:
            tar = tarfile.open(path, "r:*")
        except tarfile.ReadError as exc:
            raise ValueError(f"{path} is neither a folder nor a tar archive "
                             f"({', '.join(_ARCHIVE_SUFFIXES)}): {exc}") from exc
        with tar:
            if hasattr(tarfile, "data_filter"):
                # Rejects absolute paths, '..', links out of the tree, device files.
                try:
                    tar.extractall(tmp, filter="data")
                except tarfile.FilterError as exc:
                    raise ValueError(f"unsafe member in archive {path}: {exc}") from exc
            else:  # pragma: no cover - Python without tarfile filters (< 3.10.12)
                tar.extractall(tmp, members=list(_safe_members(tar, tmp)))
        (tmp / ".complete").touch()
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process finished first (target exists and is not empty).
            if not (target / ".complete").exists():
                shutil.rmtree(target, ignore_errors=True)
                os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _find_layout(root):
    """Identify a corpus layout below ``root``.

    Returns
    -------
    layout : str
        ``"aclImdb"``, ``"20news-bydate"`` or ``"txt_sentoken"``.
    splits : dict
        Subset name (``"train"``, ``"test"``) -> folder holding one sub-folder
        per class; the single-folder layout ``txt_sentoken`` maps ``"all"``.
    allowed : list of str or None
        Class folders to read (None: every sub-folder).
    """
    candidates = [root] + sorted(p for p in root.iterdir() if p.is_dir())
    for base in candidates:
        # IMDB (Maas et al. 2011): aclImdb/{train,test}/{neg,pos}; train/unsup and
        # the *.feat / urls files are ignored.
        imdb = base / "aclImdb" if (base / "aclImdb").is_dir() else base
        if (imdb / "train" / "pos").is_dir() or (imdb / "test" / "pos").is_dir():
            splits = {s: imdb / s for s in ("train", "test") if (imdb / s).is_dir()}
            return "aclImdb", splits, ["neg", "pos"]
        # 20 Newsgroups "bydate": 20news-bydate-{train,test}/<group>/<id>.
        news = {s: base / f"20news-bydate-{s}" for s in ("train", "test")}
        if any(p.is_dir() for p in news.values()):
            return "20news-bydate", {s: p for s, p in news.items() if p.is_dir()}, None
        # Movie review polarity v2.0 (Pang & Lee 2004): txt_sentoken/{neg,pos}.
        if (base / "txt_sentoken" / "pos").is_dir():
            return "txt_sentoken", {"all": base / "txt_sentoken"}, ["neg", "pos"]
    raise ValueError(
        f"unknown corpus layout in {root}: expected aclImdb/{{train,test}}/{{neg,pos}}, "
        "20news-bydate-{train,test}/<group>/ or txt_sentoken/{neg,pos}"
    )


def _as_spec(value, name):
    if value is None:
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        items = [v.strip() for v in value]
    else:
        raise TypeError(f"{name} must be a str (comma-separated allowed) or a list of "
                        f"str, got {type(value).__name__}")
    items = [v for v in items if v]
    if not items:
        raise ValueError(f"{name} must name at least one group, got {value!r}")
    return items


def _match_groups(spec, groups, name):
    """Groups equal to an entry of ``spec`` or starting with it (prefix match)."""
    chosen = []
    for item in spec:
        hits = [g for g in groups if g == item or g.startswith(item)]
        if not hits:
            raise ValueError(f"{name}={item!r} matches no group; groups are {groups}")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


def _spec_label(spec, groups):
    return "+".join(s if s in groups else f"{s}*" for s in spec)


def _check_ngram_range(ngram_range):
    try:
        lo, hi = ngram_range
    except (TypeError, ValueError):
        raise TypeError(f"ngram_range must be a pair (min_n, max_n), got {ngram_range!r}")
    for v in (lo, hi):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError(f"ngram_range must hold integers, got {ngram_range!r}")
    if not 1 <= lo <= hi:
        raise ValueError(f"ngram_range must satisfy 1 <= min_n <= max_n, got {ngram_range!r}")
    return int(lo), int(hi)


def load_text_corpus(path, subset="train", n_features=2**20, ngram_range=(1, 2), *,
                     positive=None, negative=None, cache_dir=None):
    """Load a text corpus and hash it to binary sparse features.

    Documents are read with :func:`sklearn.datasets.load_files` (one file per
    document, one sub-folder per class, decoded as latin-1, so any byte
    sequence is accepted) and vectorised with
    :class:`~sklearn.feature_extraction.text.HashingVectorizer` (lower-cased
    word unigrams and bigrams by default, ``binary=True``, ``norm=None``,
    ``alternate_sign=False``).  Texts are used as distributed: IMDB keeps its
    ``<br />`` tags, 20 Newsgroups its headers.

    Parameters
    ----------
    path : str or path-like
        A corpus folder, or a tar archive (``.tar.xz``, ``.tar.gz``,
        ``.tar.bz2``, ``.tar``) of one, which is extracted once into
        ``cache_dir`` and reused.  Recognised layouts (the folder itself or
        one level below it):

        * IMDB Large Movie Review (Maas et al., 2011):
          ``aclImdb/{train,test}/{neg,pos}/*.txt``; labels neg=0, pos=1.
          ``train/unsup`` and the ``*.feat``/``urls_*`` files are ignored.
        * 20 Newsgroups "bydate": ``20news-bydate-{train,test}/<group>/<id>``;
          20 groups.
        * Movie review polarity v2.0 (Pang and Lee, 2004):
          ``txt_sentoken/{neg,pos}``; no train/test split, only
          ``subset="all"``.
    subset : {"train", "test", "all"}, default="train"
        Which split to read; ``"all"`` concatenates train then test.
    n_features : int, default=2**20
        Number of hashed features (columns), ``1 <= n_features <= 2**31 - 1``.
    ngram_range : tuple (min_n, max_n), default=(1, 2)
        Word n-gram range of the vectoriser.
    positive, negative : str or list of str, optional
        Build a binary problem from class folders (the 20 Newsgroups groups, or
        ``"neg"``/``"pos"``).  Each entry is a group name or a prefix
        (``"rec."`` selects the four ``rec.*`` groups); a str may list several
        entries separated by commas.  Documents of ``positive`` groups get
        label 1, those of ``negative`` groups label 0, the others are dropped.
        If only one side is given, the other side is every remaining group
        (one-vs-rest).  When neither is given, every class is kept with labels
        ``0 .. n_classes - 1`` in the order of ``target_names`` (sorted
        folder names): 20 classes for 20 Newsgroups, neg=0 / pos=1 for IMDB.
    cache_dir : str or path-like, optional
        Where archives are extracted (in ``corpora/<name>-<sha256[:16]>``).
        Default: ``$DPTOOLKIT_CACHE``, else ``$XDG_CACHE_HOME/dptoolkit``, else
        ``~/.cache/dptoolkit``.

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_documents, n_features), float64
        Entries in {0, 1} (1 when the hashed n-gram occurs in the document),
        so ``||x_i||_inf <= 1`` for every row, with a bound that does not
        depend on the data.
    y : ndarray of shape (n_documents,), float64
        Class labels (see ``positive``/``negative``).
    target_names : list of str
        Name of each label value: the folder names, or for a binary problem
        ``[negative, positive]`` as given (a prefix is shown with ``*``,
        e.g. ``["comp.*", "rec.*"]``; the complement side is ``"rest"``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For an unknown layout or archive type, an unknown ``subset`` or one
        that the corpus does not have, a group name that matches nothing,
        groups on both sides, or bad ``n_features``/``ngram_range``.
    TypeError
        For arguments of the wrong type.

    Notes
    -----
    **Privacy.** Hashing is data-independent: the map from n-grams to
    columns is fixed before any document is read, so no vocabulary or other
    statistic of the corpus is released by building it, and the bound
    ``||x_i||_inf <= 1`` is public.  Hash collisions merge n-grams (they never
    produce values above 1 because of ``binary=True``).

    References
    ----------
    .. [1] A. L. Maas, R. E. Daly, P. T. Pham, D. Huang, A. Y. Ng and C. Potts,
       "Learning Word Vectors for Sentiment Analysis", ACL 2011.
    .. [2] K. Lang, "NewsWeeder: Learning to Filter Netnews", ICML 1995.
    .. [3] K. Weinberger, A. Dasgupta, J. Langford, A. Smola and J. Attenberg,
       "Feature Hashing for Large Scale Multitask Learning", ICML 2009.

    Examples
    --------
    >>> from dptoolkit.datasets import get_data_path, load_text_corpus
    >>> X, y, names = load_text_corpus(                      # doctest: +SKIP
    ...     get_data_path("text/20news-bydate.tar.xz"), "train",
    ...     positive="rec.", negative="comp.")
    >>> X.shape, names                                       # doctest: +SKIP
    ((5325, 1048576), ['comp.*', 'rec.*'])
    """
    if not isinstance(subset, str) or subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {_SUBSETS}, got {subset!r}")
    n_features = check_positive_int(n_features, "n_features")
    if n_features > np.iinfo(np.int32).max:
        raise ValueError(f"n_features must be <= 2**31 - 1, got {n_features}")
    ngram_range = _check_ngram_range(ngram_range)
    positive = _as_spec(positive, "positive")
    negative = _as_spec(negative, "negative")

    path = Path(path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"no corpus at {path}")
    if path.is_dir():
        root = path
    elif path.name.endswith(_ARCHIVE_SUFFIXES):
        root = _extract_archive(path, cache_dir)
    else:
        raise ValueError(f"{path} is neither a folder nor a tar archive "
                         f"({', '.join(_ARCHIVE_SUFFIXES)})")

    layout, splits, allowed = _find_layout(root)
    if subset == "all" and "all" not in splits:
        wanted = [s for s in ("train", "test") if s in splits]
    else:
        wanted = [subset]
    missing = [s for s in wanted if s not in splits]
    if missing:
        raise ValueError(f"subset={subset!r} is not available in the {layout} corpus "
                         f"at {root}; available: {sorted(splits)}")

    groups = sorted(p.name for p in splits[wanted[0]].iterdir() if p.is_dir())
    if allowed is not None:
        groups = [g for g in groups if g in allowed]
    if not groups:
        raise ValueError(f"no class folders in {splits[wanted[0]]}")

    if positive is None and negative is None:
        categories, label_of, target_names = groups, None, list(groups)
    else:
        pos = _match_groups(positive, groups, "positive") if positive else None
        neg = _match_groups(negative, groups, "negative") if negative else None
        if pos is None:
            pos = [g for g in groups if g not in neg]
        if neg is None:
            neg = [g for g in groups if g not in pos]
        overlap = sorted(set(pos) & set(neg))
        if overlap:
            raise ValueError(f"groups {overlap} are selected by both positive and negative")
        if not pos or not neg:
            raise ValueError("positive and negative must each select at least one group")
        label_of = {g: 1.0 for g in pos} | {g: 0.0 for g in neg}
        categories = sorted(label_of)
        target_names = [_spec_label(negative, groups) if negative else "rest",
                        _spec_label(positive, groups) if positive else "rest"]

    texts, labels = [], []
    for s in wanted:
        bunch = load_files(str(splits[s]), categories=categories, load_content=True,
                           encoding="latin-1", decode_error="strict", shuffle=False)
        names = np.asarray(bunch.target_names)
        folder = names[bunch.target]
        if label_of is None:
            y_s = np.searchsorted(np.asarray(target_names), folder).astype(np.float64)
        else:
            y_s = np.array([label_of[f] for f in folder], dtype=np.float64)
        texts.extend(bunch.data)
        labels.append(y_s)
    y = np.concatenate(labels) if labels else np.empty(0)

    vectorizer = HashingVectorizer(n_features=n_features, ngram_range=ngram_range,
                                   binary=True, norm=None, alternate_sign=False,
                                   dtype=np.float64)
    X = sp.csr_array(vectorizer.transform(texts))
    X.sum_duplicates()
    return X, y, target_names


# ----------------------------------------------------------------------------
# Public bounds
# ----------------------------------------------------------------------------

_NORMS = ("inf", "l2", "l1")


def _check_X_numeric(X, name="X"):
    """Return (float64 copy of X: CSR array if sparse, else ndarray; is_sparse)."""
    is_sparse = sp.issparse(X)
    arr = X if is_sparse else np.asarray(X)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features), "
                         f"got {arr.ndim} dimension(s)")
    if is_sparse:
        M = sp.csr_array(arr, dtype=np.float64, copy=True)
        M.sum_duplicates()
    else:
        M = np.array(arr, dtype=np.float64, copy=True)
    if not np.all(np.isfinite(M.data if is_sparse else M)):
        raise ValueError(f"{name} contains NaN or infinity")
    return M, is_sparse


def clip_rows(X, bound=1.0, norm="inf"):
    """Clip every example to a public norm bound; return a copy and a count.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Examples, one per row.  Any scipy.sparse format.
    bound : float, default=1.0
        The public bound, ``0 < bound < inf``.  It must not be derived from
        ``X`` (that would leak; see :func:`scale_by_max_abs`).
    norm : {"inf", "l2", "l1"}, default="inf"
        ``"inf"``: every entry is clipped to ``[-bound, bound]``, so
        ``||x_i||_inf <= bound``.  ``"l2"``/``"l1"``: rows whose norm exceeds
        ``bound`` are scaled down to norm ``bound`` (direction kept), so
        ``||x_i||_2 <= bound`` (resp. ``||x_i||_1 <= bound``).

    Returns
    -------
    X_clipped : ndarray or scipy.sparse.csr_array of shape (n_samples, n_features)
        float64 copy; dense input gives an ndarray, sparse input a CSR array.
        ``X`` is not modified.
    n_clipped : int
        Number of rows that were changed.

    Raises
    ------
    ValueError
        If ``bound`` is not in (0, inf), ``norm`` is unknown, ``X`` is not
        2-D or contains NaN or infinity.
    TypeError
        If ``X`` is not numeric or ``bound`` is not a real number.

    Notes
    -----
    Clipping acts on each example alone, so it does not weaken a
    differential-privacy guarantee computed for data satisfying the bound:
    it is how such a bound is enforced rather than assumed.
    """
    bound = check_scalar_range(bound, "bound", low=0.0, low_open=True)
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {_NORMS}, got {norm!r}")
    M, is_sparse = _check_X_numeric(X)
    n = M.shape[0]
    if norm == "inf":
        if is_sparse:
            over = np.abs(M.data) > bound
            row_of = np.repeat(np.arange(n), np.diff(M.indptr))
            n_clipped = np.unique(row_of[over]).size
            np.clip(M.data, -bound, bound, out=M.data)
        else:
            n_clipped = int(np.count_nonzero((np.abs(M) > bound).any(axis=1)))
            np.clip(M, -bound, bound, out=M)
        return M, int(n_clipped)

    order = 2 if norm == "l2" else 1
    if is_sparse:
        sq = M.data**2 if order == 2 else np.abs(M.data)
        row_of = np.repeat(np.arange(n), np.diff(M.indptr))
        norms = np.bincount(row_of, weights=sq, minlength=n)
        norms = np.sqrt(norms) if order == 2 else norms
    else:
        norms = np.linalg.norm(M, ord=order, axis=1)
    over = norms > bound
    scale = np.ones(n)
    scale[over] = bound / norms[over]
    # Rounding can leave a scaled row a few ulps above the bound: shrink those
    # by a relative 4 eps so that the bound holds exactly in floating point.
    scale[over] *= 1.0 - 4 * np.finfo(np.float64).eps
    if is_sparse:
        M.data *= np.repeat(scale, np.diff(M.indptr))
    else:
        M *= scale[:, None]
    return M, int(np.count_nonzero(over))


def scale_by_max_abs(X, *, per_feature=True):
    """Scale by the data's maximum absolute values (data-derived: leaks).

    Divides each column (or the whole matrix) by its largest absolute value,
    so that every entry lands in [-1, 1] and sparsity is kept, as
    :class:`sklearn.preprocessing.MaxAbsScaler` does.

    .. warning::
       The scale is a statistic of the private data: it can reveal an
       outlying example, and a differential-privacy guarantee computed for
       ``||x_i||_inf <= 1`` does not cover it.  Use it only for non-private
       baselines or when the scale is public; otherwise use a public bound
       with :func:`clip_rows`.  A :class:`~dptoolkit.exceptions.PrivacyLeakWarning`
       is issued on every call.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Data to scale.  Any scipy.sparse format.
    per_feature : bool, default=True
        True: one scale per column.  False: one scale for the whole matrix
        (keeps the relative size of the columns).

    Returns
    -------
    X_scaled : ndarray or scipy.sparse.csr_array of shape (n_samples, n_features)
        float64 copy, entries in [-1, 1]; dense input gives an ndarray,
        sparse input a CSR array.
    scale : ndarray of shape (n_features,), float64
        The divisors (1 for all-zero columns), to apply the same scaling to
        test data: ``X_test / scale``.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or contains NaN or infinity.
    TypeError
        If ``X`` is not numeric.

    Warns
    -----
    PrivacyLeakWarning
        Always: the scale is derived from the data.
    """
    M, is_sparse = _check_X_numeric(X)
    warnings.warn(
        "scale_by_max_abs derives its scale from the data; the result is not "
        "covered by a privacy guarantee that assumes a public bound (use clip_rows "
        "with a public bound instead)", PrivacyLeakWarning, stacklevel=2)
    scaler = MaxAbsScaler(copy=False).fit(M)
    scale = np.asarray(scaler.scale_, dtype=np.float64)
    if not per_feature:
        top = float(scaler.max_abs_.max()) if scaler.max_abs_.size else 0.0
        scale = np.full(M.shape[1], top if top > 0 else 1.0)
        scaler.scale_ = scale
    X_scaled = scaler.transform(M)
    if is_sparse:
        X_scaled = sp.csr_array(X_scaled)
    return X_scaled, scale


# ----------------------------------------------------------------------------
# Synthetic sparse problems
# ----------------------------------------------------------------------------

_VALUES = ("binary", "signed", "uniform")
_LABEL_MODELS = ("logistic", "sign")


def make_sparse_classification(n_samples=10_000, n_features=100_000, *, n_informative=20,
                               avg_nnz=50, zipf_exponent=1.0, values="binary",
                               label_model="logistic", coef_scale=2.0,
                               random_state=None):
    """Sparse binary classification problem with a planted sparse weight vector.

    Mimics hashed text: each row holds about ``avg_nnz`` features drawn from
    a power-law (Zipf-like) distribution over the columns, the columns'
    popularity ranks are shuffled (as hashing does), and the labels follow a
    logistic (or sign) model of a weight vector with ``n_informative``
    non-zeros.  Everything is vectorised: 10^5 x 10^6 with 50 draws per row
    takes a few seconds.

    Parameters
    ----------
    n_samples : int, default=10_000
        Number of rows, >= 1.
    n_features : int, default=100_000
        Number of columns, >= 2 and >= ``n_informative``.
    n_informative : int, default=20
        Non-zeros of ``w_true``, ``1 <= n_informative <= n_features``.  They
        are drawn uniformly without replacement among the features of
        popularity ranks ``n_informative + 1 .. 5 * n_informative`` (capped
        at ``n_features``): frequent enough to be learnt, but not the very
        top features, which play the part of stop words.
    avg_nnz : float, default=50
        Expected number of feature draws per row (``1 + Poisson(avg_nnz - 1)``
        each, at most ``n_features``), ``1 <= avg_nnz``.  Repeated draws in a
        row merge, so the mean number of non-zeros per row is somewhat lower
        when ``zipf_exponent`` is large.
    zipf_exponent : float, default=1.0
        Feature ``j`` of popularity rank ``r_j`` (1 = most frequent) is drawn
        with probability proportional to ``r_j ** -zipf_exponent``; 0 gives
        uniform frequencies, about 1 is typical of words in text.  Must be in
        [0, 10].
    values : {"binary", "signed", "uniform"}, default="binary"
        Stored values: 1; a random sign +-1; or uniform on [-1, 1].  In every
        case ``||x_i||_inf <= 1``.
    label_model : {"logistic", "sign"}, default="logistic"
        ``y_i ~ Bernoulli(sigmoid(x_i . w_true))`` or ``y_i = [x_i . w_true > 0]``
        (a zero margin gets a fair coin).
    coef_scale : float, default=2.0
        Magnitude of the planted weights (> 0): the non-zeros of ``w_true``
        are ``+-coef_scale * U[1, 2]``, half of each sign, with the negative
        ones rescaled so that the mean margin over the rows is zero (classes
        about balanced without an intercept).
    random_state : None, int, SeedSequence or numpy.random.Generator
        Seed (see :func:`dptoolkit._validation.check_random_state`).

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_samples, n_features), float64
        Canonical CSR (sorted indices, no duplicates).
    y : ndarray of shape (n_samples,), float64
        Labels in {0, 1}.
    w_true : ndarray of shape (n_features,), float64
        The planted weights, ``n_informative`` non-zeros.

    Raises
    ------
    ValueError
        For arguments out of range or unknown ``values``/``label_model``.
    TypeError
        For arguments of the wrong type.

    Examples
    --------
    >>> from dptoolkit.datasets import make_sparse_classification
    >>> X, y, w = make_sparse_classification(1000, 5000, random_state=0)
    >>> X.shape, int((w != 0).sum())
    ((1000, 5000), 20)
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    n_features = check_positive_int(n_features, "n_features", minimum=2)
    n_informative = check_positive_int(n_informative, "n_informative")
    if n_informative > n_features:
        raise ValueError(f"n_informative must be <= n_features={n_features}, "
                         f"got {n_informative}")
    avg_nnz = check_scalar_range(avg_nnz, "avg_nnz", low=1.0)
    zipf_exponent = check_scalar_range(zipf_exponent, "zipf_exponent", low=0.0, high=10.0)
    coef_scale = check_scalar_range(coef_scale, "coef_scale", low=0.0, low_open=True)
    if values not in _VALUES:
        raise ValueError(f"values must be one of {_VALUES}, got {values!r}")
    if label_model not in _LABEL_MODELS:
        raise ValueError(f"label_model must be one of {_LABEL_MODELS}, got {label_model!r}")
    rng = check_random_state(random_state)

    # Feature popularity: rank r (0 = most frequent) has weight (r + 1)^-a; the
    # column of rank r is col_of_rank[r], a random permutation (as hashing does).
    col_of_rank = rng.permutation(n_features)
    p_rank = np.arange(1, n_features + 1, dtype=np.float64) ** -zipf_exponent
    p_rank /= p_rank.sum()
    cdf = np.cumsum(p_rank)
    cdf /= cdf[-1]

    # Draws per row and the drawn columns, all at once.
    counts = np.minimum(1 + rng.poisson(avg_nnz - 1.0, size=n_samples), n_features)
    rows = np.repeat(np.arange(n_samples, dtype=np.int64), counts)
    drawn = np.searchsorted(cdf, rng.random(rows.size), side="right")
    np.minimum(drawn, n_features - 1, out=drawn)  # guards rounding of cdf[-1]
    # Merge repeated draws within a row: sort the (row, col) keys row-major and
    # drop repeats (a plain sort: np.unique is several times slower here).
    keys = rows * n_features + col_of_rank[drawn]
    keys.sort()
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    rows, cols = np.divmod(keys, n_features)
    indptr = np.zeros(n_samples + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_samples), out=indptr[1:])
    if values == "binary":
        data = np.ones(keys.size)
    elif values == "signed":
        data = rng.choice(np.array([-1.0, 1.0]), size=keys.size)
    else:
        data = rng.uniform(-1.0, 1.0, size=keys.size)
    index_dtype = _index_dtype(keys.size, n_features)
    X = sp.csr_array((data, cols.astype(index_dtype), indptr.astype(index_dtype)),
                     shape=(n_samples, n_features))

    # Planted weights on moderately frequent features: popularity ranks
    # [lo, hi) with lo = n_informative, hi = 5 * n_informative (capped).  The
    # very top features (stop words, in text) carry no signal, and features so
    # rare that few rows contain them could not be learnt.
    lo = min(n_informative, n_features - n_informative)
    hi = min(n_features, max(lo + n_informative, 5 * n_informative))
    informative = col_of_rank[lo + rng.choice(hi - lo, size=n_informative, replace=False)]
    magnitude = coef_scale * rng.uniform(1.0, 2.0, size=n_informative)
    sign = np.where(np.arange(n_informative) % 2 == 0, 1.0, -1.0)
    rng.shuffle(sign)
    w_true = np.zeros(n_features)
    w_true[informative] = sign * magnitude
    if n_informative > 1:
        # Balance: rescale the negative weights so that the mean margin over
        # the rows is zero (classes about balanced without an intercept).
        contrib = w_true[informative] * np.asarray(X[:, informative].mean(axis=0)).ravel()
        pos_mass, neg_mass = contrib[sign > 0].sum(), -contrib[sign < 0].sum()
        if pos_mass > 0 and neg_mass > 0:
            w_true[informative[sign < 0]] *= pos_mass / neg_mass

    margin = X @ w_true
    if label_model == "logistic":
        prob = 0.5 * (1.0 + np.tanh(0.5 * margin))  # sigmoid without overflow
        y = (rng.random(n_samples) < prob).astype(np.float64)
    else:
        y = (margin > 0).astype(np.float64)
        ties = margin == 0
        y[ties] = rng.integers(0, 2, size=int(ties.sum())).astype(np.float64)
    return X, y, w_true


# ----------------------------------------------------------------------------
# Synthetic problem of paper 001, Section 4.2 (issue 7)
# ----------------------------------------------------------------------------

_SCALINGS = ("public", "max_abs", None)


def make_correlated_classification(n_samples=10_000, n_features=100, *, correlation=0.5,
                                   coef=(10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 0.5),
                                   scaling="public", bound=5.0, random_state=None):
    r"""Correlated Gaussian features, sparse planted weights, labels by sign.

    The synthetic data of Khanna, Lu and Raff (paper 001, Section 4.2; after Wang &
    Zhang 2020): :math:`x_i \sim \mathcal N(0, \Sigma)` with
    :math:`\Sigma_{jk} = \text{correlation}^{|j-k|}` (drawn exactly as the
    stationary AR(1) process :math:`x_{i1} = z_1`,
    :math:`x_{ij} = \rho x_{i,j-1} + \sqrt{1-\rho^2} z_j`), features scaled (see
    ``scaling``), then :math:`y_i = 1` if :math:`\sigma(w^* \cdot x_i) > 0.5`, i.e.
    :math:`w^*\cdot x_i > 0`, computed on the scaled features (the paper's order), and
    :math:`y_i = 0` otherwise.  The default is the paper's problem: 10,000 x 100,
    :math:`w^* = [10, 9, 8, 7, 6, 5, 4, 0.5, 0, \dots, 0]`.

    Parameters
    ----------
    n_samples : int, default=10000
        >= 1.
    n_features : int, default=100
        >= ``len(coef)``.
    correlation : float, default=0.5
        :math:`\rho \in (-1, 1)`.
    coef : sequence of float, default=(10, 9, 8, 7, 6, 5, 4, 0.5)
        The first ``len(coef)`` entries of :math:`w^*` (finite); the rest are 0.
    scaling : {"public", "max_abs", None}, default="public"
        ``"public"``: divide by the public constant ``bound`` and clip to [-1, 1]
        (every :math:`x_{ij}` is standard normal, so ``bound`` is chosen without
        looking at the data; with the default 5 about one entry in 1.7 million is
        clipped), so :math:`\|x_i\|_\infty \le 1` holds by construction.
        ``"max_abs"``: divide each feature by its largest absolute value in the
        sample, as the paper does; the scale is a statistic of the data, so this
        issues a :class:`~dptoolkit.exceptions.PrivacyLeakWarning` (reproduction
        only).  ``None``: no scaling.
    bound : float, default=5.0
        Public bound of ``"public"`` scaling, > 0.
    random_state : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64
        Labels in {0, 1}.
    w_true : ndarray of shape (n_features,), float64

    Raises
    ------
    ValueError
        Arguments out of range, unknown ``scaling``, non-finite ``coef`` or more
        entries in ``coef`` than features.
    TypeError
        Arguments of the wrong type.

    Warns
    -----
    PrivacyLeakWarning
        With ``scaling="max_abs"``.

    References
    ----------
    A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression, Section 4.2.
    P. Wang, H. Zhang. Differential privacy for sparse classification learning.
    Neurocomputing 375, 2020.

    Examples
    --------
    >>> from dptoolkit.datasets import make_correlated_classification
    >>> X, y, w = make_correlated_classification(random_state=0)
    >>> X.shape, int((w != 0).sum()), bool(abs(X).max() <= 1)
    ((10000, 100), 8, True)
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    n_features = check_positive_int(n_features, "n_features")
    correlation = check_scalar_range(correlation, "correlation", low=-1.0, high=1.0,
                                     low_open=True, high_open=True)
    coef = np.asarray(coef)
    if coef.dtype.kind not in "iuf" or coef.ndim != 1 or coef.size == 0:
        raise TypeError("coef must be a non-empty 1-D sequence of real numbers")
    coef = coef.astype(np.float64)
    if not np.all(np.isfinite(coef)):
        raise ValueError("coef must be finite")
    if coef.size > n_features:
        raise ValueError(f"coef has {coef.size} entries, more than n_features={n_features}")
    if scaling not in _SCALINGS:
        raise ValueError(f"scaling must be one of {_SCALINGS}, got {scaling!r}")
    bound = check_scalar_range(bound, "bound", low=0.0, low_open=True)
    rng = check_random_state(random_state)

    z = rng.standard_normal((n_samples, n_features))
    X = np.empty_like(z)
    X[:, 0] = z[:, 0]
    innov = np.sqrt(1.0 - correlation * correlation)
    for j in range(1, n_features):
        X[:, j] = correlation * X[:, j - 1] + innov * z[:, j]
    if scaling == "public":
        X /= bound
        np.clip(X, -1.0, 1.0, out=X)
    elif scaling == "max_abs":
        warnings.warn("scaling='max_abs' divides each feature by its maximum absolute "
                      "value in the sample (as paper 001 does); the scale is derived from "
                      "the data and not covered by a privacy guarantee (use "
                      "scaling='public')", PrivacyLeakWarning, stacklevel=2)
        top = np.abs(X).max(axis=0)
        X /= np.where(top > 0, top, 1.0)
    w_true = np.zeros(n_features)
    w_true[:coef.size] = coef
    y = (X @ w_true > 0).astype(np.float64)
    return X, y, w_true
