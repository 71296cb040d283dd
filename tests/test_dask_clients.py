"""Dask input as users' tools make it: a ``dask.bag`` of documents hashed by
dask-ml's ``HashingVectorizer`` (row-chunk sizes unknown), labels as a Dask array
built from the bag or as a dask Series/DataFrame column.

The estimators learn the row-chunk sizes themselves (one pass, never used as N)
and fit with no extra step.  The cluster is the one of
``test_distributed_dask.py`` (two single-threaded worker processes); most checks
compare with the fit on the same array after ``compute_chunk_sizes()`` or with
the in-memory fit at the same seed (exact up to the summation order); the one
statistical check states its tolerance.
"""
import os
import sys
import tempfile
import warnings

import numpy as np
import pytest

pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed "
                    "(pip install dptoolkit[dask]); the distributed backend is optional")
pytest.importorskip("dask_ml", reason="dask-ml is not installed (pip install "
                    "dptoolkit[dask])")
import cloudpickle  # noqa: E402
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import dask.bag as db  # noqa: E402
from dask_ml.feature_extraction.text import HashingVectorizer  # noqa: E402
from sklearn.feature_extraction.text import HashingVectorizer as SkHashingVectorizer  # noqa: E402,E501

from dptoolkit.distributed import align_dask_X_y  # noqa: E402
from dptoolkit.linear_model import (DPNBLogisticClassifier, DPSGDClassifier,  # noqa: E402
                                    FrankWolfeLassoClassifier)
from dptoolkit.selection import DPSIS, PrivateSelectThenFit  # noqa: E402
from test_distributed_dask import client, live  # noqa: E402,F401  (the module's cluster)

# the workers cannot import this file: ship its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N, N_TEST, VOCAB, PARTS = 1000, 400, 300, 4
HASHING = dict(n_features=2**12, alternate_sign=False, norm=None)


def _corpus(n, seed, n_classes=2):
    """``n`` documents of 20 words from 300; class c favours words [30c, 30c + 30)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(VOCAB)])
    labels = rng.integers(0, n_classes, n)
    docs = []
    for c in labels:
        p = np.ones(VOCAB)
        p[30 * c:30 * c + 30] += 8.0
        docs.append(" ".join(rng.choice(words, 20, p=p / p.sum())))
    return docs, labels


def _load_part(docs, labels, marker_dir=None, i=0):
    """One partition of (document, label) records; with ``marker_dir``, each load
    leaves a file there (to count how often the partition is read)."""
    if marker_dir is not None:
        fd, _ = tempfile.mkstemp(prefix=f"part{i}-", dir=marker_dir)
        os.close(fd)
    return list(zip(docs, (int(v) for v in labels)))


def _bag(docs, labels, marker_dir=None, sizes=None):
    """A bag of (document, label) records in PARTS partitions (of ``sizes``)."""
    sizes = sizes or [len(docs) // PARTS] * PARTS
    cuts = np.cumsum([0, *sizes])
    return db.from_delayed([
        dask.delayed(_load_part, pure=False)(docs[a:b], labels[a:b], marker_dir, i)
        for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))])


def _labels_array(bag):
    """The bag's labels as a Dask array, one chunk of unknown size per partition."""
    return da.concatenate([
        da.from_delayed(dask.delayed(np.asarray)(part), shape=(np.nan,), dtype=np.int64)
        for part in bag.pluck(1).to_delayed()])


def _frame(bag):
    """The bag as a dask DataFrame (the columns' types given: nothing is read now)."""
    return bag.to_dataframe(meta={"text": object, "label": np.int64})


def _labels(bag, kind):
    if kind == "array":
        return _labels_array(bag)
    frame = _frame(bag)
    return frame["label"] if kind == "series" else frame[["label"]]


def _hashed(bag):
    X = HashingVectorizer(**HASHING).transform(bag.pluck(0))
    assert np.isnan(X.chunks[0]).all()     # as dask-ml makes it
    return X


def _quiet_fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the fixed seeds
        return model.fit(X, y)


def _nb(seed):
    return DPNBLogisticClassifier(epsilon=1.0, n_samples_public=N, classes=[0, 1],
                                  k=100, random_state=seed)


