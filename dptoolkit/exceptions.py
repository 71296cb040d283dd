"""Warnings and errors of dptoolkit."""

__all__ = ["PrivacyLeakWarning", "BudgetExceededError", "DataClippedWarning",
           "EmptySupportWarning", "InvalidParameterError", "ScreeningUnavailableError"]


class PrivacyLeakWarning(UserWarning):
    """A bound or statistic was taken from the private data itself.

    The privacy guarantee stated by the routine no longer holds as written:
    the data-derived quantity (a max-abs scale, a centre, a norm bound) must
    be public, or be paid for with privacy budget, for the guarantee to hold.
    """


class DataClippedWarning(UserWarning):
    """Examples were clipped to a public bound before a private computation.

    Clipping is a per-example (local) operation, so it does not weaken the
    guarantee, but it changes the data the model is fitted on.
    """


class EmptySupportWarning(UserWarning):
    """A non-private stage selected no feature at all, e.g. every block LASSO of
    :class:`~dptoolkit.selection.TwoStageSelector` had an empty support.

    The private stage that follows then chooses uniformly at random.  Usually the
    penalty is too large for the scale of the features.  The warning is a
    diagnostic for the analyst: whether it fires is a (non-private) function of
    the data, so it is not covered by the privacy guarantee and must not be
    published with the private output.
    """


class BudgetExceededError(ValueError):
    """A privacy spend would exceed the budget of a
    :class:`~dptoolkit.accounting.BudgetAccountant`.

    Raised before any work is done (check -> work -> spend).
    """


class InvalidParameterError(ValueError, TypeError):
    """A hyper-parameter has a value or type outside its declared constraints.

    Raised at the start of ``fit`` for every parameter, whether or not the fit
    uses it.  It is both a ``ValueError`` and a ``TypeError`` (scikit-learn's
    convention for its own ``InvalidParameterError``), so code catching either
    keeps working; the message names the parameter and what it accepts.
    """


class ScreeningUnavailableError(InvalidParameterError):
    """An int ``k`` (a private candidate screening) was asked of a fit
    whose privacy accounting has no place for it.

    The screening's Gaussian release is composed under zero-concentrated DP
    (Bun and Steinke, 2016), so it needs a private fit with ``delta > 0`` and
    zCDP accounting (for :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier`
    also an exponential-mechanism selector), e.g. not pure epsilon-DP or
    ``composition="advanced"``.  Code composing estimators (e.g.
    :class:`~dptoolkit.selection.PrivateSelectThenFit`) catches this class to
    fall back to a fit without screening; it is an
    :class:`InvalidParameterError`, so a ``ValueError`` too.
    """


def nothing_released(exc):
    """Mark ``exc`` as an error whose occurrence depends neither on the private
    data nor on the noise (e.g. Dask workers that died): a private fit it stops
    is not charged (see ``dptoolkit._private.guarded_fit``).  Returns ``exc``."""
    exc.dptoolkit_nothing_released = True
    return exc
