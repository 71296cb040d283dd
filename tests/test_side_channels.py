"""Side channels around the mechanisms: the declared label set, data-dependent
messages (one bit, never a count), warnings of non-private solvers inside a
mechanism, and the documentation of what stays outside the guarantee.

The neighbouring-dataset checks fit an estimator on D and on D' (one row added,
chosen to trigger one path) with the same seed and compare (a) the set of
warnings, type and text, and (b) the fitted public attributes other than the
released model.  They are deterministic (fixed seeds, no statistical test: a
false-failure rate of 0).
"""
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit._private import (
    DATA_DEPENDENT_NOTE,
    PrivateEstimatorMixin,
    check_classes,
    data_dependent_error,
    data_dependent_message,
    data_dependent_warning,
)
from dptoolkit.exceptions import DataClippedWarning, PrivacyLeakWarning
from dptoolkit.model_selection import PrivateHyperparameterSearch
from dptoolkit.selection import DPSIS, PrivateSelectThenFit
from dptoolkit.linear_model import (
    DPNBLogisticClassifier,
    DPSCDClassifier,
    DPSGDClassifier,
    FrankWolfeLassoClassifier,
    SparsifiedLassoClassifier,
)


# --------------------------------------------------------------------------- builder
def test_data_dependent_message_carries_the_note():
    msg = data_dependent_message("X has entries outside [-1, 1]")
    assert msg.startswith("X has entries outside [-1, 1]") and msg.endswith(DATA_DEPENDENT_NOTE)
    with pytest.warns(DataClippedWarning, match=re.escape(DATA_DEPENDENT_NOTE)):
        data_dependent_warning("something was clipped", DataClippedWarning)
    err = data_dependent_error("y has labels outside classes", ValueError)
    assert isinstance(err, ValueError) and DATA_DEPENDENT_NOTE in str(err)
    assert isinstance(data_dependent_error("x", RuntimeError), RuntimeError)


@pytest.mark.parametrize("bad, exc", [("", TypeError), (None, TypeError)])
def test_data_dependent_message_bad_input(bad, exc):
    with pytest.raises(exc, match="what"):
        data_dependent_message(bad)


def test_data_dependent_warning_bad_category():
    with pytest.raises(TypeError, match="category"):
        data_dependent_warning("x", ValueError)


# --------------------------------------------------------------------------- classes
@pytest.mark.parametrize("classes, expected", [
    ([1, 0], [0, 1]), (["b", "a", "c"], ["a", "b", "c"]), ((-1, 1), [-1, 1]),
    (np.array([2.0, 1.0]), [1.0, 2.0])])
def test_check_classes_sorts(classes, expected):
    np.testing.assert_array_equal(check_classes(classes), expected)


@pytest.mark.parametrize("bad, exc, match", [
    ("ab", TypeError, "classes"),
    ([[0, 1]], ValueError, "classes must be a 1-D"),
    ([0], ValueError, "at least two"),
    ([], ValueError, "at least two"),
    ([0, 1, 1], ValueError, "distinct"),
    ([0.0, np.nan], ValueError, "finite"),
    ([0, "a"], TypeError, "sortable|classes"),
    (np.array([[1], 2], dtype=object), TypeError, "hashable"),
])
def test_check_classes_bad_input(bad, exc, match):
    with pytest.raises(exc, match=match):
        check_classes(bad)


class _Est(PrivateEstimatorMixin):
    def __init__(self, classes=None):
        self.classes = classes


def test_resolve_classes_declared_never_reads_the_label_set():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _Est(classes=[1, 0])._resolve_classes(np.array([0, 0, 0]), private=True)
    np.testing.assert_array_equal(got, [0, 1])      # the positive class is absent: fine
    with pytest.raises(ValueError, match="classes") as info:
        _Est(classes=[0, 1])._resolve_classes(np.array([0, 1, 2]), private=True)
    assert "2" not in str(info.value).split("classes=")[0]
    assert DATA_DEPENDENT_NOTE in str(info.value)
    with pytest.raises(ValueError, match="exactly 2 labels"):
        _Est(classes=[0, 1, 2])._resolve_classes(np.array([0, 1]), private=True, n_classes=2)


def test_resolve_classes_from_the_data_warns_only_when_private():
    y = np.array(["a", "b", "a"])
    with pytest.warns(PrivacyLeakWarning, match="label set was read from the data") as rec:
        got = _Est()._resolve_classes(y, private=True)
    np.testing.assert_array_equal(got, ["a", "b"])
    text = str(rec[0].message)
    assert not re.search(r"\d", text) and "'a'" not in text and "'b'" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _Est()._resolve_classes(y, private=False)


# ------------------------------------------------------- classes on every estimator
def _binary_data(n=80, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.3).astype(float)
    y = (X[:, 0] + 0.5 * rng.random(n) > 0.6).astype(int)
    return sp.csr_array(X), y


