"""The private-estimator contract, checked in one place for every private
estimator and selector of the toolkit (``dptoolkit._private``):

(a) ``accountant=`` is a parameter; a private fit sets ``privacy_event_`` (a
    PrivacyEvent) and ``privacy_spent_``;
(b) the reported spend is what the accountant computes from the event
    (``epsilon_of_event(privacy_event_, privacy_spent_[1])``), up to the
    calibration tolerance -- or, where the report is deliberately looser,
    at least as large;
(c) an accountant that cannot pay raises BudgetExceededError before any work
    (spies on the kernels record no call) and keeps its ledger unchanged;
(d) an accountant that can pay is charged exactly once, with
    ``privacy_spent_`` and ``privacy_event_``;
(e) ``accountant="acc"`` raises TypeError naming ``accountant``;
(f) non-private fits (where allowed) set ``privacy_event_ = None`` and charge
    nothing;
(g) ``privacy_event_.to_dp_accounting()`` works (dp-accounting installed).

All on tiny synthetic problems (a few hundred microseconds of kernel each).
"""
import dataclasses
import functools
import importlib
import math
import warnings

import numpy as np
import pytest

from dptoolkit.accounting import BudgetAccountant, epsilon_of_event
from dptoolkit.accounting.events import PrivacyEvent
from dptoolkit.exceptions import BudgetExceededError
from dptoolkit.linear_model import (
    DPIGHTClassifier,
    DPNBLogisticClassifier,
    DPSCDClassifier,
    DPSCDRegressor,
    DPSGDClassifier,
    DPSGDRegressor,
    FrankWolfeLassoClassifier,
    SparsifiedLassoClassifier,
)
from dptoolkit.selection import DPSIS, PrivateSelectThenFit, TwoStageSelector

N, D = 60, 8

#: Whether an exponential-mechanism event can carry a bounded-range parameter
#: separate from its pure epsilon.  Without it a floating-point Frank-Wolfe step,
#: eps0-DP but (eps0 + 2 gamma)-bounded-range, is recorded with eps0 + 2 gamma
#: for both, and the event of a pure-DP fit overstates its spend by 2 T gamma.
_FW_KERNELS = ("dptoolkit.linear_model._frank_wolfe._fw_fast:FastFW",
               "dptoolkit.linear_model._frank_wolfe._fw_fast:StandardFW",
               "dptoolkit.linear_model._frank_wolfe._fw_multinomial_fast:MultinomialFW")
_SIS_WORK = ("dptoolkit.selection._sis:DPSIS._scores",
             "dptoolkit.selection._sis:_canonical_lipschitz",
             "dptoolkit.selection._sis:peeling_top_k")


def _data(kind):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(N, D))
    if kind == "binary":
        y = (X[:, 0] + X[:, 1] > 0).astype(int)
    elif kind == "multinomial":
        y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])          # 3 classes
    else:                                                        # regression
        y = np.clip(X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=N), -1.0, 1.0)
    return X, y


@dataclasses.dataclass
class Case:
    """One private estimator: how to build it, its data, where its work happens."""
    name: str
    make: object            # (**overrides) -> estimator
    data: str
    spies: tuple            # "module:attr[.attr]" of the work the fit must not start
    nonprivate: dict = None     # overrides of a valid non-private fit (epsilon=None)
    exact: bool = True      # privacy_spent_[0] == epsilon_of_event(...) (else only <=)
    why_looser: str = ""


def _fw(**kw):
    return FrankWolfeLassoClassifier(**{"max_iter": 20, "epsilon": 1.0, "delta": 1e-5,
                                        "l1_bound": 2.0, "random_state": 0, **kw})


_FW_NONPRIVATE = {"epsilon": None, "delta": None}
_NONPRIVATE = {"epsilon": None}

