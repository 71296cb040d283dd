"""One calibration path: every estimator's noise comes from the event accountant.

A spy on :func:`dptoolkit.accounting.epsilon_of_event`, as seen by
:func:`~dptoolkit.accounting.calibrate_parameter` (the toolkit's one calibration
routine), records every event the calibration evaluates during a fit.  A fitted
estimator whose noise scale or per-step budget is searched must release an
event that this search evaluated and found within the budget; one whose
mechanisms take the user's epsilon in closed form (Laplace or exponential
selections at a given epsilon, no search) must release only pure-DP leaves whose
basic composition is the stated epsilon.  Either way ``privacy_spent_`` is
:func:`~dptoolkit.accounting.epsilon_of_event` of the released event.  A static
check forbids the RDP utilities (``RDPAccountant``, ``MomentsAccountant``,
``calibrate_noise_multiplier``) anywhere in the package outside ``accounting/``.
"""
import ast
import pathlib

import numpy as np
import pytest

import dptoolkit
import dptoolkit.accounting._accountant as accountant_module
from dptoolkit.accounting import basic_guarantee, epsilon_of_event
from dptoolkit.accounting import events as ev
from dptoolkit.linear_model._glm import _base as glm_base
from dptoolkit.model_selection import _search as search_module

from test_noise_handles import FACTORIES, FACTORIES_NESTED, _data

#: Estimators whose mechanisms take epsilon in closed form (no search).
CLOSED_FORM = {"SparsifiedLassoClassifier", "DPSIS", "TwoStageSelector", "DPSIS-peeling",
               "search-of-sparsifier"}
#: Estimators composed of a closed-form part and a calibrated child.
COMPOSED = {"PrivateSelectThenFit", "PrivateSelectThenFit-total"}
ALL = {**FACTORIES, **FACTORIES_NESTED}
# advanced composition (more steps than basic composition pays for): the per-step
# epsilon is searched on the event the fit releases
ALL.update({f"{name}-advanced": (
    lambda make=ALL[name][0]: make().set_params(composition="advanced", max_iter=400), kind)
    for name, kind in (("FrankWolfeLassoClassifier", "binary"),
                       ("FrankWolfe-multinomial", "multinomial"))})


def _fit_with_spy(name, monkeypatch):
    make, kind = ALL[name]
    evaluated = []
    original = accountant_module.epsilon_of_event

    def spy(event, delta, **kwargs):
        evaluated.append(event)
        return original(event, delta, **kwargs)

    # memoised calibrations (functions of public quantities) would hide the search
    glm_base._calibrate.cache_clear()
    monkeypatch.setattr(search_module, "_CALIBRATIONS", {})
    monkeypatch.setattr(accountant_module, "epsilon_of_event", spy)
    X, y = _data("binary" if kind == "multinomial" else kind)
    if kind == "multinomial":
        y = np.arange(y.shape[0]) % 3
    estimator = make().fit(X, y)
    monkeypatch.setattr(accountant_module, "epsilon_of_event", original)
    return estimator, evaluated


def _pure_leaves(event):
    children = ev.child_events(event)
    if not children:
        return [event]
    return [leaf for child in children for leaf in _pure_leaves(child)]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(ALL))
def test_released_event_comes_from_the_accountant(name, monkeypatch):
    estimator, evaluated = _fit_with_spy(name, monkeypatch)
    event = estimator.privacy_event_
    epsilon, delta = estimator.privacy_spent_
    assert epsilon == pytest.approx(epsilon_of_event(event, delta), rel=1e-12)
    if name in CLOSED_FORM:
        assert not evaluated, f"{name} searched a parameter outside the declared path"
        for leaf in _pure_leaves(event):
            assert isinstance(leaf, (ev.PureDPEvent, ev.ExponentialMechanismEvent,
                                     ev.LaplaceEvent, ev.ApproxDPEvent, ev.NoOpEvent)), leaf
        assert basic_guarantee(event)[0] <= estimator.epsilon * (1 + 1e-9)
    elif name in COMPOSED:
        assert any(child in evaluated for child in ev.child_events(event)), name
    else:
        assert event in evaluated, f"{name} released an event the calibration never saw"
        assert epsilon <= estimator.epsilon * (1 + 1e-12)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["DPSGDClassifier", "DPNBLogisticClassifier",
                                  "DPIGHTClassifier"])
def test_the_noise_multiplier_is_the_calibrated_one(name, monkeypatch):
    estimator, evaluated = _fit_with_spy(name, monkeypatch)
    sigmas = ev.noise_multipliers(estimator.privacy_event_)
    calibrated = {s for e in evaluated for s in ev.noise_multipliers(e)}
    assert sigmas and set(sigmas) <= calibrated
    if getattr(estimator, "noise_multiplier_", None) is not None:
        assert estimator.noise_multiplier_ in sigmas


#: Accounting utilities that an estimator must not calibrate with.
SECOND_PATHS = {"RDPAccountant", "MomentsAccountant", "calibrate_noise_multiplier",
                "per_step_epsilon"}


def test_no_second_calibration_routine_in_the_package():
    root = pathlib.Path(dptoolkit.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.relative_to(root).parts[0] == "accounting":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ()
            if isinstance(node, ast.ImportFrom):
                names = [alias.name for alias in node.names]
            elif isinstance(node, (ast.Name, ast.Attribute)):
                names = [node.id if isinstance(node, ast.Name) else node.attr]
            offenders += [f"{path.relative_to(root)}:{node.lineno} {n}"
                          for n in names if n in SECOND_PATHS]
    assert not offenders, offenders
