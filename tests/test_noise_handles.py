"""A released model carries no handle on its noise.

After a private fit with ``random_state=None``, nothing reachable from the fitted
object (its attributes, nested estimators, their parameters, recursively; also
after a save/load round trip) is a numpy ``Generator``, ``BitGenerator``,
``SeedSequence`` or ``RandomState``, or an integer seed drawn inside the fit.
Two attacks that worked on the released objects before are replayed against
neighbouring datasets:

(i)  the search's best run kept its drawn seed: the DPNB release noise was
     regenerated from it and the training set identified;
(ii) the Sparsifier's private fit kept the generator that then drew the count
     noise: stepping PCG64 back gave the exact non-private count.

A ``random_state`` given by the user is kept (scikit-learn convention) and
warns, once per process, with a PrivacyLeakWarning (``warn_fixed_noise``,
shared with the command line's ``--seed``).
"""
import inspect
import numbers
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone

import dptoolkit.linear_model
import dptoolkit.model_selection
import dptoolkit.selection
from dptoolkit import _private
from dptoolkit._persistence import load_model, save_model
from dptoolkit._private import PrivateEstimatorMixin, fixed_noise_warning_scope
from dptoolkit.exceptions import PrivacyLeakWarning
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

N, D = 80, 8
_RANDOM_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence,
                 np.random.RandomState)
#: Names whose value, anywhere in a fitted object, must be None after a fit with
#: random_state=None (a seed or a generator by another name is caught by type).
_SEED_NAMES = ("random_state", "seed", "rng", "generator", "bit_generator")
#: Integers drawn inside the fit smaller than this are not taken for seeds (block
#: labels, permutations, K...); seeds are drawn from [0, 2**31) or wider.
_SEED_FLOOR = 2 ** 20


def _data(kind, n=N):
    rng = np.random.default_rng(0)
    X = (rng.random((n, D)) < 0.4).astype(float)
    if kind == "binary":
        y = (X[:, 0] + X[:, 1] + 0.5 * rng.random(n) > 1.0).astype(int)
    else:
        y = np.clip(X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=n), -1.0, 1.0)
    return sp.csr_array(X), y


def _fw(**kw):
    return FrankWolfeLassoClassifier(**{"max_iter": 10, "epsilon": 1.0, "delta": 1e-5,
                                        "l1_bound": 2.0, "n_samples_public": N,
                                        "classes": [0, 1], **kw})


