"""Find every public estimator of the toolkit, and the instances scikit-learn's
estimator checks run on.

:func:`all_estimators` is scikit-learn's ``sklearn.utils.discovery.all_estimators``
for dptoolkit: it walks the public modules (no ``_`` in the module path) and
returns the public classes deriving from ``BaseEstimator``, plus the private
estimators defined outside the package that declare themselves public (a class
attribute ``_public_estimator = True`` on a subclass of
:class:`~dptoolkit._private.PrivateEstimatorMixin`).  It is the one list of
estimators: persistence's trusted types (:func:`trusted_types`), the command
line's models (:func:`cli_name`) and the contract tests read it.  :func:`check_instances`
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


def _public_modules(path, name):
    """The public modules of the package ``name`` at ``path`` (its ``__path__``),
    imported; a private or ignored module or package is neither imported nor
    walked."""
    for info in pkgutil.iter_modules(path, prefix=name + "."):
        last = info.name.rsplit(".", 1)[1]
        if last.startswith("_") or last in _MODULES_TO_IGNORE:
            continue
        module = importlib.import_module(info.name)
        yield module
        if info.ispkg:
            yield from _public_modules(module.__path__, module.__name__)


def all_estimators(type_filter=None):
    """List the public estimators of dptoolkit.

    Walks the public modules of the package (module paths without a part starting
    with ``_``; the command line and the MPI entry point are skipped) and collects
    the public classes deriving from :class:`sklearn.base.BaseEstimator` that are
    defined in dptoolkit, as scikit-learn's ``all_estimators`` does for
    scikit-learn; adds the subclasses of
    :class:`~dptoolkit._private.PrivateEstimatorMixin` defined elsewhere (already
    imported) that set the class attribute ``_public_estimator = True`` in their
    own body.

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
    import os

    import sklearn.base
    from sklearn.base import BaseEstimator

    kinds = [] if type_filter is None else (
        [type_filter] if isinstance(type_filter, str) else list(type_filter))
    unknown = [k for k in kinds if k not in _TYPE_MIXINS]
    if unknown:
        raise ValueError(f"type_filter must be one of {sorted(_TYPE_MIXINS)} or a list "
                         f"of them (or None), got {unknown!r}.")
    found = set(_registered())
    # this module's package (dptoolkit), walked without importing it again
    package = __name__.rpartition(".")[0]
    for module in _public_modules([os.path.dirname(__file__)], package):
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (not name.startswith("_") and issubclass(cls, BaseEstimator)
                    and cls.__module__.split(".")[0] == "dptoolkit"
                    and not inspect.isabstract(cls)):
                found.add((name, cls))
    if kinds:
        mixins = tuple(getattr(sklearn.base, _TYPE_MIXINS[k]) for k in kinds)
        found = {(n, c) for n, c in found if issubclass(c, mixins)}
    return sorted(found, key=itemgetter(0))


def _registered():
    """``(name, class)`` of the imported private estimators defined outside
    dptoolkit that declare themselves public (``_public_estimator = True`` in their
    own class body: a subclass does not inherit the declaration)."""
    from sklearn.base import BaseEstimator

    from ._private import PrivateEstimatorMixin

    seen, stack, found = set(), [PrivateEstimatorMixin], []
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub in seen:
                continue
            seen.add(sub)
            stack.append(sub)
            if (sub.__dict__.get("_public_estimator") is True
                    and issubclass(sub, BaseEstimator) and not inspect.isabstract(sub)
                    and not sub.__name__.startswith("_")):
                found.append((sub.__name__, sub))
    return found


def qualified_name(cls):
    """``module.ClassName`` of ``cls`` (the name skops writes in a file)."""
    return f"{cls.__module__}.{cls.__name__}"


def _event_types():
    """The frozen dataclasses of :mod:`dptoolkit.accounting.events` (the privacy
    events a fitted estimator holds as ``privacy_event_``)."""
    import dataclasses

    from .accounting import events

    return [cls for _, cls in inspect.getmembers(events, inspect.isclass)
            if cls.__module__ == events.__name__ and dataclasses.is_dataclass(cls)
            and not cls.__name__.startswith("_")]


