"""The fit guard: what a private fit that raises leaves behind.

A failed fit keeps no fitted attribute, and one whose noise ran is charged its
planned event (:func:`guarded_fit`).  Part of the contract of
:mod:`dptoolkit._private`.
"""
import contextvars
import functools

__all__ = ["guarded_fit"]


class _FitGuard:
    """What a running fit has done: planned and checked its spend, handed out its
    noise stream, charged."""
    __slots__ = ("estimator", "planned", "noise", "charged", "reservation")

    def __init__(self, estimator):
        self.estimator, self.planned, self.noise, self.charged = estimator, None, False, False
        self.reservation = None         # (accountant, token) of BudgetAccountant.reserve

    def release(self):
        """Drop the reservation still held (a recorded spend has used it)."""
        if self.reservation is not None:
            accountant, token = self.reservation
            self.reservation = None
            accountant.release(token)


#: The guard of the innermost running ``fit`` of a private estimator.
_FIT_GUARD = contextvars.ContextVar("dptoolkit_fit_guard", default=None)


def _guard_of(estimator):
    guard = _FIT_GUARD.get()
    return guard if guard is not None and guard.estimator is estimator else None


def _unfit(estimator):
    """Remove every fitted attribute (scikit-learn's rule: ends with ``_``, does not
    start with ``__``): a failed fit leaves the estimator unfitted."""
    for name in [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]:
        delattr(estimator, name)


def guarded_fit(fit):
    """``fit`` of a private estimator, with the contract's guarantees on failure.

    Every subclass of :class:`PrivateEstimatorMixin` gets its ``fit`` wrapped
    (``__init_subclass__``).  When the fit raises:

    * the estimator is left unfitted: every fitted attribute (ending with
      ``_``), of this fit or of an earlier one, is removed, so an over-budget
      fit keeps no model;
    * a fit whose spend was checked (:meth:`PrivateEstimatorMixin._check_spend`)
      and whose noise stream was handed out (:meth:`PrivateEstimatorMixin.
      _noise_rng`) but not yet charged (:meth:`PrivateEstimatorMixin.
      _record_spend`) is charged its planned event before the exception goes
      on: its noise ran, and the exception (a divergence, say) may depend on
      the noisy state.  Errors marked with :func:`nothing_released` are not
      charged.
    """
    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        if _guard_of(self) is not None:     # super().fit inside the same fit
            return fit(self, *args, **kwargs)
        guard = _FitGuard(self)
        token = _FIT_GUARD.set(guard)
        try:
            return fit(self, *args, **kwargs)
        except BaseException as exc:
            try:
                if (guard.planned is not None and guard.noise and not guard.charged
                        and not getattr(exc, "dptoolkit_nothing_released", False)):
                    self._charge_failed_fit(*guard.planned)
            except Exception as charge_error:   # keep the fit's own exception
                exc.add_note(f"[dptoolkit] this failed fit ran its noise but could not be "
                             f"charged: {type(charge_error).__name__}: {charge_error}")
            finally:
                _unfit(self)
            raise
        finally:
            _FIT_GUARD.reset(token)
            guard.release()

    wrapper._dptoolkit_guarded = True
    return wrapper
