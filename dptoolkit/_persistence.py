"""Saving and loading fitted models with skops.

A fitted estimator is written with :func:`skops.io.dump`, a zip archive of a
JSON schema plus NumPy arrays that is read back without executing arbitrary
code (unlike :mod:`pickle`): on loading, skops refuses every type that is not
on a trusted list.  The skops format carries its own protocol version.

**Trust rule.**  :func:`load_model` trusts exactly the types skops trusts by
default (builtins, NumPy and SciPy containers, scikit-learn's own types) plus
the dptoolkit types listed in :data:`TRUSTED_TYPES`: the toolkit's private
estimators and meta-estimators and the frozen privacy events of
:mod:`dptoolkit.accounting.events` (data holders without behaviour on
construction).  Any other type found in the file (for instance a class of a
package that is not dptoolkit) makes :func:`load_model` raise ``ValueError``
naming the type; the caller can add it through ``trusted=`` after inspecting
the file with :func:`skops.io.get_untrusted_types`.  Never pass types you did
not inspect.

**Versions.**  The skops format carries its own protocol version; the saved
estimator also carries the dptoolkit version that wrote it (attribute
``_dptoolkit_version``), and :func:`load_model` warns when it differs from the
running version (fitted attributes may have changed between versions).

The privacy attributes round-trip unchanged: ``privacy_spent_`` is a tuple of
two floats and ``privacy_event_`` the same tree of frozen dataclasses
(compared equal to the original).
"""
from pathlib import Path

__all__ = ["TRUSTED_TYPES", "save_model", "load_model", "untrusted_types"]

#: dptoolkit types a saved model may contain and :func:`load_model` trusts.
TRUSTED_TYPES = (
    # estimators
    "dptoolkit.linear_model._frank_wolfe._estimator.FrankWolfeLassoClassifier",
    "dptoolkit.linear_model._sparsifier.SparsifiedLassoClassifier",
    "dptoolkit.linear_model._glm._dpsgd.DPSGDClassifier",
    "dptoolkit.linear_model._glm._dpsgd.DPSGDRegressor",
    "dptoolkit.linear_model._glm._scd.DPSCDClassifier",
    "dptoolkit.linear_model._glm._scd.DPSCDRegressor",
    "dptoolkit.linear_model._glm._ight.DPIGHTClassifier",
    "dptoolkit.linear_model._glm._nb_logistic.DPNBLogisticClassifier",
    # selectors and meta-estimators
    "dptoolkit.selection._sis.SIS",
    "dptoolkit.selection._sis.DPSIS",
    "dptoolkit.selection._two_stage.TwoStageSelector",
    "dptoolkit.selection._pipeline.PrivateSelectThenFit",
    "dptoolkit.model_selection._search.PrivateHyperparameterSearch",
    # privacy events (frozen dataclasses)
    "dptoolkit.accounting.events.NoOpEvent",
    "dptoolkit.accounting.events.PureDPEvent",
    "dptoolkit.accounting.events.ApproxDPEvent",
    "dptoolkit.accounting.events.ExponentialMechanismEvent",
    "dptoolkit.accounting.events.LaplaceEvent",
    "dptoolkit.accounting.events.GaussianEvent",
    "dptoolkit.accounting.events.ZCDPEvent",
    "dptoolkit.accounting.events.PoissonSampledEvent",
    "dptoolkit.accounting.events.SampledWithoutReplacementEvent",
    "dptoolkit.accounting.events.SelfComposedEvent",
    "dptoolkit.accounting.events.ComposedEvent",
    "dptoolkit.accounting.events.RepeatAndSelectEvent",
    "dptoolkit.accounting.events.MaxOfEvents",
)


#: Modules of earlier layouts -> where their classes live now.  A file saved before
#: the algorithm families moved into their own folders names the old modules; on
#: loading, each is bound to its new module (``sys.modules``) so skops finds the
#: class, and a type is trusted when its new name is.  (The Frank-Wolfe estimator's
#: old module is now its package, which re-exports the class.)
LEGACY_MODULES = {
    "dptoolkit.linear_model._frank_wolfe": "dptoolkit.linear_model._frank_wolfe._estimator",
    "dptoolkit.linear_model._dpsgd": "dptoolkit.linear_model._glm._dpsgd",
    "dptoolkit.linear_model._scd": "dptoolkit.linear_model._glm._scd",
    "dptoolkit.linear_model._ight": "dptoolkit.linear_model._glm._ight",
    "dptoolkit.linear_model._nb_logistic": "dptoolkit.linear_model._glm._nb_logistic",
}


