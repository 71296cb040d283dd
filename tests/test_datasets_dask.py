"""Loaders to Dask arrays, parallel hashing, and the block-by-block generator.

One ``LocalCluster`` of two single-threaded worker processes serves the Dask tests.
Every check is exact (the distributed loaders build their blocks with the in-memory
loaders' functions) or a comparison with an in-memory fit at the same seed (relative
1e-9: only the summation order differs); nothing here is statistical.
"""
import logging
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from dptoolkit.datasets import (load_libsvm, load_libsvm_dask, load_text_corpus,
                                load_text_corpus_dask, make_sparse_classification_blocked)
from dptoolkit.exceptions import PrivacyLeakWarning

distributed = pytest.importorskip(
    "dask.distributed", reason="dask[distributed] is not installed (pip install "
    "dptoolkit[dask]); the distributed backend is optional")

N_FEATURES = 2**12
WORDS = ("good bad film plot actor scene dull fine great awful story music long "
         "short funny sad").split()


def _write_corpus(root, n_per_class, layout="polarity", seed=0):
    """Documents of random words, one file per document, one folder per class."""
    rng = np.random.default_rng(seed)
    parts = {"polarity": ["txt_sentoken"],
             "imdb": ["aclImdb/train", "aclImdb/test"]}[layout]
    for part in parts:
        for cls, bias in (("neg", 0), ("pos", 8)):
            folder = root / part / cls
            folder.mkdir(parents=True)
            for i in range(n_per_class):
                words = rng.choice(WORDS[bias:bias + 8] + WORDS, size=rng.integers(3, 12))
                (folder / f"doc{i:04d}_{rng.integers(10)}.txt").write_bytes(
                    " ".join(words).encode("latin-1"))
    return root


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _same_csr(A, B):
    A, B = sp.csr_array(A), sp.csr_array(B)
    A.sort_indices()
    B.sort_indices()
    assert A.shape == B.shape
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_array_equal(A.data, B.data)


# ------------------------------------------------------------- text corpora
@pytest.mark.parametrize("layout,subset", [("polarity", "train"), ("polarity", "all"),
                                           ("imdb", "test"), ("imdb", "all")])
def test_text_corpus_dask_equals_in_memory(client, tmp_path, layout, subset):
    root = _write_corpus(tmp_path, 23, layout)
    X, y, names = load_text_corpus(root, subset, n_features=N_FEATURES)
    Xd, yd, names_d = load_text_corpus_dask(root, subset, n_features=N_FEATURES,
                                            documents_per_block=7)
    assert names_d == names and Xd.shape == X.shape and Xd.numblocks[1] == 1
    assert Xd.chunks[0] == yd.chunks[0] and max(Xd.chunks[0]) == 7
    _same_csr(Xd.compute(), X)   # every block hashed on a worker
    np.testing.assert_array_equal(yd.compute(), y)


def test_model_fitted_on_the_cluster_predicts_in_memory_and_back(client, tmp_path):
    """A private fit on the Dask array makes the in-memory fit's release (same seed;
    its DP-SGD lots are drawn per block, so the weights are another draw), and
    each model predicts the Dask blocks as it predicts the in-memory matrix."""
    from dptoolkit.linear_model import DPNBLogisticClassifier

    root = _write_corpus(tmp_path, 40)
    X, y, _ = load_text_corpus(root, "all", n_features=N_FEATURES)
    Xd, yd, _ = load_text_corpus_dask(root, "all", n_features=N_FEATURES,
                                      documents_per_block=25)

    def fit(data, labels):
        est = DPNBLogisticClassifier(epsilon=4.0, k=20, n_epochs=3,
                                     sampling_rate=0.2, n_samples_public=X.shape[0],
                                     classes=[0.0, 1.0], random_state=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)  # the fixed seed
            return est.fit(data, labels)

    local, cluster = fit(X, y), fit(Xd, yd)
    np.testing.assert_array_equal(cluster.feature_indices_, local.feature_indices_)
    np.testing.assert_allclose(cluster.log_count_ratios_, local.log_count_ratios_,
                               rtol=1e-9)
    X_blocks = Xd.compute()
    for model in (local, cluster):
        np.testing.assert_array_equal(model.predict(X_blocks), model.predict(X))
        np.testing.assert_allclose(model.decision_function(X_blocks),
                                   model.decision_function(X), rtol=1e-12)


def test_text_corpus_dask_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing"):
        load_text_corpus_dask(tmp_path / "missing")
    root = _write_corpus(tmp_path / "c", 3)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="documents_per_block"):
            load_text_corpus_dask(root, "all", documents_per_block=bad)
    with pytest.raises(TypeError, match="documents_per_block"):
        load_text_corpus_dask(root, "all", documents_per_block=2.5)
    with pytest.raises(ValueError, match="n_features"):
        load_text_corpus_dask(root, "all", n_features=0)
    empty = tmp_path / "empty" / "txt_sentoken"
    for cls in ("neg", "pos"):
        (empty / cls).mkdir(parents=True)
    with pytest.raises(ValueError, match="no documents"):
        load_text_corpus_dask(empty.parent, "all")


# ------------------------------------------------------------- LIBSVM shards
def _shards(tmp_path, n_features=50, sizes=(9, 4, 12), labels=(-1, 1)):
    rng = np.random.default_rng(1)
    paths, Xs, ys = [], [], []
    for k, n in enumerate(sizes):
        X = sp.random_array((n, n_features), density=0.2, format="lil", rng=rng)
        if k == 0:
            X[0, n_features - 1] = 1.0    # the top index is used
        X = X.tocsr()
        y = rng.choice(labels, size=n)
        if k == 1:
            y[:] = labels[0]          # a shard with one class only
        path = tmp_path / f"part-{k}.svm"
        dump_svmlight_file(X, y, str(path), zero_based=False)
        paths.append(path)
        Xs.append(X)
        ys.append(y)
    whole = tmp_path / "whole.svm"
    whole.write_bytes(b"".join(p.read_bytes() for p in paths))
    return paths, whole


