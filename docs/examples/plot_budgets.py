"""
One privacy budget across fits, cross-validation and grid search
================================================================

Every private fit on the same data spends privacy, and the spends add up: five
cross-validation folds at epsilon = 1 are five releases about the same people.
A :class:`~dptoolkit.accounting.BudgetAccountant` holds a total (epsilon, delta)
budget; an estimator given ``accountant=`` checks that its fit fits in what is
left *before any work*, and records the spend afterwards.  This tutorial shares
one budget between successive fits, then between the folds of
:func:`~sklearn.model_selection.cross_val_score` and the candidates of
:class:`~sklearn.model_selection.GridSearchCV`, and shows the fit that would
exceed it refused.

**Composition.**  With ``composition="basic"`` (the default) the budget tracks
(sum of epsilons, sum of deltas), which holds even when each fit is chosen after
seeing the previous ones (Dwork and Roth, 2014, Theorem 3.16).
``composition="events"`` composes the fits' privacy events in Renyi DP instead
(tighter for Gaussian and exponential-mechanism steps);
``composition="advanced"`` uses the advanced composition theorem (Dwork,
Rothblum and Vadhan, 2010), valid when the spends are fixed in advance.
"""

from collections import Counter

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, train_test_split

from dptoolkit.exceptions import BudgetExceededError
from dptoolkit.accounting import BudgetAccountant
from dptoolkit.datasets import make_sparse_classification
from dptoolkit.linear_model import DPNBLogisticClassifier

X, y, _ = make_sparse_classification(n_samples=15_000, n_features=50_000, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
n_train = X_train.shape[0]


def show(budget):
    """The ledger of a budget (identical spends counted once) and the total."""
    for (eps, delta, label), count in Counter(budget.spends).items():
        print(f"  {count} x {label}: epsilon {eps:g}, delta {delta:g}")
    eps, delta = budget.spent
    print(f"  spent (epsilon, delta) = ({eps:g}, {delta:g}) of "
          f"({budget.epsilon:g}, {budget.delta:g})")


# %%
# Successive fits under one budget
# --------------------------------
# A budget of epsilon = 2.5 allows two fits at epsilon = 1; the third would
# bring the total to 3 and is refused before it touches the data, with
# :class:`~dptoolkit.exceptions.BudgetExceededError`.  The ledger is unchanged
# by a refused fit.
budget = BudgetAccountant(epsilon=2.5, delta=1e-4)
for attempt in range(3):
    clf = DPNBLogisticClassifier(epsilon=1.0, delta=1e-5, n_samples_public=n_train,
                                 classes=[0, 1], accountant=budget)
    try:
        clf.fit(X_train, y_train)
        print(f"fit {attempt + 1}: test accuracy {clf.score(X_test, y_test):.3f}")
    except BudgetExceededError as exc:
        print(f"fit {attempt + 1} refused: {exc}")
show(budget)
print("what each of 2 more fits may still spend:", budget.remaining(2))

# %%
# Cross-validation: every fold is a release
# -----------------------------------------
# ``cross_val_score`` fits a clone of the estimator on each fold.  The clones
# share the estimator's accountant (an accountant is a ledger, never copied by
# :func:`sklearn.base.clone`), so the folds are charged to one budget.  With a
# budget of epsilon = 3, five folds at epsilon = 1 cannot all run: three are
# fitted and the fourth is refused.  ``error_score="raise"`` lets the refusal
# stop the whole evaluation (scikit-learn's default would record NaN and go on
# to the next fold, which the budget would refuse too).
#
# Each fold trains on 4/5 of the examples: with ``KFold`` that size follows from
# the public N and the number of folds, so it is public too and is passed as
# ``n_samples_public``.
cv = KFold(n_splits=5, shuffle=True, random_state=0)
budget = BudgetAccountant(epsilon=3.0, delta=1e-4)
estimator = DPNBLogisticClassifier(epsilon=1.0, delta=1e-5,
                                   n_samples_public=n_train * 4 // 5,
                                   classes=[0, 1], accountant=budget)
try:
    scores = cross_val_score(estimator, X_train, y_train, cv=cv, error_score="raise")
    print("fold accuracies:", np.round(scores, 3))
except BudgetExceededError as exc:
    print("refused:", exc)
show(budget)
assert len(budget.spends) == 3, "the folds must be charged to the shared budget"

# %%
# Grid search: plan the budget first
# ----------------------------------
# A grid search fits every candidate on every fold and then refits the best
# candidate on all the training data: ``n_candidates * n_folds + 1`` fits.  Three
# values of ``k`` on three folds at epsilon = 0.25 each, plus the
# refit, need epsilon = 10 * 0.25 = 2.5 under basic composition: the budget is
# set to exactly that, and every fit passes.
grid = {"k": [500, 2000, 5000]}
n_fits = len(grid["k"]) * 3 + 1
budget = BudgetAccountant(epsilon=n_fits * 0.25, delta=n_fits * 1e-5)
search = GridSearchCV(
    DPNBLogisticClassifier(epsilon=0.25, delta=1e-5, n_samples_public=n_train * 2 // 3,
                           classes=[0, 1], accountant=budget),
    grid, cv=KFold(n_splits=3, shuffle=True, random_state=0), error_score="raise")
search.fit(X_train, y_train)
print("best:", search.best_params_,
      f"test accuracy of the refitted model {search.score(X_test, y_test):.3f}")
show(budget)
assert len(budget.spends) == n_fits

# %%
# Nothing is left: a second search on the same data is refused at its first fit.
try:
    search.fit(X_train, y_train)
except BudgetExceededError as exc:
    print("second search refused:", exc)

# %%
# What the budget does and does not cover
# ---------------------------------------
# The ledger bounds what the *fits* reveal.  ``GridSearchCV`` also picks the
# best candidate by exact validation accuracies, computed on the training data
# without noise, and that choice is not a private computation: the released
# ``best_params_`` and the refitted model depend on the data through it.  (The
# refit above also trains on all the examples with ``n_samples_public`` of a
# fold, understating its N.)  To release a model chosen among candidates, use
# :class:`~dptoolkit.model_selection.PrivateHyperparameterSearch`, whose noisy
# scores and random number of runs put the selection inside one guarantee; see
# :ref:`sphx_glr_auto_examples_plot_private_search.py`.
#
# Without ``accountant=``, private fits are recorded in the process-wide ledger
# :func:`~dptoolkit.accounting.default_accountant` (an infinite budget that never
# refuses, but shows what was spent, unless
# :func:`~dptoolkit.accounting.set_default_accountant` gives it a finite one), and
# a fit made by scikit-learn's model selection warns with
# :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.  Model selection with
# ``n_jobs > 1`` is refused: the fits of a worker process would not reach this
# process's ledger.
#
# References: C. Dwork and A. Roth, *The Algorithmic Foundations of Differential
# Privacy*, 2014; C. Dwork, G. Rothblum and S. Vadhan, *Boosting and
# Differential Privacy*, FOCS 2010.
