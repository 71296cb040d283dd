r"""A :class:`FrankWolfeLassoClassifier` fit on a Dask array.

The data-heavy work runs on the workers through
:func:`._dask_binary.frank_wolfe_over_blocks` (two classes) or
:func:`._dask_multinomial.multinomial_frank_wolfe_over_blocks` (K > 2; their
docstrings give the design: the rows' margins stay on their blocks, held by one
Dask actor per worker, one round of actor calls (no tasks) per step; the binary
exact refresh as a map-reduce, the multinomial gradient as a sum of the
blocks' parts every step; the binary steps run in chunks on a coordinating
worker); this module is the estimator's side: validation, budget, screening,
and the vertex selection, whose randomness comes from the estimator's
generator, on the client, exactly as the in-memory kernel draws it:

* the screening's statistic (column masses, class differences or per-class
  sums,
  :func:`~dptoolkit.linear_model._frank_wolfe._screening.screening_statistic`)
  is summed over the blocks (each block clips its entries to the public bound
  first, as in memory) and the Gaussian noise is added once on the client, with
  the draws of
  :func:`~dptoolkit.linear_model._frank_wolfe._screening.private_top_columns`;
  with the naive-Bayes start (``start``) the released per-class sums give the
  start :math:`w_0` on the client (post-processing,
  :func:`~dptoolkit.linear_model._frank_wolfe._screening.naive_bayes_start`),
  which goes to the blocks once, with the first round;
* K > 2 classes: each step's vertices are chosen from the summed gradient by
  the multinomial kernel's own selection code
  (``_fw_multinomial_fast.select_vertices``, the code of a step of
  ``MultinomialFW``: any of its selectors);
* two classes: the grouped sampler (:class:`GroupedExpSampler`, Algorithm 4) holds the
  kernel's log-weights (:func:`_fw_fast.log_weight_array`) with the columns
  in the kernel's numbering (:func:`_fw_fast.column_order` of the columns'
  counts of stored entries, summed over the blocks in the pass of the bound
  check or of the screening statistic), is built at the
  first refresh and updated for the coordinates whose :math:`\alpha` changed
  (re-summed when more than an eighth changed, as the kernel), and each step
  draws the coordinate and then the sign with one uniform, in the kernel's
  order; on a cluster the selector runs on the coordinating worker and
  consumes uniforms the client drew from the generator for its chunk of steps
  (:class:`_GroupedSelector`); the argmax (non-private) takes the first
  largest :math:`|\alpha_j|`.

So with the same seed the distributed fit makes the in-memory fit's draws and
releases its model up to the rounding of the summation order, with the same
privacy event (:meth:`FrankWolfeLassoClassifier._budget`: nothing here
depends on the partition).
"""
import numpy as np

from . import _fw_fast, _fw_multinomial_fast
from ._grouped_sampler import GroupedExpSampler
from ._multinomial import expand_columns
from ._screening import (naive_bayes_start, noisy_top_columns, screening_statistic,
                         start_steps)
from ._dask_binary import frank_wolfe_over_blocks
from ._dask_multinomial import multinomial_frank_wolfe_over_blocks
from ...distributed import block_sum, row_aligned, validate_dask_X_y
from ..._private import sensitivity_factor

__all__ = ["validate_dask_data", "check_dask_plan", "fit_dask"]

#: Share of the coordinates above which the kernel re-sums the sampler
#: (``REBUILD_FRACTION`` of ``_fw_fast``).
_REBUILD_FRACTION = 0.125


def _statistic_block(Xb, yb, bound, score, n_classes=2, class_sums=False, counts=False):
    """The screening statistic of block X_b (``yb``: the rows' class indices in
    ``range(n_classes)``) after clipping to the public bound, raveled, with
    ``counts`` the block's column counts (:func:`_column_counts`), and (last
    entry) whether an entry was outside it."""
    from scipy import sparse as sp

    Xb = sp.csr_array(Xb, dtype=np.float64)
    Xb.sum_duplicates()
    if not np.isfinite(Xb.data).all():
        raise ValueError("Input X contains NaN or infinity")
    over = Xb.data.size > 0 and (Xb.data.max() > bound or -Xb.data.min() > bound)
    Xb.data = np.clip(Xb.data, -bound, bound)
    yb = None if yb is None else np.asarray(yb, dtype=np.int64)
    return np.concatenate([screening_statistic(Xb, score, yb, n_classes, class_sums).ravel(),
                           _column_counts(Xb) if counts else [], [float(over)]])


