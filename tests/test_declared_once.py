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
        # a validation that runs (not one of parameters already validated by the
        # caller: dptoolkit._validation.trusted_parameters)
        if ("epsilon" in estimator.get_params(deep=False)
                and not validation.parameters_trusted(estimator)):
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


@pytest.mark.parametrize("make", [
    lambda: __import__("dptoolkit.selection", fromlist=["DPSIS"]).DPSIS(
        k=5, epsilon=1.0, n_samples_public=120, random_state=0),
    lambda: __import__("dptoolkit.selection", fromlist=["TwoStageSelector"]).TwoStageSelector(
        k=5, epsilon=1.0, random_state=0),
], ids=["dpsis", "two_stage"])
def test_a_selector_checks_epsilon_once(make, monkeypatch):
    """Fails on the code where the selectors' top-k (canonical Lipschitz) re-checked
    the epsilon their constraint table had validated."""
    est = make()
    X, y = _data()
    X = X.toarray()
    calls = _epsilon_checks(monkeypatch)
    est.fit(X, 2.0 * y - 1.0)
    assert calls == [("validate_params", type(est).__name__)], calls


def test_the_sparsifier_checks_epsilon_once(monkeypatch):
    """Its inner Frank-Wolfe (built from the Sparsifier's validated values) is not
    validated again; the count's double-geometric mechanism checks its own
    ``epsilon_count`` (a different parameter: the mechanism's public constructor
    validates its arguments).  Fails on the code where the inner fit re-validated."""
    from dptoolkit.linear_model import SparsifiedLassoClassifier

    est = SparsifiedLassoClassifier(epsilon=1.0, max_iter=20, n_samples_public=120,
                                    classes=[0, 1], random_state=0)
    X, y = _data()
    calls = _epsilon_checks(monkeypatch)
    est.fit(X, y)
    assert calls[0] == ("validate_params", "SparsifiedLassoClassifier"), calls
    assert all(c[0] != "validate_params" for c in calls[1:]), calls
    assert len(calls) <= 3, calls     # the count mechanism's one check_epsilon_delta


@pytest.mark.parametrize("model", ["frank-wolfe", "dp-nb-logistic", "dp-sgd", "dp-scd",
                                   "dp-ight"])
def test_the_command_line_validates_epsilon_once(model, monkeypatch, capsys):
    """``python -m dptoolkit train --epsilon 1`` (in-process) to the kernel: the
    options are validated before the data are read, and the fit trusts them.  Fails
    on the code where the fit (and the data-budget note) validated them again."""
    from dptoolkit.cli import main

    calls = _epsilon_checks(monkeypatch)
    argv = ["train", "--model", model, "--epsilon", "1", "--synthetic-samples", "300",
            "--synthetic-features", "60", "--n-samples-public", "225"]
    if model == "frank-wolfe":
        argv += ["--max-iter", "20"]
    main(argv)
    assert calls == [("validate_params", calls[0][1])], calls
