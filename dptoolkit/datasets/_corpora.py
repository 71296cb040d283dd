"""Text corpora hashed to binary sparse features: :func:`load_text_corpus`.

The feature map is a fixed hash function, chosen before any data is seen, so
building it reveals nothing about the documents, and with binary features
``||x_i||_inf <= 1`` holds by construction (see :mod:`dptoolkit.datasets`).

Layouts (found in the folder given, or one level below it):

=================  =====================================================  ===========
layout             files                                                  split
=================  =====================================================  ===========
``aclImdb``        ``aclImdb/{train,test}/{neg,pos}/*.txt``               own
``20news-bydate``  ``20news-bydate-{train,test}/<group>/<id>``            own
``reuters21578``   ``reut2-*.sgm`` (SGML)                                 own (ModApte)
``txt_sentoken``   ``txt_sentoken/{neg,pos}/*.txt``                       seeded
``enron-spam``     ``enron<k>/{ham,spam}/*.txt`` or ``{ham,spam}/*.txt``  seeded
``label-tab-text`` ``SMSSpamCollection`` or one ``*.tsv`` file            seeded
=================  =====================================================  ===========

"seeded": a stratified random train/test split (:func:`_split_indices`).
"""
import numbers
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_files
from sklearn.feature_extraction.text import HashingVectorizer

from .._validation import check_n_jobs, check_positive_int
from . import _reuters

from ._cache import _ARCHIVE_SUFFIXES, features_cache_path, read_features, write_features
from ._corpus_layout import _find_layout, _resolve

__all__ = ["load_text_corpus", "hash_block", "hash_documents", "hashing_vectorizer"]

_SUBSETS = ("train", "test", "all")

#: Held-out fraction of the split made for corpora without their own split.
DEFAULT_TEST_SIZE = 0.25
#: Seed of that split.
DEFAULT_RANDOM_STATE = 0
#: Reuters-21578 multiclass task: single-topic documents of the this many most
#: frequent ModApte training topics (gives the 8 classes known as "R8").
REUTERS_TOP_TOPICS = 10











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
    """Groups equal to an entry of ``spec``, else starting with it (prefix match).

    An exact name selects that group only (Reuters ``"cotton"`` is not
    ``"cotton-oil"``); no 20 Newsgroups or IMDB group name is a prefix of another.
    """
    chosen = []
    for item in spec:
        hits = [item] if item in groups else [g for g in groups if g.startswith(item)]
        if not hits:
            raise ValueError(f"{name}={item!r} matches no group; groups are {groups}")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


def _spec_label(spec, groups):
    return "+".join(s if s in groups else f"{s}*" for s in spec)


def _binary_sides(groups, positive, negative):
    """``(pos, neg, target_names)`` of a binary task over ``groups``."""
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
    target_names = [_spec_label(negative, groups) if negative else "rest",
                    _spec_label(positive, groups) if positive else "rest"]
    return pos, neg, target_names


def _labelling(groups, positive, negative):
    """``(categories, label_of, target_names)`` for single-label corpora."""
    if positive is None and negative is None:
        return list(groups), None, list(groups)
    pos, neg, target_names = _binary_sides(groups, positive, negative)
    label_of = {g: 1.0 for g in pos} | {g: 0.0 for g in neg}
    return sorted(label_of), label_of, target_names


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


def _check_test_size(test_size):
    if test_size is None:
        return None
    if isinstance(test_size, (bool, np.bool_)) or not isinstance(test_size, numbers.Real):
        raise TypeError(f"test_size must be a float in (0, 1) or an int >= 1, got "
                        f"{type(test_size).__name__}")
    if isinstance(test_size, numbers.Integral):
        if test_size < 1:
            raise ValueError(f"test_size must be a float in (0, 1) or an int >= 1, "
                             f"got {test_size}")
        return int(test_size)
    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size must be a float in (0, 1) or an int >= 1, "
                         f"got {test_size}")
    return float(test_size)


