# A Frank-Wolfe round on one row block (_dask_binary._block_round, a Dask fit):
# thin nogil kernels over the block's CSC and CSR arrays and its state (scaled
# margins vt, row gradients q), writing into scratch the caller keeps.
#
# The per-row arithmetic is the in-memory fast kernel's (_fw_fast._row_step:
# vt_i + delta x_ij, sigmoid(w_m vt_i) - y_i with _math.sigmoid), and a change of
# alpha is summed column by column in increasing row order from 0, the order of
# the NumPy reference (scipy's products X_rows^T gamma and X^T q), so both give
# the same values bit for bit (no fused multiply-add: the extensions are built
# for the baseline instruction set).  The kernels only avoid the reference's
# temporaries of the rows' size: on a Dask worker each costs a fresh allocation
# (its nanny sets MALLOC_TRIM_THRESHOLD_, and glibc returns freed memory at once).
from libc.stdint cimport int32_t, int64_t, uint8_t

from dptoolkit._math cimport sigmoid

ctypedef fused idx_t:
    int32_t
    int64_t


def step_rows(const double[::1] c_data, const idx_t[::1] c_indices,
              const idx_t[::1] c_indptr, const double[::1] r_data,
              const idx_t[::1] r_indices, const idx_t[::1] r_indptr,
              const double[::1] y, double[::1] vt, double[::1] q, Py_ssize_t j,
              double delta, double w_m, double[::1] acc, uint8_t[::1] seen,
              int64_t[::1] touched):
    """The step ``(j, delta, w_m)`` on the rows holding column ``j``: their margins
    and gradients updated in place, the change of ``X_b^T q`` summed into
    ``acc`` (kept zero between calls by the caller) over the rows whose gradient
    changed, in increasing row order.  Returns ``(n_touched, dh)``: the columns
    of ``acc`` written are ``touched[:n_touched]`` (first-touch order; ``seen``
    flags them, to be cleared by the caller) and ``dh`` the change of the gap
    term, the sum of ``gamma_i vt_i`` over those rows in row order."""
    cdef Py_ssize_t p, r, n_touched = 0
    cdef idx_t i, c
    cdef double vti, qn, g, dh = 0.0
    with nogil:
        for p in range(c_indptr[j], c_indptr[j + 1]):
            i = c_indices[p]
            vti = vt[i] + delta * c_data[p]
            qn = sigmoid(w_m * vti) - y[i]
            g = qn - q[i]
            vt[i] = vti
            q[i] = qn
            if g == 0.0:
                continue
            dh += g * vti
            for r in range(r_indptr[i], r_indptr[i + 1]):
                c = r_indices[r]
                if not seen[c]:
                    seen[c] = 1
                    touched[n_touched] = c
                    n_touched += 1
                acc[c] += r_data[r] * g
    return n_touched, dh


def refresh_rows(const double[::1] c_data, const idx_t[::1] c_indices,
                 const idx_t[::1] c_indptr, const double[::1] y, double[::1] vt,
                 double[::1] q, double fold, double[::1] out):
    """The exact refresh: ``vt *= fold`` (unless ``fold == 1``), ``q = sigmoid(vt)
    - y`` for every row, and ``out = X_b^T q`` column by column in row order."""
    cdef Py_ssize_t i, n = vt.shape[0], col, p, k = out.shape[0]
    cdef double s
    with nogil:
        for i in range(n):
            if fold != 1.0:
                vt[i] = vt[i] * fold
            q[i] = sigmoid(vt[i]) - y[i]
        for col in range(k):
            s = 0.0
            for p in range(c_indptr[col], c_indptr[col + 1]):
                s = s + c_data[p] * q[c_indices[p]]
            out[col] = s
