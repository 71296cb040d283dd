"""Tests of dptoolkit.datasets: LIBSVM and text loaders, bounds, synthetic data.

Real files are found through the ``data_file`` fixture (skips when absent).  The
IMDB archive (50,000 files) is only read when ``DPTOOLKIT_RUN_SLOW=1``.
"""
import io
import os
import tarfile

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

from dptoolkit.datasets import (
    clip_rows,
    get_data_path,
    load_libsvm,
    load_text_corpus,
    make_sparse_classification,
    scale_by_max_abs,
)
from dptoolkit.exceptions import PrivacyLeakWarning

SPARSE_FORMATS = ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"]


# ---------------------------------------------------------------------------
# get_data_path / load_libsvm
# ---------------------------------------------------------------------------

def test_get_data_path_env(monkeypatch, tmp_path):
    monkeypatch.setenv("DPTOOLKIT_DATA", str(tmp_path))
    assert get_data_path("a9a.bz2") == tmp_path / "a9a.bz2"
    monkeypatch.delenv("DPTOOLKIT_DATA")
    assert str(get_data_path("x")).replace("\\", "/") == "../shared/data/x"


@pytest.mark.parametrize("coding", [(-1, 1), (0, 1), (1, 2), (2, 4)])
def test_load_libsvm_binary_codings_small(tmp_path, coding):
    lo, hi = coding
    f = tmp_path / "small.svm"
    f.write_text(f"{hi} 1:0.5 3:1\n{lo} 2:-1\n{hi} 3:2\n{lo} 1:1 2:1 3:1\n")
    X, y = load_libsvm(f, n_features=5)
    assert isinstance(X, sp.csr_array) and X.dtype == np.float64
    assert X.shape == (4, 5)
    np.testing.assert_array_equal(y, [1, 0, 1, 0])
    np.testing.assert_array_equal(X.toarray()[0], [0.5, 0, 1, 0, 0])
    # without mapping the file's coding is kept
    _, y_raw = load_libsvm(f, n_features=5, binary_labels=False)
    np.testing.assert_array_equal(y_raw, [hi, lo, hi, lo])


def test_load_libsvm_int32_indices_work_with_sklearn_lasso(tmp_path):
    # scikit-learn's sparse coordinate descent (Lasso, ElasticNet) refuses int64
    # indices, which load_svmlight_file returns; load_libsvm gives int32 when they fit
    from sklearn.linear_model import ElasticNet, Lasso

    from dptoolkit.linear_model import FrankWolfeLassoClassifier
    f = tmp_path / "tiny.svm"
    f.write_text("1 1:0.5 3:1\n-1 2:-1 4:0.25\n1 1:1 3:0.5\n-1 2:0.5 4:-1\n1 3:1\n")
    X, y = load_libsvm(f, n_features=4)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    assert X.has_canonical_format
    for est in [Lasso(alpha=0.01, fit_intercept=False), ElasticNet(alpha=0.01)]:
        coef_sparse = est.fit(X, y).coef_
        coef_dense = est.fit(X.toarray(), y).coef_
        np.testing.assert_allclose(coef_sparse, coef_dense, rtol=1e-6, atol=1e-10)
        assert np.any(coef_sparse != 0)
    # dptoolkit's own estimators take int32 indices as well
    clf = FrankWolfeLassoClassifier(l1_bound=1.0, max_iter=20, epsilon=None).fit(X, y)
    assert clf.coef_.shape == (1, 4) and np.all(np.isfinite(clf.coef_))


def test_index_dtype_falls_back_to_int64():
    from dptoolkit.datasets._csr import _index_dtype
    assert _index_dtype(10, 5) is np.int32
    assert _index_dtype(2**31, 5) is np.int64
    assert _index_dtype(10, 2**31) is np.int64


def test_load_libsvm_multiclass_unchanged(tmp_path):
    f = tmp_path / "multi.svm"
    f.write_text("1 1:1\n2 2:1\n3 1:1\n")
    _, y = load_libsvm(f, n_features=2)
    np.testing.assert_array_equal(y, [1, 2, 3])


def test_load_libsvm_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="no LIBSVM file"):
        load_libsvm(tmp_path / "nope.svm")


# (file, n_features, rows, positives) from MANIFEST.md: the larger label -> 1.
@pytest.mark.parametrize("name,n_features,n_rows,n_pos", [
    ("a9a.bz2", 123, 32561, 7841),                 # -1/+1
    ("phishing.bz2", 68, 11055, 6157),             # 0/1
    ("mushrooms.bz2", 112, 8124, 4208),            # 1/2
    ("breast-cancer_scale.bz2", 10, 683, 239),     # 2/4
])
def test_load_libsvm_real_label_mapping(data_file, name, n_features, n_rows, n_pos):
    X, y = load_libsvm(data_file(name), n_features=n_features)
    assert X.shape == (n_rows, n_features)
    assert set(np.unique(y)) == {0.0, 1.0}
    assert int(y.sum()) == n_pos


def test_load_libsvm_real_n_features(data_file):
    # a9a.t never uses feature 123: without n_features it comes out 122 wide.
    path = data_file("a9a.t.bz2")
    X_short, _ = load_libsvm(path)
    X, y = load_libsvm(path, n_features=123)
    assert X_short.shape == (16281, 122)
    assert X.shape == (16281, 123)
    assert X[:, 122].nnz == 0
    assert int(y.sum()) == 3846


# ---------------------------------------------------------------------------
# load_text_corpus on small archives built here
# ---------------------------------------------------------------------------

IMDB_DOCS = {
    "train/pos/0_9.txt": "A wonderful film.<br />Great acting, great story.",
    "train/pos/1_8.txt": "Loved it. Wonderful!",
    "train/neg/0_2.txt": "Terrible plot and awful acting.",
    "train/neg/1_1.txt": "Awful. Just awful, a waste of time.",
    "train/neg/2_3.txt": "Boring film.",
    "test/pos/0_10.txt": "Great great film",
    "test/neg/0_1.txt": "Awful film, caf\xe9 scene boring",  # latin-1 byte
}
IMDB_EXTRA = {  # must be ignored
    "train/unsup/0_0.txt": "unlabelled review",
    "train/urls_pos.txt": "http://example.org/1\n",
    "train/labeledBow.feat": "1 0:1\n",
    "imdb.vocab": "the\nfilm\n",
    "README": "readme",
}
NEWS_DOCS = {
    "20news-bydate-train/comp.graphics/1": "From: a\n\nrender the polygons with opengl",
    "20news-bydate-train/comp.sys.mac.hardware/2": "my mac powerbook needs ram",
    "20news-bydate-train/comp.sys.mac.hardware/3": "apple monitor flickers",
    "20news-bydate-train/rec.autos/4": "the engine of my car",
    "20news-bydate-train/rec.sport.hockey/5": "the goalie saved the puck",
    "20news-bydate-train/sci.space/6": "orbit of the shuttle",
    "20news-bydate-test/comp.graphics/7": "jpeg image formats",
    "20news-bydate-test/comp.sys.mac.hardware/8": "mac scsi drive",
    "20news-bydate-test/rec.autos/9": "brakes and tyres",
    "20news-bydate-test/rec.sport.hockey/10": "the playoffs start",
    "20news-bydate-test/sci.space/11": "launch window",
}


