"""Tracking a privacy budget across a pipeline of DP computations."""
import itertools
import math
import os
import sys
import threading
import warnings
import weakref

import numpy as np

from .._validation import check_positive_int, check_scalar_range
from ..exceptions import BudgetExceededError, PrivacyLeakWarning

__all__ = ["BudgetAccountant", "default_accountant", "set_default_accountant"]

_COMPOSITIONS = ("basic", "advanced", "events")


def _check_spend(epsilon, delta):
    epsilon = check_scalar_range(epsilon, "epsilon", low=0.0)
    delta = check_scalar_range(delta, "delta", low=0.0, high=1.0)
    return epsilon, delta


class BudgetAccountant:
    """A total (epsilon, delta) budget, spent by successive DP computations.

    Protocol (check -> work -> spend): a private routine calls
    :meth:`check` with what it is about to use *before any work*, which
    raises :class:`~dptoolkit.exceptions.BudgetExceededError` if the spend
    would exceed the budget, then does its work, then calls :meth:`spend`.
    Estimators of the toolkit do this with :meth:`reserve` in place of
    :meth:`check` (the spend is held until recorded, so fits running at the
    same time on one ledger cannot both pass), with ``accountant=`` or the
    default ledger; a fit whose noise ran and which then raised is recorded
    anyway, over the budget if need be.

    The guarantee tracked is for the composition of all recorded spends
    (each an (epsilon_i, delta_i)-DP computation on the same data, under the
    same neighbouring relation):

    ``composition="basic"``
        (sum epsilon_i, sum delta_i) ([DR14] Theorem 3.16); valid even when
        later spends are chosen after seeing earlier outputs.
    ``composition="advanced"``
        the better (smaller epsilon) of the basic bound and the heterogeneous
        advanced composition ([DRV10]; [KOV15] Theorem 3.5 form)
        ``sqrt(2 ln(1/delta_slack) sum epsilon_i^2) + sum epsilon_i
        (e^epsilon_i - 1)``, ``sum delta_i + delta_slack``.  That theorem
        assumes the sequence of (epsilon_i, delta_i) is fixed in advance
        (the computations themselves may be adaptive); if the *parameters*
        are chosen adaptively a privacy filter (Rogers, Roth, Ullman,
        Vadhan 2016) is needed instead, so use ``"basic"`` then.
    ``composition="events"``
        the privacy events of the spends (``event=`` of :meth:`spend`, e.g. an
        estimator's ``privacy_event_``; a spend without one counts as an
        :class:`~dptoolkit.accounting.events.ApproxDPEvent`) composed by
        :class:`~dptoolkit.accounting.PrivacyAccountant` (``composition="auto"``:
        Renyi DP / zCDP for exponential-mechanism and Gaussian steps) and
        converted at the budget's delta: heterogeneous steps compose into one
        guarantee instead of a sum of epsilons.  Needs ``delta > 0`` for the
        RDP conversion to help.

    **Shared by copies.**  ``copy.copy``, ``copy.deepcopy`` and so
    :func:`sklearn.base.clone` return the accountant itself: every clone of an
    estimator given ``accountant=`` (the folds of ``cross_val_score``, the
    candidates of ``GridSearchCV``, a ``Pipeline``'s steps) charges the same
    budget, and the fit that would exceed it raises
    :class:`~dptoolkit.exceptions.BudgetExceededError` before any work.  A
    pickled copy (skops, joblib) keeps the state.  Unpickled by ``pickle`` in
    the same process while the original is alive, it *is* the original; a copy
    rebuilt from the state next to its living original (skops) and a copy
    unpickled in another process (``n_jobs > 1``) refuse to check or spend
    (``RuntimeError``), since their spends would not reach the original.  A copy
    whose original no longer exists in the process is the ledger.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon budget, > 0 (``inf`` only tracks spending).
    delta : float, default=1.0
        Total delta budget, in [0, 1].
    composition : {"basic", "advanced"}, default="basic"
    delta_slack : float, default=None
        For ``"advanced"``: the delta' reserved for the composition theorem,
        in (0, delta]; ``None`` uses ``delta / 2`` (an error if ``delta`` is
        0).

    Attributes
    ----------
    spends : list of tuple (epsilon, delta, label)
        The ledger, in order.
    events : list of PrivacyEvent
        The privacy event of each spend (``ApproxDPEvent(epsilon, delta)`` when
        none was given).

    Examples
    --------
    >>> from dptoolkit.accounting import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> acc.check(0.3, 0.0)
    True
    >>> acc.spend(0.3, 0.0, label="feature selection").spend(0.5, 1e-7)
    BudgetAccountant(epsilon=1.0, delta=1e-06, composition='basic', spent=(0.8, 1e-07))
    >>> [round(v, 12) for v in acc.remaining()]
    [0.2, 9e-07]

    References
    ----------
    - [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
      Privacy." 2014, Theorems 3.16 and 3.20.
    - [DRV10] C. Dwork, G. N. Rothblum, S. Vadhan. "Boosting and
      Differential Privacy." FOCS 2010.
    - [KOV15] P. Kairouz, S. Oh, P. Viswanath. "The Composition Theorem for
      Differential Privacy." ICML 2015, Theorem 3.5.
    """

    def __init__(self, epsilon=float("inf"), delta=1.0, *, composition="basic",
                 delta_slack=None):
        self.epsilon = check_scalar_range(epsilon, "epsilon", low=0.0, low_open=True,
                                          allow_inf=True)
        self.delta = check_scalar_range(delta, "delta", low=0.0, high=1.0)
        if composition not in _COMPOSITIONS:
            raise ValueError(f"composition must be one of {_COMPOSITIONS}, got {composition!r}")
        self.composition = composition
        if composition == "advanced":
            if delta_slack is None:
                if self.delta == 0.0:
                    raise ValueError("composition='advanced' needs delta > 0 (it reserves "
                                     "delta_slack of the delta budget)")
                delta_slack = self.delta / 2.0
            delta_slack = check_scalar_range(delta_slack, "delta_slack", low=0.0,
                                             low_open=True, high=self.delta)
        elif delta_slack is not None:
            raise ValueError("delta_slack is only used with composition='advanced'")
        self.delta_slack = delta_slack
        self.spends = []
        self.events = []

    # -- identity under copies -------------------------------------------
    # An accountant is a ledger with identity, like an open file: its budget holds
    # only if every fit on the same data charges the same object.  scikit-learn's
    # ``clone`` (cross-validation, grid search, Pipeline, the toolkit's own
    # meta-estimators) deep-copies the parameters it does not clone, so a copied
    # accountant would let each clone spend the whole budget on a private copy.
    # ``copy.deepcopy`` and ``copy.copy`` therefore return the accountant itself.
    # Pickling writes the full state and a process-local registry key: unpickled
    # in the same process while the original lives, it is the original again;
    # anywhere else it is a copy that refuses to check or spend (_detached).  A
    # copy rebuilt from its state alone (skops calls __setstate__ on a new object)
    # next to its living original refuses too.
    def __deepcopy__(self, memo):
        memo[id(self)] = self
        return self

    def __copy__(self):
        return self

    def __reduce__(self):
        return (_restore_accountant, (type(self), self.__getstate__()))

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_detached", None)
        state.pop("_reserved", None)    # spends running in this process only
        state["_origin_pid"] = os.getpid()
        state["_ledger_key"] = _register(self)
        return state

    def __setstate__(self, state):
        state = dict(state)
        origin = state.pop("_origin_pid", None)
        key = state.pop("_ledger_key", None)
        self.__dict__.update(state)
        self._detached = _copy_kind(origin, key, self)

    def _check_not_detached(self):
        kind = getattr(self, "_detached", False)
        if not kind:
            return
        if kind == "default ledger copy":
            raise RuntimeError(
                "this process received a private estimator pickled by the process "
                f"that started it (pid {_FOREIGN_ORIGIN[0]}; e.g. a joblib worker of "
                "cross_val_score or GridSearchCV with n_jobs > 1), so its default "
                "ledger (dptoolkit.accounting.default_accountant()) is a copy: fits "
                "recorded here would not reach the ledger of that process, and its "
                "budget would not bound them.  Run the model selection with n_jobs=1, "
                "or fit in the parent process")
        if kind == "same process":
            raise RuntimeError(
                "this BudgetAccountant is a copy, made in this process, of an "
                "accountant that is still in use here: spends on the copy would not "
                "reach the original, so its budget would not bound them.  Pass the "
                "original accountant (pickle.loads in the same process returns it)")
        raise RuntimeError(
            "this BudgetAccountant is a copy unpickled in another process (e.g. a "
            "joblib worker of cross-validation or grid search with n_jobs > 1): "
            "spends on it would not reach the original, so its budget would not "
            "bound them.  Run the model selection with n_jobs=1, or pass the "
            "accountant in the process that fits")

    def __repr__(self):
        eps, delta = self.spent
        return (f"{type(self).__name__}(epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"composition={self.composition!r}, spent=({eps:.6g}, {delta:.6g}))")

    # -- composition ----------------------------------------------------
    def _total(self, eps_list, delta_list, events=None, extra=None):
        """(epsilon, delta) of the composition of the given spends.

        ``extra=(e, d, k)``: ``k`` more spends of (e, d), composed at a cost
        independent of ``k`` (a multiplicity, never a list of ``k`` entries)."""
        if self.composition == "events":
            from ._accountant import epsilon_of_event
            from .events import ApproxDPEvent, ComposedEvent, SelfComposedEvent

            if events is None:
                events = self.events
            if extra is not None:
                e, d, k = extra
                events = list(events) + [SelfComposedEvent(ApproxDPEvent(e, d), k)]
            if not events:
                return 0.0, 0.0
            if self.delta == 0.0:
                return epsilon_of_event(ComposedEvent(tuple(events)), 0.0), 0.0
            return (epsilon_of_event(ComposedEvent(tuple(events)), self.delta),
                    self.delta)
        eps = np.asarray(eps_list, dtype=np.float64)
        e, d, k = extra if extra is not None else (0.0, 0.0, 0)
        delta_sum = float(math.fsum(list(delta_list) + [k * d]))
        basic = (float(math.fsum(list(eps) + [k * e])), min(1.0, delta_sum))
        if self.composition == "basic" or (eps.size == 0 and k == 0):
            return basic
        # expm1 overflows to inf for eps > ~709.78 (the bound is then beyond the
        # float range and basic composition wins): no RuntimeWarning for that.
        with np.errstate(over="ignore"):
            sq = float(np.sum(eps * eps)) + k * e * e
            lin = float(np.sum(eps * np.expm1(eps))) + k * e * float(np.expm1(e))
            adv_eps = math.sqrt(2.0 * math.log(1.0 / self.delta_slack) * sq) + lin
        if adv_eps < basic[0]:
            return adv_eps, min(1.0, delta_sum + self.delta_slack)
        return basic

    def _fits(self, eps_list, delta_list, events=None, extra=None):
        eps, delta = self._total(eps_list, delta_list, events, extra)
        # Tiny relative tolerance so that spending exactly remaining() passes.
        tol = 1e-12
        return eps <= self.epsilon * (1 + tol) and delta <= self.delta * (1 + tol) + 1e-300

    @property
    def spent(self):
        """(epsilon, delta) spent so far under the chosen composition."""
        return self._total([s[0] for s in self.spends], [s[1] for s in self.spends])

    # -- protocol ---------------------------------------------------------
    def check(self, epsilon, delta=0.0, *, event=None):
        """Check that a spend of (epsilon, delta) would stay within budget.

        Parameters
        ----------
        epsilon : float
            >= 0 and finite.
        delta : float, default=0.0
            In [0, 1].
        event : PrivacyEvent or None, default=None
            What the spend runs (used by ``composition="events"``); ``None``
            means ``ApproxDPEvent(epsilon, delta)``.

        Returns
        -------
        True

        Raises
        ------
        BudgetExceededError
            If the composition with the spend would exceed the budget.
        TypeError, ValueError
            Invalid ``epsilon`` or ``delta``.
        """
        self._check_not_detached()
        epsilon, delta = _check_spend(epsilon, delta)
        event = _spend_event(epsilon, delta, event)
        with _LEDGER_LOCK:
            reserved = list(self.__dict__.get("_reserved", {}).values())
            eps_list = [s[0] for s in self.spends] + [r[0] for r in reserved] + [epsilon]
            delta_list = [s[1] for s in self.spends] + [r[1] for r in reserved] + [delta]
            events = self.events + [r[2] for r in reserved] + [event]
        if not self._fits(eps_list, delta_list, events):
            tot = self._total(eps_list, delta_list, events)
            raise BudgetExceededError(
                f"spending (epsilon={epsilon!r}, delta={delta!r}) would bring the total to "
                f"(epsilon={tot[0]:.6g}, delta={tot[1]:.6g}), over the budget "
                f"(epsilon={self.epsilon!r}, delta={self.delta!r}); remaining per spend: "
                f"{self.remaining()}")
        return True

    def spend(self, epsilon, delta=0.0, *, label=None, event=None, reservation=None):
        """Record a spend (after :meth:`check`; checks again) and return self.

        ``event`` (a :class:`~dptoolkit.accounting.events.PrivacyEvent`) is what
        the spend ran; see :meth:`check`.  ``reservation`` (from :meth:`reserve`)
        is replaced by this spend.

        Raises
        ------
        BudgetExceededError
            If the spend would exceed the budget; nothing is recorded then (the
            reservation is dropped).
        """
        with _LEDGER_LOCK:
            if reservation is not None:
                self.release(reservation)
            self.check(epsilon, delta, event=event)
            self.spends.append((float(epsilon), float(delta), label))
            self.events.append(_spend_event(float(epsilon), float(delta), event))
        return self

    def reserve(self, epsilon, delta=0.0, *, event=None):
        """Check a spend and hold it until it is recorded or released.

        Fits that share the accountant and run at the same time (threads) each
        check before any work; a reservation makes every later check count the
        spends still running, so two of them cannot both pass on the same
        remaining budget and then exceed it when they are recorded.  The private
        estimators of the toolkit reserve in their check and replace the
        reservation by the spend (:meth:`spend` with ``reservation=``), or
        release it when the fit stops before its noise ran.  Reservations are not
        in ``spends``, ``spent`` or a pickled copy.

        Returns
        -------
        reservation : object
            An opaque token for :meth:`spend` or :meth:`release`.

        Raises
        ------
        BudgetExceededError
            As :meth:`check` (the reservations held count as spent).
        """
        with _LEDGER_LOCK:
            self.check(epsilon, delta, event=event)
            token = object()
            self.__dict__.setdefault("_reserved", {})[token] = (
                float(epsilon), float(delta), _spend_event(float(epsilon), float(delta), event))
        return token

    def release(self, reservation):
        """Drop a reservation (:meth:`reserve`); one already used or released is
        ignored."""
        with _LEDGER_LOCK:
            self.__dict__.get("_reserved", {}).pop(reservation, None)

    def _charge_after_work(self, epsilon, delta=0.0, *, label=None, event=None):
        """Record a spend whose mechanism already ran, even over the budget.

        A fit whose noise ran is charged even when it then raised (its
        exception, or anything it printed, may depend on the noisy state): the
        ledger must show what ran.  Refuses only as a copy does
        (:meth:`_check_not_detached`).
        """
        self._check_not_detached()
        epsilon, delta = _check_spend(epsilon, delta)
        with _LEDGER_LOCK:
            self.spends.append((epsilon, delta, label))
            self.events.append(_spend_event(epsilon, delta, event))
        return self

    def remaining(self, k=1):
        """Largest (epsilon, delta) that each of ``k`` further equal spends may use.

        Parameters
        ----------
        k : int, default=1

        Returns
        -------
        epsilon, delta : float
            ``k`` spends of this size pass :meth:`check` in turn.
            Basic composition: (budget - spent) / k for both.  Advanced:
            delta as for basic (after reserving ``delta_slack``), epsilon by
            bisection on the composed bound.
        """
        k = check_positive_int(k, "k")
        eps_spent = [s[0] for s in self.spends]
        delta_spent = [s[1] for s in self.spends]
        d_used = float(math.fsum(delta_spent))
        if self.composition == "events":
            return self._remaining_events(k)
        if self.composition == "basic":
            e_rem = max(0.0, self.epsilon - float(math.fsum(eps_spent)))
            return e_rem / k, max(0.0, self.delta - d_used) / k

        # Advanced: keep delta_slack in reserve, find epsilon by bisection.
        d_each = max(0.0, self.delta - d_used - self.delta_slack) / k
        if self._fits(eps_spent, delta_spent) is False:
            return 0.0, 0.0

        def fits(e):
            return self._fits(eps_spent, delta_spent, extra=(e, d_each, k))

        return _largest_fitting(fits, self.epsilon, rtol=1e-15), d_each

    def _remaining_events(self, k):
        """Largest epsilon of k further pure-DP spends (delta: what is left after
        the approximate-DP spends), by bisection on the composed guarantee."""
        d_used = float(math.fsum(s[1] for s in self.spends))
        d_each = max(0.0, self.delta - d_used) / (2 * k) if self.delta > 0 else 0.0

        def fits(e):
            return self._fits(None, None, self.events, extra=(e, d_each, k))

        if not fits(0.0):
            return 0.0, 0.0
        return _largest_fitting(fits, self.epsilon, rtol=1e-12), d_each


