"""Fits whose coef_ must stay bit-identical across refactorings.

``python tests/_reference_fits.py`` records the SHA-256 of every fit's ``coef_``
bytes into ``tests/data/reference_coef_hashes.json``; ``test_reference_fits.py``
refits and compares.  Record only when a change of results is intended (and say
why in the commit message).
"""
import hashlib
import json
import pathlib
import warnings

import numpy as np

HASH_FILE = pathlib.Path(__file__).parent / "data" / "reference_coef_hashes.json"


def _a9a():
    from dptoolkit.datasets import get_data_path, load_libsvm

    X, y = load_libsvm(get_data_path("a9a.bz2"), n_features=123)
    return X[:3000], y[:3000]


def _synthetic():
    from dptoolkit.datasets import make_sparse_classification

    X, y = make_sparse_classification(n_samples=1500, n_features=3000, n_informative=10,
                                      avg_nnz=20, random_state=0)[:2]
    return X, y


def _synthetic_multiclass():
    X, y = _synthetic()
    rng = np.random.default_rng(1)
    y = np.where(rng.random(y.shape[0]) < 0.3, 2, y)
    return X, y


def cases():
    """name -> (estimator class, keyword arguments, data factory or None)."""
    from dptoolkit.linear_model import (DPIGHTClassifier, DPNBLogisticClassifier,
                                        DPSGDClassifier, FrankWolfeLassoClassifier,
                                        SparsifiedLassoClassifier)

    FW = FrankWolfeLassoClassifier
    fw = dict(l1_bound=20.0, max_iter=200, random_state=0)
    private = dict(epsilon=1.0, delta=1e-5, composition="advanced")
    return {
        "fw_nonprivate": (FW, {**fw, "epsilon": None}, None),
        "fw_grouped_advanced": (FW, {**fw, **private}, None),
        "fw_standard_exponential_advanced": (FW, {**fw, **private, "solver": "standard"},
                                             None),
        "fw_laplace": (FW, {**fw, "epsilon": 1.0, "delta": 1e-5, "mechanism": "laplace"},
                       None),
        "fw_pure": (FW, {**fw, "epsilon": 2.0}, None),
        "fw_multinomial_advanced": (FW, {**fw, **private}, _synthetic_multiclass),
        # epsilon is the total (0.05 for the count + 0.95 for the private fit) and
        # the count comes from 200 Frank-Wolfe steps, as when this was recorded
        "sparsifier": (SparsifiedLassoClassifier,
                       dict(epsilon=1.0, epsilon_count=0.05, delta=1e-5, l1_bound=20.0,
                            max_iter=100, nonprivate_max_iter=200, mechanism="laplace",
                            nonprivate_solver="frank_wolfe", random_state=0), None),
        "dpsgd": (DPSGDClassifier, dict(epsilon=1.0, delta=1e-5, n_epochs=2,
                                        learning_rate=0.1, batch_size=100,
                                        random_state=0), None),
        "dpight": (DPIGHTClassifier, dict(epsilon=1.0, delta=1e-5, max_iter=20,
                                          sparsity=10, learning_rate=1.0, k=None,
                                          random_state=0), None),
        # the default model at its defaults (the vocabulary and the step from the noise)
        "dpnb": (DPNBLogisticClassifier, dict(epsilon=1.0, delta=1e-5, n_epochs=2,
                                              random_state=0), None),
        "dpnb_multiclass": (DPNBLogisticClassifier, dict(epsilon=1.0, delta=1e-5,
                                                         n_epochs=2, random_state=0),
                            _synthetic_multiclass),
    }


def fit_hashes():
    import inspect

    out = {}
    for name, (cls, kwargs, data) in cases().items():
        accepted = inspect.signature(cls).parameters
        # recording on code that predates a parameter: its default was the old behaviour
        kwargs = {k: v for k, v in kwargs.items() if k in accepted}
        for dname, load in (("a9a", _a9a), ("synthetic", data or _synthetic)):
            X, y = load()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = cls(**kwargs).fit(X, y)
            coef = np.ascontiguousarray(est.coef_, dtype=np.float64)
            out[f"{name}/{dname}"] = hashlib.sha256(coef.tobytes()).hexdigest()
    return out


if __name__ == "__main__":
    HASH_FILE.parent.mkdir(exist_ok=True)
    HASH_FILE.write_text(json.dumps(fit_hashes(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {HASH_FILE}")