def test_libsvm_shards_equal_the_concatenation(client, tmp_path):
    paths, whole = _shards(tmp_path)
    Xd, yd = load_libsvm_dask(paths, n_features=50)
    X, y = load_libsvm(whole, n_features=50)
    assert Xd.chunks[0] == (9, 4, 12) and yd.chunks[0] == (9, 4, 12)
    _same_csr(Xd.compute(), X)
    # the two labels are mapped over all shards (the one-class shard included)
    np.testing.assert_array_equal(yd.compute(), y)
    assert set(np.unique(y)) == {0.0, 1.0}
    _, y_raw = load_libsvm_dask(paths, n_features=50, binary_labels=False)
    np.testing.assert_array_equal(y_raw.compute(), 2 * y - 1)


def test_libsvm_shards_bad_input(client, tmp_path):
    paths, _ = _shards(tmp_path)
    empty = tmp_path / "empty.svm"
    empty.write_bytes(b"# nothing here\n")
    with pytest.raises(ValueError, match=r"empty\.svm holds no examples"):
        load_libsvm_dask([paths[0], empty], n_features=50)
    with pytest.raises(ValueError, match=r"part-\d\.svm, line \d+: .*exceeds n_features=40"):
        load_libsvm_dask(paths, n_features=40)
    with pytest.raises(FileNotFoundError, match="nope.svm"):
        load_libsvm_dask([paths[0], tmp_path / "nope.svm"], n_features=50)
    with pytest.raises(ValueError, match="n_features is required"):
        load_libsvm_dask(paths, n_features=None)
    with pytest.raises(ValueError, match="n_features must be >= 1"):
        load_libsvm_dask(paths, n_features=0)
    with pytest.raises(ValueError, match="at least one"):
        load_libsvm_dask([], n_features=50)
    with pytest.raises(TypeError, match="shards must be a sequence"):
        load_libsvm_dask(str(paths[0]), n_features=50)
    with pytest.raises(TypeError, match="shards must hold"):
        load_libsvm_dask([paths[0], 3], n_features=50)
    with pytest.raises(TypeError, match="binary_labels"):
        load_libsvm_dask(paths, n_features=50, binary_labels="yes")


# ------------------------------------------------------------- parallel hashing
def test_parallel_hashing_equals_serial(tmp_path):
    root = _write_corpus(tmp_path, 150)     # 300 documents: 100 chunks of 3
    X1, y1, _ = load_text_corpus(root, "all", n_features=N_FEATURES)
    X2, y2, _ = load_text_corpus(root, "all", n_features=N_FEATURES, n_jobs=2)
    X3, _, _ = load_text_corpus(root, "all", n_features=N_FEATURES, n_jobs=-1)
    _same_csr(X2, X1)
    _same_csr(X3, X1)
    np.testing.assert_array_equal(y2, y1)


@pytest.mark.parametrize("bad,exc", [(0, ValueError), (1.5, TypeError), (True, TypeError),
                                     ("2", TypeError)])
def test_n_jobs_is_validated(tmp_path, bad, exc):
    root = _write_corpus(tmp_path, 3)
    with pytest.raises(exc, match="n_jobs"):
        load_text_corpus(root, "all", n_jobs=bad)


# ------------------------------------------------------------- block generator
def test_blocked_generator_is_canonical_and_deterministic():
    kw = dict(avg_nnz=12.0, block_size=300, random_state=7)
    X, y, w = make_sparse_classification_blocked(1000, 5000, **kw)
    X2, y2, w2 = make_sparse_classification_blocked(1000, 5000, **kw)
    _same_csr(X, X2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(w, w2)
    assert X.shape == (1000, 5000) and X.dtype == np.float64 and X.has_canonical_format
    ref = X.copy()
    ref.sum_duplicates()                 # no duplicate (row, column) was stored
    assert ref.nnz == X.nnz and np.all(X.data == 1.0)
    assert np.all(np.diff(X.indptr) >= 1)
    assert X.indices.dtype == np.int32 and set(np.unique(y)) == {0.0, 1.0}
    assert np.count_nonzero(w) == 20
    # labels follow the planted model: the margin separates the classes on average
    margin = X @ w
    assert margin[y == 1].mean() > margin[y == 0].mean()
    # another block size is another stream of draws (the documented seed contract)
    X3, _, _ = make_sparse_classification_blocked(1000, 5000, **{**kw, "block_size": 1000})
    assert X3.nnz == X.nnz and (X3 != X).nnz > 0


@pytest.mark.parametrize("kw,exc,name", [
    (dict(n_samples=0), ValueError, "n_samples"),
    (dict(n_features=1), ValueError, "n_features"),
    (dict(n_features=50, n_informative=20), ValueError, "n_features"),
    (dict(avg_nnz=0.5), ValueError, "avg_nnz"),
    (dict(avg_nnz=600.0), ValueError, "avg_nnz"),
    (dict(zipf_exponent=-1.0), ValueError, "zipf_exponent"),
    (dict(coef_scale=0.0), ValueError, "coef_scale"),
    (dict(block_size=0), ValueError, "block_size"),
    (dict(block_size=2.5), TypeError, "block_size"),
    (dict(random_state="x"), TypeError, "random_state"),
])
def test_blocked_generator_bad_input(kw, exc, name):
    args = dict(n_samples=100, n_features=1000, avg_nnz=5.0)
    with pytest.raises(exc, match=name):
        make_sparse_classification_blocked(**{**args, **kw})
