"""Private text features: the vocabulary's partition selection, the idf release,
public vocabularies and names of hashed features."""
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import test_noise_handles as walk
from scipy.stats import norm
from sklearn.feature_extraction.text import HashingVectorizer
from test_noise_handles import recording  # noqa: F401  (the fixture)

from dptoolkit.accounting import BudgetAccountant, epsilon_of_event
from dptoolkit.accounting.events import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianEvent,
    NoOpEvent,
)
from dptoolkit.exceptions import BudgetExceededError, PrivacyLeakWarning
from dptoolkit.feature_extraction import (
    DPTfidfVectorizer,
    name_hashed_features,
    public_vocabulary,
)
from dptoolkit.feature_extraction._partition_selection import (
    bounded_contributions,
    partition_selection_threshold,
)

COMMON = ["good movie", "bad movie", "good plot", "bad acting", "the film was good"]
UNIQUE = "zqa zqb zqc zqd"          # one document, four n-grams no other document has


def _corpus(n_common=40):
    return [COMMON[i % len(COMMON)] for i in range(n_common)] + [UNIQUE]


# ------------------------------------------------------------------ threshold
def test_threshold_with_one_term_is_the_per_ngram_rule():
    sigma, delta = 3.0, 1e-4
    assert partition_selection_threshold(sigma, delta, 1) == pytest.approx(
        1.0 + sigma * norm.isf(delta), rel=1e-12)


def test_threshold_bounds_the_release_of_every_document_length():
    sigma, delta, m = 2.0, 1e-3, 50
    tau = partition_selection_threshold(sigma, delta, m)
    for k in range(1, m + 1):
        p_none = norm.cdf((tau - 1.0 / np.sqrt(k)) / sigma) ** k
        assert 1.0 - p_none <= delta * (1 + 1e-9)
    # and it is the smallest such threshold: some k attains the bound
    assert any(1.0 - norm.cdf((tau - 1e-6 - 1.0 / np.sqrt(k)) / sigma) ** k > delta
               for k in range(1, m + 1))


@pytest.mark.parametrize("kwargs, name", [
    (dict(noise_multiplier=0.0, delta=0.1, max_terms_per_document=3), "noise_multiplier"),
    (dict(noise_multiplier=1.0, delta=1.0, max_terms_per_document=3), "delta"),
    (dict(noise_multiplier=1.0, delta=0.1, max_terms_per_document=0), "max_terms_per_document"),
])
def test_threshold_bad_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        partition_selection_threshold(**kwargs)


# ------------------------------------------------------- contribution bounding
def test_bounded_contributions_keep_at_most_m_terms_and_unit_norm():
    rng = np.random.default_rng(0)
    X = sp.random(50, 200, density=0.2, random_state=1, format="csr")
    X.data[:] = 1.0
    W = bounded_contributions(X, 7, rng, weighted=True)
    B = bounded_contributions(X, 7, rng, weighted=False)
    assert np.diff(W.indptr).max() <= 7
    assert np.all(np.sqrt(W.multiply(W).sum(axis=1)) <= 1.0 + 1e-12)
    assert np.all(np.sqrt(B.multiply(B).sum(axis=1)) <= np.sqrt(7) + 1e-12)
    # only the document's own terms
    assert (W.astype(bool) > X.astype(bool)).nnz == 0


# ------------------------------------------------------ the vocabulary release
def test_a_document_s_unique_ngrams_are_released_with_probability_at_most_delta_part():
    """Neighbour audit: D (the common documents) and D' = D + one document whose 4
    n-grams appear nowhere else.  From D they can never be released; from D' the
    probability that any is released must be at most delta_part = delta / 2.
    2,000 seeded fits; with p <= 0.1 the count exceeds 200 + 4 sd (254) with
    probability below 1e-4 (the false-failure rate).  A unit-weighted count with
    the per-n-gram threshold 1 + sigma * Phi^-1(1 - delta_part) releases one of the
    4 with probability 1 - 0.9^4 = 0.34 and fails."""
    docs = _corpus()
    unique = set(UNIQUE.split())
    delta = 0.2
    hits, n_trials = 0, 2000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for seed in range(n_trials):
            vec = DPTfidfVectorizer(epsilon=1.0, delta=delta, max_terms_per_document=4,
                                    accountant=BudgetAccountant(), random_state=seed)
            vec.fit(docs)
            hits += bool(unique & set(vec.vocabulary_))
    assert hits <= n_trials * delta / 2 + 4 * np.sqrt(n_trials * 0.1 * 0.9)
    # without the document, none is ever a candidate
    vec = DPTfidfVectorizer(epsilon=1.0, delta=delta, max_terms_per_document=4,
                            accountant=BudgetAccountant(), random_state=0).fit(docs[:-1])
    assert not unique & set(vec.vocabulary_)


