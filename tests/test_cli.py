"""End-to-end tests of the command line (``python -m dptoolkit``) and of model files.

Small data only: a1a (a 1,605-example subsample of the Adult data of a9a, 123
features), synthetic sparse problems, a two-group subset of 20 Newsgroups
hashed to 4,096 features, and tiny LIBSVM files written here.  Most commands
run in-process through :func:`dptoolkit.cli.main`; the model-file round trip
and the CI command run in fresh processes.
"""
import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from dptoolkit import datasets
from dptoolkit._persistence import TRUSTED_TYPES, load_model, save_model, untrusted_types
from dptoolkit.cli import DEFAULT_MODEL, main
from dptoolkit.cli import _data, _models  # noqa: F401 (_data first: loaders get patched)

jsonschema = pytest.importorskip("jsonschema")

A1A = datasets.get_data_path("a1a.bz2")
A1A_T = datasets.get_data_path("a1a.t.bz2")
NEWS20 = datasets.get_data_path("text/20news-bydate.tar.xz")
need_a1a = pytest.mark.skipif(not A1A.exists(), reason="a1a not available")
need_20news = pytest.mark.skipif(not NEWS20.exists(), reason="20news not available")

MODELS = ["frank-wolfe", "sparsifier", "dp-sgd", "dp-scd", "dp-ight", "dp-nb-logistic",
          "select-then-fit", "search", "default"]


def _schema_validator():
    from dptoolkit.cli._report import load_schema

    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _validate(path):
    report = json.loads(path.read_text())
    errors = sorted(_schema_validator().iter_errors(report), key=lambda e: e.path)
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    return report