CASES = [
    Case("FrankWolfe-binary", _fw, "binary", _FW_KERNELS, nonprivate=_FW_NONPRIVATE),
    Case("FrankWolfe-binary-pure", functools.partial(_fw, delta=None), "binary",
         _FW_KERNELS, nonprivate=_FW_NONPRIVATE),
    Case("FrankWolfe-pure-exponential",
         functools.partial(_fw, delta=None, mechanism="exponential"), "binary",
         _FW_KERNELS),
    Case("FrankWolfe-advanced", functools.partial(_fw, composition="advanced"), "binary",
         _FW_KERNELS, exact=False,
         why_looser="composition='advanced' splits the budget by Dwork-Rothblum-Vadhan "
                    "(reproduction of Raff, Khanna and Lu (2023)); the accountant composes the same "
                    "exponential-mechanism steps in Renyi DP, which is tighter"),
    Case("FrankWolfe-laplace", functools.partial(_fw, mechanism="laplace"), "binary",
         _FW_KERNELS, exact=False,
         why_looser="Laplace report-noisy-max steps are split by advanced or basic "
                    "composition; the accountant also has their Renyi-DP bound "
                    "(epsilon^2/2 zCDP, Bun and Steinke 2016), which can be tighter"),
    Case("FrankWolfe-multinomial", _fw, "multinomial", _FW_KERNELS,
         nonprivate=_FW_NONPRIVATE),
    Case("Sparsifier",
         lambda **kw: SparsifiedLassoClassifier(**{
             "max_iter": 20, "nonprivate_max_iter": 30, "epsilon": 1.0,
             "epsilon_count": 0.1, "delta": None, "mechanism": "laplace",
             "random_state": 0, **kw}),
         "binary",
         _FW_KERNELS + ("dptoolkit.linear_model._sparsifier:_nonprivate_coef",
                        "dptoolkit.linear_model._sparsifier:noisy_count"),
         nonprivate=_FW_NONPRIVATE),
    Case("Sparsifier-delta",
         lambda **kw: SparsifiedLassoClassifier(**{
             "max_iter": 20, "nonprivate_max_iter": 30, "epsilon": 1.0,
             "epsilon_count": 0.1, "delta": 1e-5, "mechanism": "grouped",
             "random_state": 0, **kw}),
         "binary",
         _FW_KERNELS + ("dptoolkit.linear_model._sparsifier:_nonprivate_coef",
                        "dptoolkit.linear_model._sparsifier:noisy_count"),
         exact=False,
         why_looser="privacy_spent_ is the basic composition of the count (epsilon_1, "
                    "pure) and the private fit (epsilon_2, delta) (Khanna, Lu and Raff (2023), Theorem 3); "
                    "their composed event in Renyi DP is smaller (e.g. 0.81 instead of 1.0 "
                    "with the Laplace selector at T=200)"),
    Case("DPIGHT",
         lambda **kw: DPIGHTClassifier(**{
             "sparsity": 3, "max_iter": 20, "epsilon": 1.0, "delta": 1e-5,
             "n_samples_public": N, "random_state": 0, **kw}),
         "binary", ("dptoolkit.linear_model._glm._ight_fast:ight",), nonprivate=_NONPRIVATE),
    Case("DPSCDClassifier",
         lambda **kw: DPSCDClassifier(**{
             "epsilon": 1.0, "n_samples_public": N, "batch_size": 10, "n_epochs": 2,
             "random_state": 0, **kw}),
         "binary", ("dptoolkit.linear_model._glm._scd_fast:dual_scd",
                   "dptoolkit.linear_model._glm._scd_fast:primal_scd"),
         nonprivate=_NONPRIVATE),
    Case("DPIGHT-multinomial",
         lambda **kw: DPIGHTClassifier(**{
             "sparsity": 3, "max_iter": 20, "epsilon": 1.0, "delta": 1e-5,
             "n_samples_public": N, "random_state": 0, **kw}),
         "multinomial", ("dptoolkit.linear_model._glm._ight_fast:ight_softmax",),
         nonprivate=_NONPRIVATE),
    Case("DPSCDClassifier-one-vs-rest",
         lambda **kw: DPSCDClassifier(**{
             "epsilon": 1.0, "n_samples_public": N, "batch_size": 10, "n_epochs": 2,
             "multi_class": "ovr", "random_state": 0, **kw}),
         "multinomial", ("dptoolkit.linear_model._glm._scd_fast:dual_scd",
                         "dptoolkit.linear_model._glm._scd_fast:primal_scd"),
         nonprivate=_NONPRIVATE),
    Case("DPSCDClassifier-multinomial",
         lambda **kw: DPSCDClassifier(**{
             "epsilon": 1.0, "n_samples_public": N, "batch_size": 10, "n_epochs": 2,
             "random_state": 0, **kw}),
         "multinomial", ("dptoolkit.linear_model._glm._scd:_softmax_dual_scd",
                         "dptoolkit.linear_model._glm._scd_fast:dual_scd"),
         nonprivate=_NONPRIVATE),
    Case("DPSGDClassifier-multinomial",
         lambda **kw: DPSGDClassifier(**{
             "epsilon": 1.0, "n_samples_public": N, "batch_size": 10, "n_epochs": 2,
             "random_state": 0, **kw}),
         "multinomial", ("dptoolkit.linear_model._glm._sgd_fast:dpsgd_softmax",),
         nonprivate=_NONPRIVATE),
    Case("DPSCDRegressor",
         lambda **kw: DPSCDRegressor(**{
             "epsilon": 1.0, "n_samples_public": N, "batch_size": 10, "n_epochs": 2,
             "random_state": 0, **kw}),
         "regression", ("dptoolkit.linear_model._glm._scd_fast:dual_scd",
                   "dptoolkit.linear_model._glm._scd_fast:primal_scd"),
         nonprivate=_NONPRIVATE),
    Case("DPSGDClassifier",
         lambda **kw: DPSGDClassifier(**{
             "epsilon": 1.0, "n_samples_public": N, "batch_size": 10, "n_epochs": 2,
             "random_state": 0, **kw}),
         "binary", ("dptoolkit.linear_model._glm._sgd_fast:dpsgd",), nonprivate=_NONPRIVATE),
    Case("DPSGDRegressor",
         lambda **kw: DPSGDRegressor(**{
             "epsilon": 1.0, "n_samples_public": N, "batch_size": 10, "n_epochs": 2,
             "random_state": 0, **kw}),
         "regression", ("dptoolkit.linear_model._glm._sgd_fast:dpsgd",), nonprivate=_NONPRIVATE),
    Case("DPSIS",
         lambda **kw: DPSIS(**{"k": 3, "epsilon": 1.0, "random_state": 0, **kw}),
         "regression", _SIS_WORK, nonprivate=_NONPRIVATE),
    Case("DPSIS-peeling",
         lambda **kw: DPSIS(**{"k": 3, "epsilon": 1.0, "mechanism": "peeling",
                               "random_state": 0, **kw}),
         "regression", _SIS_WORK, nonprivate=_NONPRIVATE),
    Case("DPSIS-gaussian",
         lambda **kw: DPSIS(**{"k": 3, "epsilon": 1.0, "delta": 1e-5, "mechanism": "gaussian",
                               "random_state": 0, **kw}),
         "regression", _SIS_WORK, nonprivate=_FW_NONPRIVATE),
    Case("TwoStageSelector",
         lambda **kw: TwoStageSelector(**{"k": 3, "epsilon": 1.0, "n_blocks": 5,
                                          "random_state": 0, **kw}),
         "regression",
         ("dptoolkit.selection._two_stage:_support_counts",
          "dptoolkit.selection._two_stage:_block_labels",
          "dptoolkit.selection._two_stage:_canonical_lipschitz",
          "dptoolkit.selection._two_stage:peeling_top_k"), nonprivate=_NONPRIVATE),
    Case("PrivateSelectThenFit",
         lambda **kw: PrivateSelectThenFit(
             DPSIS(k=3, epsilon=0.5, y_bounds=(0.0, 1.0), random_state=0),
             _fw(epsilon=1.0), **{"epsilon": None, **kw}),
         "binary", _SIS_WORK + _FW_KERNELS, exact=False,
         why_looser="privacy_spent_ is the basic composition (sum) of the two steps; "
                    "the composed event is accounted in Renyi DP, which can be smaller"),
    Case("PrivateSelectThenFit-total",
         lambda **kw: PrivateSelectThenFit(
             DPSIS(k=3, y_bounds=(0.0, 1.0), random_state=0, epsilon=None),
             _fw(epsilon=None, delta=None), **{"epsilon": 1.0, "delta": 1e-5, **kw}),
         "binary", _SIS_WORK + _FW_KERNELS),
]
CASES.append(Case(       # Frank-Wolfe's release on all the selected columns: its start
    "PrivateSelectThenFit-start",
    lambda **kw: PrivateSelectThenFit(
        DPSIS(k=3, y_bounds=(0.0, 1.0), random_state=0, epsilon=None),
        _fw(epsilon=None, delta=None, start="naive_bayes"),
        **{"epsilon": 1.0, "delta": 1e-5, **kw}),
    "binary", _SIS_WORK + _FW_KERNELS
    + ("dptoolkit.linear_model._frank_wolfe._kernels:private_top_columns",)))
