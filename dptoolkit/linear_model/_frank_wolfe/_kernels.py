"""The kernel factory of Frank-Wolfe: which Cython kernel runs a fit.

:class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` has one fit skeleton
(budget, accountant check, noise stream, kernel views with the screening, the
steps, the release) for two classes and for K > 2; the kernels differ:

* two classes: ``_fw_fast.FastFW``
  (Raff, Khanna and Lu (2023), Algorithm 2 with bounded staleness) or
  ``_fw_fast.StandardFW`` (Algorithm 1);
* K > 2 classes:
  ``_fw_multinomial_fast.MultinomialFW``
  (Khanna, Lu and Raff (2023), Appendix A, Algorithm 3; privacy analysis in
  ``_multinomial``).

Every kernel takes the same CSC views, ``l1_bound``, selector code, mechanism
parameter and bit generator, and offers ``run(n_steps, gaps, tol)`` and ``coef()``.
"""
import dataclasses

import numpy as np
import scipy.sparse as sp

from . import _fw_fast, _fw_multinomial_fast
from ._budget import nonprivate_fast_selector
from ._screening import private_top_columns
from ..._private import sensitivity_factor

__all__ = ["FitData", "defers_finite_check", "fast_selector", "fit_data", "index_dtype",
           "kernel_views", "make_kernel", "released_stats"]


def index_dtype(n_classes, solver):
    """Index dtype of the kernel views: int32 for the fast binary solver (it reads
    them without copies), int64 for the standard and multinomial kernels."""
    return np.int32 if n_classes == 2 and solver == "fast" else np.int64


def fast_selector(n_classes, solver, p):
    """The selector code of the fast binary solver when it runs the fit (``p``:
    the checked parameters), else None (the views' numbering depends on it:
    :func:`kernel_views`).  A non-private ``mechanism="auto"``, resolved by
    :func:`make_kernel` from the views' shape, is never the grouped sampler."""
    if n_classes > 2 or solver != "fast":
        return None
    return _fw_fast.SELECTOR_CODES[p.spec.kernel]


def make_kernel(*, y, classes, csr, csc, p, solver, mechanism, kernel_parameter,
                bit_generator, column_order=None):
    """The kernel of one fit, and the selector it runs.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels, each in ``classes``.
    classes : ndarray of shape (n_classes,)
        Sorted label set (two: binary kernels, more: the multinomial one).
    csr, csc : tuple of ndarray
        (data, indices, indptr) views of X (after screening), as
        :func:`kernel_views` returns them (int32 CSC indices come from
        ``csr_to_csc`` of canonical CSR arrays).
    p : dict
        Checked and resolved parameters (``l1_bound``, ``spec``, ``private``,
        ``refresh_tol``, ``group_size``).
    solver, mechanism : str
        The estimator's ``solver`` and ``mechanism`` (``mechanism="auto"`` of a
        non-private fast fit is resolved here, from the shape and nnz of X).
    kernel_parameter : float
        Exponential-mechanism coefficient or Laplace scale (0 without privacy).
    bit_generator : numpy.random.BitGenerator
    column_order : ndarray of shape (n_features,) or None
        The numbering the views are in (:func:`kernel_views`' ``order``), for
        the fast binary solver.

    Returns
    -------
    kernel, spec : kernel object, SelectorSpec
    """
    spec = p.spec
    if classes.size > 2:
        labels = np.searchsorted(classes, y).astype(np.int64)
        kernel = _fw_multinomial_fast.MultinomialFW(
            *csc, labels, classes.size, p.l1_bound,
            _fw_multinomial_fast.SELECTOR_CODES[spec.kernel], kernel_parameter,
            bit_generator)
        return kernel, spec
    if not p.private and mechanism == "auto" and solver == "fast":
        spec = nonprivate_fast_selector(csc[2].shape[0] - 1, csr[0].shape[0])
    y01 = (y == classes[1]).astype(np.float64)
    args = (*csr, *csc, y01, p.l1_bound, _fw_fast.SELECTOR_CODES[spec.kernel],
            kernel_parameter, bit_generator)
    if solver == "fast":
        # kernel_views builds int32 CSC arrays by csr_to_csc from canonical CSR
        return _fw_fast.FastFW(*args, refresh_tol=p.refresh_tol,
                               group_size=p.group_size,
                               from_csr_to_csc=csc[1].dtype == np.int32,
                               column_order=column_order), spec
    return _fw_fast.StandardFW(*args), spec