#: One private configuration per private estimator class of the package (the
#: nested ones with random_state=None too), and its data.
FACTORIES = {
    "FrankWolfeLassoClassifier": (_fw, "binary"),
    "SparsifiedLassoClassifier": (lambda: SparsifiedLassoClassifier(
        max_iter=10, nonprivate_max_iter=30, epsilon=1.0, epsilon_count=0.1,
        n_samples_public=N, classes=[0, 1]), "binary"),
    "DPIGHTClassifier": (lambda: DPIGHTClassifier(
        sparsity=3, max_iter=10, epsilon=1.0, delta=1e-5, n_samples_public=N,
        classes=[0, 1]), "binary"),
    "DPSCDClassifier": (lambda: DPSCDClassifier(
        epsilon=1.0, n_samples_public=N, batch_size=10, n_epochs=2, classes=[0, 1]),
        "binary"),
    "DPSCDRegressor": (lambda: DPSCDRegressor(
        epsilon=1.0, n_samples_public=N, batch_size=10, n_epochs=2), "regression"),
    "DPSGDClassifier": (lambda: DPSGDClassifier(
        epsilon=1.0, n_samples_public=N, batch_size=10, n_epochs=2, classes=[0, 1]),
        "binary"),
    "DPSGDRegressor": (lambda: DPSGDRegressor(
        epsilon=1.0, n_samples_public=N, batch_size=10, n_epochs=2), "regression"),
    "DPNBLogisticClassifier": (lambda: DPNBLogisticClassifier(
        epsilon=1.0, k=4, n_samples_public=N, n_epochs=2,
        classes=[0, 1]), "binary"),
    "DPSIS": (lambda: DPSIS(k=3, epsilon=1.0), "regression"),
    "TwoStageSelector": (lambda: TwoStageSelector(k=3, epsilon=1.0, n_blocks=4),
                         "regression"),
    "PrivateSelectThenFit": (lambda: PrivateSelectThenFit(
        DPSIS(k=3, epsilon=0.5, y_bounds=(0.0, 1.0)), _fw(n_samples_public=None),
        classes=[0, 1], epsilon=None), "binary"),
    "PrivateHyperparameterSearch": (lambda: PrivateHyperparameterSearch(
        _fw(n_samples_public=None), {"l1_bound": [1.0, 5.0]}, epsilon=1.0,
        n_runs=2.0, n_samples_public=N, classes=[0, 1]), "binary"),
}
# other paths to the noise: the multinomial kernel, private screening, DPSIS's
# peeling selector, the search of a Sparsifier (child streams two levels down)
FACTORIES_NESTED = {
    "search-of-sparsifier": (lambda: PrivateHyperparameterSearch(
        SparsifiedLassoClassifier(max_iter=10, nonprivate_max_iter=30,
                                  epsilon_count=0.05),
        {"l1_bound": [1.0, 5.0]}, epsilon=1.0, delta=0.0, n_runs=2.0,
        n_samples_public=N, classes=[0, 1]), "binary"),
    "DPSIS-peeling": (lambda: DPSIS(k=3, epsilon=1.0, mechanism="peeling"),
                      "regression"),
    "DPSIS-gaussian": (lambda: DPSIS(k=3, epsilon=1.0, delta=1e-5, mechanism="gaussian"),
                       "regression"),
    "FrankWolfe-multinomial": (lambda: _fw(classes=[0, 1, 2]), "multinomial"),
    "DPSGD-multinomial": (lambda: DPSGDClassifier(
        epsilon=1.0, n_samples_public=N, batch_size=10, n_epochs=2, classes=[0, 1, 2]),
        "multinomial"),
    "DPSCD-one-vs-rest": (lambda: DPSCDClassifier(
        epsilon=1.0, n_samples_public=N, batch_size=10, n_epochs=2, classes=[0, 1, 2]),
        "multinomial"),
    "DPIGHT-multinomial": (lambda: DPIGHTClassifier(
        sparsity=3, max_iter=10, epsilon=1.0, delta=1e-5, n_samples_public=N,
        classes=[0, 1, 2]), "multinomial"),
    "FrankWolfe-screening": (lambda: _fw(k=4), "binary"),
    "PrivateSelectThenFit-total": (lambda: PrivateSelectThenFit(
        DPSIS(k=3, y_bounds=(0.0, 1.0)), _fw(epsilon=None, delta=None),
        epsilon=1.0, delta=1e-5, classes=[0, 1]), "binary"),
}


def _private_classes():
    """Every class following the private-estimator contract in the public modules."""
    found = {}
    for module in (dptoolkit.linear_model, dptoolkit.selection,
                   dptoolkit.model_selection):
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isclass(obj) and issubclass(obj, PrivateEstimatorMixin)
                    and issubclass(obj, BaseEstimator)):
                found[name] = obj
    return found


def test_every_private_estimator_is_walked():
    """A private estimator added to the package must be added to FACTORIES."""
    private = set(_private_classes())
    assert private - set(FACTORIES) == set(), "add them to FACTORIES"
    assert {"PrivateHyperparameterSearch", "PrivateSelectThenFit",
            "SparsifiedLassoClassifier"} <= private


class _RecordingGenerator(np.random.Generator):
    """A generator that remembers the integers it draws (seeds among them)."""
    drawn = set()

    def integers(self, *args, **kwargs):
        out = super().integers(*args, **kwargs)
        values = np.asarray(out).ravel()
        _RecordingGenerator.drawn.update(int(v) for v in values[values >= _SEED_FLOOR])
        return out


@pytest.fixture
def recording(monkeypatch):
    """Fits with random_state=None draw from recording generators (OS entropy)."""
    original = _private.check_random_state
    _RecordingGenerator.drawn = set()

    def check(random_state):
        if random_state is None:
            return _RecordingGenerator(np.random.PCG64())
        return original(random_state)

    monkeypatch.setattr(_private, "check_random_state", check)
    return _RecordingGenerator.drawn


