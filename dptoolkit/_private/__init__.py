"""The contract every private estimator and selector of the toolkit follows.

A private fit is **check -> work -> spend** (as in diffprivlib):

1. *check*: validate ``epsilon``, ``delta``, ``neighbouring`` and
   ``accountant``; enforce the public bound on the data (clip with a
   :class:`~dptoolkit.exceptions.DataClippedWarning`, or raise); build the fit's
   :mod:`privacy event <dptoolkit.accounting.events>` and its (epsilon, delta)
   from public quantities only, and ask the accountant (``accountant=``, else
   the default ledger) whether it can pay, holding the spend until it is
   recorded (:class:`~dptoolkit.exceptions.BudgetExceededError` before any
   work);
2. *work*: run the mechanism;
3. *spend*: record ``privacy_event_`` and ``privacy_spent_`` and charge the
   accountant with both.

A fit that raises at any point leaves no fitted attribute, and one that raises
after its check and after its noise stream was handed out, before its spend,
is charged its planned event (:func:`guarded_fit`, applied to every subclass's
``fit``): a fit whose noise ran is charged even when it then raises.

The check is the estimator's :meth:`PrivateEstimatorMixin._privacy_plan`
(a :class:`~dptoolkit._private._plan.PrivacyPlan`: the event, the spend and the frozen
validated parameters), which ``fit`` calls first and :func:`plan_spend` calls
without a fit.  An estimator adopting :class:`PrivateEstimatorMixin` implements
its plan and its work; validation, bounds, the dataset-size rule, the label set
and the ledger live here.

Side channels
-------------
A differential-privacy guarantee covers the *released outputs* of a mechanism
(the model, the selected features, the noisy counts), not everything a fit
does around it.  Two rules keep information from leaving around the
mechanisms:

* *The label set is public.*  ``classes_`` decides the model's shape (binary
  or multinomial) and its labels; a neighbouring dataset may add a row with a
  new label or remove the only row of a class.  Private classifiers take the
  label set from the hyper-parameter ``classes`` (:meth:`PrivateEstimatorMixin.
  _resolve_classes`); without it, a private fit reads ``np.unique(y)`` and
  warns with a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.
* *Messages that depend on the data say that, never how much.*  Whether a row
  was clipped to the public bound, whether a label is outside ``classes``,
  whether a non-private solver inside a mechanism converged: these are facts
  about the private data, so every such warning or error is built in one place
  (:func:`data_dependent_warning`, :func:`data_dependent_error`), states *that*
  something happened (one bit, never a count, a row index or a value), and
  carries :data:`DATA_DEPENDENT_NOTE`: the message itself is outside the
  guarantee.  A caller who publishes a fit's warnings publishes that bit.

Noise handles
-------------
A released model must not let anyone regenerate the noise it was trained with.
A private fit with ``random_state=None`` draws from fresh OS entropy and stores
nothing random: a meta-estimator hands each nested fit a *child stream*
(:meth:`numpy.random.Generator.spawn`) through :func:`fit_with_stream`, for that
call only, so no generator, bit generator, seed sequence or drawn seed is an
attribute or a parameter of the fitted object or of anything it holds.  A
``random_state`` given by the user (an int, a ``SeedSequence``, a ``Generator``)
is kept, as scikit-learn does, and makes the noise reproducible by whoever knows
it: the first such private fit of the process warns
(:func:`warn_fixed_noise`, shared with the command line's ``--seed``).

Running time is a third channel, documented with the sparse solvers (the
Notes of :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` and the
privacy notes of the architecture page): it is not covered either.
"""
import math
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ._guard import _guard_of, guarded_fit
from ._messages import (DATA_DEPENDENT_NOTE, data_dependent_error, data_dependent_message,
                        data_dependent_warning)
from ._plan import PrivacyPlan, plan_spend
from ._template import FitTemplate
from ._streams import (_CHARGING_PARENT, _FIXED_NOISE_WARNED, _describe_random_state,  # noqa: F401
                       _inside_private_fit, _stream_for, fit_with_stream, fixed_noise_message,
                       fixed_noise_warning_scope, nested_fits, warn_fixed_noise)
