"""Saving and loading fitted models with skops.

A fitted estimator is written with :func:`skops.io.dump`, a zip archive of a
JSON schema plus NumPy arrays that is read back without executing arbitrary
code (unlike :mod:`pickle`): on loading, skops refuses every type that is not
on a trusted list.  The skops format carries its own protocol version.

**Trust rule.**  :func:`load_model` trusts exactly the types skops trusts by
default (builtins, NumPy and SciPy containers, scikit-learn's own types) plus
the dptoolkit types :func:`trusted_types` finds (no hand-kept list): the
estimators of :func:`dptoolkit._discovery.all_estimators` (the toolkit's
estimators, selectors and meta-estimators, and a private estimator defined
elsewhere that declares itself public with ``_public_estimator = True``) and the
frozen privacy events of :mod:`dptoolkit.accounting.events` (data holders without
behaviour on construction).  Any other type found in the file (for instance a class of a
package that is not dptoolkit) makes :func:`load_model` raise ``ValueError``
naming the type; the caller can add it through ``trusted=`` after inspecting
the file with :func:`skops.io.get_untrusted_types`.  Never pass types you did
not inspect.

**Versions.**  The skops format carries its own protocol version; the saved
estimator also carries the dptoolkit version that wrote it (attribute
``_dptoolkit_version``), and :func:`load_model` warns when it differs from the
running version (fitted attributes may have changed between versions) or is
missing (a skops file not written by dptoolkit).

**Data description.**  :func:`save_model` can store a public description of the
data the model takes (JSON values, kept as one string attribute so skops stores
a trusted builtin); :func:`load_model` gives it back as ``data_description_``
(None for files without one).  The public entry points are
:func:`dptoolkit.save_model` and :func:`dptoolkit.load_model`.

The privacy attributes round-trip unchanged: ``privacy_spent_`` is a tuple of
two floats and ``privacy_event_`` the same tree of frozen dataclasses
(compared equal to the original).
"""
from pathlib import Path

__all__ = ["trusted_types", "save_model", "load_model", "untrusted_types",
           "is_dptoolkit_model"]

def trusted_types():
    """The dptoolkit types a saved model may contain and :func:`load_model` trusts:
    the estimators :func:`dptoolkit._discovery.all_estimators` finds and the privacy
    events (``dptoolkit._discovery.trusted_types``), by fully qualified name.
    Computed on each call, so an estimator registered after import is included."""
    from ._discovery import trusted_types as discovered

    return discovered()


def __getattr__(name):
    # ``TRUSTED_TYPES``, the name of the former hand-kept tuple: the discovered types
    if name == "TRUSTED_TYPES":
        return trusted_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


#: Attribute of a saved copy holding the data description as a JSON string (skops
#: stores a string as a trusted builtin; :func:`load_model` parses it back).
_DESCRIPTION_ATTR = "_dptoolkit_data_description"
#: Attribute of a saved copy holding the dptoolkit version that wrote it.
_VERSION_ATTR = "_dptoolkit_version"


