"""dptoolkit.pipeline: one guarantee for a pipeline, and a warning for a step that
learns from the data without privacy."""
import warnings

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from dptoolkit.accounting import BudgetAccountant, epsilon_of_event
from dptoolkit.accounting.events import ComposedEvent
from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.feature_extraction import DPTfidfVectorizer
from dptoolkit.linear_model import DPNBLogisticClassifier
from dptoolkit.pipeline import PrivatePipeline, make_pipeline

N = 1200


def _documents(n=N, seed=0):
    rng = np.random.default_rng(seed)
    pos, neg = "good great fun excellent lovely".split(), "bad awful boring dull poor".split()
    common = "the movie film plot actor scene".split()
    y = np.arange(n) % 2
    docs = [" ".join(list(rng.choice(pos if c else neg, 3)) + list(rng.choice(common, 5)))
            for c in y]
    return docs, y


def _model(**kw):
    kw.setdefault("epsilon", 1.0)
    return DPNBLogisticClassifier(n_samples_public=N, classes=[0, 1],
                                  accountant=BudgetAccountant(), **kw)


def _leak_messages(record):
    return [str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning)
            and "learns from the training data" in str(w.message)]


def test_a_tfidf_vectorizer_step_warns_by_name_and_voids_the_guarantee():
    docs, y = _documents()
    pipe = make_pipeline(TfidfVectorizer(), _model())
    assert isinstance(pipe, Pipeline)
    with pytest.warns(PrivacyLeakWarning, match=r"'tfidfvectorizer' \(TfidfVectorizer\)"):
        pipe.fit(docs, y)
    assert pipe.leaking_steps_ == ["tfidfvectorizer"] and pipe.privacy_spent_ is None


def test_a_standard_scaler_step_warns_by_name():
    rng = np.random.default_rng(0)
    X, y = np.abs(rng.normal(size=(N, 4))), np.arange(N) % 2
    with pytest.warns(PrivacyLeakWarning, match="StandardScaler"):
        make_pipeline(StandardScaler(with_mean=False), _model()).fit(X, y)


def test_stateless_steps_do_not_warn():
    docs, y = _documents()
    pipe = make_pipeline(HashingVectorizer(n_features=2**10, alternate_sign=False, norm=None),
                         Normalizer(), _model(random_state=0))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe.fit(docs, y)
    assert not _leak_messages(record)
    assert pipe.leaking_steps_ == [] and pipe.privacy_spent_ == pipe[-1].privacy_spent_


def test_private_vectorizer_and_classifier_state_one_guarantee():
    docs, y = _documents()
    vec = DPTfidfVectorizer(accountant=BudgetAccountant(), random_state=0)
    pipe = make_pipeline(vec, _model(epsilon=None, random_state=0), epsilon=1.0, delta=1e-5)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe.fit(docs, y)
    assert not _leak_messages(record)
    eps, delta = pipe.privacy_spent_
    assert eps <= 1.0 + 1e-9 and eps > 0.99 and delta == pytest.approx(1e-5)
    assert pipe.privacy_event_ == ComposedEvent([vec.privacy_event_, pipe[-1].privacy_event_])
    assert epsilon_of_event(pipe.privacy_event_, delta) == pytest.approx(eps)
    # Renyi composition gives each step more than half the budget (basic would not)
    assert pipe.budget_scale_ > 1.0
    (_, eps_vec, delta_vec), (_, eps_model, delta_model) = pipe.budget_split_
    assert eps_vec == pytest.approx(eps_model) and eps_vec > 0.5
    assert delta_vec == delta_model == pytest.approx(5e-6)
    assert vec.privacy_spent_[0] <= eps_vec + 1e-9
    # the steps' parameters are as given (a fit changes no parameter)
    assert vec.epsilon == 1.0 and pipe[-1].epsilon is None
    assert [name for name, _ in pipe.privacy_steps_] == ["dptfidfvectorizer",
                                                         "dpnblogisticclassifier"]
    assert pipe.score(docs, y) > 0.9


