"""Find every public estimator of the toolkit, and the instances scikit-learn's
estimator checks run on.

:func:`all_estimators` is scikit-learn's ``sklearn.utils.discovery.all_estimators``
for dptoolkit: it walks the public modules (no ``_`` in the module path) and
returns the public classes deriving from ``BaseEstimator``.  :func:`check_instances`
gives, for one class, the instances ``parametrize_with_checks`` runs on: its
non-private mode (``epsilon=None``) and, for a private estimator, a private mode at
a large ``epsilon``, with the public facts a private fit requires; and
:func:`expected_failed_checks` the checks an instance is known not to pass, each
with its reason (the callable ``parametrize_with_checks`` takes).
"""
import importlib
import inspect
import pkgutil
from operator import itemgetter

# the command line and the MPI entry point are programs, not libraries of estimators
_MODULES_TO_IGNORE = {"cli", "mpi", "__main__"}

_TYPE_MIXINS = {
    "classifier": "ClassifierMixin",
    "regressor": "RegressorMixin",
    "transformer": "TransformerMixin",
    "meta-estimator": "MetaEstimatorMixin",
}


def all_estimators(type_filter=None):
    """List the public estimators of dptoolkit.

    Walks the public modules of the package (module paths without a part starting
    with ``_``; the command line and the MPI entry point are skipped) and collects
    the public classes deriving from :class:`sklearn.base.BaseEstimator` that are
    defined in dptoolkit, as scikit-learn's ``all_estimators`` does for
    scikit-learn.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer", "meta-estimator"} \
or list of such str, default=None
        Keep only the estimators of at least one of these kinds (by their
        scikit-learn mixin); None keeps all.

    Returns
    -------
    list of (str, type)
        ``(name, class)`` pairs sorted by name, each class once.

    Raises
    ------
    ValueError
        If ``type_filter`` names an unknown kind.
    """
    import sklearn.base
    from sklearn.base import BaseEstimator

    import dptoolkit

    kinds = [] if type_filter is None else (
        [type_filter] if isinstance(type_filter, str) else list(type_filter))
    unknown = [k for k in kinds if k not in _TYPE_MIXINS]
    if unknown:
        raise ValueError(f"type_filter must be one of {sorted(_TYPE_MIXINS)} or a list "
                         f"of them (or None), got {unknown!r}.")
    found = set()
    for info in pkgutil.walk_packages(dptoolkit.__path__, prefix="dptoolkit."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") or p in _MODULES_TO_IGNORE for p in parts):
            continue
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (not name.startswith("_") and issubclass(cls, BaseEstimator)
                    and cls.__module__.split(".")[0] == "dptoolkit"
                    and not inspect.isabstract(cls)):
                found.add((name, cls))
    if kinds:
        mixins = tuple(getattr(sklearn.base, _TYPE_MIXINS[k]) for k in kinds)
        found = {(n, c) for n, c in found if issubclass(c, mixins)}
    return sorted(found, key=itemgetter(0))
