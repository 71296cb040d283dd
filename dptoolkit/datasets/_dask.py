"""Loaders to Dask arrays of CSR row blocks: :func:`load_text_corpus_dask`,
:func:`load_libsvm_dask`.

The blocks are built on the workers by the functions that build the in-memory data
(:func:`~dptoolkit.datasets._corpora.hash_block`,
:func:`~dptoolkit.datasets.load_libsvm`), so ``X.compute()`` is the matrix of
:func:`~dptoolkit.datasets.load_text_corpus` (or of the shards' concatenation) entry
for entry, and a model fitted on either predicts on the other.  Dask is imported only
here, when one of these loaders is called (``pip install dptoolkit[dask]``).
"""
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._validation import check_positive_int
from ._corpora import _check_corpus_args, _corpus_documents, hash_block
from ._libsvm import _binary_labels, _check_n_features, load_libsvm

__all__ = ["load_text_corpus_dask", "load_libsvm_dask"]

#: Default documents per block of :func:`load_text_corpus_dask`.
DEFAULT_DOCUMENTS_PER_BLOCK = 10_000


def _import_dask():
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - dask is installed in the test env
        raise ImportError("the Dask loaders need dask: pip install 'dptoolkit[dask]'") \
            from exc
    return dask, da


def _meta():
    return sp.csr_matrix((0, 0), dtype=np.float64)


def _as_matrix(X):
    """A block as ``scipy.sparse.csr_matrix`` (Dask's sparse meta type; the values and
    index arrays are shared, not copied)."""
    return sp.csr_matrix(X)


def _text_block(docs, n_features, ngram_range):
    return _as_matrix(hash_block(docs, n_features, ngram_range))


def load_text_corpus_dask(path, subset="train", n_features=2**20, ngram_range=(1, 2), *,
                          positive=None, negative=None, cache_dir=None, test_size=None,
                          random_state=None, documents_per_block=DEFAULT_DOCUMENTS_PER_BLOCK):
    """Load a text corpus as a Dask array of hashed CSR row blocks.

    The distributed counterpart of :func:`~dptoolkit.datasets.load_text_corpus`:
    the client lists the documents and their labels (file names and class
    folders; nothing is read but the names, except for the ``label<TAB>text`` and
    Reuters-21578 layouts, whose texts live in one file and travel in the task
    graph), and each block of ``documents_per_block`` documents is read and hashed
    on a worker, with the same fixed hash function (Weinberger et al. 2009) and the
    same options.  ``X.compute()`` equals the in-memory loader's ``X`` entry for
    entry (same rows in the same order, same columns), so a model fitted on a
    cluster predicts on data loaded in memory, and back.

    Parameters
    ----------
    path : str or path-like
        A corpus folder, archive or ``label<TAB>text`` file, as
        :func:`~dptoolkit.datasets.load_text_corpus` takes (the layouts there:
        one document per file, one sub-folder per class).  An archive is
        extracted once on the client (into the cache folder); the workers read the
        documents' files, so the folder must be visible to every worker at the
        same path (a shared file system) when the workers are on other machines.
    subset, n_features, ngram_range, positive, negative, cache_dir, test_size, random_state
        As :func:`~dptoolkit.datasets.load_text_corpus`.
    documents_per_block : int, default=10000
        Documents per block (the last block may be smaller), >= 1.  Block sizes
        are public (they derive from the number of documents, which a private fit
        takes as the public ``n_samples_public``, never from the blocks).

    Returns
    -------
    X : dask.array.Array of shape (n_documents, n_features), float64
        Chunked along rows only; each block a ``scipy.sparse.csr_matrix`` with
        entries in {0, 1} (canonical: sorted indices, no duplicates).
    y : dask.array.Array of shape (n_documents,), float64
        The labels, with X's row chunks.
    target_names : list of str
        As :func:`~dptoolkit.datasets.load_text_corpus`.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        As :func:`~dptoolkit.datasets.load_text_corpus` (unknown layout, no
        documents, bad options), and ``documents_per_block`` < 1.
    TypeError
        Arguments of the wrong type.
    ImportError
        If Dask is not installed.

    See Also
    --------
    load_libsvm_dask : LIBSVM shards as a Dask array.
    dptoolkit.distributed : the per-block sums private estimators compute on it.

    Notes
    -----
    Unlike :func:`~dptoolkit.datasets.load_text_corpus`, hashed features of an
    archive are not cached: the blocks are computed where they are used.

    References
    ----------
    K. Weinberger, A. Dasgupta, J. Langford, A. Smola and J. Attenberg, "Feature
    Hashing for Large Scale Multitask Learning", ICML 2009.

    Examples
    --------
    >>> from dptoolkit.datasets import get_data_path, load_text_corpus_dask
    >>> X, y, names = load_text_corpus_dask(                 # doctest: +SKIP
    ...     get_data_path("text/20news-bydate.tar.xz"), "train",
    ...     positive="rec.", negative="comp.", documents_per_block=2000)
    >>> X.numblocks, X.shape                                 # doctest: +SKIP
    ((3, 1), (5325, 1048576))
    """
    opts = _check_corpus_args(subset, n_features, ngram_range, positive, negative,
                              test_size, random_state)
    size = check_positive_int(documents_per_block, "documents_per_block")
    dask, da = _import_dask()
    _, docs, y, target_names = _corpus_documents(path, cache_dir, 0, **opts)
    n_features, ngram_range = opts["n_features"], opts["ngram_range"]
    starts = range(0, len(docs), size)
    blocks = [da.from_delayed(
        dask.delayed(_text_block, pure=True)(docs[a:a + size], n_features, ngram_range),
        shape=(len(docs[a:a + size]), n_features), dtype=np.float64, meta=_meta())
        for a in starts]
    X = da.concatenate(blocks, axis=0)
    y = da.from_array(np.asarray(y, dtype=np.float64), chunks=(X.chunks[0],))
    return X, y, target_names


