"""The process-wide ledger: every top-level private fit without accountant= is
recorded; scikit-learn model selection over a private estimator warns."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV, cross_val_score

from dptoolkit.accounting import (BudgetAccountant, default_accountant,
                                  set_default_accountant)
from dptoolkit.exceptions import PrivacyLeakWarning
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


def test_grid_search_fits_are_all_recorded_and_warn(ledger):
    X, y = _data()
    est = FrankWolfeLassoClassifier(epsilon=0.5, delta=1e-6, max_iter=20, random_state=0)
    grid = GridSearchCV(est, {"l1_bound": [1.0, 5.0]}, cv=3)
    with pytest.warns(PrivacyLeakWarning, match="model selection"):
        grid.fit(X, y)
    # 2 candidates x 3 folds + the refit of the best
    assert len(ledger.spends) == 7
    assert ledger.spent[0] == pytest.approx(3.5)
    assert all(label == "FrankWolfeLassoClassifier" for *_, label in ledger.spends)
    with pytest.warns(PrivacyLeakWarning, match="PrivateHyperparameterSearch"):
        cross_val_score(est, X, y, cv=2)
    assert len(ledger.spends) == 9


def test_plain_fit_recorded_without_warning(ledger):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-6, max_iter=20,
                                  classes=[0, 1]).fit(X, y)
    assert len(ledger.spends) == 1 and ledger.events[0] is not None
    FrankWolfeLassoClassifier(max_iter=20).fit(X, y)  # non-private: not recorded
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