def _write_tree(root, docs):
    for rel, text in docs.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(text.encode("latin-1"))


def _make_archive(tmp_path, name, docs, prefix=""):
    src = tmp_path / f"src-{name}"
    _write_tree(src / prefix if prefix else src, docs)
    archive = tmp_path / f"{name}.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for child in sorted(src.iterdir()):
            tar.add(child, arcname=child.name)
    return archive, src


@pytest.fixture
def imdb_archive(tmp_path):
    return _make_archive(tmp_path, "imdb", {**IMDB_DOCS, **IMDB_EXTRA}, prefix="aclImdb")


@pytest.fixture
def news_archive(tmp_path):
    return _make_archive(tmp_path, "news", NEWS_DOCS)


def _expected_matrix(texts, n_features, ngram_range=(1, 2)):
    hv = HashingVectorizer(n_features=n_features, ngram_range=ngram_range, binary=True,
                           norm=None, alternate_sign=False)
    return hv.transform(texts).toarray()


def _docs_of(docs, prefix):
    """Texts of the documents under ``prefix``, in load_files order (sorted paths)."""
    return [docs[k] for k in sorted(k for k in docs if k.startswith(prefix))]


def test_text_imdb_archive(tmp_path, imdb_archive):
    archive, src = imdb_archive
    cache = tmp_path / "cache"
    X, y, names = load_text_corpus(archive, "train", n_features=2**10, cache_dir=cache)
    assert names == ["neg", "pos"]
    assert isinstance(X, sp.csr_array) and X.dtype == np.float64
    assert X.shape == (5, 2**10)                      # unsup, urls, .feat ignored
    np.testing.assert_array_equal(y, [0, 0, 0, 1, 1])  # neg folder first, then pos
    assert set(np.unique(X.data)) == {1.0}
    texts = _docs_of(IMDB_DOCS, "train/neg") + _docs_of(IMDB_DOCS, "train/pos")
    np.testing.assert_array_equal(X.toarray(), _expected_matrix(texts, 2**10))
    # the test split, the latin-1 byte read without error
    Xt, yt, _ = load_text_corpus(archive, "test", n_features=2**10, cache_dir=cache)
    np.testing.assert_array_equal(yt, [0, 1])
    np.testing.assert_array_equal(
        Xt.toarray(), _expected_matrix([IMDB_DOCS["test/neg/0_1.txt"],
                                        IMDB_DOCS["test/pos/0_10.txt"]], 2**10))
    # "all" = train then test
    Xa, ya, _ = load_text_corpus(archive, "all", n_features=2**10, cache_dir=cache)
    np.testing.assert_array_equal(Xa.toarray(), np.vstack([X.toarray(), Xt.toarray()]))
    np.testing.assert_array_equal(ya, np.concatenate([y, yt]))
    # the extracted folder, and the aclImdb folder itself, give the same matrix
    for folder in (src, src / "aclImdb"):
        Xd, yd, _ = load_text_corpus(folder, "train", n_features=2**10)
        np.testing.assert_array_equal(Xd.toarray(), X.toarray())
        np.testing.assert_array_equal(yd, y)


def test_text_archive_extracted_once(tmp_path, imdb_archive, monkeypatch):
    archive, _ = imdb_archive
    cache = tmp_path / "cache"
    X1, _, _ = load_text_corpus(archive, "train", n_features=64, cache_dir=cache)
    extracted = list((cache / "corpora").iterdir())
    assert len(extracted) == 1 and (extracted[0] / ".complete").exists()

    def no_open(*args, **kwargs):
        raise AssertionError("archive opened again although it is cached")

    monkeypatch.setattr(tarfile, "open", no_open)
    X2, _, _ = load_text_corpus(archive, "train", n_features=64, cache_dir=cache)
    np.testing.assert_array_equal(X1.toarray(), X2.toarray())
    assert list((cache / "corpora").iterdir()) == extracted


def test_text_cache_dir_env(tmp_path, imdb_archive, monkeypatch):
    archive, _ = imdb_archive
    monkeypatch.setenv("DPTOOLKIT_CACHE", str(tmp_path / "envcache"))
    load_text_corpus(archive, "test", n_features=64)
    assert len(list((tmp_path / "envcache" / "corpora").iterdir())) == 1


def test_text_20news_multiclass(tmp_path, news_archive):
    archive, _ = news_archive
    X, y, names = load_text_corpus(archive, "train", n_features=2**12,
                                   cache_dir=tmp_path / "c")
    assert names == ["comp.graphics", "comp.sys.mac.hardware", "rec.autos",
                     "rec.sport.hockey", "sci.space"]
    np.testing.assert_array_equal(y, [0, 1, 1, 2, 3, 4])
    texts = _docs_of(NEWS_DOCS, "20news-bydate-train")
    np.testing.assert_array_equal(X.toarray(), _expected_matrix(texts, 2**12))


@pytest.mark.parametrize("positive,negative", [
    ("rec.", "comp."),
    (["rec.autos", "rec.sport.hockey"], "comp"),
    ("rec.autos, rec.sport", ["comp.graphics", "comp.sys."]),
])
def test_text_20news_binary(tmp_path, news_archive, positive, negative):
    archive, _ = news_archive
    X, y, names = load_text_corpus(archive, "train", n_features=2**12,
                                   positive=positive, negative=negative,
                                   cache_dir=tmp_path / "c")
    # comp.graphics/1, comp.sys.mac/2, comp.sys.mac/3, rec.autos/4, rec.hockey/5
    np.testing.assert_array_equal(y, [0, 0, 0, 1, 1])
    texts = _docs_of(NEWS_DOCS, "20news-bydate-train/comp") + \
        _docs_of(NEWS_DOCS, "20news-bydate-train/rec")
    np.testing.assert_array_equal(X.toarray(), _expected_matrix(texts, 2**12))
    assert len(names) == 2


