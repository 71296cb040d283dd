# The set-up of the Frank-Wolfe kernels: CSR arrays of X checked (canonical form,
# index range) and transposed into the CSC arrays the kernels read, in the columns'
# own order (csr_to_csc) or in the fast solver's frequency numbering
# (column_order, csr_to_numbered_csc).  Cache-blocked counting sorts (Knuth, The
# Art of Computer Programming Vol. 3, Section 5.2.5); no data is released here.
cimport cython
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

import numpy as np

from dptoolkit._typedefs cimport float64_t, intp_t, index_t

cdef extern from *:
    """
    #define DPT_CSC_PREFETCH_W(p) __builtin_prefetch((const void*)(p), 1)
    """
    void prefetch_w "DPT_CSC_PREFETCH_W"(const void* p) noexcept nogil
    int __builtin_clzll(uint64_t x) noexcept nogil

# Prefetch distance (entries) of the numbered scatter.
cdef intp_t PF = 16



# the bits of the float64 1.0
cdef uint64_t ONE_BITS = 0x3FF0000000000000

cdef enum:
    # csr_to_csc: elements per early-exit check of the vectorised scans
    SCAN_CHUNK = 4096
    # csr_to_csc's column blocks: at most 2**16 columns (the packed local column
    # index), about 2**19 bytes of output values per block (the block's output and
    # its scratch copy stay in a 2 MiB L2 cache), at most 256 blocks (write
    # streams of the bucketing pass)
    CSC_MAX_BLOCK_BITS = 16
    CSC_BLOCK_BYTES = 524288
    CSC_MAX_BLOCKS = 256


cdef bint _all_ones(const float64_t[::1] a) noexcept nogil:
    # compares the bit patterns (x == 1.0 exactly when its bits are those of 1.0)
    # in chunks without an early exit inside one, so that the compiler vectorises
    # (it does not vectorise floating-point comparisons that may trap)
    cdef intp_t s = 0, e, i, n = a.shape[0]
    cdef const uint64_t* bits
    cdef uint64_t differ
    if n == 0:
        return True
    bits = <const uint64_t*> &a[0]
    while s < n:
        e = s + SCAN_CHUNK if s + SCAN_CHUNK < n else n
        differ = 0
        for i in range(s, e):
            differ |= bits[i] ^ ONE_BITS
        if differ:
            return False
        s = e
    return True


cdef int64_t _first_out_of_range(const int32_t* idx, int64_t n, uint32_t bound) noexcept nogil:
    # first position p with idx[p] outside [0, bound), or -1 (vectorised in chunks)
    cdef int64_t s = 0, e, i
    cdef int bad
    while s < n:
        e = s + SCAN_CHUNK if s + SCAN_CHUNK < n else n
        bad = 0
        for i in range(s, e):
            bad |= <uint32_t> idx[i] >= bound
        if bad:
            for i in range(s, e):
                if <uint32_t> idx[i] >= bound:
                    return i
        s = e
    return -1


cdef void _block_counts(const int32_t* idx, int64_t n, int shift, int64_t* counts,
                        intp_t n_blocks, int n_copies) noexcept nogil:
    # counts[b] = number of idx >> shift == b; n_copies (1 or 4) interleaved
    # histograms in counts[0 : n_copies * n_blocks] (zeroed by the caller), so that
    # runs of one block do not chain store-to-load forwarding
    cdef int64_t i, m = n - n % 4 if n_copies == 4 else 0
    cdef intp_t b
    for i in range(0, m, 4):
        counts[idx[i] >> shift] += 1
        counts[n_blocks + (idx[i + 1] >> shift)] += 1
        counts[2 * n_blocks + (idx[i + 2] >> shift)] += 1
        counts[3 * n_blocks + (idx[i + 3] >> shift)] += 1
    for i in range(m, n):
        counts[idx[i] >> shift] += 1
    if n_copies == 4:
        for b in range(n_blocks):
            counts[b] += counts[n_blocks + b] + counts[2 * n_blocks + b] + counts[3 * n_blocks + b]


