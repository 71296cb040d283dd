"""Models saved by an earlier layout of the package still load and predict the same.

``tests/data/legacy_models`` holds one fitted model of every estimator type, saved
with :func:`~dptoolkit.save_model` by the layout in which each algorithm family's
modules sat directly in ``dptoolkit/`` and ``dptoolkit/linear_model/`` (the script
that made them, ``make_legacy_models.py``, is beside them), with the predictions
they made on 20 rows of their training data.
"""
from pathlib import Path

import numpy as np
import pytest

from dptoolkit._persistence import LEGACY_MODULES, load_model, untrusted_types

FOLDER = Path(__file__).parent / "data" / "legacy_models"
FILES = sorted(FOLDER.glob("*.skops"))


def test_every_estimator_type_has_a_legacy_file():
    assert len(FILES) == 9


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_legacy_model_loads_and_predicts_the_same(path):
    assert untrusted_types(path) == []
    model = load_model(path)
    X = np.load(FOLDER / "X20.npy")
    expected = np.load(FOLDER / f"{path.stem}.predictions.npy")
    np.testing.assert_array_equal(model.predict(X), expected)
    # the class now lives in its family's folder, not in the module the file names
    assert type(model).__module__ not in LEGACY_MODULES
