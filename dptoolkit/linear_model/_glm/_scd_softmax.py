"""DP-SCD's multinomial (softmax) model: the dual coordinate ascent of the softmax
loss (Shalev-Shwartz and Zhang 2013, Section 3) made private as Damaskinos et al.
(2021), Algorithm 1, with a K-dimensional dual block per example.

The privacy argument (neighbouring relation, sensitivity, mechanism and
composition) is in :class:`~dptoolkit.linear_model.DPSCDClassifier`'s Notes; this
module is its work.
"""
import math

import numpy as np
import scipy.sparse as sp

from ..._estimator import _softmax

def _softmax_dual_scd(X, t, n_classes, *, rng, step, lam_n, clip, sampling_rate,
                      batch_size, n_steps, noise_std, rec_steps):
    r"""Mini-batch dual coordinate ascent on the softmax cross-entropy (one model).

    The multinomial form of Algorithm 1 of Damaskinos et al. (2021): dual blocks
    :math:`\alpha_i \in \mathbb R^K` (feasible set :math:`e_{y_i} - \Delta_K`,
    :math:`\Delta_K` the simplex), shared matrix :math:`V = X^\top A \in
    \mathbb R^{M\times K}`, model :math:`\Theta = V/(\lambda N)`.  Each step
    draws a batch (Poisson at ``sampling_rate``, else the next ``batch_size`` rows
    of a permutation reshuffled every pass), computes for every row :math:`i` of
    it, from the current :math:`V` only, the update :math:`\zeta_i = s(e_{y_i} -
    \mathrm{softmax}(\Theta^\top x_i) - \alpha_i)` (Shalev-Shwartz and Zhang
    2013, Section 3, with :math:`s` = ``step``), scales it to
    :math:`\|\zeta_i\|_2 \le C` (``clip``), then adds :math:`\zeta_i` to
    :math:`\alpha_i` and :math:`x_i\zeta_i^\top` to :math:`V`, and
    :math:`N(0, \mathrm{noise\_std}^2)` to every entry of :math:`V`.

    The noise of a row of :math:`V` that no step reads is drawn lazily: when the
    row is next read (or at a recorded step, or at the end) it receives one
    normal with the summed variance of the steps it missed,
    :math:`N(0, m\,\mathrm{noise\_std}^2)` for :math:`m` steps.  Between two
    reads a row's noises enter every later value only through their sum, so
    the law of every value read and released is that of the eager algorithm
    (noise on all :math:`MK` entries every step) and the guarantee is
    unchanged; the work per step is that of the rows the batch touches
    (the running time, which depends on the data through them as it does
    through the non-zeros, is outside the guarantee).

    ``t`` holds the class codes 0 .. K-1.  Returns ``(W, path, A)``: the weights
    (M, K), the weights after the steps ``rec_steps`` (n_records, M, K) and the
    dual blocks (N, K); ``(None, None, None)`` when a non-finite value appeared.
    """
    X = sp.csr_array(X)
    n_rows, M = X.shape
    K = int(n_classes)
    A = np.zeros((n_rows, K))
    V = np.zeros((M, K))
    Y = np.zeros((n_rows, K))
    Y[np.arange(n_rows), t] = 1.0
    trace = np.zeros((rec_steps.shape[0], M, K))
    chunk = max(1, (1 << 20) // K)       # noise drawn in blocks of about 2^20 entries
    # done[j]: the number of steps whose noise row j of V has received
    done = np.zeros(M, dtype=np.int64)

    def catch_up(rows, now):
        """Add to ``rows`` of V the noise of the steps before ``now`` they missed."""
        missed = now - done[rows]
        V[rows] += (noise_std * np.sqrt(missed))[:, None] * rng.standard_normal(
            (rows.size, K))
        done[rows] = now

    def catch_up_all(now):
        for lo in range(0, M, chunk):
            catch_up(np.arange(lo, min(lo + chunk, M)), now)

    order, pos, r = None, n_rows, 0
    for step_t in range(n_steps):
        if sampling_rate is not None:
            batch = np.flatnonzero(rng.random(n_rows) < sampling_rate)
        else:
            if pos >= n_rows:
                order, pos = rng.permutation(n_rows), 0
            batch = order[pos:pos + batch_size]
            pos += batch_size
        if batch.size:
            Xb = X[batch]
            cols, inv = np.unique(Xb.indices, return_inverse=True)
            Xb = sp.csr_array((Xb.data, inv.ravel(), Xb.indptr), shape=(batch.size, cols.size))
            if noise_std > 0.0:
                catch_up(cols, step_t)
            P = _softmax(np.asarray(Xb @ V[cols]) / lam_n)
            Z = step * (Y[batch] - P - A[batch])
            if math.isfinite(clip):
                Z *= np.minimum(1.0, clip / np.maximum(np.linalg.norm(Z, axis=1),
                                                       1e-300))[:, None]
            A[batch] += Z
            V[cols] += np.asarray(Xb.T @ Z)
        while r < rec_steps.shape[0] and rec_steps[r] == step_t:
            if noise_std > 0.0:
                catch_up_all(step_t + 1)
            trace[r] = V
            r += 1
        if not np.isfinite(V[cols] if batch.size else V[:1]).all():
            return None, None, None
    if noise_std > 0.0:
        catch_up_all(n_steps)
    if not np.isfinite(V).all():
        return None, None, None
    return V / lam_n, trace / lam_n, A
