"""
The default model: private naive-Bayes-scaled logistic regression
=================================================================

:class:`~dptoolkit.linear_model.DPNBLogisticClassifier` is the toolkit's default
private model (``python -m dptoolkit train`` uses it unless told otherwise).
This tutorial fits it on a synthetic problem that looks like hashed text, checks
its accuracy on held-out examples against two references (always predicting the
majority class, and the same model without privacy), reads the guarantee it
reports, shows how accuracy moves with epsilon, and ends with more than two
classes.

**What it computes** (Wang and Manning, 2012, made private; the module
``dptoolkit.linear_model._glm._nb_logistic`` gives the details): every row is
scaled to L2 norm 1; one Gaussian release of the per-class feature sums picks
the ``k`` most frequent features and their naive-Bayes log-count
ratios; then DP-SGD (Abadi et al., 2016) fits a logistic regression on the
rescaled rows.

**The guarantee.**  Neighbouring relation: add or remove one (example, label).
The release has L2 sensitivity 1 (rows of norm 1; Gaussian mechanism), each
DP-SGD step sums gradients of norm at most 1 over a Poisson sample with rate
``sampling_rate`` (subsampled Gaussian; Mironov, Talwar and Zhang, 2019), and
the release and the steps compose in Renyi DP to ``(epsilon, delta)``.  The
number of examples and the label set must be public: pass
``n_samples_public`` and ``classes``, or the estimator reads them from the data
and warns with :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from dptoolkit.datasets import make_sparse_classification
from dptoolkit.linear_model import DPNBLogisticClassifier, FrankWolfeLassoClassifier

# %%
# Data: a synthetic stand-in for hashed text
# ------------------------------------------
# :func:`~dptoolkit.datasets.make_sparse_classification` draws binary rows with
# about 50 non-zeros each from Zipf-like feature frequencies (as hashed words
# are), and labels from a logistic model with 20 informative features among
# 100,000.  Every entry is 0 or 1, so the public bound the mechanisms rely on
# (rows of bounded norm) holds by construction.  A quarter of the examples is
# held out: accuracy on the training examples says little about a model.
X, y, w_true = make_sparse_classification(n_samples=20_000, n_features=100_000,
                                          random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25,
                                                    random_state=0)
n_train = X_train.shape[0]
majority = max(y_test.mean(), 1 - y_test.mean())
print(f"{n_train} training and {X_test.shape[0]} test examples, "
      f"{X.shape[1]} features, {X.nnz / X.shape[0]:.1f} non-zeros per row")
print(f"majority-class accuracy on the test set: {majority:.3f}")

# %%
# A private fit at epsilon = 1
# ----------------------------
# ``n_samples_public`` and ``classes`` are public facts given to the estimator,
# so nothing about the data set's size or label set leaks through the fit.
# ``random_state`` fixes the noise so that this page is reproducible; a model
# that is released must be trained with ``random_state=None`` (fresh entropy),
# otherwise anyone who knows the seed knows the noise.
clf = DPNBLogisticClassifier(epsilon=1.0, delta=1e-5, n_samples_public=n_train,
                             classes=[0, 1], random_state=0)
clf.fit(X_train, y_train)
auc = roc_auc_score(y_test, clf.predict_proba(X_test)[:, 1])
print(f"private, epsilon = 1: test accuracy {clf.score(X_test, y_test):.3f}, "
      f"AUC {auc:.3f}, {np.count_nonzero(clf.coef_)} non-zero weights")

# The same model without privacy, for reference (it warns that it is not private).
nonprivate = DPNBLogisticClassifier(epsilon=None, classes=[0, 1], random_state=0)
nonprivate.fit(X_train, y_train)
print(f"non-private (epsilon=None): test accuracy {nonprivate.score(X_test, y_test):.3f}")

# %%
# What the guarantee is made of
# -----------------------------
# ``privacy_spent_`` is the (epsilon, delta) the fit satisfies.
# ``privacy_event_`` describes what ran -- one Gaussian release, then the
# Poisson-subsampled Gaussian steps -- and can be composed with other events by
# :class:`~dptoolkit.accounting.PrivacyAccountant` or a
# :class:`~dptoolkit.accounting.BudgetAccountant`.  The two noise multipliers are
# the standard deviations of the noise relative to the sensitivity (1): the
# release's, and the one of each DP-SGD step.
sigma_release, sigma_steps = clf.noise_multipliers_
print("privacy_spent_:", clf.privacy_spent_)
print(f"release noise multiplier {sigma_release:.2f}; {clf.n_steps_} DP-SGD steps "
      f"with sampling rate {clf.sampling_rate} and noise multiplier {sigma_steps:.2f}")
print("privacy_event_:", type(clf.privacy_event_).__name__)

# %%
# Which features did it keep?  The release picks the ``k``
# (default 5,000) features of largest noisy frequency; the planted informative
# features are among the frequent ones, so they should be kept.
informative = np.flatnonzero(w_true)
kept = np.isin(informative, clf.feature_indices_)
print(f"{kept.sum()} of the {informative.size} informative features are among "
      f"the {clf.feature_indices_.size} kept")

# %%
# Accuracy against epsilon
# ------------------------
# One fit per budget (a single noise draw each, so expect some scatter).  The
# defaults were not tuned on this data; they come from the loss's smoothness and
# public DP-SGD practice (see the estimator's docstring).
epsilons = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
accuracies = []
for eps in epsilons:
    model = DPNBLogisticClassifier(epsilon=eps, delta=1e-5, n_samples_public=n_train,
                                   classes=[0, 1], random_state=0).fit(X_train, y_train)
    accuracies.append(model.score(X_test, y_test))
    print(f"epsilon = {eps:<5g} test accuracy {accuracies[-1]:.3f}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogx(epsilons, accuracies, "o-", label="DPNBLogisticClassifier")
ax.axhline(nonprivate.score(X_test, y_test), color="k", ls="--", label="non-private")
ax.axhline(majority, color="grey", ls=":", label="majority class")
ax.set_xlabel("epsilon (delta = 1e-5)")
ax.set_ylabel("test accuracy")
ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
ax.legend(loc="lower right")
ax.set_title("Held-out accuracy of the default model")
fig.tight_layout()

# %%
# More than two classes
# ---------------------
# A three-class problem on the same rows: each class has 10 planted features
# among the frequent ones, and the label is the class of largest score plus
# Gumbel noise (a multinomial logit model).
classes3 = [0, 1, 2]
rng = np.random.default_rng(1)
frequent = np.argsort(np.asarray(X.sum(axis=0)).ravel())[::-1][20:200]
W = np.zeros((X.shape[1], 3))
for k in classes3:
    W[rng.choice(frequent, 10, replace=False), k] = 2.0
y3 = np.argmax(X @ W + rng.gumbel(size=(X.shape[0], 3)), axis=1)
X3_train, X3_test, y3_train, y3_test = train_test_split(X, y3, test_size=0.25,
                                                        random_state=0)
majority3 = np.bincount(y3_test).max() / y3_test.size
print(f"class shares in the test set: {np.bincount(y3_test) / y3_test.size}")

# %%
# The same model fits any number of classes: one Gaussian release of the K
# per-class sums (a row adds to exactly one of them, so the L2 sensitivity is 1
# as for two classes), the multinomial naive-Bayes log-probabilities of the kept
# features as the starting point, then DP-SGD on the softmax cross-entropy with
# per-example gradients clipped to 1.  The privacy event is the binary model's.
for eps in [1.0, 4.0, None]:
    clf3 = DPNBLogisticClassifier(epsilon=eps, n_samples_public=n_train,
                                  classes=classes3).fit(X3_train, y3_train)
    label = f"epsilon = {eps:g}" if eps else "non-private"
    print(f"3 classes, {label:<12} test accuracy {clf3.score(X3_test, y3_test):.3f} "
          f"(majority {majority3:.3f}), guarantee {clf3.privacy_spent_}")

# %%
# :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` also fits several
# classes (a multinomial logistic regression in an L1 ball, each step chosen by
# the exponential mechanism; see :ref:`tutorial_frank_wolfe`); on this problem it
# needs a larger budget for the same accuracy.
fw = FrankWolfeLassoClassifier(epsilon=4.0, delta=1e-5, n_samples_public=n_train,
                               classes=classes3).fit(X3_train, y3_train)
print(f"Frank-Wolfe, 3 classes, epsilon = 4: {fw.score(X3_test, y3_test):.3f}")

# References: S. Wang and C. Manning, *Baselines and Bigrams*, ACL 2012;
# M. Abadi et al., *Deep Learning with Differential Privacy*, CCS 2016;
# I. Mironov, K. Talwar and L. Zhang, *Renyi Differential Privacy of the Sampled
# Gaussian Mechanism*, 2019.