def _check_random_state(random_state):
    if random_state is None:
        return None
    if isinstance(random_state, (bool, np.bool_)) or \
            not isinstance(random_state, numbers.Integral):
        raise TypeError(f"random_state must be an int in [0, 2**32 - 1], got "
                        f"{type(random_state).__name__}")
    if not 0 <= random_state <= 2**32 - 1:
        raise ValueError(f"random_state must be an int in [0, 2**32 - 1], got {random_state}")
    return int(random_state)


def _split_indices(strata, subset, test_size, random_state, where):
    """Sorted indices of ``subset`` in the seeded stratified split of ``len(strata)`` items.

    :func:`sklearn.model_selection.train_test_split` of ``arange(n)`` with
    ``stratify=strata``; the indices are sorted, so documents keep the corpus
    order within each part.
    """
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(strata))
    if subset == "all":
        return idx
    try:
        train, test = train_test_split(idx, test_size=test_size, random_state=random_state,
                                       shuffle=True, stratify=strata)
    except ValueError as exc:
        raise ValueError(
            f"subset={subset!r} is not available in the {where}: its seeded stratified "
            f"train/test split (test_size={test_size}, random_state={random_state}) "
            f"cannot be made: {exc} Use subset='all'.") from exc
    return np.sort(train if subset == "train" else test)










def _read_text(path):
    return path.read_bytes().decode("latin-1")


# ----------------------------------------------------------------------------- readers

def _load_own_split_folders(layout, subset, positive, negative):
    """IMDB and 20 Newsgroups: one folder per split, one sub-folder per class."""
    splits, allowed = layout.splits, layout.allowed
    if subset == "all" and "all" not in splits:
        wanted = [s for s in ("train", "test") if s in splits]
    else:
        wanted = [subset]
    missing = [s for s in wanted if s not in splits]
    if missing:
        raise ValueError(f"subset={subset!r} is not available in the {layout.name} corpus "
                         f"at {layout.root}; available: {sorted(splits)}")

    groups = sorted(p.name for p in splits[wanted[0]].iterdir() if p.is_dir())
    if allowed is not None:
        groups = [g for g in groups if g in allowed]
    if not groups:
        raise ValueError(f"no class folders in {splits[wanted[0]]}")
    categories, label_of, target_names = _labelling(groups, positive, negative)

    docs, labels = [], []
    for s in wanted:
        # file names only: the documents are read where they are hashed (load_files'
        # order, and its decoding: latin-1 accepts any byte)
        bunch = load_files(str(splits[s]), categories=categories, load_content=False,
                           shuffle=False)
        names = np.asarray(bunch.target_names)
        folder = names[bunch.target]
        if label_of is None:
            y_s = np.searchsorted(np.asarray(target_names), folder).astype(np.float64)
        else:
            y_s = np.array([label_of[f] for f in folder], dtype=np.float64)
        docs.extend(Path(f) for f in bunch.filenames)
        labels.append(y_s)
    y = np.concatenate(labels) if labels else np.empty(0)
    return docs, y, target_names


def _folder_documents(layout):
    """``(files, classes)`` of a folder-per-class corpus without a split.

    Class-major order: every document of the first class (sorted names), over
    the parts in order (``enron1`` ... ``enron6``), files sorted by name; hidden
    files are skipped.
    """
    present = sorted({c.name for part in layout.parts for c in part.iterdir()
                      if c.is_dir() and c.name in layout.allowed})
    files, classes = [], []
    for cls in present:
        for part in layout.parts:
            folder = part / cls
            if not folder.is_dir():
                continue
            for f in sorted(folder.iterdir()):
                if f.is_file() and not f.name.startswith("."):
                    files.append(f)
                    classes.append(cls)
    if not files:
        where = ", ".join(str(p) for p in layout.parts)
        raise ValueError(f"no documents in {where} (expected {layout.allowed} sub-folders "
                         "holding one file per document)")
    return files, np.asarray(classes)


