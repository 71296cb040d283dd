"""scikit-learn's own estimator checks over every discovered public estimator, in
its non-private mode (``epsilon=None``) and a private mode at a large epsilon
(``dptoolkit._discovery.check_instances``); the known failures are declared with
their reasons (``dptoolkit._discovery.expected_failed_checks``)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from dptoolkit._discovery import all_estimators, check_instances, expected_failed_checks
from dptoolkit.selection import SIS, TwoStageSelector


def _own(pairs):
    """The package's own estimators (an estimator another test file registers, such
    as tests/test_discovery.py's private mean, is not one of scikit-learn's cases)."""
    return [(n, c) for n, c in pairs if c.__module__.startswith("dptoolkit.")]


ESTIMATORS = _own(all_estimators())
INSTANCES = [est for _, cls in ESTIMATORS for est in check_instances(cls)]


# strict: a declared failure that passes fails the test (the declaration is stale)
@parametrize_with_checks(INSTANCES, expected_failed_checks=expected_failed_checks,
                         xfail_strict=True)
def test_sklearn_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks' data leave the public bounds (clipped) and read N and the
        # label set from the data: both warned, neither an error
        warnings.simplefilter("ignore")
        check(estimator)


def _data(estimator, seed=0, n=80, d=12):
    """Sparse non-negative rows (a text-like problem) and a target suiting the
    estimator: labels {0, 1} for a classifier, values in [-1, 1] otherwise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n, d)) * (rng.random((n, d)) < 0.4)
    score = X[:, 0] - X[:, 1] + 0.5 * X[:, 2]
    if is_classifier(estimator):
        return X, (score > np.median(score)).astype(int)
    return X, np.clip(score, -1.0, 1.0)


def _outputs(fitted, X):
    """What a fit releases that the sparse container could change."""
    out = {}
    for name in ("coef_", "intercept_", "support_", "best_params_"):
        if hasattr(fitted, name):
            out[name] = getattr(fitted, name)
    if is_classifier(fitted) or is_regressor(fitted):
        out["predict"] = fitted.predict(X)
    if hasattr(fitted, "transform"):
        Xt = fitted.transform(X)
        out["transform"] = Xt.toarray() if sp.issparse(Xt) else np.asarray(Xt)
    return out


@pytest.mark.parametrize("estimator", INSTANCES, ids=repr)
@pytest.mark.parametrize("array", [sp.csr_array, sp.csc_array])
def test_sparse_arrays_fit_as_sparse_matrices(estimator, array):
    """SciPy's sparse arrays work wherever its sparse matrices do: the same fit
    (same seed) on a csr_matrix / csc_matrix and on a csr_array / csc_array gives
    the same model and outputs, or both raise the same error type."""
    if not get_tags(estimator).input_tags.two_d_array:
        pytest.skip(f"{type(estimator).__name__} takes no sparse input (raw documents)")
    matrix = {sp.csr_array: sp.csr_matrix, sp.csc_array: sp.csc_matrix}[array]
    X, y = _data(estimator)
    results = []
    for container in (matrix, array):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fitted = clone(estimator).fit(container(X), y)
            except (ValueError, TypeError) as exc:
                results.append(type(exc))
                continue
            results.append(_outputs(fitted, container(X)))
    if isinstance(results[0], type):
        assert results[1] is results[0]
        return
    assert results[0].keys() == results[1].keys()
    for name, value in results[0].items():
        other = results[1][name]
        if isinstance(value, dict):
            assert value == other, name
        else:
            np.testing.assert_array_equal(np.asarray(value), np.asarray(other), err_msg=name)


