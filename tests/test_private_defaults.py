"""Private by default: every estimator that can be private defaults to epsilon=1.0.

A non-private fit needs an explicit ``epsilon=None`` (and then does not warn at
every fit: it is the user's choice); the command line's ``train`` needs
``--epsilon E`` or an explicit ``--non-private``.  Estimators non-private by
design (``SIS``, the DSAL Lasso solvers) have no ``epsilon``.
"""
import warnings

import numpy as np
import pytest

from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.linear_model import (DPIGHTClassifier, DPNBLogisticClassifier,
                                    DPSCDClassifier, DPSCDRegressor, DPSGDClassifier,
                                    DPSGDRegressor, FrankWolfeLassoClassifier,
                                    SparsifiedLassoClassifier)
from dptoolkit.model_selection import PrivateHyperparameterSearch
from dptoolkit.selection import SIS, DPSIS, PrivateSelectThenFit, TwoStageSelector

N, D = 120, 8

# (class, its documented default delta)
DEFAULT_DELTAS = [
    (DPNBLogisticClassifier, 1e-5),
    (DPSGDClassifier, 1e-5),
    (DPSGDRegressor, 1e-5),
    (DPSCDClassifier, 1e-5),
    (DPSCDRegressor, 1e-5),
    (DPIGHTClassifier, 1e-5),
    (FrankWolfeLassoClassifier, None),      # pure DP (basic composition of the steps)
    (SparsifiedLassoClassifier, None),      # pure DP
    (DPSIS, None),                          # pure-DP selectors
    (TwoStageSelector, None),               # pure DP, no delta parameter
]


def _data(kind="binary"):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(N, D))
    if kind == "binary":
        return X, (X[:, 0] + X[:, 1] > 0).astype(int)
    return X, np.clip(X[:, 0] - 0.5 * X[:, 1], -1.0, 1.0)


@pytest.mark.parametrize("cls, delta", DEFAULT_DELTAS, ids=lambda v: getattr(v, "__name__", ""))
def test_default_is_epsilon_one(cls, delta):
    params = cls().get_params()
    assert params["epsilon"] == 1.0
    assert params.get("delta") == delta


def test_meta_estimators_default_to_epsilon_one():
    pipe = PrivateSelectThenFit(DPSIS(), FrankWolfeLassoClassifier())
    assert pipe.get_params()["epsilon"] == 1.0 and pipe.get_params()["delta"] is None
    search = PrivateHyperparameterSearch(FrankWolfeLassoClassifier(), {"l1_bound": [1.0]})
    assert search.get_params()["epsilon"] == 1.0
    assert search.get_params()["delta"] == 1e-5


def test_non_private_by_design_has_no_epsilon():
    assert "epsilon" not in SIS().get_params()


# Default fits: only public constants and small work sizes, no epsilon and no delta.
DEFAULT_FITS = [
    ("DPNBLogisticClassifier", lambda: DPNBLogisticClassifier(
        k=4, n_epochs=1, n_samples_public=N, classes=[0, 1],
        random_state=0), "binary"),
    ("DPSGDClassifier", lambda: DPSGDClassifier(
        n_epochs=1, batch_size=20, n_samples_public=N, classes=[0, 1], random_state=0),
     "binary"),
    ("DPSGDRegressor", lambda: DPSGDRegressor(
        n_epochs=1, batch_size=20, n_samples_public=N, random_state=0), "regression"),
    ("DPSCDClassifier", lambda: DPSCDClassifier(
        n_epochs=1, batch_size=20, n_samples_public=N, classes=[0, 1], random_state=0),
     "binary"),
    ("DPSCDRegressor", lambda: DPSCDRegressor(
        n_epochs=1, batch_size=20, n_samples_public=N, random_state=0), "regression"),
    ("DPIGHTClassifier", lambda: DPIGHTClassifier(
        sparsity=3, max_iter=5, n_samples_public=N, classes=[0, 1], random_state=0),
     "binary"),
    ("FrankWolfeLassoClassifier", lambda: FrankWolfeLassoClassifier(
        l1_bound=2.0, max_iter=10, n_samples_public=N, classes=[0, 1], random_state=0),
     "binary"),
    ("FrankWolfeLassoClassifier-multinomial", lambda: FrankWolfeLassoClassifier(
        l1_bound=2.0, max_iter=10, n_samples_public=N, classes=[0, 1, 2], random_state=0),
     "multinomial"),
    ("SparsifiedLassoClassifier", lambda: SparsifiedLassoClassifier(
        l1_bound=2.0, max_iter=10, nonprivate_max_iter=20, n_samples_public=N,
        classes=[0, 1], random_state=0), "binary"),
    ("DPSIS", lambda: DPSIS(k=3, random_state=0), "regression"),
    ("TwoStageSelector", lambda: TwoStageSelector(k=3, n_blocks=5, random_state=0),
     "regression"),
    ("PrivateSelectThenFit", lambda: PrivateSelectThenFit(
        DPSIS(k=3, y_bounds=(0.0, 1.0), n_samples_public=N, random_state=0),
        FrankWolfeLassoClassifier(l1_bound=2.0, max_iter=10, n_samples_public=N,
                                  random_state=0), classes=[0, 1]), "binary"),
]


def _xy(kind):
    if kind != "multinomial":
        return _data(kind)
    X, _ = _data()
    return X, np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])


@pytest.mark.parametrize("make, kind", [pytest.param(m, k, id=n) for n, m, k in DEFAULT_FITS])
def test_default_fit_is_private_at_epsilon_one(make, kind):
    X, y = _xy(kind)
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # e.g. DataClippedWarning: not what is tested
        est.fit(X, y)
    assert est.privacy_event_ is not None
    assert est.privacy_spent_ is not None
    # the search and the pipeline calibrate their parts to the total (exact up to
    # the bisection's tolerance); the plain estimators spend exactly epsilon
    assert est.privacy_spent_[0] == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("make, kind", [pytest.param(m, k, id=n) for n, m, k in DEFAULT_FITS
                                        if n != "PrivateSelectThenFit"])
def test_explicit_none_is_non_private_and_silent(make, kind):
    X, y = _xy(kind)
    est = make().set_params(epsilon=None)
    if "delta" in est.get_params() and isinstance(est, FrankWolfeLassoClassifier):
        assert est.delta is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", PrivacyLeakWarning)  # an explicit choice: no warning
        est.fit(X, y)
    assert est.privacy_spent_ is None and est.privacy_event_ is None
