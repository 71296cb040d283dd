"""No private fit reads the dataset size N silently.

Under add/remove-one neighbouring a neighbour has N +- 1 rows, so N is private:
a private fit either takes it from ``n_samples_public`` (or, where the estimator
has no N, from another public parameter that replaces the data-dependent
default) or warns with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`
naming ``n_samples_public``.  For every private estimator of the toolkit
(discovered by ``dptoolkit._discovery.all_estimators``, an estimator
registered from outside the package included) and each of its variants and ``"auto"`` parameters that can
read N:

(a) two data sets of different true N (300 and 450 rows) with the same public
    parameter (``n_samples_public=400``) give the same ``privacy_event_``,
    ``privacy_spent_`` and the same non-model attributes (``n_iter_``,
    ``n_steps_``, noise multipliers, ``k_``, ``n_samples_used_``, ... -- every
    fitted attribute but the model itself and the mechanism's own noisy
    outputs, listed per case), and no PrivacyLeakWarning about N;
(b) without it, the fit warns (PrivacyLeakWarning naming ``n_samples_public``,
    or the public parameter that replaces N's use),
    or, for the variants that do not read N at all, does not warn and still
    gives the same event and attributes for both sizes.

Exact comparisons on tiny synthetic problems; nothing statistical.
"""
import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit._discovery import all_estimators
from dptoolkit._private import PrivateEstimatorMixin
from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.feature_extraction import DPTfidfVectorizer
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
from dptoolkit.model_selection import PrivateHyperparameterSearch
from dptoolkit.selection import DPSIS, PrivateSelectThenFit, TwoStageSelector

D = 12
SIZES = (300, 450)
N_PUBLIC = {"n_samples_public": 400}

#: Fitted attributes that are the model (or its shape), compared by no case.
MODEL = frozenset({"coef_", "intercept_", "theta_", "classes_", "feature_indices_",
                   "log_count_ratios_", "selected_features_", "support_",
                   "screened_features_", "coef_path_", "intercept_path_",
                   "dual_coef_", "best_estimator_", "best_params_", "estimator_",
                   "vocabulary_", "idf_"})


def _data(n, kind):
    rng = np.random.default_rng(n)
    X = (rng.random((n, D)) < 0.3) * rng.uniform(0.1, 1.0, (n, D))
    score = X[:, 0] + X[:, 1] - X[:, 2] - X[:, 3]
    if kind == "text":          # documents of the columns' words
        words = [f"w{j}" for j in range(D)]
        return [" ".join(w for w, v in zip(words, row) if v) + " common"
                for row in X], (score > 0).astype(int)
    if kind == "binary":
        y = (score > 0).astype(int)
    elif kind == "multinomial":
        y = np.digitize(score, [-0.3, 0.3])
    else:
        y = np.clip(score, -1.0, 1.0)
    return sp.csr_array(X), y


@dataclasses.dataclass
class Case:
    """One private estimator in one configuration."""
    cls: type               # the estimator class covered
    make: object            # (**params) -> estimator; epsilon passed explicitly
    kind: str               # the data: "binary", "multinomial" or "regression"
    public: dict = dataclasses.field(default_factory=lambda: dict(N_PUBLIC))
    reads_n: bool = True    # False: no N is read (no warning without ``public``)
    released: tuple = ()    # scalar attributes that are the mechanism's noisy output
    id: str = ""
    names: str = "n_samples_public"   # what the warning must name


def _fw(**kw):
    return FrankWolfeLassoClassifier(**{"epsilon": 1.0, "delta": 1e-5, "classes": [0, 1],
                                        "random_state": 0, **kw})


def _sparsifier(**kw):
    return SparsifiedLassoClassifier(**{"epsilon": 1.0, "epsilon_count": 0.1,
                                        "classes": [0, 1], "random_state": 0, **kw})


def _scd(cls, *args, **kw):
    return cls(*args, **{"epsilon": 1.0, "random_state": 0, **kw})


