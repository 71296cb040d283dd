r"""A text vectorizer whose vocabulary and document frequencies are private."""
import dataclasses
import functools

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize
from sklearn.utils.validation import check_is_fitted

from .._docstrings import fill_doc
from .._private import PrivateEstimatorMixin
from .._validation import (DELTA_GAUSSIAN, PRIVATE_COMMON, Boolean, Checked, Interval, Options)
from ..accounting import calibrate_parameter
from ..accounting.events import ApproxDPEvent, ComposedEvent, GaussianEvent, NoOpEvent
from ._partition_selection import bounded_contributions, partition_selection_threshold

__all__ = ["DPTfidfVectorizer"]

#: Share of ``delta`` given to the partition selection's threshold (the rest to the
#: Gaussian noise), as in Gopi et al. (2020), Section 5.
VOCABULARY_DELTA_SHARE = 0.5


@dataclasses.dataclass(frozen=True)
class TextParams:
    """The parameters a :class:`DPTfidfVectorizer` fit runs with (its plan's ``params``).

    ``noise_multiplier`` is the standard deviation of the noise over the L2
    sensitivity of each Gaussian release (the same for both); ``threshold`` the
    partition selection's :math:`\\tau`; ``delta_part`` its share of ``delta``.
    """
    epsilon: float
    delta: float
    private_vocabulary: bool
    use_idf: bool
    max_terms: int
    noise_multiplier: float = None
    threshold: float = None
    delta_part: float = None
    n_samples: int = None


def _event(sigma, private_vocabulary, use_idf, delta_part):
    events = []
    if private_vocabulary:
        events += [GaussianEvent(sigma), ApproxDPEvent(0.0, delta_part)]
    if use_idf:
        events.append(GaussianEvent(sigma))
    if not events:
        return NoOpEvent()
    return events[0] if len(events) == 1 else ComposedEvent(events)


@functools.lru_cache(maxsize=64)
def _calibrated_sigma(epsilon, delta, private_vocabulary, use_idf):
    """The smallest noise multiplier whose event the accountant converts to at most
    (epsilon, delta): the toolkit's one calibration routine on the event itself."""
    delta_part = VOCABULARY_DELTA_SHARE * delta if private_vocabulary else 0.0
    return float(calibrate_parameter(
        lambda s: _event(s, private_vocabulary, use_idf, delta_part),
        target_epsilon=epsilon, delta=delta, low=1e-3, high=1e6, increasing=False,
        rtol=1e-9))


def _check_word_list(value):
    if isinstance(value, (str, bytes)):
        raise TypeError("a str is not a word list")
    terms = list(value)
    if not terms or not all(isinstance(t, str) and t for t in terms):
        raise ValueError("not a non-empty list of non-empty str")


def _check_ngram_range(r):
    if (not isinstance(r, tuple) or len(r) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in r)
            or not 1 <= r[0] <= r[1]):
        raise ValueError("not (min_n, max_n)")


def _check_str(value):
    if not isinstance(value, str):
        raise TypeError("not a str")


