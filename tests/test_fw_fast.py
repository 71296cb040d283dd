"""Tests of the Frank-Wolfe kernels' set-up helpers (dptoolkit._fw_fast)."""
import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit import _fw_fast
from dptoolkit.linear_model import FrankWolfeLassoClassifier


def _csc_via_kernel(X):
    X = sp.csr_array(X)
    return _fw_fast.csr_to_csc(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                               np.ascontiguousarray(X.data, dtype=np.float64), X.shape[1])


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("shape, density", [((40, 70), 0.1), ((7, 300), 0.02),
                                            ((200, 5), 0.6), ((3, 4), 0.0)])
def test_csr_to_csc_equals_scipy(binary, shape, density):
    """Same arrays as SciPy's tocsc() (sorted rows per column, empty rows and
    columns included); int32 indices, int64 pointers; binary data shares the
    CSR values array (nothing to permute)."""
    X = sp.random_array(shape, density=density, format="csr", rng=3)
    if binary:
        X.data[:] = 1.0
    ref = sp.csc_array(X)
    ref.sort_indices()
    data, indices, indptr = _csc_via_kernel(X)
    assert indices.dtype == np.int32 and indptr.dtype == np.int64
    np.testing.assert_array_equal(indptr, ref.indptr)
    np.testing.assert_array_equal(indices, ref.indices)
    np.testing.assert_array_equal(data, ref.data)
    if binary and X.nnz:
        assert np.shares_memory(data, X.data)
    elif X.nnz:
        assert not np.shares_memory(data, X.data)


def test_csr_to_csc_rejects_bad_arrays():
    ptr = np.array([0, 2, 3], dtype=np.int64)
    idx = np.array([0, 4, 1], dtype=np.int32)
    val = np.ones(3)
    with pytest.raises(ValueError, match=r"column indices must be in \[0, 3\), got 4"):
        _fw_fast.csr_to_csc(ptr, idx, val, 3)
    with pytest.raises(ValueError, match="indptr must start at 0"):
        _fw_fast.csr_to_csc(ptr, idx[:2], val[:2], 5)
    with pytest.raises(ValueError, match="non-decreasing"):
        _fw_fast.csr_to_csc(np.array([0, 3, 2, 3], dtype=np.int64), idx, val, 5)
    with pytest.raises(ValueError, match=r"n_cols in \[0, 2\*\*31 - 1\)"):
        _fw_fast.csr_to_csc(ptr, idx, val, 2 ** 31)
    with pytest.raises(ValueError):  # dtype of the buffer
        _fw_fast.csr_to_csc(ptr, idx.astype(np.int64), val, 5)


@pytest.mark.parametrize("solver", ["fast", "standard"])
def test_kernel_views_dtypes(solver):
    """The fast solver gets int32 indices (CSR ones shared with X), the standard
    one int64; both the CSC arrays of tocsc()."""
    X = sp.random_array((30, 50), density=0.2, format="csr", rng=0)
    X.indices = X.indices.astype(np.int32)
    est = FrankWolfeLassoClassifier(solver=solver)
    dtype = np.int32 if solver == "fast" else np.int64
    csr, csc, shape, columns = est._kernel_views(X, private=False, index_dtype=dtype)
    assert shape == X.shape and columns is None
    assert csr[1].dtype == dtype and csc[1].dtype == dtype
    assert csr[2].dtype == np.int64 and csc[2].dtype == np.int64
    if solver == "fast":
        assert np.shares_memory(csr[1], X.indices)
    ref = sp.csc_array(X)
    ref.sort_indices()
    for got, want in zip(csc, (ref.data, ref.indices, ref.indptr)):
        np.testing.assert_array_equal(got, want)


def test_nonprivate_auto_selector_rule():
    """selector="auto", non-private fast solver: the pairing heap exactly when
    D >= HEAP_UPDATE_COST * nnz(X) (shape only), argmax otherwise; the standard
    solver always scans."""
    from dptoolkit.linear_model._fw_budget import HEAP_UPDATE_COST
    rng = np.random.default_rng(0)
    n, per_row = 20, 3
    nnz = n * per_row
    for d, want in [(HEAP_UPDATE_COST * nnz, "pairing_heap"),
                    (HEAP_UPDATE_COST * nnz - 1, "argmax")]:
        cols = np.concatenate([rng.choice(d, per_row, replace=False) for _ in range(n)])
        vals = rng.uniform(0.1, 1.0, nnz)  # no exact ties between coordinates
        X = sp.csr_array((vals, cols, np.arange(0, nnz + 1, per_row)), shape=(n, d))
        y = np.arange(n) % 2
        fast = FrankWolfeLassoClassifier(max_iter=20, random_state=0).fit(X, y)
        assert fast.selector_ == want
        std = FrankWolfeLassoClassifier(max_iter=20, solver="standard").fit(X, y)
        assert std.selector_ == "argmax"
        # the same iterates either way: the heap is an exact argmax
        ref = FrankWolfeLassoClassifier(max_iter=20, selector="argmax").fit(X, y)
        np.testing.assert_allclose(fast.coef_, ref.coef_, rtol=0, atol=1e-12)
