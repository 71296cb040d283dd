"""The worked example of "Adding a DP algorithm" (docs/architecture.rst), followed
end to end: the estimator of tests/_private_mean_example.py (step 1: its module
docstring; step 2: the event; step 3: calibration through the accountant; step 4:
``_parameter_constraints`` and check -> work -> spend) gets the tests of step 5:
a pure-Python reference, the private-estimator contract (the checks of
tests/test_private_contract.py), bad input naming the argument, and a statistical
test with a stated false-failure rate and a fixed seed.
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import _private_mean_example as example
from _private_mean_example import PrivateMean
from dptoolkit._private import plan_spend
from dptoolkit.accounting import BudgetAccountant, epsilon_of_event
from dptoolkit.accounting.events import GaussianEvent
from dptoolkit.exceptions import (BudgetExceededError, DataClippedWarning,
                                  PrivacyLeakWarning)
from dptoolkit.mechanisms import analytic_gaussian_sigma

N, D = 50, 6


def _data(seed=0, n=N, d=D):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return 0.999 * X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)  # < 1


@pytest.fixture
def work_calls(monkeypatch):
    """Spy on the work (the noisy sum): the calls made."""
    calls = []
    original = example.noisy_sum

    def spy(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(example, "noisy_sum", spy)
    return calls


# ------------------------------------------------------- step 3: calibration
@pytest.mark.parametrize("epsilon,delta", [(0.1, 1e-6), (0.5, 1e-5), (0.9, 1e-3)])
def test_calibration_is_the_accountants_and_between_the_closed_forms(epsilon, delta):
    """The noise multiplier is the accountant's: its event costs epsilon (to the
    calibration tolerance, never more), and it lies between the exact optimum of
    the Gaussian mechanism (Balle and Wang 2018, no valid analysis can use less
    noise) and the classical sqrt(2 ln(1.25/delta))/epsilon (Dwork and Roth 2014,
    Theorem A.1, epsilon < 1)."""
    z = example.calibrate_noise(epsilon, delta)
    spent = epsilon_of_event(GaussianEvent(z), delta)
    assert spent <= epsilon and spent == pytest.approx(epsilon, rel=1e-6)
    assert analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=1.0) <= z
    assert z <= math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


# --------------------------------------------- step 5: the pure-Python reference
@pytest.mark.parametrize("neighbouring,factor", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_fit_matches_the_pure_python_reference(neighbouring, factor):
    """Rows rescaled to the bound, summed, the Gaussian noise of scale
    z * sensitivity added (the same draws), divided by the public N."""
    X = 3.0 * _data(1)                      # rows above the bound B = 1.5
    bound, n_public = 1.5, 80
    with pytest.warns(DataClippedWarning):
        model = PrivateMean(epsilon=0.7, delta=1e-6, data_norm=bound,
                            neighbouring=neighbouring, n_samples_public=n_public,
                            random_state=7).fit(X)
    z = example.calibrate_noise(0.7, 1e-6)
    rng = np.random.default_rng(7)
    expected = []
    noise = rng.normal(0.0, z * factor * bound, size=D)
    for j in range(D):
        total = 0.0
        for row in X:
            norm = math.sqrt(sum(v * v for v in row))
            total += row[j] * (bound / norm if norm > bound else 1.0)
        expected.append((total + noise[j]) / n_public)
    np.testing.assert_allclose(model.mean_, expected, rtol=1e-12, atol=1e-15)
    assert model.noise_multiplier_ == z


def test_sparse_and_dense_input_give_the_same_release():
    X = _data(2)
    dense = PrivateMean(n_samples_public=N, random_state=3).fit(X)
    sparse = PrivateMean(n_samples_public=N, random_state=3).fit(sp.csr_array(X))
    np.testing.assert_allclose(dense.mean_, sparse.mean_, rtol=1e-12)
    np.testing.assert_allclose(dense.transform(X), X - dense.mean_)


# ------------------------------------- step 5: the private-estimator contract
def test_fit_reports_the_event_and_its_spend():
    model = PrivateMean(epsilon=0.5, delta=1e-5, n_samples_public=N, random_state=0).fit(_data())
    assert isinstance(model.privacy_event_, GaussianEvent)
    assert model.privacy_spent_ == (epsilon_of_event(model.privacy_event_, 1e-5), 1e-5)
    assert model.privacy_spent_[0] <= 0.5
    model.privacy_event_.to_dp_accounting()   # converts (dp-accounting installed)


def test_insufficient_accountant_refuses_before_any_work(work_calls):
    acc = BudgetAccountant(epsilon=0.4, delta=1e-4)
    with pytest.raises(BudgetExceededError):
        PrivateMean(epsilon=0.5, n_samples_public=N, accountant=acc).fit(_data())
    assert work_calls == [] and list(acc.spends) == []


def test_sufficient_accountant_is_charged_once_and_shared_by_clones(work_calls):
    acc = BudgetAccountant(epsilon=2.0, delta=1e-4)
    model = PrivateMean(epsilon=0.5, n_samples_public=N, accountant=acc, random_state=0)
    model.fit(_data())
    assert len(work_calls) == 1
    assert [entry[:2] for entry in acc.spends] == [model.privacy_spent_]
    assert list(acc.events) == [model.privacy_event_]
    clone(model).fit(_data())               # a clone charges the same ledger
    assert len(acc.spends) == 2


def test_plan_spend_on_a_zero_stand_in_matches_the_fit(work_calls):
    model = PrivateMean(epsilon=0.3, n_samples_public=N, random_state=0)
    planned = plan_spend(model, np.zeros((N, D)))
    assert work_calls == []
    model.fit(_data())
    assert planned == (model.privacy_event_, model.privacy_spent_)


def test_no_noise_handle_on_the_fitted_model():
    model = PrivateMean(n_samples_public=N).fit(_data())
    held = [v for v in vars(model).values()
            if isinstance(v, (np.random.Generator, np.random.SeedSequence,
                              np.random.BitGenerator))]
    assert held == []


def test_size_from_the_data_warns():
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public"):
        PrivateMean(random_state=0).fit(_data())


# ------------------------------------------------ step 5: bad input, by name
@pytest.mark.parametrize("params,name", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": None}, "epsilon"),
    ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"),
    ({"data_norm": -1.0}, "data_norm"), ({"neighbouring": "any"}, "neighbouring"),
    ({"n_samples_public": 0}, "n_samples_public"), ({"accountant": "acc"}, "accountant"),
    ({"clip_data": 1}, "clip_data"), ({"random_state": 1.5}, "random_state"),
])
def test_bad_parameters_are_named(params, name, work_calls):
    with pytest.raises((ValueError, TypeError), match=name):
        PrivateMean(**{"n_samples_public": N, **params}).fit(_data())
    assert work_calls == []


def test_rows_above_the_bound_without_clipping_are_refused():
    with pytest.raises(ValueError, match="public bound"):
        PrivateMean(n_samples_public=N, clip_data=False).fit(3.0 * _data())


def test_nan_is_refused():
    X = _data()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        PrivateMean(n_samples_public=N).fit(X)


# --------------------------------------------------- step 5: statistical test
def test_noise_has_the_calibrated_standard_deviation():
    """On zero data of 20,000 features with N = 1, ``mean_`` is the noise itself:
    its sample variance over the features estimates (z B)^2 with a relative
    standard deviation sqrt(2 / 20000) = 1%; the 5% tolerance is five of those,
    a false-failure rate below 1e-6 (fixed seed: the test is deterministic).  The
    sample mean is within 5 standard errors of 0 (false-failure rate 6e-7)."""
    d, bound = 20_000, 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = PrivateMean(epsilon=1.0, delta=1e-5, data_norm=bound,
                            n_samples_public=1, random_state=12345).fit(np.zeros((1, d)))
    sigma = model.noise_multiplier_ * bound
    assert abs(np.var(model.mean_) / sigma ** 2 - 1.0) <= 0.05
    assert abs(np.mean(model.mean_)) <= 5.0 * sigma / math.sqrt(d)