def _tsv_documents(path):
    """``(texts, classes)`` of a ``label<TAB>text`` file (one document per line)."""
    raw = path.read_bytes()
    texts, classes = [], []
    for lineno, line in enumerate(raw.decode("latin-1").splitlines(), start=1):
        if not line.strip():
            continue
        label, tab, text = line.partition("\t")
        label = label.strip()
        if not tab or not label:
            raise ValueError(f"{path}, line {lineno}: expected 'label<TAB>text', got "
                             f"{line[:60]!r}")
        classes.append(label)
        texts.append(text)
    if not texts:
        raise ValueError(f"{path} holds no documents (empty file; expected "
                         "'label<TAB>text' lines)")
    return texts, np.asarray(classes)


def _load_seeded_split(layout, subset, positive, negative, test_size, random_state):
    """Single-label corpora without a split: the seeded stratified split."""
    if layout.file is not None:
        docs, classes = _tsv_documents(layout.file)
        where = f"{layout.name} corpus {layout.file}"
    else:
        docs, classes = _folder_documents(layout)
        where = f"{layout.name} corpus at {layout.root}"
    groups = sorted(set(classes.tolist()))
    categories, label_of, target_names = _labelling(groups, positive, negative)
    # The split is made over every document, stratified by class, before any
    # selection by positive/negative: a document is in the same part whatever the task.
    ts = DEFAULT_TEST_SIZE if test_size is None else test_size
    rs = DEFAULT_RANDOM_STATE if random_state is None else random_state
    idx = _split_indices(classes, subset, ts, rs, where)
    keep = set(categories)
    idx = [i for i in idx if classes[i] in keep]
    if label_of is None:
        y = np.searchsorted(np.asarray(target_names), classes[idx]).astype(np.float64)
    else:
        y = np.array([label_of[c] for c in classes[idx]], dtype=np.float64)
    return [docs[i] for i in idx], y, target_names


def _load_reuters(layout, subset, positive, negative):
    """Reuters-21578, ModApte split (ApteMod: documents with one of the 90 topics)."""
    train, test, topics = _reuters.modapte(_reuters.read_reuters(layout.root))
    if not train or not test:
        raise ValueError(f"the reuters21578 corpus at {layout.root} has no ModApte "
                         "training or test documents (LEWISSPLIT/TOPICS attributes)")
    docs = {"train": train, "test": test, "all": train + test}[subset]
    if positive is None and negative is None:
        counts = Counter(t for d in train for t in d["topics"])
        top = sorted(counts, key=lambda t: (-counts[t], t))[:REUTERS_TOP_TOPICS]
        target_names = sorted({d["topics"][0] for d in train
                               if len(d["topics"]) == 1 and d["topics"][0] in top})
        kept = [d for d in docs if len(d["topics"]) == 1 and d["topics"][0] in target_names]
        y = np.searchsorted(np.asarray(target_names),
                            [d["topics"][0] for d in kept]).astype(np.float64)
        return [d["text"] for d in kept], y, target_names
    pos, neg, target_names = _binary_sides(topics, positive, negative)
    pos, neg = set(pos), set(neg)
    texts, y = [], []
    for d in docs:
        has_pos, has_neg = bool(pos.intersection(d["topics"])), bool(neg.intersection(d["topics"]))
        if positive is not None and negative is not None:
            label = 1.0 if has_pos and not has_neg else 0.0 if has_neg and not has_pos else None
        elif positive is not None:
            label = 1.0 if has_pos else 0.0
        else:
            label = 0.0 if has_neg else 1.0
        if label is not None:
            texts.append(d["text"])
            y.append(label)
    return texts, np.asarray(y, dtype=np.float64), target_names


