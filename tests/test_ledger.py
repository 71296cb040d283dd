"""The process-wide ledger (:mod:`dptoolkit._ledger`): every private fit without an
accountant is recorded; repeated fits under scikit-learn model selection are
counted and warned about; nested fits of meta-estimators are not counted twice.

Until the contract module (:mod:`dptoolkit._private`) calls the ledger itself, the
fixture ``hooked`` installs the two calls (check and spend steps) with monkeypatch.
"""
import inspect
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score

from dptoolkit import BudgetExceededError, PrivacyLeakWarning, _ledger, _private
from dptoolkit.accounting import BudgetAccountant
from dptoolkit.datasets import make_sparse_classification
from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.model_selection import PrivateHyperparameterSearch
from dptoolkit.selection import DPSIS, PrivateSelectThenFit


def _check_spend(self, event, spent):
    accountant = _private.check_accountant(getattr(self, "accountant", None))
    if getattr(self, "_plan_only", False):
        raise _private._PlannedSpend(event, spent)
    if spent is None:
        return
    if accountant is not None:
        accountant.check(spent[0], spent[1], event=event)
    else:
        _ledger.check_default(self, event, spent)


def _record_spend(self, event, spent):
    self.privacy_event_ = event
    self.privacy_spent_ = None if spent is None else (float(spent[0]), float(spent[1]))
    accountant = getattr(self, "accountant", None)
    if spent is not None:
        label = self._privacy_label or type(self).__name__
        if accountant is not None:
            accountant.spend(spent[0], spent[1], event=event, label=label)
        else:
            _ledger.record_default(self, event, spent, label=label)
    return self


@pytest.fixture
def hooked(monkeypatch):
    """The contract calls the ledger (installed here until _private does it)."""
    source = inspect.getsource(_private.PrivateEstimatorMixin)
    if "_ledger" not in source:
        monkeypatch.setattr(_private.PrivateEstimatorMixin, "_check_spend", _check_spend)
        monkeypatch.setattr(_private.PrivateEstimatorMixin, "_record_spend", _record_spend)
    with _ledger.using_accountant() as ledger:
        yield ledger


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_sparse_classification(n_samples=300, n_features=100, random_state=0)
    return X, y


def _fw(**kw):
    return FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=20,
                                     n_samples_public=300, random_state=0, **kw)


def test_default_accountant_records_every_fit(hooked, data):
    X, y = data
    for _ in range(3):
        _fw().fit(X, y)
    assert len(hooked.spends) == 3
    assert all(label == "FrankWolfeLassoClassifier" for *_, label in hooked.spends)
    np.testing.assert_allclose(hooked.spent, (3.0, 3e-5))


def test_non_private_and_explicit_accountant_fits_are_not_in_the_default(hooked, data):
    X, y = data
    FrankWolfeLassoClassifier(max_iter=20).fit(X, y)
    own = BudgetAccountant()
    _fw(accountant=own).fit(X, y)
    assert hooked.spends == [] and len(own.spends) == 1


def test_grid_search_counts_every_fit_and_warns(hooked, data):
    X, y = data
    search = GridSearchCV(_fw(), {"l1_bound": [5.0, 50.0]}, cv=3)
    with pytest.warns(PrivacyLeakWarning, match="model selection"):
        search.fit(X, y)
    assert len(hooked.spends) == 2 * 3 + 1          # candidates x folds + refit
    assert hooked.spent[0] == pytest.approx(7.0)
    assert search.best_estimator_.privacy_spent_[0] == pytest.approx(1.0)


def test_cross_val_score_counts_every_fit_and_warns(hooked, data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning, match="PrivateHyperparameterSearch"):
        cross_val_score(_fw(), X, y, cv=4)
    assert len(hooked.spends) == 4


def test_no_warning_when_an_accountant_pays(hooked, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        cross_val_score(_fw(accountant=BudgetAccountant(epsilon=10.0, delta=1e-3)), X, y,
                        cv=2)
        with _ledger.using_accountant(BudgetAccountant(epsilon=10.0, delta=1e-3)) as acc:
            cross_val_score(_fw(), X, y, cv=2)
    assert len(acc.spends) == 2


def test_finite_default_refuses_before_any_work(hooked, data):
    X, y = data
    with _ledger.using_accountant(BudgetAccountant(epsilon=1.5, delta=1e-3)) as acc:
        _fw().fit(X, y)
        est = _fw()
        with pytest.raises(BudgetExceededError):
            est.fit(X, y)
        assert not hasattr(est, "coef_")
        assert len(acc.spends) == 1


def test_meta_estimators_are_recorded_once(hooked, data):
    X, y = data
    pipe = PrivateSelectThenFit(DPSIS(k=10, epsilon=0.1, random_state=0),
                                _fw().set_params(epsilon=0.9))
    pipe.fit(X, y)
    assert [label for *_, label in hooked.spends] == [
        pipe._privacy_label or "PrivateSelectThenFit"]
    search = PrivateHyperparameterSearch(FrankWolfeLassoClassifier(max_iter=20,
                                                                   n_samples_public=300),
                                         {"l1_bound": [5.0, 50.0]}, epsilon=1.0,
                                         n_runs=3, random_state=0)
    search.fit(X, y)
    assert len(hooked.spends) == 2
    assert hooked.spends[1][:2] == search.privacy_spent_


def test_set_default_accountant_validates_and_restores():
    before = _ledger.default_accountant()
    with pytest.raises(TypeError, match="accountant"):
        _ledger.set_default_accountant("acc")
    with _ledger.using_accountant() as acc:
        assert _ledger.default_accountant() is acc and acc is not before
    assert _ledger.default_accountant() is before
