"""Input validation shared by mechanisms, accountants and estimators.

Every check raises ``TypeError`` for a value of the wrong type and
``ValueError`` naming the argument and the allowed range otherwise.
"""
import contextlib
import contextvars
import math
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Boolean",
    "Checked",
    "Interval",
    "Options",
    "check_X_y_named",
    "check_accountant",
    "check_epsilon_delta",
    "check_bool",
    "check_random_state",
    "check_scalar_range",
    "check_sparse_X",
    "check_positive_int",
    "check_choice",
    "trusted_parameters",
    "validate_params",
]


def _check_real(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if np.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def check_scalar_range(value, name, *, low=None, high=None, low_open=False,
                       high_open=False, allow_inf=False):
    """Validate a real scalar against an interval and return it as float.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Argument name used in error messages.
    low, high : float or None
        Interval ends (None: unbounded).
    low_open, high_open : bool
        Whether the interval is open at that end.
    allow_inf : bool
        Whether +inf / -inf are allowed (subject to the interval).

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN, infinite (unless allowed) or outside the interval.
    """
    value = _check_real(value, name)
    if not allow_inf and np.isinf(value):
        raise ValueError(f"{name} must be finite, got {value}")
    lo_ok = low is None or (value > low if low_open else value >= low)
    hi_ok = high is None or (value < high if high_open else value <= high)
    if not (lo_ok and hi_ok):
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        interval = ("(" if low_open or low is None else "[") + f"{lo}, {hi}" + (
            ")" if high_open or high is None else "]")
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return value


def check_positive_int(value, name, *, minimum=1, maximum=None):
    """Validate an integer in ``[minimum, maximum]`` and return it as int.

    Parameters
    ----------
    value : object
        The value to check (``bool`` is refused).
    name : str
        Argument name used in error messages.
    minimum : int, default=1
    maximum : int or None, default=None
        Upper end (None: unbounded).  Callers set it where a larger value cannot
        run (memory or time linear in the value) so that it is refused by name.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value`` is outside ``[minimum, maximum]``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be in [{minimum}, {maximum}], got {value}")
    return int(value)


def check_epsilon_delta(epsilon, delta=0.0, *, allow_zero_delta=True, pure=None,
                        epsilon_max=None):
    """Validate a privacy budget.

    Parameters
    ----------
    epsilon : float
        Must be finite and > 0 (and < ``epsilon_max`` when given).
    delta : float, default=0.0
        Must be in [0, 1) (or (0, 1) when ``allow_zero_delta`` is False).
    allow_zero_delta : bool, default=True
    pure : str or None, default=None
        The name of a pure epsilon-DP mechanism: ``delta`` must then be 0.
    epsilon_max : float or None, default=None
        Open upper end of ``epsilon`` (the classical Gaussian mechanism's
        analysis needs epsilon < 1).

    Returns
    -------
    epsilon, delta : float

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        ``epsilon`` <= 0, NaN, infinite or >= ``epsilon_max``; ``delta`` outside
        its range, or not 0 for a pure mechanism.
    """
    epsilon = check_scalar_range(epsilon, "epsilon", low=0.0, low_open=True,
                                 high=epsilon_max, high_open=True)
    checked = check_scalar_range(delta, "delta", low=0.0, high=1.0, high_open=True,
                                 low_open=not allow_zero_delta)
    if pure is not None and checked != 0.0:
        raise ValueError(f"delta must be 0 for the {pure} mechanism (it is pure "
                         f"epsilon-DP), got {delta!r}")
    return epsilon, checked


def check_bool(value, name):
    """Validate a bool (``numpy.bool_`` too) and return it as bool.

    Raises
    ------
    TypeError
        If ``value`` is not a bool (integers are refused: ``0``/``1`` are
        usually a mistaken positional argument).
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_accountant(accountant, name="accountant"):
    """``None`` or an object with ``check`` and ``spend`` (a BudgetAccountant).

    Raises
    ------
    TypeError
        Anything else, naming the argument.
    """
    if accountant is None:
        return None
    if not (callable(getattr(accountant, "check", None))
            and callable(getattr(accountant, "spend", None))):
        raise TypeError(f"{name} must be a dptoolkit.accounting.BudgetAccountant or None, "
                        f"got {type(accountant).__name__}")
    return accountant


def check_random_state(random_state):
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    ``None`` seeds from OS entropy (the right default for privacy noise); an
    int or a ``SeedSequence`` seeds a fresh PCG64 generator; a ``Generator``
    is used as is (shared state).  ``numpy.random.RandomState`` is rejected:
    its bit generator (MT19937) is fine, but mixing the legacy API makes
    reproducibility hard to reason about.

    Raises
    ------
    TypeError
        For any other type.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) and not isinstance(
        random_state, (bool, np.bool_)
    ):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a numpy.random.SeedSequence or a "
        f"numpy.random.Generator, got {type(random_state).__name__}"
    )