def _column_counts(Xb):
    """Stored entries per column of block X_b (CSR, duplicates summed), as floats:
    summed over the blocks, the counts from which the in-memory kernel numbers
    its columns (:func:`_fw_fast.column_order`)."""
    return np.bincount(Xb.indices, minlength=Xb.shape[1]).astype(np.float64)


def _over_block(Xb, yb, bound, counts=False):
    """With ``counts`` the block's column counts (:func:`_column_counts`), and (last
    entry) whether it has an entry outside [-bound, bound] (NaN refused)."""
    from scipy import sparse as sp

    Xb = sp.csr_array(Xb, dtype=np.float64)
    Xb.sum_duplicates()
    if not np.isfinite(Xb.data).all():
        raise ValueError("Input X contains NaN or infinity")
    return np.append(_column_counts(Xb) if counts else [],
                     float(Xb.data.size > 0 and np.abs(Xb.data).max() > bound))


class _GroupedSelector:
    """The exponential mechanism by the grouped sampler, as the fast kernel runs it.

    Its uniforms come from the estimator's generator ``rng`` (on the client), or
    from a buffer the client drew from it (:meth:`feed`: on the coordinating
    worker, which holds no generator; a pickled selector leaves ``rng`` behind).
    A step consumes the sampler's draw (two uniforms, more after a rare
    rejection) then one for the sign, in the kernel's order; ``rng.random(n)``
    returns the doubles the kernel's ``uniform(rng)`` calls would, in order, so
    the two sources make the same draws."""

    #: Uniforms a step consumes without a rejection: group, item, sign.
    uniforms_per_step = 3

    def __init__(self, n_items, group_size, coef, rng, order=None):
        # the kernel's numbering of the columns (FastFW.order): column order[i]
        # is the sampler's item i, so that a uniform draws the kernel's column
        self.sampler = GroupedExpSampler(n_items, group_size or None)
        self.coef, self.rng = coef, rng
        self.uniforms, self.consumed = None, 0
        self.order = np.arange(n_items) if order is None else np.asarray(order)
        self.item_of = np.empty(n_items, dtype=np.intp)
        self.item_of[self.order] = np.arange(n_items)

    def __getstate__(self):
        # never the generator: a worker must not be able to regenerate the noise
        return {**self.__dict__, "rng": None}

    def feed(self, uniforms):
        """Draw from ``uniforms`` (shape (n,), drawn by the client) from now on."""
        self.uniforms, self.consumed = uniforms, 0

    def update(self, alpha, items, first):
        if items.size == 0:
            return
        # the log-weights and scaled weights the kernel gives its sampler
        logw, scaled = _fw_fast.log_weight_scaled_array(self.coef,
                                                        np.ascontiguousarray(alpha[items]))
        resum = first or items.size > _REBUILD_FRACTION * alpha.size
        items = self.item_of[items]
        if resum:
            self.sampler.update_items_resummed(items, logw, scaled, _fw_fast.SCALED_OFFSET)
        else:
            self.sampler.update_items_batched(items, logw, scaled, _fw_fast.SCALED_OFFSET)

    def select(self, alpha):
        """The vertex ``(j, sign)``, or None when the fed uniforms ran out (then
        nothing is consumed)."""
        if self.uniforms is None:
            j = int(self.sampler.draw(1, random_state=self.rng)[0])
            u = self.rng.random()
        else:
            j, pos = self.sampler.draw_from_uniforms(self.uniforms, self.consumed)
            if j < 0 or pos >= self.uniforms.size:
                return None
            u = self.uniforms[pos]
            self.consumed = pos + 1
        j = self.order[j]
        a = alpha[j]
        # the sign: P(descent) = sigmoid(2 coef |alpha_j|), one uniform (draw_sign)
        x = 2.0 * self.coef * abs(a)
        p = 1.0 / (1.0 + np.exp(-x))
        descent = u < p
        sign_a = 1.0 if a > 0 else -1.0
        return int(j), (-sign_a if descent else sign_a)