def load_text_corpus(path, subset="train", n_features=2**20, ngram_range=(1, 2), *,
                     positive=None, negative=None, cache_dir=None, test_size=None,
                     random_state=None, n_jobs=None, verbose=0):
    """Load a text corpus and hash it to binary sparse features.

    Documents are read as distributed (decoded as latin-1, so any byte
    sequence is accepted; folder layouts through
    :func:`sklearn.datasets.load_files` or in the same order) and vectorised
    with :class:`~sklearn.feature_extraction.text.HashingVectorizer`
    (lower-cased word unigrams and bigrams by default, ``binary=True``,
    ``norm=None``, ``alternate_sign=False``).  Texts are not cleaned: IMDB
    keeps its ``<br />`` tags, 20 Newsgroups its headers, Enron-Spam its
    ``Subject:`` line.

    Parameters
    ----------
    path : str or path-like
        A corpus folder, a tar archive (``.tar.xz``, ``.tar.gz``,
        ``.tar.bz2``, ``.tar``) of one, which is extracted once into the cache
        folder (see *Cache* below) and reused, or a ``label<TAB>text`` file.
        Recognised layouts (the folder itself or one level below it):

        * IMDB Large Movie Review (Maas et al., 2011):
          ``aclImdb/{train,test}/{neg,pos}/*.txt``; labels neg=0, pos=1.
          ``train/unsup`` and the ``*.feat``/``urls_*`` files are ignored.
          Own train/test split (25,000 / 25,000).
        * 20 Newsgroups "bydate": ``20news-bydate-{train,test}/<group>/<id>``;
          20 groups; own split (11,314 / 7,532).
        * Reuters-21578 (Lewis): the SGML files ``reut2-000.sgm`` ...
          ``reut2-021.sgm``.  The ModApte split: ``LEWISSPLIT="TRAIN"``
          (``"TEST"``) and ``TOPICS="YES"``, restricted to the documents with
          at least one of the 90 topics that have a training and a test
          document ("ApteMod": 7,770 / 3,019).  A document's text is its
          ``TITLE`` and ``BODY`` (the whole ``TEXT`` when unstructured), SGML
          entities decoded.  Topics are multi-label, so the classes are:
          with ``positive``/``negative`` (topic names or prefixes, an exact
          name matching only itself), label 1 for a document with a positive
          topic and 0 for one with a negative topic; a document with topics on
          both named sides is dropped; with one side only, the other is every
          document without a topic of the named side (``positive="earn"``:
          earn vs rest, 2,877 / 1,087 positives).  Without them, the
          single-topic documents of the ``REUTERS_TOP_TOPICS`` (10) most
          frequent training topics, as classes ``0 .. 7`` (the 8 classes of
          "R8": acq, crude, earn, grain, interest, money-fx, ship, trade;
          5,485 / 2,189 documents).
        * Movie review polarity v2.0 (Pang and Lee, 2004):
          ``txt_sentoken/{neg,pos}``; labels neg=0, pos=1; no split of its own.
        * Enron-Spam, pre-processed (Metsis et al., 2006):
          ``enron1 ... enron6/{ham,spam}/*.txt`` (all parts together), or a
          single part ``{ham,spam}/*.txt``; labels ham=0, spam=1;
          ``Summary.txt`` is ignored; no split of its own.
        * ``label<TAB>text`` files, one document per line (SMS Spam
          Collection, Almeida et al. 2011): a file named ``SMSSpamCollection``
          or ``*.tsv``, or a folder holding one; classes are the distinct
          labels in sorted order (ham=0, spam=1); blank lines are skipped; no
          split of its own.
    subset : {"train", "test", "all"}, default="train"
        Which part to read; ``"all"`` concatenates train then test (or, for
        a corpus without its own split, every document in corpus order).
        For a corpus without its own split, ``"train"``/``"test"`` are the
        parts of a seeded stratified random split (see *Split* below).
    n_features : int, default=2**20
        Number of hashed features (columns), ``1 <= n_features <= 2**31 - 1``.
    ngram_range : tuple (min_n, max_n), default=(1, 2)
        Word n-gram range of the vectoriser.
    positive, negative : str or list of str, optional
        Build a binary problem from classes (the 20 Newsgroups groups,
        ``"neg"``/``"pos"``, ``"ham"``/``"spam"``, the Reuters topics).  Each
        entry is a class name (matching exactly that class) or a prefix
        (``"rec."`` selects the four ``rec.*`` groups); a str may list several
        entries separated by commas.  Documents of ``positive`` classes get
        label 1, those of ``negative`` classes label 0, the others are dropped.
        If only one side is given, the other side is every remaining class
        (one-vs-rest).  When neither is given, every class is kept with labels
        ``0 .. n_classes - 1`` in the order of ``target_names`` (sorted
        class names): 20 classes for 20 Newsgroups, neg=0 / pos=1 for IMDB.
    cache_dir : str or path-like, optional
        Where archives are extracted (see *Cache*).
    test_size : float in (0, 1) or int >= 1, optional
        Corpora without their own split only: the held-out fraction (or
        number of documents) of the split.  Default ``DEFAULT_TEST_SIZE``
        (0.25).  Giving it for a corpus with its own split is an error.
    random_state : int in [0, 2**32 - 1], optional
        Corpora without their own split only: seed of the split.  Default
        ``DEFAULT_RANDOM_STATE`` (0).  Giving it for a corpus with its
        own split is an error.
    n_jobs : int, optional
        Processes that read and hash the documents, in chunks of
        ``HASH_CHUNK`` (2,000) documents (:class:`joblib.Parallel`; files are read
        by the process that hashes them): ``None`` means 1 unless in a
        :func:`joblib.parallel_config` context, -1 all cores, ``-k`` all but
        ``k - 1``.  Hashing is row by row and the chunks are stacked in order, so
        ``X`` is the same for every ``n_jobs``.  Not 0.
    verbose : int, default=0
        If > 0, report progress on stderr: a line when the documents are read,
        then a tqdm bar over the chunks of documents as they are hashed (the
        matrix is the same as without progress).

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_documents, n_features), float64
        Entries in {0, 1} (1 when the hashed n-gram occurs in the document),
        so ``||x_i||_inf <= 1`` for every row, with a bound that does not
        depend on the data.
    y : ndarray of shape (n_documents,), float64
        Class labels (see ``positive``/``negative``).
    target_names : list of str
        Name of each label value: the class names, or for a binary problem
        ``[negative, positive]`` as given (a prefix is shown with ``*``,
        e.g. ``["comp.*", "rec.*"]``; the complement side is ``"rest"``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For an unknown layout or archive type; a truncated or corrupt archive
        (the message names the archive); a malformed ``label<TAB>text`` line
        or Reuters SGML element (file and line named); a corpus with no
        documents; an unknown ``subset`` or one that the corpus does not have
        (including a seeded split that cannot be made because a class has
        fewer than 2 documents); a group name that matches nothing, groups
        on both sides; bad ``n_features``/``ngram_range``/``test_size``/
        ``random_state``/``n_jobs``, or ``test_size``/``random_state`` given for a
        corpus with its own split.
    TypeError
        For arguments of the wrong type.

    Notes
    -----
    **Split.** For a corpus without its own split (review polarity,
    Enron-Spam, SMS Spam), ``subset="train"``/``"test"`` are the two parts of
    :func:`sklearn.model_selection.train_test_split` applied to the document
    indices ``0 .. n - 1`` (corpus order, as ``subset="all"`` returns them),
    with ``test_size`` (default 0.25), ``random_state`` (default 0) and
    ``stratify`` = the class of each document (every class, before
    ``positive``/``negative`` select some: a document is in the same part
    whatever the binary task).  Each part is returned in corpus order.  The
    split depends only on the list of documents, their classes and the two
    parameters, so it is reproducible across runs and machines (for a given
    scikit-learn).

    **Cache.** An archive is extracted once, into
    ``<cache>/corpora/<name>-<sha256[:16]>/``, where ``<cache>`` is
    ``cache_dir`` if given, else ``$DPTOOLKIT_CACHE``, else
    ``$XDG_CACHE_HOME/dptoolkit``, else ``~/.cache/dptoolkit``.  The first
    extraction of an archive prints one line to stderr naming the folder and
    its size (file contents and space on disk); later calls reuse it
    silently.  Delete the folder to reclaim the space.  On disk (ext4, 4 kB
    blocks): IMDB 207 MB (70 MB of files), Enron-Spam 150 MB (51 MB),
    20 Newsgroups 85 MB (36 MB), Reuters-21578 27 MB, review polarity 12 MB,
    SMS Spam 0.5 MB.

    **Privacy.** Hashing is data-independent: the map from n-grams to
    columns is fixed before any document is read, so no vocabulary or other
    statistic of the corpus is released by building it, and the bound
    ``||x_i||_inf <= 1`` is public.  Hash collisions merge n-grams (they never
    produce values above 1 because of ``binary=True``).  The seeded split and
    the Reuters class choice (most frequent topics) depend on the labels; they
    are public benchmark conventions, not part of a private release.

    References
    ----------
    .. [1] A. L. Maas, R. E. Daly, P. T. Pham, D. Huang, A. Y. Ng and C. Potts,
       "Learning Word Vectors for Sentiment Analysis", ACL 2011.
    .. [2] K. Lang, "NewsWeeder: Learning to Filter Netnews", ICML 1995.
    .. [3] K. Weinberger, A. Dasgupta, J. Langford, A. Smola and J. Attenberg,
       "Feature Hashing for Large Scale Multitask Learning", ICML 2009.
    .. [4] D. D. Lewis, "Reuters-21578 text categorization test collection,
       Distribution 1.0", README, 1997; C. Apte, F. Damerau and S. Weiss,
       "Automated Learning of Decision Rules for Text Categorization", ACM
       TOIS 12(3), 1994.
    .. [5] B. Pang and L. Lee, "A Sentimental Education", ACL 2004.
    .. [6] V. Metsis, I. Androutsopoulos and G. Paliouras, "Spam Filtering
       with Naive Bayes -- Which Naive Bayes?", CEAS 2006.
    .. [7] T. A. Almeida, J. M. G. Hidalgo and A. Yamakami, "Contributions to
       the Study of SMS Spam Filtering", DocEng 2011.

    Examples
    --------
    >>> from dptoolkit.datasets import get_data_path, load_text_corpus
    >>> X, y, names = load_text_corpus(                      # doctest: +SKIP
    ...     get_data_path("text/20news-bydate.tar.xz"), "train",
    ...     positive="rec.", negative="comp.")
    >>> X.shape, names                                       # doctest: +SKIP
    ((5325, 1048576), ['comp.*', 'rec.*'])
    >>> X, y, names = load_text_corpus(                      # doctest: +SKIP
    ...     get_data_path("text/smsspamcollection.tar.xz"), "test")
    >>> X.shape, names                                       # doctest: +SKIP
    ((1394, 1048576), ['ham', 'spam'])
    """
    opts = _check_corpus_args(subset, n_features, ngram_range, positive, negative,
                              test_size, random_state)
    n_jobs = check_n_jobs(n_jobs)
    if isinstance(verbose, (bool, np.bool_)) or not isinstance(verbose, numbers.Integral):
        raise TypeError(f"verbose must be an int, got {type(verbose).__name__}")
    archive = Path(path).expanduser()
    cached = None
    if archive.is_file() and archive.name.endswith(_ARCHIVE_SUFFIXES):
        # an archive's content is fixed: its hashed features are cached (a folder or a
        # label<TAB>text file may change, so it is hashed again every time)
        cached = features_cache_path(archive, cache_dir, dict(
            opts, ngram_range=list(opts["ngram_range"])))
        if cached.exists():
            return read_features(cached)
    layout, docs, y, target_names = _corpus_documents(path, cache_dir, verbose, **opts)
    X = hash_documents(docs, opts["n_features"], opts["ngram_range"], n_jobs=n_jobs,
                       verbose=verbose, desc=f"hashing {layout.name} ({opts['subset']})")
    if cached is not None:
        write_features(cached, X, y, target_names)
    return X, y, target_names


