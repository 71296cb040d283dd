"""
Private and non-private LASSO logistic regression by Frank-Wolfe
================================================================

:class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` fits a logistic
regression whose weights lie in the L1 ball ``||w||_1 <= l1_bound`` with
``max_iter`` Frank-Wolfe steps.  Each step moves the weights towards one vertex
``+-l1_bound * e_j`` of the ball, so after ``T`` steps at most ``T`` weights
are non-zero.  With ``epsilon`` set, the vertex is drawn by the exponential
mechanism instead of taken as the best one (Talwar, Thakurta and Zhang 2015),
which makes the fit differentially private.

This example, on the real ``a9a`` data set (Adult census, 123 binary
features, 32,561 training and 16,281 test rows) and on a synthetic sparse
problem with 2^16 features:

1. fits the non-private model and private models for several budgets, and
   plots test accuracy, AUC and sparsity against ``epsilon``;
2. plots the Frank-Wolfe gap history (``gap_history_``) and explains the
   ``refresh_tol`` (staleness) knob of the fast solver;
3. times the ``"standard"`` solver (Algorithm 1 of Raff, Khanna and Lu 2023)
   against the ``"fast"`` one (their Algorithm 2) on the same data;
4. explains the privacy attributes ``privacy_spent_``, ``epsilon_step_`` and
   ``composition_``.

All times below are measured when the documentation is built, on whatever
machine builds it (possibly a busy one); they are printed, not claimed.  The
narrative tutorial :doc:`/tutorials/frank_wolfe` covers the guarantee and the
choice of hyper-parameters in more depth.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import roc_auc_score

from dptoolkit.accounting import calibrate_parameter
from dptoolkit.accounting.events import ExponentialMechanismEvent, SelfComposedEvent
from dptoolkit.datasets import get_data_path, load_libsvm, make_sparse_classification
from dptoolkit.linear_model import FrankWolfeLassoClassifier

# %%
# Data
# ----
# ``a9a`` is read from the data directory (environment variable
# ``DPTOOLKIT_DATA``).  Its features are 0/1 indicators, so every row satisfies
# the public bound ``||x_i||_inf <= 1`` that the private fit needs; no scaling
# derived from the data is required (that would leak).  The files do not always
# reach the last feature index, so ``n_features`` is passed explicitly.
X, y = load_libsvm(get_data_path("a9a.bz2"), n_features=123)
X_test, y_test = load_libsvm(get_data_path("a9a.t.bz2"), n_features=123)
print(f"train {X.shape}, nnz {X.nnz}; test {X_test.shape}; "
      f"positive rate {y.mean():.3f}; max |x_ij| = {abs(X.data).max():g}")


def evaluate(clf):
    """Test accuracy, test AUC and number of non-zero weights."""
    auc = roc_auc_score(y_test, clf.decision_function(X_test))
    return clf.score(X_test, y_test), auc, np.count_nonzero(clf.coef_)


def timed_fit(**params):
    """Fit a FrankWolfeLassoClassifier on a9a; return it and the wall time.

    The label set is public (0/1, from the LIBSVM file's -1/+1): a private fit
    that read it from ``y`` would warn that ``classes_`` is outside the guarantee.
    """
    model = FrankWolfeLassoClassifier(classes=[0, 1], **params)
    t0 = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - t0


# %%
# Non-private fit
# ---------------
# ``epsilon=None`` (explicit: the default is ``epsilon=1.0``) gives ordinary
# Frank-Wolfe: each step takes the vertex that decreases the linearised loss
# the most.  ``l1_bound`` is the radius of the L1 ball; with 0/1 features a
# radius of 50 lets a few dozen weights reach magnitudes of a few units.  The
# default solver is ``"fast"`` with ``refresh_tol=0.5``.
l1_bound, max_iter = 50.0, 300
clf, t_fit = timed_fit(l1_bound=l1_bound, max_iter=max_iter, epsilon=None)
acc_np, auc_np, nnz_np = evaluate(clf)
print(f"non-private: accuracy {acc_np:.4f}, AUC {auc_np:.4f}, "
      f"{nnz_np} non-zeros of {X.shape[1]}, ||w||_1 = {abs(clf.coef_).sum():.2f}, "
      f"fit {t_fit:.2f} s")

# %%
# Private fits: accuracy, AUC and sparsity against epsilon
# --------------------------------------------------------
# With ``epsilon`` and ``delta`` set, every one of the ``max_iter`` steps is an
# exponential-mechanism draw, and the total budget is split over the steps
# (last section).  ``delta`` should be well below ``1/N``.  The draws are
# random, so each budget is fitted with two seeds; the plot shows the mean and
# the range.
epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
seeds = [0, 1]
delta = 1e-6
results = np.empty((len(epsilons), len(seeds), 3))
private_models = {}
for a, eps in enumerate(epsilons):
    for b, seed in enumerate(seeds):
        model, _ = timed_fit(l1_bound=l1_bound, max_iter=max_iter, epsilon=eps,
                             delta=delta, random_state=seed)
        results[a, b] = evaluate(model)
        private_models[eps, seed] = model
    print(f"epsilon={eps:<5g} accuracy {results[a, :, 0].mean():.4f}  "
          f"AUC {results[a, :, 1].mean():.4f}  non-zeros {results[a, :, 2].mean():.0f}")

# The majority-class rate is the accuracy of always predicting "<=50K".
majority = max(y_test.mean(), 1 - y_test.mean())
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for k, (name, ref) in enumerate([("test accuracy", acc_np), ("test AUC", auc_np),
                                 ("non-zero weights", nnz_np)]):
    ax = axes[k]
    ax.fill_between(epsilons, results[:, :, k].min(axis=1),
                    results[:, :, k].max(axis=1), alpha=0.3)
    ax.semilogx(epsilons, results[:, :, k].mean(axis=1), "o-",
                label=f"private (mean, range of {len(seeds)} seeds)")
    ax.axhline(ref, color="k", ls="--", label="non-private")
    if k == 0:
        ax.axhline(majority, color="gray", ls=":", label="majority class")
    ax.set_xlabel("epsilon (total)")
    ax.set_title(name)
axes[0].legend(fontsize=8)
fig.suptitle(f"a9a, l1_bound={l1_bound:g}, max_iter={max_iter}, delta={delta:g}")
fig.tight_layout()

# %%
# Small budgets cost accuracy: the per-step budget ``epsilon'`` is then so small
# that the draws are close to uniform over the 2 x 123 signed vertices, which
# also spreads the weight over many coordinates (more non-zeros than the
# non-private fit, which keeps returning to the same few features).  The
# number of non-zeros is at most ``max_iter`` in every case: on
# high-dimensional data with ``max_iter`` much smaller than the number of
# features, the private model is sparse by construction.
#
# Frank-Wolfe gap history, and the ``refresh_tol`` knob
# -----------------------------------------------------
# For a convex loss the Frank-Wolfe gap
# ``g_t = <grad L(w_t), w_t - s_t>`` (``s_t`` the best vertex at step *t*,
# ``L`` the *mean* logistic loss) bounds the suboptimality,
# ``L(w_t) - L* <= g_t``, and ``min_{s <= t} g_s`` decreases like
# ``O(l1_bound^2 / t)``.  Non-private fits record ``g_t`` of the iterate before
# each step in ``gap_history_``.  Private fits do not (``gap_history_`` is
# ``None``): the gaps are computed from the data and are not part of the
# private release.
#
# **Staleness.**  Each step rescales the whole weight vector by
# ``(1 - eta_t)``, ``eta_t = 2 / (t + 2)``, so *every* margin ``x_i . w``
# changes, and for the logistic loss every row's gradient
# ``q_i = sigmoid(x_i . w) - y_i`` changes.  The fast solver stores ``w`` as a
# scalar times a vector, so the rescaling is O(1), and recomputes ``q_i`` only
# for the rows that contain the chosen feature.  Algorithm 2 as printed in the
# paper stops there and lets the other rows' gradients grow ever staler, so
# ``alpha`` drifts from the true gradient.  Here the solver multiplies the
# ``(1 - eta_t)`` factors since its last exact refresh and recomputes
# everything (gradients, gap, selector) as soon as the product drops below
# ``1 - refresh_tol``, so every stored ``q_i`` was computed at a margin within
# relative error ``refresh_tol`` of the current one:
#
# * ``refresh_tol=0``: refresh every step -- the steps of the standard solver;
# * ``refresh_tol=inf``: no refresh after the first step -- the paper's
#   Algorithm 2 (unbounded staleness);
# * in between, the refreshes become geometrically rarer as ``t`` grows.
#
# The schedule depends only on ``t``, never on the data (so it does not touch
# the privacy guarantee); the number of refreshes can be computed without
# the data:


def refresh_schedule_count(max_iter, refresh_tol):
    """Number of exact refreshes of the fast solver (data-independent)."""
    prod, count = 1.0, 0
    for t in range(1, max_iter + 1):
        if t == 1 or prod < 1.0 - refresh_tol:
            prod, count = 1.0, count + 1
        prod *= 1.0 - 2.0 / (t + 2.0)
    return count


def exact_gap(w):
    """Frank-Wolfe gap of the mean logistic loss on a9a at w, from scratch."""
    v = X @ w
    grad = X.T @ (0.5 * (1.0 + np.tanh(0.5 * v)) - y) / X.shape[0]
    return float(grad @ w + l1_bound * np.abs(grad).max())


fits = {"standard": timed_fit(l1_bound=l1_bound, max_iter=max_iter, solver="standard",
                              epsilon=None),
        "fast, refresh_tol=0": timed_fit(l1_bound=l1_bound, max_iter=max_iter,
                                         refresh_tol=0.0, epsilon=None),
        "fast, refresh_tol=0.5 (default)": (clf, t_fit),
        "fast, refresh_tol=inf (paper)": timed_fit(l1_bound=l1_bound, max_iter=max_iter,
                                                   refresh_tol=np.inf, epsilon=None)}

fig, ax = plt.subplots(figsize=(6.5, 4))
t = np.arange(1, max_iter + 1)
for (label, (model, _)), style in zip(fits.items(), ["-", "--", "-", "-"]):
    ax.loglog(t, np.minimum.accumulate(model.gap_history_), style, label=label,
              lw=3 if label == "standard" else 1.5)
gap_std = np.minimum.accumulate(fits["standard"][0].gap_history_)
ax.loglog(t, gap_std[9] * 10 / t, "k:", label="c / t (slope reference)")
ax.set_xlabel("iteration t")
ax.set_ylabel("min over s <= t of the recorded gap")
ax.set_title("Frank-Wolfe gap history on a9a")
ax.legend(fontsize=8)
fig.tight_layout()

w_std = fits["standard"][0].coef_[0]
print(f"{'solver':32s} {'time s':>6s} {'refreshes':>9s} {'schedule':>8s} "
      f"{'objective':>9s} {'min gap':>8s} {'exact gap':>9s} {'max|w-w_std|':>12s}")
for label, (model, seconds) in fits.items():
    if model.solver == "fast":
        refreshes = model.solver_stats_["n_refresh"]
        schedule = refresh_schedule_count(max_iter, model.refresh_tol)
    else:
        refreshes = schedule = "-"
    w = model.coef_[0]
    print(f"{label:32s} {seconds:6.2f} {refreshes!s:>9s} {schedule!s:>8s} "
          f"{model.objective(X, y):9.5f} {model.gap_history_.min():8.4f} "
          f"{exact_gap(w):9.4f} {np.abs(w - w_std).max():12.2e}")

# %%
# ``refreshes`` is counted by the solver (``solver_stats_["n_refresh"]``),
# ``schedule`` by the function above: they agree.  With ``refresh_tol=0`` the
# fast solver takes exactly the steps of the standard solver (the weights
# agree to rounding, and the dashed curve lies on the thick one).  With ``refresh_tol > 0`` it
# takes different steps, and
# its recorded gaps come from the maintained, bounded-stale gradient; judge
# it by the objective and by the exact gap computed from scratch.  The gap of
# a single iterate fluctuates a lot from step to step (the last column is the
# gap of the final weights only), so a single short run says little about
# which ``refresh_tol`` is best; the default 0.5 was chosen from the staleness
# study reported in :ref:`study_frank_wolfe_speed`.
#
# On ``a9a`` the fast solver has little to gain: with 123 features, each
# present in thousands of rows, every step touches a large part of the data.
# It pays off on high-dimensional sparse data, where most features occur in
# few rows.
#
# Standard vs fast solver on sparse high-dimensional data
# -------------------------------------------------------
# A synthetic problem shaped like hashed text: 2^16 binary features with
# power-law frequencies, about 50 non-zeros per row.  Each solver runs the same
# number of private steps on the same data, one after the other; the times and
# the number of exact refreshes are measured here (private fits keep only the
# data-independent counters in ``solver_stats_``: the others, such as the
# non-zeros read, depend on the data).  Wall-clock time is inflated when other programs share
# the machine; the kernels run on one thread, so the process's CPU time is
# printed too.
Xs, ys, w_true = make_sparse_classification(n_samples=5000, n_features=2**16,
                                            random_state=0)
print(f"synthetic: {Xs.shape}, nnz {Xs.nnz}, "
      f"{Xs.nnz / Xs.shape[0]:.1f} non-zeros per row")

timings = {}
for label, T, kw in [("standard + exponential", 60, dict(solver="standard")),
                     ("fast + noisy_max", 60, dict(mechanism="noisy_max")),
                     ("fast + grouped", 60, dict(mechanism="grouped")),
                     ("fast + grouped", 600, dict(mechanism="grouped"))]:
    model = FrankWolfeLassoClassifier(l1_bound=l1_bound, max_iter=T, epsilon=1.0,
                                      delta=delta, classes=[0, 1], random_state=0, **kw)
    t0, c0 = time.perf_counter(), time.process_time()
    model.fit(Xs, ys)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    timings[label, T] = cpu / T
    print(f"{label:22s} T={T:<4d} {wall / T * 1e3:7.3f} ms/iteration wall, "
          f"{cpu / T * 1e3:7.3f} CPU; refreshes {model.solver_stats_['n_refresh']}")
base = timings["standard + exponential", 60]
for (label, T), per_iter in timings.items():
    print(f"  CPU time per iteration, standard / ({label}, T={T}) = "
          f"{base / per_iter:.1f}")

# %%
# The standard solver's cost per iteration is fixed: two passes over the
# non-zeros of ``X`` (margins and gradient) and O(D) passes over the weights.
# The fast solver reads the rows that contain the chosen feature (the private
# mechanism mostly picks rare features) plus the full passes of its refreshes,
# which are frequent in the first iterations and then rarer, so its cost per
# iteration falls as ``max_iter`` grows.  Its selector is either
# ``noisy_max``, which still scores all 2D signed vertices every step (O(D),
# the paper's ablation), or the grouped sampler, which only updates the
# coordinates whose gradient changed.  The ratios depend on the machine, its
# load, the data and ``max_iter``; ``scripts/bench_frank_wolfe.py speed``
# measures them on the IMDB corpus with 2^20 features.
#
# Non-private selection works the same way (``mechanism="pairing_heap"``,
# ``"fibonacci_heap"`` or ``"argmax"``), but non-private Frank-Wolfe keeps
# choosing the most frequent, most predictive features, whose columns touch
# most rows: measure before expecting a speed-up there.
#
# What the privacy attributes mean
# --------------------------------
# **Neighbouring relation.**  Two data sets are neighbours when one is the
# other with one example added or removed (``neighbouring="add_remove"``, the
# default) or with one example replaced (``"replace_one"``).  The guarantee
# needs the *public* bound ``||x_i||_inf <= 1``; entries outside ``[-1, 1]``
# are clipped with a ``DataClippedWarning`` (or rejected with
# ``clip_data=False``).
#
# **Sensitivity and mechanism.**  At step *t* vertex ``s = +-l1_bound e_j``
# scores ``u(s) = -<s, alpha_t>`` with ``alpha_t = sum_i q_i x_i`` and
# ``q_i = sigmoid(x_i . w) - y_i`` in ``(-1, 1)``.  One example changes each
# coordinate of ``alpha_t`` by less than 1, so ``u`` has sensitivity
# ``l1_bound`` (``2 l1_bound`` for replace-one), i.e. ``l1_bound / N`` in units
# of the mean loss, as in Raff et al. (Appendix B.2).  The vertex is drawn with probability
# proportional to ``exp(epsilon' u(s) / (2 sensitivity))`` over all ``2D``
# signed vertices -- the sign is drawn too, not copied from the gradient as
# line 16 of the paper's Algorithm 2 does, which would release information
# outside the mechanism -- so each step is ``epsilon'``-DP.
#
# **Per-step budget and composition.**  ``epsilon_step_`` is that
# ``epsilon'``.  The ``max_iter`` steps compose adaptively.  With ``delta`` set,
# ``epsilon'`` is the exact inverse of the full advanced composition bound of
# Dwork, Rothblum and Vadhan,
# ``epsilon = epsilon' sqrt(2 T ln(1/delta)) + T epsilon' (e^epsilon' - 1)``
# (not the simplified bound of Raff et al., Appendix B.2, which drops the
# second term), or ``epsilon / T``
# (basic composition) if that is larger; ``composition_`` says which was
# used.  ``privacy_spent_`` is the ``(epsilon, delta)`` of the released
# weights.
priv = private_models[1.0, 0]
print(f"privacy_spent_ = {priv.privacy_spent_}")
print(f"epsilon_step_  = {priv.epsilon_step_:.8g}, composition_ = {priv.composition_!r}")


def advanced_step(steps):
    """Per-step epsilon whose ``steps``-fold advanced composition is 1."""
    return calibrate_parameter(
        lambda e: SelfComposedEvent(ExponentialMechanismEvent(e), steps), target_epsilon=1.0,
        delta=delta, low=1e-12, high=1.0, composition="advanced")


advanced = advanced_step(max_iter)
print(f"advanced composition's per-step epsilon for {max_iter} steps at delta={delta:g}: "
      f"{advanced:.8g}; basic composition: 1/{max_iter} = {1 / max_iter:.8g}")

# %%
# The estimator's ``epsilon_step_`` is a hair below the accounting module's
# inverse: the default ``"grouped"`` sampler works in floating point, and its
# documented worst-case deviation from the exact distribution, a tiny
# ``(gamma, delta)`` per draw, is charged to the budget before the split.
# With ``delta=None`` the steps compose by basic composition: pure
# ``epsilon``-DP, up to that floating-point ``delta``, which
# ``privacy_spent_`` reports.
pure, _ = timed_fit(l1_bound=l1_bound, max_iter=max_iter, epsilon=1.0, random_state=0)
print(f"delta=None: privacy_spent_ = {pure.privacy_spent_}, "
      f"epsilon_step_ = {pure.epsilon_step_:.8g}, composition_ = {pure.composition_!r}")

# %%
# How much does advanced composition help?  For few steps basic composition
# gives the larger per-step budget; beyond a crossover that depends on
# ``epsilon`` and ``delta`` advanced composition wins by a factor that grows
# like ``sqrt(T)``.  More steps are still not free: each one gets less budget,
# so each draw is noisier.
T_grid = np.unique(np.logspace(0, 6, 40).astype(int))
adv = np.array([advanced_step(int(k)) for k in T_grid])
wins = np.flatnonzero(adv > 1.0 / T_grid)
print(f"epsilon=1, delta={delta:g}: advanced composition gives the larger per-step "
      f"budget from T between {T_grid[wins[0] - 1]} and {T_grid[wins[0]]} on")
fig, ax = plt.subplots(figsize=(6.5, 4))
ax.loglog(T_grid, 1.0 / T_grid, label="basic: epsilon / T")
ax.loglog(T_grid, adv, label=f"advanced (full DRV bound, delta={delta:g})")
ax.loglog(T_grid, np.maximum(adv, 1.0 / T_grid), "k--", lw=1,
          label="used by the estimator (the larger)")
ax.plot([max_iter], [priv.epsilon_step_], "ro", label="epsilon_step_ of the fit above")
ax.set_xlabel("max_iter T")
ax.set_ylabel("per-step epsilon'")
ax.set_title("Per-step budget for a total epsilon = 1")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