def test_text_20news_target_names_and_one_vs_rest(tmp_path, news_archive):
    archive, _ = news_archive
    cache = tmp_path / "c"
    _, _, names = load_text_corpus(archive, "test", n_features=64, positive="rec.",
                                   negative="comp.", cache_dir=cache)
    assert names == ["comp.*", "rec.*"]
    _, y, names = load_text_corpus(archive, "test", n_features=64, positive="sci.space",
                                   cache_dir=cache)
    assert names == ["rest", "sci.space"]
    np.testing.assert_array_equal(y, [0, 0, 0, 0, 1])
    _, y, names = load_text_corpus(archive, "test", n_features=64, negative="sci.",
                                   cache_dir=cache)
    assert names == ["sci.*", "rest"]
    np.testing.assert_array_equal(y, [1, 1, 1, 1, 0])


def test_text_ngram_range(tmp_path, news_archive):
    archive, _ = news_archive
    X1, _, _ = load_text_corpus(archive, "test", 2**12, (1, 1), cache_dir=tmp_path / "c")
    X2, _, _ = load_text_corpus(archive, "test", 2**12, (1, 2), cache_dir=tmp_path / "c")
    texts = _docs_of(NEWS_DOCS, "20news-bydate-test")
    np.testing.assert_array_equal(X1.toarray(), _expected_matrix(texts, 2**12, (1, 1)))
    assert X2.nnz > X1.nnz


def test_text_polarity_layout(tmp_path):
    docs = {"txt_sentoken/pos/cv000_1.txt": "good movie",
            "txt_sentoken/neg/cv000_2.txt": "bad movie",
            "txt_sentoken/neg/cv001_3.txt": "very bad"}
    _write_tree(tmp_path / "pol", docs)
    X, y, names = load_text_corpus(tmp_path / "pol", "all", n_features=64)
    assert names == ["neg", "pos"] and X.shape == (3, 64)
    np.testing.assert_array_equal(y, [0, 0, 1])
    with pytest.raises(ValueError, match="subset='train' is not available"):
        load_text_corpus(tmp_path / "pol", "train")


def test_text_errors(tmp_path, news_archive):
    archive, src = news_archive
    cache = tmp_path / "c"
    with pytest.raises(ValueError, match="subset must be one of"):
        load_text_corpus(archive, "validation", cache_dir=cache)
    with pytest.raises(FileNotFoundError):
        load_text_corpus(tmp_path / "missing.tar.xz")
    with pytest.raises(ValueError, match="matches no group"):
        load_text_corpus(src, positive="alt.")
    with pytest.raises(ValueError, match="both positive and negative"):
        load_text_corpus(src, positive="rec.", negative="rec.autos")
    with pytest.raises(ValueError, match="at least one group"):
        load_text_corpus(src, positive=" , ")
    with pytest.raises(ValueError, match="at least one group"):
        # one-vs-rest with nothing left for the positive side
        load_text_corpus(src, negative=["comp.", "rec.", "sci."])
    with pytest.raises(TypeError, match="positive must be"):
        load_text_corpus(src, positive=3)
    with pytest.raises(ValueError, match="n_features must be >= 1"):
        load_text_corpus(src, n_features=0)
    with pytest.raises(ValueError, match="n_features must be <= 2"):
        load_text_corpus(src, n_features=2**31)
    with pytest.raises(TypeError, match="n_features must be an integer"):
        load_text_corpus(src, n_features=1024.0)
    with pytest.raises(ValueError, match="ngram_range"):
        load_text_corpus(src, ngram_range=(2, 1))
    with pytest.raises(TypeError, match="ngram_range"):
        load_text_corpus(src, ngram_range=3)
    # a folder that is no known corpus, and a file that is no archive
    (tmp_path / "other" / "stuff").mkdir(parents=True)
    with pytest.raises(ValueError, match="unknown corpus layout"):
        load_text_corpus(tmp_path / "other")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ValueError, match="neither a folder nor a tar archive"):
        load_text_corpus(tmp_path / "notes.txt")
    # a .tar.xz that is not a tar file
    (tmp_path / "fake.tar.xz").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="neither a folder nor a tar archive"):
        load_text_corpus(tmp_path / "fake.tar.xz")
    # 20news with the test split only: train is missing
    only_test = tmp_path / "only_test"
    _write_tree(only_test, {k: v for k, v in NEWS_DOCS.items() if "-test/" in k})
    with pytest.raises(ValueError, match="available: \\['test'\\]"):
        load_text_corpus(only_test, "train")


def test_text_unsafe_archive_rejected(tmp_path):
    archive = tmp_path / "evil.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        data = b"pwned"
        info = tarfile.TarInfo("../../evil.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    cache = tmp_path / "deep" / "cache"
    with pytest.raises(ValueError, match="unsafe member"):
        load_text_corpus(archive, cache_dir=cache)
    assert not (tmp_path / "deep" / "evil.txt").exists()
    assert not (tmp_path / "evil.txt").exists()
    # no half-extracted folder is left behind
    assert list((cache / "corpora").iterdir()) == []


# ---------------------------------------------------------------------------
# load_libsvm: errors that name the file (and line)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("content,line,what", [
    ("1 1:1\nhello world\n", 2, "the label 'hello' is not a number"),
    ("1 1:1\n-1 0:1\n", 2, "indices start at 1"),
    ("1 3:1 2:1\n", 1, "sorted and unique"),
    ("# header\n1 1:x\n", 2, "the value in '1:x' is not a number"),
    ("1 1:1 junk\n", 1, "expected index:value"),
    ("1 99999999999:1\n", 1, "feature index 99999999999 is too large"),
])
def test_load_libsvm_bad_line_named(tmp_path, content, line, what):
    f = tmp_path / "bad.svm"
    f.write_text(content)
    with pytest.raises(ValueError) as info:
        load_libsvm(f)
    msg = str(info.value)
    assert f"{f}, line {line}:" in msg and what in msg


def test_load_libsvm_index_above_n_features_named(tmp_path):
    f = tmp_path / "wide.svm"
    f.write_text("1 1:1\n-1 2:1 7:1\n")
    with pytest.raises(ValueError, match=r"wide.svm, line 2: .*feature index 7 exceeds "
                                         r"n_features=5"):
        load_libsvm(f, n_features=5)


@pytest.mark.parametrize("content", ["", "\n\n", "# only a comment\n"])
def test_load_libsvm_empty_file_rejected(tmp_path, content):
    f = tmp_path / "empty.svm"
    f.write_text(content)
    with pytest.raises(ValueError, match=r"empty.svm holds no examples"):
        load_libsvm(f)


@pytest.mark.parametrize("n_features,exc,match", [
    (2**64, ValueError, r"n_features must be <= 2\*\*31 - 1"),
    (2**31, ValueError, r"n_features must be <= 2\*\*31 - 1"),
    (0, ValueError, "n_features must be >= 1"),
    (12.0, TypeError, "n_features must be an integer"),
])
def test_load_libsvm_n_features_checked(tmp_path, n_features, exc, match):
    f = tmp_path / "ok.svm"
    f.write_text("1 1:1\n")
    with pytest.raises(exc, match=match):
        load_libsvm(f, n_features=n_features)


