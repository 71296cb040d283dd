"""``composition``, the one name for how steps compose.

It replaced ``accounting`` (Frank-Wolfe estimators, the sparsifier, the CLI's
``--accounting``) and ``method`` (:class:`PrivacyAccountant`,
:func:`epsilon_of_event`, :func:`calibrate_parameter`).  The old names still work
for a deprecation period (scikit-learn's pattern: default ``"deprecated"``, a
FutureWarning naming the new one) and give the same results; models saved under
the old name load.
"""
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.base import clone

from _skops_files import rewrite_schema
from dptoolkit import load_model, save_model
from dptoolkit.accounting import PrivacyAccountant, calibrate_parameter, epsilon_of_event
from dptoolkit.accounting.events import ExponentialMechanismEvent, GaussianEvent
from dptoolkit.datasets import make_sparse_classification
from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.linear_model import FrankWolfeLassoClassifier, SparsifiedLassoClassifier

PRIVATE = dict(epsilon=1.0, delta=1e-5, max_iter=30, n_samples_public=300, random_state=0)


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_sparse_classification(n_samples=300, n_features=60, random_state=1)
    return X, y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("ignore", UserWarning)
        return est.fit(X, y)


def _sparsifier(**kw):
    return SparsifiedLassoClassifier(nonprivate_max_iter=50, **PRIVATE, **kw)


@pytest.mark.parametrize("make", [lambda **kw: FrankWolfeLassoClassifier(**PRIVATE, **kw),
                                  _sparsifier], ids=["frank_wolfe", "sparsifier"])
@pytest.mark.parametrize("value", ["advanced", "zcdp"])
def test_estimator_old_name_warns_and_fits_the_same(make, value, data):
    X, y = data
    new = _fit(make(composition=value), X, y)
    with pytest.warns(FutureWarning, match="'accounting' was renamed to 'composition'"):
        old = _fit(make(accounting=value), X, y)
    np.testing.assert_array_equal(old.coef_, new.coef_)
    assert old.privacy_spent_ == new.privacy_spent_


def test_estimator_new_name_does_not_warn(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        _fit(FrankWolfeLassoClassifier(composition="advanced", **PRIVATE), X, y)


def test_estimator_old_name_in_params_and_clone():
    est = FrankWolfeLassoClassifier(accounting="zcdp", epsilon=None)
    assert est.get_params()["accounting"] == "zcdp"
    assert est.get_params()["composition"] == "auto"
    assert clone(est).accounting == "zcdp"
    assert FrankWolfeLassoClassifier(epsilon=None).get_params()["accounting"] == "deprecated"


@pytest.mark.parametrize("make", [FrankWolfeLassoClassifier, SparsifiedLassoClassifier])
def test_estimator_bad_values_name_composition(make, data):
    X, y = data
    with pytest.raises(ValueError, match=r"\bcomposition\b"):
        _fit(make(composition="rdp"), X, y)
    with pytest.raises(ValueError, match=r"deprecated name of composition"):
        _fit(make(composition="zcdp", accounting="advanced"), X, y)


def test_budget_the_same_under_both_names():
    new = FrankWolfeLassoClassifier(composition="advanced", **PRIVATE).budget(60, n_samples=300)
    with pytest.warns(FutureWarning, match="composition"):
        old = FrankWolfeLassoClassifier(accounting="advanced", **PRIVATE).budget(
            60, n_samples=300)
    assert old == new


def test_accountant_old_name_warns_and_gives_the_same_epsilon():
    event = ExponentialMechanismEvent(0.05)
    new = PrivacyAccountant(composition="rdp").compose(event, count=200)
    with pytest.warns(FutureWarning, match="'method' was renamed to 'composition'"):
        old = PrivacyAccountant(method="rdp").compose(event, count=200)
    assert old.composition == "rdp"
    assert old.get_epsilon(1e-5) == new.get_epsilon(1e-5)
    assert "composition='rdp'" in repr(new)
    with pytest.raises(ValueError, match=r"composition must be one of"):
        PrivacyAccountant(composition="magic")
    with pytest.raises(ValueError, match=r"deprecated name of composition"):
        PrivacyAccountant(composition="rdp", method="basic")


def test_functions_old_name_warn_and_give_the_same_value():
    event = GaussianEvent(3.0)
    with pytest.warns(FutureWarning, match="composition"):
        old = epsilon_of_event(event, 1e-5, method="rdp")
    assert old == epsilon_of_event(event, 1e-5, composition="rdp")
    kw = dict(target_epsilon=1.0, delta=1e-5, low=1e-3, high=1e3, increasing=False)
    with pytest.warns(FutureWarning, match="composition"):
        old = calibrate_parameter(GaussianEvent, method="rdp", **kw)
    assert old == calibrate_parameter(GaussianEvent, composition="rdp", **kw)
    with pytest.raises(ValueError, match=r"composition must be one of"):
        epsilon_of_event(event, 1e-5, composition="exact")


def test_accountant_pickled_under_the_old_name_loads():
    acc = PrivacyAccountant(composition="advanced").compose(ExponentialMechanismEvent(0.1))
    state = dict(acc.__dict__)
    state["method"] = state.pop("composition")       # what the old class pickled
    old = PrivacyAccountant.__new__(PrivacyAccountant)
    old.__setstate__(state)
    assert old.composition == "advanced"
    assert old.get_epsilon(1e-5) == acc.get_epsilon(1e-5)


def _as_saved_before_rename(path, out):
    """``path`` (a skops file) as the code before the rename wrote it: the
    parameter stored as ``accounting``, no ``composition``."""
    def rename(node):
        content = node.get("content")
        if (node.get("__loader__") == "DictNode" and isinstance(content, dict)
                and "composition" in content and "accounting" in content):
            keys = list(content)
            del content["accounting"]
            content["accounting"] = content.pop("composition")
            del node["key_types"]["content"][keys.index("accounting")]

    return rewrite_schema(path, out, rename)


@pytest.mark.parametrize("make", [lambda: FrankWolfeLassoClassifier(composition="advanced",
                                                                    **PRIVATE),
                                  lambda: _sparsifier(composition="advanced")],
                         ids=["frank_wolfe", "sparsifier"])
def test_model_saved_under_the_old_name_loads(make, data, tmp_path):
    X, y = data
    model = _fit(make(), X, y)
    old = _as_saved_before_rename(save_model(model, tmp_path / "new.skops"),
                                  tmp_path / "old.skops")
    with zipfile.ZipFile(old) as z:
        schema = z.read("schema.json").decode()
    assert '"composition"' not in schema and '"accounting"' in schema
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)   # loading is not using the old name
        loaded = load_model(old)
    assert loaded.get_params()["composition"] == "advanced"
    assert loaded.get_params()["accounting"] == "deprecated"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert clone(loaded).get_params() == clone(model).get_params()


def test_cli_old_flag_still_accepted(capsys):
    from dptoolkit.cli._parser import build_parser

    parser = build_parser()
    new = parser.parse_args(["train", "--model", "frank-wolfe", "--composition", "advanced"])
    old = parser.parse_args(["train", "--model", "frank-wolfe", "--accounting", "advanced"])
    assert new.composition == old.composition == "advanced"
    assert "--accounting was renamed --composition" in capsys.readouterr().err
    assert "--accounting" not in parser._subparsers._group_actions[0].choices[
        "train"].format_help()
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--composition", "rdp"])
    assert "--composition" in capsys.readouterr().err