def _run(argv, capsys):
    """``main(argv)`` -> (status, stdout, stderr); argparse exits become statuses."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


# ---------------------------------------------------------------------------
# the workflow train -> save -> predict / evaluate -> report, every model
# ---------------------------------------------------------------------------

@need_a1a
@pytest.mark.parametrize("model", MODELS)
def test_train_save_predict_evaluate_report(model, tmp_path, capsys):
    saved, report, preds = tmp_path / "m.skops", tmp_path / "r.json", tmp_path / "p.csv"
    extra = {"select-then-fit": ["--k", "20"], "search": ["--n-runs", "2"]}.get(model, [])
    if _models.option_applies_to("n_samples_public", model):
        extra += ["--n-samples-public", 1605]   # the public dataset size of a1a
    status, out, err = _run(["train", "--model", model, "--data", A1A,
                             "--n-features-libsvm", 123, "--epsilon", 1, "--delta", 1e-5,
                             *extra, "--save", saved, "--report", report], capsys)
    assert status == 0, err
    assert "test accuracy" in out and "privacy: (" in out
    rep = _validate(report)
    expected_name = DEFAULT_MODEL if model == "default" else model
    assert rep["model"]["name"] == expected_name
    assert rep["privacy"]["private"] is True
    assert rep["privacy"]["privacy_event"]["type"].endswith("Event")
    assert rep["data"]["n_features"] == 123 and rep["data"]["source"] == "libsvm"
    assert 0.5 <= rep["metrics"]["accuracy"] <= 1.0

    if model == "search":
        assert set(rep["model"]["best_params"]) == set(_models.SEARCH_GRIDS[DEFAULT_MODEL])
        assert rep["model"]["n_runs"] >= 1
    if model == "select-then-fit":
        assert len(rep["model"]["selected_features"]) == 20

    fitted = load_model(saved)
    assert list(rep["privacy"]["privacy_spent"]) == list(fitted.privacy_spent_)

    status, out, err = _run(["predict", "--model-file", saved, "--data", A1A_T,
                             "--output", preds], capsys)
    assert status == 0, err
    lines = preds.read_text().splitlines()
    X_t, _ = datasets.load_libsvm(A1A_T, n_features=123)
    assert lines[0].startswith("index,prediction") and len(lines) == X_t.shape[0] + 1
    predicted = np.array([float(line.split(",")[1]) for line in lines[1:]])
    np.testing.assert_array_equal(predicted, fitted.predict(X_t))

    ev_report = tmp_path / "ev.json"
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", A1A_T,
                             "--report", ev_report], capsys)
    assert status == 0, err
    assert "accuracy" in out and "AUC" in out
    ev = _validate(ev_report)
    assert ev["command"] == "evaluate" and ev["data"]["n_test"] == X_t.shape[0]
    assert ev["privacy"]["privacy_event"] == rep["privacy"]["privacy_event"]


def test_ci_command_in_a_fresh_process(tmp_path):
    """The CI command, through ``python -m dptoolkit`` (smaller problem)."""
    result = subprocess.run(
        [sys.executable, "-m", "dptoolkit", "train", "--model", "frank-wolfe", "--max-iter",
         "500", "--epsilon", "1",
         "--synthetic-samples", "2000", "--synthetic-features", "5000"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "test accuracy" in result.stdout and "privacy: (1," in result.stdout


def test_synthetic_default_model_non_private(tmp_path, capsys):
    report = tmp_path / "r.json"
    status, out, err = _run(["train", "--model", "frank-wolfe", "--synthetic-samples", 400,
                             "--synthetic-features", 300, "--max-iter", 50, "--report",
                             report], capsys)
    assert status == 0, err
    assert "privacy: none" in out
    rep = _validate(report)
    assert rep["data"]["source"] == "synthetic"
    assert rep["privacy"] == {**rep["privacy"], "private": False, "privacy_spent": None,
                              "privacy_event": None}


def test_multiclass(tmp_path, capsys):
    """Three classes: Frank-Wolfe fits them; binary-only models refuse clearly."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(300):
        label = i % 3
        feats = sorted(set(rng.choice(30, 5, replace=False).tolist()) | {label + 1})
        rows.append(f"{label} " + " ".join(f"{j + 1}:1" for j in feats))
    path = tmp_path / "three.libsvm"
    path.write_text("\n".join(rows) + "\n")
    report = tmp_path / "r.json"
    # --model default on three classes: the multiclass default (Frank-Wolfe), said so
    status, out, err = _run(["train", "--data", path, "--epsilon", 2, "--delta", 1e-5,
                             "--report", report, "--save", tmp_path / "m.skops"], capsys)
    assert status == 0, err
    assert "--model default uses frank-wolfe" in err
    rep = _validate(report)
    assert len(rep["data"]["classes"]) == 3 and rep["model"]["name"] == "frank-wolfe"
    assert load_model(tmp_path / "m.skops").coef_.shape == (3, 30)
    status, out, err = _run(["train", "--model", "dp-sgd", "--data", path, "--epsilon", 1],
                            capsys)
    assert status == 2
    assert "binary only" in err and "3 classes" in err


@need_20news
def test_20news_two_groups(tmp_path, capsys):
    saved = tmp_path / "m.skops"
    common = ["--data", NEWS20, "--positive", "comp.graphics", "--negative", "rec.autos"]
    status, out, err = _run(["train", "--model", "dp-scd", *common, "--n-features", 4096,
                             "--epsilon", 1, "--save", saved], capsys)
    assert status == 0, err
    report = tmp_path / "ev.json"
    status, out, err = _run(["evaluate", "--model-file", saved, *common, "--report", report],
                            capsys)
    assert status == 0, err
    rep = _validate(report)
    assert rep["data"]["source"] == "corpus" and rep["data"]["n_features"] == 4096


@need_20news
def test_20news_multiclass_refused_before_reading_for_binary_models(capsys, monkeypatch):
    _forbid_data(monkeypatch)
    status, out, err = _run(["train", "--model", "dp-sgd", "--data", NEWS20,
                             "--epsilon", 1], capsys)
    assert status == 2 and "binary only" in err and "--positive" in err


# ---------------------------------------------------------------------------
# model files
# ---------------------------------------------------------------------------