def _check_description(description):
    """The description as canonical JSON, or a ValueError saying what is wrong."""
    import json

    if not isinstance(description, dict) or not all(isinstance(k, str) for k in description):
        raise ValueError("data_description must be a dict with str keys, got "
                         f"{type(description).__name__}")
    try:
        text = json.dumps(description, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError("data_description must hold only JSON values (str, int, finite "
                         f"float, bool, None, lists and dicts of them): {exc}") from None
    return text


def save_model(estimator, path, *, data_description=None):
    """Write a fitted estimator to ``path`` in the skops format.

    The file is a zip archive of a JSON schema and NumPy arrays (:func:`skops.io.dump`),
    read back by :func:`load_model` without executing arbitrary code.  It records the
    dptoolkit version that wrote it and, when given, the public description of the
    data the model takes.

    Parameters
    ----------
    estimator : estimator
        Fitted estimator (a dptoolkit estimator or meta-estimator, or any object skops
        can serialise).  It is not modified: the version and the description are set on
        a shallow copy.
    path : str or path-like
        Destination file (conventionally ``*.skops``); its folder must exist.  An
        existing file is replaced.
    data_description : dict or None, default=None
        Public description of the data the model takes, stored with it and given back
        as the loaded model's ``data_description_``: JSON values only (str, int, finite
        float, bool, None, lists and dicts of them).  The command line stores
        ``source`` (``"libsvm"``, ``"corpus"`` or ``"synthetic"``), ``n_features``,
        ``classes`` (the original labels in class order: class index ``i`` is
        ``classes[i]``) and ``featurisation`` (how raw data become features), so that
        ``predict`` writes labels and ``evaluate`` checks the data.  Only public
        constants belong here: the file is released with the model.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    FileNotFoundError
        The destination folder does not exist.
    ValueError
        ``path`` is a folder, or ``data_description`` is not a dict of JSON values.
    sklearn.exceptions.NotFittedError
        ``estimator`` is a scikit-learn estimator that is not fitted (a subclass of
        ``ValueError``).

    See Also
    --------
    load_model : read the file back.

    Examples
    --------
    >>> import dptoolkit
    >>> from dptoolkit.datasets import make_sparse_classification
    >>> from dptoolkit.linear_model import FrankWolfeLassoClassifier
    >>> X, y, _ = make_sparse_classification(n_samples=200, n_features=50, random_state=0)
    >>> clf = FrankWolfeLassoClassifier(epsilon=None, max_iter=20).fit(X, y)
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.skops"
    >>> _ = dptoolkit.save_model(clf, path, data_description={"n_features": 50})
    >>> dptoolkit.load_model(path).data_description_
    {'n_features': 50}
    """
    import copy

    from sklearn.base import BaseEstimator
    from sklearn.utils.validation import check_is_fitted

    from . import _version

    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"folder {path.parent} does not exist")
    if path.is_dir():
        raise ValueError(f"{path} is a folder: give a file name (e.g. model.skops)")
    text = None if data_description is None else _check_description(data_description)
    if isinstance(estimator, BaseEstimator):
        check_is_fitted(estimator)
    stamped = copy.copy(estimator)      # the caller's estimator is left as it is
    setattr(stamped, _VERSION_ATTR, _version.__version__)
    if text is not None:
        setattr(stamped, _DESCRIPTION_ATTR, text)
    if hasattr(stamped, "data_description_"):   # a loaded model saved again
        del stamped.data_description_
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
    allowed = set(trusted_types()) | set(trusted)
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
        A skops file written by :func:`save_model`.
    trusted : sequence of str, default=()
        Extra fully qualified type names to trust (inspect the file first with
        :func:`skops.io.get_untrusted_types`; never add types for a file whose origin
        you do not trust).

    Returns
    -------
    estimator
        The fitted estimator, with an attribute ``data_description_``: the dict given
        to :func:`save_model` as ``data_description``, or None when the file has none
        (a file written without it, or by an older dptoolkit).

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        ``path`` is a folder, the file is not a skops file, or it contains types outside
        dptoolkit's estimators and privacy events, ``trusted`` and skops's defaults
        (they are named).

    Warns
    -----
    UserWarning
        The file was written by another dptoolkit version, or not by dptoolkit at all
        (a skops file of another program, e.g. a plain scikit-learn model).

    See Also
    --------
    save_model : write a fitted estimator.

    Notes
    -----
    The trusted dptoolkit types are the toolkit's estimators, selectors and
    meta-estimators and the frozen privacy events of :mod:`dptoolkit.accounting.events`
    (data holders without behaviour on construction), found by
    ``dptoolkit._discovery.trusted_types`` (with any private estimator defined
    elsewhere that declares itself public, ``_public_estimator = True``).  ``privacy_spent_`` and
    ``privacy_event_`` round-trip unchanged.
    """
    sio = _skops_io()
    path = Path(path)
    found = _types_in(sio, path)
    allowed = set(trusted_types()) | set(trusted)
    refused = [t for t in found if t not in allowed and _current_name(t) not in allowed]
    if refused:
        raise ValueError(f"{path} contains types that are not trusted: {refused}; "
                         "dptoolkit loads only its own estimators and privacy events "
                         "(dptoolkit._persistence.trusted_types()) and skops's defaults. "
                         "Inspect the file and pass the types as trusted= only if you "
                         "trust its origin")
    _bind_legacy_modules(found)
    model = sio.load(str(path), trusted=found)
    import warnings

    from . import _version

    saved = getattr(model, _VERSION_ATTR, None)
    if saved is None:
        warnings.warn(f"{path} is not a dptoolkit model: it was not written by "
                      f"dptoolkit.save_model (a skops file of another program, holding "
                      f"{type(model).__module__}.{type(model).__name__}); check its "
                      "predictions", UserWarning, stacklevel=2)
    elif saved != _version.__version__:
        warnings.warn(f"{path} was saved by dptoolkit {saved}; this is dptoolkit "
                      f"{_version.__version__}: check its predictions", UserWarning,
                      stacklevel=2)
    text = getattr(model, _DESCRIPTION_ATTR, None)
    if text is not None:
        import json

        delattr(model, _DESCRIPTION_ATTR)
        try:
            description = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: the stored data description is not valid JSON "
                             f"({exc})") from None
    else:
        description = None
    try:
        model.data_description_ = description
    except AttributeError:      # an object without a __dict__ (e.g. a bare array)
        pass
    return model


def is_dptoolkit_model(model):
    """Whether a loaded object was written by :func:`save_model` (it carries the
    dptoolkit version)."""
    return getattr(model, _VERSION_ATTR, None) is not None