def _shard_summary(path, n_features):
    """``(n_rows, labels)`` of a shard, raising the in-memory reader's errors."""
    X, y = load_libsvm(path, n_features=n_features, binary_labels=False)
    return X.shape[0], np.unique(y)


def _shard_block(path, n_features, mapping):
    X, y = load_libsvm(path, n_features=n_features, binary_labels=False)
    if mapping is not None:
        y = (y == mapping).astype(np.float64)
    return _as_matrix(X), y


def load_libsvm_dask(shards, n_features, *, binary_labels=True):
    """Load LIBSVM/SVMlight shards as a Dask array, one CSR row block per shard.

    Each shard is read on a worker by :func:`~dptoolkit.datasets.load_libsvm`, so
    the array equals the in-memory load of the shards' concatenation (rows in
    shard order).  The shards are read twice: once when loading, on the workers,
    to count their rows (the chunk sizes), check every line against
    ``n_features`` and collect the label set, so that a bad shard is reported
    now, by name; then block by block when the array is used.

    Parameters
    ----------
    shards : sequence of str or path-like
        LIBSVM files (plain, ``.gz`` or ``.bz2``), at least one, each holding at
        least one example; paths as the workers see them (a shared file system
        when the workers are on other machines).
    n_features : int
        Number of columns, in [1, 2**31 - 1]: required (shards need not reach the
        top feature index, and every shard must agree).
    binary_labels : bool, default=True
        When the shards hold exactly two distinct labels *together*, map them to
        {0, 1} (the larger to 1) in every shard, as
        :func:`~dptoolkit.datasets.load_libsvm` does for one file; other label
        sets are kept.

    Returns
    -------
    X : dask.array.Array of shape (n_samples, n_features), float64
        Chunked along rows only, one ``scipy.sparse.csr_matrix`` block per shard.
    y : dask.array.Array of shape (n_samples,), float64
        With X's row chunks.

    Raises
    ------
    FileNotFoundError
        A shard that does not exist (named).
    ValueError
        Naming the shard (and line): an empty shard, a feature index above
        ``n_features``, a line that is not LIBSVM, non-finite values; no shards;
        ``n_features`` out of range.
    TypeError
        ``shards`` not a sequence of paths, ``n_features`` not an int,
        ``binary_labels`` not a bool.
    ImportError
        If Dask is not installed.

    See Also
    --------
    load_text_corpus_dask : text corpora as a Dask array.

    Examples
    --------
    >>> from dptoolkit.datasets import load_libsvm_dask
    >>> X, y = load_libsvm_dask(["part-0.svm", "part-1.svm"],  # doctest: +SKIP
    ...                         n_features=123)
    """
    if isinstance(shards, (str, os.PathLike)) or not hasattr(shards, "__len__"):
        raise TypeError("shards must be a sequence of paths (one per shard), got "
                        f"{type(shards).__name__}")
    if len(shards) == 0:
        raise ValueError("shards must name at least one LIBSVM file, got none")
    for s in shards:
        if not isinstance(s, (str, os.PathLike)):
            raise TypeError(f"shards must hold str or path-like entries, got "
                            f"{type(s).__name__}")
    if n_features is None:
        raise ValueError("n_features is required for sharded LIBSVM data (every shard "
                         "must have the same columns)")
    n_features = _check_n_features(n_features)
    if not isinstance(binary_labels, (bool, np.bool_)):
        raise TypeError(f"binary_labels must be a bool, got {type(binary_labels).__name__}")
    shards = [str(Path(s).expanduser()) for s in shards]
    dask, da = _import_dask()
    summaries = dask.compute(*[dask.delayed(_shard_summary, pure=True)(s, n_features)
                               for s in shards])
    labels = np.unique(np.concatenate([lab for _, lab in summaries]))
    mapping = None
    if binary_labels and labels.size == 2:
        _, classes = _binary_labels(labels)
        mapping = classes[1]
    xs, ys = [], []
    for s, (n_rows, _) in zip(shards, summaries):
        part = dask.delayed(_shard_block, pure=True, nout=2)(s, n_features, mapping)
        xs.append(da.from_delayed(part[0], shape=(n_rows, n_features), dtype=np.float64,
                                  meta=_meta()))
        ys.append(da.from_delayed(part[1], shape=(n_rows,), dtype=np.float64,
                                  meta=np.empty(0)))
    return da.concatenate(xs, axis=0), da.concatenate(ys, axis=0)
