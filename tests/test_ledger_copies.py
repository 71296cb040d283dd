"""Budgets that copies cannot step around.

A ledger holds only if every fit on the same data charges the same object and
every fit whose noise ran is charged:

* the default ledger of a joblib worker (``n_jobs > 1``) is a copy that refuses,
  as an explicit accountant's copy there does;
* a same-process pickle of an estimator shares its accountant (a copy rebuilt
  next to the living original, as skops does, refuses);
* a fit that raises, over the budget or otherwise, leaves no fitted attribute;
* a fit whose noise ran is charged even when it then raises.

Every test here failed on the code before these rules (said in each).
"""
import copy
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import cross_val_score

from dptoolkit._private import nothing_released
from dptoolkit.accounting import BudgetAccountant, default_accountant, set_default_accountant
from dptoolkit.accounting import _budget as budget
from dptoolkit.exceptions import BudgetExceededError
from dptoolkit.linear_model import (DPNBLogisticClassifier, DPSGDClassifier,
                                    FrankWolfeLassoClassifier)
from dptoolkit.linear_model._glm import _nb_logistic

N = 300


@pytest.fixture
def ledger():
    previous = set_default_accountant(None)
    yield default_accountant()
    set_default_accountant(previous)


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(n=N):
    rng = np.random.default_rng(0)
    X = sp.csr_array((rng.random((n, 20)) < 0.3).astype(float))
    y = (X[:, [0]].toarray().ravel() > 0).astype(int)
    return X, y


def _fw(accountant=None, **kw):
    """A private fit of (1, 1e-6)."""
    return FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-6, max_iter=10, classes=[0, 1],
                                     n_samples_public=N, accountant=accountant, **kw)


def _fitted_attributes(est):
    return [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]


# ------------------------------------------------ default-ledger copies in workers
def test_a_loky_worker_default_ledger_refuses(ledger):
    """Before: each loky worker charged a fresh infinite ledger, so three eps-1
    fits ran under a default budget of 1.5 and the parent's ledger read 0."""
    set_default_accountant(BudgetAccountant(epsilon=1.5, delta=1e-3))
    X, y = _data()
    with pytest.raises(RuntimeError, match=r"default ledger.*n_jobs=1"):
        cross_val_score(_fw(), X, y, cv=3, n_jobs=2, error_score="raise")
    assert default_accountant().spends == []
    # in the parent the same fits are bounded: one fits, the second is refused
    with pytest.raises(BudgetExceededError):
        cross_val_score(_fw(), X, y, cv=3, n_jobs=1, error_score="raise")
    assert len(default_accountant().spends) == 1


def _ancestor_copy(monkeypatch, est):
    """``est`` as unpickled in a process started under the one that pickled it
    (its pid made an ancestor's); the process-wide state is restored after."""
    monkeypatch.setattr(budget, "_FOREIGN_ORIGIN", [None])
    monkeypatch.setattr(budget, "_FOREIGN_DEFAULT", [None])
    state = est.__reduce_ex__(4)[2]
    origin = state["_dptoolkit_pickled_by_pid"]
    state["_dptoolkit_pickled_by_pid"] = origin + 100_000    # not this process
    monkeypatch.setattr(budget, "_ancestors", lambda: {origin + 100_000})
    copy_ = type(est).__new__(type(est))
    copy_.__setstate__(state)
    return copy_


def test_an_estimator_from_an_ancestor_process_detaches_the_default_ledger(
        monkeypatch, ledger):
    X, y = _data()
    worker_copy = _ancestor_copy(monkeypatch, _fw())
    with pytest.raises(RuntimeError, match="is a copy"):
        worker_copy.fit(X, y)
    assert _fitted_attributes(worker_copy) == []
    # every later top-level private fit of that process refuses too (a clone made
    # in the worker, as OneVsRestClassifier does, included); non-private fits run
    with pytest.raises(RuntimeError, match="n_jobs=1"):
        clone(worker_copy).fit(X, y)
    FrankWolfeLassoClassifier(epsilon=None, max_iter=5).fit(X, y)
    assert ledger.spends == []