_RELOAD = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    from dptoolkit._persistence import load_model
    from dptoolkit.cli._report import model_coef
    out = []
    for path in sys.argv[1:]:
        m = load_model(path)
        coef = np.ascontiguousarray(model_coef(m))
        out.append({"coef": hashlib.sha256(coef.tobytes()).hexdigest(),
                    "shape": list(coef.shape), "spent": repr(m.privacy_spent_),
                    "event": repr(m.privacy_event_),
                    "event_type": type(m.privacy_event_).__module__})
    print(json.dumps(out))
""")


def _fitted(name):
    from dptoolkit.linear_model import DPSGDClassifier, FrankWolfeLassoClassifier
    from dptoolkit.model_selection import PrivateHyperparameterSearch
    from dptoolkit.selection import DPSIS, PrivateSelectThenFit

    X, y, _ = datasets.make_sparse_classification(n_samples=300, n_features=200,
                                                  random_state=1)
    est = {
        "frank-wolfe": FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, max_iter=40,
                                                 n_samples_public=300, random_state=0),
        "dp-sgd": DPSGDClassifier(epsilon=1.0, n_samples_public=300, random_state=0),
        "select-then-fit": PrivateSelectThenFit(
            DPSIS(k=20, epsilon=0.1, random_state=0),
            FrankWolfeLassoClassifier(epsilon=0.9, delta=1e-5, max_iter=20,
                                      n_samples_public=300, random_state=0)),
        "search": PrivateHyperparameterSearch(
            FrankWolfeLassoClassifier(max_iter=20, n_samples_public=300),
            {"l1_bound": [5.0, 20.0]}, epsilon=1.0, n_runs=2, random_state=0),
    }[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_saved_models_reload_identically_in_a_fresh_process(tmp_path):
    """coef_, privacy_spent_ and privacy_event_ bit for bit, for a plain estimator,
    a Gaussian one and both meta-estimators (nested events)."""
    import hashlib

    from dptoolkit.cli._report import model_coef

    names = ["frank-wolfe", "dp-sgd", "select-then-fit", "search"]
    fitted = {name: _fitted(name) for name in names}
    paths = [str(save_model(fitted[name], tmp_path / f"{name}.skops")) for name in names]
    result = subprocess.run([sys.executable, "-c", _RELOAD, *paths], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    for name, path, got in zip(names, paths, json.loads(result.stdout)):
        est = fitted[name]
        coef = np.ascontiguousarray(model_coef(est))
        assert got["coef"] == hashlib.sha256(coef.tobytes()).hexdigest(), name
        assert got["shape"] == list(coef.shape), name
        assert got["spent"] == repr(est.privacy_spent_), name
        assert got["event"] == repr(est.privacy_event_), name
        assert got["event_type"] == "dptoolkit.accounting.events", name
        # and in this process: equal events (frozen dataclasses compare by value)
        again = load_model(path)
        assert again.privacy_event_ == est.privacy_event_, name
        assert again.privacy_spent_ == est.privacy_spent_, name


class Untrusted:
    """A type that is not on dptoolkit's trusted list."""

    def __init__(self):
        self.payload = 1


def test_untrusted_types_are_refused(tmp_path):
    import skops.io as sio

    est = _fitted("frank-wolfe")
    est.extra_ = Untrusted()
    path = tmp_path / "m.skops"
    sio.dump(est, path)
    assert any(t.endswith("Untrusted") for t in untrusted_types(path))
    with pytest.raises(ValueError, match="not trusted.*Untrusted"):
        load_model(path)
    # the trusted list names only dptoolkit types
    assert all(t.startswith("dptoolkit.") for t in TRUSTED_TYPES)


