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
import numpy as np

from . import _fw_fast, _fw_multinomial_fast
from ._budget import nonprivate_fast_selector

__all__ = ["index_dtype", "make_kernel", "released_stats"]


def index_dtype(n_classes, solver):
    """Index dtype of the kernel views: int32 for the fast binary solver (it reads
    them without copies), int64 for the standard and multinomial kernels."""
    return np.int32 if n_classes == 2 and solver == "fast" else np.int64


def make_kernel(*, y, classes, csr, csc, p, solver, mechanism, kernel_parameter,
                bit_generator):
    """The kernel of one fit, and the selector it runs.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels, each in ``classes``.
    classes : ndarray of shape (n_classes,)
        Sorted label set (two: binary kernels, more: the multinomial one).
    csr, csc : tuple of ndarray
        (data, indices, indptr) views of X (after screening).
    p : dict
        Checked and resolved parameters (``l1_bound``, ``spec``, ``private``,
        ``refresh_tol``, ``group_size``).
    solver, mechanism : str
        The estimator's ``solver`` and ``mechanism`` (``mechanism="auto"`` of a
        non-private fast fit is resolved here, from the shape and nnz of X).
    kernel_parameter : float
        Exponential-mechanism coefficient or Laplace scale (0 without privacy).
    bit_generator : numpy.random.BitGenerator

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
        return _fw_fast.FastFW(*args, refresh_tol=p.refresh_tol,
                               group_size=p.group_size), spec
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
