"""Tests of the Frank-Wolfe kernels' set-up helpers (dptoolkit.linear_model._frank_wolfe._fw_fast)."""
import os

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit.linear_model._frank_wolfe import _fw_fast
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


def test_csr_to_csc_takes_the_callers_binary_flag():
    """binary=True (the caller knows every value is 1.0) gives the arrays of the
    scan without it; binary=False copies the values even when they are all 1.0
    (the same values); the estimator's private fits pass True when the bound
    check's smallest and largest value are 1.0."""
    X = sp.random_array((60, 90), density=0.1, format="csr", rng=4)
    X.data[:] = 1.0
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, X.shape[1])
    scanned = _fw_fast.csr_to_csc(*args)
    told = _fw_fast.csr_to_csc(*args, binary=True)
    copied = _fw_fast.csr_to_csc(*args, binary=False)
    for got in (told, copied):
        for a, b in zip(got, scanned):
            np.testing.assert_array_equal(a, b)
    assert told[0] is X.data and scanned[0] is X.data
    assert not np.shares_memory(copied[0], X.data)


def _scipy_csc(X):
    ref = sp.csc_array(sp.csr_array(X))
    ref.sort_indices()
    return ref.data, ref.indices, ref.indptr


def _assert_csc_equal(got, X):
    for g, want in zip(got, _scipy_csc(X)):
        np.testing.assert_array_equal(g, want)


def _structured_matrices():
    """Matrices whose structure the column blocks of csr_to_csc must not lose:
    empty rows and columns (first, last, whole blocks), one column, one row, a
    dense column, repeated values and non-binary data."""
    rng = np.random.default_rng(7)
    out = {}
    X = sp.random_array((60, 300), density=0.05, format="lil", rng=1)
    X[:, :40] = 0          # empty leading columns (whole blocks at small block_bits)
    X[:, 290:] = 0         # empty trailing columns
    X[10:20, :] = 0        # empty rows
    X[:, 150] = 1.0        # a dense column
    out["empty_rows_cols"] = sp.csr_array(X)
    out["one_column"] = sp.csr_array(rng.integers(0, 2, size=(50, 1)).astype(float))
    out["one_row"] = sp.csr_array(rng.integers(0, 2, size=(1, 77)).astype(float))
    out["all_empty"] = sp.csr_array((9, 33))
    X = sp.random_array((80, 120), density=0.2, format="csr", rng=2)
    X.data = rng.choice([-2.5, 0.5, 1.0, 3.0], size=X.nnz)  # non-binary, 1.0 among them
    out["non_binary_with_ones"] = X
    X = sp.random_array((80, 120), density=0.2, format="csr", rng=4)
    X.data[:] = 1.0
    X.data[-1] = 1.0 + 2.0 ** -52  # one value that is not 1.0, in the last chunk
    out["almost_binary"] = X
    return out


@pytest.mark.parametrize("name", sorted(_structured_matrices()))
@pytest.mark.parametrize("block_bits", [-1, 0, 1, 3, 6, 16])
def test_csr_to_csc_blocks_equal_scipy(name, block_bits):
    """Every block width (one column per block up to 2**16 columns, and the
    automatic choice) gives SciPy's tocsc() arrays bit for bit; the values are
    shared only when every one of them is 1.0."""
    X = _structured_matrices()[name]
    got = _fw_fast.csr_to_csc(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                              X.data, X.shape[1], block_bits=block_bits)
    _assert_csc_equal(got, X)
    assert got[1].dtype == np.int32 and got[2].dtype == np.int64
    assert np.shares_memory(got[0], X.data) == (X.nnz > 0 and bool(np.all(X.data == 1.0)))


def _numbered_reference(X):
    """What csr_to_numbered_csc builds, from the tested pieces: csr_to_csc,
    _number_columns (column_order's numbering of the CSC) and the CSR indices
    mapped by new_index."""
    ptr, idx = X.indptr.astype(np.int64), X.indices.astype(np.int32)
    c_data, c_idx, c_ptr = _fw_fast.csr_to_csc(ptr, idx, X.data, X.shape[1])
    order, new_index, n_ptr, n_idx, n_data = _fw_fast._number_columns(c_ptr, c_idx, c_data)
    return order, new_index, new_index[idx], n_data, n_idx, n_ptr


@pytest.mark.parametrize("name", sorted(_structured_matrices()) + ["zipf"])
@pytest.mark.parametrize("block_bits", [-1, 0, 3, 16])
def test_csr_to_numbered_csc_equals_the_reference(name, block_bits):
    """csr_to_numbered_csc: the numbering, its inverse, the mapped CSR indices
    and the numbered CSC arrays of the reference (csr_to_csc, _number_columns,
    new_index[indices]) bit for bit, for every block width, with SciPy's
    X[:, order] as the CSC; binary values are X.data itself, read-only input
    is not written."""
    if name == "zipf":  # frequent columns scattered among rare and empty ones
        rng = np.random.default_rng(11)
        d = 3000
        density = rng.permutation(np.minimum(1.0, 2.0 / np.arange(1, d + 1)))
        density[rng.choice(d, 400, replace=False)] = 0.0
        X = sp.csr_array((rng.random((300, d)) < density).astype(float))
    else:
        X = _structured_matrices()[name]
    ptr, idx = X.indptr.astype(np.int64), X.indices.astype(np.int32)
    data = X.data.copy()
    for a in (ptr, idx, data):
        a.flags.writeable = False
    got = _fw_fast.csr_to_numbered_csc(ptr, idx, data, X.shape[1], block_bits=block_bits)
    want = _numbered_reference(X)
    order, new_index, r_idx, c_data, c_idx, c_ptr = got
    for g, w, key in zip(got, want, ("order", "new_index", "r_idx", "c_data", "c_idx",
                                     "c_ptr")):
        if key == "c_data" and w is None:   # binary: _number_columns copies nothing
            w = np.ones(X.nnz)
        np.testing.assert_array_equal(g, w, err_msg=key)
    assert r_idx.dtype == np.int32 and c_idx.dtype == np.int32 and c_ptr.dtype == np.int64
    assert new_index.dtype == np.int32
    Y = sp.csc_array(X)[:, order]
    Y.sort_indices()
    _assert_csc_equal((c_data, c_idx, c_ptr), sp.csr_array(Y))
    binary = X.nnz > 0 and bool(np.all(X.data == 1.0))
    assert (c_data is data) == (binary or X.nnz == 0)