def test_discovery_finds_every_public_estimator():
    """The walk finds the estimators the public modules export (and nothing
    private); type_filter keeps one kind; an unknown kind is refused by name."""
    from sklearn.base import BaseEstimator

    import dptoolkit.linear_model
    import dptoolkit.model_selection
    import dptoolkit.selection

    names = {name for name, _ in ESTIMATORS}
    exported = {name for module in (dptoolkit.linear_model, dptoolkit.selection,
                                    dptoolkit.model_selection)
                for name in module.__all__
                if isinstance(getattr(module, name), type)
                and issubclass(getattr(module, name), BaseEstimator)}
    assert exported <= names
    assert {"PrivateSelectThenFit", "PrivateHyperparameterSearch", "SIS", "DPSIS",
            "TwoStageSelector", "DSALLasso", "DPTfidfVectorizer", "PrivatePipeline"} <= names
    assert not [n for n in names if n.startswith("_")]
    assert len(names) == len(ESTIMATORS)        # each class once
    assert {n for n, _ in _own(all_estimators("transformer"))} == {"SIS", "DPSIS",
                                                             "TwoStageSelector",
                                                             "DPTfidfVectorizer"}
    assert {n for n, _ in _own(all_estimators(["regressor"]))} == {
        "DPSCDRegressor", "DPSGDRegressor", "DSALLasso", "ProxASAGALasso",
        "ProxSVRGLasso"}
    with pytest.raises(ValueError, match="type_filter"):
        all_estimators("cluster")


def test_check_instances_cover_both_modes():
    """Every estimator with an epsilon is checked non-private (epsilon=None) and
    private (a number), except the two meta-estimators, which are private only
    (the pipeline composes two private steps; the search's epsilon is required)."""
    private_only = {"PrivateSelectThenFit", "PrivateHyperparameterSearch"}
    for name, cls in ESTIMATORS:
        instances = check_instances(cls)
        assert instances and all(type(est) is cls for est in instances)
        if name in private_only:
            assert all(_private(est) for est in instances), name
        elif "epsilon" in instances[0].get_params():
            assert {est.epsilon is None for est in instances} == {True, False}, name


def _private(est):
    params = est.get_params()
    return params["epsilon"] is not None or params.get("selector__epsilon") is not None


@pytest.mark.parametrize("make", [
    lambda k: SIS(k=k),
    lambda k: TwoStageSelector(k=k, epsilon=None, random_state=0),
    lambda k: TwoStageSelector(k=k, epsilon=1.0, random_state=0)],
    ids=["SIS", "TwoStageSelector", "TwoStageSelector-private"])
def test_k_from_n_features_keeps_every_feature(make):
    """As SelectKBest: k above n_features warns and keeps every feature, k equal
    to it keeps every feature silently; a private TwoStageSelector still reports
    its epsilon (an upper bound: the output depends on the shape only)."""
    X, y = _data(make(1))
    d = X.shape[1]
    with pytest.warns(UserWarning, match=f"k={d + 3} is greater than n_features={d}"):
        est = make(d + 3).fit(X, y)
    assert est.get_support().all() and est.transform(X).shape == X.shape
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert make(d).fit(X, y).get_support().all()
    if getattr(est, "epsilon", None) is not None:
        assert est.privacy_spent_ == (1.0, 0.0)
    # SIS's own check, or TwoStageSelector's constraint table
    with pytest.raises(ValueError, match=r"k must be in \[1, n_features\]|k of \w+ must be"):
        make(0).fit(X, y)


def test_meta_estimators_unfitted_and_bad_input():
    """Before fit: NotFittedError; empty, 1-D and one-sample input: scikit-learn's
    messages, before anything is planned."""
    from sklearn.exceptions import NotFittedError

    X, y = _data(INSTANCES[0])
    for est in [check_instances(cls)[0] for name, cls in ESTIMATORS
                if name in ("PrivateSelectThenFit", "PrivateHyperparameterSearch")]:
        with pytest.raises(NotFittedError):
            est.predict(X)
        with pytest.raises(NotFittedError):
            est.decision_function(X)
        with pytest.raises(ValueError, match=r"0 feature\(s\)"):
            clone(est).fit(X[:, :0], y)
        with pytest.raises(ValueError, match="X must be a 2D array"):
            clone(est).fit(X[:, 0], y)
        with pytest.raises(ValueError, match="1 sample|one class|1 class"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(est).fit(X[:1], y[:1])