class _ArgmaxSelector:
    """Non-private: the vertex of the largest |alpha_j| (the first one)."""

    uniforms_per_step, rng, consumed = 0, None, 0

    def feed(self, uniforms):
        pass

    def update(self, alpha, items, first):
        pass

    def select(self, alpha):
        j = int(np.argmax(np.abs(alpha)))
        return j, -(1.0 if alpha[j] > 0 else -1.0)


class _MultinomialSelector:
    """One vertex per class from the summed gradient, by the multinomial kernel's
    selection (``select_vertices``) with the estimator's generator."""

    def __init__(self, spec, coef, rng):
        self.code = _fw_multinomial_fast.SELECTOR_CODES[spec.kernel]
        self.coef, self.rng = coef, rng

    def __call__(self, gradient):
        return _fw_multinomial_fast.select_vertices(gradient, self.code, self.coef,
                                                    self.rng.bit_generator)


def validate_dask_data(est, X, y):
    """The template's data step on Dask arrays: ``(X, y on the client, classes)``.

    Every private fit needs the public N: the block sizes are never read as N
    (l1_bound and max_iter "auto" would take it; the check does not depend on them).

    Raises
    ------
    ValueError
        A private fit without ``n_samples_public`` (whatever ``l1_bound`` and
        ``max_iter``: a distributed fit never takes N from the chunk sizes); two
        classes with ``solver="standard"``; the errors of the in-memory data step.
    """
    private = est.epsilon is not None
    X, y_local, _ = validate_dask_X_y(est, X, y, private=private)
    from sklearn.utils.multiclass import check_classification_targets

    check_classification_targets(y_local)
    classes = est._resolve_classes(y_local, private=private)
    if classes.size == 2 and est.solver != "fast":
        raise ValueError("a binary FrankWolfeLassoClassifier on a Dask array needs "
                         f"solver='fast' (Algorithm 2), got solver={est.solver!r}")
    return X, y_local, classes


def check_dask_plan(est, plan):
    """What a Dask array supports, from the plan, before the spend is checked: a
    binary fit uses the grouped sampler (private) or the argmax (non-private); the
    naive-Bayes start with more than two classes is fitted in memory only.

    Raises
    ------
    ValueError
        A binary fit with a selector other than the grouped sampler (private) or
        the argmax (non-private); ``start="naive_bayes"`` with more than two
        classes.
    """
    p = plan.params
    if est.classes_.size != 2:
        if p.start == "naive_bayes":
            raise ValueError("start='naive_bayes' with more than two classes is fitted in "
                             "memory only; on a Dask array use start='zero' (or 'auto')")
        return
    if p.private and p.spec.name != "grouped":
        raise ValueError("a private binary FrankWolfeLassoClassifier on a Dask array uses "
                         f"mechanism='grouped' (or 'auto'), got {est.mechanism!r}")
    if not p.private and est.mechanism not in ("auto", "argmax"):
        raise ValueError("a non-private binary FrankWolfeLassoClassifier on a Dask array "
                         f"uses mechanism='argmax' (or 'auto'), got {est.mechanism!r}")