def test_csr_is_canonical_agrees_with_scipy():
    """csr_is_canonical: SciPy's has_canonical_format and the column range in one
    pass: True for canonical arrays in range (empty rows, no rows, no entries), False
    for unsorted or repeated indices in a row, an index out of range (negative,
    n_cols, in the middle of a sorted row it cannot be), a decreasing indptr or
    lengths that disagree; the builders skip their own scan of the indices only
    when told (same arrays)."""
    def check(ptr, idx, n_cols):
        return _fw_fast.csr_is_canonical(np.asarray(ptr, dtype=np.int64),
                                         np.asarray(idx, dtype=np.int32), n_cols)

    for name, X in _structured_matrices().items():
        assert check(X.indptr, X.indices, X.shape[1]), name
        assert X.has_canonical_format
        got = _fw_fast.csr_to_csc(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                                  X.data, X.shape[1], check_indices=False)
        _assert_csc_equal(got, X)
    assert check([0], [], 0) and check([0, 0, 0], [], 3)
    ptr = [0, 3, 3, 5]
    assert check(ptr, [0, 2, 4, 1, 4], 5)
    for idx in ([0, 4, 2, 1, 4],      # unsorted row
                [0, 2, 2, 1, 4],      # repeated index
                [-1, 2, 4, 1, 4],     # negative first
                [0, 2, 5, 1, 4]):     # past n_cols
        X = sp.csr_array((np.ones(5), np.array(idx) % 5, ptr), shape=(3, 5))
        assert not check(ptr, idx, 5)
        if min(idx) >= 0 and max(idx) < 5:
            assert not X.has_canonical_format
    assert not check([0, 3, 2, 5], [0, 2, 4, 1, 4], 5)      # indptr decreasing
    assert not check([0, 3, 3, 6], [0, 2, 4, 1, 4], 5)      # indptr past the indices
    assert not check([1, 3, 3, 5], [0, 2, 4, 1, 4], 5)      # indptr not from 0


def test_fits_of_non_canonical_csr_equal_the_canonical_ones():
    """A CSR X with unsorted indices and split duplicates (as built by hand) fits
    the model of its canonical form, private and not (the views sum the
    duplicates first; X itself is not modified)."""
    X, y = _renumbering_problem(False)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    half = X.data / 2
    # every entry as two halves, the row's entries reversed
    order = np.lexsort((-X.indices, rows))
    idx = np.repeat(X.indices[order], 2)
    val = np.repeat(half[order], 2)
    ptr = 2 * X.indptr
    Xn = sp.csr_array((val, idx, ptr), shape=X.shape)
    Xn.has_canonical_format = False
    assert not _fw_fast.csr_is_canonical(ptr.astype(np.int64), idx.astype(np.int32),
                                         X.shape[1])
    saved = Xn.indices.copy()
    for kw in (dict(epsilon=None), dict(epsilon=4.0, delta=1e-4, classes=[0, 1], k=None)):
        a = FrankWolfeLassoClassifier(l1_bound=2.0, max_iter=30, random_state=0,
                                      **kw).fit(X, y)
        b = FrankWolfeLassoClassifier(l1_bound=2.0, max_iter=30, random_state=0,
                                      **kw).fit(Xn, y)
        np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(Xn.indices, saved)


def test_csr_to_csc_many_rows_at_the_packing_limit():
    """Row index and column-within-block share one 32-bit word: with 2**21 rows
    (21 bits) block_bits may be 11 but not 12; rows near the top and columns at
    both ends of the int range of each block keep their order."""
    n_rows, n_cols = 2 ** 21, 4096
    rows = np.array([0, 5, 2 ** 20, 2 ** 21 - 2, 2 ** 21 - 1, 2 ** 21 - 1])
    cols = np.array([n_cols - 1, 0, 2047, 2048, 0, n_cols - 1])
    X = sp.csr_array((np.arange(1.0, 7.0), (rows, cols)), shape=(n_rows, n_cols))
    ptr, idx = X.indptr.astype(np.int64), X.indices.astype(np.int32)
    for bits in (-1, 0, 11):
        _assert_csc_equal(_fw_fast.csr_to_csc(ptr, idx, X.data, n_cols, block_bits=bits), X)
    assert _fw_fast._csc_block_bits(n_rows, 2 ** 30, 10 ** 9, True) == 11
    with pytest.raises(ValueError, match=r"block_bits must be -1 or in \[0, 16\] with "
                                         r"block_bits \+ 21"):
        _fw_fast.csr_to_csc(ptr, idx, X.data, n_cols, block_bits=12)


@pytest.mark.parametrize("n_rows, n_cols, nnz, binary", [
    (25000, 2 ** 20, 8_764_948, True), (25000, 2 ** 20, 8_764_948, False),
    (10, 5, 30, True), (1, 1, 1, False), (3, 0, 0, True),
    (2 ** 31 - 2, 2 ** 31 - 2, 2 ** 40, True)])