@fill_doc
class DPTfidfVectorizer(PrivateEstimatorMixin, TransformerMixin, BaseEstimator):
    r"""Bag-of-n-grams features with a private vocabulary and private idf.

    scikit-learn's :class:`~sklearn.feature_extraction.text.TfidfVectorizer`
    learns its vocabulary (every n-gram of the training documents, rare ones
    included) and its inverse document frequencies from the data, outside any
    guarantee.  This vectorizer releases both under differential privacy, or
    takes the vocabulary from a public word list:

    * ``vocabulary="private"``: the vocabulary is learned by weighted Gaussian
      partition selection (Gopi et al. 2020, Section 5; Desfontaines et al.
      2022): each document keeps at most ``max_terms_per_document`` of its
      distinct n-grams (at random), each with weight :math:`1/\sqrt{k}` (``k``
      the number it keeps), the weighted counts of the n-grams present get
      Gaussian noise of standard deviation :math:`\sigma` and those above the
      threshold :math:`\tau` of
      ``partition_selection_threshold`` (at
      ``delta_part = delta / 2``) are released, sorted.
    * a list of str (e.g. :func:`~dptoolkit.feature_extraction.public_vocabulary`):
      the vocabulary is public; it costs nothing.

    With ``use_idf``, the document frequencies of the vocabulary's terms are
    released once with Gaussian noise: each document contributes its binary
    vector of vocabulary terms, at most ``max_terms_per_document`` of them (at
    random), so the vector of counts has L2 sensitivity
    :math:`\sqrt{m}`; the noise has standard deviation :math:`\sigma\sqrt{m}`.
    The noisy counts, clipped to :math:`[0, N]`, give the smoothed idf of
    scikit-learn, :math:`\ln\frac{1+N}{1+\widehat{df}} + 1`, with :math:`N` =
    ``n_samples_public``.  Bounding biases :math:`\widehat{df}` down for terms
    of documents with more than :math:`m` vocabulary terms.

    **Privacy.**  Neighbouring relation: add or remove one document.  The
    vocabulary release is the Gaussian mechanism with noise multiplier
    :math:`\sigma` (L2 sensitivity 1 after weighting) followed by a threshold
    that releases a document's unique n-grams with probability at most
    ``delta_part``; the idf release is the Gaussian mechanism with noise
    multiplier :math:`\sigma` (L2 sensitivity :math:`\sqrt m`).
    ``privacy_event_`` is their composition, ``ComposedEvent([GaussianEvent(sigma),
    ApproxDPEvent(0, delta_part), GaussianEvent(sigma)])`` (the parts that run),
    with :math:`\sigma` the smallest noise multiplier whose event the toolkit's
    accountant converts to at most ``(epsilon, delta)``
    (:func:`~dptoolkit.accounting.calibrate_parameter`; Renyi DP of the
    Gaussian mechanism, Mironov 2017, Proposition 7, converted as Canonne,
    Kamath and Steinke 2020, the ``delta_part`` added by basic composition).
    That conversion is slightly looser than the exact analytic calibration of
    Balle and Wang (2018), and it composes with the events of the estimators
    after it.  ``privacy_spent_`` is the accountant's (epsilon, delta).  A public
    vocabulary without idf releases nothing about the data: the event is a
    ``NoOpEvent`` and the spend (0, 0).  :meth:`transform` is a fixed function of
    the released vocabulary and idf (post-processing).

    Parameters
    ----------
    vocabulary : "private" or iterable of str, default="private"
        Learn the vocabulary privately, or use this public list of terms
        (lower-cased when ``lowercase``; duplicates dropped; terms of more words
        than ``ngram_range`` allows never match).
    epsilon : float or None, default=1.0
        Privacy budget (> 0) of the fit.  None: a non-private fit (every n-gram
        of the documents, exact document frequencies), with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.
    delta : float, default=1e-5
        In (0, 1); with a private vocabulary, half of it bounds the probability
        that a document's unique n-grams are released.
    use_idf : bool, default=False
        Release private document frequencies and weight the features by the
        idf; False: binary or term-frequency features, no idf release.
    max_terms_per_document : int, default=256
        The contribution bound :math:`m`: at most this many distinct n-grams of a
        document count towards the vocabulary and the document frequencies.
    ngram_range : (int, int), default=(1, 1)
        Word n-grams as in scikit-learn.
    binary : bool, default=True
        Features 1/0 (True) or term counts.
    norm : {"l2", "l1"} or None, default="l2"
        Row normalisation of the output.
    lowercase : bool, default=True
    token_pattern : str, default=r"(?u)\b\w\w+\b"
        As scikit-learn's vectorizers.
    n_samples_public : int or None, default=None
        The public number of training documents :math:`N`, for the idf.  None:
        taken from the data with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning` when ``use_idf``.
    accountant : BudgetAccountant or None, default=None
        Checked before any work and charged after the fit (None: the default
        ledger, :func:`~dptoolkit.accounting.default_accountant`).
    random_state : None, int or Generator, default=None
        The noise and the contribution bounding's choices.  None (fresh
        entropy) is the private default; a given seed makes the noise
        reproducible by whoever knows it.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Term to column, columns in sorted term order.
    idf_ : ndarray of shape (n_features,)
        With ``use_idf`` only.
    noise_multiplier_ : float or None
        :math:`\sigma`.
    threshold_ : float or None
        :math:`\tau` of the partition selection.
    privacy_event_ : PrivacyEvent or None
    privacy_spent_ : (float, float) or None

    Raises
    ------
    ValueError
        From :meth:`fit`: ``vocabulary`` neither "private" nor a list of str,
        ``epsilon``, ``delta``, ``max_terms_per_document``, ``ngram_range``,
        ``norm`` or ``n_samples_public`` out of range, documents given as one str.

    See Also
    --------
    dptoolkit.pipeline.make_pipeline : composes this release with the classifier's.

    References
    ----------
    %(refs_partition_selection)s

    B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising. ICML 2018.

    Examples
    --------
    >>> from dptoolkit.feature_extraction import DPTfidfVectorizer, public_vocabulary
    >>> vec = DPTfidfVectorizer(vocabulary=public_vocabulary(1000), epsilon=None)
    """

    _privacy_label = "DPTfidfVectorizer"

    _parameter_constraints = {
        **PRIVATE_COMMON, "delta": DELTA_GAUSSIAN,
        "vocabulary": [Options("private"), Checked(
            _check_word_list, "a non-empty list of non-empty str (a public word list)")],
        "use_idf": [Boolean()], "max_terms_per_document": [Interval("int", 1, None)],
        "ngram_range": [Checked(_check_ngram_range, "a tuple (min_n, max_n) of integers "
                                                    "with 1 <= min_n <= max_n")],
        "binary": [Boolean()], "norm": [None, Options("l2", "l1")], "lowercase": [Boolean()],
        "token_pattern": [None, Checked(_check_str, "a str (a regular expression)")],
    }

    def __init__(self, vocabulary="private", *, epsilon=1.0, delta=1e-5, use_idf=False,
                 max_terms_per_document=256, ngram_range=(1, 1), binary=True, norm="l2",
                 lowercase=True, token_pattern=r"(?u)\b\w\w+\b", n_samples_public=None,
                 accountant=None, random_state=None):
        self.vocabulary = vocabulary
        self.epsilon = epsilon
        self.delta = delta
        self.use_idf = use_idf
        self.max_terms_per_document = max_terms_per_document
        self.ngram_range = ngram_range
        self.binary = binary
        self.norm = norm
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.n_samples_public = n_samples_public
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags

    # ------------------------------------------------------------------ checks
    def _public_terms(self):
        """The public word list (validated by the constraint table), or None."""
        if isinstance(self.vocabulary, str):        # "private"
            return None
        terms = list(self.vocabulary)
        if self.lowercase:
            terms = [t.lower() for t in terms]
        return sorted(dict.fromkeys(terms))

    def _privacy_plan(self, n_samples, n_features=None, classes=None):
        """The fit's plan: the vocabulary and idf releases' event; ``params`` a
        :class:`TextParams`.  Reads only public quantities (``n_samples`` only when
        ``use_idf`` and ``n_samples_public`` is None, with a warning)."""
        epsilon, delta = self._check_budget(optional=True, delta_required=True)
        m = int(self.max_terms_per_document)
        private_vocabulary = self._public_terms() is None
        use_idf = bool(self.use_idf)
        n = None
        if use_idf:
            n = self._n_samples(n_samples, private=epsilon is not None, uses="the idf",
                                relation="add_remove")
        if epsilon is None:
            return self._plan(None, None, TextParams(None, None, private_vocabulary, use_idf,
                                                     m, n_samples=n))
        if not (private_vocabulary or use_idf):
            return self._plan(NoOpEvent(), (0.0, 0.0),
                              TextParams(epsilon, delta, False, False, m, n_samples=n))
        sigma = _calibrated_sigma(epsilon, delta, private_vocabulary, use_idf)
        delta_part = VOCABULARY_DELTA_SHARE * delta if private_vocabulary else None
        tau = (partition_selection_threshold(sigma, delta_part, m) if private_vocabulary
               else None)
        event = _event(sigma, private_vocabulary, use_idf, delta_part)
        return self._plan(event, (epsilon, delta),
                          TextParams(epsilon, delta, private_vocabulary, use_idf, m, sigma,
                                     tau, delta_part, n))

    def _counter(self, vocabulary=None):
        return CountVectorizer(vocabulary=vocabulary, ngram_range=self.ngram_range,
                               lowercase=self.lowercase, token_pattern=self.token_pattern,
                               binary=True, dtype=np.float64)

    @staticmethod
    def _documents(raw_documents, name="raw_documents"):
        if isinstance(raw_documents, (str, bytes)):
            raise ValueError(f"{name} must be an iterable of documents (str), got one "
                             "str; wrap it in a list")
        return list(raw_documents)

    # -------------------------------------------------------------------- fit
    def fit(self, raw_documents, y=None):
        """Learn the vocabulary (privately or from the public list) and the idf.

        Parameters
        ----------
        raw_documents : iterable of str
            The training documents.
        y : None
            Ignored.

        Returns
        -------
        self : DPTfidfVectorizer

        Raises
        ------
        ValueError
            Bad parameters (see the class), ``raw_documents`` one str.
        BudgetExceededError
            The ``accountant`` cannot pay; nothing is computed.
        """
        return super().fit(raw_documents, y)

    def _validate_fit_data(self, raw_documents, y):
        return self._documents(raw_documents), y, None

    def _fit_shape(self, docs):
        return len(docs), None

    def _fit_private(self, docs, y, plan, rng):
        """The vocabulary (partition selection) and idf releases."""
        p = plan.params
        public = self._public_terms()
        if public is None:
            counter = self._counter()                   # local: every n-gram, not released
            try:
                X = counter.fit_transform(docs)
                names = counter.get_feature_names_out()
            except ValueError:                          # no n-gram in any document
                X, names = sp.csr_array((len(docs), 0)), np.empty(0, dtype=object)
            del counter
            if p.epsilon is None:
                vocab = names
            else:
                # every column is an n-gram present in the corpus; the n-grams absent
                # from it have count 0 and are never released (see the threshold)
                H = bounded_contributions(X, p.max_terms, rng, weighted=True).sum(axis=0)
                noisy = np.ravel(H) + rng.normal(0.0, p.noise_multiplier, names.size)
                vocab = names[noisy > p.threshold]
            del X, names
            terms = sorted(str(t) for t in vocab)
        else:
            terms = public
        self.vocabulary_ = {t: i for i, t in enumerate(terms)}
        if p.use_idf:
            X = self._counter(self.vocabulary_).transform(docs) if terms else None
            if p.epsilon is None:
                df = (np.asarray(X.sum(axis=0)).ravel() if X is not None
                      else np.zeros(0))
            else:
                counts = (bounded_contributions(X, p.max_terms, rng, weighted=False)
                          .sum(axis=0) if X is not None else np.zeros(0))
                df = counts + rng.normal(0.0, p.noise_multiplier
                                         * np.sqrt(p.max_terms), len(terms))
            df = np.clip(df, 0.0, p.n_samples)
            self.idf_ = np.log((1.0 + p.n_samples) / (1.0 + df)) + 1.0
        self.noise_multiplier_ = p.noise_multiplier
        self.threshold_ = p.threshold

    def transform(self, raw_documents):
        """Features of documents: a fixed function of the released vocabulary and idf.

        Parameters
        ----------
        raw_documents : iterable of str

        Returns
        -------
        X : scipy.sparse.csr_array of shape (n_documents, n_features)
            Binary (or count) features, times the idf with ``use_idf``, rows
            normalised by ``norm``.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        check_is_fitted(self, "vocabulary_")
        docs = self._documents(raw_documents)
        if not self.vocabulary_:
            return sp.csr_array((len(docs), 0), dtype=np.float64)
        counter = self._counter(self.vocabulary_)
        counter.binary = bool(self.binary)
        X = sp.csr_array(counter.transform(docs))
        if self.use_idf:
            X = sp.csr_array(X @ sp.diags_array(self.idf_))
        if self.norm is not None:
            X = sp.csr_array(normalize(X, norm=self.norm, copy=False))
        return X

    def get_feature_names_out(self, input_features=None):
        """The vocabulary's terms, column by column.

        Parameters
        ----------
        input_features : None
            Ignored (the input is text).

        Returns
        -------
        ndarray of object, shape (n_features,)
        """
        check_is_fitted(self, "vocabulary_")
        out = np.empty(len(self.vocabulary_), dtype=object)
        out[:] = sorted(self.vocabulary_, key=self.vocabulary_.get)
        return out