CASES.insert(3, Case(
    "FrankWolfe-screening", functools.partial(_fw, k=4), "binary",
    _FW_KERNELS + ("dptoolkit.linear_model._frank_wolfe._kernels:private_top_columns",)))
CASES.insert(4, Case(
    "FrankWolfe-start", functools.partial(_fw, k=4, start="naive_bayes"), "binary",
    _FW_KERNELS + ("dptoolkit.linear_model._frank_wolfe._kernels:private_top_columns",
                   "dptoolkit.linear_model._frank_wolfe._estimator:naive_bayes_start")))
CASES.append(Case(
    "DPNBLogistic",
    lambda **kw: DPNBLogisticClassifier(**{"epsilon": 1.0, "k": 4,
                                           "n_samples_public": N, "n_epochs": 2,
                                           "random_state": 0, **kw}),
    "binary", ("dptoolkit.linear_model._glm._sgd_fast:dpsgd",
               "dptoolkit.linear_model._glm._nb_logistic:class_feature_sums"), nonprivate=_NONPRIVATE))


# ------------------------------------------------------- the discovered estimators
#: Discovered private estimators whose contract is checked in another file (their
#: input is not a numeric matrix, or they are private only through a search).
_CHECKED_ELSEWHERE = {
    "DPTfidfVectorizer": "raw documents; its contract: tests/test_feature_extraction.py",
    "PrivateHyperparameterSearch": "runs private fits of another estimator; its "
                                   "contract: tests/test_model_selection.py",
}


