"""Text corpora hashed to binary sparse features: :func:`load_text_corpus`.

The feature map is a fixed hash function, chosen before any data is seen, so
building it reveals nothing about the documents, and with binary features
``||x_i||_inf <= 1`` holds by construction (see :mod:`dptoolkit.datasets`).
"""
import numbers
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_files
from sklearn.feature_extraction.text import HashingVectorizer

from .._validation import check_positive_int
from ._cache import _ARCHIVE_SUFFIXES, _extract_archive

__all__ = ["load_text_corpus"]

_SUBSETS = ("train", "test", "all")


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
