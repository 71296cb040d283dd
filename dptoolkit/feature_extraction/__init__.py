"""Private text features: scikit-learn vectorizers whose vocabulary and document
frequencies are released under differential privacy, or named by a public word list.

- :class:`DPTfidfVectorizer`: a private vocabulary (weighted Gaussian partition
  selection, Gopi et al. 2020; Desfontaines et al. 2022) or a public one, and
  optionally private document frequencies (one Gaussian release).  Its privacy
  event composes with the estimators after it
  (:func:`dptoolkit.pipeline.make_pipeline`).
- :func:`public_vocabulary`: a public word list (``wordfreq``), no privacy cost.
- :func:`name_hashed_features`: names the buckets of a hashed model from a public
  word list.
"""
from ._hashing import name_hashed_features
from ._text import DPTfidfVectorizer
from ._vocabulary import public_vocabulary

__all__ = [
    "DPTfidfVectorizer",
    "public_vocabulary",
    "name_hashed_features",
]
