"""The public persistence API: dptoolkit.save_model / dptoolkit.load_model."""
import warnings

import numpy as np
import pytest

import dptoolkit
from dptoolkit import datasets
from dptoolkit.linear_model import FrankWolfeLassoClassifier


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = datasets.make_sparse_classification(n_samples=300, n_features=60,
                                                  random_state=1)
    est = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=30,
                                    n_samples_public=300, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y), X


def test_public_names():
    assert {"save_model", "load_model"} <= set(dptoolkit.__all__)
    assert dptoolkit.save_model.__module__ == "dptoolkit._persistence"
    for f in (dptoolkit.save_model, dptoolkit.load_model):
        assert "Raises\n    ------" in f.__doc__


def test_roundtrip_with_description(fitted, tmp_path):
    est, X = fitted
    desc = {"source": "libsvm", "n_features": 60, "classes": [-1.0, 1.0],
            "featurisation": {"kind": "libsvm"}}
    path = dptoolkit.save_model(est, tmp_path / "m.skops", data_description=desc)
    assert not hasattr(est, "data_description_")     # the caller's object untouched
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = dptoolkit.load_model(path)
    assert back.data_description_ == desc
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.privacy_spent_ == est.privacy_spent_
    assert back.privacy_event_ == est.privacy_event_
    # saved again without a description: the old one is not carried over silently
    again = dptoolkit.save_model(back, tmp_path / "again.skops")
    assert dptoolkit.load_model(again).data_description_ is None


def test_file_without_description_loads(fitted, tmp_path):
    path = dptoolkit.save_model(fitted[0], tmp_path / "m.skops")
    assert dptoolkit.load_model(path).data_description_ is None


@pytest.mark.parametrize("bad", [[1, 2], {1: "a"}, {"x": float("nan")}, {"x": object()}])
def test_bad_description_is_refused(fitted, tmp_path, bad):
    with pytest.raises(ValueError, match="data_description"):
        dptoolkit.save_model(fitted[0], tmp_path / "m.skops", data_description=bad)
    assert not (tmp_path / "m.skops").exists()


def test_unfitted_is_refused(tmp_path):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        dptoolkit.save_model(FrankWolfeLassoClassifier(epsilon=None), tmp_path / "m.skops")


def test_plain_sklearn_file_is_called_not_a_dptoolkit_model(fitted, tmp_path):
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    X = fitted[1]
    path = tmp_path / "sk.skops"
    sio.dump(LogisticRegression().fit(X, np.arange(X.shape[0]) % 2), path)
    with pytest.warns(UserWarning, match="not a dptoolkit model") as rec:
        dptoolkit.load_model(path)
    assert not any("unknown version" in str(w.message) for w in rec)