def _walk(obj, drawn, path="model", seen=None, found=None):
    """Paths to random handles reachable from ``obj``: generator-like objects,
    non-None values under seed names, integers drawn inside the fit."""
    seen = set() if seen is None else seen
    found = [] if found is None else found
    if isinstance(obj, _RANDOM_TYPES):
        found.append(f"{path}: {type(obj).__name__}")
        return found
    if isinstance(obj, (bool, np.bool_, str, bytes, float, type(None))):
        return found
    if isinstance(obj, numbers.Integral):
        if int(obj) in drawn:
            found.append(f"{path}: int {int(obj)} drawn inside the fit")
        return found
    if id(obj) in seen:
        return found
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "iu" and obj.size and drawn:
            hits = set(np.unique(obj).tolist()) & drawn
            if hits:
                found.append(f"{path}: array holding ints drawn inside the fit")
        elif obj.dtype == object:
            for i, v in enumerate(obj.ravel()):
                _walk(v, drawn, f"{path}[{i}]", seen, found)
        return found
    if sp.issparse(obj):
        return found
    items = []
    if isinstance(obj, dict):
        items = [(f"{path}[{k!r}]", k, v) for k, v in obj.items()]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = [(f"{path}[{i}]", None, v) for i, v in enumerate(obj)]
    else:
        if isinstance(obj, BaseEstimator):
            items += [(f"{path}.get_params()[{k!r}]", k, v)
                      for k, v in obj.get_params(deep=True).items()]
        if hasattr(obj, "__dict__"):
            items += [(f"{path}.{k}", k, v) for k, v in vars(obj).items()]
    for sub, key, value in items:
        if isinstance(key, str) and value is not None and (
                key.split("__")[-1] in _SEED_NAMES or key.endswith("_seed")):
            found.append(f"{sub} = {value!r} (a seed or generator)")
        _walk(value, drawn, sub, seen, found)
    return found


def _all_cases():
    cases = {**FACTORIES, **FACTORIES_NESTED}
    return [pytest.param(make, kind, id=name) for name, (make, kind) in cases.items()]


def _fit(est, kind):
    if kind == "multinomial":
        X, _ = _data("binary")
        y = np.asarray(X[:, [0]].toarray().ravel() + X[:, [1]].toarray().ravel(), int)
    else:
        X, y = _data(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # clipping, convergence notes
        return est.fit(X, y)


@pytest.mark.parametrize("make, kind", _all_cases())
def test_fitted_private_model_holds_no_noise_handle(make, kind, recording, tmp_path):
    est = make()
    assert _walk(est, set()) == []          # nothing random before the fit
    _fit(est, kind)
    assert est.privacy_spent_ is not None
    assert _walk(est, recording) == []
    path = save_model(est, tmp_path / "m.skops")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # version note
        loaded = load_model(path)
    assert _walk(loaded, recording) == []


def test_the_walk_finds_handles():
    """The walk is not blind: a user's Generator, a stored seed and a drawn int."""
    est = _fw(random_state=np.random.default_rng(0))
    assert any("Generator" in f for f in _walk(est, set()))
    assert any("random_state = 5" in f for f in _walk(_fw(random_state=5), set()))
    holder = PrivateSelectThenFit(DPSIS(k=3, epsilon=0.5, random_state=123456789), _fw(),
                                  epsilon=None)
    assert any("selector__random_state" in f for f in _walk(holder, set()))
    assert _walk({"n": 123456789}, {123456789}) != []


def test_select_then_fit_passes_a_parent_stream_on():
    """Run by a parent with a stream, the pipeline's steps draw from children of it:
    the same stream state gives the same fit, and nothing random is kept."""
    from dptoolkit._private import fit_with_stream

    X, y = _data("binary")
    fits = []
    for _ in range(2):
        est = FACTORIES["PrivateSelectThenFit"][0]()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_with_stream(est, np.random.default_rng(11), X, y)
        assert _walk(est, set()) == []
        fits.append(est)
    np.testing.assert_array_equal(fits[0].support_, fits[1].support_)
    np.testing.assert_array_equal(fits[0].estimator_.coef_, fits[1].estimator_.coef_)


# ----------------------------------------------------------- (i) the search's seed
def _candidate_seeds(model):
    """What an attacker can read off a released model to seed a generator with."""
    out = []

    def visit(obj, seen):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, BaseEstimator):
            for key, value in list(obj.get_params(deep=True).items()) + list(
                    vars(obj).items()):
                if key.split("__")[-1] == "random_state" and value is not None:
                    out.append(value)
                visit(value, seen)

    visit(model, set())
    return out