def _private_estimators():
    from dptoolkit._discovery import all_estimators
    from dptoolkit._private import PrivateEstimatorMixin

    return [cls for _, cls in all_estimators() if issubclass(cls, PrivateEstimatorMixin)]


def generic_case(cls):
    """The contract case of a discovered private estimator without a hand-written
    one: its defaults at ``epsilon=1.0`` with the public N, on the binary problem
    for a classifier and the regression one otherwise; no spies (its work is not
    known here: (c) and (d) then check the ledger and the fitted attributes)."""
    import inspect

    from sklearn.base import is_classifier

    taken = inspect.signature(cls).parameters
    base = {k: v for k, v in {"epsilon": 1.0, "n_samples_public": N,
                              "random_state": 0}.items() if k in taken}

    def make(**kw):
        return cls(**{**base, **kw})

    data = "binary" if is_classifier(make()) else "regression"
    nonprivate = _NONPRIVATE if _fits_without_privacy(make, data) else None
    return Case(cls.__name__, make, data, (), nonprivate=nonprivate)


def _fits_without_privacy(make, data):
    X, y = _data(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make(epsilon=None).fit(X, y)
    except (TypeError, ValueError):
        return False
    return True


def discovered_cases():
    """A generic case for every discovered private estimator without a hand case
    (e.g. one registered from outside the package), so that none is left out."""
    covered = {type(c.make()) for c in _HAND_CASES}
    return [generic_case(cls) for cls in _private_estimators()
            if cls not in covered and cls.__name__ not in _CHECKED_ELSEWHERE]


def test_every_private_estimator_of_the_package_has_a_case():
    """The package's own private estimators have a hand case (with spies on their
    work) or are checked elsewhere; this fails when a new one has neither."""
    covered = {type(c.make()) for c in _HAND_CASES}
    missing = [cls.__name__ for cls in _private_estimators()
               if cls.__module__.startswith("dptoolkit.") and cls not in covered
               and cls.__name__ not in _CHECKED_ELSEWHERE]
    assert not missing, f"add a Case (with its work's spies) for {missing}"


_HAND_CASES = list(CASES)
CASES += discovered_cases()
IDS = [c.name for c in CASES]
B_PARAMS = [pytest.param(c, id=c.name) for c in CASES]


def _resolve(target):
    module, attr = target.split(":")
    obj = importlib.import_module(module)
    *path, name = attr.split(".")
    for part in path:
        obj = getattr(obj, part)
    return obj, name


@pytest.fixture
def spies(monkeypatch):
    """Install call-through recording spies on the given work functions."""
    calls = []

    def install(targets):
        for target in targets:
            owner, name = _resolve(target)
            original = getattr(owner, name)

            def spy(*args, _original=original, _target=target, **kwargs):
                calls.append(_target)
                return _original(*args, **kwargs)

            monkeypatch.setattr(owner, name, spy)
        return calls

    return install


def _fit(est, kind):
    X, y = _data(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # clipping / public-size warnings
        return est.fit(X, y)


def _ledger(acc):
    return list(acc.spends), list(acc.events)


# ------------------------------------------------------------- the public label set
_CLASSIFIER_PARAMS = [pytest.param(c, id=c.name) for c in CASES
                      if c.data in ("binary", "multinomial")]


@pytest.mark.parametrize("case", _CLASSIFIER_PARAMS)
def test_classifiers_take_the_public_label_set(case):
    """Every private classifier takes ``classes``: declared, the fit never reads
    the label set from y (no PrivacyLeakWarning about it, classes_ as declared);
    None, a private fit warns that it was read from the data."""
    from dptoolkit.exceptions import PrivacyLeakWarning

    X, y = _data(case.data)
    declared = np.unique(y)
    assert case.make().get_params(deep=False)["classes"] is None
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est = case.make(classes=declared).fit(X, y)
    assert not [w for w in rec if issubclass(w.category, PrivacyLeakWarning)
                and "label set" in str(w.message)]
    np.testing.assert_array_equal(est.classes_, declared)
    with pytest.warns(PrivacyLeakWarning, match="label set was read from the data"):
        case.make().fit(X, y)


# ------------------------------------------------------------------------- (a), (b)
@pytest.mark.parametrize("case", B_PARAMS)
def test_private_fit_reports_event_and_spend(case):
    est = case.make()
    assert "accountant" in est.get_params(deep=False)
    assert est.get_params(deep=False)["accountant"] is None
    _fit(est, case.data)
    assert isinstance(est.privacy_event_, PrivacyEvent)
    eps, delta = est.privacy_spent_
    assert isinstance(eps, float) and isinstance(delta, float)
    assert 0.0 < eps < math.inf and 0.0 <= delta < 1.0
    # the spy check: the reported guarantee is what the accountant computes from
    # the steps that ran
    computed = epsilon_of_event(est.privacy_event_, delta)
    assert computed <= eps * (1 + 1e-9), (computed, eps)
    if case.exact:
        assert computed >= eps * (1 - 1e-6), (computed, eps)
    else:
        assert case.why_looser


@pytest.mark.parametrize("selector,n_features,max_iter", [
    ("grouped", 8, 20), ("grouped", 2 ** 20, 1000), ("noisy_max", 2 ** 20, 1000)])
def test_frank_wolfe_pure_event_is_exact(selector, n_features, max_iter):
    # A pure-DP Frank-Wolfe fit (delta=None): privacy_spent_ is T eps0 (T steps,
    # each eps0-DP in floating point, eps0 = eps' + 2 gamma); the event records eps0
    # as the pure parameter and eps0 + 2 gamma as the bounded-range one, so its
    # basic composition is the reported spend exactly.
    budget = _fw(delta=None, mechanism=selector, max_iter=max_iter).budget(n_features)
    computed = epsilon_of_event(budget.event, budget.delta)
    assert budget.epsilon == 1.0
    assert computed == pytest.approx(budget.epsilon, rel=1e-12)
    step = budget.event.events[0].event
    assert step.bounded_range > step.epsilon


def test_pipeline_event_is_the_composition_of_its_steps():
    est = CASES[IDS.index("PrivateSelectThenFit")].make()
    _fit(est, "binary")
    assert est.privacy_event_.events == (est.selector_.privacy_event_,
                                         est.estimator_.privacy_event_)
    s1, s2 = est.selector_.privacy_spent_, est.estimator_.privacy_spent_
    # the accountant's figure for the composed event, at the summed delta: at most
    # the sum of the steps' figures
    assert est.privacy_spent_ == (epsilon_of_event(est.privacy_event_, s1[1] + s2[1]),
                                  s1[1] + s2[1])
    assert est.privacy_spent_[0] <= (s1[0] + s2[0]) * (1 + 1e-12)


# ----------------------------------------------------------------------------- (c)
@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("composition", ["basic", "events"])
def test_insufficient_accountant_refuses_before_any_work(case, composition, spies):
    fitted = _fit(case.make(), case.data)
    eps, delta = fitted.privacy_spent_
    budget_delta = max(2 * delta, 1e-3)
    if composition == "events":      # what the fit costs when events are composed
        eps = min(eps, epsilon_of_event(fitted.privacy_event_, budget_delta))
    acc = BudgetAccountant(epsilon=0.5 * eps + 0.01, delta=budget_delta,
                           composition=composition)
    acc.spend(0.01, 0.0, label="earlier release")
    before = _ledger(acc)
    calls = spies(case.spies)
    est = case.make(accountant=acc)
    with pytest.raises(BudgetExceededError):
        _fit(est, case.data)
    assert calls == []                                  # no kernel / inner work ran
    assert _ledger(acc) == before                       # ledger untouched
    for attr in ("privacy_spent_", "privacy_event_", "coef_", "support_",
                 "selected_features_", "estimator_", "selector_"):
        assert not hasattr(est, attr), attr


# ----------------------------------------------------------------------------- (d)
@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("composition", ["basic", "events"])
def test_sufficient_accountant_is_charged_once(case, composition, spies):
    calls = spies(case.spies)
    acc = BudgetAccountant(epsilon=100.0, delta=0.5, composition=composition)
    est = _fit(case.make(accountant=acc), case.data)
    assert calls or not case.spies                      # the spies watch the real work
    assert len(acc.spends) == 1 and len(acc.events) == 1
    assert acc.spends[0][:2] == est.privacy_spent_
    assert acc.events[0] == est.privacy_event_
    assert acc.spends[0][2]                             # labelled
    assert est.accountant is acc                        # __init__ only stores it


# ----------------------------------------------------------------------------- (e)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_accountant_must_be_an_accountant(case, spies):
    calls = spies(case.spies)
    with pytest.raises(TypeError, match="accountant"):
        _fit(case.make(accountant="acc"), case.data)
    assert calls == []


# ----------------------------------------------------------------------------- (f)
NONPRIVATE = [c for c in CASES if c.nonprivate]


@pytest.mark.parametrize("case", NONPRIVATE, ids=[c.name for c in NONPRIVATE])
def test_non_private_fit_charges_nothing(case):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    est = _fit(case.make(**case.nonprivate, accountant=acc), case.data)
    assert est.privacy_event_ is None
    assert est.privacy_spent_ is None
    assert acc.spends == [] and acc.events == []


@pytest.mark.parametrize("case", [c for c in CASES if not c.nonprivate],
                         ids=[c.name for c in CASES if not c.nonprivate])
def test_always_private_estimators_refuse_epsilon_none(case):
    if case.name == "PrivateSelectThenFit":
        est = PrivateSelectThenFit(DPSIS(k=3, epsilon=1.0), _fw(epsilon=None), epsilon=None)
    else:
        est = case.make(epsilon=None)
    with pytest.raises((TypeError, ValueError), match="epsilon|private"):
        _fit(est, case.data)


# ----------------------------------------------------------------------------- (g)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_event_converts_to_dp_accounting(case):
    dp_accounting = pytest.importorskip("dp_accounting")
    est = _fit(case.make(), case.data)
    converted = est.privacy_event_.to_dp_accounting()
    assert isinstance(converted, dp_accounting.dp_event.DpEvent)


@pytest.mark.parametrize("name", ["DPIGHT", "DPSCDClassifier", "DPSGDRegressor"])
def test_gaussian_events_match_dp_accounting(name):
    # Events made only of (subsampled) Gaussian steps convert exactly: dp-accounting's
    # RDP accountant gives the reported epsilon up to its order grid.
    pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant

    case = CASES[IDS.index(name)]
    est = _fit(case.make(), case.data)
    eps, delta = est.privacy_spent_
    theirs = RdpAccountant().compose(est.privacy_event_.to_dp_accounting()).get_epsilon(delta)
    assert theirs == pytest.approx(eps, rel=2e-2)


# ------------------------------------------------- planning (used by the pipeline)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_plan_spend_on_a_zero_stand_in_matches_the_fit(case, spies):
    # The check step depends on public quantities only: planned on all-zero data of
    # the same shape (same labels), without any work, it gives the fitted event.
    import scipy.sparse as sp

    from dptoolkit._private import plan_spend

    X, y = _data(case.data)
    fitted = _fit(case.make(), case.data)
    calls = spies(case.spies)
    est = case.make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        event, spent = plan_spend(est, sp.csr_array(X.shape), y)
    assert calls == []
    assert not hasattr(est, "privacy_spent_")           # the estimator itself untouched
    assert event == fitted.privacy_event_
    assert spent == pytest.approx(fitted.privacy_spent_, rel=1e-15)


@pytest.mark.parametrize("make,exc,match", [
    (lambda: DPSGDClassifier(learning_rate="fast", epsilon=None), TypeError, "learning_rate"),
    (lambda: DPSGDClassifier(learning_rate=0.0, epsilon=None), ValueError, "learning_rate"),
    (lambda: DPIGHTClassifier(selection_share=0.0, n_samples_public=N, epsilon=None), ValueError,
     "selection_share"),
    (lambda: DPIGHTClassifier(k=0, n_samples_public=N, epsilon=None), ValueError,
     r"\bk\b"),
    (lambda: DPIGHTClassifier(sparsity="most", n_samples_public=N, epsilon=None), TypeError,
     "sparsity"),
    (lambda: SparsifiedLassoClassifier(n_samples_public=0, epsilon=None), ValueError,
     "n_samples_public"),
    (lambda: SparsifiedLassoClassifier(mechanism="magic", epsilon=None), ValueError, "mechanism"),
])
def test_bad_values_of_the_new_defaults(make, exc, match):
    X, y = _data("binary")
    with pytest.raises(exc, match=match):
        make().fit(X, y)