def test_an_estimator_from_an_unrelated_process_changes_nothing(monkeypatch, ledger):
    """A model saved by an earlier session (not an ancestor) and loaded here."""
    X, y = _data()
    monkeypatch.setattr(budget, "_FOREIGN_ORIGIN", [None])
    est = _fw()
    state = est.__reduce_ex__(4)[2]
    state["_dptoolkit_pickled_by_pid"] += 100_000
    monkeypatch.setattr(budget, "_ancestors", lambda: set())
    loaded = FrankWolfeLassoClassifier.__new__(FrankWolfeLassoClassifier)
    loaded.__setstate__(state)
    assert "_dptoolkit_pickled_by_pid" not in vars(loaded)
    loaded.fit(X, y)
    assert len(ledger.spends) == 1


# ------------------------------------------------------------ same-process copies
def test_a_pickled_estimator_shares_its_accountant():
    """Before: the round trip carried an independent ledger, and two eps-1 fits
    ran under a budget of 1."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=1.0)
    est = _fw(acc)
    again = pickle.loads(pickle.dumps(est))
    assert again.accountant is acc
    assert copy.deepcopy(est).accountant is acc and clone(est).accountant is acc
    est.fit(X, y)
    with pytest.raises(BudgetExceededError):
        again.fit(X, y)
    assert len(acc.spends) == 1 and not hasattr(again, "coef_")


def test_a_copy_rebuilt_next_to_its_original_refuses():
    """skops rebuilds an object from its state (``__setstate__`` on a new one):
    next to the living original that copy refuses.  Before: it spent."""
    acc = BudgetAccountant(epsilon=1.0)
    rebuilt = BudgetAccountant.__new__(BudgetAccountant)
    rebuilt.__setstate__(acc.__getstate__())
    with pytest.raises(RuntimeError, match="copy, made in this process"):
        rebuilt.check(0.5)
    with pytest.raises(RuntimeError, match="copy, made in this process"):
        rebuilt.spend(0.5)
    assert acc.spends == [] and rebuilt.spends == []
    acc.spend(0.5)                      # the original spends as before


# ------------------------------------------------------------ over-budget fits
def test_an_over_budget_refit_leaves_the_estimator_unfitted():
    """Refused before any work; before, the previous fit's model stayed."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=1.5)
    est = _fw(acc).fit(X, y)
    assert hasattr(est, "coef_")
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert _fitted_attributes(est) == [] and len(acc.spends) == 1


def test_a_finite_default_ledger_refuses_before_any_work(ledger, monkeypatch):
    """Before: the default ledger was asked only when the fit was recorded, after
    the work, and the model stayed on the estimator."""
    set_default_accountant(BudgetAccountant(epsilon=1.5, delta=1e-3))
    X, y = _data()
    _fw().fit(X, y)
    est = _fw()
    ran = []
    monkeypatch.setattr(est, "_noise_rng", lambda: ran.append(1))
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert ran == [] and _fitted_attributes(est) == []
    assert len(default_accountant().spends) == 1


def test_a_reservation_counts_until_spent_or_released():
    acc = BudgetAccountant(epsilon=1.0)
    held = acc.reserve(0.6)
    with pytest.raises(BudgetExceededError):
        acc.check(0.6)
    assert acc.spends == [] and acc.spent == (0.0, 0.0)
    assert "_reserved" not in acc.__getstate__()   # running here only
    acc.release(held)
    acc.release(held)                               # twice: ignored
    held = acc.reserve(0.6)
    acc.spend(0.6, reservation=held)                # replaces its reservation
    assert acc.spent[0] == pytest.approx(0.6) and acc.__dict__["_reserved"] == {}
    acc.check(0.4)