def test_csc_block_bits_limits(n_rows, n_cols, nnz, binary):
    """The automatic block width stays within the packing limits (16 bits, and
    32 bits with the largest row index) and keeps the blocks few (at most 256
    unless the limits force more)."""
    bits = _fw_fast._csc_block_bits(n_rows, n_cols, nnz, binary)
    row_bits = int(n_rows - 1).bit_length()
    assert 0 <= bits <= 16 and bits + row_bits <= 32
    if bits < min(16, 32 - row_bits):
        assert -(-n_cols // 2 ** bits) <= 256


@pytest.mark.parametrize("name", ["csr_to_csc", "csr_to_numbered_csc"])
def test_csr_builders_reject_bad_arrays(name):
    """Both CSC builders share their checks; the error names the builder."""
    build = getattr(_fw_fast, name)
    ptr = np.array([0, 2, 3], dtype=np.int64)
    idx = np.array([0, 4, 1], dtype=np.int32)
    val = np.ones(3)
    with pytest.raises(ValueError, match=r"column indices must be in \[0, 3\), got 4"):
        build(ptr, idx, val, 3)
    with pytest.raises(ValueError, match="indptr must start at 0"):
        build(ptr, idx[:2], val[:2], 5)
    with pytest.raises(ValueError, match="non-decreasing"):
        build(np.array([0, 3, 2, 3], dtype=np.int64), idx, val, 5)
    with pytest.raises(ValueError, match=name + r" needs n_rows and n_cols in \[0, 2\*\*31 - 1\)"):
        build(ptr, idx, val, 2 ** 31)
    with pytest.raises(ValueError):  # dtype of the buffer
        build(ptr, idx.astype(np.int64), val, 5)
    # negative indices (above every bound as unsigned) and the first bad one named
    with pytest.raises(ValueError, match=r"column indices must be in \[0, 5\), got -1"):
        build(ptr, np.array([0, -1, 7], dtype=np.int32), val, 5)
    with pytest.raises(ValueError, match=r"got -2147483648"):
        build(ptr, np.array([0, 1, -2 ** 31], dtype=np.int32), val, 5)
    with pytest.raises(ValueError, match=r"column indices must be in \[0, 0\)"):
        build(ptr, idx, val, 0)
    for bits in (-2, 17):
        with pytest.raises(ValueError, match="block_bits must be"):
            build(ptr, idx, val, 5, block_bits=bits)


@pytest.mark.parametrize("solver", ["fast", "standard"])
def test_kernel_views_dtypes(solver):
    """The fast solver gets int32 indices (CSR ones shared with X), the standard
    one int64; both the CSC arrays of tocsc()."""
    X = sp.random_array((30, 50), density=0.2, format="csr", rng=0)
    X.indices = X.indices.astype(np.int32)
    est = FrankWolfeLassoClassifier(solver=solver, epsilon=None)
    dtype = np.int32 if solver == "fast" else np.int64
    from dptoolkit.linear_model._frank_wolfe import _kernels

    data = _kernels.fit_data(est, X, private=False)
    csr, csc, shape, columns, _, _ = _kernels.kernel_views(est, data, index_dtype=dtype)
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
    """mechanism="auto", non-private fast solver: the pairing heap exactly when
    D >= HEAP_UPDATE_COST * nnz(X) (shape only), argmax otherwise; the standard
    solver always scans."""
    from dptoolkit.linear_model._frank_wolfe._budget import HEAP_UPDATE_COST
    rng = np.random.default_rng(0)
    n, per_row = 20, 3
    nnz = n * per_row
    for d, want in [(HEAP_UPDATE_COST * nnz, "pairing_heap"),
                    (HEAP_UPDATE_COST * nnz - 1, "argmax")]:
        cols = np.concatenate([rng.choice(d, per_row, replace=False) for _ in range(n)])
        vals = rng.uniform(0.1, 1.0, nnz)  # no exact ties between coordinates
        X = sp.csr_array((vals, cols, np.arange(0, nnz + 1, per_row)), shape=(n, d))
        y = np.arange(n) % 2
        fast = FrankWolfeLassoClassifier(max_iter=20, random_state=0, epsilon=None).fit(X, y)
        assert fast.mechanism_ == want
        std = FrankWolfeLassoClassifier(max_iter=20, solver="standard", epsilon=None).fit(X, y)
        assert std.mechanism_ == "argmax"
        # the same iterates either way: the heap is an exact argmax
        ref = FrankWolfeLassoClassifier(max_iter=20, mechanism="argmax", epsilon=None).fit(X, y)
        np.testing.assert_allclose(fast.coef_, ref.coef_, rtol=0, atol=1e-12)


def _sequential_column_sums(Xc, q, binary):
    """alpha_j = (((0 + x_1 q_1) + x_2 q_2) + ...) over column j's non-zeros in order."""
    out = np.empty(Xc.shape[1])
    for j in range(Xc.shape[1]):
        acc = 0.0
        for p in range(Xc.indptr[j], Xc.indptr[j + 1]):
            acc = acc + (q[Xc.indices[p]] if binary else Xc.data[p] * q[Xc.indices[p]])
        out[j] = acc
    return out


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("shape, density", [((60, 90), 0.1), ((300, 3), 0.5),
                                            ((50, 40), 0.0), ((1, 7), 1.0),
                                            ((400, 25), 0.3)])
def test_full_pass_sums_each_column_in_order(binary, shape, density):
    """FastFW's full pass (_gather_columns: column ranges side by side) gives every
    alpha_j as the sum over column j's non-zeros in order, bit for bit, whatever the
    lane bounds (empty lanes, empty columns, fewer columns than lanes, one dense
    column).  The q values span 1e-3 to 1e15 with both signs, so another summation
    order gives other bits (checked against NumPy's pairwise sum)."""
    rng = np.random.default_rng(11)
    X = sp.random_array(shape, density=density, format="csc", rng=rng)
    if shape == (400, 25):      # a dense first column
        X = sp.csc_array(sp.hstack([sp.csc_array(np.ones((400, 1))), X]))
    X.sort_indices()
    if binary:
        X.data[:] = 1.0
    n, d = X.shape
    q = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-3, 15, n)
    want = _sequential_column_sums(X, q, binary)
    indptr = X.indptr.astype(np.int64)
    bounds_list = [None, [0, 0, 0, 0, d], [0, d, d, d, d],
                   [0, d // 3, d // 3, 2 * d // 3, d], [0, 1 % (d + 1), d, d, d],
                   # two or three parts (one thread each): empty parts, a part
                   # ending inside a dense run of columns
                   [0, 0, 0, 0, 0, 0, 0, 0, d], [0, 1 % (d + 1), 2 % (d + 1), d // 2, d // 2,
                                                 d // 2, d, d, d],
                   [0, d, d, d, d, d, d, d, d, d, d, d, d]]
    for bounds in bounds_list:
        for n_threads in (1, 2, 3):
            got = _fw_fast.gather_columns(indptr, X.indices, X.data, q, binary=binary,
                                          bounds=bounds, n_threads=n_threads)
            np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
    for n_threads in (2, 3):   # FastFW's bounds for that many threads
        got = _fw_fast.gather_columns(indptr, X.indices, X.data, q, binary=binary,
                                      n_threads=n_threads)
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
    if X.nnz > 200:
        pairwise = np.array([np.sum((1.0 if binary else X.data[X.indptr[j]:X.indptr[j + 1]])
                                    * q[X.indices[X.indptr[j]:X.indptr[j + 1]]])
                             for j in range(d)])
        assert np.any(pairwise != want)


def test_full_pass_lane_bounds_balance_the_non_zeros():
    """Lane l starts at the first column whose non-zeros start at or after l / 4
    of nnz(X): contiguous ranges covering every column once."""
    indptr = np.array([0, 10, 10, 11, 12, 40, 41, 42, 44])
    bounds = _fw_fast._lane_bounds(indptr)
    # targets 0, 11, 22, 33 of 44: columns 3 (starts at 11) and 5 (at 40) twice
    np.testing.assert_array_equal(bounds, [0, 3, 5, 5, 8])
    assert np.all(np.diff(bounds) >= 0)
    np.testing.assert_array_equal(_fw_fast._lane_bounds(np.zeros(4, np.int64)), [0, 0, 0, 0, 3])
    np.testing.assert_array_equal(_fw_fast._lane_bounds(np.zeros(1, np.int64)), [0, 0, 0, 0, 0])
    # two parts: 8 lanes, targets 0, 5.5, 11, ..., 38.5 of 44
    np.testing.assert_array_equal(_fw_fast._lane_bounds(indptr, 2),
                                  [0, 1, 3, 5, 5, 5, 5, 5, 8])


def test_full_pass_skips_the_trailing_empty_columns():
    """FastFW's layout ends at the last column with entries (_full_pass_lanes):
    the empty columns after it keep alpha_j = 0.0, the sum over no entries,
    for one or several parts; no columns, no entries."""
    indptr = np.array([0, 2, 2, 5, 6, 6, 6, 6], dtype=np.int64)  # columns 4-6 empty
    lanes, short = _fw_fast._full_pass_lanes(indptr)
    # every used column is short: the lanes are empty, the short range is 0..4
    np.testing.assert_array_equal(lanes, [0, 0, 0, 0, 0])
    np.testing.assert_array_equal(short, [0, 4])
    lanes, short = _fw_fast._full_pass_lanes(indptr, 2)
    assert lanes[-1] == 0 and short[-1] == 4
    for empty in (np.zeros(4, np.int64), np.zeros(1, np.int64)):
        lanes, short = _fw_fast._full_pass_lanes(empty)
        np.testing.assert_array_equal(lanes, [0, 0, 0, 0, 0])
        np.testing.assert_array_equal(short, [0, 0])
    idx = np.array([0, 1, 0, 1, 2, 2], dtype=np.int32)
    q = np.array([0.5, -0.25, 2.0])
    want = np.array([0.25, 0.0, 2.25, 2.0, 0.0, 0.0, 0.0])
    for n_threads in (1, 2):
        got = _fw_fast.gather_columns(indptr, idx, np.ones(6), q, binary=True,
                                      n_threads=n_threads)
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_full_pass_layout_splits_at_the_short_tail():
    """_full_pass_lanes: lanes over the columns before the trailing run of columns
    with at most SHORT_COLUMN (15) entries (its start moved up to a multiple of 64),
    short ranges after it up to the last column with entries; every non-empty range
    but the first starts at a multiple of 64 (the threads' mark words are
    disjoint), and the ranges cover every used column once."""
    rng = np.random.default_rng(12)
    for _ in range(300):
        n_long, n_short = int(rng.integers(0, 150)), int(rng.integers(0, 400))
        counts = np.concatenate([rng.integers(0, 40, n_long), rng.integers(0, 16, n_short),
                                 np.zeros(int(rng.integers(0, 3)), np.int64)])
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        used = int(np.flatnonzero(counts)[-1]) + 1 if counts.any() else 0
        tail = used
        while tail > 0 and counts[tail - 1] <= 15:
            tail -= 1
        start = min(-(-tail // 64) * 64, used)
        for parts in (1, 2, 3):
            lanes, short = _fw_fast._full_pass_lanes(indptr, parts)
            assert lanes.shape == (4 * parts + 1,) and short.shape == (parts + 1,)
            assert lanes[0] == 0 and lanes[-1] == start == short[0] and short[-1] == used
            assert np.all(np.diff(lanes) >= 0) and np.all(np.diff(short) >= 0)
            # (a range's start may be the first's or the end when ranges are empty)
            assert all(b % 64 == 0 or b in (start, used) for b in short[1:-1])
            assert start % 64 == 0 or start == used
            if parts > 1:
                assert np.all(lanes[4:-1:4] % 64 == 0)


@pytest.mark.parametrize("binary", [True, False])
def test_full_pass_short_columns_sum_in_order(binary):
    """_gather_short (fixed 1, 3, 7 or 15 adds per column, the terms past the
    column masked to +0.0) gives every alpha_j as the column's own sum in order,
    bit for bit: columns of 0 to 40 entries in random order (longer ones summed
    one by one), the last columns of the array (no loads past it), q spanning
    1e-3 to 1e15 with both signs and zeros of both signs (a sum of -0.0 terms is
    +0.0, as the sum from +0.0), for one to three parts on one to three threads."""
    rng = np.random.default_rng(13)
    for d in (1, 7, 300, 2000):
        counts = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 15, 16, 40], d,
                            p=[.05, .2, .15, .15, .1, .05, .05, .05, .05, .05, .05, .03, .02])
        n = 60
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        idx = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for c in counts]
                             ).astype(np.int32)
        data = np.ones(idx.size) if binary else rng.uniform(-2, 2, idx.size)
        Xc = sp.csc_array((data, idx, indptr), shape=(n, d))
        q = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-3, 15, n)
        q[:6] = [0.0, -0.0, -0.0, 0.0, -0.0, -0.0]
        want = _sequential_column_sums(Xc, q, binary)
        for parts in (1, 2, 3):
            short = np.linspace(0, d, parts + 1).astype(np.intp)
            for n_threads in (1, 2, 3):
                got = _fw_fast.gather_columns(indptr, idx, data, q, binary=binary,
                                              bounds=[0] * (4 * parts + 1),
                                              short_bounds=short, n_threads=n_threads)
                np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
        got = _fw_fast.gather_columns(indptr, idx, data, q, binary=binary)
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_full_pass_rejects_bounds_not_whole_parts():
    indptr = np.array([0, 1, 2], dtype=np.int64)
    with pytest.raises(ValueError, match="bounds must have"):
        _fw_fast.gather_columns(indptr, np.array([0, 0], np.int32), np.ones(2), np.ones(1),
                                bounds=[0, 1, 2])
    with pytest.raises(ValueError, match="short_bounds must have 2 entries"):
        _fw_fast.gather_columns(indptr, np.array([0, 0], np.int32), np.ones(2), np.ones(1),
                                bounds=[0, 1, 2, 2, 2], short_bounds=[2])