cdef void _bucket_by_block(const int64_t* indptr, const int32_t* indices,
                           const float64_t* data, intp_t n_rows, int shift,
                           int64_t* fill, uint32_t* words, float64_t* values) noexcept nogil:
    # first pass: entry (i, k) goes to the next free slot fill[k >> shift] of its
    # column block as the word (i << shift) | (k mod 2**shift), rows in increasing
    # order within each block (stable); its value too unless values is NULL
    cdef intp_t i
    cdef int64_t p, d, end
    cdef uint32_t k, row, mask = (<uint32_t> 1 << shift) - 1
    for i in range(n_rows):
        end = indptr[i + 1]
        row = (<uint32_t> i) << shift
        if values == NULL:
            for p in range(indptr[i], end):
                k = <uint32_t> indices[p]
                d = fill[k >> shift]
                fill[k >> shift] = d + 1
                words[d] = row | (k & mask)
        else:
            for p in range(indptr[i], end):
                k = <uint32_t> indices[p]
                d = fill[k >> shift]
                fill[k >> shift] = d + 1
                words[d] = row | (k & mask)
                values[d] = data[p]


cdef void _sort_block(int64_t start, int64_t end, intp_t width, int shift,
                      uint32_t* words, float64_t* values, uint32_t* w_scratch,
                      float64_t* v_scratch, int64_t* pos, int64_t* c_indptr) noexcept nogil:
    # second pass over one column block (its entries words[start:end] from the
    # first pass): a counting sort by local column within the block's own slice
    # of the output, which stays in cache; the words become row indices.
    # Writes c_indptr[1 .. width] (the block's columns); pos: width + 1 counters.
    cdef intp_t c
    cdef int64_t p, d, acc, n = end - start
    cdef uint32_t v, mask = (<uint32_t> 1 << shift) - 1
    for c in range(width + 1):
        pos[c] = 0
    if n > 0:
        memcpy(w_scratch, &words[start], n * sizeof(uint32_t))
    for p in range(n):
        pos[(w_scratch[p] & mask) + 1] += 1
    acc = start
    for c in range(width):
        acc += pos[c + 1]
        pos[c] = acc - pos[c + 1]
        c_indptr[c + 1] = acc
    if n == 0:
        return
    if values != NULL:
        memcpy(v_scratch, &values[start], n * sizeof(float64_t))
        for p in range(n):
            v = w_scratch[p]
            d = pos[v & mask]
            pos[v & mask] = d + 1
            words[d] = v >> shift
            values[d] = v_scratch[p]
    else:
        for p in range(n):
            v = w_scratch[p]
            d = pos[v & mask]
            pos[v & mask] = d + 1
            words[d] = v >> shift


cdef int _row_bits(intp_t n_rows) noexcept nogil:
    # bits of the largest row index n_rows - 1
    cdef int bits = 0
    while n_rows > 1 and ((<int64_t> 1 << bits) < n_rows):
        bits += 1
    return bits


