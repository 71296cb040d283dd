"""Side channels around the mechanisms: the declared label set, data-dependent
messages (one bit, never a count), warnings of non-private solvers inside a
mechanism, and the documentation of what stays outside the guarantee.

The neighbouring-dataset checks fit an estimator on D and on D' (one row added,
chosen to trigger one path) with the same seed and compare (a) the set of
warnings, type and text, and (b) the fitted public attributes other than the
released model.  They are deterministic (fixed seeds, no statistical test: a
false-failure rate of 0).
"""
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit._private import (
    DATA_DEPENDENT_NOTE,
    PrivateEstimatorMixin,
    check_classes,
    data_dependent_error,
    data_dependent_message,
    data_dependent_warning,
)
from dptoolkit.exceptions import DataClippedWarning, PrivacyLeakWarning
from dptoolkit.model_selection import PrivateHyperparameterSearch
from dptoolkit.selection import DPSIS, PrivateSelectThenFit
from dptoolkit.linear_model import (
    DPIGHTClassifier,
    DPNBLogisticClassifier,
    DPSCDClassifier,
    DPSGDClassifier,
    FrankWolfeLassoClassifier,
    SparsifiedLassoClassifier,
)


# --------------------------------------------------------------------------- builder
def test_data_dependent_message_carries_the_note():
    msg = data_dependent_message("X has entries outside [-1, 1]")
    assert msg.startswith("X has entries outside [-1, 1]") and msg.endswith(DATA_DEPENDENT_NOTE)
    with pytest.warns(DataClippedWarning, match=re.escape(DATA_DEPENDENT_NOTE)):
        data_dependent_warning("something was clipped", DataClippedWarning)
    err = data_dependent_error("y has labels outside classes", ValueError)
    assert isinstance(err, ValueError) and DATA_DEPENDENT_NOTE in str(err)
    assert isinstance(data_dependent_error("x", RuntimeError), RuntimeError)


@pytest.mark.parametrize("bad, exc", [("", TypeError), (None, TypeError)])
def test_data_dependent_message_bad_input(bad, exc):
    with pytest.raises(exc, match="what"):
        data_dependent_message(bad)


def test_data_dependent_warning_bad_category():
    with pytest.raises(TypeError, match="category"):
        data_dependent_warning("x", ValueError)


# --------------------------------------------------------------------------- classes
@pytest.mark.parametrize("classes, expected", [
    ([1, 0], [0, 1]), (["b", "a", "c"], ["a", "b", "c"]), ((-1, 1), [-1, 1]),
    (np.array([2.0, 1.0]), [1.0, 2.0])])
def test_check_classes_sorts(classes, expected):
    np.testing.assert_array_equal(check_classes(classes), expected)


@pytest.mark.parametrize("bad, exc, match", [
    ("ab", TypeError, "classes"),
    ([[0, 1]], ValueError, "classes must be a 1-D"),
    ([0], ValueError, "at least two"),
    ([], ValueError, "at least two"),
    ([0, 1, 1], ValueError, "distinct"),
    ([0.0, np.nan], ValueError, "finite"),
    ([0, "a"], TypeError, "sortable|classes"),
    (np.array([[1], 2], dtype=object), TypeError, "hashable"),
])
def test_check_classes_bad_input(bad, exc, match):
    with pytest.raises(exc, match=match):
        check_classes(bad)


class _Est(PrivateEstimatorMixin):
    def __init__(self, classes=None):
        self.classes = classes


def test_resolve_classes_declared_never_reads_the_label_set():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _Est(classes=[1, 0])._resolve_classes(np.array([0, 0, 0]), private=True)
    np.testing.assert_array_equal(got, [0, 1])      # the positive class is absent: fine
    with pytest.raises(ValueError, match="classes") as info:
        _Est(classes=[0, 1])._resolve_classes(np.array([0, 1, 2]), private=True)
    assert "2" not in str(info.value).split("classes=")[0]
    assert DATA_DEPENDENT_NOTE in str(info.value)
    with pytest.raises(ValueError, match="exactly 2 labels"):
        _Est(classes=[0, 1, 2])._resolve_classes(np.array([0, 1]), private=True, n_classes=2)


