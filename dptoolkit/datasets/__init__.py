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
* ``scale_by_max_abs`` derives the scale from the data; it is offered for
  non-private baselines and warns with
  :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.

Modules
-------
- ``_paths``: :func:`get_data_path`.
- ``_libsvm``: :func:`load_libsvm`.
- ``_corpora``: :func:`load_text_corpus`, ``corpus_has_own_split``,
  ``corpus_labels_from_examples``,
  ``is_tsv_corpus`` (archives extracted once by ``_cache``; Reuters-21578 SGML
  read by ``_reuters``).
- ``_dask``: :func:`load_text_corpus_dask`, :func:`load_libsvm_dask` (Dask arrays
  of CSR row blocks, built on the workers by the in-memory loaders' functions).
- ``_bounds``: :func:`clip_rows`, ``scale_by_max_abs``.
- ``_synthetic``: :func:`make_sparse_classification`,
  ``make_correlated_classification``,
  ``make_sparse_classification_blocked`` (large problems, block by block;
  ``KDDA_SHAPE``).
"""
from ._bounds import clip_rows, scale_by_max_abs
from ._corpora import load_text_corpus
from ._dask import load_libsvm_dask, load_text_corpus_dask
from ._corpus_layout import corpus_has_own_split, corpus_labels_from_examples, is_tsv_corpus
from ._libsvm import load_libsvm
from ._paths import get_data_path
from ._synthetic import (KDDA_SHAPE, make_correlated_classification,
                         make_sparse_classification, make_sparse_classification_blocked)

#: The loaders, the public-bound clipping and one synthetic problem.  The corpus-layout
#: helpers (used by the command line), ``scale_by_max_abs`` (a bound read from the
#: data), and the studies' generators (``make_correlated_classification``,
#: ``make_sparse_classification_blocked``, ``KDDA_SHAPE``) are importable but are not
#: part of the API.
__all__ = [
    "load_libsvm",
    "load_text_corpus",
    "load_libsvm_dask",
    "load_text_corpus_dask",
    "get_data_path",
    "clip_rows",
    "make_sparse_classification",
]