@pytest.mark.skipif(not _fw_fast.OPENMP_ENABLED, reason="built without OpenMP")
def test_threads_follow_threadpoolctl_and_omp_num_threads(monkeypatch):
    """The kernels' OpenMP threads are limited by threadpoolctl (as scikit-learn's)
    and follow OMP_NUM_THREADS when it is set."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    for n in (1, 2, 3):
        with threadpoolctl.threadpool_limits(limits=n, user_api="openmp"):
            assert _fw_fast._openmp_effective_n_threads() == n


def _fit_bits(X, y, n_threads, **params):
    """coef_, intercept_ and gap_history_ bits (and solver_stats_) of a fit on n_threads OpenMP
    threads (forced through OMP_NUM_THREADS' rule: no cap by the CPU count)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=n_threads, user_api="openmp"):
        if _fw_fast.OPENMP_ENABLED:
            assert _fw_fast._openmp_effective_n_threads() == n_threads
        est = FrankWolfeLassoClassifier(random_state=0, **params).fit(X, y)
    gaps = np.array([] if est.gap_history_ is None else est.gap_history_)
    return (np.asarray(est.coef_).view(np.uint64).copy(),
            np.asarray(est.intercept_).view(np.uint64).copy(), est.solver_stats_,
            gaps.view(np.uint64))


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("private", [False, True])
def test_fit_same_bits_for_any_number_of_threads(monkeypatch, binary, private):
    """A fast-solver fit gives the same coefficients, bit for bit, on 1, 2 and 3
    OpenMP threads: the full pass (columns split among the threads) and the
    parallel row updates of long columns keep every sum in its serial order.  The
    data have two columns in most rows (more than PARALLEL_ROWS = 16384 rows), so
    that their steps take the parallel row updates and a full pass."""
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    rng = np.random.default_rng(5)
    n, d = 24000, 400
    X = sp.random_array((n, d), density=0.02, format="csr", rng=rng)
    X = sp.csr_array(sp.hstack([sp.csr_array((rng.random((n, 2)) < 0.9).astype(float)), X]))
    if binary:
        X.data[:] = 1.0
    else:
        X.data[:] = rng.uniform(0.1, 1.0, X.nnz)
    w = np.zeros(d + 2)
    w[:2] = [1.5, -1.0]
    w[2:20] = rng.normal(size=18)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w - 0.25)))).astype(int)
    params = dict(max_iter=150, l1_bound=5.0, classes=[0, 1], epsilon=None)
    if private:
        params.update(epsilon=4.0, delta=1e-6, n_samples_public=n)
    runs = [_fit_bits(X, y, t, **params) for t in (1, 2, 3)]
    if not private:
        assert runs[0][2]["n_full_steps"] > 0
    for coef, intercept, stats, gaps in runs[1:]:
        np.testing.assert_array_equal(coef, runs[0][0])
        np.testing.assert_array_equal(intercept, runs[0][1])
        assert stats == runs[0][2]
        np.testing.assert_array_equal(gaps, runs[0][3])   # (non-private fits only)