def released_stats(kernel, private, n_classes):
    """The work counters a fit releases (``solver_stats_``).

    Private fits keep only the data-independent ones (iterations, and the binary
    fast solver's refreshes, which depend on T and ``refresh_tol`` only): the
    others (rows and non-zeros touched, selector updates) reveal e.g. nnz(X).
    ``n_classes`` (not the kernel's type, which a test may wrap) says which kernel ran.
    """
    if n_classes > 2:
        stats = dict(n_iter=int(kernel.t), solver="multinomial")
        if not private:
            stats["touched_nnz"] = int(kernel.n_touched)
        return stats
    stats = kernel.stats.as_dict()
    if private:
        stats = {k: stats[k] for k in ("n_iter", "n_refresh")}
    return stats


def defers_finite_check(X, private):
    """Whether a fit leaves the check of X's values for NaN and infinity to
    :func:`fit_data` (scikit-learn's validation skips it): a private fit on CSR
    or CSC input, whose smallest and largest values (the public bound's check)
    answer it in the same pass."""
    return private and sp.issparse(X) and X.format in ("csr", "csc")


@dataclasses.dataclass(frozen=True)
class FitData:
    """``X`` of an in-memory fit after the data checks that come before the spend
    (:func:`fit_data`), as :func:`kernel_views` reads it.

    Attributes
    ----------
    X : scipy.sparse.csr_array
        Canonical, finite and, for a private fit, within the public bound
        ``|x_ij| <= 1`` (clipped or refused); its arrays are those of the input
        when nothing had to change.
    binary : bool or None
        True when every stored value is 1.0 (known from the bound check; None:
        unknown, the CSC builders scan for it).
    indices_checked : bool
        X's column indices were checked in range (``_fw_fast.csr_is_canonical``).
    """
    X: object
    binary: object = None
    indices_checked: bool = False


def fit_data(est, X, private):
    """The data checks of an in-memory fit of ``est`` (a FrankWolfeLassoClassifier),
    before the spend is checked (the template's ``_check_fit_data``): a check that
    refuses the data charges nothing.

    ``X`` is as returned by ``validate_data(..., accept_sparse=True)``, its values
    checked for NaN and infinity unless :func:`defers_finite_check`.  Shares X's
    data and indices when X is canonical CSR (X itself is never modified).

    Returns
    -------
    FitData

    Raises
    ------
    ValueError
        NaN or infinity in X (also when duplicates sum to infinity), or, with
        ``clip_data=False``, entries outside [-1, 1] in a private fit (a
        data-dependent error).
    """
    Xr = sp.csr_array(X)
    # validate_data checked every value of dense, CSR and CSC input (unless the
    # check is deferred to the value range), and the conversion to CSR keeps
    # them; other formats (LIL, DOK: values sklearn cannot read; COO: converting
    # sums duplicates) and summed duplicates need the check here
    finite_checked = ((not sp.issparse(X) or X.format in ("csr", "csc"))
                      and not defers_finite_check(X, private))
    # canonical (sorted, no duplicates) with indices in range: the kernels' own
    # check (one pass) where their index dtype holds X, else SciPy's
    indices_checked = (Xr.indices.dtype == np.int32 and max(Xr.shape) < 2 ** 31 - 1
                       and _fw_fast.csr_is_canonical(Xr.indptr.astype(np.int64, copy=False),
                                                     Xr.indices, Xr.shape[1]))
    if indices_checked:
        Xr.has_canonical_format = True
    elif not Xr.has_canonical_format:  # duplicates or unsorted indices
        Xr = Xr.copy()
        Xr.sum_duplicates()
        finite_checked = False
    if not private:
        if not finite_checked and not np.all(np.isfinite(Xr.data)):
            raise ValueError("Input X contains NaN or infinity")
        return FitData(Xr, None, bool(indices_checked))
    # the smallest and largest value: NaN and infinity (as scikit-learn names
    # them), the public bound, and whether every value is 1.0 (binary data: the
    # CSC builders then skip their own scan of the values)
    value_range = (float(Xr.data.min()), float(Xr.data.max())) if Xr.data.size else None
    if value_range is not None and not np.all(np.isfinite(value_range)):
        if np.isnan(value_range).any():
            raise ValueError("Input X contains NaN.")
        raise ValueError("Input X contains infinity or a value too large for "
                         "dtype('float64').")
    checked = est._enforce_public_bound(Xr, "linf", 1.0, value_range=value_range)
    binary = True if checked is Xr and value_range == (1.0, 1.0) else None
    return FitData(checked, binary, bool(indices_checked))