CASES = [
    # Frank-Wolfe: l1_bound and max_iter "auto" read N; both fixed read nothing
    Case(FrankWolfeLassoClassifier, _fw, "binary", id="fw-auto"),
    Case(FrankWolfeLassoClassifier, lambda **kw: _fw(max_iter=20, **kw), "binary",
         id="fw-l1_bound-auto"),
    Case(FrankWolfeLassoClassifier, lambda **kw: _fw(l1_bound=2.0, **kw), "binary",
         id="fw-max_iter-auto"),
    Case(FrankWolfeLassoClassifier, lambda **kw: _fw(classes=[0, 1, 2], **kw),
         "multinomial", id="fw-multinomial"),
    Case(FrankWolfeLassoClassifier, lambda **kw: _fw(l1_bound=2.0, max_iter=20, **kw),
         "binary", reads_n=False, id="fw-fixed"),
    # the Sparsifier: its private Frank-Wolfe's "auto"; the count is a release
    Case(SparsifiedLassoClassifier, _sparsifier, "binary", released=("n_nonzero_",),
         id="sparsifier-auto"),
    Case(SparsifiedLassoClassifier, lambda **kw: _sparsifier(max_iter=20, **kw), "binary",
         released=("n_nonzero_",), id="sparsifier-l1_bound-auto"),
    # DP-IGHT: the step eta / N
    Case(DPIGHTClassifier, lambda **kw: DPIGHTClassifier(
        sparsity=3, epsilon=1.0, classes=[0, 1], random_state=0, **kw), "binary",
        id="ight"),
    Case(DPIGHTClassifier, lambda **kw: DPIGHTClassifier(
        sparsity=3, epsilon=1.0, classes=[0, 1, 2], random_state=0, **kw), "multinomial",
        id="ight-multinomial"),
    # DP-SCD: every variant (batch_size, clip and n_epochs "auto" where they apply)
    Case(DPSCDClassifier, lambda **kw: _scd(DPSCDClassifier, classes=[0, 1], **kw),
         "binary", id="scd-dual-auto"),
    Case(DPSCDClassifier, lambda **kw: _scd(DPSCDClassifier, classes=[0, 1],
                                            variant="sequential", batch_size=10, **kw),
         "binary", id="scd-sequential"),
    Case(DPSCDClassifier, lambda **kw: _scd(DPSCDClassifier, "logistic", classes=[0, 1],
                                            variant="primal", batch_size=2, **kw),
         "binary", id="scd-primal-auto"),
    Case(DPSCDClassifier, lambda **kw: _scd(DPSCDClassifier, "logistic", classes=[0, 1],
                                            variant="primal", batch_size=2, n_epochs=2,
                                            **kw),
         "binary", id="scd-primal-fixed-epochs"),
    Case(DPSCDClassifier, lambda **kw: _scd(DPSCDClassifier, classes=[0, 1, 2], **kw),
         "multinomial", id="scd-one-vs-rest"),
    Case(DPSCDRegressor, lambda **kw: _scd(DPSCDRegressor, **kw), "regression",
         id="scd-regressor"),
    Case(DPSCDRegressor, lambda **kw: _scd(DPSCDRegressor, variant="primal", batch_size=2,
                                           n_epochs="auto", **kw),
         "regression", id="scd-regressor-primal-auto"),
    # DP-SGD: q = L/N and the number of steps
    Case(DPSGDClassifier, lambda **kw: _scd(DPSGDClassifier, classes=[0, 1], **kw),
         "binary", id="sgd"),
    Case(DPSGDClassifier, lambda **kw: _scd(DPSGDClassifier, classes=[0, 1, 2], **kw),
         "multinomial", id="sgd-multinomial"),
    Case(DPSGDRegressor, lambda **kw: _scd(DPSGDRegressor, **kw), "regression",
         id="sgd-regressor"),
    # DP-NB: N in the sampling rate and the steps of its DP-SGD stage
    Case(DPNBLogisticClassifier, lambda **kw: DPNBLogisticClassifier(
        epsilon=1.0, classes=[0, 1], k=5, random_state=0, **kw), "binary",
        id="dpnb"),
    Case(DPNBLogisticClassifier, lambda **kw: DPNBLogisticClassifier(
        epsilon=1.0, classes=[0, 1, 2], k=5, random_state=0, **kw),
        "multinomial", id="dpnb-multinomial"),
    # DP-SIS: k="auto", and mechanism="auto" with delta (D > N?); a fixed k reads nothing
    Case(DPSIS, lambda **kw: DPSIS(k="auto", epsilon=1.0, random_state=0, **kw),
         "regression", id="dpsis-k-auto"),
    Case(DPSIS, lambda **kw: DPSIS(k="auto", epsilon=1.0, mechanism="peeling",
                                   random_state=0, **kw),
         "regression", id="dpsis-k-auto-peeling"),
    Case(DPSIS, lambda **kw: DPSIS(k=3, epsilon=1.0, delta=1e-5, random_state=0, **kw),
         "regression", id="dpsis-selector-auto"),
    Case(DPSIS, lambda **kw: DPSIS(k="auto", epsilon=1.0, delta=1e-5,
                                   mechanism="gaussian", random_state=0, **kw),
         "regression", id="dpsis-gaussian-k-auto"),
    Case(DPSIS, lambda **kw: DPSIS(k=3, epsilon=1.0, random_state=0, **kw),
         "regression", reads_n=False, id="dpsis-fixed-k"),
    # the two-stage selector has no N: n_blocks=None is floor(sqrt(N)); a public
    # n_blocks replaces it (under add/remove: its default replace-one makes N public)
    Case(TwoStageSelector, lambda **kw: TwoStageSelector(
        k=3, epsilon=1.0, neighbouring="add_remove", random_state=0, **kw),
         "regression", public={"n_blocks": 17}, names="n_blocks",
         id="two-stage-n_blocks-auto"),
    # select-then-fit: its selector's and estimator's N
    Case(PrivateSelectThenFit, lambda **kw: PrivateSelectThenFit(
        DPSIS(k="auto", y_bounds=(0.0, 1.0), random_state=0), _fw(epsilon=None, delta=None),
        epsilon=1.0, delta=1e-5, **kw), "binary",
        public={"selector__n_samples_public": 400, "estimator__n_samples_public": 400},
        id="select-then-fit"),
    # the search: the split sizes and its runs' N; its best score is a release
    Case(PrivateHyperparameterSearch, lambda **kw: PrivateHyperparameterSearch(
        # the runs' epsilon and delta are the search's (the template's are replaced)
        FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=20),
        {"l1_bound": [1.0, 5.0]}, epsilon=1.0,
        classes=[0, 1], random_state=0, **kw), "binary", released=("best_score_",),
        id="search"),
    # the private text vectorizer: partition selection reads no N; the idf does
    Case(DPTfidfVectorizer, lambda **kw: DPTfidfVectorizer(
        epsilon=1.0, random_state=0, **kw), "text", reads_n=False, id="tfidf-vocabulary"),
    Case(DPTfidfVectorizer, lambda **kw: DPTfidfVectorizer(
        epsilon=1.0, use_idf=True, random_state=0, **kw), "text", id="tfidf-idf"),
]