def _dpnb_release(model, X_train, y_train, seed):
    """The log-count ratios DPNB releases on (X_train, y_train) with the noise a
    generator seeded with ``seed`` draws first (the release of its step 1)."""
    from dptoolkit.linear_model._glm._nb_logistic import _unit_rows

    rng = np.random.default_rng(seed) if not isinstance(seed, np.random.Generator) \
        else seed
    y01 = np.asarray(y_train) == 1
    Xn = _unit_rows(sp.csr_array(X_train))
    sums = np.vstack([np.asarray(Xn[~y01].sum(axis=0)).ravel(),
                      np.asarray(Xn[y01].sum(axis=0)).ravel()])
    sigma1 = model.noise_multipliers_[0]
    noisy = sums + rng.normal(0.0, sigma1, sums.shape)
    pos = np.maximum(noisy, 0.0) + sigma1
    return np.log(pos[1]) - np.log(pos[0])


def test_search_release_noise_cannot_be_regenerated(recording):
    """Neighbours D (m copies of a, m of b) and D' = D + target: the search holds
    out one example (n_val = 1), so the training set is D or D' minus one a, one b
    or the target.  With the best run's seed an attacker recomputes the DPNB
    release for each of these training sets; the one that matches exactly tells
    whether the target trained (the attack of the audit).  With random_state=None
    no seed is released, so no hypothesis matches."""
    m, d = 30, 6
    a = np.array([1, 1, 0, 0, 1, 1], float)
    b = np.array([0, 0, 1, 1, 1, 1], float)
    target = np.array([1, 0, 1, 0, 1, 1], float)
    X = np.vstack([np.tile(a, (m, 1)), np.tile(b, (m, 1)), target])
    y = np.r_[np.zeros(m, int), np.ones(m, int), 1]
    est = DPNBLogisticClassifier(epsilon=1.0, k=d, n_epochs=1,
                                 classes=[0, 1])
    search = PrivateHyperparameterSearch(est, {"alpha": [1e-4]}, epsilon=2.0,
                                         n_runs=2.0, validation_fraction=0.01,
                                         n_samples_public=2 * m + 1, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(sp.csr_array(X), y)
    model = search.best_estimator_
    released = model.log_count_ratios_
    hypotheses = {"a held out": np.r_[np.arange(1, m), np.arange(m, 2 * m + 1)],
                  "b held out": np.r_[np.arange(m), np.arange(m + 1, 2 * m + 1)],
                  "target held out": np.arange(2 * m)}
    matches = []
    for seed in _candidate_seeds(model):
        for name, rows in hypotheses.items():
            again = _dpnb_release(model, X[rows], y[rows], seed)
            if np.allclose(again, released, rtol=0, atol=1e-9):
                matches.append(name)
    assert matches == [], f"the released seed regenerates the noise: {matches}"
    assert _walk(search, recording) == []


# ------------------------------------------------------- (ii) the Sparsifier's count
def _count_from_state(model):
    """The count an attacker recovers from a generator left on the fitted model.

    The count noise is the last thing a Sparsifier fit draws: two geometric
    variates (one 64-bit word each, or a few on a rare rejection).  PCG64 steps
    back: for each j, the state j words back that draws the two variates and
    lands exactly on the stored state gives the noise Z, and the released count
    minus Z is the clipped count (``precision=1``, no clipping in this test)."""
    gens = [g for g in _generators_in(model)]
    if not gens:
        return None
    from dptoolkit.mechanisms import DoubleGeometric

    final = gens[0].bit_generator.state
    lo, hi = model.count_bounds_
    p = DoubleGeometric(epsilon=model.epsilon_count, sensitivity=hi - lo).p
    for j in range(2, 12):
        probe = np.random.Generator(np.random.PCG64())
        probe.bit_generator.state = final
        probe.bit_generator.advance(-j)
        z = int(probe.geometric(p, size=()) - probe.geometric(p, size=()))
        if probe.bit_generator.state == final:
            return model.n_nonzero_ - z
    return None


def _generators_in(obj, seen=None):
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.random.Generator):
        yield obj
    elif isinstance(obj, BaseEstimator):
        for value in list(vars(obj).values()) + list(obj.get_params(deep=True).values()):
            yield from _generators_in(value, seen)