def _fit_in_child(conn, X, y, params):
    n_threads = _fw_fast._openmp_effective_n_threads()
    est = FrankWolfeLassoClassifier(random_state=0, **params).fit(X, y)
    conn.send((n_threads, np.asarray(est.coef_).view(np.uint64).copy()))
    conn.close()


@pytest.mark.skipif(not _fw_fast.OPENMP_ENABLED or not hasattr(os, "register_at_fork"),
                    reason="built without OpenMP, or no fork")
def test_fit_in_a_child_forked_after_threads_runs_on_one_thread(monkeypatch):
    """GNU OpenMP's threads do not survive fork(): a child forked after the parent
    ran a parallel loop would hang in its first one.  The kernel runs such a child
    on one thread, with the same result (a hang fails by the 120 s timeout)."""
    import multiprocessing
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    rng = np.random.default_rng(2)
    n = 20000
    X = sp.csr_array(sp.hstack([sp.csr_array(np.ones((n, 1))),
                                sp.random_array((n, 50), density=0.05, rng=rng)]))
    X.data[:] = 1.0
    y = (rng.random(n) < 0.4).astype(int)
    params = dict(max_iter=20, l1_bound=1.0, classes=[0, 1], epsilon=None)
    parent = _fit_bits(X, y, 2, **params)[0]     # the parent's OpenMP threads started
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_fit_in_child, args=(send, X, y, params), daemon=True)
    proc.start()
    send.close()
    try:
        assert recv.poll(120), "the forked child's fit hangs"
        n_threads, coef = recv.recv()
        assert n_threads == 1
        np.testing.assert_array_equal(coef, parent)
    finally:
        proc.kill()
        proc.join()


def test_full_pass_parts_start_on_mark_words():
    """With several threads each part of the full pass starts at a multiple of 64
    columns, so that the threads mark changed coordinates in disjoint 64-bit
    words; the lanes stay contiguous, non-decreasing and cover every column, and
    one part is left as _lane_bounds gives it."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        d = int(rng.integers(0, 700))
        indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 7, d))]).astype(np.int64)
        np.testing.assert_array_equal(
            _fw_fast._parts_on_mark_words(_fw_fast._lane_bounds(indptr, 1)),
            _fw_fast._lane_bounds(indptr, 1))
        for parts in (2, 3):
            bounds = _fw_fast._parts_on_mark_words(_fw_fast._lane_bounds(indptr, parts))
            assert bounds.shape == (parts * 4 + 1,)
            assert bounds[0] == 0 and bounds[-1] == d
            assert np.all(np.diff(bounds) >= 0)
            assert np.all(bounds[4:-1:4] % 64 == 0)


def test_full_pass_lane_bounds_integer_targets_match_the_real_targets():
    """_lane_bounds' integer targets ceil(l nnz / n_lanes) give the bounds of the
    real targets l nnz / n_lanes (searchsorted against float targets)."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        d = int(rng.integers(0, 60))
        indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 7, d))]).astype(np.int64)
        for parts in (1, 2, 3):
            n_lanes = parts * 4
            real = indptr[-1] * np.arange(n_lanes + 1) / n_lanes
            want = np.searchsorted(indptr[:d], real, side="left")
            want[0], want[-1] = 0, d
            np.testing.assert_array_equal(_fw_fast._lane_bounds(indptr, parts), want)