def test_without_a_total_each_step_keeps_its_budget_and_the_sum_bounds_it():
    docs, y = _documents()
    vec = DPTfidfVectorizer(epsilon=0.5, delta=5e-6, accountant=BudgetAccountant(),
                            random_state=0)
    pipe = make_pipeline(vec, _model(epsilon=0.5, delta=5e-6, random_state=0)).fit(docs, y)
    assert pipe.budget_scale_ is None and vec.epsilon == 0.5
    assert pipe.budget_split_ == [("dptfidfvectorizer", 0.5, 5e-6),
                                  ("dpnblogisticclassifier", 0.5, 5e-6)]
    eps, delta = pipe.privacy_spent_
    assert eps <= vec.privacy_spent_[0] + pipe[-1].privacy_spent_[0] + 1e-12
    assert delta == pytest.approx(1e-5)


def test_feature_names_through_the_pipeline_read_the_model_word_by_word():
    docs, y = _documents()
    pipe = make_pipeline(DPTfidfVectorizer(accountant=BudgetAccountant(), random_state=0),
                         _model(epsilon=None, random_state=0), epsilon=2.0, delta=1e-5)
    pipe.fit(docs, y)
    names = pipe[:-1].get_feature_names_out()
    assert list(names) == sorted(pipe[0].vocabulary_)
    coef = np.ravel(pipe[-1].coef_)
    assert coef.shape == names.shape
    top = set(names[np.argsort(coef)[-3:]])
    assert top <= set("good great fun excellent lovely".split())


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(delta=1e-5), "delta is set but epsilon is None"),
])
def test_bad_total_budget_names_the_argument(kwargs, match):
    docs, y = _documents(100)
    with pytest.raises(ValueError, match=match):
        make_pipeline(DPTfidfVectorizer(), _model(), **kwargs).fit(docs, y)


def test_a_total_budget_needs_a_private_step():
    docs, y = _documents(100)
    with pytest.raises(ValueError, match="no step is private"):
        PrivatePipeline([("hash", HashingVectorizer()), ("norm", Normalizer())],
                        epsilon=1.0).fit(docs, y)


def test_a_fitted_private_pipeline_round_trips_through_save_model(tmp_path):
    from dptoolkit import load_model, save_model

    docs, y = _documents()
    # no accountant objects (a BudgetAccountant is not a type a model file trusts)
    pipe = make_pipeline(DPTfidfVectorizer(), DPNBLogisticClassifier(
        n_samples_public=N, classes=[0, 1]), epsilon=1.0, delta=1e-5).fit(docs, y)
    path = save_model(pipe, tmp_path / "pipe.skops")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # version note
        loaded = load_model(path)
    assert loaded.privacy_spent_ == pipe.privacy_spent_
    assert loaded.privacy_event_ == pipe.privacy_event_
    assert list(loaded[:-1].get_feature_names_out()) == list(pipe[:-1].get_feature_names_out())
    assert np.array_equal(loaded.predict(docs[:50]), pipe.predict(docs[:50]))


def test_a_plan_that_depends_on_the_width_gets_the_basic_split():
    """DPSIS with k="auto" plans a different event for each number of features, which
    a step after another cannot know before the fit: equal shares (c = 1), and the
    pipeline still states the composition, at most the total by basic composition."""
    from dptoolkit.selection import DPSIS

    rng = np.random.default_rng(0)
    X = (rng.random((N, 50)) < 0.3).astype(float)
    y = (X[:, 0] + X[:, 1] > 0.5).astype(int)
    pipe = make_pipeline(DPSIS(k="auto", y_bounds=(0, 1), n_samples_public=N,
                               accountant=BudgetAccountant()),
                         _model(epsilon=None), epsilon=1.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    assert pipe.budget_scale_ == 1.0
    assert [e for _, e, _ in pipe.budget_split_] == [0.5, 0.5]
    assert pipe.privacy_spent_[0] <= 1.0 + 1e-9
