"""
Private text classification from raw documents, in a scikit-learn pipeline
==========================================================================

A first pipeline, ``make_pipeline(TfidfVectorizer(), DPNBLogisticClassifier(...))``,
leaks through its first step: the vectorizer's ``vocabulary_`` holds every word
of the training documents (rare ones, names, typos) and its ``idf_`` their exact
document frequencies, learned outside any guarantee.  This tutorial builds the
private pipeline instead:

* :class:`~dptoolkit.feature_extraction.DPTfidfVectorizer` learns its vocabulary
  by differentially private partition selection (Gopi et al. 2020;
  Desfontaines et al. 2022) or takes it from a public word list;
* :class:`~dptoolkit.linear_model.DPNBLogisticClassifier` fits the model;
* :func:`dptoolkit.pipeline.make_pipeline` splits one total budget between them
  and states one guarantee for the whole fit.

The model can then be read word by word.  The documents are synthetic
(sentiment words among common English words) so that the example runs in
seconds; ``scripts/study_text_features.py`` runs the same pipelines on IMDB and
the development corpora (:doc:`/studies/text_features`).
"""

import warnings

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer

from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.feature_extraction import (
    DPTfidfVectorizer,
    name_hashed_features,
    public_vocabulary,
)
from dptoolkit.linear_model import DPNBLogisticClassifier
from dptoolkit.pipeline import make_pipeline

# %%
# Documents
# ---------
# Each review has twelve common words (the 300 most frequent English words, a
# public list) and three sentiment words of its class; a few reviews carry a rare
# "name" that appears in that review only, the kind of word a private
# vocabulary must not reveal.
common = public_vocabulary(300)
positive = "great excellent wonderful superb brilliant lovely enjoyable".split()
negative = "awful terrible boring dull waste poor stupid".split()
data_rng = np.random.default_rng(0)


def reviews(n):
    y = data_rng.integers(0, 2, n)
    docs = []
    for i, label in enumerate(y):
        words = list(data_rng.choice(common, 12)) + list(
            data_rng.choice(positive if label else negative, 3))
        if i % 500 == 0:
            words.append(f"zorblax{i}")           # a word of this document only
        docs.append(" ".join(data_rng.permutation(words)))
    return docs, y


docs_train, y_train = reviews(4000)
docs_test, y_test = reviews(2000)
n_train = len(docs_train)
print(docs_train[0])

# %%
# The leaking pipeline warns
# --------------------------
# :func:`dptoolkit.pipeline.make_pipeline` builds a scikit-learn ``Pipeline``; its
# fit warns, naming the step, when a step learns from the data without privacy.
leaky = make_pipeline(TfidfVectorizer(),
                      DPNBLogisticClassifier(epsilon=1.0, n_samples_public=n_train,
                                             classes=[0, 1]))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", PrivacyLeakWarning)
    leaky.fit(docs_train, y_train)
print([str(w.message)[:80] for w in caught if "learns from" in str(w.message)])
print("rare words in the leaked vocabulary:",
      sorted(w for w in leaky[0].vocabulary_ if w.startswith("zorblax")))
print("guarantee of the pipeline:", leaky.privacy_spent_)

# %%
# The private pipeline: one budget, one guarantee
# -----------------------------------------------
# ``epsilon=1.0, delta=1e-5`` is the total.  The pipeline gives each private step
# an equal share of delta and the largest equal share of epsilon at which the
# accountant's figure for the composition of the two steps is the total (the
# Gaussian releases compose in Renyi DP, so each step gets more than half).
pipe = make_pipeline(DPTfidfVectorizer(),
                     DPNBLogisticClassifier(n_samples_public=n_train, classes=[0, 1]),
                     epsilon=1.0, delta=1e-5)
pipe.fit(docs_train, y_train)
for name, spent in pipe.privacy_steps_:
    print(f"{name}: (epsilon, delta) = ({spent[0]:.3f}, {spent[1]:.1e})")