@pytest.mark.parametrize("binary", [True, False])
def test_csr_to_csc_output_is_trusted_as_scanned(binary):
    """FastFW(from_csr_to_csc=True) skips the scans for repeated rows and binary
    values: it must infer what they find from csr_to_csc's output, so the fit
    (coefficients, gaps and work counters, which count the multiply-free binary
    path and the parallel row loop alike) is the one of the scanned kernel."""
    rng = np.random.default_rng(4)
    X = sp.random_array((300, 80), density=0.1, format="csr", random_state=rng)
    X.data[:] = 1.0 if binary else rng.uniform(0.1, 1.0, X.nnz)
    y = (rng.random(300) < 0.5).astype(np.float64)
    indptr = X.indptr.astype(np.int64)
    indices = X.indices.astype(np.int32)
    cd, ci, cp = _fw_fast.csr_to_csc(indptr, indices, X.data, 80)
    assert (cd is X.data) == binary
    fits = []
    for trusted in (False, True):
        k = _fw_fast.FastFW(X.data, indices, indptr, cd, ci, cp, y, 5.0,
                            _fw_fast.SELECTOR_CODES["grouped"], 0.5,
                            np.random.default_rng(0).bit_generator, refresh_tol=0.3,
                            from_csr_to_csc=trusted)
        gaps = np.zeros(60)
        k.run(60, gaps)
        fits.append((k.coef(), gaps, k.stats.as_dict()))
    np.testing.assert_array_equal(fits[0][0], fits[1][0])
    np.testing.assert_array_equal(fits[0][1], fits[1][1])
    assert fits[0][2] == fits[1][2]


def test_column_order_numbers_the_frequent_columns_first():
    """column_order: columns by decreasing bit length of their count, in increasing
    index within a length (stable), a permutation of range(D); negative counts
    and other shapes are refused."""
    np.testing.assert_array_equal(_fw_fast.column_order([0, 5, 1, 100, 3, 0, 64, 2]),
                                  [3, 6, 1, 4, 7, 2, 0, 5])
    rng = np.random.default_rng(7)
    counts = np.concatenate([rng.integers(0, 40_000, 3000), [0, 1, 2 ** 40]])
    order = _fw_fast.column_order(counts)
    np.testing.assert_array_equal(np.sort(order), np.arange(counts.size))
    length = np.array([int(c).bit_length() for c in counts])[order]
    assert np.all(np.diff(length) <= 0)
    same = np.diff(length) == 0
    assert np.all(np.diff(order)[same] > 0)
    assert _fw_fast.column_order(np.zeros(0, dtype=np.int64)).shape == (0,)
    for bad in ([-1, 2], [[1, 2]]):
        with pytest.raises(ValueError, match="non-negative"):
            _fw_fast.column_order(bad)


@pytest.mark.parametrize("binary", [True, False])
def test_number_columns_copies_the_columns_in_column_order(binary):
    """_number_columns: the numbering of column_order, its inverse, and the CSC
    arrays with column order[i] at position i (rows and values in their order),
    as fancy indexing builds them; empty columns, no entries, no columns."""
    rng = np.random.default_rng(5)
    for d, n in ((0, 5), (7, 0), (300, 50), (2000, 40)):
        X = sp.csc_array(sp.random(n, d, density=0.05, random_state=rng, format="csc"))
        if n and d:  # a few long columns among short and empty ones
            X = sp.csc_array(sp.hstack([X, sp.csc_array(rng.random((n, 3)) < 0.9)]))
            X = sp.csc_array(X[:, rng.permutation(X.shape[1])])
        X.indices = X.indices.astype(np.int32)
        indptr = X.indptr.astype(np.int64)
        order, new_index, c_indptr, c_idx, c_data = _fw_fast._number_columns(
            indptr, X.indices, None if binary else X.data)
        np.testing.assert_array_equal(order, _fw_fast.column_order(np.diff(indptr)))
        np.testing.assert_array_equal(new_index[order], np.arange(X.shape[1]))
        assert new_index.dtype == np.int32 and c_idx.dtype == np.int32
        Y = X[:, order]
        np.testing.assert_array_equal(c_indptr, Y.indptr)
        np.testing.assert_array_equal(c_idx, Y.indices)
        if binary:
            assert c_data is None
        else:
            np.testing.assert_array_equal(c_data, Y.data)


def _renumbering_problem(binary, seed=3):
    """Columns of very different frequencies in no particular order (so that
    column_order is not the identity), no two columns alike."""
    rng = np.random.default_rng(seed)
    n, d = 400, 60
    density = rng.permutation(np.geomspace(0.005, 0.9, d))
    X = sp.csr_array((rng.random((n, d)) < density).astype(float))
    if not binary:
        X.data = rng.uniform(-1.0, 1.0, X.nnz)
    w = rng.normal(0.0, 1.0, d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w)))).astype(float)
    return X, y


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("start", [False, True])
def test_renumbered_columns_keep_the_fit_bit_for_bit(binary, start):
    """A kernel that works on column_order's numbering (renumber=1) computes the
    same alpha, margins, iterate and coefficients, bit for bit, as one that works
    in the columns' own order (renumber=0): a non-private fit (argmax: a
    deterministic choice, no ties here) of 40 steps with refreshes, from zero and
    from a start; set_start, coef and state speak the columns' own order.  The
    gaps' term h is summed in another order (within rounding)."""
    X, y = _renumbering_problem(binary)
    Xc = sp.csc_array(X)
    d = X.shape[1]
    w0 = np.zeros(d)
    w0[[2, 17, 41]] = [0.4, -0.3, 0.2]
    w0[5] = -0.0             # a zero with its sign: coef() gives +0.0 in both
    runs = {}
    for renumber in (0, 1):
        k = _fw_fast.FastFW(X.data, X.indices, X.indptr, Xc.data, Xc.indices, Xc.indptr,
                            y, 2.0, _fw_fast.SELECTOR_CODES["argmax"], 0.0,
                            np.random.default_rng(0).bit_generator, refresh_tol=0.3,
                            renumber=renumber)
        if start:
            k.set_start(w0, 10.0)
        gaps = np.zeros(40)
        k.run(40, gaps)
        runs[renumber] = (k, gaps)
    k0, k1 = runs[0][0], runs[1][0]
    assert k0.order is None
    assert k1.order is not None and not np.array_equal(k1.order, np.arange(d))
    np.testing.assert_array_equal(k1.coef().view(np.uint64), k0.coef().view(np.uint64))
    s0, s1 = k0.state(), k1.state()
    for key in ("wt", "vt", "q", "alpha"):
        np.testing.assert_array_equal(s1[key].view(np.uint64), s0[key].view(np.uint64))
    assert k1.stats.as_dict() == k0.stats.as_dict()
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=1e-12, atol=1e-9)
    assert np.count_nonzero(k1.coef()) >= 3 and k1.stats.n_refresh >= 3


