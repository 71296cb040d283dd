"""Multiclass (softmax) DP-SGD and multiclass private naive-Bayes logistic regression.

The softmax kernel ``_sgd_fast.dpsgd_softmax`` is compared with the pure-Python
reference below, which consumes the same uniforms (the samplers of
tests/test_scd.py); the per-example gradient bound of the softmax cross-entropy
(Frobenius norm <= sqrt(2) ||x||) and the clipping are checked directly; the
estimators' shapes, labels, privacy events and parameter checks are tested.
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit.linear_model._glm import _sgd_fast

from test_scd import RefChunks, RefRNG


def _softmax_residual(a, label):
    """p - e_y for margins ``a`` (one row)."""
    z = np.exp(a - a.max())
    p = z / z.sum()
    p[label] -= 1.0
    return p


def ref_softmax_gradient(X, y, theta, batch, clip, norms):
    """Summed clipped per-example gradients x_i (p_i - e_{y_i})^T, shape (M, K)."""
    margins = [X.data[X.indptr[i]:X.indptr[i + 1]] @ theta[X.indices[X.indptr[i]:
                                                                   X.indptr[i + 1]]]
               for i in batch]
    grad = np.zeros_like(theta)
    for i, a in zip(batch, margins):
        r = _softmax_residual(np.asarray(a, dtype=float), y[i])
        gn = float(np.sqrt(r @ r)) * norms[i]
        if gn > clip:
            r = r * (clip / gn)
        lo, hi = X.indptr[i], X.indptr[i + 1]
        for j, v in zip(X.indices[lo:hi], X.data[lo:hi]):
            grad[j] += v * r
    return grad


def ref_dpsgd_softmax(X, y, theta, *, lam, learning_rate, clip, sampling_rate, batch_size,
                      denominator, n_steps, noise_std, seed, record_steps=()):
    """Mirror of _sgd_fast.dpsgd_softmax: Abadi et al.'s Algorithm 1 on the softmax
    cross-entropy with lazy noise (a coordinate's K pending normals, in class order,
    are drawn when a lot first reads it in a step, at each recorded step and at the
    end, all coordinates in index order)."""
    X = sp.csr_array(X)
    N, M = X.shape
    K = theta.shape[1]
    rng = RefRNG(seed)
    chunks = RefChunks(N)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    decay = 1.0 - learning_rate * lam
    c = learning_rate * noise_std / denominator if noise_std > 0 else 0.0
    start, pending = [0] * M, [0] * M
    trace = []

    def catch_up(m, t):
        if start[m] != t:
            theta[m] *= decay ** (t - start[m])
            start[m] = t
        if pending[m] != t:
            if c > 0:
                k = t - pending[m]
                sd = math.sqrt(sum(decay ** (2 * j) for j in range(k)))
                for cl in range(K):
                    theta[m, cl] += c * sd * rng.normal()
            pending[m] = t

    for t in range(n_steps):
        batch = (rng.poisson_batch(N, sampling_rate) if sampling_rate > 0
                 else chunks.next(rng, batch_size))
        touched = []
        for i in batch:
            for j in X.indices[X.indptr[i]:X.indptr[i + 1]]:
                if j not in touched:
                    touched.append(j)
                    catch_up(j, t)
        grad = ref_softmax_gradient(X, y, theta, batch, clip, norms)
        den = denominator if denominator > 0 else (len(batch) if batch else 1.0)
        for j in touched:
            theta[j] = decay * theta[j] - learning_rate * grad[j] / den
            start[j] = t + 1
        if t in record_steps:
            for m in range(M):
                catch_up(m, t + 1)
            trace.append(theta.copy())
    for m in range(M):
        catch_up(m, n_steps)
    return theta, trace


def _problem(n=60, m=12, k=4, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, m, density=density, random_state=rng, format="csr")
    X.data = rng.normal(size=X.data.size)
    y = rng.integers(0, k, size=n)
    X = sp.csr_array(X)
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    return X, y


def _kernel(X, y, theta, *, record_steps=(), **kw):
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    rec = np.asarray(record_steps, dtype=np.int64)
    trace = np.zeros((rec.size, theta.size))
    seed = kw.pop("seed")
    gen = np.random.Generator(np.random.PCG64(seed))
    status, done = _sgd_fast.dpsgd_softmax(
        X.data, X.indices, X.indptr, np.asarray(y, dtype=np.int64), norms, theta,
        bit_generator=gen.bit_generator, record_steps=rec, trace=trace, **kw)
    return status, done, trace.reshape(rec.size, *theta.shape)


@pytest.mark.parametrize("private, poisson", [(True, True), (False, True), (False, False)])
def test_softmax_kernel_matches_reference(private, poisson):
    X, y = _problem()
    K = 4
    kw = dict(lam=0.01, learning_rate=0.7, clip=0.8,
              sampling_rate=0.2 if poisson else 0.0, batch_size=12,
              denominator=12.0 if (private or poisson) else 0.0, n_steps=15,
              noise_std=0.9 if private else 0.0, seed=3)
    ref, ref_trace = ref_dpsgd_softmax(X, y, np.zeros((X.shape[1], K)),
                                       record_steps=(4, 9), **kw)
    theta = np.zeros((X.shape[1], K))
    status, done, trace = _kernel(X, y, theta, record_steps=(4, 9), **kw)
    assert status == _sgd_fast.STATUS_OK and done == 15
    np.testing.assert_allclose(theta, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(trace, np.array(ref_trace), rtol=1e-12, atol=1e-12)


def test_softmax_gradient_bound_sqrt2_norm_x():
    """||x (p - e_y)^T||_F = ||x|| ||p - e_y|| <= sqrt(2) ||x||: the bound is approached
    by confident wrong predictions and never exceeded (random margins, 2..30 classes)."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        K = int(rng.integers(2, 31))
        a = rng.normal(scale=rng.choice([0.1, 1.0, 10.0, 100.0]), size=K)
        x = rng.normal(size=7)
        r = _softmax_residual(a, int(rng.integers(K)))
        G = np.outer(x, r)
        ratio = np.linalg.norm(G) / np.linalg.norm(x)
        assert ratio <= math.sqrt(2) * (1 + 1e-12)
        worst = max(worst, ratio)
    assert worst > 1.4  # the bound is tight (confident wrong predictions)