@pytest.mark.parametrize("suffix", [".bz2", ".gz"])
def test_load_libsvm_truncated_compressed_named(tmp_path, suffix):
    import bz2
    import gzip

    text = "".join(f"{1 if i % 2 else -1} {i % 7 + 1}:1 9:0.5\n" for i in range(5000))
    full = (bz2.compress if suffix == ".bz2" else gzip.compress)(text.encode())
    f = tmp_path / f"cut.svm{suffix}"
    f.write_bytes(full[: len(full) // 2])
    with pytest.raises(ValueError, match=r"cut.svm\.(bz2|gz): truncated or corrupt "
                                         r"compressed file"):
        load_libsvm(f, n_features=9)
    # the whole file reads
    f.write_bytes(full)
    X, y = load_libsvm(f, n_features=9)
    assert X.shape == (5000, 9)


# ---------------------------------------------------------------------------
# load_text_corpus: corpora without their own split (seeded stratified split)
# ---------------------------------------------------------------------------

def _polarity_docs(n_neg=8, n_pos=8):
    docs = {f"txt_sentoken/neg/cv{i:03d}_{i}.txt": f"bad dull film number{i}"
            for i in range(n_neg)}
    docs.update({f"txt_sentoken/pos/cv{i:03d}_{i}.txt": f"good fine film number{i}"
                 for i in range(n_pos)})
    return docs


def test_text_polarity_seeded_split(tmp_path):
    from sklearn.model_selection import train_test_split

    docs = _polarity_docs(8, 12)
    archive, _ = _make_archive(tmp_path, "pol", docs)
    cache = tmp_path / "c"
    Xa, ya, names = load_text_corpus(archive, "all", n_features=2**12, cache_dir=cache)
    assert names == ["neg", "pos"] and Xa.shape == (20, 2**12)
    np.testing.assert_array_equal(ya, [0] * 8 + [1] * 12)
    Xtr, ytr, _ = load_text_corpus(archive, "train", n_features=2**12, cache_dir=cache)
    Xte, yte, _ = load_text_corpus(archive, "test", n_features=2**12, cache_dir=cache)
    # the documented rule: train_test_split of arange(n), test_size 0.25, seed 0,
    # stratified by class, each part in corpus order
    tr, te = train_test_split(np.arange(20), test_size=0.25, random_state=0, stratify=ya)
    tr, te = np.sort(tr), np.sort(te)
    np.testing.assert_array_equal(Xtr.toarray(), Xa.toarray()[tr])
    np.testing.assert_array_equal(Xte.toarray(), Xa.toarray()[te])
    np.testing.assert_array_equal(ytr, ya[tr])
    np.testing.assert_array_equal(yte, ya[te])
    # stratified: 25 % of each class held out; the parts are disjoint and complete
    assert Xte.shape[0] == 5 and np.bincount(yte.astype(int)).tolist() == [2, 3]
    assert np.bincount(ytr.astype(int)).tolist() == [6, 9]
    assert sorted(np.concatenate([tr, te]).tolist()) == list(range(20))
    # reproducible; other seed / size -> other split
    Xtr2, ytr2, _ = load_text_corpus(archive, "train", n_features=2**12, cache_dir=cache)
    np.testing.assert_array_equal(Xtr2.toarray(), Xtr.toarray())
    Xs, ys, _ = load_text_corpus(archive, "test", n_features=2**12, cache_dir=cache,
                                 test_size=0.5, random_state=3)
    tr3, te3 = train_test_split(np.arange(20), test_size=0.5, random_state=3, stratify=ya)
    np.testing.assert_array_equal(Xs.toarray(), Xa.toarray()[np.sort(te3)])
    assert np.bincount(ys.astype(int)).tolist() == [4, 6]
    # a binary task keeps each document in its part (the split is made before the
    # selection); here pos only -> one-vs-rest names
    _, yp, names = load_text_corpus(archive, "test", n_features=64, positive="pos",
                                    cache_dir=cache)
    assert names == ["rest", "pos"]
    np.testing.assert_array_equal(yp, yte)


def test_text_split_arguments_checked(tmp_path, news_archive):
    archive, src = news_archive
    _write_tree(tmp_path / "pol", _polarity_docs())
    pol = tmp_path / "pol"
    for kw in ({"test_size": 0.3}, {"random_state": 1}):
        with pytest.raises(ValueError, match="do not apply: the 20news-bydate corpus"):
            load_text_corpus(src, "train", **kw)
    with pytest.raises(ValueError, match="test_size must be a float in"):
        load_text_corpus(pol, test_size=1.0)
    with pytest.raises(ValueError, match="test_size must be a float in"):
        load_text_corpus(pol, test_size=0)
    with pytest.raises(TypeError, match="test_size must be"):
        load_text_corpus(pol, test_size="0.2")
    with pytest.raises(ValueError, match="random_state must be an int in"):
        load_text_corpus(pol, random_state=-1)
    with pytest.raises(TypeError, match="random_state must be an int"):
        load_text_corpus(pol, random_state=1.5)
    # a split that cannot be made (more test documents than the corpus has)
    with pytest.raises(ValueError, match="subset='test' is not available.*test_size=40"):
        load_text_corpus(pol, "test", test_size=40)


ENRON_DOCS = {
    "enron1/Summary.txt": "summary, ignored",
    "enron1/ham/0001.1999-12-10.farmer.ham.txt": "Subject: meeting\nsee you at noon",
    "enron1/ham/0002.1999-12-13.farmer.ham.txt": "Subject: gas nomination\nvolumes",
    "enron1/spam/0003.2003-12-18.GP.spam.txt": "Subject: cheap meds\nbuy now",
    "enron2/ham/0004.2001-04-02.williams.ham.txt": "Subject: re: report\nattached",
    "enron2/spam/0005.2001-04-03.GP.spam.txt": "Subject: win money\nclick here",
    "enron2/spam/0006.2001-04-04.GP.spam.txt": "Subject: viagra\norder today",
}


def test_text_enron_layout(tmp_path):
    archive, src = _make_archive(tmp_path, "enron", ENRON_DOCS)
    X, y, names = load_text_corpus(archive, "all", n_features=2**10,
                                   cache_dir=tmp_path / "c")
    assert names == ["ham", "spam"]
    # class-major: ham of enron1, enron2, then spam of enron1, enron2; Summary.txt ignored
    texts = [ENRON_DOCS[k] for k in sorted(ENRON_DOCS, key=lambda k: (k.split("/")[1], k))
             if "/ham/" in k or "/spam/" in k]
    np.testing.assert_array_equal(y, [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(X.toarray(), _expected_matrix(texts, 2**10))
    # the seeded split: 6 documents, 3 per class -> 2 test documents, one per class
    _, yte, _ = load_text_corpus(archive, "test", n_features=64, cache_dir=tmp_path / "c")
    np.testing.assert_array_equal(yte, [0, 1])
    _, ytr, _ = load_text_corpus(archive, "train", n_features=64, cache_dir=tmp_path / "c")
    np.testing.assert_array_equal(ytr, [0, 0, 1, 1])
    # one part on its own ({ham,spam} directly), and a binary task
    X1, y1, names = load_text_corpus(src / "enron1", "all", n_features=2**10,
                                     positive="spam")
    assert names == ["rest", "spam"]
    np.testing.assert_array_equal(y1, [0, 0, 1])
    # an Enron folder without any document
    (tmp_path / "hollow" / "enron1" / "ham").mkdir(parents=True)
    with pytest.raises(ValueError, match="no documents in .*enron1"):
        load_text_corpus(tmp_path / "hollow", "all")


SMS_LINES = ("ham\tGo until jurong point, crazy..\n"
             "ham\tOk lar... Joking wif u oni...\n"
             "spam\tFree entry in 2 a wkly comp to win FA Cup\n"
             "\n"
             "ham\tU dun say so early hor\n"
             "spam\tWINNER!! claim your prize\n"
             "ham\tNah I don't think he goes to usf\n")


def test_text_label_tab_text_layout(tmp_path):
    src = tmp_path / "src-sms"
    src.mkdir()
    (src / "SMSSpamCollection").write_text(SMS_LINES)
    archive = tmp_path / "sms.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(src / "SMSSpamCollection", arcname="SMSSpamCollection")
    lines = [ln.split("\t", 1) for ln in SMS_LINES.splitlines() if ln]
    X, y, names = load_text_corpus(archive, "all", n_features=2**10,
                                   cache_dir=tmp_path / "c")
    assert names == ["ham", "spam"]
    np.testing.assert_array_equal(y, [lab == "spam" for lab, _ in lines])
    np.testing.assert_array_equal(X.toarray(), _expected_matrix([t for _, t in lines], 2**10))
    # the file itself, a folder holding it, and any *.tsv file read the same
    (tmp_path / "msgs.tsv").write_text(SMS_LINES)
    for where in (src / "SMSSpamCollection", src, tmp_path / "msgs.tsv"):
        Xd, yd, _ = load_text_corpus(where, "all", n_features=2**10)
        np.testing.assert_array_equal(Xd.toarray(), X.toarray())
        np.testing.assert_array_equal(yd, y)
    # the seeded split: 4 ham + 2 spam -> test holds 1 ham and 1 spam
    _, yte, _ = load_text_corpus(src, "test", n_features=64)
    assert sorted(yte.tolist()) == [0.0, 1.0]
    _, ytr, _ = load_text_corpus(src, "train", n_features=64)
    assert sorted(ytr.tolist()) == [0.0, 0.0, 0.0, 1.0]


def test_text_label_tab_text_errors(tmp_path):
    bad = tmp_path / "bad" / "SMSSpamCollection"
    bad.parent.mkdir()
    bad.write_text("ham\tfine\nspam no tab here\n")
    with pytest.raises(ValueError, match=r"SMSSpamCollection, line 2: expected "
                                         r"'label<TAB>text'"):
        load_text_corpus(bad, "all")
    with pytest.raises(ValueError, match=r"SMSSpamCollection, line 2"):
        load_text_corpus(bad.parent, "all")
    bad.write_text("")
    with pytest.raises(ValueError, match=r"SMSSpamCollection holds no documents"):
        load_text_corpus(bad, "all")


# --------------------------------------------------------------------- Reuters-21578

def _sgm_doc(newid, split, topics_attr, topics, title, body, unproc=False):
    topic_tags = "".join(f"<D>{t}</D>" for t in topics)
    if unproc:
        text = f'<TEXT TYPE="UNPROC">&#2;\n{body}\n</TEXT>'
    else:
        text = (f"<TEXT>&#2;\n<TITLE>{title}</TITLE>\n<DATELINE>    NEW YORK, March 1 - "
                f"</DATELINE><BODY>{body}\n Reuter\n&#3;</BODY></TEXT>")
    return (f'<REUTERS TOPICS="{topics_attr}" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" '
            f'OLDID="{5000 + newid}" NEWID="{newid}">\n<DATE> 1-MAR-1987 09:00:00.00</DATE>\n'
            f"<TOPICS>{topic_tags}</TOPICS>\n<PLACES><D>usa</D></PLACES>\n<PEOPLE></PEOPLE>\n"
            f"{text}\n</REUTERS>\n")


# (newid, LEWISSPLIT, TOPICS attribute, topics, title, body, unproc)
REUTERS_DOCS = [
    (1, "TRAIN", "YES", ["earn"], "PROFIT UP", "net profit rose &lt;5 pct&gt;", False),
    (2, "TRAIN", "YES", ["acq"], "FIRM BUYS RIVAL", "the takeover was agreed", False),
    (3, "TRAIN", "YES", ["earn", "acq"], "MERGER AND EARNINGS", "both topics", False),
    (4, "TRAIN", "NO", ["earn"], "NOT MODAPTE", "topics attribute no", False),
    (5, "TRAIN", "YES", [], "NO TOPIC", "no topic at all", False),
    (6, "TRAIN", "YES", ["grain", "wheat"], "WHEAT CROP", "wheat harvest", False),
    (7, "NOT-USED", "YES", ["earn"], "UNUSED", "not used", False),
    (8, "TEST", "YES", ["earn"], "QUARTERLY", "dividend declared", False),
    (9, "TEST", "YES", ["acq"], "", "unprocessed acquisition text", True),
    (10, "TEST", "YES", ["wheat", "grain"], "GRAIN EXPORTS", "grain shipped", False),
    (11, "TEST", "YES", ["crude"], "OIL", "crude only in test", False),
]


def _reuters_tree(root, docs=REUTERS_DOCS):
    root.mkdir(parents=True)
    header = '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n'
    (root / "reut2-000.sgm").write_text(header + "".join(_sgm_doc(*d) for d in docs[:6]))
    (root / "reut2-001.sgm").write_text(header + "".join(_sgm_doc(*d) for d in docs[6:]))
    (root / "README.txt").write_text("readme")
    return root


def _reuters_text(newid):
    d = REUTERS_DOCS[newid - 1]
    import html
    if d[6]:
        return f"\n{d[5]}\n"
    return html.unescape(f"{d[4]}\n{d[5]}\n Reuter\n&#3;")


def test_text_reuters_modapte(tmp_path):
    src = _reuters_tree(tmp_path / "src" / "reuters21578")
    archive = tmp_path / "reuters.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(src, arcname="reuters21578")
    cache = tmp_path / "c"
    # ModApte (TRAIN/TEST with TOPICS="YES"), documents with a topic seen in both parts
    # (acq, earn, grain, wheat; crude is in test only): train 1, 2, 3, 6; test 8, 9, 10
    X, y, names = load_text_corpus(archive, "train", n_features=2**12, positive="earn",
                                   cache_dir=cache)
    assert names == ["rest", "earn"]
    np.testing.assert_array_equal(y, [1, 0, 1, 0])
    texts = [_reuters_text(i) for i in (1, 2, 3, 6)]
    np.testing.assert_array_equal(X.toarray(), _expected_matrix(texts, 2**12))
    assert "<5 pct>" in texts[0]                   # entities decoded
    Xt, yt, _ = load_text_corpus(archive, "test", n_features=2**12, positive="earn",
                                 cache_dir=cache)
    np.testing.assert_array_equal(yt, [1, 0, 0])
    np.testing.assert_array_equal(
        Xt.toarray(), _expected_matrix([_reuters_text(i) for i in (8, 9, 10)], 2**12))
    _, ya, _ = load_text_corpus(archive, "all", n_features=64, positive="earn",
                                cache_dir=cache)
    np.testing.assert_array_equal(ya, [1, 0, 1, 0, 1, 0, 0])
    # both sides named: a document with topics on both sides (3) is dropped
    _, y2, names = load_text_corpus(src, "train", n_features=64, positive="earn",
                                    negative="acq")
    assert names == ["acq", "earn"]
    np.testing.assert_array_equal(y2, [1, 0])
    # an exact topic name matches only itself; negative only -> the positive side is rest
    _, y3, names = load_text_corpus(src, "train", n_features=64, negative="grain")
    assert names == ["grain", "rest"]
    np.testing.assert_array_equal(y3, [1, 1, 1, 0])
    # no task given: single-topic documents of the most frequent training topics
    _, y4, names = load_text_corpus(src, "train", n_features=64)
    assert names == ["acq", "earn"]
    np.testing.assert_array_equal(y4, [1, 0])        # documents 1 (earn), 2 (acq)
    _, y5, _ = load_text_corpus(src, "test", n_features=64)
    np.testing.assert_array_equal(y5, [1, 0])        # documents 8 (earn), 9 (acq)
    # own split: no seeded-split arguments, unknown topic named
    with pytest.raises(ValueError, match="do not apply: the reuters21578 corpus"):
        load_text_corpus(src, "train", test_size=0.2)
    with pytest.raises(ValueError, match="positive='crude' matches no group"):
        load_text_corpus(src, "train", positive="crude")


def test_text_reuters_bad_sgml_named(tmp_path):
    src = _reuters_tree(tmp_path / "r")
    f = src / "reut2-001.sgm"
    text = f.read_text()
    f.write_text(text[: text.rindex("</REUTERS>")])          # the last element cut
    line = text[: text.rindex("<REUTERS")].count("\n") + 1
    with pytest.raises(ValueError, match=rf"reut2-001.sgm, line {line}: <REUTERS> element "
                                         r"without </REUTERS>"):
        load_text_corpus(src, "train", positive="earn")


# ------------------------------------------------------------ archives and the cache

@pytest.mark.parametrize("fraction", [0.3, 0.8])
def test_text_truncated_archive_named(tmp_path, fraction):
    docs = {f"aclImdb/{s}/{c}/{i}_1.txt": f"{c} review {i} " + "x" * (i % 97) * 50
            for s in ("train", "test") for c in ("neg", "pos") for i in range(200)}
    archive, _ = _make_archive(tmp_path, "imdb", docs)
    data = archive.read_bytes()
    cut = tmp_path / "cut.tar.xz"
    cut.write_bytes(data[: int(len(data) * fraction)])
    cache = tmp_path / "c"
    with pytest.raises(ValueError, match=r"cut.tar.xz: truncated or corrupt archive"):
        load_text_corpus(cut, "train", n_features=64, cache_dir=cache)
    # nothing half-extracted is left behind, and the whole archive still loads
    assert list((cache / "corpora").iterdir()) == []
    X, _, _ = load_text_corpus(archive, "train", n_features=64, cache_dir=cache)
    assert X.shape == (400, 64)


def test_text_cache_announced_once(tmp_path, imdb_archive, capsys, monkeypatch):
    archive, _ = imdb_archive
    monkeypatch.setenv("DPTOOLKIT_CACHE", str(tmp_path / "envcache"))
    load_text_corpus(archive, "train", n_features=64)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 2    # the extraction, then the hashed-features cache
    assert f"hashed features are cached in {tmp_path / 'envcache' / 'features'}" in lines[1]
    folder = next((tmp_path / "envcache" / "corpora").iterdir())
    n_bytes = sum(len(v.encode("latin-1")) for v in {**IMDB_DOCS, **IMDB_EXTRA}.values())
    assert f"extracted {archive.name} ({n_bytes} bytes of files, " in lines[0]
    assert f" on disk) to {folder}" in lines[0]
    assert "DPTOOLKIT_CACHE" in lines[0]
    # reused: silent
    load_text_corpus(archive, "test", n_features=64)
    assert capsys.readouterr().err == ""
    # the same load again reads the cached features: silent too
    load_text_corpus(archive, "test", n_features=64)
    assert capsys.readouterr().err == ""
    # cache_dir wins over the environment variable
    load_text_corpus(archive, "test", n_features=64, cache_dir=tmp_path / "other")
    assert str(tmp_path / "other" / "corpora") in capsys.readouterr().err


def test_hashed_features_of_an_archive_are_cached(tmp_path, imdb_archive, monkeypatch):
    """The second load of an archive with the same options reads the stored matrix (no
    extraction, no hashing); other options, or a changed archive, hash again."""
    from dptoolkit.datasets import _corpora

    archive, _ = imdb_archive
    cache = tmp_path / "cache"
    X1, y1, n1 = load_text_corpus(archive, "train", n_features=2**10, cache_dir=cache)
    stored = list((cache / "features").iterdir())
    assert len(stored) == 1 and stored[0].suffix == ".npz"

    def no_hash(*args, **kwargs):
        raise AssertionError("hashed again although the features are cached")

    monkeypatch.setattr(_corpora, "hash_documents", no_hash)
    monkeypatch.setattr(tarfile, "open", no_hash)
    X2, y2, n2 = load_text_corpus(archive, "train", n_features=2**10, cache_dir=cache)
    assert isinstance(X2, sp.csr_array) and X2.dtype == np.float64
    np.testing.assert_array_equal(X2.toarray(), X1.toarray())
    np.testing.assert_array_equal(y2, y1)
    assert n2 == n1
    # another option is another entry: it hashes (and fails here, by design)
    with pytest.raises(AssertionError, match="hashed again"):
        load_text_corpus(archive, "train", n_features=2**11, cache_dir=cache)
    monkeypatch.undo()
    # a changed archive (same name) is another entry
    changed, _ = _make_archive(tmp_path / "changed", "imdb", {
        **IMDB_DOCS, **IMDB_EXTRA, "train/neg/99_1.txt": "a different review"},
        prefix="aclImdb")
    archive.write_bytes(changed.read_bytes())
    X3, _, _ = load_text_corpus(archive, "train", n_features=2**10, cache_dir=cache)
    assert X3.shape[0] == X1.shape[0] + 1
    assert len(list((cache / "features").iterdir())) == 2


# ---------------------------------------------------------------------------
# load_text_corpus on the real archives
# ---------------------------------------------------------------------------

def test_text_20news_real_comp_vs_rec(data_file):
    # MANIFEST.md: comp.* (5 groups) vs rec.* (4 groups): train 5,325
    # (comp 2,936 / rec 2,389), test 3,545 (comp 1,955 / rec 1,590).
    path = data_file("text/20news-bydate.tar.xz")
    for subset, n_comp, n_rec in [("train", 2936, 2389), ("test", 1955, 1590)]:
        X, y, names = load_text_corpus(path, subset, n_features=2**18,
                                       positive="rec.", negative="comp.")
        assert names == ["comp.*", "rec.*"]
        assert X.shape == (n_comp + n_rec, 2**18)
        assert int((y == 0).sum()) == n_comp and int(y.sum()) == n_rec
        assert X.data.min() == 1.0 and X.data.max() == 1.0
        assert np.diff(X.indptr).min() > 0  # every post has tokens


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("DPTOOLKIT_RUN_SLOW") != "1",
                    reason="IMDB (50,000 files) is read only with DPTOOLKIT_RUN_SLOW=1")
def test_text_imdb_real(data_file):
    path = data_file("text/aclImdb-train-test.tar.xz")
    X, y, names = load_text_corpus(path, "train")
    assert names == ["neg", "pos"]
    assert X.shape == (25000, 2**20)
    assert int(y.sum()) == 12500
    assert X.data.min() == 1.0 and X.data.max() == 1.0


# ---------------------------------------------------------------------------
# clip_rows / scale_by_max_abs
# ---------------------------------------------------------------------------

def _clip_reference(A, bound, norm):
    """Row-by-row pure-Python reference of clip_rows."""
    out, changed = [], 0
    for row in A.tolist():
        if norm == "inf":
            new = [min(max(v, -bound), bound) for v in row]
        else:
            nrm = sum(v * v for v in row) ** 0.5 if norm == "l2" else sum(abs(v) for v in row)
            new = [v * bound / nrm for v in row] if nrm > bound else row
        changed += new != row
        out.append(new)
    return np.array(out), changed


def _random_matrix(seed, n=40, d=12):
    rng = np.random.default_rng(seed)
    A = rng.normal(scale=1.5, size=(n, d))
    A[rng.random((n, d)) < 0.6] = 0.0
    A[5] = 0.0      # an empty row
    A[-1] = 0.0     # a trailing empty row (edge case for CSR reductions)
    A[3, :] = 0.1   # a row within every bound
    return A


@pytest.mark.parametrize("norm", ["inf", "l2", "l1"])
@pytest.mark.parametrize("fmt", ["dense"] + SPARSE_FORMATS)
def test_clip_rows_matches_reference(norm, fmt):
    A = _random_matrix(0)
    bound = 1.3
    X = A.copy() if fmt == "dense" else sp.csr_array(A).asformat(fmt)
    X_before = X.copy()
    Xc, n_clipped = clip_rows(X, bound, norm)
    expected, n_expected = _clip_reference(A, bound, norm)
    assert n_clipped == n_expected > 0
    dense = Xc if fmt == "dense" else Xc.toarray()
    if fmt == "dense":
        assert isinstance(Xc, np.ndarray)
    else:
        assert isinstance(Xc, sp.csr_array)
    assert dense.dtype == np.float64
    np.testing.assert_allclose(dense, expected, rtol=1e-12, atol=0)
    # the bound holds exactly in floating point
    order = {"inf": np.inf, "l2": 2, "l1": 1}[norm]
    assert np.linalg.norm(dense, ord=order, axis=1).max() <= bound
    # rows that were within the bound are unchanged bit for bit; input untouched
    untouched = np.linalg.norm(A, ord=order, axis=1) <= bound
    np.testing.assert_array_equal(dense[untouched], A[untouched])
    before = X_before if fmt == "dense" else X_before.toarray()
    np.testing.assert_array_equal(before, X if fmt == "dense" else X.toarray())


def test_clip_rows_int_input_and_no_change():
    X = np.array([[0, 1], [1, 0]])
    Xc, n = clip_rows(X, 1.0)
    assert n == 0 and Xc.dtype == np.float64
    np.testing.assert_array_equal(Xc, X)


@pytest.mark.parametrize("bad,exc,match", [
    ({"bound": 0.0}, ValueError, "bound must be in"),
    ({"bound": -1.0}, ValueError, "bound must be in"),
    ({"bound": np.inf}, ValueError, "bound must be finite"),
    ({"bound": np.nan}, ValueError, "bound must not be NaN"),
    ({"bound": "1"}, TypeError, "bound must be a real number"),
    ({"norm": "l3"}, ValueError, "norm must be one of"),
])
def test_clip_rows_bad_parameters(bad, exc, match):
    with pytest.raises(exc, match=match):
        clip_rows(np.ones((2, 2)), **bad)


@pytest.mark.parametrize("func", [clip_rows, scale_by_max_abs])
def test_bounds_bad_X(func):
    with pytest.raises(ValueError, match="NaN or infinity"):
        func(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="NaN or infinity"):
        func(sp.csr_array(np.array([[np.inf, 0.0]])))
    with pytest.raises(ValueError, match="2-D"):
        func(np.ones(3))
    with pytest.raises(TypeError, match="numeric"):
        func(np.array([["a", "b"]]))


@pytest.mark.parametrize("fmt", ["dense"] + SPARSE_FORMATS)
def test_scale_by_max_abs(fmt):
    A = _random_matrix(1)
    A[:, 4] = 0.0  # an all-zero column keeps scale 1
    X = A.copy() if fmt == "dense" else sp.csr_array(A).asformat(fmt)
    with pytest.warns(PrivacyLeakWarning, match="derives its scale from the data"):
        Xs, scale = scale_by_max_abs(X)
    dense = Xs if fmt == "dense" else Xs.toarray()
    expected_scale = np.abs(A).max(axis=0)
    expected_scale[expected_scale == 0] = 1.0
    np.testing.assert_allclose(scale, expected_scale, rtol=1e-15)
    np.testing.assert_allclose(dense, A / expected_scale, rtol=1e-15)
    col_max = np.abs(dense).max(axis=0)
    np.testing.assert_allclose(col_max[np.abs(A).max(axis=0) > 0], 1.0, rtol=1e-15)
    if fmt != "dense":
        assert isinstance(Xs, sp.csr_array)


def test_scale_by_max_abs_global():
    A = np.array([[1.0, -4.0], [2.0, 0.0]])
    with pytest.warns(PrivacyLeakWarning):
        Xs, scale = scale_by_max_abs(A, per_feature=False)
    np.testing.assert_array_equal(scale, [4.0, 4.0])
    np.testing.assert_array_equal(Xs, A / 4.0)
    with pytest.warns(PrivacyLeakWarning):
        Xz, scale = scale_by_max_abs(np.zeros((2, 3)), per_feature=False)
    np.testing.assert_array_equal(scale, 1.0)


# ---------------------------------------------------------------------------
# make_sparse_classification
# ---------------------------------------------------------------------------

def test_make_sparse_classification_basic():
    X, y, w = make_sparse_classification(3000, 20000, n_informative=12, avg_nnz=30,
                                         random_state=0)
    assert isinstance(X, sp.csr_array) and X.dtype == np.float64
    assert X.shape == (3000, 20000) and y.shape == (3000,) and w.shape == (20000,)
    assert X.has_canonical_format
    assert np.all(X.data == 1.0)
    assert np.diff(X.indptr).min() >= 1
    # about avg_nnz draws per row, a little fewer after merging repeats
    assert 20 < X.nnz / X.shape[0] <= 30.5
    assert set(np.unique(y)) == {0.0, 1.0}
    assert np.count_nonzero(w) == 12
    # balanced classes: |mean - 1/2| > 0.05 has probability < 1e-7 for a fair
    # coin with n = 3000 (the balancing is approximate, so this is loose).
    assert abs(y.mean() - 0.5) < 0.05
    # every informative feature occurs in the data
    assert np.all(np.bincount(X.indices, minlength=20000)[w != 0] > 0)


def test_make_sparse_classification_reproducible():
    a = make_sparse_classification(500, 3000, random_state=7)
    b = make_sparse_classification(500, 3000, random_state=np.random.default_rng(7))
    c = make_sparse_classification(500, 3000, random_state=8)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u.toarray() if sp.issparse(u) else u,
                                      v.toarray() if sp.issparse(v) else v)
    assert (a[0] != c[0]).nnz > 0


@pytest.mark.parametrize("values", ["signed", "uniform"])
def test_make_sparse_classification_values(values):
    X, _, _ = make_sparse_classification(400, 2000, values=values, random_state=1)
    assert np.abs(X.data).max() <= 1.0
    if values == "signed":
        assert set(np.unique(X.data)) == {-1.0, 1.0}
    else:
        assert np.unique(X.data).size > 1000


def test_make_sparse_classification_sign_labels():
    X, y, w = make_sparse_classification(2000, 5000, label_model="sign", random_state=2)
    margin = X @ w
    nz = margin != 0
    np.testing.assert_array_equal(y[nz], (margin[nz] > 0).astype(float))


def test_make_sparse_classification_logistic_labels():
    # y_i ~ Bernoulli(sigmoid(m_i)): the number of labels agreeing with the
    # margin's sign has mean sum_i sigmoid(|m_i|) and variance
    # sum_i s_i (1 - s_i); a 5-sigma band fails with probability < 1e-6.
    X, y, w = make_sparse_classification(20000, 5000, random_state=3)
    m = X @ w
    s = 1.0 / (1.0 + np.exp(-np.abs(m)))
    nz = m != 0
    agree = np.sum(((m > 0) == (y == 1))[nz])
    mean, sd = s[nz].sum(), np.sqrt(np.sum(s[nz] * (1 - s[nz])))
    assert abs(agree - mean) < 5 * sd


@pytest.mark.parametrize("exponent", [0.0, 0.8, 1.5])
def test_make_sparse_classification_power_law(exponent):
    # Few draws per row (avg_nnz=4), so repeats within a row are rare and the
    # document frequency of the feature of rank r is ~ n * 4 * p_r with
    # p_r ~ r^-a.  The log-log slope of the sorted column counts over ranks
    # 10..200 estimates -a.  Measured over 200 seeds for each exponent here:
    # bias at most 0.045 (a=0, from sorting equal-mean noisy counts), standard
    # deviation at most 0.011 (a=1.5), largest |slope + a| 0.055.  The 0.1
    # tolerance is >= 8 standard deviations from the mean, so the false-failure
    # rate is below 1e-9 under a normal spread.
    X, _, _ = make_sparse_classification(40000, 2000, avg_nnz=4, zipf_exponent=exponent,
                                         random_state=4)
    counts = np.sort(np.bincount(X.indices, minlength=2000))[::-1]
    ranks = np.arange(10, 200)
    slope = np.polyfit(np.log(ranks + 1.0), np.log(counts[ranks]), 1)[0]
    assert abs(slope + exponent) < 0.1


def test_make_sparse_classification_large_shape_is_fine():
    # a wide problem (more features than int32 rows need) stays canonical
    X, y, w = make_sparse_classification(2000, 2_000_000, avg_nnz=20, random_state=5)
    assert X.shape == (2000, 2_000_000) and X.has_canonical_format
    assert X.indices.max() < 2_000_000


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"n_samples": 0}, ValueError, "n_samples must be >= 1"),
    ({"n_samples": 10.0}, TypeError, "n_samples must be an integer"),
    ({"n_features": 1}, ValueError, "n_features must be >= 2"),
    ({"n_informative": 0}, ValueError, "n_informative must be >= 1"),
    ({"n_features": 10, "n_informative": 11}, ValueError, "n_informative must be <="),
    ({"avg_nnz": 0.5}, ValueError, "avg_nnz must be in"),
    ({"avg_nnz": np.nan}, ValueError, "avg_nnz must not be NaN"),
    ({"zipf_exponent": -0.1}, ValueError, "zipf_exponent must be in"),
    ({"zipf_exponent": 11}, ValueError, "zipf_exponent must be in"),
    ({"coef_scale": 0.0}, ValueError, "coef_scale must be in"),
    ({"values": "ternary"}, ValueError, "values must be one of"),
    ({"label_model": "probit"}, ValueError, "label_model must be one of"),
    ({"random_state": "seed"}, TypeError, "random_state must be"),
])
def test_make_sparse_classification_bad_input(kwargs, exc, match):
    args = {"n_samples": 20, "n_features": 50, "n_informative": 5}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        make_sparse_classification(**args)