def test_private_first_step_is_the_exponential_mechanism_with_renumbered_columns():
    """The grouped sampler on column_order's numbering (the fast private kernel's
    default from RENUMBER_MIN_FEATURES columns on) keeps the law of a private step: chi-square test of the first
    vertex (coordinate and sign) against the exponential mechanism, 10,000
    independent first steps from one seeded generator; false-failure rate 1e-4."""
    from scipy import stats

    X, y = _renumbering_problem(True, seed=5)
    X = sp.csr_array(X[:, :8])
    Xc = sp.csc_array(X)
    d = X.shape[1]
    coef = 0.02
    alpha = X.T @ (0.5 - y)
    logits = np.concatenate([-coef * alpha, coef * alpha])
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    rng = np.random.default_rng(20261128)
    counts = np.zeros(2 * d)
    n_draws = 10000
    for _ in range(n_draws):
        k = _fw_fast.FastFW(X.data, X.indices, X.indptr, Xc.data, Xc.indices, Xc.indptr,
                            y, 1.0, _fw_fast.SELECTOR_CODES["grouped"], coef,
                            rng.bit_generator, group_size=3, renumber=1)
        k.run(1, np.zeros(1))
        w = k.coef()
        j = int(np.flatnonzero(w)[0])
        counts[j if w[j] > 0 else d + j] += 1
    assert k.order is not None and not np.array_equal(k.order, np.arange(d))
    expected = probs * n_draws
    assert expected.min() > 5
    p_value = stats.chisquare(counts, expected).pvalue
    assert p_value > 1e-4, (p_value, counts, expected)


@pytest.mark.parametrize("binary", [True, False])
def test_numbered_views_give_the_renumbered_kernel(binary):
    """FastFW(column_order=...) on csr_to_numbered_csc's arrays is the kernel
    that renumbers the columns' own arrays itself (renumber=1): same numbering,
    same 40 private steps of the grouped sampler (one seed), same state and
    coefficients bit for bit; a column_order of the wrong length is refused."""
    X, y = _renumbering_problem(binary)
    Xc = sp.csc_array(X)
    Xc.sort_indices()
    ptr, idx = X.indptr.astype(np.int64), X.indices.astype(np.int32)
    order, _, r_idx, c_data, c_idx, c_ptr = _fw_fast.csr_to_numbered_csc(
        ptr, idx, X.data, X.shape[1])
    code = _fw_fast.SELECTOR_CODES["grouped"]

    def run(k):
        gaps = np.zeros(40)
        k.run(40, gaps)
        return k

    ref = run(_fw_fast.FastFW(X.data, idx, ptr, Xc.data, Xc.indices, Xc.indptr, y, 2.0,
                              code, 0.05, np.random.default_rng(3).bit_generator,
                              refresh_tol=0.3, group_size=4, renumber=1))
    got = run(_fw_fast.FastFW(X.data, r_idx, ptr, c_data, c_idx, c_ptr, y, 2.0, code,
                              0.05, np.random.default_rng(3).bit_generator, refresh_tol=0.3,
                              group_size=4, from_csr_to_csc=True, column_order=order))
    np.testing.assert_array_equal(got.order, ref.order)
    np.testing.assert_array_equal(got.coef().view(np.uint64), ref.coef().view(np.uint64))
    for key in ("wt", "vt", "q", "alpha"):
        np.testing.assert_array_equal(got.state()[key].view(np.uint64),
                                      ref.state()[key].view(np.uint64))
    assert np.count_nonzero(got.coef()) >= 3
    with pytest.raises(ValueError, match="column_order must have 60 entries"):
        _fw_fast.FastFW(X.data, r_idx, ptr, c_data, c_idx, c_ptr, y, 2.0, code, 0.05,
                        np.random.default_rng(3).bit_generator, column_order=order[:-1])


@pytest.mark.parametrize("binary", [True, False])
def test_sampler_holds_the_log_weights_of_alpha(binary):
    """After every run of private steps the grouped sampler holds log_weight(coef,
    alpha_j) for every coordinate, bit for bit, as a recomputation would give:
    on a sparse problem whose steps change a few coordinates each (the batched
    update, not a full pass): with coef = 2 the batches mix the series (x < 0.01),
    the table and x >= 4, with coef = 0.005 most coordinates take the series (the
    blocks split by formula or computed in order as their mix decides)."""
    rng = np.random.default_rng(6)
    n, d = 2000, 3000
    X = sp.random_array((n, d), density=0.002, format="csr", rng=rng)
    X.data = np.ones(X.nnz) if binary else rng.uniform(-1.0, 1.0, X.nnz)
    y = (rng.random(n) < 0.5).astype(float)
    Xc = sp.csc_array(X)
    Xc.sort_indices()
    code = _fw_fast.SELECTOR_CODES["grouped"]
    for coef, renumber in ((2.0, 0), (2.0, 1), (0.005, 1)):
        k = _fw_fast.FastFW(X.data, X.indices, X.indptr, Xc.data, Xc.indices, Xc.indptr,
                            y, 2.0, code, coef, np.random.default_rng(5).bit_generator,
                            refresh_tol=0.3, group_size=8, renumber=renumber)
        gaps = np.zeros(200)
        x_seen = []
        for n_steps in (1, 9, 40, 150):
            k.run(n_steps, gaps)
            st = k.state()
            x_seen.append(coef * np.abs(st["alpha"]))
            np.testing.assert_array_equal(
                st["sampler_log_weights"].view(np.uint64),
                _fw_fast.log_weight_array(coef, st["alpha"]).view(np.uint64))
        assert k.stats.n_full_steps == 0      # every step a batched update
        x_seen = np.concatenate(x_seen)
        assert np.any((x_seen > 0) & (x_seen < 0.01))
        assert np.any((x_seen >= 0.01) & (x_seen < 4))
        assert np.any(x_seen >= 4) if coef == 2.0 else np.mean(x_seen < 0.01) > 0.9