print("the pipeline: (epsilon, delta) = ({:.3f}, {:.1e})".format(*pipe.privacy_spent_))
print("released vocabulary:", len(pipe[0].vocabulary_), "words; rare words:",
      sorted(w for w in pipe[0].vocabulary_ if w.startswith("zorblax")))
print(f"test accuracy: {pipe.score(docs_test, y_test):.3f}")

# %%
# The model, word by word
# -----------------------
# ``get_feature_names_out`` works through the pipeline, so the coefficients of
# the private model have names (reading them is post-processing: no cost).
names = pipe[:-1].get_feature_names_out()
coef = np.ravel(pipe[-1].coef_)
order = np.argsort(coef)
print("most negative:", list(names[order[:5]]))
print("most positive:", list(names[order[-5:]][::-1]))

# %%
# A public vocabulary
# -------------------
# With a public word list the vocabulary costs nothing, and without idf the
# vectorizer releases nothing: the whole budget goes to the model.
public = make_pipeline(DPTfidfVectorizer(public_vocabulary(2000), epsilon=1.0),
                       DPNBLogisticClassifier(epsilon=1.0, n_samples_public=n_train,
                                              classes=[0, 1]))
public.fit(docs_train, y_train)
print("vectorizer:", public[0].privacy_spent_, " pipeline:", public.privacy_spent_)
print(f"test accuracy: {public.score(docs_test, y_test):.3f}")

# %%
# Naming a hashed model's features
# --------------------------------
# The command line hashes words into columns (nothing is learned, nothing
# leaks) but its coefficients index buckets.  Hashing a public word list with the
# same vectorizer names the buckets.
hasher = HashingVectorizer(n_features=2**16, alternate_sign=False, norm=None)
hashed = make_pipeline(hasher, DPNBLogisticClassifier(epsilon=1.0, n_samples_public=n_train,
                                                      classes=[0, 1]))
hashed.fit(docs_train, y_train)
bucket_names = name_hashed_features(hasher, public_vocabulary(20000))
top = np.argsort(np.ravel(hashed[-1].coef_))[-5:][::-1]
print("most positive buckets:", [bucket_names[j] or f"bucket {j}" for j in top])
print(f"test accuracy: {hashed.score(docs_test, y_test):.3f}")

# %%
# The same on a Dask cluster, from a ``dask.bag``
# -----------------------------------------------
# Documents that outgrow one machine come as a ``dask.bag``.  dask-ml's
# ``HashingVectorizer`` hashes each partition where it lies (a Dask array of CSR
# row blocks whose sizes are not known in advance), the labels come from the same
# bag as a dask DataFrame column, and the private model fits them as they are:
# the workers compute exact sums, the noise is added once on the client, and the
# row counts the fit learns only line the labels up with the blocks (N is the
# public ``n_samples_public``).  A cluster in this process stands in for a real
# one; the hashed model's buckets are named with the public word list as above.
import dask.bag as db
from dask.distributed import Client, LocalCluster
from dask_ml.feature_extraction.text import HashingVectorizer as DaskHashingVectorizer

with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                  dashboard_address=None) as cluster, Client(cluster):
    records = db.from_sequence(
        [{"text": d, "label": int(c)} for d, c in zip(docs_train, y_train)], npartitions=4)
    X_dask = DaskHashingVectorizer(n_features=2**16, alternate_sign=False,
                                   norm=None).transform(records.pluck("text"))
    y_dask = records.to_dataframe(meta={"text": object, "label": np.int64})["label"]
    on_dask = DPNBLogisticClassifier(epsilon=1.0, n_samples_public=n_train, classes=[0, 1])
    on_dask.fit(X_dask, y_dask)
print("guarantee:", on_dask.privacy_spent_)
top = np.argsort(np.ravel(on_dask.coef_))[-5:][::-1]
print("most positive buckets:", [bucket_names[j] or f"bucket {j}" for j in top])
print(f"test accuracy: {on_dask.score(hasher.transform(docs_test), y_test):.3f}")