from .._validation import (check_accountant, check_classes, check_positive_int, check_random_state,
                          check_scalar_range, check_X_y_named)
from ..exceptions import DataClippedWarning, PrivacyLeakWarning, nothing_released

__all__ = ["PrivateEstimatorMixin", "NEIGHBOURING_RELATIONS", "check_neighbouring",
           "check_accountant", "sensitivity_factor", "plan_spend", "check_classes",
           "data_dependent_warning", "data_dependent_error", "data_dependent_message",
           "DATA_DEPENDENT_NOTE", "PrivacyPlan", "fit_with_stream", "warn_fixed_noise",
           "fixed_noise_warning_scope", "guarded_fit", "nothing_released"]

#: Neighbouring relations: ``"add_remove"`` (one example added or removed) and
#: ``"replace_one"`` (one example replaced; sensitivities double for sums).
NEIGHBOURING_RELATIONS = ("add_remove", "replace_one")


def check_neighbouring(value, name="neighbouring"):
    """Validate a neighbouring relation (``"add_remove"`` or ``"replace_one"``)."""
    if not isinstance(value, str) or value not in NEIGHBOURING_RELATIONS:
        raise ValueError(f"{name} must be 'add_remove' or 'replace_one', got {value!r}")
    return value


def sensitivity_factor(neighbouring):
    """2 for replace-one (a sum changes by two examples' terms), else 1."""
    return 2.0 if check_neighbouring(neighbouring) == "replace_one" else 1.0


def _spent_of(event, claimed):
    """The accountant's figure for a claimed spend
    (``dptoolkit.accounting._accountant.accounted_spend``)."""
    from ..accounting import accounted_spend

    return accounted_spend(event, claimed)


