"""Where the data lives: :func:`get_data_path` (environment variable ``DPTOOLKIT_DATA``)."""
import os
from pathlib import Path

__all__ = ["get_data_path"]


def get_data_path(name=""):
    """Path of a file or folder in the data directory.

    Parameters
    ----------
    name : str or path-like, default=""
        Relative name such as ``"a9a.bz2"`` or ``"text/aclImdb-train-test.tar.xz"``.

    Returns
    -------
    pathlib.Path
        ``$DPTOOLKIT_DATA/name``.  When the variable is unset: ``../shared/data/name``
        relative to the current directory, or, if that folder does not exist,
        relative to the repository of an editable install (so that scripts run
        from a sub-folder, like the Sphinx gallery, find the data too).
        The path is not checked for existence.

    Raises
    ------
    TypeError
        If ``name`` is not a str or path-like.
    """
    _check_path_like(name, "name")
    env = os.environ.get("DPTOOLKIT_DATA")
    if env:
        return Path(env).expanduser() / name
    root = Path("../shared/data")
    if not root.is_dir():
        repo_relative = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
        if repo_relative.is_dir():
            root = repo_relative
    return root / name


def _check_path_like(value, name):
    """``value`` as given; a ``TypeError`` naming ``name`` unless it is a str or
    path-like."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or path-like, got {type(value).__name__}")
    return value