def _private_estimators():
    """Every private estimator :func:`dptoolkit._discovery.all_estimators` finds
    (one registered from outside the package included)."""
    return {cls for _, cls in all_estimators() if issubclass(cls, PrivateEstimatorMixin)}


def generic_case(cls):
    """The case of a discovered private estimator without a hand-written one (one
    that takes ``n_samples_public``): its defaults at ``epsilon=1.0``, on the binary
    problem for a classifier and the regression one otherwise; its array
    attributes are taken as the model (noisy outputs), its other attributes
    compared."""
    from sklearn.base import is_classifier

    def make(**kw):
        return cls(**{"epsilon": 1.0, "random_state": 0, **kw})

    kind = "binary" if is_classifier(make()) else "regression"
    X, y = _data(SIZES[0], kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = make(**N_PUBLIC).fit(X, y)
    released = tuple(k for k, v in vars(fitted).items() if isinstance(v, np.ndarray))
    return Case(cls, make, kind, released=released, id=cls.__name__)


def discovered_cases():
    """Generic cases for the discovered private estimators without a case that take
    ``n_samples_public`` (e.g. one registered from outside the package)."""
    import inspect

    covered = {case.cls for case in _HAND_CASES}
    return [generic_case(cls) for cls in sorted(_private_estimators() - covered,
                                                key=lambda c: c.__name__)
            if "n_samples_public" in inspect.signature(cls).parameters]


def test_every_private_estimator_has_a_case():
    """The cases cover every private estimator of the package: a new one without
    a case fails here (one registered from outside gets a generic case)."""
    found = {cls for cls in _private_estimators() if cls.__module__.startswith("dptoolkit.")}
    assert found, "no private estimator discovered"
    missing = sorted(c.__name__ for c in found - {case.cls for case in _HAND_CASES})
    assert not missing, f"private estimators without a public-N case: {missing}"


_HAND_CASES = list(CASES)
CASES += discovered_cases()


def _released_attributes(est, released):
    """The fitted attributes that are neither the model nor a noisy output, and
    those of fitted sub-estimators (``estimator_``, ``best_estimator_``), by name."""
    out = {}
    for name, value in vars(est).items():
        if not name.endswith("_") or name.startswith("_") or name in released:
            continue
        if isinstance(value, PrivateEstimatorMixin):
            out.update({f"{name}.{k}": v for k, v in
                        _released_attributes(value, released).items()})
        elif name not in MODEL:
            out[name] = value
    return out


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a) == np.asarray(b)))
    return a == b


def _fit(case, n, **params):
    X, y = _data(n, case.kind)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est = case.make().set_params(**params).fit(X, y)
    n_warnings = [w for w in seen if issubclass(w.category, PrivacyLeakWarning)
                  and case.names in str(w.message)]
    return est, n_warnings


def _assert_same_release(a, b, released):
    assert a.privacy_event_ == b.privacy_event_
    assert a.privacy_spent_ == b.privacy_spent_
    ra, rb = _released_attributes(a, released), _released_attributes(b, released)
    assert ra.keys() == rb.keys()
    differ = sorted(k for k in ra if not _same(ra[k], rb[k]))
    assert not differ, {k: (ra[k], rb[k]) for k in differ}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_public_n_decides_everything_but_the_model(case):
    """(a): with the public parameter, two sizes give one event and the same
    non-model attributes, without a warning about N."""
    fits = [_fit(case, n, **case.public) for n in SIZES]
    for _, leaks in fits:
        assert not leaks, [str(w.message) for w in leaks]
    _assert_same_release(fits[0][0], fits[1][0], case.released)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_n_from_the_data_warns(case):
    """(b): without the public parameter a fit that reads N warns; one that
    does not read N neither warns nor depends on N."""
    fits = [_fit(case, n) for n in SIZES]
    for _, leaks in fits:
        if case.reads_n:
            assert leaks, f"{case.id}: N read from the data without a PrivacyLeakWarning"
        else:
            assert not leaks, [str(w.message) for w in leaks]
    if not case.reads_n:
        _assert_same_release(fits[0][0], fits[1][0], case.released)