def trusted_types():
    """The dptoolkit types a saved model may hold, by fully qualified name.

    The estimators of :func:`all_estimators` (so a registered external private
    estimator too) and the privacy events of :mod:`dptoolkit.accounting.events`
    (frozen dataclasses without behaviour on construction): the types
    :func:`dptoolkit.load_model` trusts beside skops's defaults.

    Returns
    -------
    tuple of str
        Sorted fully qualified names.
    """
    classes = [cls for _, cls in all_estimators()] + _event_types()
    return tuple(sorted({qualified_name(cls) for cls in classes}))


def _kebab(name):
    """``PrivateMean`` -> ``private-mean`` (a class name as a command-line word)."""
    import re

    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def cli_name(cls):
    """The command line's ``--model`` name of an estimator class, or None.

    A class names itself with the class attribute ``_cli_name``; otherwise a
    private classifier of the package (not a meta-estimator) and a registered
    external private estimator get their class name in kebab case
    (``PrivateMean`` -> ``private-mean``); other estimators are not models of
    the command line (None).
    """
    from sklearn.base import ClassifierMixin, MetaEstimatorMixin

    from ._private import PrivateEstimatorMixin

    declared = cls.__dict__.get("_cli_name")
    if declared is not None:
        return declared
    external = cls.__dict__.get("_public_estimator") is True
    model = (issubclass(cls, PrivateEstimatorMixin) and issubclass(cls, ClassifierMixin)
             and not issubclass(cls, MetaEstimatorMixin))
    return _kebab(cls.__name__) if external or model else None


#: The large epsilon of the private check instances: its noise is small on the
#: checks' data, so the checks test the estimator, not the noise.
CHECK_EPSILON = 1e3
#: The private Frank-Wolfe estimators' check epsilon.  Their exponential-mechanism
#: steps are drawn in floating point, whose failure probability grows like
#: exp(per-step epsilon) (Mironov 2012; Ilvento 2020): at epsilon=1e3 the
#: floating-point delta of 30 steps over the checks' 2 to 10 features is above 1
#: (no delta covers it, and the fit refuses), at 100 it is far below 1e-5.
CHECK_EPSILON_EXPONENTIAL = 100.0


def _frank_wolfe(**params):
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    return FrankWolfeLassoClassifier(**{"l1_bound": 5.0, "max_iter": 30,
                                        "random_state": 0, **params})


