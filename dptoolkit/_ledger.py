"""The process-wide privacy ledger: every private fit is recorded somewhere.

A private estimator given ``accountant=`` is checked against it and charges
it (:mod:`dptoolkit._private`).  A private fit *without* an accountant is
recorded in the **default accountant** of the process, as in diffprivlib
(``BudgetAccountant.load_default``), so that repeated fits show up:
``GridSearchCV`` or ``cross_val_score`` over a private estimator make one
private fit per candidate and fold (plus the refit), each on the same data,
and the default ledger lists every one of them.

* :func:`default_accountant` returns the ledger (a
  :class:`~dptoolkit.accounting.BudgetAccountant` with an infinite budget: it
  records, it never refuses).  :func:`set_default_accountant` installs another
  one, e.g. with a finite budget, which then refuses a fit that would exceed it
  before any work; :func:`using_accountant` does so for a ``with`` block.
* Only the outermost private fit is recorded: the runs of a private
  hyperparameter search or the steps of a select-then-fit pipeline are paid
  by the meta-estimator's own (composed) guarantee, not once more.
* Under scikit-learn model selection (a fit called from
  ``sklearn.model_selection``) without an accountant that pays for it (the
  estimator's ``accountant=`` or a default accountant with a finite budget),
  a :class:`~dptoolkit.exceptions.PrivacyLeakWarning` says that every fit
  spends its own budget on the same data: the guarantee of the selected model
  is the composition of all of them (the ledger's ``spent``), not its own
  ``privacy_spent_``.  Tune with
  :class:`dptoolkit.model_selection.PrivateHyperparameterSearch`, whose
  guarantee includes the search.

The ledger is per process: fits run in worker processes (``n_jobs > 1``
with a process-based joblib backend) are recorded in the workers' ledgers.

The contract module calls :func:`check_default` at the check step and
:func:`record_default` at the spend step of a private fit that has no
accountant.
"""
import contextlib
import math
import sys
import threading
import warnings

from .exceptions import PrivacyLeakWarning

__all__ = ["default_accountant", "set_default_accountant", "using_accountant",
           "check_default", "record_default", "MODEL_SELECTION_WARNING"]

_lock = threading.Lock()
_default = None

#: The warning of a private fit under scikit-learn model selection that nothing pays for.
MODEL_SELECTION_WARNING = (
    "a private estimator is being fitted by scikit-learn model selection "
    "(GridSearchCV, cross_val_score, ...) without an accountant that pays for it: "
    "every fit spends its own privacy budget on the same data, so the selected model's "
    "guarantee is the composition of all fits (dptoolkit's default ledger records them: "
    "dptoolkit._ledger.default_accountant().spent), not its privacy_spent_.  Use "
    "dptoolkit.model_selection.PrivateHyperparameterSearch, or pass accountant= with a "
    "finite budget")


def _check_accountant(accountant, name):
    if not (callable(getattr(accountant, "check", None))
            and callable(getattr(accountant, "spend", None))):
        raise TypeError(f"{name} must be a dptoolkit.accounting.BudgetAccountant, got "
                        f"{type(accountant).__name__}")
    return accountant


def default_accountant():
    """The process-wide default accountant (created on first use).

    Returns
    -------
    BudgetAccountant
        Initially ``BudgetAccountant()`` (infinite epsilon: records every
        private fit made without ``accountant=``, refuses none).
    """
    global _default
    with _lock:
        if _default is None:
            from .accounting import BudgetAccountant

            _default = BudgetAccountant()
        return _default


def set_default_accountant(accountant):
    """Install ``accountant`` as the default; return the previous one.

    Parameters
    ----------
    accountant : BudgetAccountant or None
        ``None`` installs a fresh tracking-only ``BudgetAccountant()``.

    Returns
    -------
    BudgetAccountant
        The accountant that was the default.

    Raises
    ------
    TypeError
        ``accountant`` has no ``check`` and ``spend`` methods.
    """
    global _default
    if accountant is None:
        from .accounting import BudgetAccountant

        accountant = BudgetAccountant()
    _check_accountant(accountant, "accountant")
    previous = default_accountant()
    with _lock:
        _default = accountant
    return previous


@contextlib.contextmanager
def using_accountant(accountant=None):
    """Make ``accountant`` the default inside a ``with`` block.

    Parameters
    ----------
    accountant : BudgetAccountant or None, default=None
        ``None``: a fresh tracking-only ``BudgetAccountant()``.

    Yields
    ------
    BudgetAccountant
        The accountant in use.
    """
    previous = set_default_accountant(accountant)
    try:
        yield default_accountant()
    finally:
        set_default_accountant(previous)


def _outer_private_fit(estimator):
    """Whether ``estimator.fit`` runs inside another private estimator's ``fit``
    (an object with the contract's ``_check_spend`` and ``_record_spend``)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "fit":
            owner = frame.f_locals.get("self")
            if owner is not estimator and hasattr(owner, "_check_spend") \
                    and hasattr(owner, "_record_spend"):
                return True
        frame = frame.f_back
    return False


def _under_model_selection():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False


def _pays(accountant):
    """An accountant with a finite epsilon budget refuses what it cannot pay."""
    eps = getattr(accountant, "epsilon", math.inf)
    return isinstance(eps, (int, float)) and math.isfinite(eps)


def check_default(estimator, event, spent):
    """The check step of a private fit without ``accountant=`` (before any work).

    Nested fits (inside another private estimator's fit) are not checked.
    Warns under scikit-learn model selection when the default accountant
    does not pay (infinite budget).

    Parameters
    ----------
    estimator : PrivateEstimatorMixin
    event : PrivacyEvent or None
    spent : tuple (epsilon, delta)

    Raises
    ------
    BudgetExceededError
        The default accountant cannot pay; no work is done.
    """
    if spent is None or _outer_private_fit(estimator):
        return
    accountant = default_accountant()
    if _under_model_selection() and not _pays(accountant):
        warnings.warn(MODEL_SELECTION_WARNING, PrivacyLeakWarning, stacklevel=4)
    accountant.check(spent[0], spent[1], event=event)


def record_default(estimator, event, spent, label=None):
    """The spend step of a private fit without ``accountant=``: charge the default.

    Nested fits (inside another private estimator's fit) are not recorded:
    the outer fit's guarantee covers them.

    Parameters
    ----------
    estimator : PrivateEstimatorMixin
    event : PrivacyEvent or None
    spent : tuple (epsilon, delta)
    label : str or None
        Ledger label (default: the estimator's class name).
    """
    if spent is None or _outer_private_fit(estimator):
        return
    default_accountant().spend(spent[0], spent[1], event=event,
                               label=label or type(estimator).__name__)