def fit_dask(est, X, y_local, plan, rng):
    """The template's work for ``est`` (a FrankWolfeLassoClassifier) on Dask arrays
    (``y_local``: the labels on the client, ``est.classes_`` set by the template).

    Raises
    ------
    RuntimeError
        Workers lost more often than ``distributed.scheduler.allowed-failures``;
        nothing is released or charged.
    """
    classes = est.classes_
    binary = classes.size == 2
    p, budget = plan.params, plan.params.budget
    codes = row_aligned(np.searchsorted(classes, y_local).astype(np.float64), X)
    D = X.shape[1]
    columns, start, counts = _screened_columns(est, X, codes, p, budget, rng, classes.size)
    n_kept = D if columns is None else columns.size
    bound = 1.0 if p.private else None
    stop = p.tol * X.shape[0] if p.tol > 0 else -np.inf
    if binary:
        if p.private:
            # the in-memory kernel's numbering of the kept columns (FastFW.order)
            order = None
            if counts is not None:
                order = _fw_fast.column_order(counts if columns is None else counts[columns])
            selector = _GroupedSelector(n_kept, p.group_size, budget.kernel_parameter, rng,
                                        order)
        else:
            selector = _ArgmaxSelector()
        coef, gaps, n_done, n_refresh = frank_wolfe_over_blocks(
            X, codes, columns=columns, bound=bound, l1_bound=p.l1_bound,
            max_iter=p.max_iter, refresh_tol=p.refresh_tol, selector=selector,
            stop=stop, start=start)
        coef = coef.reshape(1, -1)
        est.mechanism_ = "grouped" if p.private else "argmax"
        est.solver_stats_ = {"n_iter": int(n_done), "n_refresh": int(n_refresh)}
    else:
        select = _MultinomialSelector(p.spec, budget.kernel_parameter if budget else 0.0,
                                      rng)
        coef, gaps, n_done = multinomial_frank_wolfe_over_blocks(
            X, codes, n_classes=classes.size, columns=columns, bound=bound,
            l1_bound=p.l1_bound, max_iter=p.max_iter, select=select, stop=stop)
        est.mechanism_ = p.spec.name
        # the in-memory fit's counters less touched_nnz (a sum over the blocks'
        # columns that no round returns)
        est.solver_stats_ = {"n_iter": int(n_done), "solver": "multinomial"}
    est.l1_bound_ = float(p.l1_bound)
    est.coef_ = expand_columns(coef, columns, D)
    est.screened_features_ = columns
    est.intercept_ = np.zeros(coef.shape[0])
    est.n_iter_ = int(n_done)
    est._set_guarantee(budget, gaps, n_done, X.shape[0])


def _screened_columns(est, X, codes, p, budget, rng, n_classes):
    """``(columns, start, counts)``: the private candidate columns of a screened fit
    (None otherwise), after checking the public bound over the blocks (the
    in-memory check's error or warning): the statistic summed over the blocks, the
    noise on the client; with the naive-Bayes start ``(w0, t0)`` from the
    released per-class sums (else None), as in memory; and when the kernel numbers
    its columns (two classes, at least ``_fw_fast.RENUMBER_MIN_FEATURES`` kept)
    the stored entries of each of the D columns, summed over the blocks in the
    same pass (else None; not released: they number the kernel's columns,
    :func:`_fw_fast.column_order`).  Non-private: ``(None, None, None)``."""
    if not p.private:
        return None, None, None
    bound = 1.0
    screened = budget.screening_noise_multiplier is not None
    n_kept = p.screening if screened else X.shape[1]
    # the column counts, where the kernel numbers its columns by them
    with_counts = n_classes == 2 and n_kept >= _fw_fast.RENUMBER_MIN_FEATURES
    starts = p.start == "naive_bayes"
    if screened:
        score = est._screening_score()
        out = block_sum(_statistic_block, X, codes if score == "gradient" or starts else None,
                        (bound, score, n_classes, starts, with_counts),
                        what="the screening statistic")
    else:
        out = block_sum(_over_block, X, None, (bound, with_counts), what="the bound check")
    out, over = out[:-1], out[-1] > 0
    counts = None
    if with_counts:
        out, counts = out[:-X.shape[1]], out[-X.shape[1]:]
    if screened:
        statistic = out.reshape(-1, X.shape[1])
    if over:   # the in-memory check's error or warning, on a one-entry stand-in
        from scipy import sparse as sp

        est._enforce_public_bound(sp.csr_array(np.array([[2.0 * bound]])), "linf", bound)
    if not screened:
        return None, None, counts
    # the draws of private_top_columns, in place (no X to dwarf them)
    sensitivity = sensitivity_factor(est.neighbouring)
    columns = noisy_top_columns(statistic, p.screening, budget.screening_noise_multiplier,
                                rng, sensitivity=sensitivity, score=score,
                                keep_statistic=starts)
    if not starts:
        return columns, None, counts
    # post-processing of the release, as the in-memory fit
    w0 = naive_bayes_start(statistic, columns, p.l1_bound,
                           budget.screening_noise_multiplier * sensitivity)
    return columns, (w0, start_steps(p.max_iter, w0, p.start_steps)), counts
