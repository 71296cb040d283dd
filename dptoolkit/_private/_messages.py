"""Data-dependent warnings and errors: one bit, never a count, with the standard note.

Part of the contract of :mod:`dptoolkit._private` (its "Side channels"): every
warning or error whose presence depends on the private data is built here.
"""
import warnings

__all__ = ["DATA_DEPENDENT_NOTE", "data_dependent_message", "data_dependent_warning",
           "data_dependent_error"]

#: The standard note every data-dependent warning and error ends with.
DATA_DEPENDENT_NOTE = ("[Whether this message appears depends on the private data; it is "
                       "not covered by the differential-privacy guarantee.]")


def data_dependent_message(what):
    """The text of a data-dependent warning or error: ``what`` plus the standard note.

    Parameters
    ----------
    what : str
        States *that* something happened, in terms of public quantities only
        (bounds, hyper-parameters, declared classes): never how many rows, which
        rows, or a value read from the data.

    Returns
    -------
    str
        ``what`` followed by :data:`DATA_DEPENDENT_NOTE`.
    """
    if not isinstance(what, str) or not what:
        raise TypeError("what must be a non-empty str")
    return f"{what.rstrip()} {DATA_DEPENDENT_NOTE}"


def data_dependent_warning(what, category, *, stacklevel=2):
    """Warn that something happened to the private data (one bit, no count).

    The one place that emits warnings whose presence depends on the data (rows
    clipped to the public bound, a non-private solver inside a mechanism that
    did not converge, ...).  Its presence is one bit about the data, outside
    the guarantee; the text says so (:data:`DATA_DEPENDENT_NOTE`).

    Parameters
    ----------
    what : str
        See :func:`data_dependent_message`: no counts, indices or data values.
    category : type of Warning
        E.g. :class:`~dptoolkit.exceptions.DataClippedWarning`.
    stacklevel : int, default=2
        As for :func:`warnings.warn`, counted from the caller of this function.
    """
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"category must be a Warning subclass, got {category!r}")
    warnings.warn(data_dependent_message(what), category, stacklevel=stacklevel + 1)


def data_dependent_error(what, exc_type=ValueError):
    """An exception (to ``raise``) whose occurrence depends on the private data.

    Parameters
    ----------
    what : str
        See :func:`data_dependent_message`: name the argument and the expected
        range, never a count, an index or a data value.
    exc_type : type of Exception, default=ValueError

    Returns
    -------
    Exception
        ``exc_type(data_dependent_message(what))``.
    """
    return exc_type(data_dependent_message(what))