def test_model_file_errors(tmp_path, capsys):
    bogus = tmp_path / "bogus.skops"
    bogus.write_text("not a model")
    status, out, err = _run(["evaluate", "--model-file", bogus, "--data", A1A], capsys)
    assert status == 2 and "--model-file" in err and "not a skops" in err
    status, out, err = _run(["predict", "--model-file", tmp_path / "missing.skops",
                             "--data", A1A], capsys)
    assert status == 2 and "--model-file" in err


# ---------------------------------------------------------------------------
# account
# ---------------------------------------------------------------------------

def test_account_frank_wolfe(capsys):
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    status, out, err = _run(["account", "--model", "frank-wolfe", "--epsilon", 1, "--delta",
                             1e-5, "--n-samples", 25000, "--n-features", 2 ** 20], capsys)
    assert status == 0, err
    budget = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=25000
                                       ).budget(2 ** 20, n_samples=25000)
    assert "guarantee: (1, 1e-05)-DP" in out
    assert f"per-step epsilon' = {budget.epsilon_step:.6g}" in out
    assert f"{budget.composition} composition" in out
    assert "T = " in out and "ExponentialMechanismEvent" in out


@pytest.mark.parametrize("model", ["dp-sgd", "dp-scd", "dp-ight", "dp-nb-logistic",
                                   "sparsifier",
                                   "select-then-fit", "search"])
def test_account_other_models(model, capsys):
    status, out, err = _run(["account", "--model", model, "--epsilon", 1, "--delta", 1e-5,
                             "--n-samples", 5000, "--n-features", 1000], capsys)
    assert status == 0, err
    assert "guarantee: (" in out and "privacy event:" in out
    if model in ("dp-sgd", "dp-scd", "dp-ight", "dp-nb-logistic"):
        assert "noise multiplier(s): " in out


# ---------------------------------------------------------------------------
# bad arguments: exit status 2, the flag named, no data read
# ---------------------------------------------------------------------------