def _check_corpus_args(subset, n_features, ngram_range, positive, negative, test_size,
                       random_state):
    """The validated options of a corpus load (the cache key of an archive's features)."""
    if not isinstance(subset, str) or subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {_SUBSETS}, got {subset!r}")
    n_features = check_positive_int(n_features, "n_features")
    if n_features > np.iinfo(np.int32).max:
        raise ValueError(f"n_features must be <= 2**31 - 1, got {n_features}")
    return dict(subset=subset, n_features=n_features,
                ngram_range=_check_ngram_range(ngram_range),
                positive=_as_spec(positive, "positive"),
                negative=_as_spec(negative, "negative"),
                test_size=_check_test_size(test_size),
                random_state=_check_random_state(random_state))


def _corpus_documents(path, cache_dir, verbose, *, subset, n_features, ngram_range,
                      positive, negative, test_size, random_state):
    """``(layout, docs, y, target_names)``: each document as a file (a ``Path``, read
    where it is hashed) or as its text (``label<TAB>text`` files, Reuters SGML)."""
    layout = _find_layout(_resolve(path, cache_dir))
    if verbose > 0:
        import sys

        print(f"dptoolkit: reading the {layout.name} corpus ({subset}) from {layout.root}",
              file=sys.stderr, flush=True)
    if layout.own_split:
        given = [n for n, v in (("test_size", test_size), ("random_state", random_state))
                 if v is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} do not apply: the {layout.name} corpus "
                             f"at {layout.root} has its own train/test split")
    if layout.name == "reuters21578":
        docs, y, target_names = _load_reuters(layout, subset, positive, negative)
    elif layout.own_split:
        docs, y, target_names = _load_own_split_folders(layout, subset, positive, negative)
    else:
        docs, y, target_names = _load_seeded_split(layout, subset, positive, negative,
                                                   test_size, random_state)
    return layout, docs, y, target_names


