"""Names for hashed features, from a public word list."""
import numpy as np
import scipy.sparse as sp

__all__ = ["name_hashed_features"]


def name_hashed_features(hashing_vectorizer, words, *, max_names=3):
    """Name the buckets of a hashing vectorizer by the public words hashed into them.

    A hashed model's coefficients index buckets, not words.  Hashing a public
    list of words (e.g. :func:`~dptoolkit.feature_extraction.public_vocabulary`)
    with the same vectorizer tells which of them fall in each bucket: a name that
    uses no private data, so it costs nothing.  A bucket may hold several words
    (collisions) and words absent from the list (rare or private words).

    Parameters
    ----------
    hashing_vectorizer : sklearn.feature_extraction.text.HashingVectorizer
        The (stateless) vectorizer of the model's features.
    words : iterable of str
        Public words or n-grams; each is hashed as a one-term document.
    max_names : int, default=3
        At most this many words are joined (by ``"|"``) in a bucket's name.

    Returns
    -------
    names : ndarray of object, shape (n_features,)
        ``names[j]``: the words of the list in bucket ``j``, in list order, joined
        by ``"|"``; ``""`` for a bucket no word of the list falls into.

    Raises
    ------
    TypeError
        ``hashing_vectorizer`` is not a ``HashingVectorizer``.
    ValueError
        ``words`` is a single str (pass a list), or ``max_names`` < 1.
    """
    from sklearn.feature_extraction.text import HashingVectorizer

    if not isinstance(hashing_vectorizer, HashingVectorizer):
        raise TypeError("hashing_vectorizer must be a sklearn HashingVectorizer, got "
                        f"{type(hashing_vectorizer).__name__}")
    if isinstance(words, str):
        raise ValueError("words must be a list of str (a public word list), got one str")
    if isinstance(max_names, bool) or not isinstance(max_names, int) or max_names < 1:
        raise ValueError(f"max_names must be an integer >= 1, got {max_names!r}")
    from sklearn.feature_extraction import FeatureHasher

    analyzer = hashing_vectorizer.build_analyzer()
    terms = []
    for word in words:
        analysed = analyzer(str(word))
        # the whole term (its longest n-gram), not the sub-grams an n-gram range adds
        terms.append([max(analysed, key=lambda t: len(t.split()))] if analysed else [])
    hasher = FeatureHasher(n_features=hashing_vectorizer.n_features, input_type="string",
                           alternate_sign=False)
    names = [[] for _ in range(hashing_vectorizer.n_features)]
    if terms:
        X = sp.csr_array(hasher.transform(terms))
        for i, term in enumerate(terms):
            for j in X.indices[X.indptr[i]:X.indptr[i + 1]]:
                if len(names[j]) < max_names and term[0] not in names[j]:
                    names[j].append(term[0])
    out = np.empty(len(names), dtype=object)
    out[:] = ["|".join(n) for n in names]
    return out
