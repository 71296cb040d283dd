"""
Choosing hyperparameters privately
==================================

Choosing hyperparameters by looking at private data is itself a privacy cost:
the chosen values, and the model refitted with them, depend on the data through
the validation scores.  :class:`~dptoolkit.model_selection.PrivateHyperparameterSearch`
puts that cost inside one guarantee.  It makes a *random* number K of private
training runs, each with hyperparameters drawn from the candidates and scored by
a noisy count of correct predictions on a held-out part of the data, and
releases only the best run's model.

**Why a random number of runs.**  Releasing the best of a fixed number of runs
costs that many runs.  With K drawn from a truncated negative binomial law
(geometric by default) the whole search costs about two to three times *one*
run in Renyi DP, however many runs it makes (Papernot and Steinke, 2022,
Theorem 2); with pure-DP runs and a geometric K it is 3 epsilon-DP (Liu and
Talwar, 2019, Theorem 3.4).  The search gives each run the largest epsilon for
which the whole is ``(epsilon, delta)``-DP.

**Neighbouring relation and public inputs.**  Add or remove one example.  The
number of examples ``n_samples_public`` and the label set ``classes`` are
public: they fix the size of the validation part (``validation_fraction`` of
them), which the analysis needs to be data-independent.
"""

from sklearn.model_selection import train_test_split

from dptoolkit.exceptions import BudgetExceededError
from dptoolkit.accounting import BudgetAccountant
from dptoolkit.datasets import make_sparse_classification
from dptoolkit.linear_model import DPNBLogisticClassifier, FrankWolfeLassoClassifier
from dptoolkit.model_selection import PrivateHyperparameterSearch

X, y, _ = make_sparse_classification(n_samples=20_000, n_features=100_000, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
n_train = X_train.shape[0]
majority = max(y_test.mean(), 1 - y_test.mean())

# %%
# A search over the default model
# -------------------------------
# Nine candidates (three vocabulary sizes times three L2 penalties), a mean of
# ``n_runs=10`` runs, and a total budget of (1, 1e-5) for everything: the runs,
# their noisy scores and the choice of the best.  The runs' estimator carries
# only the public label set; the search sets each run's epsilon, delta and
# ``n_samples_public`` (the size of its training part).
search = PrivateHyperparameterSearch(
    DPNBLogisticClassifier(classes=[0, 1]),
    {"k": [500, 2000, 5000], "alpha": [1e-5, 1e-4, 1e-3]},
    epsilon=1.0, delta=1e-5, n_samples_public=n_train, classes=[0, 1])
search.fit(X_train, y_train)
# The number of runs K is random and stays inside the search: Papernot and
# Steinke's Theorem 2 covers the best run with K hidden, so it is not released.
print(f"each run at epsilon {search.epsilon_run_:.3f}")
print("released:", search.best_params_,
      f"noisy validation accuracy {search.best_score_:.3f}")
print(f"test accuracy {search.score(X_test, y_test):.3f} (majority {majority:.3f})")
print("guarantee of the whole search:", search.privacy_spent_,
      type(search.privacy_event_).__name__)

# %%
# The released figures are the model, its hyperparameters and its noisy score.
# K and the other runs' hyperparameters, scores and warnings are never shown:
# the runs are silent (their progress bars are off and what they print is
# dropped) and only the released run's warnings reach the user, marked as
# outside the guarantee.  A run that fails is a run without a model; the
# search goes on, and its whole budget is charged once any run's noise ran.
#
# Is the search worth it?  Compare with one fit at the estimator's defaults,
# which were chosen without looking at this data (from theory and public
# practice) and so get the whole budget:
default = DPNBLogisticClassifier(epsilon=1.0, delta=1e-5, n_samples_public=n_train,
                                 classes=[0, 1], random_state=0).fit(X_train, y_train)
print(f"one fit at the defaults, epsilon 1: test accuracy "
      f"{default.score(X_test, y_test):.3f}")

# %%
# Each run of the search gets well under half of epsilon, so a search pays only
# when the candidates differ more than the loss of budget costs; when good
# defaults exist, as here, one fit with the whole budget is usually better.  The
# same holds on real text (see :ref:`study_accuracy_vs_epsilon`).
#
# With ``delta=0`` the search is pure DP: K is geometric, the estimator must be
# pure DP (for example ``FrankWolfeLassoClassifier(delta=None)``), and each run
# gets epsilon / 3, of which 0.9 trains and 0.1 pays for Laplace noise on the
# score (Liu and Talwar, 2019).  The guarantee's delta is then the union bound
# of the runs' floating-point deltas (the samplers' quantisation), about
# ``n_runs`` times 1e-10.

# %%
# Searches under a budget
# -----------------------
# A search is one private computation: given ``accountant=``, it checks its
# whole (epsilon, delta) against the budget before the first run and records
# one spend.  Two searches at epsilon 1 fit in a budget of 2.5; a third is
# refused before it runs.
budget = BudgetAccountant(epsilon=2.5, delta=1e-4)
for attempt in range(3):
    s = PrivateHyperparameterSearch(
        FrankWolfeLassoClassifier(classes=[0, 1]), {"l1_bound": [10.0, 50.0]},
        epsilon=1.0, delta=1e-5, n_samples_public=n_train, classes=[0, 1],
        accountant=budget)
    try:
        s.fit(X_train, y_train)
        print(f"search {attempt + 1}: chose {s.best_params_}")
    except BudgetExceededError as exc:
        print(f"search {attempt + 1} refused: {exc}")
print("ledger:", [(eps, delta, label) for eps, delta, label in budget.spends])

# %%
# References: N. Papernot and T. Steinke, *Hyperparameter Tuning with Renyi
# Differential Privacy*, ICLR 2022; J. Liu and K. Talwar, *Private Selection
# from Private Candidates*, STOC 2019.