def test_log_weights_split_by_formula_or_in_order():
    """list_log_weights gives log_weight_scaled's log-weights and scaled weights
    bit for bit, its blocks split by formula or computed in order (the first
    block as asked, the next ones as the previous block's mix decides): lists of
    1 to 5000 coordinates (three blocks of 2048), repeated coordinates, mixes of
    series, table and x >= 4 from all-series to all-table."""
    rng = np.random.default_rng(7)
    n, d = 500, 6000
    X = sp.random_array((n, d), density=0.01, format="csr", rng=rng)
    X.data[:] = 1.0
    Xc = sp.csc_array(X)
    Xc.sort_indices()
    y = (rng.random(n) < 0.5).astype(float)
    code = _fw_fast.SELECTOR_CODES["grouped"]
    for coef in (0.002, 0.05, 0.5, 20.0):
        k = _fw_fast.FastFW(X.data, X.indices, X.indptr, Xc.data, Xc.indices, Xc.indptr,
                            y, 2.0, code, coef, np.random.default_rng(1).bit_generator,
                            renumber=0)
        k.run(5, np.zeros(5))
        alpha = k.state()["alpha"]
        for size in (1, 7, 2048, 5000):
            # the coordinates sorted by |alpha| in the first half (one formula a
            # block) and shuffled in the second (mixed)
            ks = rng.choice(d, size)
            ks[:size // 2] = ks[:size // 2][np.argsort(np.abs(alpha[ks[:size // 2]]))]
            want_lw, want_sc = _fw_fast.log_weight_scaled_array(coef, alpha[ks])
            for split in (True, False):
                lw, sc = k._log_weights_of(ks, split)
                np.testing.assert_array_equal(lw.view(np.uint64), want_lw.view(np.uint64))
                np.testing.assert_array_equal(sc.view(np.uint64), want_sc.view(np.uint64))
    with pytest.raises(ValueError, match="out of range"):
        k._log_weights_of([d], True)


def test_unnumber_scatters():
    """_unnumber (state of a numbered kernel): out[order[i]] = v[i]; an order of
    the wrong length or with an index out of range raises instead of writing
    outside the output; coef's _unnumber_support scatters the support only."""
    rng = np.random.default_rng(2)
    order = rng.permutation(1000)
    v = rng.normal(size=1000)
    want = np.empty(1000)
    want[order] = v
    np.testing.assert_array_equal(_fw_fast._unnumber(v, order).view(np.uint64),
                                  want.view(np.uint64))
    with pytest.raises(ValueError, match="order has 999 entries"):
        _fw_fast._unnumber(v, order[:-1])
    for bad in (1000, -1):
        with pytest.raises(IndexError):
            _fw_fast._unnumber(v, np.where(order == 5, bad, order))
    # the support-only scatter of coef(): zero off the support
    support = np.array([3, 500, 999, 0], dtype=np.int32)
    want = np.zeros(1000)
    want[order[support]] = v[support] * 0.3
    np.testing.assert_array_equal(
        _fw_fast._unnumber_support(v, order, support, 0.3).view(np.uint64),
        want.view(np.uint64))
    with pytest.raises(IndexError):
        _fw_fast._unnumber_support(v, order, np.array([1000], dtype=np.int32), 1.0)


def test_wide_private_fits_build_the_numbered_views(monkeypatch):
    """The estimator's fast private fit on at least RENUMBER_MIN_FEATURES columns
    gets its views from csr_to_numbered_csc (the CSC in the columns' own order is
    not built) and releases the model of the kernel that renumbers them itself."""
    from dptoolkit.linear_model._frank_wolfe import _kernels

    X, y = _renumbering_problem(True)
    monkeypatch.setattr(_fw_fast, "RENUMBER_MIN_FEATURES", 60)
    built = []
    real = {name: getattr(_fw_fast, name) for name in ("csr_to_csc", "csr_to_numbered_csc")}
    for name, fn in real.items():
        monkeypatch.setattr(_fw_fast, name,
                            lambda *a, _n=name, _f=fn, **k: built.append(_n) or _f(*a, **k))
    kw = dict(l1_bound=2.0, epsilon=4.0, delta=1e-4, classes=[0, 1], k=None, max_iter=30,
              random_state=0)
    numbered = FrankWolfeLassoClassifier(**kw).fit(X, y)
    assert built == ["csr_to_numbered_csc"]
    monkeypatch.setattr(_kernels, "fast_selector", lambda *a: None)
    built.clear()
    itself = FrankWolfeLassoClassifier(**kw).fit(X, y)  # FastFW renumbers (renumber=-1)
    assert built == ["csr_to_csc"]
    np.testing.assert_array_equal(numbered.coef_.view(np.uint64), itself.coef_.view(np.uint64))
    assert np.count_nonzero(numbered.coef_) >= 2


def test_renumbering_is_the_default_of_wide_private_fits(monkeypatch):
    """renumber=-1: the grouped sampler's kernel numbers its columns from
    RENUMBER_MIN_FEATURES columns on, the other selectors never."""
    X, y = _renumbering_problem(True)
    Xc = sp.csc_array(X)

    def order(selector, **kw):
        return _fw_fast.FastFW(X.data, X.indices, X.indptr, Xc.data, Xc.indices,
                               Xc.indptr, y, 1.0, _fw_fast.SELECTOR_CODES[selector], 0.1,
                               np.random.default_rng(0).bit_generator, **kw).order

    assert _fw_fast.RENUMBER_MIN_FEATURES == 2 ** 16
    assert order("grouped") is None                 # 60 columns
    monkeypatch.setattr(_fw_fast, "RENUMBER_MIN_FEATURES", 60)
    np.testing.assert_array_equal(order("grouped"),
                                  _fw_fast.column_order(np.diff(Xc.indptr)))
    assert order("argmax") is None and order("grouped", renumber=0) is None