def test_resolve_classes_from_the_data_warns_only_when_private():
    y = np.array(["a", "b", "a"])
    with pytest.warns(PrivacyLeakWarning, match="label set was read from the data") as rec:
        got = _Est()._resolve_classes(y, private=True)
    np.testing.assert_array_equal(got, ["a", "b"])
    text = str(rec[0].message)
    assert not re.search(r"\d", text) and "'a'" not in text and "'b'" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _Est()._resolve_classes(y, private=False)


# ------------------------------------------------------- classes on every estimator
def _binary_data(n=80, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.3).astype(float)
    y = (X[:, 0] + 0.5 * rng.random(n) > 0.6).astype(int)
    return sp.csr_array(X), y


_PRIVATE_CLASSIFIERS = {
    "fw": lambda **kw: FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=20,
                                                 n_samples_public=100, random_state=0,
                                                 **kw),
    "sparsifier": lambda **kw: SparsifiedLassoClassifier(epsilon=1.0, max_iter=20,
                                                         nonprivate_max_iter=50,
                                                         n_samples_public=100,
                                                         random_state=0, **kw),
    "scd": lambda **kw: DPSCDClassifier(epsilon=1.0, n_samples_public=100, batch_size=5,
                                        n_epochs=1, random_state=0, **kw),
    "sgd": lambda **kw: DPSGDClassifier(epsilon=1.0, n_samples_public=100, batch_size=5,
                                        n_epochs=1, random_state=0, **kw),
    "nb": lambda **kw: DPNBLogisticClassifier(epsilon=1.0, k=5, n_epochs=1,
                                              n_samples_public=100, random_state=0, **kw),
    "ight": lambda **kw: DPIGHTClassifier(sparsity=3, max_iter=10, epsilon=1.0, delta=1e-5,
                                          n_samples_public=100, random_state=0, **kw),
}

@pytest.mark.parametrize("name", sorted(_PRIVATE_CLASSIFIERS))
def test_declared_classes_are_used_and_no_label_warning(name):
    X, y = _binary_data()
    labels = np.where(y == 1, "pos", "neg")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est = _PRIVATE_CLASSIFIERS[name](classes=["pos", "neg"]).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, ["neg", "pos"])
    assert set(est.predict(X)) <= {"neg", "pos"}
    # the only positive row removed: fine when declared
    only_neg = np.full(y.shape, "neg")
    est = _PRIVATE_CLASSIFIERS[name](classes=["neg", "pos"]).fit(X, only_neg)
    np.testing.assert_array_equal(est.classes_, ["neg", "pos"])
    assert est.coef_.shape[0] == 1
    # a label outside the declared classes: an error naming classes
    other = labels.copy()
    other[0] = "third"
    with pytest.raises(ValueError, match="classes"):
        _PRIVATE_CLASSIFIERS[name](classes=["neg", "pos"]).fit(X, other)
    # classes=None: the private fit warns that the label set was read from the data
    with pytest.warns(PrivacyLeakWarning, match="label set was read from the data"):
        _PRIVATE_CLASSIFIERS[name]().fit(X, labels)


@pytest.mark.parametrize("name", ["fw", "sparsifier", "scd", "sgd", "ight"])
def test_declared_classes_decide_the_multinomial_model(name):
    """The declared label set, not y, decides a K-class model (DPNB's own test
    covers it); a malformed declaration is an error naming classes."""
    X, y = _binary_data()
    with pytest.raises(ValueError, match="classes"):
        _PRIVATE_CLASSIFIERS[name](classes=[0, 0]).fit(X, y)
    est = _PRIVATE_CLASSIFIERS[name](classes=[0, 1, 2]).fit(X, y)   # class 2 absent
    assert est.coef_.shape == (3, X.shape[1])
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    y3 = y.copy()
    y3[0] = 2                                                         # one row with a 3rd label
    with pytest.raises(ValueError, match="classes"):
        _PRIVATE_CLASSIFIERS[name](classes=[0, 1]).fit(X, y3)


