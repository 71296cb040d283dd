"""dptoolkit: differentially private learning on sparse, high-dimensional data.

Subpackages
-----------
linear_model
    Frank-Wolfe LASSO logistic regression (private and not), the Sparsifier,
    DP-IGHT, naive-Bayes-scaled logistic regression, DP-SCD, DP-SGD, and the
    DSAL Lasso solvers (not private).
accounting
    Privacy events, the accountant that turns them into (epsilon, delta),
    calibration, budgets.
selection
    SIS / DP-SIS, private top-k (canonical Lipschitz, peeling), the two-stage
    selector and the select-then-fit pipeline.
feature_extraction
    Private text features: a vocabulary by private partition selection or from
    a public word list, private idf, names for hashed features.
datasets
    LIBSVM and text-corpus loaders (in memory or as Dask arrays), public-bounds
    clipping, synthetic data.
model_selection
    A private hyperparameter search.
dsal
    The DSAL Lasso solvers' engine (the estimators are in ``linear_model``) and
    their MPI solver (``dsal.mpi``).
distributed
    The Dask engine behind the estimators' ``fit`` on a Dask array (no public
    names).
cli
    The command line, ``python -m dptoolkit`` (``train``, ``predict``,
    ``evaluate``, ``account``).

Modules
-------
mechanisms
    Laplace, Gaussian (classical and analytic), double-geometric, exponential,
    report-noisy-max.
pipeline
    A scikit-learn pipeline whose private steps compose into one guarantee.
exceptions
    The toolkit's warnings and errors.
kernels
    The compiled kernels under documented names, for benchmarks and experts.

Functions
---------
save_model, load_model
    Write a fitted estimator to a skops file and read it back, trusting only
    dptoolkit's own types (and, for a file written by the command line, the
    public description of the data the model takes).
"""


def _check_build():
    """Raise an ImportError that says how to build when the extensions are missing.

    Importing from a source tree that was never built (or a partial build) would
    otherwise fail later with a bare ``No module named
    'dptoolkit.linear_model._frank_wolfe._heap'`` (as scikit-learn's
    ``sklearn/__check_build`` does, the error says what to run).
    Only the presence of the modules is checked (``find_spec``, nothing is
    loaded), so ``import dptoolkit`` stays cheap.
    """
    import os
    from importlib.machinery import EXTENSION_SUFFIXES

    here = os.path.dirname(os.path.abspath(__file__))

    def built(module):
        # a file check, not find_spec: that would import the subpackages now
        base = os.path.join(here, *module.split("."))
        return any(os.path.exists(base + suffix) for suffix in EXTENSION_SUFFIXES)

    # the heaps always; in a source tree (or a wheel shipping the sources) every
    # .pyx, wherever it sits beside its estimators
    names = {"linear_model._frank_wolfe._heap"}
    for folder, _, files in os.walk(here):
        prefix = os.path.relpath(folder, here).replace(os.sep, ".")
        names |= {(f[:-4] if prefix == "." else f"{prefix}.{f[:-4]}")
                  for f in files if f.endswith(".pyx")}
    missing = sorted(n for n in names if not built(n))
    if missing:
        raise ImportError(
            "dptoolkit's compiled extensions are not built: run `pip install -e .` "
            "(or `python setup.py build_ext --inplace`) from the source tree. "
            f"Missing in {here}: {', '.join(missing)}. If you meant to use an "
            "installed dptoolkit, run Python from outside the source tree."
        )


_check_build()
del _check_build

from .exceptions import BudgetExceededError, DataClippedWarning, PrivacyLeakWarning  # noqa: E402
from ._persistence import load_model, save_model  # noqa: E402  (skops imported on use)

from ._version import __version__  # noqa: E402

#: The three exceptions a user meets most are importable here too, but are listed
#: (and documented) once, in :mod:`dptoolkit.exceptions`.
__all__ = [
    "__version__",
    "load_model",
    "save_model",
]
