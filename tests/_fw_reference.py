"""Pure-Python references of the Frank-Wolfe kernels (Raff et al. 2023), for tests only.

``standard_fw`` is Algorithm 1 (non-private, argmax vertex).  ``fast_fw`` is
Algorithm 2 with a bounded-staleness refresh (as printed, Algorithm 2 keeps the
gradients of rows without the chosen feature at ever older margins; here all are
recomputed once the product of the (1 - eta) factors drops below 1 - rho),
written with dense NumPy arrays and explicit loops so that every quantity the
Cython kernel maintains incrementally is visible.  Both use the step size
eta_t = 2 / (t + 2), t = 1..T, as the paper does.
"""
import numpy as np
import scipy.sparse as sp


def sigmoid(v):
    return 0.5 * (1.0 + np.tanh(0.5 * v))


def logistic_objective(X, y, w):
    """Mean logistic loss, labels in {0, 1}: mean(log(1 + e^v) - y v), v = X w."""
    v = X @ w
    return float(np.mean(np.logaddexp(0.0, v) - y * v))


def standard_fw(X, y, l1_bound, max_iter):
    """Algorithm 1: returns (w, selected coordinates, gaps) with gaps in mean form."""
    X = sp.csr_array(X)
    n, d = X.shape
    w = np.zeros(d)
    js, gaps = [], []
    for t in range(1, max_iter + 1):
        q = sigmoid(X @ w) - y
        alpha = X.T @ q
        j = int(np.argmax(np.abs(alpha)))
        s = -l1_bound * (1.0 if alpha[j] > 0 else -1.0)
        gaps.append((alpha @ w - s * alpha[j]) / n)
        eta = 2.0 / (t + 2.0)
        w *= 1.0 - eta
        w[j] += eta * s
        js.append(j)
    return w, np.array(js), np.array(gaps)


def fast_fw(X, y, l1_bound, max_iter, refresh_tol):
    """Algorithm 2 (scaled weights, sparse updates, stale row gradients) + refresh.

    Row gradients q_i are recomputed only for rows containing the chosen
    feature; everything is recomputed exactly whenever the product of
    (1 - eta) since the last refresh drops below 1 - refresh_tol.
    Returns (w, selected coordinates, gaps, number of refreshes).
    """
    Xr = sp.csr_array(X)
    Xc = sp.csc_array(X)
    n, d = Xr.shape
    wt = np.zeros(d)
    wm = 1.0
    vt = np.zeros(n)
    q = np.zeros(n)
    alpha = np.zeros(d)
    h = 0.0
    prod = 1.0
    js, gaps, n_refresh = [], [], 0
    for t in range(1, max_iter + 1):
        if t == 1 or prod < 1.0 - refresh_tol:
            wt *= wm
            vt *= wm
            wm = 1.0
            q = sigmoid(vt) - y
            alpha = Xc.T @ q
            h = float(alpha @ wt)
            prod = 1.0
            n_refresh += 1
        j = int(np.argmax(np.abs(alpha)))
        s = -l1_bound * (1.0 if alpha[j] > 0 else -1.0)
        gaps.append((wm * h - s * alpha[j]) / n)
        eta = 2.0 / (t + 2.0)
        wm *= 1.0 - eta
        prod *= 1.0 - eta
        delta = eta * s / wm
        wt[j] += delta
        h += alpha[j] * delta
        for p in range(Xc.indptr[j], Xc.indptr[j + 1]):
            i = Xc.indices[p]
            vt[i] += delta * Xc.data[p]
            qn = sigmoid(wm * vt[i]) - y[i]
            gamma = qn - q[i]
            q[i] = qn
            h += gamma * vt[i]
            lo, hi = Xr.indptr[i], Xr.indptr[i + 1]
            alpha[Xr.indices[lo:hi]] += gamma * Xr.data[lo:hi]
        js.append(j)
    return wt * wm, np.array(js), np.array(gaps), n_refresh
