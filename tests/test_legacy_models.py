"""Models saved by the earlier layout of the package still load and predict the same.

Before each algorithm family moved into its own folder, the estimators lived in
``dptoolkit.linear_model._dpsgd``, ``._scd``, ``._ight``, ``._nb_logistic`` and
``._frank_wolfe`` (a module then, a package now), and a skops file names the module
of every object it holds.  A file of that layout is made here from a fitted model
saved today, by writing the old module names into its schema (the only difference
between the two layouts' files), then loaded with :func:`dptoolkit.load_model`.
"""
import json
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from _skops_files import rewrite_schema
from dptoolkit import load_model, save_model
from dptoolkit._persistence import LEGACY_MODULES, untrusted_types
from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.linear_model import (DPIGHTClassifier, DPNBLogisticClassifier,
                                    DPSCDClassifier, DPSCDRegressor, DPSGDClassifier,
                                    DPSGDRegressor, FrankWolfeLassoClassifier)

PUBLIC = dict(epsilon=1.0, delta=1e-5, n_samples_public=200)
ESTIMATORS = {
    "frank_wolfe": lambda: FrankWolfeLassoClassifier(**PUBLIC, classes=[0, 1], max_iter=20),
    "frank_wolfe_multinomial": lambda: FrankWolfeLassoClassifier(**PUBLIC, classes=[0, 1, 2],
                                                                 max_iter=20),
    "dpsgd_classifier": lambda: DPSGDClassifier(**PUBLIC, classes=[0, 1]),
    "dpsgd_regressor": lambda: DPSGDRegressor(**PUBLIC),
    "dpscd_classifier": lambda: DPSCDClassifier(**PUBLIC, classes=[0, 1]),
    "dpscd_regressor": lambda: DPSCDRegressor(**PUBLIC),
    "dpight": lambda: DPIGHTClassifier(**PUBLIC, classes=[0, 1]),
    "dpnb_logistic": lambda: DPNBLogisticClassifier(**PUBLIC, classes=[0, 1]),
}


def _data():
    X = sp.random(200, 30, density=0.2, random_state=0, format="csr")
    X.data[:] = 1.0
    score = np.asarray(X[:, :5].sum(axis=1)).ravel()
    return X, score


def _as_old_layout(path, out):
    """Copy the skops file ``path`` to ``out`` with the old module names."""
    old_of = {new: old for old, new in LEGACY_MODULES.items()}

    def rename(node):
        if node.get("__module__") in old_of:
            node["__module__"] = old_of[node["__module__"]]

    return rewrite_schema(path, out, rename)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_file_of_the_old_layout_loads_and_predicts_the_same(name, tmp_path):
    X, score = _data()
    y = score if "regressor" in name else (
        score.astype(int) % 3 if "multinomial" in name else (score > 1).astype(int))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        model = ESTIMATORS[name]().fit(X, y)
    old = _as_old_layout(save_model(model, tmp_path / "new.skops"), tmp_path / "old.skops")
    with zipfile.ZipFile(old) as z:          # the file names the old module
        modules = json.dumps(json.loads(z.read("schema.json")))
    assert any(f'"{m}"' in modules for m in LEGACY_MODULES)
    assert untrusted_types(old) == []
    loaded = load_model(old)
    assert type(loaded) is type(model)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_every_moved_module_is_mapped():
    import importlib

    for old, new in LEGACY_MODULES.items():
        module = importlib.import_module(new)
        assert module.__name__ == new and old != new