_PRIVATE_CLASSIFIERS = {
    "fw": lambda **kw: FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=20,
                                                 n_samples_public=100, random_state=0,
                                                 **kw),
    "sparsifier": lambda **kw: SparsifiedLassoClassifier(max_iter=20, nonprivate_max_iter=50,
                                                         n_samples_public=100,
                                                         random_state=0, **kw),
    "scd": lambda **kw: DPSCDClassifier(epsilon=1.0, n_samples_public=100, batch_size=5,
                                        n_epochs=1, random_state=0, **kw),
    "sgd": lambda **kw: DPSGDClassifier(epsilon=1.0, n_samples_public=100, batch_size=5,
                                        n_epochs=1, random_state=0, **kw),
    "nb": lambda **kw: DPNBLogisticClassifier(epsilon=1.0, n_features_kept=5, n_epochs=1,
                                              n_samples_public=100, random_state=0, **kw),
}
_BINARY_ONLY = ("scd", "sgd", "nb")


@pytest.mark.parametrize("name", sorted(_PRIVATE_CLASSIFIERS))
def test_declared_classes_are_used_and_no_label_warning(name):
    X, y = _binary_data()
    labels = np.where(y == 1, "pos", "neg")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est = _PRIVATE_CLASSIFIERS[name](classes=["pos", "neg"]).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, ["neg", "pos"])
    assert set(est.predict(X)) <= {"neg", "pos"}
    # the only positive row removed: fine when declared
    only_neg = np.full(y.shape, "neg")
    est = _PRIVATE_CLASSIFIERS[name](classes=["neg", "pos"]).fit(X, only_neg)
    np.testing.assert_array_equal(est.classes_, ["neg", "pos"])
    assert est.coef_.shape[0] == 1
    # a label outside the declared classes: an error naming classes
    other = labels.copy()
    other[0] = "third"
    with pytest.raises(ValueError, match="classes"):
        _PRIVATE_CLASSIFIERS[name](classes=["neg", "pos"]).fit(X, other)
    # classes=None: the private fit warns that the label set was read from the data
    with pytest.warns(PrivacyLeakWarning, match="label set was read from the data"):
        _PRIVATE_CLASSIFIERS[name]().fit(X, labels)


@pytest.mark.parametrize("name", _BINARY_ONLY)
def test_binary_estimators_need_two_declared_classes(name):
    X, y = _binary_data()
    with pytest.raises(ValueError, match="classes must hold exactly 2"):
        _PRIVATE_CLASSIFIERS[name](classes=[0, 1, 2]).fit(X, y)
    with pytest.raises(ValueError, match="classes"):
        _PRIVATE_CLASSIFIERS[name](classes=[0, 0]).fit(X, y)


@pytest.mark.parametrize("name", ["fw", "sparsifier"])
def test_declared_classes_decide_the_multinomial_model(name):
    X, y = _binary_data()
    est = _PRIVATE_CLASSIFIERS[name](classes=[0, 1, 2]).fit(X, y)   # class 2 absent
    assert est.coef_.shape == (3, X.shape[1])
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    y3 = y.copy()
    y3[0] = 2                                                         # one row with a 3rd label
    with pytest.raises(ValueError, match="classes"):
        _PRIVATE_CLASSIFIERS[name](classes=[0, 1]).fit(X, y3)


def test_pipeline_passes_declared_classes_on():
    X, y = _binary_data()
    model = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=10,
                                      n_samples_public=100, random_state=0)
    pipe = PrivateSelectThenFit(DPSIS(k=4, epsilon=0.5, y_bounds=(0, 1), random_state=0),
                                model, classes=[0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X, y)
    np.testing.assert_array_equal(pipe.classes_, [0, 1, 2])
    assert pipe.estimator_.coef_.shape == (3, 4)
    y3 = y.copy()
    y3[0] = 5
    with pytest.raises(ValueError, match="classes"):
        pipe.fit(X, y3)
    with pytest.raises(ValueError, match="classes"):
        PrivateSelectThenFit(DPSIS(k=4, epsilon=0.5), model.set_params(classes=[0, 1]),
                             classes=[0, 1, 2]).fit(X, y)


def test_search_passes_declared_classes_on():
    X, y = _binary_data(n=120)
    search = PrivateHyperparameterSearch(
        FrankWolfeLassoClassifier(max_iter=10, n_samples_public=100),
        {"l1_bound": [1.0, 5.0]}, epsilon=1.0, n_runs=2.0, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        search.fit(X, np.zeros_like(y))                 # no positive row: fine
    np.testing.assert_array_equal(search.classes_, [0, 1])
    with pytest.raises(ValueError, match="classes"):
        search.fit(X, np.where(y == 1, 3, 0))
