"""Parameters declared once: a fit range-checks ``epsilon`` exactly once.

The constraint table (``_parameter_constraints``) is the one place a parameter's
type and range is written; the template's fit checks it (``validate_params``) and
everything after it (the plan, the budget split, the calibration, the kernels)
trusts the validated value.  Each test walks ``epsilon`` from an estimator's fit
to its kernel with the validators patched, counting the checks that name it.

The ledger's own check of what it is charged (``BudgetAccountant.check`` on the
accountant's figure for the fit's event, a derived quantity, through its public
``reserve``/``spend``) is not a check of the parameter and is not counted.
"""
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import dptoolkit._validation as validation
from dptoolkit.linear_model import (DPIGHTClassifier, DPNBLogisticClassifier,
                                    DPSGDClassifier, FrankWolfeLassoClassifier)


def _epsilon_checks(monkeypatch):
    """Patch every module's binding of the validators; return the list of the
    checks of epsilon made (one entry per check)."""
    calls = []
    original = {name: getattr(validation, name) for name in
                ("validate_params", "check_scalar_range", "check_epsilon_delta")}

    def validate_params(estimator):
        if "epsilon" in estimator.get_params(deep=False):
            calls.append(("validate_params", type(estimator).__name__))
        return original["validate_params"](estimator)

    def check_scalar_range(value, name, **kw):
        ledger = sys._getframe(1).f_globals.get("__name__") == "dptoolkit.accounting._budget"
        if name == "epsilon" and not ledger:
            calls.append(("check_scalar_range", name))
        return original["check_scalar_range"](value, name, **kw)

    def check_epsilon_delta(epsilon, *args, **kw):
        calls.append(("check_epsilon_delta", "epsilon"))
        return original["check_epsilon_delta"](epsilon, *args, **kw)

    patched = {"validate_params": validate_params, "check_scalar_range": check_scalar_range,
               "check_epsilon_delta": check_epsilon_delta}
    for module in [m for name, m in list(sys.modules.items())
                   if name.startswith("dptoolkit") and m is not None]:
        for name, fn in patched.items():
            if getattr(module, name, None) is original[name]:
                monkeypatch.setattr(module, name, fn)
    return calls


def test_the_text_vectorizer_checks_epsilon_once(monkeypatch):
    """Fails on the code where the vectorizer had no constraint table (its plan
    range-checked epsilon by hand)."""
    from dptoolkit.feature_extraction import DPTfidfVectorizer

    vec = DPTfidfVectorizer(epsilon=1.0, use_idf=True, n_samples_public=3, random_state=0)
    calls = _epsilon_checks(monkeypatch)
    vec.fit(["a b c", "b c d", "c d e"])
    assert calls == [("validate_params", "DPTfidfVectorizer")], calls


def _data(n=120, d=40, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="csr", random_state=seed)
    X.data[:] = 1.0
    y = (rng.random(n) < 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("make", [
    lambda: FrankWolfeLassoClassifier(epsilon=1.0, max_iter=20, n_samples_public=120,
                                      classes=[0, 1], random_state=0),
    lambda: FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=20, k=10,
                                      n_samples_public=120, classes=[0, 1], random_state=0),
    lambda: DPNBLogisticClassifier(epsilon=1.0, n_epochs=1, n_samples_public=120,
                                   classes=[0, 1], random_state=0),
    lambda: DPIGHTClassifier(epsilon=1.0, max_iter=5, sparsity=5, n_samples_public=120,
                             classes=[0, 1], random_state=0),
    lambda: DPSGDClassifier(epsilon=1.0, n_epochs=1, n_samples_public=120, classes=[0, 1],
                            random_state=0),
], ids=["frank_wolfe", "frank_wolfe_screened", "dpnb", "dp_ight", "dp_sgd"])
def test_a_fit_checks_epsilon_once(make, monkeypatch):
    """Fails on the code where the budget split and the calibrations re-checked
    epsilon (Frank-Wolfe's path entered the validators four times)."""
    est = make()
    X, y = _data()
    calls = _epsilon_checks(monkeypatch)
    est.fit(X, y)
    assert est.privacy_spent_ is not None
    assert calls == [("validate_params", type(est).__name__)], calls