@pytest.mark.parametrize("kind", ["array", "series", "frame"])
def test_dpnb_fits_dask_ml_hashed_bag_as_in_memory(live, kind):
    """No ``compute_chunk_sizes()``: the release (vocabulary, ratios, event) is
    the in-memory one at the same seed, and the accuracy is the in-memory fit's
    within the noise of DP-SGD (whose lots are drawn per block on a cluster)."""
    docs, labels = _corpus(N, 0)
    bag = _bag(docs, labels)
    X, y = _hashed(bag), _labels(bag, kind)
    dist = _quiet_fit(_nb(7), X, y)
    mem = _quiet_fit(_nb(7), SkHashingVectorizer(**HASHING).transform(docs), labels)
    assert np.isnan(X.chunks[0]).all()     # the user's array is left as it was
    np.testing.assert_array_equal(dist.feature_indices_, mem.feature_indices_)
    np.testing.assert_allclose(dist.log_count_ratios_, mem.log_count_ratios_, rtol=1e-9)
    assert dist.privacy_event_ == mem.privacy_event_
    assert dist.n_features_in_ == HASHING["n_features"]
    test_docs, test_labels = _corpus(N_TEST, 1)
    X_test = SkHashingVectorizer(**HASHING).transform(test_docs)
    # 30 in-memory fits at seeds 0..29 scored 0.918 +- 0.020 (std) on this test
    # set, so two independent fits differ with std 0.028; 0.12 is 4.3 of those
    # stds: a false failure under 1e-4 (normal approximation; fewer here, where
    # both fits share the release's noise)
    assert abs(dist.score(X_test, test_labels) - mem.score(X_test, test_labels)) <= 0.12


def test_dpnb_and_dpsgd_release_what_the_known_chunks_release(live):
    """Learning the sizes is the user's ``compute_chunk_sizes()`` step: at the same
    seed the fit is the one on the array of known chunks, bit for bit."""
    docs, labels = _corpus(N, 0)
    bag = _bag(docs, labels)
    X, y = _hashed(bag), _labels(bag, "series")
    known_X = _hashed(bag).compute_chunk_sizes()
    known_y = da.from_array(labels, chunks=(known_X.chunks[0],))
    a, b = _quiet_fit(_nb(3), X, y), _quiet_fit(_nb(3), known_X, known_y)
    np.testing.assert_array_equal(a.theta_, b.theta_)

    def sgd():
        return DPSGDClassifier(epsilon=1.0, n_samples_public=N, classes=[0, 1],
                               n_epochs=2, random_state=5)

    a, b = _quiet_fit(sgd(), X, y), _quiet_fit(sgd(), known_X, known_y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.privacy_event_ == b.privacy_event_


def test_dpsis_and_select_then_fit_on_a_bag_as_in_memory(live):
    """DP-SIS and DP-SIS then binary Frank-Wolfe on the hashed bag, labels as a dask
    Series: the in-memory selection and model at the same seeds."""
    docs, labels = _corpus(N, 0)
    bag = _bag(docs, labels)
    X, y = _hashed(bag), _labels(bag, "series")
    Xm = SkHashingVectorizer(**HASHING).transform(docs)

    def sis(**kw):
        return DPSIS(k=40, bounds=(0.0, 4.0), y_bounds=(0, 1), n_samples_public=N,
                     random_state=0, **kw)

    dist, mem = _quiet_fit(sis(epsilon=1.0), X, y), _quiet_fit(sis(epsilon=1.0), Xm, labels)
    np.testing.assert_array_equal(dist.selected_features_, mem.selected_features_)

    def pipe():
        return PrivateSelectThenFit(
            sis(), FrankWolfeLassoClassifier(n_samples_public=N, random_state=0,
                                             max_iter=50),
            epsilon=1.0, delta=1e-5, classes=[0, 1])

    dist, mem = _quiet_fit(pipe(), X, y), _quiet_fit(pipe(), Xm, labels)
    np.testing.assert_array_equal(dist.support_, mem.support_)
    np.testing.assert_allclose(dist.estimator_.coef_, mem.estimator_.coef_, rtol=1e-9,
                               atol=1e-12)
    assert dist.privacy_spent_ == mem.privacy_spent_


def test_multinomial_frank_wolfe_on_a_bag_as_in_memory(live):
    """Three classes, labels as a Dask array from the bag: the multinomial
    Frank-Wolfe model of the in-memory fit at the same seed."""
    docs, labels = _corpus(N, 2, n_classes=3)
    bag = _bag(docs, labels)

    def fw():
        return FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=N,
                                         classes=[0, 1, 2], max_iter=30, random_state=0)

    dist = _quiet_fit(fw(), _hashed(bag), _labels(bag, "array"))
    mem = _quiet_fit(fw(), SkHashingVectorizer(**HASHING).transform(docs), labels)
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    assert dist.privacy_event_ == mem.privacy_event_