@pytest.mark.parametrize("drop", [False, True], ids=["D", "D-minus-one"])
def test_sparsifier_state_does_not_reveal_the_count(drop, recording):
    """On D and on D minus one example (whose non-private counts differ), the
    stored generator gave the exact non-private count.  With random_state=None
    the fitted Sparsifier holds no generator: the count stays hidden."""
    from dptoolkit.linear_model._frank_wolfe import DEFAULT_REFRESH_TOL
    from dptoolkit.linear_model._sparsifier import _nonprivate_coef, NONPRIVATE_TOL

    rng = np.random.default_rng(3)
    n, d = 200, 40
    X = (rng.random((n, d)) < 0.3).astype(float)
    y = (X[:, :5].sum(axis=1) + rng.random(n) > 2.0).astype(int)
    if drop:
        X, y = X[1:], y[1:]
    X = sp.csr_array(X)
    est = SparsifiedLassoClassifier(l1_bound=5.0, max_iter=20, epsilon=1.0,
                                    epsilon_count=0.5, count_bounds=(0, d),
                                    nonprivate_max_iter=100, n_samples_public=n,
                                    classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        coef, _ = _nonprivate_coef(X, y, est.l1_bound, est.nonprivate_solver,
                                   est.nonprivate_max_iter, NONPRIVATE_TOL,
                                   DEFAULT_REFRESH_TOL, np.array([0, 1]))
    true_count = int(np.count_nonzero(coef))
    recovered = _count_from_state(est)
    assert recovered != true_count, "the stored generator gives the count back"
    assert recovered is None
    assert est.estimator_.random_state is None
    assert _walk(est, recording) == []


# --------------------------------------------------------- the user's seed: kept, warned
def test_user_seed_is_kept_and_warns_once_per_process():
    X, y = _data("binary")
    with fixed_noise_warning_scope():
        with pytest.warns(PrivacyLeakWarning, match=r"random_state=0 fixes the noise"):
            est = _fw(random_state=0).fit(X, y)
        assert est.random_state == 0
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            _fw(random_state=1).fit(X, y)       # once per process: already said
    gen = np.random.default_rng(0)
    with fixed_noise_warning_scope():
        with pytest.warns(PrivacyLeakWarning, match=r"random_state \(a Generator\)"):
            est = _fw(random_state=gen).fit(X, y)
    assert est.random_state is gen          # scikit-learn convention: kept as given


def test_no_seed_warning_without_a_user_seed():
    X, y = _data("binary")
    with fixed_noise_warning_scope(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _fw().fit(X, y)
        FrankWolfeLassoClassifier(max_iter=10, random_state=0, epsilon=None).fit(X,
                                                                                 y)   # not private
        FACTORIES["PrivateHyperparameterSearch"][0]().fit(X, y)    # runs: child streams
        SparsifiedLassoClassifier(max_iter=10, nonprivate_max_iter=30, epsilon=1.0,
                                  n_samples_public=N, classes=[0, 1]).fit(X, y)
    assert not [w for w in caught if "fixes the noise" in str(w.message)]


def test_seeded_search_and_sparsifier_are_reproducible():
    """A user's seed still reproduces the fit (child streams derive from it)."""
    X, y = _data("binary")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make in (lambda: clone(FACTORIES["PrivateHyperparameterSearch"][0]()).set_params(
                         random_state=7),
                     lambda: SparsifiedLassoClassifier(
                         max_iter=10, nonprivate_max_iter=30, epsilon=1.0,
                         n_samples_public=N, classes=[0, 1], random_state=7)):
            first, second = make().fit(X, y), make().fit(X, y)
            np.testing.assert_array_equal(getattr(first, "best_estimator_", first).coef_,
                                          getattr(second, "best_estimator_", second).coef_)
            assert _walk(getattr(first, "best_estimator_", first).get_params(), set()) \
                == [] or isinstance(first, SparsifiedLassoClassifier)


@pytest.mark.parametrize("model, extra", [
    ("select-then-fit", ["--k", "5"]),
    ("search", ["--n-runs", "2", "--search-model", "frank-wolfe", "--max-iter", "10"]),
])
def test_command_line_seed_warns_once(model, extra, capsys):
    """--seed: the command line's warning, and the fits it seeds (the selector and
    the model, or the search) do not repeat it (one warning shared by both)."""
    from dptoolkit.cli import main

    status = main(["train", "--model", model, "--synthetic-samples", "300",
                   "--synthetic-features", "50", "--epsilon", "1", "--delta", "1e-5",
                   "--seed", "7", *extra])
    err = capsys.readouterr().err
    assert status == 0, err
    assert err.count("fixes the noise") == 1
    assert "--seed 7 fixes the noise" in err