def _csc_block_bits(intp_t n_rows, intp_t n_cols, int64_t nnz, bint binary):
    """log2 of the columns per block of :func:`csr_to_csc` (automatic choice).

    About ``CSC_BLOCK_BYTES`` of output (4 bytes an entry, 12 with values) per
    block and at most ``CSC_MAX_BLOCKS`` blocks, within the packing limits: at
    most 16 bits, and ``block_bits`` plus the bits of the largest row index at
    most 32.
    """
    cdef int64_t per_block = CSC_BLOCK_BYTES // (4 if binary else 12)
    cdef int64_t n_blocks = max(1, min(<int64_t> CSC_MAX_BLOCKS, nnz // per_block))
    cdef int64_t width = (n_cols + n_blocks - 1) // n_blocks
    cdef int bits = 0
    while (<int64_t> 1 << bits) < width and bits < CSC_MAX_BLOCK_BITS:
        bits += 1
    return min(bits, 32 - _row_bits(n_rows))


def csr_is_canonical(indptr_arr, indices_arr, intp_t n_cols):
    """Whether CSR arrays are canonical and in range: ``indptr`` starts at 0 and
    never decreases, and each row's column indices increase strictly (sorted, no
    duplicates) within ``[0, n_cols)``.

    SciPy's ``has_canonical_format`` and the builders' range check in one pass:
    with increasing indices a row is in range when its first and last entries
    are, and the comparisons of neighbours vectorise within a row.

    Parameters
    ----------
    indptr : ndarray of int64 of shape (n_rows + 1,)
    indices : ndarray of int32 of shape (indptr[-1],)
    n_cols : int

    Returns
    -------
    bool
        False also when the array lengths disagree (nothing is raised: the
        caller's fallback, SciPy's conversion, reports such arrays).
    """
    cdef const int64_t[::1] indptr = indptr_arr
    cdef const int32_t[::1] idx = indices_arr
    cdef intp_t i, n_rows = indptr.shape[0] - 1
    cdef int64_t p, lo, hi, prev = 0
    cdef int bad = 0
    if n_rows < 0 or indptr[0] != 0 or indptr[n_rows] != idx.shape[0]:
        return False
    with nogil:
        for i in range(n_rows):
            lo = indptr[i]
            hi = indptr[i + 1]
            if hi < lo:
                bad = 1
                break
            if hi == lo:
                continue
            bad |= (idx[lo] < 0) | (idx[hi - 1] >= n_cols)
            for p in range(lo, hi - 1):
                bad |= idx[p + 1] <= idx[p]
            if bad:
                break
    return not bad


def _check_csr_arrays(name, indptr_arr, indices_arr, data_arr, intp_t n_cols,
                      int block_bits, binary, bint check_indices=True):
    # the checks of csr_to_csc and csr_to_numbered_csc (their Raises); returns
    # whether every value is 1.0 (binary when given, else scanned).  Without
    # check_indices the column indices are not scanned (the caller has checked
    # them, e.g. by csr_is_canonical)
    cdef const int64_t[::1] indptr = indptr_arr
    cdef const int32_t[::1] indices = indices_arr
    cdef const float64_t[::1] data = data_arr
    cdef intp_t i, n_rows = indptr.shape[0] - 1
    cdef int64_t nnz, bad = -1
    cdef bint ones, decreasing = False
    if n_rows < 0 or n_rows >= 2 ** 31 - 1 or n_cols < 0 or n_cols >= 2 ** 31 - 1:
        raise ValueError(f"{name} needs n_rows and n_cols in [0, 2**31 - 1), got "
                         f"{n_rows} and {n_cols}")
    nnz = indptr[n_rows]
    if indptr[0] != 0 or nnz != indices.shape[0] or nnz != data.shape[0]:
        raise ValueError(f"indptr must start at 0 and end at len(indices) == len(data), "
                         f"got {indptr[0]}..{nnz} for {indices.shape[0]} indices and "
                         f"{data.shape[0]} values")
    if block_bits != -1 and not (0 <= block_bits <= CSC_MAX_BLOCK_BITS
                                 and block_bits + _row_bits(n_rows) <= 32):
        raise ValueError(f"block_bits must be -1 or in [0, {CSC_MAX_BLOCK_BITS}] with "
                         f"block_bits + {_row_bits(n_rows)} (bits of the row index) "
                         f"<= 32, got {block_bits}")
    cdef bint scan = binary is None
    if not scan:
        ones = bool(binary)
    with nogil:
        if scan:
            ones = _all_ones(data)
        for i in range(n_rows):
            if indptr[i + 1] < indptr[i]:
                decreasing = True
                break
        if not decreasing and nnz > 0 and check_indices:
            bad = _first_out_of_range(&indices[0], nnz, <uint32_t> n_cols)
    if decreasing:
        raise ValueError("indptr must be non-decreasing")
    if bad >= 0:
        raise ValueError(f"column indices must be in [0, {n_cols}), got "
                         f"{indices[bad]}")
    return ones


def csr_to_csc(indptr_arr, indices_arr, data_arr, intp_t n_cols, *, int block_bits=-1,
               binary=None, bint check_indices=True):
    """Transpose CSR arrays into canonical CSC arrays for the kernels (one set-up pass).

    A counting sort by column, rows in increasing order within each column: the
    arrays of ``scipy.sparse.csr_array(...).tocsc()`` (sorted indices), built
    directly with int32 row indices and int64 column pointers (the dtypes the
    fast solver reads, so nothing is converted afterwards).  When every stored
    value is 1.0 (binary data) the values need no permutation: ``data`` itself
    is returned as the CSC values and only the indices are scattered.

    The sort is cache-blocked in two passes (the two-pass radix sort with a
    most-significant-digit first pass, Knuth, *The Art of Computer Programming*
    Vol. 3, Section 5.2.5): the first pass buckets the entries by block of
    ``2**block_bits`` consecutive columns, in row order, into the block's slice of
    the output, each entry packed into one 32-bit word (row index and column
    within the block); the second sorts each block's slice by column within it.
    Every write of the second pass then falls inside one block's slice (a few
    hundred KiB, in cache) instead of anywhere in the ``nnz``-entry output, which
    a one-pass scatter pays a cache miss for at almost every entry.

    Parameters
    ----------
    indptr : ndarray of int64 of shape (n_rows + 1,)
    indices : ndarray of int32 of shape (nnz,)
        Column indices, each in ``[0, n_cols)``.
    data : ndarray of float64 of shape (nnz,)
    n_cols : int
        Number of columns, in ``[0, 2**31 - 1)``.
    block_bits : int, default=-1
        log2 of the number of columns per block, in ``[0, 16]`` with
        ``block_bits`` plus the bits of ``n_rows - 1`` at most 32; ``-1`` chooses
        it from the shape (about 512 KiB of output per block).  The result does
        not depend on it (exposed for tests).
    binary : bool or None, default=None
        Whether every stored value is 1.0, when the caller knows it (e.g. from
        the smallest and largest value); None scans ``data`` for it.  A wrong
        True returns ``data`` as the CSC values unpermuted.
    check_indices : bool, default=True
        Whether to scan the column indices for the range ``[0, n_cols)``; False
        when the caller has checked them (:func:`csr_is_canonical` on these
        arrays): an index out of range then writes out of bounds.

    Returns
    -------
    c_data : ndarray of float64 of shape (nnz,)
        ``data`` itself when every value is 1.0, else a new array.
    c_indices : ndarray of int32 of shape (nnz,)
        Row indices, increasing within each column.
    c_indptr : ndarray of int64 of shape (n_cols + 1,)

    Raises
    ------
    ValueError
        If ``n_cols`` or ``n_rows`` is outside ``[0, 2**31 - 1)``, the array
        lengths disagree with ``indptr``, ``indptr`` decreases, a column
        index is outside ``[0, n_cols)``, or ``block_bits`` is outside its range.
    """
    cdef const int64_t[::1] indptr = indptr_arr
    cdef const int32_t[::1] indices = indices_arr
    cdef const float64_t[::1] data = data_arr
    cdef intp_t n_rows = indptr.shape[0] - 1
    cdef intp_t b, n_blocks, width
    cdef int64_t nnz = indptr[n_rows] if n_rows >= 0 else 0, acc = 0, largest = 0
    cdef int shift, n_copies
    cdef bint ones = _check_csr_arrays("csr_to_csc", indptr_arr, indices_arr, data_arr,
                                       n_cols, block_bits, binary, check_indices)
    shift = block_bits if block_bits >= 0 else _csc_block_bits(n_rows, n_cols, nnz, ones)
    n_blocks = ((n_cols - 1) >> shift) + 1 if n_cols > 0 else 0
    n_copies = 4 if n_blocks <= 65536 else 1
    c_indptr = np.empty(n_cols + 1, dtype=np.int64)
    c_indices = np.empty(nnz, dtype=np.int32)
    counts_arr = np.zeros(n_copies * n_blocks + 1, dtype=np.int64)
    fill_arr = np.empty(n_blocks + 1, dtype=np.int64)
    cdef int64_t[::1] cp = c_indptr, counts = counts_arr, fill = fill_arr
    cdef int32_t[::1] ci = c_indices
    cdef float64_t[::1] cd
    if nnz > 0:
        with nogil:
            _block_counts(&indices[0], nnz, shift, &counts[0], n_blocks, n_copies)
    for b in range(n_blocks):  # block b's slice of the output: fill[b] .. fill[b + 1]
        largest = max(largest, counts[b])
        fill[b] = acc
        acc += counts[b]
    fill[n_blocks] = acc
    cp[0] = 0
    if nnz == 0:
        cp[:] = 0
        return data_arr, c_indices, c_indptr
    if ones:
        c_data = data_arr
    else:
        c_data = np.empty(nnz)
        cd = c_data
    w_scratch_arr = np.empty(largest, dtype=np.uint32)
    v_scratch_arr = np.empty(0 if ones else largest)
    pos_arr = np.empty(min(<intp_t> 1 << shift, n_cols) + 1, dtype=np.int64)
    cdef uint32_t[::1] w_scratch = w_scratch_arr
    cdef float64_t[::1] vs = v_scratch_arr
    cdef float64_t* values = NULL
    cdef float64_t* v_scratch = NULL
    cdef int64_t[::1] pos = pos_arr
    cdef uint32_t* words = <uint32_t*> &ci[0]
    if not ones:
        values = &cd[0]
        v_scratch = &vs[0]
    with nogil:
        _bucket_by_block(&indptr[0], &indices[0], &data[0], n_rows, shift, &fill[0],
                         words, values)
        # fill[b] is now the start of block b + 1, counts[b] the size of block b
        for b in range(n_blocks):
            width = min((b + 1) << shift, n_cols) - (b << shift)
            _sort_block(fill[b] - counts[b], fill[b], width, shift, words, values,
                        &w_scratch[0], v_scratch, &pos[0], &cp[b << shift])
    return c_data, c_indices, c_indptr


def column_order(counts):
    """The fast solver's numbering of the columns for the grouped sampler: ``order[i]``
    is the column numbered ``i``, the columns taken by decreasing bit length of
    their count of stored entries (``counts``, shape (D,), non-negative integers),
    in increasing index within each length (a stable bucket sort, O(D)).

    A step touches the coordinates of the rows containing its chosen feature, so
    frequent features are touched often: numbered first, their entries of alpha,
    of the marks and of the sampler's records share a few hundred KiB that stay
    in cache, where in the columns' own order (hashed features: random) every
    touch of one is a cache miss.  The numbering is a function of the data but
    not a release: the exponential mechanism's law over the 2D vertices does not
    depend on the order in which its items are stored.
    """
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    if counts.ndim != 1 or (counts.size and counts.min() < 0):
        raise ValueError("counts must be a 1-d array of non-negative integers")
    order = np.empty(counts.shape[0], dtype=np.intp)
    cdef const int64_t[::1] c = counts
    cdef intp_t[::1] o = order
    cdef intp_t[65] start
    cdef intp_t j, n = c.shape[0]
    cdef int b
    with nogil:
        # a counting sort by bit length (64 - length: the longest first)
        for b in range(65):
            start[b] = 0
        for j in range(n):
            start[64 - _bit_length(c[j])] += 1
        _exclusive_prefix_sums(start, 65)
        for j in range(n):
            b = 64 - _bit_length(c[j])
            o[start[b]] = j
            start[b] += 1
    return order


cdef inline int _bit_length(int64_t v) noexcept nogil:
    # 0 for 0, else 1 + floor(log2 v)
    return 0 if v <= 0 else 64 - __builtin_clzll(<uint64_t> v)


cdef inline void _exclusive_prefix_sums(intp_t* a, intp_t n) noexcept nogil:
    cdef intp_t i, acc = 0, v
    for i in range(n):
        v = a[i]
        a[i] = acc
        acc += v



def _map_indices(const int32_t[::1] idx, const int32_t[::1] new_index):
    """new_index[idx] as a new int32 array (the CSR indices in a new numbering)."""
    out = np.empty(idx.shape[0], dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef intp_t p, n = idx.shape[0]
    with nogil:
        for p in range(n):
            o[p] = new_index[idx[p]]
    return out


cdef inline void _copy_ints(int32_t* dst, const int32_t* src, index_t n) noexcept nogil:
    # most columns of a wide sparse matrix hold a few entries: a loop beats a
    # call to memcpy there
    cdef index_t k
    if n >= 32:
        memcpy(dst, src, n * sizeof(int32_t))
    else:
        for k in range(n):
            dst[k] = src[k]


cdef void _number_by_length(intp_t d, int64_t* counts, intp_t* order, int32_t* new_index,
                            int64_t* new_indptr) noexcept nogil:
    # column_order's numbering from the columns' counts (counts[j] of column j),
    # its inverse new_index and the CSC pointers in it; counts[j] is overwritten
    # with column j's first position in the numbered arrays.  A stable counting
    # sort by bit length: within one length the columns keep their order, so
    # the columns of a range of j are written at a few sequential cursors (one
    # per length) when taken in increasing j.
    cdef intp_t[65] item_at
    cdef intp_t[65] nnz_at                 # (intp_t: an array size)
    cdef intp_t j, pos
    cdef int64_t n, at
    cdef int b
    for b in range(65):
        item_at[b] = 0
        nnz_at[b] = 0
    for j in range(d):
        b = 64 - _bit_length(counts[j])
        item_at[b] += 1
        nnz_at[b] += counts[j]
    _exclusive_prefix_sums(item_at, 65)
    _exclusive_prefix_sums(nnz_at, 65)
    new_indptr[0] = 0
    for j in range(d):
        n = counts[j]
        b = 64 - _bit_length(n)
        pos = item_at[b]
        item_at[b] = pos + 1
        at = nnz_at[b]
        nnz_at[b] = at + n
        order[pos] = j
        new_index[j] = <int32_t> pos
        new_indptr[pos + 1] = at + n
        counts[j] = at


def _number_columns(c_indptr_arr, c_idx_arr, c_data_arr=None):
    """The columns of CSC arrays in :func:`column_order`'s numbering, in one pass.

    Returns ``(order, new_index, indptr, indices, data)``: ``order`` as
    ``column_order(np.diff(c_indptr))`` gives it, ``new_index[j]`` the number of
    column j (int32), and the CSC arrays with column ``order[i]`` at position i
    (its rows in their order; ``data`` None when ``c_data`` is None).

    The columns are read in storage order and each is written at the cursor of
    its bit length (a few dozen sequential streams) instead of being read in
    the new order (a jump per column).  :func:`csr_to_numbered_csc` builds the
    same arrays from CSR ones without the CSC in the columns' own order.
    """
    cdef const index_t[::1] indptr = c_indptr_arr
    cdef const int32_t[::1] idx = c_idx_arr
    cdef const float64_t[::1] data
    cdef intp_t d = indptr.shape[0] - 1
    cdef index_t nnz = indptr[d]
    order_arr = np.empty(d, dtype=np.intp)
    new_index_arr = np.empty(d, dtype=np.int32)
    new_indptr_arr = np.empty(d + 1, dtype=np.int64)
    first_arr = np.diff(np.asarray(c_indptr_arr, dtype=np.int64))
    new_idx_arr = np.empty(nnz, dtype=np.int32)
    new_data_arr = None if c_data_arr is None else np.empty(nnz)
    cdef intp_t[::1] order = order_arr
    cdef int32_t[::1] new_index = new_index_arr
    cdef index_t[::1] new_indptr = new_indptr_arr
    cdef int64_t[::1] first = first_arr
    cdef int32_t[::1] new_idx = new_idx_arr
    cdef float64_t[::1] new_data
    cdef const float64_t* dp = NULL
    cdef float64_t* ndp = NULL
    cdef intp_t j
    cdef index_t lo, n, at
    if new_data_arr is not None and nnz > 0:
        data = c_data_arr
        new_data = new_data_arr
        dp = &data[0]
        ndp = &new_data[0]
    with nogil:
        if d > 0:
            _number_by_length(d, &first[0], &order[0], &new_index[0], &new_indptr[0])
        else:
            new_indptr[0] = 0
        for j in range(d):
            lo = indptr[j]
            n = indptr[j + 1] - lo
            at = first[j]
            if n > 0:
                _copy_ints(&new_idx[at], &idx[lo], n)
                if ndp != NULL:
                    memcpy(&ndp[at], &dp[lo], n * sizeof(float64_t))
    return order_arr, new_index_arr, new_indptr_arr, new_idx_arr, new_data_arr


cdef void _count_columns(const uint32_t* words, const int64_t* block_start,
                         intp_t n_blocks, int shift, int64_t* counts) noexcept nogil:
    # counts[j] (zeroed by the caller) = entries of column j, from the words of
    # csr_to_csc's first pass (each block's counts stay in cache)
    cdef intp_t b, c0
    cdef int64_t p
    cdef uint32_t mask = (<uint32_t> 1 << shift) - 1
    for b in range(n_blocks):
        c0 = b << shift
        for p in range(block_start[b], block_start[b + 1]):
            counts[c0 + (words[p] & mask)] += 1


cdef void _scatter_numbered(const uint32_t* words, const float64_t* values,
                            const int64_t* block_start, intp_t n_blocks, int shift,
                            int64_t* cursor, int32_t* c_idx, float64_t* c_values) noexcept nogil:
    # second pass: each block's entries, in row order, to the next slot of their
    # column in the numbered CSC (cursor[j]: column j's next position).  The
    # block's columns are numbered in a few ranges (one per bit length), so
    # its writes stay within a few regions; each target is fetched PF entries
    # ahead (its cursor's line is in cache, the target line usually not).
    cdef intp_t b, c0, j
    cdef int64_t p, e, d
    cdef uint32_t v, mask = (<uint32_t> 1 << shift) - 1
    for b in range(n_blocks):
        c0 = b << shift
        e = block_start[b + 1]
        for p in range(block_start[b], e):
            if p + PF < e:
                prefetch_w(&c_idx[cursor[c0 + (words[p + PF] & mask)]])
            v = words[p]
            j = c0 + (v & mask)
            d = cursor[j]
            cursor[j] = d + 1
            c_idx[d] = <int32_t> (v >> shift)
            if values != NULL:
                c_values[d] = values[p]


def csr_to_numbered_csc(indptr_arr, indices_arr, data_arr, intp_t n_cols, *,
                        int block_bits=-1, binary=None, bint check_indices=True):
    """CSR arrays in :func:`column_order`'s numbering, with their CSC arrays (one set-up).

    The arrays of ``_number_columns(*csr_to_csc(...))`` and of the CSR column
    indices mapped to the new numbering, built without the CSC in the columns'
    own order: csr_to_csc's first pass (entries bucketed by block of
    ``2**block_bits`` columns, in row order) into a scratch array, the column
    counts from it block by block, the numbering from the counts, then each
    block's entries in row order to their column's slot in the numbered CSC.
    The scratch array then receives the mapped CSR indices.  Rows increase
    within every column; the numbering is a function of the data but not a
    release (see :func:`column_order`).

    Parameters
    ----------
    indptr, indices, data, n_cols, block_bits, binary, check_indices
        As for :func:`csr_to_csc` (``block_bits`` does not change the result).

    Returns
    -------
    order : ndarray of intp of shape (n_cols,)
        ``column_order`` of the column counts: column ``order[i]`` is numbered i.
    new_index : ndarray of int32 of shape (n_cols,)
        The number of column j (the inverse of ``order``).
    r_indices : ndarray of int32 of shape (nnz,)
        ``new_index[indices]``: the CSR column indices in the numbering (each row's
        entries at their positions, so no longer sorted within a row).
    c_data : ndarray of float64 of shape (nnz,)
        ``data`` itself when every value is 1.0, else a new array.
    c_indices : ndarray of int32 of shape (nnz,)
    c_indptr : ndarray of int64 of shape (n_cols + 1,)
        The CSC arrays with column ``order[i]`` at position i.

    Raises
    ------
    ValueError
        As :func:`csr_to_csc`.
    """
    cdef bint ones = _check_csr_arrays("csr_to_numbered_csc", indptr_arr, indices_arr,
                                       data_arr, n_cols, block_bits, binary, check_indices)
    cdef const int64_t[::1] indptr = indptr_arr
    cdef const int32_t[::1] indices = indices_arr
    cdef const float64_t[::1] data = data_arr
    cdef intp_t n_rows = indptr.shape[0] - 1, b, n_blocks
    cdef int64_t p, nnz = indptr[n_rows], acc = 0
    cdef int shift = block_bits if block_bits >= 0 else _csc_block_bits(n_rows, n_cols, nnz,
                                                                        ones)
    n_blocks = ((n_cols - 1) >> shift) + 1 if n_cols > 0 else 0
    cdef int n_copies = 4 if n_blocks <= 65536 else 1
    order_arr = np.empty(n_cols, dtype=np.intp)
    new_index_arr = np.empty(n_cols, dtype=np.int32)
    c_indptr = np.zeros(n_cols + 1, dtype=np.int64)
    counts_arr = np.zeros(max(n_copies * n_blocks, n_cols) + 1, dtype=np.int64)
    block_start_arr = np.empty(n_blocks + 1, dtype=np.int64)
    fill_arr = np.empty(n_blocks + 1, dtype=np.int64)
    words_arr = np.empty(nnz, dtype=np.uint32)
    c_indices = np.empty(nnz, dtype=np.int32)
    c_data = data_arr if ones else np.empty(nnz)
    v_scratch_arr = np.empty(0 if ones else nnz)
    cdef intp_t[::1] order = order_arr
    cdef int32_t[::1] new_index = new_index_arr
    cdef int64_t[::1] cp = c_indptr, counts = counts_arr
    cdef int64_t[::1] block_start = block_start_arr, fill = fill_arr
    cdef uint32_t[::1] words = words_arr
    cdef int32_t[::1] ci = c_indices
    cdef float64_t[::1] cd, vs
    cdef float64_t* values = NULL
    cdef float64_t* c_values = NULL
    cdef int32_t* mapped
    if nnz == 0:
        order_arr[:] = np.arange(n_cols)
        new_index_arr[:] = np.arange(n_cols, dtype=np.int32)
        return order_arr, new_index_arr, words_arr.view(np.int32), c_data, c_indices, c_indptr
    if not ones:
        cd = c_data
        vs = v_scratch_arr
        values = &vs[0]
        c_values = &cd[0]
    with nogil:
        _block_counts(&indices[0], nnz, shift, &counts[0], n_blocks, n_copies)
        for b in range(n_blocks):
            block_start[b] = acc
            fill[b] = acc
            acc += counts[b]
        block_start[n_blocks] = acc
        fill[n_blocks] = acc
        memset(&counts[0], 0, counts.shape[0] * sizeof(int64_t))
        _bucket_by_block(&indptr[0], &indices[0], &data[0], n_rows, shift, &fill[0],
                         &words[0], values)
        _count_columns(&words[0], &block_start[0], n_blocks, shift, &counts[0])
        _number_by_length(n_cols, &counts[0], &order[0], &new_index[0], &cp[0])
        _scatter_numbered(&words[0], values, &block_start[0], n_blocks, shift,
                          &counts[0], &ci[0], c_values)
        # the scratch words are read: they become the mapped CSR indices
        mapped = <int32_t*> &words[0]
        for p in range(nnz):
            mapped[p] = new_index[indices[p]]
    return order_arr, new_index_arr, words_arr.view(np.int32), c_data, c_indices, c_indptr
