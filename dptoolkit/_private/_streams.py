"""Noise streams and nesting: who draws a nested fit's noise, and who pays for it.

A parent hands each nested private fit a child stream for that one call
(:func:`fit_with_stream`) and marks the fits it charges for (:func:`nested_fits`),
through context variables: nothing random is stored on a fitted object, and the
default ledger knows a nested fit without inspecting the call stack.  A seed
given by the user makes the noise reproducible, which :func:`warn_fixed_noise`
says once per process.  Part of the contract of :mod:`dptoolkit._private`.
"""
import contextlib
import contextvars
import warnings

import numpy as np

from ..exceptions import PrivacyLeakWarning

__all__ = ["nested_fits", "fit_with_stream", "fixed_noise_message", "warn_fixed_noise",
           "fixed_noise_warning_scope"]


# ------------------------------------------------------------------ noise handles
#: ``(estimator, Generator)``: the child stream a parent hands to the nested fit it
#: is running (see :func:`fit_with_stream`); never stored on either object.
_PARENT_STREAM = contextvars.ContextVar("dptoolkit_parent_stream", default=(None, None))
#: The private estimator whose running ``fit`` charges for the fits nested in it
#: (see :func:`nested_fits`); None at the top level.
_CHARGING_PARENT = contextvars.ContextVar("dptoolkit_charging_parent", default=None)


@contextlib.contextmanager
def nested_fits(parent):
    """Fits run in this block are parts of ``parent``'s fit, which charges for them.

    A composite (search, pipeline, Sparsifier) runs its nested private fits here
    or through :func:`fit_with_stream` (which opens one): their spends are
    recorded on them but not charged to the default ledger, a nested non-private
    fit does not warn, and ``parent`` charges the composed event once.  An
    explicit context variable, not an inspection of the call stack.
    """
    token = _CHARGING_PARENT.set(parent)
    try:
        yield
    finally:
        _CHARGING_PARENT.reset(token)

#: Whether :func:`warn_fixed_noise` has warned in this process (it warns once).
_FIXED_NOISE_WARNED = [False]


def fit_with_stream(estimator, stream, *args, **kwargs):
    """``estimator.fit(*args, **kwargs)`` with its noise drawn from ``stream``.

    The stream is visible to that one call only (a context variable read by
    :meth:`PrivateEstimatorMixin._noise_rng`); it is not set as a parameter or
    an attribute, so the fitted ``estimator`` keeps its own ``random_state``
    (the user's value, normally None) and holds no handle on its noise.

    Parameters
    ----------
    estimator : PrivateEstimatorMixin
        The nested estimator (a clone owned by the parent).
    stream : numpy.random.Generator
        A child stream of the parent's generator (``rng.spawn(1)[0]``).

    Returns
    -------
    The return value of ``estimator.fit`` (the estimator).
    """
    if not isinstance(stream, np.random.Generator):
        raise TypeError(f"stream must be a numpy.random.Generator, got "
                        f"{type(stream).__name__}")
    token = _PARENT_STREAM.set((estimator, stream))
    try:
        with nested_fits(_CHARGING_PARENT.get() or _NESTED):
            return estimator.fit(*args, **kwargs)
    finally:
        _PARENT_STREAM.reset(token)


def _stream_for(estimator):
    """The stream a parent handed to ``estimator``'s running fit, else None."""
    owner, stream = _PARENT_STREAM.get()
    return stream if owner is estimator else None


def fixed_noise_message(what):
    """The text of the fixed-noise warning; ``what`` names the seed's source."""
    return (f"{what} fixes the noise of the private mechanisms: anyone who knows it "
            "can regenerate the noise and remove it from the released model, so the "
            "guarantee does not hold against them (a Generator given as random_state "
            "is also kept, in its final state, on the fitted estimator).  Use a seed "
            "for tests and debugging only; with random_state=None (no --seed) the "
            "noise comes from fresh OS entropy and nothing on the fitted model can "
            "regenerate it.  [Shown once per process.]")


def warn_fixed_noise(what, *, stacklevel=2):
    """Warn, once per process, that a given seed makes the noise reproducible.

    Called by every private fit given a ``random_state`` (through
    :meth:`PrivateEstimatorMixin._check_spend`) and by the command line for
    ``--seed`` (which runs first, so its wording wins and the fit adds nothing).

    Parameters
    ----------
    what : str
        The source of the seed, e.g. ``"random_state=0"`` or ``"--seed 7"``.
    stacklevel : int, default=2
        As for :func:`warnings.warn`, counted from the caller of this function.

    Returns
    -------
    bool
        Whether it warned (False: already warned in this process).
    """
    if _FIXED_NOISE_WARNED[0]:
        return False
    _FIXED_NOISE_WARNED[0] = True
    warnings.warn(fixed_noise_message(what), PrivacyLeakWarning, stacklevel=stacklevel + 1)
    return True


@contextlib.contextmanager
def fixed_noise_warning_scope():
    """A scope with its own "once": :func:`warn_fixed_noise` warns again inside it.

    The command line runs each command in one (a command is one process when run
    from a shell; tests run several in one interpreter), and tests of the warning
    use it; the process-wide state is restored on exit.
    """
    saved = _FIXED_NOISE_WARNED[0]
    _FIXED_NOISE_WARNED[0] = False
    try:
        yield
    finally:
        _FIXED_NOISE_WARNED[0] = saved


def _describe_random_state(random_state):
    if isinstance(random_state, (np.random.Generator, np.random.BitGenerator,
                                 np.random.SeedSequence, np.random.RandomState)):
        return f"random_state (a {type(random_state).__name__})"
    return f"random_state={random_state!r}"


#: The charging parent of a fit run through :func:`fit_with_stream` outside any
#: :func:`nested_fits` block (a stream given by a parent always means nesting).
_NESTED = object()


def _inside_private_fit(estimator):
    """True when ``estimator.fit`` runs nested in another private estimator's fit
    (inside :func:`nested_fits` or :func:`fit_with_stream`)."""
    parent = _CHARGING_PARENT.get()
    return parent is not None and parent is not estimator