def test_private_vocabulary_event_and_spend():
    acc = BudgetAccountant()
    vec = DPTfidfVectorizer(epsilon=1.0, delta=1e-5, accountant=acc, random_state=0)
    vec.fit(_corpus(400))
    sigma = vec.noise_multiplier_
    assert vec.privacy_event_ == ComposedEvent([GaussianEvent(sigma), ApproxDPEvent(0.0, 5e-6)])
    eps, delta = vec.privacy_spent_
    assert delta == 1e-5 and eps <= 1.0 + 1e-9
    assert epsilon_of_event(vec.privacy_event_, 1e-5) == pytest.approx(eps)
    assert vec.threshold_ == pytest.approx(partition_selection_threshold(sigma, 5e-6, 256))
    assert acc.spent[0] == pytest.approx(eps)
    # the frequent n-grams of 400 documents pass; the names are the columns
    names = list(vec.get_feature_names_out())
    assert {"good", "movie", "bad"} <= set(names) and names == sorted(names)
    assert vec.transform(["good movie"]).shape == (1, len(names))


def test_document_frequency_release_event_and_sensitivity():
    """The idf release: one Gaussian of the bounded document counts with standard
    deviation sigma * sqrt(m).  1,000 documents each with the 3 vocabulary words,
    m = 4 (no bounding), 200 seeded fits, 3 words: the sample standard deviation
    of 600 draws is within 10% of sigma * sqrt(4) except with probability below
    1e-4 (4.9 of its standard errors); noise at sigma would fail."""
    words = ["alpha", "beta", "gamma"]
    docs = ["alpha beta gamma filler"] * 1000
    draws = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for seed in range(200):
            vec = DPTfidfVectorizer(words, epsilon=1.0, delta=1e-5, use_idf=True,
                                    max_terms_per_document=4, n_samples_public=2000,
                                    accountant=BudgetAccountant(), random_state=seed)
            vec.fit(docs)
            df = 2001.0 / np.exp(vec.idf_ - 1.0) - 1.0
            draws.extend(df - 1000.0)
    sigma = vec.noise_multiplier_
    assert vec.privacy_event_ == GaussianEvent(sigma)
    assert epsilon_of_event(GaussianEvent(sigma), 1e-5) <= 1.0 + 1e-9
    assert np.std(draws) == pytest.approx(sigma * 2.0, rel=0.10)
    assert abs(np.mean(draws)) < 4 * sigma * 2.0 / np.sqrt(len(draws))


def test_public_vocabulary_without_idf_costs_nothing():
    vec = DPTfidfVectorizer(["good", "bad", "Movie"], epsilon=1.0,
                            accountant=BudgetAccountant()).fit(_corpus())
    assert vec.privacy_event_ == NoOpEvent() and vec.privacy_spent_ == (0.0, 0.0)
    assert list(vec.get_feature_names_out()) == ["bad", "good", "movie"]
    X = vec.transform(["good good movie", "nothing here"])
    assert X.shape == (2, 3) and X[[1]].nnz == 0
    assert np.allclose(X[[0]].toarray(), [[0, 1, 1]] / np.sqrt(2))