def check_n_jobs(n_jobs, name="n_jobs"):
    """``n_jobs`` as joblib takes it: None, or a non-zero int (-1: all cores).

    Raises
    ------
    TypeError
        Not None or an int (bool included).
    ValueError
        0.
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"{name} must be None or a non-zero int (-1: all cores), got "
                        f"{type(n_jobs).__name__}")
    if n_jobs == 0:
        raise ValueError(f"{name} must be None or a non-zero int (-1: all cores), got 0")
    return int(n_jobs)


def _sparse_arrays(X):
    """The ndarrays a scipy sparse matrix/array stores its entries in."""
    arrays = []
    for attr in ("data", "indices", "indptr", "row", "col", "offsets"):
        value = getattr(X, attr, None)
        if isinstance(value, np.ndarray):
            arrays.append(value)
    arrays.extend(a for a in getattr(X, "coords", ()) if isinstance(a, np.ndarray))
    return arrays


def check_sparse_X(X, *, name="X", formats=("csr",), dtype=np.float64):
    """Return ``X`` as a canonical scipy sparse array of float64 with int64 indices.

    Dense input is converted (a dense ndarray is accepted everywhere sparse is);
    every scipy.sparse format is accepted.  Duplicate entries are summed and
    indices sorted, so kernels can rely on canonical CSR/CSC.

    ``X`` itself is never modified: a non-canonical input (duplicates,
    unsorted indices) is copied before it is canonicalised, and the int64
    index arrays are new arrays when ``X``'s are int32.  An input already
    canonical, float64 and in the requested format is not copied: the
    returned matrix then shares ``X``'s ``data`` (and int64 index arrays),
    which callers must treat as read-only.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    formats : tuple of {"csr", "csc"}
        The formats to return, in that order (one matrix per format).

    Returns
    -------
    tuple of scipy.sparse.csr_array / csc_array

    Raises
    ------
    ValueError
        If X is not 2-D, is empty, or contains NaN or infinity.
    TypeError
        If X is complex or not numeric.
    """
    if sp.issparse(X):
        Xs = X
    else:
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features), "
                             f"got an array with {arr.ndim} dimension(s)")
        Xs = sp.csr_array(arr.astype(dtype, copy=False))
    if Xs.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got {Xs.ndim} dimension(s)")
    if Xs.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {Xs.dtype}")
    n, d = Xs.shape
    if n == 0 or d == 0:
        raise ValueError(f"{name} must have at least one sample and one feature, got shape {Xs.shape}")
    # The caller's arrays: conversions below may return matrices sharing them
    # (csr -> csr_array, float64 -> float64), and sum_duplicates/sort_indices
    # work in place, so a shared non-canonical matrix is copied first.
    callers = _sparse_arrays(X) if sp.issparse(X) else []
    out = []
    for fmt in formats:
        M = sp.csr_array(Xs) if fmt == "csr" else sp.csc_array(Xs)
        M = M.astype(dtype, copy=False)
        if not M.has_canonical_format and any(
                np.may_share_memory(a, b) for a in _sparse_arrays(M) for b in callers):
            M = M.copy()
        M.sum_duplicates()
        M.sort_indices()
        if not np.all(np.isfinite(M.data)):
            raise ValueError(f"{name} contains NaN or infinity")
        M.indices = M.indices.astype(np.int64, copy=False)
        M.indptr = M.indptr.astype(np.int64, copy=False)
        out.append(M)
    return tuple(out)


def check_X_y_named(X, y=None, *, y_numeric=False):
    """Refuse, naming ``X`` or ``y``, input whose scikit-learn error names neither.

    Called before :func:`sklearn.utils.validation.validate_data`, which then does
    the conversion and the remaining checks (NaN, infinity, ``y`` of the wrong
    dimension: its messages for those name the argument).  Nothing is returned
    and nothing is converted here, except string or object arrays, which are
    parsed once to report a non-number by name.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or None
    y_numeric : bool, default=False
        Whether ``y`` must be numeric (regression targets).

    Raises
    ------
    ValueError
        ``X`` not 2D, without samples or features, complex, or holding
        strings that are not numbers; ``y`` of another length than ``X``, or
        not numeric when ``y_numeric``.
    TypeError
        ``X`` (or a numeric ``y``) holding objects that are not numbers.
    """
    if sp.issparse(X):
        shape = X.shape
    else:
        arr = np.asarray(X)
        _check_parses("X", arr)
        shape = arr.shape
    if len(shape) != 2:
        raise ValueError(f"X must be a 2D array of shape (n_samples, n_features), got "
                         f"shape {shape}. Reshape your data: array.reshape(-1, 1) for a "
                         "single feature, array.reshape(1, -1) for a single sample")
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"X must have at least one sample and one feature: found an array "
                         f"with {shape[0]} sample(s) and {shape[1]} feature(s) "
                         f"(shape={shape}) while a minimum of 1 is required.")
    if y is None:
        return
    yarr = np.asarray(y)
    if yarr.ndim == 0:
        raise ValueError(f"y must be 1-D of shape (n_samples,), got a scalar {yarr!r}")
    if yarr.shape[0] != shape[0]:
        raise ValueError(f"X and y have inconsistent numbers of samples: X has {shape[0]} "
                         f"rows, y has {yarr.shape[0]} entries")
    if y_numeric:
        _check_parses("y", yarr)


def _check_parses(name, arr):
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must be real-valued: Complex data not supported "
                         f"(dtype {arr.dtype})")
    if arr.dtype.kind in "USO":
        try:
            arr.astype(np.float64)
        except (TypeError, ValueError) as exc:  # the same type, with the name
            raise type(exc)(f"{name} must be numeric: {exc}") from None


# --------------------------------------------------------------------------- parameters
# A small declarative constraint table per estimator, in the style of
# scikit-learn's ``_parameter_constraints`` (whose validator lives in a private
# scikit-learn module and is not imported here).  Each estimator class maps every
# name of ``get_params()`` to a list of constraints; a value is valid when it
# satisfies one of them.  ``fit`` calls :func:`validate_params` first, so every
# parameter is checked whether or not that fit uses it (a private-only parameter
# such as ``delta`` is refused by name in a non-private fit too).  Checks that
# relate parameters to each other or to the data stay in the estimators.

def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class Interval:
    """Reals or integers in an interval; NaN is never inside.

    Parameters
    ----------
    kind : {"real", "int"}
        ``"real"`` accepts any real number but ``bool``; ``"int"`` integers only.
    low, high : float or None
        Ends (None: unbounded; an unbounded end is open, so infinity is outside).
    closed : {"both", "left", "right", "neither"}
    """

    def __init__(self, kind, low, high, *, closed="both"):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def is_satisfied_by(self, value):
        if self.kind == "int":
            if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
                return False
        elif not _is_real(value):
            return False
        v = float(value) if self.kind == "real" else value
        if self.kind == "real" and not math.isfinite(v):
            # +-inf only through a closed infinite end; NaN never
            if math.isnan(v):
                return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is None:
            if self.kind == "real" and v == -math.inf:
                return False
        elif not (v >= self.low if left else v > self.low):
            return False
        if self.high is None:
            if self.kind == "real" and v == math.inf:
                return False
        elif not (v <= self.high if right else v < self.high):
            return False
        return True

    def __str__(self):
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        what = "a float" if self.kind == "real" else "an int"
        return f"{what} in {left}{lo}, {hi}{right}"


class Options:
    """One of a fixed set of strings."""

    def __init__(self, *values):
        self.values = values

    def is_satisfied_by(self, value):
        return isinstance(value, str) and value in self.values

    def __str__(self):
        return "one of " + ", ".join(repr(v) for v in self.values)


class Boolean:
    """``True`` or ``False`` (Python or NumPy bool)."""

    def is_satisfied_by(self, value):
        return isinstance(value, (bool, np.bool_))

    def __str__(self):
        return "a bool"


class Checked:
    """Whatever ``check(value)`` accepts without raising (for a constraint that an
    existing checker states, e.g. the accountant or ``random_state``)."""

    def __init__(self, check, description):
        self.check, self.description = check, description

    def is_satisfied_by(self, value):
        try:
            self.check(value)
        except (TypeError, ValueError):
            return False
        return True

    def __str__(self):
        return self.description


class _NoneConstraint:
    def is_satisfied_by(self, value):
        return value is None

    def __str__(self):
        return "None"


def _check_seed(value):
    if not isinstance(value, np.random.Generator):
        check_random_state(value)


#: ``random_state`` of every estimator: None, an int >= 0, a SeedSequence or a
#: Generator (see :func:`check_random_state`).
RANDOM_STATE = Checked(_check_seed, "None, an int >= 0, a numpy SeedSequence or Generator")


def _check_1d(value):
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("not a non-empty 1-D array")


#: A non-empty 1-D array-like (``classes``: its relation to the data is checked
#: in ``fit``).
ARRAY_1D = Checked(_check_1d, "a non-empty 1-D array-like")


def _check_sequence(value):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError("not a sequence")


#: A sequence (``groups``: a list of feature-index groups, each checked against
#: the data in ``fit``).
SEQUENCE = Checked(_check_sequence, "a sequence (of feature-index groups)")


#: The estimators whose parameters the current block takes as validated
#: (:func:`trusted_parameters`).
_TRUSTED = contextvars.ContextVar("dptoolkit_trusted_parameters", default=())


@contextlib.contextmanager
def trusted_parameters(*estimators):
    """Inside this block, :func:`validate_params` takes the parameters of
    ``estimators`` as validated (scikit-learn's skipped validation of nested
    estimators).

    For a caller that validated them itself and has not changed them (the command
    line checks every option before reading data, then fits), or that built them
    from its own validated values (a composite's inner estimator).  A context
    variable, not state on the estimators: it ends with the block.
    """
    token = _TRUSTED.set(_TRUSTED.get() + tuple(estimators))
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def parameters_trusted(estimator):
    """Whether ``estimator``'s parameters are taken as validated here
    (:func:`trusted_parameters`)."""
    return any(e is estimator for e in _TRUSTED.get())


def validate_params(estimator):
    """Check every parameter of ``estimator`` against its ``_parameter_constraints``
    (nothing inside a :func:`trusted_parameters` block for it).

    Parameters
    ----------
    estimator : BaseEstimator
        Its class maps each name of ``get_params(deep=False)`` to a list of
        constraints (:class:`Interval`, :class:`Options`, :class:`Boolean`,
        :class:`Checked`, or ``None`` for the value None).

    Raises
    ------
    dptoolkit.exceptions.InvalidParameterError
        (A ``ValueError`` and a ``TypeError``.)  A parameter that satisfies
        none of its constraints; the message names it, lists what it accepts
        and shows the value.
    RuntimeError
        A parameter without a declared constraint (a programming error: every
        parameter must be declared).
    """
    from .exceptions import InvalidParameterError

    if parameters_trusted(estimator):
        return
    cls = type(estimator)
    table = getattr(cls, "_parameter_constraints", None)
    params = estimator.get_params(deep=False)
    missing = sorted(set(params) - set(table or {}))
    if missing:
        raise RuntimeError(f"{cls.__name__} declares no constraint for parameter(s) "
                           f"{missing}")
    for name, value in params.items():
        allowed = [_NoneConstraint() if c is None else c for c in table[name]]
        if any(c.is_satisfied_by(value) for c in allowed):
            continue
        shown = repr(value) if not isinstance(value, np.ndarray) else f"array{value.shape}"
        raise InvalidParameterError(
            f"{name} of {cls.__name__} must be " + " or ".join(map(str, allowed))
            + f", got {shown[:200]}")


# Constraints shared by the private estimators (one definition each).
#: ``epsilon``: None (a non-private fit) or a finite float > 0.  No upper cap:
#: a huge finite epsilon is a fast fit (the noise calibrations stop at a floor,
#: see ``dptoolkit.accounting._calibration.MIN_NOISE_MULTIPLIER``).
EPSILON = [None, Interval("real", 0.0, None, closed="neither")]
#: ``delta`` of a Gaussian-noise estimator: in (0, 1) (None only without epsilon).
DELTA_GAUSSIAN = [None, Interval("real", 0.0, 1.0, closed="neither")]
#: ``delta`` of an estimator that can be pure DP: None (pure) or in (0, 1).
DELTA_OPEN = DELTA_GAUSSIAN
#: ``delta`` of a selector or search that takes 0 as pure DP: None or in [0, 1).
DELTA_OPTIONAL = [None, Interval("real", 0.0, 1.0, closed="left")]
N_SAMPLES_PUBLIC = [None, Interval("int", 1, None)]
ACCOUNTANT = [Checked(check_accountant, "None or a dptoolkit.accounting.BudgetAccountant")]
CLASSES = [None, ARRAY_1D]
POSITIVE = [Interval("real", 0.0, None, closed="neither")]
NON_NEGATIVE = [Interval("real", 0.0, None, closed="left")]
FRACTION_OPEN = [Interval("real", 0.0, 1.0, closed="neither")]
NEIGHBOURING = [Options("add_remove", "replace_one")]
SCREENING = [None, Options("auto"), Interval("int", 1, None)]
PRIVATE_COMMON = {"epsilon": EPSILON, "n_samples_public": N_SAMPLES_PUBLIC,
                  "accountant": ACCOUNTANT, "random_state": [RANDOM_STATE]}


def check_classes(classes, name="classes"):
    """Validate a declared label set: the sorted array of its labels.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        Distinct, hashable, mutually sortable labels; at least two.
    name : str
        The argument's name in errors.

    Returns
    -------
    ndarray of shape (n_classes,)
        Sorted (as :func:`numpy.unique` sorts), so ``classes_[1]`` is the positive
        class of a binary model, as when the labels are read from ``y``.

    Raises
    ------
    TypeError
        A string, unhashable or unsortable labels.
    ValueError
        Not 1-D, fewer than two labels, duplicates, NaN.
    """
    if isinstance(classes, (str, bytes)):
        raise TypeError(f"{name} must be an array-like of labels, got a str")
    try:
        arr = np.asarray(classes)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array-like of labels: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array-like of labels, got shape {arr.shape}")
    if arr.dtype.kind in "US" and not all(isinstance(c, (str, bytes)) for c in classes):
        # numpy turned numbers into strings: [0, "a"] is not a label set of y's type
        raise TypeError(f"{name} must hold mutually sortable labels of one type (all "
                        "numbers or all str), got a mix")
    if arr.dtype.kind == "O":
        for label in arr:
            try:
                hash(label)
            except TypeError:
                raise TypeError(f"{name} must hold hashable labels, got "
                                f"{type(label).__name__}") from None
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite labels, got NaN or infinity")
    try:
        uniq = np.unique(arr)
    except TypeError:
        raise TypeError(f"{name} must hold mutually sortable labels (e.g. all int or all "
                        "str)") from None
    if uniq.size != arr.size:
        raise ValueError(f"{name} must hold distinct labels, got duplicates in "
                         f"{arr.tolist()!r}")
    if uniq.size < 2:
        raise ValueError(f"{name} must hold at least two labels, got {uniq.size} "
                         f"class{'' if uniq.size == 1 else 'es'}")
    return uniq


def check_choice(value, name, choices):
    """``value`` if it is one of the strings ``choices``.

    Raises
    ------
    ValueError
        ``value`` is not one of ``choices`` (the message names ``name``).
    """
    if not (isinstance(value, str) and value in choices):
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value
