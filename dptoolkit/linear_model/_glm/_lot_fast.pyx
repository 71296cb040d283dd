# The clipped gradient sum of one block's Poisson lot (DP-SGD over Dask blocks,
# dptoolkit.linear_model._glm._dask_sgd): a thin nogil kernel over the block's raw
# CSR arrays.
#
# For each sampled row i, in the lot's order: the margin a_i = x_i . theta, the loss
# derivative s_i = l'(a_i, y_i) (_glm_kernels._dloss, the in-memory kernels' own),
# clipped so that |s_i| ||x_i|| <= clip (Abadi et al. 2016, Algorithm 1: the
# per-example gradient s_i x_i clipped in L2 norm), and acc[j] += x_ij s_i over the
# row's non-zeros.  The arithmetic and its order are those of the NumPy reference
# (_dask_sgd._lot_gradient_reference: scipy's CSR product for the margins,
# np.bincount for the sums), so both give the same sums bit for bit; the kernel only
# avoids the reference's temporaries of the lot's size and of the number of columns
# (on a Dask worker each costs a fresh allocation).
from libc.stdint cimport int32_t, int64_t, uint8_t

from dptoolkit.linear_model._glm._glm_kernels cimport (
    _dloss, LOSS_SQUARED, LOSS_LOGISTIC, LOSS_HINGE)

ctypedef fused idx_t:
    int32_t
    int64_t

#: Loss names to the kernels' codes (the other GLM kernels' LOSS_CODES).
LOSS_CODES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC, "hinge": LOSS_HINGE}


def lot_sums(const double[::1] data, const idx_t[::1] indices, const idx_t[::1] indptr,
             const int64_t[::1] rows, const double[::1] targets, const double[::1] rownorm,
             const double[::1] theta, int loss, double clip, double[::1] acc,
             uint8_t[::1] seen, int64_t[::1] touched):
    """Add the lot's clipped gradients to ``acc``; return how many columns it touched.

    Parameters
    ----------
    data, indices, indptr : ndarray
        The block's CSR arrays (float64; int32 or int64, the same for both).
    rows : ndarray of shape (lot_size,), int64
        The lot's rows, increasing.
    targets, rownorm : ndarray of shape (n_rows,), float64
        Labels (+1/-1, or the regression target) and row L2 norms.
    theta : ndarray of shape (n_columns,), float64
    loss : int
        0 squared, 1 logistic, 2 hinge (``_glm_kernels``' codes).
    clip : float
        L2 bound on each example's gradient.
    acc : ndarray of shape (n_columns,), float64
        Zero on entry wherever ``seen`` is 0; receives the sums.
    seen : ndarray of shape (n_columns,), uint8
        Zero on entry; set to 1 on every column touched.
    touched : ndarray of shape (n_columns,), int64
        Receives the touched columns in the order first touched.

    Returns
    -------
    int
        The number of touched columns (the valid prefix of ``touched``).
    """
    cdef Py_ssize_t r, i, p, j, n_touched = 0, lot = rows.shape[0]
    cdef double a, s, gn
    with nogil:
        for r in range(lot):
            i = rows[r]
            a = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                a = a + data[p] * theta[indices[p]]
            s = _dloss(loss, a, targets[i])
            gn = (s if s >= 0.0 else -s) * rownorm[i]
            if gn > clip:
                s = s * (clip / gn)
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                acc[j] += data[p] * s
                if not seen[j]:
                    seen[j] = 1
                    touched[n_touched] = j
                    n_touched += 1
    return n_touched