def _largest_fitting(fits, epsilon, *, rtol):
    """Largest e in [0, ``epsilon``] with ``fits(e)`` (``fits(0)`` holds): the
    budget itself if it fits (``inf`` for an infinite budget), otherwise by
    bisection to relative width ``rtol`` (at most 200 halvings)."""
    if math.isinf(epsilon):
        return math.inf
    lo, hi = 0.0, epsilon
    if fits(hi):
        return hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if fits(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= rtol * hi:
            break
    return lo


def _spend_event(epsilon, delta, event):
    from .events import ApproxDPEvent, PrivacyEvent

    if event is None:
        return ApproxDPEvent(epsilon, delta)
    if not isinstance(event, PrivacyEvent):
        raise TypeError(f"event must be a PrivacyEvent or None, got {type(event).__name__}")
    return event


# ---------------------------------------------------------------------------
# copies of a ledger: a process-local registry gives every pickled accountant a key;
# an unpickled copy is the original again in the same process, and refuses to
# spend anywhere else (see BudgetAccountant.__reduce__)
# ---------------------------------------------------------------------------
_REGISTRY = weakref.WeakValueDictionary()
_KEYS = itertools.count(1)
_KEY_OF = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()
#: Held while a ledger is checked and changed (reserve, spend): fits in threads.
_LEDGER_LOCK = threading.RLock()


def _register(accountant):
    """The registry key of ``accountant`` in this process (given at its first pickling)."""
    with _REGISTRY_LOCK:
        key = _KEY_OF.get(accountant)
        if key is None:
            key = next(_KEYS)
            _REGISTRY[key] = accountant
            _KEY_OF[accountant] = key
        return key


def _copy_kind(origin, key, copy):
    """Why an accountant rebuilt from ``(origin pid, registry key)`` refuses to
    spend: ``False`` (it may spend), ``"same process"`` or ``"other process"``."""
    if origin is None:
        return False                    # saved before the origin was recorded
    if origin != os.getpid():
        return "other process"
    if key is None:
        return False
    with _REGISTRY_LOCK:
        original = _REGISTRY.get(key)
        if original is not None and original is not copy:
            return "same process"
        # its original is gone: the copy is the ledger now, under the same key (a
        # second copy of the same state is then a copy of this one)
        _REGISTRY[key] = copy
        _KEY_OF[copy] = key
    return False


def _restore_accountant(cls, state):
    """Unpickle an accountant: the living original in the same process, else a
    copy (which refuses to spend when unpickled in another process)."""
    if state.get("_origin_pid") == os.getpid():
        original = _REGISTRY.get(state.get("_ledger_key"))
        if original is not None:
            return original
    copy = cls.__new__(cls)
    copy.__setstate__(state)
    return copy


_DEFAULT = None


#: The pid of the ancestor process whose private estimators this process received
#: by pickle (a joblib or multiprocessing worker); None in a process that did not.
_FOREIGN_ORIGIN = [None]
#: The refusing ledger such a process has instead of its own default ledger.
_FOREIGN_DEFAULT = [None]


def _ancestors():
    """The pids of this process's ancestors (parent first)."""
    try:
        import psutil

        return {p.pid for p in psutil.Process().parents()}
    except Exception:                   # no psutil, or no access: the parent only
        return {os.getppid()}


def note_estimator_origin(origin_pid):
    """Record that a private estimator pickled by process ``origin_pid`` was
    unpickled here.  When that process is an ancestor of this one (a joblib,
    loky or multiprocessing worker, or a Dask worker process started under it),
    this process's fits belong to its ledger: :func:`default_accountant` returns
    a copy that refuses to check or spend from then on.  An estimator saved by
    a process that is not an ancestor (a model loaded in a later session) or by
    this process changes nothing."""
    if origin_pid is None or origin_pid == os.getpid() or _FOREIGN_ORIGIN[0] is not None:
        return
    if origin_pid in _ancestors():
        _FOREIGN_ORIGIN[0] = origin_pid


def default_accountant():
    """The process-wide ledger of private fits made without ``accountant=``.

    Every top-level private fit of the toolkit that is given no accountant is
    recorded here (as diffprivlib's default accountant does), so that repeated
    fits -- e.g. the candidates and folds of ``GridSearchCV`` -- show up.  It has
    an infinite budget (it never refuses) unless replaced with
    :func:`set_default_accountant`.  A private fit without ``accountant=`` checks
    it before any work and is recorded in it after.

    In a process that received a private estimator pickled by one of its
    ancestors (a joblib worker of ``cross_val_score(..., n_jobs=2)``), the ledger
    returned is a copy that refuses to check or spend (``RuntimeError``): the
    fits there would not reach the ledger of the process that started them.

    Returns
    -------
    BudgetAccountant
    """
    global _DEFAULT
    if _FOREIGN_ORIGIN[0] is not None:
        if _FOREIGN_DEFAULT[0] is None:
            copy = BudgetAccountant()
            copy._detached = "default ledger copy"
            _FOREIGN_DEFAULT[0] = copy
        return _FOREIGN_DEFAULT[0]
    if _DEFAULT is None:
        _DEFAULT = BudgetAccountant()
    return _DEFAULT


def set_default_accountant(accountant):
    """Replace the process-wide ledger; returns the previous one.

    Parameters
    ----------
    accountant : BudgetAccountant or None
        ``None`` starts a fresh ledger with an infinite budget.  With a finite
        budget, a fit without ``accountant=`` that would exceed it raises
        BudgetExceededError before any work, as with ``accountant=``.  In a
        process whose default ledger is a refusing copy (see
        :func:`default_accountant`) the copy stays in place.

    Raises
    ------
    TypeError
        ``accountant`` is not a BudgetAccountant or None.
    """
    global _DEFAULT
    if accountant is not None and not isinstance(accountant, BudgetAccountant):
        raise TypeError("accountant must be a BudgetAccountant or None, got "
                        f"{type(accountant).__name__}")
    previous = default_accountant()
    _DEFAULT = accountant if accountant is not None else BudgetAccountant()
    return previous


# ---------------------------------------------------------------------------
# the notice of a private fit run by scikit-learn's model selection: GridSearchCV,
# cross_val_score and the like fit many clones on the same data and choose among
# them with exact scores; each fit is charged (to the shared accountant or the
# default ledger) and one PrivacyLeakWarning per call says the choice is outside
# every guarantee
# ---------------------------------------------------------------------------

#: The outermost ``sklearn.model_selection`` frame of the call that last warned
#: (:func:`warn_model_selection`).  Held while that call may still run; replaced
#: or dropped at the next top-level private fit.
_SELECTION_CALL = [None]


def _model_selection_call():
    """The outermost frame of ``sklearn.model_selection`` on the stack, or None."""
    frame, outer = sys._getframe(2), None
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("sklearn.model_selection"):
            outer = frame
        frame = frame.f_back
    return outer


def warn_model_selection(estimator, accountant, *, given):
    """One PrivacyLeakWarning per scikit-learn model-selection call.

    A call (``GridSearchCV.fit``, ``cross_val_score``, nested ones) is known by
    its outermost frame in ``sklearn.model_selection``: the frame object stays
    the same while the call runs (CPython keeps one frame object per running
    frame once it has been looked at), and the reference held here keeps its
    identity from being reused by a later call.  Every fit of the call after the
    first sees the same frame and adds nothing; a new call has a new frame.
    (Fits that joblib runs in other threads or processes, ``n_jobs > 1``, do not
    see the caller's frame: there each fit may warn.)
    """
    outer = _model_selection_call()
    if outer is None:
        _SELECTION_CALL[0] = None       # outside model selection: drop the old frame
        return
    if _SELECTION_CALL[0] is outer:
        return
    _SELECTION_CALL[0] = outer
    name = type(estimator).__name__
    call = getattr(outer.f_code, "co_qualname", outer.f_code.co_name)
    if given:
        paid = ("Its fits are charged to the accountant passed as accountant=, which "
                "every clone shares, so its budget bounds them all")
    else:
        paid = ("Its fits are recorded in the default ledger (dptoolkit.accounting."
                f"default_accountant(): {len(accountant.spends)} fit(s) so far, "
                f"(epsilon, delta) = {_fmt_spent(accountant.spent)} by basic "
                "composition), whose budget is infinite unless set_default_accountant "
                "replaced it: pass accountant=BudgetAccountant(epsilon=...) to bound "
                "them before any work (every clone shares it)")
    warnings.warn(
        f"{name} is fitted privately by scikit-learn model selection "
        f"({call}): every candidate and fold is a separate private release on the "
        "same data, and the scores scikit-learn computes on the "
        "held-out folds read the data without noise, so the choice (best_params_, "
        f"the scores) is not covered by any guarantee.  {paid}.  For a private "
        "choice use dptoolkit.model_selection.PrivateHyperparameterSearch.  [Shown "
        "once per model-selection call.]", PrivacyLeakWarning, stacklevel=4)


def _fmt_spent(spent):
    return f"({spent[0]:.4g}, {spent[1]:.3g})"