# ----------------------------------------------------------------------------- hashing

def hashing_vectorizer(n_features, ngram_range):
    """The toolkit's feature map of text: a fixed hash of lower-cased word n-grams to
    ``n_features`` binary columns (no vocabulary: nothing is fitted on the data)."""
    return HashingVectorizer(n_features=n_features, ngram_range=ngram_range, binary=True,
                             norm=None, alternate_sign=False, dtype=np.float64)


def hash_block(docs, n_features, ngram_range):
    """Hashed features of a list of documents (``Path``: the file's bytes as latin-1;
    ``str``: the text), canonical CSR float64 of shape (len(docs), n_features).

    A pure function of its arguments: the in-memory loader, its worker processes and a
    Dask worker all call it, so every path gives the same rows."""
    texts = [_read_text(d) if isinstance(d, Path) else d for d in docs]
    X = sp.csr_array(hashing_vectorizer(n_features, ngram_range).transform(texts))
    X.sum_duplicates()
    return X


#: Most documents in a chunk of the parallel hashing (a chunk is one task of a worker).
HASH_CHUNK = 2000


def hash_documents(docs, n_features, ngram_range, *, n_jobs=None, verbose=0, desc="hashing"):
    """:func:`hash_block` of every document, in chunks, on ``n_jobs`` processes.

    The hashing vectoriser maps each document on its own, so hashing chunks and
    stacking them in order gives the serial matrix exactly, whatever ``n_jobs``.
    Files are read by the process that hashes them (only their names are sent).
    """
    if len(docs) == 0:
        return hash_block(docs, n_features, ngram_range)
    # at most HASH_CHUNK documents per chunk, and about 100 chunks for the progress bar
    size = min(HASH_CHUNK, -(-len(docs) // 100))
    chunks = [docs[i:i + size] for i in range(0, len(docs), size)]
    n_workers = 1 if n_jobs is None else n_jobs
    if n_workers != 1 and len(chunks) > 1:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(hash_block)(c, n_features, ngram_range) for c in chunks)
    else:
        parts = (hash_block(c, n_features, ngram_range) for c in chunks)
    if verbose > 0:
        from tqdm.auto import tqdm

        blocks = []
        with tqdm(total=len(docs), desc=desc, unit="doc") as bar:
            for chunk, part in zip(chunks, parts):
                blocks.append(part)
                bar.update(len(chunk))
    else:
        blocks = list(parts)
    return blocks[0] if len(blocks) == 1 else sp.csr_array(sp.vstack(blocks, format="csr"))
