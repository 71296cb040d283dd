"""L1-ball constrained logistic regression, not private: the Sparsifier's first fit.

:func:`l1_ball_logistic` minimises the (multinomial) logistic loss over
``||w_k||_1 <= l1_bound`` for every class row by accelerated projected gradient
with working sets, :func:`project_l1_rows` the Euclidean projection onto the L1 ball
(Duchi, Shalev-Shwartz, Singer and Chandra, 2008).
"""
import math
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, logsumexp
from sklearn.exceptions import ConvergenceWarning


def project_l1_rows(V, radius):
    """Euclidean projection of every row of ``V`` onto the L1 ball of ``radius``.

    The sort-based algorithm of Duchi, Shalev-Shwartz, Singer and Chandra (2008),
    Figure 1: for a row ``v`` with ``||v||_1 > radius``, ``w = sign(v) max(|v| - tau,
    0)`` with the threshold ``tau`` that makes ``||w||_1 = radius``; rows already in
    the ball are returned unchanged.  The result has exact zeros.

    Parameters
    ----------
    V : ndarray of shape (n_rows, n_columns)
    radius : float
        > 0.

    Returns
    -------
    ndarray of shape (n_rows, n_columns), float64
    """
    V = np.asarray(V, dtype=np.float64)
    out = V.copy()
    for k in range(V.shape[0]):
        a = np.abs(V[k])
        if a.sum() <= radius:
            continue
        u = np.sort(a)[::-1]
        css = np.cumsum(u) - radius
        j = np.arange(1, u.size + 1)
        # rho >= 0 in exact arithmetic (u_1 - (u_1 - radius) = radius > 0); with
        # |V| >> radius the radius is lost in rounding, and the largest entry is kept
        positive = np.flatnonzero(u - css / j > 0)
        rho = positive[-1] if positive.size else 0
        tau = css[rho] / (rho + 1)
        out[k] = np.sign(V[k]) * np.maximum(a - tau, 0.0)
    return out


def _logistic_loss(M, Y):
    """Mean loss and its derivative in the margins ``M`` (shape (n, K')).

    ``K' = 1``: binary cross-entropy with ``Y`` in {0, 1} of shape (n, 1);
    ``K' > 1``: multinomial cross-entropy with one-hot ``Y`` (Khanna, Lu and Raff (2023), Appendix A).
    """
    n = M.shape[0]
    if M.shape[1] == 1:
        loss = np.mean(np.logaddexp(0.0, M) - Y * M)
        return loss, (expit(M) - Y) / n
    lse = logsumexp(M, axis=1, keepdims=True)
    loss = np.mean(lse[:, 0] - np.sum(Y * M, axis=1))
    return loss, (np.exp(M - lse) - Y) / n