@pytest.mark.parametrize("clip", [0.3, 1.0, 5.0])
def test_softmax_step_sensitivity_is_clip(clip):
    """One step from the same theta on neighbouring datasets (one row removed, the
    same lot otherwise, no noise): the parameters differ by at most
    learning_rate * clip / denominator in Frobenius norm, and by exactly that
    much (up to the other rows) when the row's gradient is clipped."""
    X, y = _problem(n=40, m=10, k=5, density=0.5, seed=1)
    X = sp.csr_array(X * 3.0)
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    rng = np.random.default_rng(2)
    theta0 = rng.normal(size=(10, 5))
    kw = dict(lam=0.0, learning_rate=1.0, clip=clip, sampling_rate=1.0, batch_size=40,
              denominator=10.0, n_steps=1, noise_std=0.0, seed=0)
    full = theta0.copy()
    _kernel(X, y, full, **kw)
    for i in range(X.shape[0]):
        keep = np.setdiff1d(np.arange(X.shape[0]), [i])
        Xn = sp.csr_array(X[keep])
        Xn.indices = Xn.indices.astype(np.int64)
        Xn.indptr = Xn.indptr.astype(np.int64)
        nb = theta0.copy()
        _kernel(Xn, y[keep], nb, **kw)
        diff = np.linalg.norm(full - nb)
        assert diff <= clip / 10.0 * (1 + 1e-9)
        # the unclipped gradient of the row, to check equality when it is clipped
        r = _softmax_residual(X[[i]].toarray()[0] @ theta0, y[i])
        gn = np.linalg.norm(r) * np.linalg.norm(X[[i]].toarray())
        if gn > clip:
            assert diff == pytest.approx(clip / 10.0, rel=1e-9)
        else:
            assert diff == pytest.approx(gn / 10.0, rel=1e-9)


def test_softmax_kernel_rejects_noise_without_denominator():
    X, y = _problem()
    with pytest.raises(ValueError, match="denominator"):
        _kernel(X, y, np.zeros((X.shape[1], 4)), lam=0.0, learning_rate=1.0, clip=1.0,
                sampling_rate=0.1, batch_size=6, denominator=0.0, n_steps=2,
                noise_std=1.0, seed=0)


def test_softmax_kernel_rejects_labels_out_of_range():
    X, y = _problem()
    y = y.copy()
    y[0] = 4
    with pytest.raises(ValueError, match="labels"):
        _kernel(X, y, np.zeros((X.shape[1], 4)), lam=0.0, learning_rate=1.0, clip=1.0,
                sampling_rate=0.1, batch_size=6, denominator=6.0, n_steps=2,
                noise_std=0.0, seed=0)
