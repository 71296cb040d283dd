r"""Multinomial private LASSO (Khanna, Lu and Raff (2023), Appendix A, Algorithm 3).

:class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` fits K > 2 classes with
the same skeleton as two classes; the kernel factory
(``_kernels``) picks the multinomial kernel.
This module states the model and its privacy analysis, and holds the softmax
helpers.

**Model and constraint.**  ``coef_`` is a ``K x p`` matrix ``W`` (one row per class,
``K`` = number of classes) minimising the multinomial cross-entropy
:math:`\sum_i \mathrm{logsumexp}(W x_i) - (W x_i)_{y_i}` subject to
:math:`\|w_k\|_1 \le \lambda` for **every row** ``k``.  Algorithm 3 as printed is
ambiguous (it loops over feature columns ``g_{:i}`` while its privacy proof, Theorem 5,
treats each class vector :math:`\hat w_{k:}` as one run of private LASSO); the
per-class reading is the one whose proof holds, and it makes the Frank-Wolfe linear
minimisation split by class: each step picks one vertex
:math:`\pm\lambda e_{j_k}` per class (kernel: :mod:`dptoolkit.linear_model._frank_wolfe._fw_multinomial_fast`).
The whole-matrix constraint :math:`\sum_{k,j}|W_{kj}| \le \lambda` would be a
different algorithm (one vertex among :math:`2Kp` per step) and is not offered.

**Privacy (neighbouring: add/remove one example, or replace one).**  Data bound
:math:`\|x_i\|_\infty \le 1`.  At step ``t`` class ``k``'s vertex scores are
:math:`-\sigma G_{jk}` with :math:`G = X^\top(\mathrm{softmax}(XW_t^\top) - Y)` at
the released iterate :math:`W_t`.  One example changes class ``k``'s scores by at most
:math:`r_k = |\hat y_{ik} - y_{ik}|` and :math:`\sum_k r_k = 2(1 - \hat y_{iy_i})
\le 2`: this is the Lipschitz constant :math:`L = 2` of Theorem 4.  The ``K``
selections of a step use independent noise, so their privacy losses add:
the exponential mechanism with coefficient ``c`` per class loses at most
:math:`\sum_k 2c\,r_k \le 2cL`, and Laplace report noisy max of scale ``b`` at most
:math:`\sum_k 2r_k/b \le 2L/b` (replace-one: twice these).  Each step is therefore
:math:`\varepsilon'`-DP with :math:`c = \varepsilon'/(2L\cdot f)` or
:math:`b = 2Lf/\varepsilon'` (``f`` = 2 for replace-one, else 1), and the ``T``
steps compose exactly as in the binary case: :math:`\varepsilon'` is the larger of
:math:`\varepsilon/T` (basic) and the exact inverse of the full advanced-composition
bound (searched by :func:`dptoolkit.accounting.calibrate_parameter` on the released event), or by
zCDP: the K selections of a
step are bounded-range mechanisms with ranges :math:`2cf r_k`, so the step is
:math:`(\sum_k 2cfr_k)^2/8 \le \varepsilon'^2/8`-zCDP (Cesar and Rogers 2021); the one
budget split is :func:`dptoolkit.linear_model._frank_wolfe._budget.split_budget`.

**Screening and the floating-point delta.**  With ``k`` (the default
above 1024 features at zCDP accounting), one Gaussian release of the column
masses of the row-normalised data (sensitivity 1 under add/remove, no label
used; or, with the ``"gradient"`` score, of the K per-class sums, also
sensitivity 1 as one row changes one class's sum; ``_screening``) picks the candidate
features first, and every class's exponential mechanism then ranges over the
:math:`2k` signed candidate vertices only.  The per-step floating-point delta of
the ``K`` inverse-CDF draws is :math:`K(3k + 2)2^{-53}`
(``floating_point_bounds()``), and
:math:`T(1 + e^{\varepsilon' + 2\gamma})` times it is taken from ``delta``
(``split_budget()``); counted over
the ``k`` candidates, not the ``D`` features the draws never see.  20 Newsgroups
(K = 20, :math:`D = 2^{20}`, N = 11,314, ``max_iter="auto"``): 4.4e-8 at
epsilon = 2 against 1.1e-5 unscreened, which exceeds ``delta = 1e-5`` and is
refused.

Khanna, Lu and Raff (2023) instead gives every class :math:`(\varepsilon/K, \delta/K)` (Theorem 5,
basic composition over the classes) *and* uses :math:`L = 2` in each class's Laplace
scale, :math:`b = \lambda L\sqrt{8T\ln(K/\delta)}/(n\varepsilon/K)`.  That is valid
(the per-class sensitivity is 1, so the second factor 2 pays for report noisy max
on non-monotone scores) but about ``K`` times noisier than the joint analysis
above; it is available as ``mechanism="laplace_talwar"``, whose ``privacy_spent_`` is
the guarantee the printed scale really gives under the joint analysis (smaller than
the requested epsilon for ``K > 2``).

References
----------
A. Khanna, F. Lu, E. Raff. Sparse Private LASSO Logistic Regression (Khanna, Lu and Raff, 2023),
Appendix A (Algorithm 3, Theorems 4-5).

K. Talwar, A. Thakurta, L. Zhang. Nearly Optimal Private LASSO. NeurIPS 2015.
"""
import numpy as np

__all__ = ["LIPSCHITZ", "expand_columns", "log_softmax", "cross_entropy"]

#: Lipschitz constant of the multinomial cross-entropy w.r.t. the per-step
#: sensitivity of all classes' scores together (Khanna, Lu and Raff (2023), Theorem 4).
LIPSCHITZ = 2.0


def expand_columns(coef, columns, n_features):
    """Coefficients on the screened columns -> shape (n_rows, n_features)."""
    if columns is None:
        return coef
    full = np.zeros((coef.shape[0], n_features))
    full[:, columns] = coef
    return full


def log_softmax(scores):
    """Row-wise log-softmax of scores of shape (n_samples, n_classes)."""
    m = scores.max(axis=1, keepdims=True)
    return scores - (m + np.log(np.exp(scores - m).sum(axis=1, keepdims=True)))


def cross_entropy(scores, y, classes):
    """Mean multinomial cross-entropy of ``scores`` (n_samples, n_classes) for labels
    ``y`` (each in ``classes``)."""
    logp = log_softmax(scores)
    idx = np.searchsorted(classes, np.asarray(y))
    return float(-np.mean(logp[np.arange(logp.shape[0]), idx]))