def test_explicit_non_private_fit_keeps_every_ngram_silently():
    """epsilon=None is the user's explicit choice (the default is private): no
    warning, every n-gram kept, nothing spent."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        vec = DPTfidfVectorizer(epsilon=None).fit(_corpus())
    assert set(UNIQUE.split()) <= set(vec.vocabulary_) and vec.privacy_spent_ is None


def test_idf_without_public_n_warns():
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public"):
        DPTfidfVectorizer(["good"], epsilon=1.0, use_idf=True,
                          accountant=BudgetAccountant(), random_state=0).fit(_corpus())


def test_budget_exceeded_before_any_work():
    vec = DPTfidfVectorizer(epsilon=1.0, accountant=BudgetAccountant(epsilon=0.5, delta=1e-3))
    with pytest.raises(BudgetExceededError):
        vec.fit(_corpus())
    assert not hasattr(vec, "vocabulary_")


@pytest.mark.parametrize("kwargs, name", [
    (dict(vocabulary="public"), "vocabulary"),
    (dict(vocabulary=[]), "vocabulary"),
    (dict(vocabulary=[1, 2]), "vocabulary"),
    (dict(max_terms_per_document=0), "max_terms_per_document"),
    (dict(ngram_range=(2, 1)), "ngram_range"),
    (dict(norm="l3"), "norm"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=1.5), "delta"),
    (dict(use_idf="yes"), "use_idf"),
    (dict(use_idf=True, n_samples_public=0), "n_samples_public"),
])
def test_bad_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        DPTfidfVectorizer(**kwargs).fit(_corpus())


def test_one_str_is_not_a_corpus():
    with pytest.raises(ValueError, match="raw_documents"):
        DPTfidfVectorizer(epsilon=1.0, accountant=BudgetAccountant()).fit("good movie")


# ------------------------------------------------------- public word lists
def test_public_vocabulary_is_a_word_list():
    words = public_vocabulary(500)
    assert len(words) == len(set(words)) <= 500 and "the" in words


def test_public_vocabulary_falls_back_without_wordfreq(monkeypatch):
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    with pytest.warns(UserWarning, match="wordfreq is not installed"):
        words = public_vocabulary(50)
    assert len(words) == 50 and words[0] == "the"


@pytest.mark.parametrize("kwargs, name", [(dict(n_words=0), "n_words"),
                                          (dict(lang=""), "lang")])
def test_public_vocabulary_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        public_vocabulary(**kwargs)


def test_hashed_buckets_are_named_by_the_public_words_in_them():
    hv = HashingVectorizer(n_features=2**12, ngram_range=(1, 2), alternate_sign=False,
                           norm=None)
    names = name_hashed_features(hv, ["good", "bad movie", "The"])
    X = hv.transform(["good", "the"]).tocsr()
    assert names[X.indices[0]] == "good" and names[X.indices[1]] == "the"
    bigram = hv.transform(["bad movie"]).tocsr().indices
    assert "bad movie" in set(names[bigram])
    assert names.shape == (2**12,) and (names == "").sum() == 2**12 - 3


def test_name_hashed_features_bad_input():
    with pytest.raises(TypeError, match="hashing_vectorizer"):
        name_hashed_features(object(), ["a"])
    with pytest.raises(ValueError, match="words"):
        name_hashed_features(HashingVectorizer(), "good")
    with pytest.raises(ValueError, match="max_names"):
        name_hashed_features(HashingVectorizer(), ["good"], max_names=0)


# ------------------------------------------------------------- noise handles
def test_fitted_vectorizer_and_pipeline_hold_no_noise_handle(recording):
    """As tests/test_noise_handles.py for the numeric estimators: a private fit with
    random_state=None leaves no generator, seed or drawn integer on the fitted
    vectorizer or on a pipeline holding it."""
    from dptoolkit.linear_model import DPNBLogisticClassifier
    from dptoolkit.pipeline import make_pipeline

    docs = _corpus(400)
    y = np.arange(len(docs)) % 2
    vec = DPTfidfVectorizer(epsilon=1.0, use_idf=True, n_samples_public=len(docs),
                            accountant=BudgetAccountant())
    pipe = make_pipeline(vec, DPNBLogisticClassifier(
        n_samples_public=len(docs), classes=[0, 1], accountant=BudgetAccountant()),
        epsilon=1.0, delta=1e-5)
    assert walk._walk(pipe, set()) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(docs, y)
    assert pipe.privacy_spent_ is not None and vec.vocabulary_
    assert walk._walk(vec, recording) == []
    assert walk._walk(pipe, recording) == []