def _forbid_data(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("data was read before the arguments were checked")

    for name in ("load_libsvm", "load_text_corpus", "make_sparse_classification"):
        monkeypatch.setattr(datasets, name, forbidden)


BAD = [
    (["train", "--data", "/nonexistent/x.libsvm", "--epsilon", "-1"], "--epsilon"),
    (["train", "--epsilon", "0"], "--epsilon"),
    (["train", "--epsilon", "nan"], "--epsilon"),
    (["train", "--epsilon", "inf"], "--epsilon"),
    (["train", "--epsilon", "abc"], "--epsilon"),
    (["train", "--epsilon", "1", "--delta", "1"], "--delta"),
    (["train", "--epsilon", "1", "--delta", "0"], "--delta"),
    (["train", "--delta", "1e-5"], "--delta"),
    (["train", "--model", "nope"], "--model"),
    (["train", "--data", "/nonexistent/x.libsvm"], "--data"),
    (["train", "--max-iter", "0"], "--max-iter"),
    (["train", "--l1-bound", "-2"], "--l1-bound"),
    (["train", "--test-size", "1.5"], "--test-size"),
    (["train", "--model", "dp-sgd", "--l1-bound", "5"], "--l1-bound"),
    (["train", "--model", "frank-wolfe", "--alpha", "0.1"], "--alpha"),
    (["train", "--model", "dp-ight", "--k", "3"], "--k"),
    (["train", "--model", "frank-wolfe", "--grid", "l1_bound=1,2"], "--grid"),
    (["train", "--model", "dp-scd", "--verbose", "1"], "--verbose"),
    (["train", "--model", "search"], "--epsilon"),
    (["train", "--model", "select-then-fit"], "--epsilon"),
    (["train", "--model", "search", "--epsilon", "1", "--grid", "nope=1,2"], "--grid"),
    (["train", "--model", "search", "--epsilon", "1", "--grid", "l1_bound"], "--grid"),
    (["train", "--model", "search", "--epsilon", "1", "--grid", "epsilon=1,2"], "--grid"),
    (["train", "--model", "search", "--epsilon", "1", "--n-runs", "1"], "--n-runs"),
    (["train", "--epsilon", "1", "--selector", "bogus"], "selector"),
    (["train", "--positive", "comp"], "--positive"),
    (["train", "--data", str(A1A), "--positive", "comp"], "--positive"),
    (["train", "--data", str(A1A), "--n-features", "100"], "--n-features"),
    (["train", "--data", str(NEWS20), "--test", str(A1A)], "--test"),
    (["train", "--data", str(NEWS20), "--n-features-libsvm", "9"], "--n-features-libsvm"),
    (["train", "--data", str(A1A), "--synthetic-samples", "10"], "--synthetic-samples"),
    (["train", "--data", str(A1A), "--cache-dir", "/tmp"], "--cache-dir"),
    (["train", "--cache-dir", "/tmp"], "--cache-dir"),
    (["train", "--data", str(NEWS20), "--cache-dir", "/nonexistent/dir/cache"],
     "--cache-dir"),
    (["train", "--data", str(A1A), "--test", "/nonexistent/t"], "--test"),
    (["train", "--save", "/nonexistent/dir/m.skops"], "--save"),
    (["train", "--report", "/nonexistent/dir/r.json"], "--report"),
    (["evaluate", "--model-file", "/nonexistent/m.skops", "--data", str(A1A)],
     "--model-file"),
    (["evaluate", "--data", str(A1A)], "--model-file"),
    (["predict", "--model-file", "/nonexistent/m.skops"], "--data"),
    (["account", "--model", "dp-sgd", "--n-samples", "10"], "--n-features"),
    (["account", "--model", "frank-wolfe", "--n-samples", "0", "--n-features", "5",
      "--epsilon", "1"], "--n-samples"),
    (["account", "--model", "dp-sgd", "--n-samples", "10", "--n-features", "5",
      "--n-classes", "3", "--epsilon", "1"], "--n-classes"),
]


@pytest.mark.parametrize("argv, flag", BAD, ids=[" ".join(a)[:60] for a, _ in BAD])
def test_bad_arguments(argv, flag, capsys, monkeypatch):
    _forbid_data(monkeypatch)
    status, out, err = _run(argv, capsys)
    assert status == 2, (out, err)
    assert flag in err, err


def test_epsilon_is_checked_before_the_data_path(capsys):
    status, out, err = _run(["train", "--data", "/nonexistent/x", "--epsilon", "-1"], capsys)
    assert status == 2
    assert "--epsilon" in err and "/nonexistent" not in err


def test_help_shows_defaults(capsys):
    status, out, err = _run(["train", "--help"], capsys)
    assert status == 0
    out = " ".join(out.split())           # undo the line wrapping
    fw = _models.default_of(_models.MODELS["frank-wolfe"].cls, "l1_bound")
    l1_help = out.split("--l1-bound L1_BOUND")[-1].split(" --", 1)[0]
    assert "frank-wolfe" in l1_help and f"(default: {fw!r})" in l1_help
    assert "(default: 0)" in out          # --seed
    for name in MODELS:
        assert name in out


def test_default_is_one_constant():
    assert _models.resolve_model("default") == DEFAULT_MODEL == _models.DEFAULT_MODEL
    assert DEFAULT_MODEL in _models.MODELS


def test_unreadable_data_names_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.libsvm"
    bad.write_text("hello world\n")
    status, out, err = _run(["train", "--data", bad, "--epsilon", 1], capsys)
    assert status == 1
    assert f"--data {bad}" in err and "hello" in err


@need_a1a
def test_evaluate_reproduces_the_held_out_part_of_train(tmp_path, capsys):
    saved, r_train, r_eval = tmp_path / "m.skops", tmp_path / "t.json", tmp_path / "e.json"
    common = ["--data", A1A, "--test-size", 0.3, "--seed", 3]
    status, out, err = _run(["train", "--model", "dp-ight", *common, "--epsilon", 1,
                             "--save", saved, "--report", r_train], capsys)
    assert status == 0, err
    status, out, err = _run(["evaluate", "--model-file", saved, *common, "--subset", "test",
                             "--report", r_eval], capsys)
    assert status == 0, err
    train, ev = json.loads(r_train.read_text()), _validate(r_eval)
    assert ev["metrics"] == train["metrics"]
    assert "seed 3" in ev["data"]["split"]


@need_20news
def test_test_size_refused_for_a_corpus_with_its_own_split(capsys):
    status, out, err = _run(["train", "--data", NEWS20, "--positive", "comp.graphics",
                             "--negative", "rec.autos", "--n-features", 1024,
                             "--test-size", 0.3], capsys)
    assert status == 2 and "--test-size" in err


def test_saved_model_carries_the_version(tmp_path, monkeypatch):
    import dptoolkit

    est = _fitted("frank-wolfe")
    path = save_model(est, tmp_path / "m.skops")
    assert not hasattr(est, "_dptoolkit_version")        # the caller's object untouched
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_model(path)._dptoolkit_version == dptoolkit.__version__
    monkeypatch.setattr(dptoolkit, "__version__", "99.0")
    with pytest.warns(UserWarning, match="saved by dptoolkit .* this is dptoolkit 99.0"):
        load_model(path)


def test_progress_on_a_terminal(tmp_path, capsys, monkeypatch):
    """stderr a terminal: models with a progress bar get verbose=1 (else 0)."""
    argv = ["train", "--model", "frank-wolfe", "--synthetic-samples", 300,
            "--synthetic-features", 200, "--max-iter", 20, "--epsilon", 1, "--delta", 1e-5, "--n-samples-public", 225]
    status, out, err = _run([*argv, "--save", tmp_path / "quiet.skops"], capsys)
    assert status == 0 and load_model(tmp_path / "quiet.skops").verbose == 0
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    status, out, err = _run([*argv, "--save", tmp_path / "tty.skops"], capsys)
    assert status == 0, err
    assert load_model(tmp_path / "tty.skops").verbose == 1
    assert "Frank-Wolfe" in err                        # the tqdm bar


def _tiny_news_corpus(root):
    """A 20news-bydate-shaped corpus: 3 groups, a few documents each, train and test."""
    rng = np.random.default_rng(0)
    words = {"comp.graphics": ["pixel", "render", "image", "polygon"],
             "rec.autos": ["engine", "brake", "wheel", "sedan"],
             "sci.space": ["orbit", "shuttle", "nasa", "launch"]}
    for split, n_docs in (("train", 30), ("test", 10)):
        for group, vocab in words.items():
            folder = root / f"20news-bydate-{split}" / group
            folder.mkdir(parents=True)
            for i in range(n_docs):
                text = " ".join(rng.choice(vocab + ["the", "a", "of"], size=20))
                (folder / f"{i}").write_text(text)
    return root


def test_multiclass_corpus_end_to_end(tmp_path, capsys):
    corpus = _tiny_news_corpus(tmp_path / "news")
    saved, report = tmp_path / "m.skops", tmp_path / "ev.json"
    status, out, err = _run(["train", "--data", corpus, "--n-features", 256, "--epsilon", 4,
                             "--delta", 1e-5, "--save", saved], capsys)
    assert status == 0, err
    assert "3 classes" in out
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", corpus,
                             "--report", report], capsys)
    assert status == 0, err
    rep = _validate(report)
    assert rep["data"]["classes"] == [0, 1, 2] and rep["data"]["n_test"] == 30
    assert rep["metrics"]["auc"] is not None                 # one-vs-rest
    status, out, err = _run(["predict", "--model-file", saved, "--data", corpus,
                             "--subset", "train"], capsys)
    assert status == 0, err
    assert len(out.splitlines()) == 1 + 90 and out.startswith("index,prediction\n")
    status, out, err = _run(["train", "--model", "dp-scd", "--data", corpus, "--epsilon", 1],
                            capsys)
    assert status == 2 and "binary only" in err and "3 classes" in err