def _check_params():
    """Per class: the keyword arguments of its check instances (a list of dicts),
    or a callable returning the instances (meta-estimators, whose steps are
    instances too), for the classes whose defaults do not do (the others: see
    :func:`check_instances`).  Every private estimator's ``epsilon`` is explicit."""
    eps, eps_exp = CHECK_EPSILON, CHECK_EPSILON_EXPONENTIAL

    def both(**params):
        return [dict(params, epsilon=None), dict(params, epsilon=eps)]

    def select_then_fit():
        from dptoolkit.selection import DPSIS, PrivateSelectThenFit

        # the pipeline's total budget (pure DP: shares of epsilon), and each
        # step's own budget (the pipeline's epsilon=None); a pipeline of
        # non-private steps is refused (it composes two private steps)
        return [PrivateSelectThenFit(DPSIS(k=1, epsilon=None, random_state=0),
                                     _frank_wolfe(epsilon=None), epsilon=eps_exp),
                PrivateSelectThenFit(DPSIS(k=1, epsilon=eps_exp / 2, random_state=0),
                                     _frank_wolfe(epsilon=eps_exp / 2), epsilon=None)]

    def search():
        from dptoolkit.model_selection import PrivateHyperparameterSearch

        # private only (epsilon is required); pure DP (delta=0): the runs'
        # calibration is then closed-form
        return [PrivateHyperparameterSearch(_frank_wolfe(epsilon=None),
                                            {"l1_bound": [1.0, 5.0]}, epsilon=eps_exp,
                                            delta=0.0, n_runs=2.0, random_state=0)]

    def private_pipeline():
        from sklearn.preprocessing import Normalizer

        from dptoolkit.linear_model import DPNBLogisticClassifier
        from dptoolkit.pipeline import make_pipeline

        def model(epsilon):
            return DPNBLogisticClassifier(epsilon=epsilon, n_epochs=2, sampling_rate=1.0,
                                          random_state=0)

        # the steps' own budgets, and one total budget split between the steps
        return [make_pipeline(Normalizer(), model(eps)),
                make_pipeline(Normalizer(), model(None), epsilon=eps, delta=1e-5)]

    return {
        # raw documents, not a 2-D array: scikit-learn's checks skip it (its tags),
        # tests/test_feature_extraction.py checks it on text
        "DPTfidfVectorizer": [dict(vocabulary=["a", "b"], epsilon=None),
                              dict(epsilon=eps, random_state=0)],
        "PrivatePipeline": private_pipeline,
        # full batches: the Gaussian mechanism's calibration, not the subsampled one's
        "DPNBLogisticClassifier": both(n_epochs=2, sampling_rate=1.0, random_state=0),
        "DPSGDClassifier": both(n_epochs=2, random_state=0),
        "DPSGDRegressor": both(n_epochs=2, random_state=0),
        "FrankWolfeLassoClassifier": [
            dict(l1_bound=5.0, max_iter=30, epsilon=None),
            dict(l1_bound=5.0, max_iter=30, epsilon=eps_exp, delta=1e-5, random_state=0)],
        "SparsifiedLassoClassifier": [
            dict(max_iter=30, nonprivate_max_iter=100, epsilon=None, random_state=0),
            dict(max_iter=30, nonprivate_max_iter=100, epsilon=eps_exp, delta=1e-5,
                 random_state=0)],
        "PrivateSelectThenFit": select_then_fit,
        "PrivateHyperparameterSearch": search,
    }


def check_instances(estimator_class):
    """The instances scikit-learn's estimator checks run on for one class.

    A private estimator gets two: its non-private mode (``epsilon=None``) and a
    private mode at a large ``epsilon`` (with ``delta`` where its mechanism needs
    one); every ``epsilon`` is explicit.  A non-private estimator gets one.  A class
    without an entry in the table gets its defaults (with ``random_state=0`` and
    both modes of ``epsilon`` where it takes them).

    Parameters
    ----------
    estimator_class : type
        A class from :func:`all_estimators`.

    Returns
    -------
    list of estimator instances
    """
    table = _check_params()
    entry = table.get(estimator_class.__name__)
    if entry is None:       # a new simple estimator: its defaults
        taken = inspect.signature(estimator_class).parameters
        base = {"random_state": 0} if "random_state" in taken else {}
        entry = ([dict(base, epsilon=None), dict(base, epsilon=CHECK_EPSILON)]
                 if "epsilon" in taken else [base])
    if callable(entry):
        return entry()
    return [estimator_class(**params) for params in entry]


#: Checks an estimator is known not to pass, with the reason (by class name).
_PIPELINE_STEPS_FITTED_IN_PLACE = (
    "a scikit-learn Pipeline fits the estimators of its steps parameter in place; "
    "scikit-learn declares the same expected failure for its own Pipeline")
_EXPECTED_FAILED_CHECKS = {
    "PrivatePipeline": {
        "check_dont_overwrite_parameters": _PIPELINE_STEPS_FITTED_IN_PLACE,
        "check_estimators_overwrite_params": _PIPELINE_STEPS_FITTED_IN_PLACE,
    },
    "PrivateSelectThenFit": {
        "check_classifiers_classes":
            "the private selectors (DPSIS, TwoStageSelector) score features against a "
            "numeric target within public bounds (y_bounds, the sensitivity of the "
            "scores); string class labels have no public numeric coding, so the "
            "selection step refuses them",
    },
}


def expected_failed_checks(estimator):
    """The checks ``estimator`` is known not to pass, ``{check name: reason}``
    (the callable ``parametrize_with_checks(expected_failed_checks=...)`` takes)."""
    return dict(_EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {}))
