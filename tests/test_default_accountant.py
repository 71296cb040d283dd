"""The process-wide ledger: every top-level private fit without accountant= is
recorded; an accountant given as accountant= is shared by every scikit-learn
clone, so its budget bounds cross-validation, grid search and pipelines;
scikit-learn model selection over a private estimator warns once per call."""
import copy
import os
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MaxAbsScaler

from dptoolkit.accounting import (BudgetAccountant, default_accountant,
                                  set_default_accountant)
from dptoolkit.exceptions import BudgetExceededError, PrivacyLeakWarning
from dptoolkit.linear_model import FrankWolfeLassoClassifier, SparsifiedLassoClassifier
from dptoolkit.model_selection import PrivateHyperparameterSearch


@pytest.fixture
def ledger():
    previous = set_default_accountant(None)
    yield default_accountant()
    set_default_accountant(previous)


def _data():
    rng = np.random.default_rng(0)
    X = sp.csr_array((rng.random((300, 20)) < 0.3).astype(float))
    y = (X[:, [0]].toarray().ravel() > 0).astype(int)
    return X, y


def _selection_warnings(caught):
    return [w for w in caught if issubclass(w.category, PrivacyLeakWarning)
            and "model selection" in str(w.message)]


def test_grid_search_fits_are_all_recorded_and_warn_once_per_call(ledger):
    X, y = _data()
    est = FrankWolfeLassoClassifier(epsilon=0.5, delta=1e-6, max_iter=20, random_state=0)
    grid = GridSearchCV(est, {"l1_bound": [1.0, 5.0]}, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid.fit(X, y)
    # 2 candidates x 3 folds + the refit of the best: every fit in the ledger, one
    # warning for the call (its refit included)
    assert len(ledger.spends) == 7
    assert ledger.spent[0] == pytest.approx(3.5)
    assert all(label == "FrankWolfeLassoClassifier" for *_, label in ledger.spends)
    (warning,) = _selection_warnings(caught)
    assert "PrivateHyperparameterSearch" in str(warning.message)
    assert "default ledger" in str(warning.message)
    for _ in range(2):      # a new call, a new warning (the same objects each time)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cross_val_score(est, X, y, cv=3)
        assert len(_selection_warnings(caught)) == 1
    assert len(ledger.spends) == 13


def test_plain_fits_after_model_selection_do_not_warn(ledger):
    X, y = _data()
    est = FrankWolfeLassoClassifier(epsilon=0.5, delta=1e-6, max_iter=20, classes=[0, 1],
                                    n_samples_public=300)
    with pytest.warns(PrivacyLeakWarning, match="model selection"):
        cross_val_score(est, X, y, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clone(est).fit(X, y)
    assert len(ledger.spends) == 3


# ---------------------------------------------- accountant= bounds model selection
def _eps1(accountant, **kw):
    """A private fit of (1, 1e-6): its accountant check is before any work."""
    return FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-6, max_iter=10, classes=[0, 1],
                                     n_samples_public=300, accountant=accountant, **kw)


def test_clones_share_the_accountant():
    acc = BudgetAccountant(epsilon=1.0)
    est = _eps1(acc)
    assert clone(est).accountant is acc
    assert copy.deepcopy(est).accountant is acc
    assert copy.deepcopy(acc) is acc and copy.copy(acc) is acc
    pipe = clone(Pipeline([("scale", MaxAbsScaler()), ("fw", est)]))
    assert pipe.named_steps["fw"].accountant is acc


@pytest.mark.parametrize("wrap", ["estimator", "pipeline"])
def test_cross_val_score_is_bounded_by_the_budget(wrap, ledger):
    """Four folds of epsilon 1 under a budget of epsilon 1: the first fold fits,
    the others are refused before any work; the user's accountant holds the
    spend (a deep copy per clone used to let all four run on private copies)."""
    X, y = _data()

    def model(acc):
        est = _eps1(acc)
        return Pipeline([("scale", MaxAbsScaler()), ("fw", est)]) if wrap == "pipeline" \
            else est

    acc = BudgetAccountant(epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BudgetExceededError):
            cross_val_score(model(acc), X, y, cv=4, error_score="raise")
    assert len(acc.spends) == 1 and acc.spent[0] == pytest.approx(1.0)
    acc = BudgetAccountant(epsilon=1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = cross_val_score(model(acc), X, y, cv=4)
    assert np.isfinite(scores).sum() == 1 and np.isnan(scores).sum() == 3
    assert len(acc.spends) == 1 and acc.spent[0] == pytest.approx(1.0)
    assert ledger.spends == []          # the accountant paid, not the ledger
    (warning,) = _selection_warnings(caught)
    assert "charged to the accountant" in str(warning.message)


def test_grid_search_is_bounded_by_the_budget(ledger):
    X, y = _data()
    acc = BudgetAccountant(epsilon=2.0)
    grid = GridSearchCV(_eps1(acc), {"l1_bound": [1.0, 5.0]}, cv=2, refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid.fit(X, y)
    scores = np.concatenate([grid.cv_results_[f"split{i}_test_score"] for i in range(2)])
    assert np.isfinite(scores).sum() == 2
    assert len(acc.spends) == 2 and acc.spent[0] == pytest.approx(2.0)
    # with a refit, the budget refuses it: the search fails, nothing more is spent
    grid = GridSearchCV(_eps1(acc), {"l1_bound": [1.0, 5.0]}, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((BudgetExceededError, ValueError)):
            grid.fit(X, y)
    assert len(acc.spends) == 2 and ledger.spends == []


def test_a_pickled_accountant_is_the_original_in_the_same_process():
    """A same-process pickle round trip used to give a working, separate copy:
    two budgets.  Now it gives the original back while the original lives, and
    a copy that keeps the state (and is the ledger) once the original is gone."""
    acc = BudgetAccountant(epsilon=3.0).spend(1.0, label="a")
    again = pickle.loads(pickle.dumps(acc))
    assert again is acc
    again.spend(1.0)
    assert len(acc.spends) == 2
    data = pickle.dumps(acc)
    del acc, again
    import gc
    gc.collect()
    restored = pickle.loads(data)
    assert len(restored.spends) == 2
    restored.spend(0.5)                 # the only ledger left: it spends
    assert pickle.loads(data) is restored


def test_an_accountant_copied_to_another_process_refuses_to_spend():
    """joblib workers (n_jobs > 1) get a pickled copy, whose spends would not reach
    the original: it refuses rather than let each worker spend the budget."""
    acc = BudgetAccountant(epsilon=3.0)
    state = acc.__getstate__()
    state["_origin_pid"] = os.getpid() + 1      # as if pickled by another process
    foreign = BudgetAccountant.__new__(BudgetAccountant)
    foreign.__setstate__(state)
    with pytest.raises(RuntimeError, match="another process"):
        foreign.check(0.1)
    with pytest.raises(RuntimeError, match="n_jobs=1"):
        foreign.spend(0.1)


def test_parallel_cross_validation_cannot_bypass_the_budget():
    X, y = _data()
    acc = BudgetAccountant(epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="another process"):
            cross_val_score(_eps1(acc), X, y, cv=2, n_jobs=2, error_score="raise")
    assert acc.spends == []


def test_plain_fit_recorded_without_warning(ledger):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        # the private l1_bound="auto" reads N: public here, so no warning
        FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-6, max_iter=20,
                                  n_samples_public=X.shape[0],
                                  classes=[0, 1]).fit(X, y)
    assert len(ledger.spends) == 1 and ledger.events[0] is not None
    FrankWolfeLassoClassifier(max_iter=20, epsilon=None).fit(X, y)  # non-private: not recorded
    assert len(ledger.spends) == 1


def test_explicit_accountant_bypasses_the_default(ledger):
    X, y = _data()
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-6, max_iter=20,
                              accountant=acc).fit(X, y)
    assert len(acc.spends) == 1 and ledger.spends == []


def test_inner_fits_of_a_composite_are_charged_once(ledger):
    X, y = _data()
    SparsifiedLassoClassifier(epsilon=0.9, epsilon_count=0.1, max_iter=20,
                              nonprivate_max_iter=30, random_state=0).fit(X, y)
    assert [label for *_, label in ledger.spends] == ["SparsifiedLassoClassifier"]
    s = PrivateHyperparameterSearch(FrankWolfeLassoClassifier(max_iter=10),
                                    {"l1_bound": [1.0, 5.0]}, epsilon=1.0,
                                    random_state=0).fit(X, y)
    assert len(ledger.spends) == 2 and ledger.events[-1] == s.privacy_event_


def test_set_default_accountant_checks_type(ledger):
    with pytest.raises(TypeError, match="accountant"):
        set_default_accountant("acc")


def test_nesting_is_an_explicit_context_not_the_call_stack(ledger):
    # A fit called from inside another private estimator's fit method is charged
    # like any top-level fit unless the parent declares the nesting (nested_fits):
    # the ledger no longer guesses from the call stack.
    from dptoolkit._private import PrivateEstimatorMixin, nested_fits

    X, y = _data()

    class Parent(PrivateEstimatorMixin):
        def __init__(self, declare):
            self.declare = declare

        def fit(self, X, y):
            child = FrankWolfeLassoClassifier(epsilon=0.5, delta=1e-6, max_iter=5,
                                              classes=[0, 1], n_samples_public=300)
            if self.declare:
                with nested_fits(self):
                    child.fit(X, y)
            else:
                child.fit(X, y)
            return self

    Parent(declare=True).fit(X, y)
    assert ledger.spends == []
    Parent(declare=False).fit(X, y)
    assert len(ledger.spends) == 1
