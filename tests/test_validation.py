"""Tests of dptoolkit._validation."""
import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit._validation import check_sparse_X

# 3 x 4 matrix given in CSR form with duplicates (row 0: column 2 twice; row 2:
# column 0 twice) and unsorted indices; its dense value:
_DATA = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
_INDICES = np.array([2, 0, 2, 1, 3, 0])
_INDPTR = np.array([0, 3, 3, 6])
_ROWS = np.array([0, 0, 0, 2, 2, 2])
_DENSE = np.array([[2.0, 0.0, 4.0, 0.0],
                   [0.0, 0.0, 0.0, 0.0],
                   [6.0, 4.0, 0.0, 5.0]])

_CLASSES = {
    ("csr", "array"): sp.csr_array, ("csr", "matrix"): sp.csr_matrix,
    ("csc", "array"): sp.csc_array, ("csc", "matrix"): sp.csc_matrix,
    ("coo", "array"): sp.coo_array, ("coo", "matrix"): sp.coo_matrix,
}


def _messy(fmt, kind, index_dtype, dtype):
    """The matrix above in ``fmt``, non-canonical, with the given dtypes."""
    data = _DATA.astype(dtype)
    indices, indptr = _INDICES.astype(index_dtype), _INDPTR.astype(index_dtype)
    cls = _CLASSES[fmt, kind]
    if fmt == "csr":
        return cls((data, indices, indptr), shape=(3, 4))
    if fmt == "csc":  # same arrays read as CSC: the transpose
        return cls((data, indices, indptr), shape=(4, 3))
    return cls((data, (_ROWS.astype(index_dtype), indices)), shape=(3, 4))


def _state(X):
    """Copies of everything of X that check_sparse_X must leave alone."""
    arrays = {}
    for attr in ("data", "indices", "indptr", "row", "col"):
        value = getattr(X, attr, None)
        if isinstance(value, np.ndarray):
            arrays[attr] = (value.copy(), value.dtype)
    flags = {}
    for attr in ("has_sorted_indices", "has_canonical_format"):
        if hasattr(X, attr):
            flags[attr] = getattr(X, attr)
    return arrays, flags, X.nnz, X.shape, X.dtype


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("kind", ["array", "matrix"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("formats", [("csr",), ("csc",), ("csr", "csc")])
def test_check_sparse_X_never_modifies_the_input(fmt, kind, index_dtype, dtype, formats):
    X = _messy(fmt, kind, index_dtype, dtype)
    expected = _DENSE if fmt != "csc" else _DENSE.T
    before = _state(X)
    out = check_sparse_X(X, formats=formats)
    after = _state(X)
    for attr, (value, value_dtype) in before[0].items():
        assert after[0][attr][1] == value_dtype, attr
        np.testing.assert_array_equal(after[0][attr][0], value, err_msg=attr)
    assert before[1:] == after[1:]
    np.testing.assert_array_equal(X.toarray(), expected)
    # and the result is canonical, float64, int64 indices, of the same value
    assert len(out) == len(formats)
    for M, f in zip(out, formats):
        assert M.format == f and M.dtype == np.float64
        assert M.indices.dtype == np.int64 and M.indptr.dtype == np.int64
        assert M.has_canonical_format
        np.testing.assert_array_equal(M.toarray(), expected)


def test_check_sparse_X_does_not_copy_canonical_input():
    X = sp.csr_array(_DENSE)
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    (M,) = check_sparse_X(X)
    assert np.shares_memory(M.data, X.data)
    assert np.shares_memory(M.indices, X.indices)


def test_check_sparse_X_dense_and_bad_input():
    (M,) = check_sparse_X(_DENSE.tolist())
    np.testing.assert_array_equal(M.toarray(), _DENSE)
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_sparse_X(sp.csr_array(np.array([[1.0, np.inf]])))
    with pytest.raises(ValueError, match="2-D"):
        check_sparse_X(np.ones(3))
    with pytest.raises(ValueError, match="at least one sample"):
        check_sparse_X(sp.csr_array((0, 3)))
    with pytest.raises(TypeError, match="numeric"):
        check_sparse_X(np.array([["a", "b"]]))