class PrivateEstimatorMixin(FitTemplate):
    """check -> work -> spend for private estimators and selectors.

    Subclasses declare every parameter in ``_parameter_constraints`` (at least
    ``epsilon``, ``n_samples_public``, ``accountant`` and ``random_state``:
    ``dptoolkit._validation.PRIVATE_COMMON``) and supply the steps of the fit's
    template (:class:`~dptoolkit._private._template.FitTemplate`):

    .. code-block:: python

        def _privacy_plan(self, n_samples, n_features, classes):  # public only
            epsilon, delta = self._check_budget()        # rules between the two
            n = self._n_samples(n_samples, private=..., uses="...")
            ...                                         # calibration
            return self._plan(event, (epsilon, delta), params)

        def _fit_private(self, X, y, plan, rng):          # the mechanism
            self.coef_ = ...                            # plan.params, rng

    and, where the default does not fit, ``_validate_fit_data(X, y)`` (returns
    ``(X, y, classes)``).  A non-private fit (the user's explicit
    ``epsilon=None``; every private estimator defaults to ``epsilon=1.0``) plans
    ``(None, None)`` and is recorded without a warning.
    """

    #: Label of this estimator's entries in an accountant's ledger.
    _privacy_label = None
    # ------------------------------------------------------------- validation
    def _declared(self, name, default=None):
        """The parameter ``name`` when this estimator declares it in its constraint
        table, else ``default`` (the mixin reads only declared parameters)."""
        table = self._constraints()
        if not table:                   # a meta-estimator with no table yet
            return getattr(self, name, default)
        return getattr(self, name) if name in table else default

    @classmethod
    def _constraints(cls):
        return getattr(cls, "_parameter_constraints", None) or {}

    def _check_budget(self, *, optional=True, delta_required=False):
        """``(epsilon, delta)`` of a fit; ``(None, None)`` for a non-private fit.

        The ranges of ``epsilon`` and ``delta`` are declared in the constraint
        table and checked once, at the start of the fit (or of :func:`plan_spend`);
        this trusts them and checks only the rules *between* the two.

        Parameters
        ----------
        optional : bool
            ``epsilon=None`` means a non-private fit (else it is an error).
        delta_required : bool
            ``delta`` must be set (Gaussian mechanisms); else ``None`` means pure
            DP and is returned as 0.0.
        """
        epsilon, delta = self.epsilon, self._declared("delta")
        if epsilon is None:
            if not optional:
                raise ValueError("epsilon must be a float > 0 for this private estimator, "
                                 "got None")
            if delta is not None and not delta_required:
                raise ValueError("delta is set but epsilon is None; set epsilon for a "
                                 "private fit or leave delta=None")
            return None, None
        if delta is None and delta_required:
            raise ValueError("delta must be a float in (0, 1) for this mechanism, got None")
        return float(epsilon), 0.0 if delta is None else float(delta)

    def _n_samples(self, n_rows, *, private, uses, relation=None):
        """Dataset size N of a fit: the public ``n_samples_public`` when given.

        A private fit under add/remove neighbouring that takes N from the data
        warns (:class:`~dptoolkit.exceptions.PrivacyLeakWarning`): a neighbour has
        N +- 1, so the guarantee then covers only same-size neighbours.
        """
        if self.n_samples_public is not None:       # validated by the constraint table
            return int(self.n_samples_public)
        relation = relation or self._declared("neighbouring", "add_remove")
        if private and relation == "add_remove":
            warnings.warn(
                "n_samples_public is None: the dataset size N was taken from the data "
                f"(it sets {uses}), so the stated add/remove-one guarantee "
                "does not hold: a neighbour with one more or one fewer example has a "
                "different N.  Pass the public dataset size as n_samples_public.",
                PrivacyLeakWarning, stacklevel=3)
        return int(n_rows)

    def _classifier_data(self, X, y, ensure_all_finite=True):
        """The start of a classifier's fit: ``X`` and ``y`` validated (float64,
        finite, sparse accepted, equal lengths) and the label set
        (:meth:`_resolve_classes`); returns ``(X, y, classes)``.
        ``ensure_all_finite=False``: the caller checks X's values for NaN and
        infinity itself, before the spend (as ``_check_fit_data``)."""
        check_X_y_named(X, y)
        X, y = validate_data(self, X, y, accept_sparse=True, dtype=np.float64,
                             ensure_all_finite=ensure_all_finite, y_numeric=False)
        check_classification_targets(y)
        return X, y, self._resolve_classes(y, private=self.epsilon is not None)

    def _resolve_classes(self, y, *, private, n_classes=None):
        """The label set of a fit: the declared ``classes`` when given.

        A neighbouring dataset may add a row with a new label or remove the only
        row of a class; the label set decides the model (binary or multinomial,
        ``classes_``), so a private fit must not read it from ``y``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Validated class labels (after ``check_classification_targets``).
        private : bool
            Whether the fit is private (a PrivacyLeakWarning when ``classes`` is
            None).
        n_classes : int or None
            The number of classes the estimator supports (2 for binary-only
            estimators); checked against the declared ``classes``.

        Returns
        -------
        classes : ndarray of shape (n_classes,)
            Sorted.  With ``classes`` declared, ``y`` is only checked against it
            (a declared class absent from ``y`` is fine); else ``np.unique(y)``.

        Raises
        ------
        ValueError
            ``classes`` invalid (see :func:`check_classes`), of the wrong size for
            this estimator, or ``y`` has labels outside ``classes`` (as
            scikit-learn's ``partial_fit`` refuses them; a data-dependent error).

        Warns
        -----
        PrivacyLeakWarning
            A private fit with ``classes=None``: the label set was read from the
            data (the text names no label and no count).
        """
        declared = self._declared("classes")
        y = np.asarray(y)
        if declared is None:
            if private:
                warnings.warn(
                    "classes is None: the label set was read from the data, so the "
                    "model's shape and labels (classes_) depend on it and the stated "
                    "guarantee does not cover them: a neighbour that adds a row with a "
                    "new label, or removes the only row of a class, gets a different "
                    "model.  Pass the public label set as classes.",
                    PrivacyLeakWarning, stacklevel=3)
            return np.unique(y)
        classes = check_classes(declared)
        if n_classes is not None and classes.size != n_classes:
            raise ValueError(f"classes must hold exactly {n_classes} labels for "
                             f"{type(self).__name__}, got {classes.size}")
        if y.size and not np.all(np.isin(y, classes)):
            raise data_dependent_error(
                f"y has labels outside classes={classes.tolist()!r}; every label of y "
                "must be one of the declared classes")
        return classes

    def _declare_classes_on(self, estimator, y, *, name="estimator"):
        """Pass this meta-estimator's declared ``classes`` on to ``estimator`` (a clone).

        With ``self.classes`` given, ``y`` is checked against it before any work
        (:meth:`_resolve_classes`) and ``estimator``'s own ``classes`` is set to it;
        with None the estimator's own ``classes`` (and its warning) applies.

        Raises
        ------
        ValueError
            ``estimator`` has no ``classes`` parameter, or declares different ones.
        """
        if self._declared("classes") is None:
            return estimator
        classes = self._resolve_classes(y, private=True)
        params = estimator.get_params(deep=False)
        if "classes" not in params:
            raise ValueError(f"classes is set but the {name} "
                             f"{type(estimator).__name__} has no classes parameter")
        own = params["classes"]
        if own is not None and not np.array_equal(check_classes(own), classes):
            raise ValueError(f"classes={classes.tolist()!r} differs from the {name}'s "
                             f"classes={check_classes(own).tolist()!r}")
        return estimator.set_params(classes=classes)

    def _enforce_public_bound(self, X, norm, bound, *, clip=None, value_range=None):
        """Make every row satisfy the public bound ``||x_i||_norm <= bound``.

        Parameters
        ----------
        X : sparse matrix or ndarray of shape (n_samples, n_features)
        norm : {"linf", "l2"}
            ``"linf"`` clips entries to ``[-bound, bound]``; ``"l2"`` rescales rows
            whose norm exceeds ``bound`` to norm ``bound`` (both local operations:
            the guarantee holds for the clipped data).
        bound : float
        clip : bool or None
            Clip (with a DataClippedWarning) or raise ValueError; ``None`` reads
            the ``clip_data`` hyper-parameter (default True).
        value_range : (float, float) or None
            The smallest and the largest stored entry of ``X``, when the caller
            has computed them (``"linf"`` only; ``None``: computed here).

        Returns
        -------
        X : same type; a copy when anything was clipped, else X itself.

        Notes
        -----
        The ``"linf"`` check compares the largest and the smallest entry with the
        bound (no ``|X|`` temporary: 70 MB on the hashed IMDB matrix).  NaN entries
        are not clipped (their comparisons are false, and a NaN makes the maximum
        and the minimum NaN): the estimators' input validation rejects them first.
        """
        clip = self._declared("clip_data", True) if clip is None else clip
        is_sparse = sp.issparse(X)
        if norm == "linf":
            values = X.data if is_sparse else np.asarray(X)
            if values.size and value_range is None:
                value_range = (float(values.min()), float(values.max()))
            over = values.size and (value_range[1] > bound or -value_range[0] > bound)
            if not over:
                return X
            what = f"entries outside [-{bound:g}, {bound:g}]"
        elif norm == "l2":
            sq = (np.asarray(X.multiply(X).sum(axis=1)).ravel() if is_sparse
                  else np.einsum("ij,ij->i", X, X))
            norms = np.sqrt(sq)
            n_over = int(np.sum(norms > bound))
            if not n_over:
                return X
            what = f"rows with L2 norm above {bound:g}"  # never how many: data-dependent
        else:
            raise ValueError(f"norm must be 'linf' or 'l2', got {norm!r}")
        if not clip:
            raise data_dependent_error(
                f"private fits need the public bound ||x_i||_{norm[1:]} <= {bound:g}; "
                f"X has {what}: clip or rescale X with public constants, or set "
                "clip_data=True")
        data_dependent_warning(f"X has {what}; they were clipped to the public bound "
                               f"||x_i||_{norm[1:]} <= {bound:g}", DataClippedWarning,
                               stacklevel=3)
        if norm == "linf":
            if is_sparse:
                X = X.copy()
                X.data = np.clip(X.data, -bound, bound)
                return X
            return np.clip(X, -bound, bound)
        scale = np.where(norms > bound, bound / np.maximum(norms, 1e-300), 1.0)
        if is_sparse:
            X = sp.csr_array(X, copy=True)
            X.data = X.data * np.repeat(scale, np.diff(X.indptr))
            return X
        return X * scale[:, None]

    # ------------------------------------------------------------------ plan
    def _privacy_plan(self, n_samples, n_features, classes):
        """The fit's event, spend and parameters, from public quantities only.

        ``fit`` calls it first (after validating the parameters and the data, before
        any work); :func:`plan_spend`, the pipeline, the search and the command line
        call it without a fit.  It validates what the parameter constraints do not,
        derives the fit's parameters (noise multipliers, sampling rate, steps,
        ``l1_bound``, ...) and builds the event; it reads nothing else, draws no noise.

        Parameters
        ----------
        n_samples : int
            Rows of ``X``; ``n_samples_public`` replaces it when set (else a private
            fit under add/remove warns, as the fit does).
        n_features : int
        classes : ndarray of shape (n_classes,) or None
            A classifier's label set (None: its declared ``classes``); None for
            regressors and selectors.

        Returns
        -------
        PrivacyPlan
            ``event`` and ``(epsilon, delta)`` as the fit records them (None when not
            private) and ``params``, the estimator's frozen dataclass of parameters.

        Raises
        ------
        TypeError
            On the mixin: the estimator does not implement its plan.
        """
        raise TypeError(
            f"{type(self).__name__} follows the private-estimator contract but does not "
            "implement _privacy_plan(n_samples, n_features, classes), so its spend "
            "cannot be planned without a fit: implement it (see "
            "dptoolkit._private.PrivateEstimatorMixin._privacy_plan) and call it in fit")

    def _planned_classes(self, classes):
        """The label set a plan is for: ``classes``, else the declared ``classes``.

        Raises
        ------
        ValueError
            Neither given: the label set decides the model and its event.
        """
        if classes is not None:             # resolved by fit or checked by plan_spend
            return np.asarray(classes)
        if self._declared("classes") is None:
            raise ValueError(f"planning {type(self).__name__} needs the label set: "
                             "declare classes, or pass classes or y to plan_spend")
        return check_classes(self.classes)  # the sorted label set (distinct, >= 2: a rule)

    def _label_set(self, y):
        """A fit's label set (:func:`plan_spend`): declared, else ``y``'s; None without
        a ``classes`` parameter."""
        if "classes" not in self.get_params(deep=False):
            return None
        return self._resolve_classes(y, private=self.epsilon is not None)

    def _plan(self, event, spent, params=None):
        """:class:`PrivacyPlan` of ``event``, with the accountant's figure for ``spent``."""
        return PrivacyPlan(event, *(_spent_of(event, spent) or (None, None)), params)

    # ------------------------------------------------------------ randomness
    def _noise_rng(self):
        """The generator of this fit's noise: the parent's stream, else ``random_state``.

        A meta-estimator running this fit through :func:`fit_with_stream` hands it
        a child stream; otherwise ``random_state`` is turned into a generator
        (None: fresh OS entropy).  Nothing is stored: keep the generator local.
        """
        guard = _guard_of(self)
        if guard is not None:
            guard.noise = True
        stream = _stream_for(self)
        if stream is not None:
            return stream
        return check_random_state(self._declared("random_state"))  # a conversion

    # ------------------------------------------------------- check / spend
    def _check_spend(self, event, spent):
        """Ask the accountant whether it can pay; before any work.

        The accountant is ``accountant``, else (for a top-level private fit) the
        process-wide ledger :func:`~dptoolkit.accounting.default_accountant`, so
        that a finite default budget refuses before any work too.  The fit is
        then *armed*: once its noise stream is handed out (:meth:`_noise_rng`),
        an exception before :meth:`_record_spend` charges this event (see
        :func:`guarded_fit`).

        A private fit whose noise comes from a ``random_state`` given by the user
        (not from a parent's stream) warns here, once per process
        (:func:`warn_fixed_noise`), not in :meth:`_privacy_plan`: planning never
        uses up the one warning.

        Raises
        ------
        BudgetExceededError
            The accountant cannot pay; nothing is recorded.
        RuntimeError
            The accountant (or the default ledger) is a copy made in another
            process, which refuses to spend.
        """
        spent = _spent_of(event, spent)
        payer = self._payer(spent)
        guard = _guard_of(self)
        if guard is not None:
            guard.release()
        if payer is not None:
            reserve = getattr(payer, "reserve", None)
            if guard is not None and callable(reserve):
                # held until the spend is recorded: a fit sharing the ledger and
                # running at the same time sees it (BudgetAccountant.reserve)
                guard.reservation = (payer, reserve(spent[0], spent[1], event=event))
            else:
                payer.check(spent[0], spent[1], event=event)
        if guard is not None and spent is not None:
            guard.planned = (event, spent)
        random_state = self._declared("random_state")
        if spent is not None and random_state is not None and _stream_for(self) is None:
            warn_fixed_noise(_describe_random_state(random_state), stacklevel=3)

    def _payer(self, spent):
        """The ledger a spend of this fit goes to: ``accountant``; else, for a
        top-level private fit with a finite epsilon, the default ledger; else None
        (a non-private fit, or one nested in a private parent that pays)."""
        accountant = self._declared("accountant")     # validated by the constraint table
        if spent is None:
            return None
        if accountant is not None:
            return accountant
        if math.isfinite(spent[0]) and not _inside_private_fit(self):
            from ..accounting import default_accountant

            return default_accountant()
        return None

    def _record_spend(self, event, spent):
        """Set ``privacy_event_`` / ``privacy_spent_`` and charge the accountant.

        Without an ``accountant``, a top-level private fit (one not run inside
        another private estimator's fit, which charges for it) is recorded in the
        process-wide ledger :func:`~dptoolkit.accounting.default_accountant`.
        A top-level private fit run by scikit-learn's model selection
        (``GridSearchCV``, ``cross_val_score``, ...) also warns, once per
        model-selection call (``dptoolkit.accounting._budget.warn_model_selection``).
        """
        spent = _spent_of(event, spent)
        self.privacy_event_ = event
        self.privacy_spent_ = spent
        accountant = self._payer(spent)
        guard = _guard_of(self)
        if accountant is None:
            if guard is not None:
                guard.charged = True
            return self
        label = self._privacy_label or type(self).__name__
        held = guard.reservation if guard is not None else None
        if held is not None and held[0] is accountant:
            accountant.spend(spent[0], spent[1], event=event, label=label,
                             reservation=held[1])
        else:
            accountant.spend(spent[0], spent[1], event=event, label=label)
        if guard is not None:
            guard.charged = True
        from ..accounting import warn_model_selection

        warn_model_selection(self, accountant, given=self._declared("accountant") is not None)
        return self

    def _charge_failed_fit(self, event, spent):
        """Charge a fit whose noise ran and which then raised (over the budget if
        need be: the ledger shows what ran); no attribute is set."""
        accountant = self._payer(spent)
        if accountant is None:
            return
        label = self._privacy_label or type(self).__name__
        record = getattr(accountant, "_charge_after_work", None)
        if record is None:                  # an accountant-like object of the user's
            accountant.spend(spent[0], spent[1], event=event, label=label)
        else:
            record(spent[0], spent[1], event=event, label=label)

    # ------------------------------------------------------------- copies
    def __reduce_ex__(self, protocol):
        # The pickled state names the process that pickled it: unpickled in a
        # process started under that one (a joblib worker), the process-wide ledger
        # there is a copy that refuses (dptoolkit.accounting._budget.
        # note_estimator_origin).  Not in __getstate__, so skops files carry nothing.
        rv = super().__reduce_ex__(protocol)
        if isinstance(rv, tuple) and len(rv) >= 3 and isinstance(rv[2], dict):
            rv = rv[:2] + ({**rv[2], _ORIGIN_KEY: os.getpid()},) + rv[3:]
        return rv

    def __setstate__(self, state):
        if isinstance(state, dict) and _ORIGIN_KEY in state:
            state = dict(state)
            from ..accounting import note_estimator_origin

            note_estimator_origin(state.pop(_ORIGIN_KEY))
        parent = getattr(super(), "__setstate__", None)
        if parent is not None:
            parent(state)
        else:
            self.__dict__.update(state)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fit = getattr(cls, "fit", None)
        if callable(fit) and not getattr(fit, "_dptoolkit_guarded", False):
            cls.fit = guarded_fit(fit)


#: The key of the pickling process's pid in a private estimator's pickled state.
_ORIGIN_KEY = "_dptoolkit_pickled_by_pid"