def l1_ball_logistic(X, Y, l1_bound, *, tol=1e-4, max_iter=1000, working_set=1024):
    r"""Non-private L1-constrained logistic regression to a certified duality gap.

    Minimises the mean cross-entropy :math:`F(W) = \frac1n \sum_i \ell(W x_i, y_i)`
    subject to :math:`\|w_k\|_1 \le \lambda` for every row ``k`` of ``W`` (binary:
    one row and the logistic loss; more classes: one row per class and the
    multinomial loss, the constraint of Khanna, Lu and Raff (2023), Appendix A).  This is the problem
    Frank-Wolfe solves (Raff, Khanna and Lu (2023), Algorithm 1; Khanna, Lu and Raff (2023), "Nonprivate LASSO"), solved
    here to a stated accuracy instead of for a fixed number of steps.

    **Method.**  Accelerated projected gradient (FISTA with backtracking, Beck and
    Teboulle 2009, Section 4) with the projection onto the L1 ball of Duchi et al.
    (2008, :func:`project_l1_rows`) and a restart of the momentum whenever the
    objective increases (O'Donoghue and Candes 2015), run on a working set of
    features: the ``working_set`` features of largest gradient at zero first; after
    each inner solve the full gradient is computed and every feature whose gradient
    exceeds the largest gradient inside the set is added (as in the working-set
    solvers of Johnson and Guestrin 2015, Blitz, and Massias, Gramfort and Salmon
    2018, Celer).  Every feature outside the set has weight 0.

    **Stopping.**  The Frank-Wolfe duality gap of the full problem (Jaggi 2013,
    Section 2), :math:`g(W) = \sum_k \langle \nabla_k F(W), w_k\rangle + \lambda
    \|\nabla_k F(W)\|_\infty \ge F(W) - F(W^*)`, is at most ``tol``, or ``max_iter``
    gradient steps have run (then a :class:`~sklearn.exceptions.ConvergenceWarning`).
    The projection gives exact zeros, so the non-zeros of the returned ``W`` are the
    support of an iterate with certified sub-optimality.

    Parameters
    ----------
    X : sparse matrix of shape (n_samples, n_features)
        CSR or CSC, float64.
    Y : ndarray of shape (n_samples, n_rows)
        ``n_rows = 1``: labels in {0, 1}; ``n_rows = K > 1``: one-hot labels.
    l1_bound : float
        :math:`\lambda > 0`.
    tol : float, default=1e-4
        Duality gap at which to stop, in units of the mean loss (:math:`F(0) =
        \ln 2` for two classes), > 0.
    max_iter : int, default=1000
        Total number of accelerated gradient steps, >= 1.
    working_set : int, default=1024
        Initial number of features of the working set, >= 1.

    Returns
    -------
    W : ndarray of shape (n_rows, n_features)
    n_iter : int
        Gradient steps run.
    gap : float
        Duality gap of ``W`` on the full problem.

    References
    ----------
    A. Beck, M. Teboulle. A fast iterative shrinkage-thresholding algorithm for
    linear inverse problems. SIAM J. Imaging Sciences 2(1), 2009.

    J. Duchi, S. Shalev-Shwartz, Y. Singer, T. Chandra. Efficient projections onto
    the l1-ball for learning in high dimensions. ICML 2008.

    B. O'Donoghue, E. Candes. Adaptive restart for accelerated gradient schemes.
    Foundations of Computational Mathematics 15, 2015.

    M. Jaggi. Revisiting Frank-Wolfe: projection-free sparse convex optimization.
    ICML 2013.

    T. Johnson, C. Guestrin. Blitz: a principled meta-algorithm for scaling sparse
    optimization. ICML 2015.
    """
    X = sp.csc_array(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n, p = X.shape
    K = Y.shape[1]
    lam = float(l1_bound)
    W = np.zeros((K, p))

    def full_gap(M):
        loss, D = _logistic_loss(M, Y)
        G = np.asarray(X.T @ D).T                          # (K, p)
        gap = float(np.sum(G * W) + lam * np.abs(G).max(axis=1).sum())
        return G, gap

    M = np.zeros((n, K))
    G, gap = full_gap(M)
    score = np.abs(G).max(axis=0)
    S = np.sort(np.argsort(-score, kind="stable")[:min(p, working_set)])
    n_iter, L = 0, 1.0
    while gap > tol and n_iter < max_iter:
        XS = sp.csr_array(X[:, S])
        XSt = sp.csr_array(XS.T)
        w = W[:, S]                                        # iterate (rows: classes)
        z, Mz, Mw = w.copy(), M.copy(), M.copy()
        fz, Dz = _logistic_loss(Mz, Y)
        fw, t = fz, 1.0
        inner_gap = np.inf
        while n_iter < max_iter:
            g = np.asarray(XSt @ Dz).T
            while True:                                    # backtracking on L
                wn = project_l1_rows(z - g / L, lam)
                d = wn - z
                Mn = np.asarray(XS @ wn.T)
                fn, Dn = _logistic_loss(Mn, Y)
                if fn <= fz + np.sum(g * d) + 0.5 * L * np.sum(d * d) + 1e-15 * abs(fz):
                    break
                L *= 2.0
            n_iter += 1
            if fn > fw:                                    # adaptive restart
                t = 1.0
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            mom = (t - 1.0) / t_next
            z, Mz = wn + mom * (wn - w), Mn + mom * (Mn - Mw)
            w, Mw, fw, t = wn, Mn, fn, t_next
            fz, Dz = (fn, Dn) if mom == 0.0 else _logistic_loss(Mz, Y)
            L *= 0.9                                       # let the step grow again
            if n_iter % 10 == 0 or n_iter == max_iter:
                gS = np.asarray(XSt @ Dn).T
                inner_gap = float(np.sum(gS * wn) + lam * np.abs(gS).max(axis=1).sum())
                if inner_gap <= 0.5 * tol:
                    break
        W[:] = 0.0
        W[:, S] = w
        M = Mw
        G, gap = full_gap(M)
        # features outside S whose gradient, in some class, beats that class's
        # largest gradient inside S (only they can raise the gap above the inner one)
        excess = (np.abs(G) - np.abs(G[:, S]).max(axis=1, keepdims=True)).max(axis=0)
        excess[S] = 0.0
        violators = np.flatnonzero(excess > 0.0)
        if violators.size:
            add = violators[np.argsort(-excess[violators], kind="stable")[:S.size]]
            S = np.union1d(S, add)
        elif gap > tol and inner_gap <= 0.5 * tol:
            break                                          # no violator: gap is inside S
    if gap > tol:
        warnings.warn(f"the non-private L1-constrained fit stopped after {n_iter} steps "
                      f"with duality gap {gap:.3g} > tol={tol:g}; increase "
                      "nonprivate_max_iter", ConvergenceWarning, stacklevel=2)
    return W, n_iter, gap