def test_the_sizes_and_labels_come_from_one_read_of_each_partition(live, tmp_path):
    """X's row counts and y's partitions are computed in one pass: dask-ml fuses the
    bag's reading into X's blocks, so each partition is read once for X and once for
    y, and no more (computing X's sizes, then y's, then gathering y reads it three
    times); the user's X keeps its unknown chunks."""
    docs, labels = _corpus(200, 0)
    sizes = [70, 30, 60, 40]
    bag = _bag(docs, labels, marker_dir=str(tmp_path), sizes=sizes)
    X, y = _hashed(bag), _labels(bag, "series")
    aligned, y_local, y_blocks = align_dask_X_y(X, y)
    reads = sorted(p.name.split("-")[0] for p in tmp_path.iterdir())
    assert reads == ["part0", "part0", "part1", "part1", "part2", "part2", "part3",
                     "part3"]
    assert aligned.chunks[0] == tuple(sizes) and y_blocks.chunks[0] == tuple(sizes)
    np.testing.assert_array_equal(y_local, labels)
    assert np.isnan(X.chunks[0]).all()


def test_private_fit_without_n_samples_public_reads_nothing(live, tmp_path):
    """The public N is required before any block is read: the sizes the pass learns
    are never a stand-in for it."""
    docs, labels = _corpus(200, 0)
    bag = _bag(docs, labels, marker_dir=str(tmp_path))
    model = DPNBLogisticClassifier(epsilon=1.0, classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match="n_samples_public"):
        model.fit(_hashed(bag), _labels(bag, "series"))
    assert list(tmp_path.iterdir()) == []
    assert not hasattr(model, "coef_")


@pytest.mark.parametrize("bad, match", [
    (lambda bag: _labels(bag, "series").repartition(npartitions=2),
     "y has 2 partitions, X has 4 row blocks"),
    (_frame,
     "one-column dask DataFrame, got a DataFrame of 2 columns"),
    (lambda bag: _labels_array(bag.map_partitions(lambda part: part[1:])),
     "chunk or partition 0 does not match X's row block 0"),
    (lambda bag: _labels(bag, "series").compute(), "y must be a Dask array"),
])
def test_labels_not_aligned_with_x_are_named(live, bad, match):
    docs, labels = _corpus(200, 0)
    bag = _bag(docs, labels)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    model = DPNBLogisticClassifier(epsilon=1.0, n_samples_public=200, classes=[0, 1],
                                   random_state=rng)
    with pytest.raises((ValueError, TypeError), match=match):
        model.fit(_hashed(bag), bad(bag))
    assert rng.bit_generator.state == state     # no noise drawn
    assert not hasattr(model, "coef_")


def test_an_empty_block_keeps_the_labels_dtype(live):
    """A row block without rows (a filtered partition) aligns too, and its empty
    labels (float64, as NumPy makes an array of ``[]``) do not turn integer labels
    into floats."""
    import scipy.sparse as sp

    rows, names = (2, 0, 3), ([0, 1], [], [2, 0, 1])
    X = da.concatenate([da.from_delayed(
        dask.delayed(sp.csr_matrix)(np.ones((n, 3))), shape=(np.nan, 3), dtype=np.float64,
        meta=sp.csr_matrix((0, 0))) for n in rows])
    y = da.concatenate([da.from_delayed(dask.delayed(np.array)(part), shape=(np.nan,),
                                        dtype=np.int64) for part in names])
    aligned, y_local, y_blocks = align_dask_X_y(X, y)
    assert aligned.chunks[0] == rows and y_blocks.chunks[0] == rows
    np.testing.assert_array_equal(y_local, [0, 1, 2, 0, 1])
    assert y_local.dtype.kind == "i"