def test_fits_running_at_once_on_one_ledger_cannot_both_pass_the_check():
    """A second fit checked while the first runs (as in threads) sees the first
    one's reservation and is refused before any work.  Before: both checks
    passed on the same remaining budget, both ran, and the first fit raised when
    recorded, with its model on the estimator and nothing charged."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=1.5, delta=1e-3)
    first, second = _fw(acc), _fw(acc)
    noise = first._noise_rng
    refused = []

    def second_fit_meanwhile():
        with pytest.raises(BudgetExceededError):
            second.fit(X, y)
        refused.append(_fitted_attributes(second))
        return noise()

    first._noise_rng = second_fit_meanwhile
    first.fit(X, y)
    del first._noise_rng
    assert refused == [[]] and hasattr(first, "coef_")
    assert [label for *_, label in acc.spends] == ["FrankWolfeLassoClassifier"]
    assert acc.__dict__.get("_reserved") == {}          # no reservation left behind


def test_fits_in_threads_never_overspend_a_shared_ledger():
    """Four eps-1 fits in threads under a budget of 2: whatever the interleaving,
    at most two are charged, the others are refused before any work and keep no
    model, and the ledger never exceeds its budget."""
    from joblib import Parallel, delayed

    X, y = _data()
    acc = BudgetAccountant(epsilon=2.0, delta=1e-3)
    models = [_fw(acc) for _ in range(4)]

    def fit(est):
        try:
            est.fit(X, y)
            return True
        except BudgetExceededError:
            return False

    done = Parallel(n_jobs=2, backend="threading")(delayed(fit)(m) for m in models)
    assert sum(done) == len(acc.spends) <= 2
    assert acc.spent[0] <= 2.0 * (1 + 1e-9)
    assert all(hasattr(m, "coef_") == ok for m, ok in zip(models, done))


def test_a_fit_over_the_budget_when_recorded_keeps_no_model_and_is_charged():
    """The check passed, then a charge that no check can refuse (another fit that
    failed after its noise ran) took the budget before this fit recorded: the
    record raises, and the fit, whose noise ran, is charged anyway (the ledger
    shows the overspend) with no model left.  Before: the model stayed on the
    estimator and nothing was charged."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=1.5, delta=1e-3)
    est = _fw(acc)
    noise = est._noise_rng

    def concurrent_spend():
        acc._charge_after_work(1.0, label="another fit")
        return noise()

    est._noise_rng = concurrent_spend
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    del est._noise_rng
    assert _fitted_attributes(est) == []
    assert [label for *_, label in acc.spends] == ["another fit",
                                                   "FrankWolfeLassoClassifier"]
    assert acc.spent[0] == pytest.approx(2.0)       # over the budget: what ran
    with pytest.raises(BudgetExceededError):
        acc.check(1e-9)


# ------------------------------------------------- a fit whose noise ran is charged
def _nb(accountant, **kw):
    return DPNBLogisticClassifier(epsilon=1.0, delta=1e-5, n_epochs=2, classes=[0, 1],
                                  n_samples_public=N, accountant=accountant,
                                  **kw)


def test_a_diverging_dpnb_fit_is_charged(ledger):
    """Before: DP-SGD ran every step, the fit raised, and nothing was charged."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    est = _nb(acc, learning_rate=1e300)
    planned = _nb(None, learning_rate=1e300)._privacy_plan(N, X.shape[1], np.array([0, 1]))
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X, y)
    assert _fitted_attributes(est) == []
    assert acc.events == [planned.event]
    assert acc.spends == [(planned.epsilon, planned.delta, "DP naive-Bayes logistic "
                           "regression")]
    # without accountant=: the default ledger
    with pytest.raises(ValueError, match="diverged"):
        _nb(None, learning_rate=1e300).fit(X, y)
    assert ledger.events == [planned.event]


def test_a_diverging_dpsgd_fit_is_charged(ledger):
    """The rule is the contract's: every estimator gets it (here DP-SGD)."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=50.0, delta=1e-3)
    est = DPSGDClassifier(epsilon=1.0, delta=1e-5, learning_rate=1e300, n_epochs=1,
                          classes=[0, 1], n_samples_public=N, accountant=acc)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X, y)
    assert len(acc.spends) == 1 and _fitted_attributes(est) == []


@pytest.mark.parametrize("released", [True, False])
def test_an_error_after_the_noise_is_charged_unless_it_releases_nothing(
        monkeypatch, released):
    """Any exception once the noise stream was handed out charges the planned
    event; one marked ``nothing_released`` (Dask workers that died: independent of
    the data and of the noise) does not."""
    X, y = _data()

    def boom(*args, **kwargs):
        exc = RuntimeError("boom")
        raise exc if released else nothing_released(exc)

    monkeypatch.setattr(_nb_logistic, "_dp_sgd", boom)
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(RuntimeError, match="boom"):
        _nb(acc).fit(X, y)
    assert len(acc.spends) == (1 if released else 0)


def test_an_error_before_the_noise_is_not_charged(monkeypatch):
    X, y = _data()
    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    est = _nb(acc)

    def boom():
        raise RuntimeError("before any noise")

    monkeypatch.setattr(est, "_noise_rng", boom)
    with pytest.raises(RuntimeError, match="before any noise"):
        est.fit(X, y)
    assert acc.spends == []