def kernel_views(est, data, budget=None, p=None, rng=None, index_dtype=np.int64,
                 y_codes=None, fast_selector=None):
    """CSR and CSC arrays (data, indices, int64 indptr) for the kernels of ``est`` (a
    FrankWolfeLassoClassifier).

    ``data`` is the :class:`FitData` of the fit (:func:`fit_data`).  With a
    screening budget, the columns are first restricted to the private top
    ``p.screening`` candidates (``_screening``).  The CSC arrays come from one
    cache-blocked counting sort (``_fw_fast.csr_to_csc``, or
    ``csr_to_numbered_csc`` below: int32 row indices, and for binary data the
    CSR values array itself, as nothing needs permuting), the same arrays as
    ``tocsc()``.

    Parameters
    ----------
    index_dtype : {numpy.int32, numpy.int64}, default=numpy.int64
        dtype of both index arrays: int32 for the fast solver (used without a
        copy), int64 for the standard and multinomial kernels.
    y_codes : (ndarray of shape (n_samples,), int) or None
        Index of each row's class in ``classes_`` and the number of classes
        (the gradient screening score reads them).
    fast_selector : int or None
        The selector code of the fast binary solver that will read the views
        (None: another kernel).  When that solver works in
        :func:`~dptoolkit.linear_model._frank_wolfe._fw_fast.column_order`'s
        numbering (``_fw_fast.renumbers``), the views come in it, built by
        ``csr_to_numbered_csc`` (the CSC in the columns' own order is not built).

    Returns ``(csr_arrays, csc_arrays, shape, columns, sums, order)`` (``columns``
    None without screening; ``shape`` is the restricted shape; ``sums`` the
    released per-class sums of shape (n_classes, n_features) when ``p.start`` is
    ``"naive_bayes"``, else None; ``order`` the numbering of the views' columns,
    None for the columns' own order).
    """
    Xr, binary, indices_checked = data.X, data.binary, data.indices_checked
    columns = sums = None
    if budget is not None and budget.screening_noise_multiplier is not None:
        columns = private_top_columns(
            Xr, p.screening, budget.screening_noise_multiplier, rng,
            sensitivity=sensitivity_factor(est.neighbouring),
            score=est._screening_score(), y_codes=y_codes[0], n_classes=y_codes[1],
            class_sums=p.start == "naive_bayes")
        if p.start == "naive_bayes":
            columns, sums = columns
        Xr = Xr[:, columns]
        indices_checked = False     # new arrays
    n_rows, n_cols = Xr.shape
    values = np.ascontiguousarray(Xr.data, dtype=np.float64)
    indptr = Xr.indptr.astype(np.int64, copy=False)
    order = None
    if max(n_rows, n_cols) < 2 ** 31 - 1:
        indices = Xr.indices.astype(np.int32, copy=False)
        if fast_selector is not None and _fw_fast.renumbers(fast_selector, n_cols):
            order, _, indices, *csc = _fw_fast.csr_to_numbered_csc(
                indptr, indices, values, n_cols, binary=binary,
                check_indices=not indices_checked)
        else:
            csc = _fw_fast.csr_to_csc(indptr, indices, values, n_cols, binary=binary,
                                      check_indices=not indices_checked)
    else:  # beyond int32 (the fast solver refuses such shapes)
        indices = Xr.indices
        Xc = Xr.tocsc()
        csc = (np.ascontiguousarray(Xc.data, dtype=np.float64), Xc.indices,
               Xc.indptr.astype(np.int64, copy=False))
    csr = (values, indices.astype(index_dtype, copy=False), indptr)
    csc = (csc[0], csc[1].astype(index_dtype, copy=False), csc[2])
    return csr, csc, Xr.shape, columns, sums, order