def _current_name(type_name):
    """The fully qualified name ``type_name`` (from a saved file) has in this layout."""
    module, _, name = type_name.rpartition(".")
    return f"{LEGACY_MODULES[module]}.{name}" if module in LEGACY_MODULES else type_name


def _bind_legacy_modules(type_names):
    """Let skops import the old modules named in a file (aliases of the new ones)."""
    import importlib
    import sys

    for type_name in type_names:
        module = type_name.rpartition(".")[0]
        if module in LEGACY_MODULES and module not in sys.modules:
            sys.modules[module] = importlib.import_module(LEGACY_MODULES[module])


def _skops_io():
    try:
        import skops.io as sio
    except ImportError as exc:  # declared dependency; a clear message if missing
        raise ImportError("saving and loading models needs skops "
                          "(pip install skops)") from exc
    return sio


def save_model(estimator, path):
    """Write a fitted estimator to ``path`` in the skops format.

    Parameters
    ----------
    estimator : estimator
        Fitted estimator (any object skops can serialise).
    path : str or path-like
        Destination file (conventionally ``*.skops``); its folder must exist.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    FileNotFoundError
        The destination folder does not exist.
    """
    import copy

    from . import __version__

    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"folder {path.parent} does not exist")
    stamped = copy.copy(estimator)      # the caller's estimator is left as it is
    stamped._dptoolkit_version = __version__
    _skops_io().dump(stamped, path)
    return path


def untrusted_types(path, trusted=()):
    """Types in the skops file ``path`` that :func:`load_model` would refuse.

    Parameters
    ----------
    path : str or path-like
    trusted : sequence of str, default=()
        Extra fully qualified type names to trust.

    Returns
    -------
    list of str

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        ``path`` is a folder or not a skops file.
    """
    allowed = set(TRUSTED_TYPES) | set(trusted)
    return [t for t in _types_in(_skops_io(), Path(path))
            if t not in allowed and _current_name(t) not in allowed]


def _types_in(sio, path):
    """The types skops finds in ``path``, with errors that name the file."""
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a skops model file")
    if not path.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    try:
        return sio.get_untrusted_types(file=str(path))
    except Exception as exc:  # zipfile.BadZipFile, KeyError, JSON errors
        raise ValueError(f"{path} is not a skops model file ({type(exc).__name__}: "
                         f"{exc})") from exc


def load_model(path, trusted=()):
    """Load a model written by :func:`save_model`, trusting only known types.

    Parameters
    ----------
    path : str or path-like
        A skops file.
    trusted : sequence of str, default=()
        Extra fully qualified type names to trust (inspect the file first).

    Returns
    -------
    estimator

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        ``path`` is a folder, the file is not a skops file, or it contains types outside
        :data:`TRUSTED_TYPES`, ``trusted`` and skops's defaults (they are named).

    Warns
    -----
    UserWarning
        The file was written by another dptoolkit version.
    """
    sio = _skops_io()
    path = Path(path)
    found = _types_in(sio, path)
    allowed = set(TRUSTED_TYPES) | set(trusted)
    refused = [t for t in found if t not in allowed and _current_name(t) not in allowed]
    if refused:
        raise ValueError(f"{path} contains types that are not trusted: {refused}; "
                         "dptoolkit loads only its own estimators and privacy events "
                         "(dptoolkit._persistence.TRUSTED_TYPES) and skops's defaults. "
                         "Inspect the file and pass the types as trusted= only if you "
                         "trust its origin")
    _bind_legacy_modules(found)
    model = sio.load(str(path), trusted=found)
    from . import __version__

    saved = getattr(model, "_dptoolkit_version", None)
    if saved != __version__:
        import warnings

        warnings.warn(f"{path} was saved by dptoolkit {saved or '(unknown version)'}; "
                      f"this is dptoolkit {__version__}: check its predictions",
                      UserWarning, stacklevel=2)
    return model