def test_pipeline_passes_declared_classes_on():
    X, y = _binary_data()
    model = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=10,
                                      n_samples_public=100, random_state=0)
    pipe = PrivateSelectThenFit(DPSIS(k=4, epsilon=0.5, y_bounds=(0, 1), random_state=0),
                                model, classes=[0, 1], epsilon=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X, np.zeros_like(y))       # a declared class absent from y: fine
    np.testing.assert_array_equal(pipe.classes_, [0, 1])
    assert pipe.estimator_.coef_.shape == (1, 4)
    y3 = y.copy()
    y3[0] = 5
    with pytest.raises(ValueError, match="classes"):
        pipe.fit(X, y3)
    with pytest.raises(ValueError, match="classes"):
        PrivateSelectThenFit(DPSIS(k=4, epsilon=0.5), model.set_params(classes=[0, 2]),
                             classes=[0, 1], epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="classes declares 3 classes"):  # DP-SIS: two
        pipe.set_params(classes=[0, 1, 2]).fit(X, y)


def test_search_passes_declared_classes_on():
    X, y = _binary_data(n=120)
    search = PrivateHyperparameterSearch(
        FrankWolfeLassoClassifier(max_iter=10, n_samples_public=100),
        {"l1_bound": [1.0, 5.0]}, epsilon=1.0, n_runs=2.0, n_samples_public=120,
        classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        search.fit(X, np.zeros_like(y))                 # no positive row: fine
    np.testing.assert_array_equal(search.classes_, [0, 1])
    with pytest.raises(ValueError, match="classes"):
        search.fit(X, np.where(y == 1, 3, 0))


# ------------------------------------------------------- neighbouring datasets
#: Fitted attributes that are (part of) the released output of each estimator (its
#: model, selected features or privacy-noise outputs): the guarantee covers them
#: and they legitimately differ between neighbours.  Every other public fitted
#: attribute must be identical on D and D'.
_RELEASED = {"coef_", "intercept_", "coef_path_", "intercept_path_", "dual_coef_",
             "screened_features_", "n_nonzero_", "estimator_", "feature_indices_",
             "log_count_ratios_", "theta_", "selected_features_", "support_",
             "selector_", "best_estimator_", "best_params_", "best_score_"}


def _public_attributes(est):
    # an estimator may declare its release itself (``_released_attributes``), as
    # one written outside the package does
    released = _RELEASED | set(getattr(type(est), "_released_attributes", ()))
    return {k: v for k, v in vars(est).items()
            if k.endswith("_") and not k.startswith("_") and k not in released}


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (np.shape(a) == np.shape(b)
                and np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _fit_recording(make, X, y):
    """(warnings as a set of (category, text), fitted estimator or the exception)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out = make().fit(X, y)
        except ValueError as exc:           # a data-dependent refusal
            out = exc
    return {(w.category, str(w.message)) for w in rec}, out


def _assert_neighbours_alike(make, D, D_prime):
    """Warnings and public non-released attributes equal on D and D', except
    messages built by the data-dependent builder (documented as outside the
    guarantee by the note they carry)."""
    w0, est0 = _fit_recording(make, *D)
    w1, est1 = _fit_recording(make, *D_prime)
    undocumented = {w for w in w0 ^ w1 if DATA_DEPENDENT_NOTE not in w[1]}
    assert not undocumented, undocumented
    for est in (est0, est1):
        if isinstance(est, Exception):      # only a data-dependent error may differ
            assert DATA_DEPENDENT_NOTE in str(est), est
    if isinstance(est0, Exception) or isinstance(est1, Exception):
        return
    a0, a1 = _public_attributes(est0), _public_attributes(est1)
    assert a0.keys() == a1.keys()
    differ = [k for k in a0 if not _same(a0[k], a1[k])]
    assert not differ, {k: (a0[k], a1[k]) for k in differ}


def _base_pair(seed=3, n=80, d=12):
    """D (one positive row only at index 0 is avoided: several of each class)."""
    X, y = _binary_data(n=n, d=d, seed=seed)
    return X.toarray(), y


def _add_row(X, y, row, label):
    return np.vstack([X, row[None, :]]), np.append(y, label)


def _scenarios(d=12):
    """Name -> function (X, y) -> (D, D') for the paths of the audit."""
    return {
        # an outlier beyond the public bound (entries 5: ||x||_inf > 1, ||x||_2 > 1)
        "outlier": lambda X, y: ((X, y), _add_row(X, y, np.full(d, 5.0), 1)),
        # a dense row within the public bound ||x||_inf <= 1
        "dense": lambda X, y: ((X, y), _add_row(X, y, np.ones(d), 1)),
        # one feature set, labelled 0: changes how many steps the Sparsifier's
        # non-private solver needs to its duality gap (70 -> 50 at seed 3)
        "one_hot": lambda X, y: ((X, y), _add_row(X, y, np.eye(d)[0], 0)),
        # a row with a label outside the declared classes
        "extra_label": lambda X, y: ((X, y), _add_row(X, y, np.zeros(d), 2)),
        # the only positive row removed (D has exactly one)
        "missing_positive": lambda X, y: (
            (X, np.where(np.arange(y.size) == 0, 1, 0)),
            (X[1:], np.zeros(y.size - 1, dtype=int))),
    }


_NEIGHBOUR_ESTIMATORS = dict(
    _PRIVATE_CLASSIFIERS,
    scd_clip=lambda **kw: DPSCDClassifier(epsilon=1.0, n_samples_public=100, batch_size=5,
                                          n_epochs=1, normalize="clip", random_state=0,
                                          **kw),
    sgd_clip=lambda **kw: DPSGDClassifier(epsilon=1.0, n_samples_public=100, batch_size=5,
                                          n_epochs=1, normalize="clip", random_state=0,
                                          **kw),
    # the default non-private solver stops at a duality gap: its steps depend on the data
    sparsifier_default=lambda **kw: SparsifiedLassoClassifier(
        epsilon=1.0, delta=1e-5, max_iter=20, n_samples_public=100, random_state=0, **kw),
    fw_standard=lambda **kw: FrankWolfeLassoClassifier(
        epsilon=1.0, delta=1e-5, max_iter=20, solver="standard", n_samples_public=100,
        random_state=0, **kw),
    pipeline=lambda **kw: PrivateSelectThenFit(
        DPSIS(k=4, epsilon=0.5, y_bounds=(0, 1), random_state=0),
        FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=10,
                                  n_samples_public=100, random_state=0),
        **{"epsilon": None, **kw}),
    search=lambda **kw: PrivateHyperparameterSearch(
        FrankWolfeLassoClassifier(max_iter=10, n_samples_public=100),
        {"l1_bound": [1.0, 5.0]}, epsilon=1.0, n_runs=2.0, random_state=0, **kw),
)


@pytest.mark.parametrize("scenario", sorted(_scenarios()))
@pytest.mark.parametrize("name", sorted(_NEIGHBOUR_ESTIMATORS))
def test_neighbours_with_declared_classes(name, scenario):
    X, y = _base_pair()
    D, D_prime = _scenarios(X.shape[1])[scenario](X, y)
    _assert_neighbours_alike(lambda: _NEIGHBOUR_ESTIMATORS[name](classes=[0, 1]), D, D_prime)


# ------------------------------------------------- the audit's findings, one each
def _with_outliers(X, y, n_out, value=5.0):
    rows = np.full((n_out, X.shape[1]), value)
    return np.vstack([X, rows]), np.append(y, np.ones(n_out, dtype=y.dtype))


@pytest.mark.parametrize("name", ["fw", "sparsifier", "scd_clip", "sgd_clip", "pipeline",
                                  "ight"])
def test_clipping_messages_are_one_bit_and_say_so(name):
    """One or two rows beyond the public bound: the same text (no count), which
    states that it depends on the data; clip_data=False refuses alike."""
    X, y = _base_pair()
    texts = []
    for n_out in (1, 2):
        w, est = _fit_recording(_NEIGHBOUR_ESTIMATORS[name], *_with_outliers(X, y, n_out))
        assert not isinstance(est, Exception)
        clipped = {t for c, t in w if issubclass(c, DataClippedWarning)}
        assert clipped and all(DATA_DEPENDENT_NOTE in t for t in clipped)
        texts.append(clipped)
    assert texts[0] == texts[1]
    if name in ("fw", "sparsifier", "ight"):
        errors = []
        for n_out in (1, 2):
            with pytest.raises(ValueError, match="clip_data") as info:
                _NEIGHBOUR_ESTIMATORS[name](clip_data=False).fit(
                    *_with_outliers(X, y, n_out))
            errors.append(str(info.value))
        assert errors[0] == errors[1] and DATA_DEPENDENT_NOTE in errors[0]


class _Bounded(PrivateEstimatorMixin):
    """The contract's public-bound step alone (``clip_data`` as given)."""

    def __init__(self, clip_data=True):
        self.clip_data = clip_data


def _linf_over_reference(values, bound):
    """The earlier linf check, on a |values| temporary: NaN makes the max NaN."""
    return values.size and float(np.max(np.abs(values))) > bound


@pytest.mark.parametrize("entries", [
    [0.5, -1.0, 1.0],            # on the bound: nothing to clip
    [0.5, 1.5], [-1.5, 0.2],     # above / below
    [np.inf, 0.0], [-np.inf],    # infinite entries are clipped too
    [np.nan, 0.5],               # NaN alone: left as it is
    [np.nan, 2.0], [-3.0, np.nan],   # NaN with an entry beyond: left too (as before)
    [],                          # no stored entry
])
@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_linf_bound_check_is_the_earlier_one(entries, fmt):
    """The linf check compares max and min with the bound instead of building
    |X|: the same decision as the earlier ``max(|X|) > bound`` for finite,
    infinite and NaN entries (NaN: no clipping, no message; the estimators'
    input validation rejects NaN before this step), the same clipped values,
    and X itself when nothing is over."""
    values = np.array(entries, dtype=np.float64)
    dense = np.zeros((2, 3))
    dense.flat[:values.size] = values
    X = sp.csr_array((values, (np.arange(values.size) // 3, np.arange(values.size) % 3)),
                     shape=(2, 3)) if fmt == "csr" else dense
    over = bool(_linf_over_reference(values, 1.0))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = _Bounded()._enforce_public_bound(X, "linf", 1.0)
    assert [w.category for w in rec] == ([DataClippedWarning] if over else [])
    if not over:
        assert out is X
    else:
        got = out.toarray() if fmt == "csr" else out
        np.testing.assert_array_equal(got, np.clip(dense, -1.0, 1.0))
        with pytest.raises(ValueError, match="clip_data"):
            _Bounded(clip_data=False)._enforce_public_bound(X, "linf", 1.0)


def test_dpsis_clipping_messages_are_one_bit_and_say_so():
    X, y = _base_pair()
    texts = []
    for n_out in (1, 2):
        Xo, yo = _with_outliers(X, y, n_out)
        with pytest.warns(DataClippedWarning) as rec:
            DPSIS(k=3, epsilon=1.0, y_bounds=(0, 1), random_state=0).fit(Xo, 3 * yo)
        texts.append({str(w.message) for w in rec})
    assert texts[0] == texts[1]
    assert all(DATA_DEPENDENT_NOTE in t for t in texts[0]) and len(texts[0]) == 2


def test_two_stage_private_fit_lets_no_solver_warning_through():
    """One outlier row makes a block's Lasso stop at lasso_max_iter (a
    ConvergenceWarning in the non-private fit, seed 0): the private fit is silent
    on D and D'.  Deterministic for the fixed seed."""
    from sklearn.exceptions import ConvergenceWarning
    from dptoolkit.selection import TwoStageSelector

    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 20))
    y = X[:, :3] @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.standard_normal(100)
    Xp, yp = np.vstack([X, np.full((1, 20), 50.0)]), np.append(y, -500.0)
    with pytest.warns(ConvergenceWarning):       # the path is triggered
        TwoStageSelector(k=3, n_blocks=10, random_state=0, epsilon=None).fit(Xp, yp)
    for data in ((X, y), (Xp, yp)):
        w, est = _fit_recording(
            lambda: TwoStageSelector(k=3, epsilon=1.0, n_blocks=10, random_state=0), *data)
        assert w == set() and est.privacy_spent_ == (1.0, 0.0)


@pytest.mark.parametrize("name", ["fw", "sparsifier"])
def test_extra_label_does_not_switch_the_model(name):
    """One added row with a third label: with classes declared the model's shape
    cannot change (the fit refuses, with a data-dependent error); classes=None is
    warned as outside the guarantee."""
    X, y = _base_pair()
    Xp, yp = _add_row(X, y, np.zeros(X.shape[1]), 2)
    est = _PRIVATE_CLASSIFIERS[name](classes=[0, 1]).fit(X, y)
    assert est.coef_.shape == (1, X.shape[1])
    with pytest.raises(ValueError, match="classes") as info:
        _PRIVATE_CLASSIFIERS[name](classes=[0, 1]).fit(Xp, yp)
    assert DATA_DEPENDENT_NOTE in str(info.value)
    with pytest.warns(PrivacyLeakWarning, match="classes is None"):
        _PRIVATE_CLASSIFIERS[name]().fit(Xp, yp)


@pytest.mark.parametrize("name", sorted(_PRIVATE_CLASSIFIERS))
def test_removing_the_only_positive_row_is_fine_with_declared_classes(name):
    X, _ = _base_pair()
    y = np.where(np.arange(X.shape[0]) == 0, 1, 0)
    D, D_prime = (X, y), (X[1:], y[1:])
    fits = [_PRIVATE_CLASSIFIERS[name](classes=[0, 1]).fit(*data) for data in (D, D_prime)]
    for est in fits:
        np.testing.assert_array_equal(est.classes_, [0, 1])
        assert est.coef_.shape == fits[0].coef_.shape


_N_WARNERS = {
    "scd": lambda: DPSCDClassifier(epsilon=1.0, batch_size=5, n_epochs=1, random_state=0),
    "sgd": lambda: DPSGDClassifier(epsilon=1.0, batch_size=5, n_epochs=1, random_state=0),
    "fw": lambda: FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, random_state=0),
    "nb": lambda: DPNBLogisticClassifier(epsilon=1.0, k=5, n_epochs=1,
                                         random_state=0),
    "ight": lambda: DPIGHTClassifier(sparsity=3, max_iter=10, epsilon=1.0, random_state=0),
    # the search's own N (split sizes, runs' N, best_score_'s scale): one warning
    "search": lambda: PrivateHyperparameterSearch(
        FrankWolfeLassoClassifier(max_iter=10), {"l1_bound": [1.0, 5.0]}, epsilon=1.0,
        n_runs=2.0, classes=[0, 1], random_state=0),
}


@pytest.mark.parametrize("name", sorted(_N_WARNERS))
def test_n_samples_warning_does_not_print_n(name):
    """n_samples_public=None: N is taken from the data with a warning whose text
    is the same for N and N + 1 (it never prints N)."""
    X, y = _base_pair()
    texts = []
    for data in ((X, y), _add_row(X, y, X[0], y[0])):
        w, _ = _fit_recording(_N_WARNERS[name], *data)
        leak = {t for c, t in w if issubclass(c, PrivacyLeakWarning) and "N" in t}
        assert any("n_samples_public" in t for t in leak)
        texts.append(leak)
    assert texts[0] == texts[1]


def test_selectors_are_private_by_default_and_non_private_with_none():
    from dptoolkit.selection import TwoStageSelector

    X, y = _base_pair()
    for cls in (DPSIS, TwoStageSelector):
        assert cls().epsilon == 1.0
        est = cls(k=3, n_blocks=4, epsilon=None).fit(X, y) if cls is TwoStageSelector \
            else cls(k=3, y_bounds=(0, 1), epsilon=None).fit(X, y)
        assert est.privacy_spent_ is None and est.privacy_event_ is None
        assert est.selected_features_.size == 3
        private = cls(k=3, epsilon=1.0, random_state=0)
        assert private.fit(X, y).privacy_spent_ == (1.0, 0.0)
    with pytest.raises(ValueError, match="selector must be private"):
        PrivateSelectThenFit(DPSIS(k=3, epsilon=None), _PRIVATE_CLASSIFIERS["fw"](),
                             epsilon=None).fit(X, y)


# ------------------------------------------------ what is documented as outside
def test_timing_side_channel_is_documented():
    from pathlib import Path

    doc = FrankWolfeLassoClassifier.__doc__
    assert "**Timing.**" in doc and "not covered" in doc and "pad" in doc
    assert "Timing" in SparsifiedLassoClassifier.__doc__
    arch = Path(__file__).resolve().parents[1] / "docs" / "architecture.rst"
    if not arch.exists():
        pytest.skip("docs/ not in this checkout")
    text = arch.read_text()
    assert "Side channels" in text and "timing" in text.lower()
    for phrase in ("data_dependent_warning", "classes", "pad"):
        assert phrase in text


def test_label_set_and_messages_are_documented_as_outside():
    import dptoolkit._private as private

    assert "Side channels" in private.__doc__ and "one bit" in private.__doc__
    for cls in (FrankWolfeLassoClassifier, SparsifiedLassoClassifier, DPSCDClassifier,
                DPSGDClassifier, DPNBLogisticClassifier, DPIGHTClassifier, PrivateSelectThenFit,
                PrivateHyperparameterSearch):
        assert "classes : array-like" in cls.__doc__, cls.__name__


_SELECTORS = {
    "dpsis": lambda: DPSIS(k=3, epsilon=1.0, y_bounds=(0, 1), random_state=0),
    "dpsis_peeling": lambda: DPSIS(k=3, epsilon=1.0, y_bounds=(0, 1), mechanism="peeling",
                                   random_state=0),
    "two_stage": lambda: _two_stage()(k=3, epsilon=1.0, n_blocks=4, random_state=0),
    "two_stage_add_remove": lambda: _two_stage()(k=3, epsilon=1.0, n_blocks=4,
                                                 neighbouring="add_remove", random_state=0),
}


def _two_stage():
    from dptoolkit.selection import TwoStageSelector

    return TwoStageSelector


@pytest.mark.parametrize("scenario", ["outlier", "dense", "one_hot"])
@pytest.mark.parametrize("name", sorted(_SELECTORS))
def test_selector_neighbours(name, scenario):
    """The private selectors on D and D' (one row added): same warnings (up to
    the data-dependent ones, which say so) and same non-released attributes."""
    X, y = _base_pair()
    D, D_prime = _scenarios(X.shape[1])[scenario](X, y)
    _assert_neighbours_alike(_SELECTORS[name], D, D_prime)


def _contract_cases():
    from test_private_contract import CASES

    return [pytest.param(c, id=c.name) for c in CASES]


@pytest.mark.parametrize("extra", ["outlier", "dense"])
@pytest.mark.parametrize("case", _contract_cases())
def test_every_contract_case_on_neighbours(case, extra):
    """Every private estimator and selector of the contract test (regressors and
    every Frank-Wolfe variant included), with the label set declared where it
    applies, on D and on D plus one row beyond (``outlier``) or within
    (``dense``) the public bound."""
    from test_private_contract import _data

    X, y = _data(case.data)
    row = np.full(X.shape[1], 5.0 if extra == "outlier" else 1.0)
    kw = ({"classes": np.unique(y)}
          if "classes" in case.make().get_params(deep=False) else {})
    D_prime = (np.vstack([X, row[None, :]]), np.append(y, y[0]))
    _assert_neighbours_alike(lambda: case.make(**kw), (X, y), D_prime)
