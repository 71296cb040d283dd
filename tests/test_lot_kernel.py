"""The compiled lot sums of DP-SGD over blocks against their NumPy reference.

``dptoolkit.linear_model._glm._lot_fast.lot_sums`` computes a block's Poisson lot's sum
of clipped per-example gradients with the reference's arithmetic in the
reference's order, so the two must agree bit for bit (columns, sums, lot size, and
the dense-or-sparse form of the reply).
"""
import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit.linear_model._glm import _dask_sgd as _sgd


def _block(n_rows, n_columns, density, index_dtype, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_columns, density=density, format="csr", random_state=seed)
    X = sp.csr_array(X)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    rownorm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    y = np.where(rng.random(n_rows) < 0.5, -1.0, 1.0)
    theta = rng.normal(size=n_columns)
    return (X, rownorm, y, ()), theta


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("loss", ["logistic", "squared", "hinge"])
@pytest.mark.parametrize("density, sampling_rate", [(0.01, 0.05), (0.05, 0.5), (0.001, 0.01)])
def test_kernel_lot_sums_equal_the_reference_bit_for_bit(index_dtype, loss, density,
                                                         sampling_rate):
    prep, theta = _block(400, 700, density, index_dtype, seed=3)
    words = np.arange(8, dtype=np.uint32)
    forms = set()
    for step in range(6):
        cols, sums, size = _sgd._lot_gradient(prep, words, step, sampling_rate, theta,
                                              loss, 0.7)
        rcols, rsums, rsize = _sgd._lot_gradient_reference(prep, words, step,
                                                           sampling_rate, theta, loss, 0.7)
        assert size == rsize
        assert type(cols) is type(rcols)
        forms.add(type(cols))
        np.testing.assert_array_equal(np.arange(700)[cols], np.arange(700)[rcols])
        np.testing.assert_array_equal(sums, rsums)
    if sampling_rate == 0.5:
        assert slice in forms          # the dense reply is exercised


def test_scratch_is_clean_between_calls():
    """A call leaves the per-thread scratch zero: the next lot (another block, of
    fewer columns) sums from zero."""
    big, theta_big = _block(300, 900, 0.05, np.int32, seed=1)
    small, theta_small = _block(200, 500, 0.02, np.int32, seed=2)
    words = np.arange(8, dtype=np.uint32)
    _sgd._lot_gradient(big, words, 0, 0.5, theta_big, "logistic", 1.0)
    acc, seen, _ = _sgd._scratch_for(900)
    assert not acc.any() and not seen.any()
    got = _sgd._lot_gradient(small, words, 1, 0.1, theta_small, "logistic", 1.0)
    want = _sgd._lot_gradient_reference(small, words, 1, 0.1, theta_small, "logistic", 1.0)
    np.testing.assert_array_equal(got[1], want[1])
