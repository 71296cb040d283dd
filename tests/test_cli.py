"""End-to-end tests of the command line (``python -m dptoolkit``) and of model files.

Small data only: a1a (a 1,605-example subsample of the Adult data of a9a, 123
features), synthetic sparse problems, subsamples of the real corpora (IMDB, 20
Newsgroups, Enron-spam, SMS spam: the first documents of a few classes, read
once per session from the archives in the data folder) hashed to 4,096
features, and tiny LIBSVM files written here.  Most commands run in-process
through :func:`dptoolkit.cli.main`; the model-file round trip and the CI
command run in fresh processes.
"""
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from dptoolkit import datasets
from dptoolkit._private import DATA_DEPENDENT_NOTE
from dptoolkit._persistence import TRUSTED_TYPES, load_model, save_model, untrusted_types
from dptoolkit.cli import DEFAULT_MODEL, main
from dptoolkit.cli import _data, _models  # noqa: F401 (_data first: loaders get patched)

jsonschema = pytest.importorskip("jsonschema")

A1A = datasets.get_data_path("a1a.bz2")
TEXT = datasets.get_data_path("text")
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
    # search: around Frank-Wolfe, whose calibration is quick (the default searched
    # model's is covered by test_account_other_models)
    extra = {"select-then-fit": ["--k", "20"],
             "search": ["--n-runs", "2", "--search-model", "frank-wolfe", "--max-iter", 50]
             }.get(model, [])
    if _models.option_applies_to("n_samples_public", model):
        extra += ["--n-samples-public", 1605]   # the public dataset size of a1a
    status, out, err = _run(["train", "--model", model, "--data", A1A,
                             "--n-features", 123, "--epsilon", 1, "--delta", 1e-5,
                             "--seed", 0, *extra, "--save", saved, "--report", report],
                            capsys)
    assert status == 0, err
    assert "test accuracy" in out and "privacy: (" in out
    rep = _validate(report)
    expected_name = DEFAULT_MODEL if model == "default" else model
    assert rep["model"]["name"] == expected_name
    assert rep["privacy"]["private"] is True
    assert rep["privacy"]["privacy_event"]["type"].endswith("Event")
    assert rep["data"]["n_features"] == 123 and rep["data"]["source"] == "libsvm"
    assert rep["data"]["classes"] == _data.BINARY_CONVENTION
    assert 0.5 <= rep["metrics"]["accuracy"] <= 1.0
    assert "outside_guarantee" not in rep and "nnz" not in out   # no --nonprivate-stats
    assert rep["privacy"]["noise"].startswith("--seed 0")   # fixed: the accuracy check

    if model == "search":
        assert set(rep["model"]["best_params"]) == set(_models.SEARCH_GRIDS["frank-wolfe"])
        # the number of runs is not released (the guarantee covers the best run alone)
        assert "n_runs" not in rep["model"] and "run(s)" not in out
    if model == "select-then-fit":
        assert len(rep["model"]["selected_features"]) == 20

    fitted = load_model(saved)
    assert list(rep["privacy"]["privacy_spent"]) == list(fitted.privacy_spent_)
    # the public label set reaches every estimator that takes one (DP-IGHT has none)
    declared = [e for e in (fitted, getattr(fitted, "estimator", None))
                if e is not None and "classes" in e.get_params(deep=False)]
    assert declared or model == "dp-ight"
    assert all(list(e.get_params(deep=False)["classes"]) == [0.0, 1.0] for e in declared)
    assert "classes is None" not in err

    status, out, err = _run(["predict", "--model-file", saved, "--data", A1A_T,
                             "--output", preds], capsys)
    assert status == 0, err
    lines = preds.read_text().splitlines()
    X_t, _ = datasets.load_libsvm(A1A_T, n_features=123)
    assert lines[0].startswith("index,prediction") and len(lines) == X_t.shape[0] + 1
    # labels, not class indices: the binary convention's -1 and +1
    predicted = np.array([float(line.split(",")[1]) for line in lines[1:]])
    np.testing.assert_array_equal(predicted, np.where(fitted.predict(X_t) == 1, 1.0, -1.0))

    ev_report = tmp_path / "ev.json"
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", A1A_T,
                             "--report", ev_report], capsys)
    assert status == 0, err
    assert "accuracy" in out and "AUC" in out
    ev = _validate(ev_report)
    assert ev["command"] == "evaluate" and ev["metrics"]["n_samples"] == X_t.shape[0]
    assert ev["privacy"]["privacy_event"] == rep["privacy"]["privacy_event"]


def _fresh_env():
    """The environment of a fresh process that imports this dptoolkit (the tested
    tree, wherever the process runs), not another installed one."""
    import os
    from pathlib import Path

    import dptoolkit

    root = str(Path(dptoolkit.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=root + (os.pathsep + path if path else ""))


def test_ci_command_in_a_fresh_process(tmp_path):
    """The CI command, through ``python -m dptoolkit`` (smaller problem)."""
    result = subprocess.run(
        [sys.executable, "-m", "dptoolkit", "train", "--model", "frank-wolfe", "--max-iter",
         "500", "--epsilon", "1",
         "--synthetic-samples", "2000", "--synthetic-features", "5000"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_fresh_env())
    assert result.returncode == 0, result.stderr
    assert "test accuracy" in result.stdout and "privacy: (1," in result.stdout


def test_synthetic_default_model_non_private(tmp_path, capsys):
    report = tmp_path / "r.json"
    status, out, err = _run(["train", "--non-private", "--model", "frank-wolfe",
                             "--synthetic-samples", 400,
                             "--synthetic-features", 300, "--max-iter", 50, "--report",
                             report], capsys)
    assert status == 0, err
    assert "privacy: none" in out
    rep = _validate(report)
    assert rep["data"]["source"] == "synthetic"
    assert rep["privacy"] == {**rep["privacy"], "private": False, "privacy_spent": None,
                              "privacy_event": None}
    # a non-private fit protects nothing: its training figures are shown, labelled
    assert "outside the guarantee (non-private fit" in out
    assert rep["outside_guarantee"]["n_train"] + rep["metrics"]["n_samples"] == 400


def test_multiclass(tmp_path, capsys, monkeypatch):
    """Three classes: the default model fits them; binary-only models refuse clearly."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(300):
        label = i % 3
        feats = sorted(set(rng.choice(30, 5, replace=False).tolist()) | {label + 1})
        rows.append(f"{label} " + " ".join(f"{j + 1}:1" for j in feats))
    path = tmp_path / "three.libsvm"
    path.write_text("\n".join(rows) + "\n")
    report = tmp_path / "r.json"
    common = ["--data", path, "--n-features", 30, "--classes", 0, 1, 2]
    # --model default on three classes: the same model, multiclass
    status, out, err = _run(["train", *common, "--epsilon", 2, "--delta", 1e-5,
                             "--n-samples-public", 225, "--report", report,
                             "--save", tmp_path / "m.skops"], capsys)
    assert status == 0, err
    rep = _validate(report)
    assert rep["data"]["classes"] == [0, 1, 2]
    assert rep["model"]["name"] == "dp-nb-logistic"
    assert load_model(tmp_path / "m.skops").coef_.shape == (3, 30)
    # binary-only models: refused from --classes, before any data is read
    monkeypatch.setattr(datasets, "load_libsvm", _forbidden)
    status, out, err = _run(["train", "--model", "select-then-fit", *common, "--epsilon",
                             1], capsys)
    assert status == 2
    assert "binary only" in err and "3 classes" in err


@need_20news
def test_20news_multiclass_refused_before_reading_for_binary_models(capsys, monkeypatch):
    _forbid_data(monkeypatch)
    status, out, err = _run(["train", "--model", "select-then-fit", "--data", NEWS20,
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
                                      n_samples_public=300, random_state=0), epsilon=None),
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
                            text=True, timeout=120, env=_fresh_env())
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
    if not A1A.exists():
        pytest.skip("real data not found (DPTOOLKIT_DATA)")
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

def _forbidden(*args, **kwargs):
    raise AssertionError("data was read before the arguments were checked")


def _forbid_data(monkeypatch):
    for name in ("load_libsvm", "load_text_corpus", "make_sparse_classification"):
        monkeypatch.setattr(datasets, name, _forbidden)


BAD = [
    (["train", "--data", "/nonexistent/x.libsvm", "--epsilon", "-1"], "--epsilon"),
    (["train", "--epsilon", "0"], "--epsilon"),
    (["train", "--epsilon", "nan"], "--epsilon"),
    (["train", "--epsilon", "inf"], "--epsilon"),
    (["train", "--epsilon", "abc"], "--epsilon"),
    (["train", "--epsilon", "1", "--delta", "1"], "--delta"),
    (["train", "--epsilon", "1", "--delta", "0"], "--delta"),
    (["train", "--non-private", "--delta", "1e-5"], "--delta"),
    # a fit is private unless --non-private says otherwise: neither is an error that
    # names both options; both at once too
    (["train"], "--non-private"),
    (["train", "--model", "dp-sgd", "--alpha", "0.1"], "--epsilon"),
    (["train", "--epsilon", "1", "--non-private"], "--non-private"),
    (["train", "--non-private", "--model", "search"], "--non-private"),
    (["train", "--non-private", "--model", "select-then-fit"], "--non-private"),
    (["train", "--non-private", "--model", "nope"], "--model"),
    (["train", "--non-private", "--data", "/nonexistent/x.libsvm"], "--data"),
    (["train", "--non-private", "--max-iter", "0"], "--max-iter"),
    (["train", "--non-private", "--l1-bound", "-2"], "--l1-bound"),
    (["train", "--non-private", "--test-size", "1.5"], "--test-size"),
    (["train", "--non-private", "--model", "dp-sgd", "--l1-bound", "5"], "--l1-bound"),
    (["train", "--non-private", "--model", "frank-wolfe", "--alpha", "0.1"], "--alpha"),
    (["train", "--non-private", "--model", "dp-ight", "--k", "3"], "--k"),
    (["train", "--non-private", "--model", "frank-wolfe", "--grid", "l1_bound=1,2"], "--grid"),
    (["train", "--non-private", "--verbose", "x"], "--verbose"),
    (["train", "--non-private", "--verbose", "-1"], "--verbose"),
    (["evaluate", "--model-file", "m.skops", "--data", "d", "--verbose", "x"], "--verbose"),
    (["train", "--model", "search"], "--epsilon"),
    (["train", "--model", "select-then-fit"], "--epsilon"),
    (["train", "--model", "search", "--epsilon", "1", "--grid", "nope=1,2"], "--grid"),
    (["train", "--model", "search", "--epsilon", "1", "--grid", "l1_bound"], "--grid"),
    (["train", "--model", "search", "--epsilon", "1", "--grid", "epsilon=1,2"], "--grid"),
    (["train", "--model", "search", "--epsilon", "1", "--n-runs", "1"], "--n-runs"),
    (["train", "--epsilon", "1", "--mechanism", "bogus"], "mechanism"),
    (["train", "--non-private", "--positive", "comp"], "--positive"),
    (["train", "--non-private", "--data", str(A1A), "--positive", "comp"], "--positive"),
    (["train", "--non-private", "--data", str(NEWS20), "--test", str(A1A)], "--test"),
    (["train", "--non-private", "--data", str(NEWS20), "--classes", "0", "1"], "--classes"),
    (["train", "--data", str(A1A), "--epsilon", "1"], "--n-features"),
    (["train", "--non-private", "--data", str(A1A), "--n-features", "123", "--classes", "1"],
     "--classes"),
    (["train", "--non-private", "--data", str(A1A), "--n-features", "123", "--classes", "1", "1"],
     "--classes"),
    (["train", "--non-private", "--data", str(A1A), "--n-features", "123", "--classes", "1", "x"],
     "--classes"),
    (["train", "--non-private", "--classes", "0", "1"], "--classes"),
    (["train", "--non-private", "--data", str(A1A), "--n-features", "123", "--test", str(A1A),
      "--split-seed", "1"], "--split-seed"),
    (["train", "--non-private", "--seed", "-1"], "--seed"),
    (["train", "--non-private", "--seed", str(2**128)], "--seed"),
    (["train", "--non-private", "--split-seed", "1.5"], "--split-seed"),
    (["evaluate", "--model-file", str(A1A), "--data", str(A1A), "--split-seed", "2"],
     "--split-seed"),
    (["evaluate", "--model-file", str(A1A), "--data", str(A1A), "--test-size", "0.3"],
     "--test-size"),
    (["predict", "--model-file", str(A1A), "--data", str(A1A), "--classes", "0", "1"],
     "--classes"),
    (["predict", "--model-file", str(A1A), "--data", str(A1A), "--nonprivate-stats"],
     "--nonprivate-stats"),
    (["account", "--model", "frank-wolfe", "--n-samples", "10", "--n-features", "5",
      "--epsilon", "1", "--seed", "3"], "--seed"),
    (["train", "--non-private", "--data", str(A1A), "--synthetic-samples", "10"],
     "--synthetic-samples"),
    (["train", "--non-private", "--data", str(A1A), "--cache-dir", "/tmp"], "--cache-dir"),
    (["train", "--non-private", "--cache-dir", "/tmp"], "--cache-dir"),
    (["train", "--non-private", "--data", str(NEWS20), "--cache-dir", "/nonexistent/dir/cache"],
     "--cache-dir"),
    (["train", "--non-private", "--data", str(A1A), "--n-features", "123", "--test",
      "/nonexistent/t"],
     "--test"),
    (["train", "--non-private", "--save", "/nonexistent/dir/m.skops"], "--save"),
    (["train", "--non-private", "--report", "/nonexistent/dir/r.json"], "--report"),
    (["evaluate", "--model-file", "/nonexistent/m.skops", "--data", str(A1A)],
     "--model-file"),
    (["evaluate", "--data", str(A1A)], "--model-file"),
    (["predict", "--model-file", "/nonexistent/m.skops"], "--data"),
    (["account", "--model", "dp-sgd", "--n-samples", "10"], "--n-features"),
    (["account", "--model", "frank-wolfe", "--n-samples", "0", "--n-features", "5",
      "--epsilon", "1"], "--n-samples"),
    (["account", "--model", "select-then-fit", "--n-samples", "10", "--n-features", "5",
      "--n-classes", "3", "--epsilon", "1"], "--n-classes"),
]


@pytest.mark.parametrize("argv, flag", BAD, ids=[" ".join(a)[:60] for a, _ in BAD])
def test_bad_arguments(argv, flag, capsys, monkeypatch):
    # the cases that name a real data file test the other argument: they need the file
    data = [Path(a) for a in map(str, argv) if a in (str(A1A), str(NEWS20), str(A1A_T))]
    if any(not d.exists() for d in data):
        pytest.skip("real data not found (DPTOOLKIT_DATA)")
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
    split_help = out.split("--split-seed SPLIT_SEED")[-1].split(" --", 1)[0]
    assert "(default: 0)" in split_help
    seed_help = out.split("--seed SEED")[-1].split(" --", 1)[0]
    assert "default: fresh OS entropy" in seed_help
    for name in MODELS:
        assert name in out


def test_default_is_one_constant():
    assert _models.resolve_model("default") == DEFAULT_MODEL == _models.DEFAULT_MODEL
    assert DEFAULT_MODEL in _models.MODELS


def test_unreadable_data_names_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.libsvm"
    bad.write_text("hello world\n")
    status, out, err = _run(["train", "--data", bad, "--n-features", 5, "--epsilon", 1],
                            capsys)
    assert status == 1
    assert f"--data {bad}" in err and "hello" in err


@need_a1a
def test_evaluate_reproduces_the_held_out_part_of_train(tmp_path, capsys):
    saved, r_train, r_eval = tmp_path / "m.skops", tmp_path / "t.json", tmp_path / "e.json"
    common = ["--data", A1A, "--test-size", 0.3, "--split-seed", 3]
    status, out, err = _run(["train", "--model", "dp-ight", *common, "--n-features", 123,
                             "--epsilon", 1, "--save", saved, "--report", r_train], capsys)
    assert status == 0, err
    status, out, err = _run(["evaluate", "--model-file", saved, *common, "--subset", "test",
                             "--report", r_eval], capsys)
    assert status == 0, err
    train, ev = json.loads(r_train.read_text()), _validate(r_eval)
    assert ev["metrics"] == train["metrics"]
    assert "--split-seed 3" in ev["data"]["split"]


def test_saved_model_carries_the_version(tmp_path, monkeypatch):
    import dptoolkit

    est = _fitted("frank-wolfe")
    path = save_model(est, tmp_path / "m.skops")
    assert not hasattr(est, "_dptoolkit_version")        # the caller's object untouched
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_model(path)._dptoolkit_version == dptoolkit.__version__
    monkeypatch.setattr(dptoolkit._version, "__version__", "99.0")
    with pytest.warns(UserWarning, match="saved by dptoolkit .* this is dptoolkit 99.0"):
        load_model(path)


def test_progress_on_a_terminal(tmp_path, capsys, monkeypatch):
    """stderr a terminal: models with a progress bar get verbose=1 (else 0)."""
    argv = ["train", "--model", "frank-wolfe", "--synthetic-samples", 300,
            "--synthetic-features", 200, "--max-iter", 20, "--epsilon", 1, "--delta", 1e-5,
            "--n-samples-public", 225]
    status, out, err = _run([*argv, "--save", tmp_path / "quiet.skops"], capsys)
    assert status == 0 and load_model(tmp_path / "quiet.skops").verbose == 0
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    status, out, err = _run([*argv, "--save", tmp_path / "tty.skops"], capsys)
    assert status == 0, err
    assert load_model(tmp_path / "tty.skops").verbose == 1
    assert "Frank-Wolfe" in err                        # the tqdm bar


# ---------------------------------------------------------------------------
# subsampled real corpora: the workflow on every corpus format
# ---------------------------------------------------------------------------

#: archive -> (member prefix -> documents taken), the first documents in archive order
#: (archives are sorted by name, so only the start of each is decompressed)
_SUBSAMPLES = {
    "imdb": ("aclImdb-train-test.tar.xz",
             {"aclImdb/test/neg/": 60, "aclImdb/test/pos/": 60}),
    "20news": ("20news-bydate.tar.xz",
               {"20news-bydate-test/alt.atheism/": 45,
                "20news-bydate-test/comp.graphics/": 45,
                "20news-bydate-test/comp.os.ms-windows.misc/": 45}),
    "enron": ("enron-spam-preprocessed.tar.xz",
              {"enron1/ham/": 80, "enron1/spam/": 80}),
    "sms": ("smsspamcollection.tar.xz", {"SMSSpamCollection": 1}),
}


def _first_documents(archive, want):
    import tarfile

    left, out = dict(want), {prefix: [] for prefix in want}
    with tarfile.open(archive, "r|xz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            for prefix in left:
                if left[prefix] and member.name.startswith(prefix):
                    out[prefix].append(tar.extractfile(member).read())
                    left[prefix] -= 1
                    break
            if not any(left.values()):
                break
    return out


@pytest.fixture(scope="session")
def corpora(tmp_path_factory):
    """Subsamples of the real corpora in their own layouts (name -> path).

    IMDB and 20news keep an own train/test split (2/3 of each class's documents
    in train); Enron-spam (one part, ``enron1``) and SMS spam (its first 600
    messages) have none, so the command line splits them.
    """
    root = tmp_path_factory.mktemp("corpora")
    paths = {}
    for name, (file, want) in _SUBSAMPLES.items():
        archive = TEXT / file
        if not archive.exists():
            continue
        docs = _first_documents(archive, want)
        if name == "sms":
            lines = docs["SMSSpamCollection"][0].splitlines(keepends=True)[:600]
            paths[name] = root / "sms" / "SMSSpamCollection"
            paths[name].parent.mkdir()
            paths[name].write_bytes(b"".join(lines))
            continue
        for prefix, texts in docs.items():
            cls = prefix.rstrip("/").rsplit("/", 1)[-1]
            for i, text in enumerate(texts):
                if name == "imdb":
                    split = "train" if i % 3 else "test"
                    folder = root / name / "aclImdb" / split / cls
                elif name == "20news":
                    split = "train" if i % 3 else "test"
                    folder = root / "20news-sub" / f"20news-bydate-{split}" / cls
                else:
                    folder = root / name / "enron1" / cls
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{i}.txt").write_bytes(text)
        paths[name] = root / ("20news-sub" if name == "20news" else name)
    return paths


CORPUS_CASES = {
    # name: (corpus, extra options, classes, model the default becomes)
    "imdb": ("imdb", [], ["neg", "pos"], DEFAULT_MODEL),
    "20news-binary": ("20news", ["--positive", "comp.", "--negative", "alt.atheism"],
                      ["alt.atheism", "comp.*"], DEFAULT_MODEL),
    "20news-multiclass": ("20news", [], ["alt.atheism", "comp.graphics",
                                         "comp.os.ms-windows.misc"], DEFAULT_MODEL),
    "enron": ("enron", [], ["ham", "spam"], DEFAULT_MODEL),
    "sms": ("sms", [], ["ham", "spam"], DEFAULT_MODEL),
}


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_corpus_workflow(case, corpora, tmp_path, capsys):
    """train -> save -> predict / evaluate -> report on each corpus format."""
    corpus, extra, classes, model = CORPUS_CASES[case]
    if corpus not in corpora:
        pytest.skip(f"{corpus} archive not available")
    data = ["--data", corpora[corpus], *extra]
    saved, report, ev_report = tmp_path / "m.skops", tmp_path / "r.json", tmp_path / "e.json"
    status, out, err = _run(["train", *data, "--n-features", 4096, "--epsilon", 4,
                             "--delta", 1e-5, "--n-samples-public", 100, "--save", saved,
                             "--report", report], capsys)
    assert status == 0, err
    rep = _validate(report)
    assert rep["data"]["classes"] == classes and rep["model"]["name"] == model
    assert rep["data"]["n_features"] == 4096 and rep["privacy"]["private"]
    own_split = corpus in ("imdb", "20news")
    assert ("own train/test split" in rep["data"]["split"]) == own_split
    fitted = load_model(saved)     # the declared label set, passed to the estimator
    assert list(fitted.classes) == [float(c) for c in range(len(classes))]

    status, out, err = _run(["evaluate", "--model-file", saved, *data, "--report",
                             ev_report], capsys)
    assert status == 0, err
    ev = _validate(ev_report)
    assert ev["data"]["classes"] == classes
    # evaluate scores the held-out part train made (own split, or the same hashed split)
    assert ev["metrics"] == rep["metrics"]
    status, out, err = _run(["predict", "--model-file", saved, *data, "--subset", "all"],
                            capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("index,prediction")
    X_all, _, _ = datasets.load_text_corpus(corpora[corpus], subset="all", n_features=4096,
                                            **({"positive": extra[1], "negative": extra[3]}
                                               if extra else {}))
    assert len(lines) == X_all.shape[0] + 1
    predicted = [line.split(",")[1] for line in lines[1:]]     # the class names
    assert predicted == [classes[int(c)] for c in fitted.predict(X_all)]


def test_label_set_read_from_examples_is_documented(corpora, tmp_path, capsys):
    """A label<TAB>text corpus without --positive/--negative has the labels its
    lines carry: a neighbour with one line of a new label has another label set.
    The output says so (same text on both), and --positive/--negative make the
    label set public (no note)."""
    if "sms" not in corpora:
        pytest.skip("sms archive not available")
    from dptoolkit.cli._data import LABELS_FROM_EXAMPLES

    neighbour = tmp_path / "sms" / "SMSSpamCollection"
    neighbour.parent.mkdir()
    neighbour.write_bytes(corpora["sms"].read_bytes() + b"promo\tcall now for a prize\n")
    outputs = []
    for path in (corpora["sms"], neighbour):
        status, out, err = _run(["train", "--data", path, "--n-features", 1024,
                                 "--epsilon", 4, "--delta", 1e-5, "--n-samples-public",
                                 100, "--seed", 1], capsys)
        assert status == 0, err
        outputs.append(out)
    assert all(LABELS_FROM_EXAMPLES in out for out in outputs)
    assert "'promo'" not in outputs[0] and "'promo'" in outputs[1]
    status, out, err = _run(["train", "--data", corpora["sms"], "--positive", "spam",
                             "--negative", "ham", "--n-features", 1024, "--epsilon", 4,
                             "--delta", 1e-5, "--n-samples-public", 100], capsys)
    assert status == 0, err
    assert LABELS_FROM_EXAMPLES not in out
    for corpus in ("imdb", "enron"):      # class folders: a public label set
        if corpus in corpora:
            assert not datasets.corpus_labels_from_examples(corpora[corpus])


def test_split_options_refused_for_a_corpus_with_its_own_split(corpora, capsys):
    if "20news" not in corpora:
        pytest.skip("20news archive not available")
    for option in (["--test-size", 0.3], ["--split-seed", 1]):
        status, out, err = _run(["train", "--non-private", "--data", corpora["20news"],
                                 "--n-features", 64,
                                 "--positive", "comp.", *option], capsys)
        assert status == 2 and option[0] in err and "own" in err


# ---------------------------------------------------------------------------
# privacy of the command line itself
# ---------------------------------------------------------------------------

def _coef_of(path):
    from dptoolkit.cli._report import model_coef

    return model_coef(load_model(path))


@pytest.mark.parametrize("model", ["frank-wolfe", "dp-sgd", "dp-nb-logistic"])
def test_noise_is_fresh_without_seed(model, tmp_path, capsys):
    """Two runs without --seed release different models (fresh OS entropy); with --seed
    the same one, and a warning says the noise is then reproducible."""
    argv = ["train", "--model", model, "--synthetic-samples", 400, "--synthetic-features",
            300, "--epsilon", 1, "--delta", 1e-5]
    if model == "frank-wolfe":
        argv += ["--max-iter", 30]
    paths = [tmp_path / f"{i}.skops" for i in range(4)]
    for path in paths[:2]:
        status, out, err = _run([*argv, "--save", path], capsys)
        assert status == 0, err
        assert "--seed" not in err and "noise: fresh OS entropy" in out
    # identical data and options: only the noise differs (the chance that two
    # independent runs give bit-identical weights is negligible)
    assert not np.array_equal(_coef_of(paths[0]), _coef_of(paths[1]))
    for path in paths[2:]:
        status, out, err = _run([*argv, "--seed", 7, "--save", path], capsys)
        assert status == 0, err
        assert "warning (PrivacyLeakWarning): --seed 7 fixes the noise" in err
        assert "noise: --seed 7: reproducible" in out
    np.testing.assert_array_equal(_coef_of(paths[2]), _coef_of(paths[3]))


def test_no_seed_warning_for_a_non_private_fit(capsys):
    status, out, err = _run(["train", "--non-private", "--model", "frank-wolfe",
                             "--synthetic-samples", 200,
                             "--synthetic-features", 100, "--max-iter", 10, "--seed", 1],
                            capsys)
    assert status == 0, err
    assert "PrivacyLeakWarning" not in err


def _a1a_rows(n):
    import bz2

    with bz2.open(A1A, "rt") as f:
        return [next(f) for _ in range(n)]


#: Lines of train's output that hold released figures: the model's metrics on the
#: held-out examples, and what a search or a selection released.
_RELEASED_LINES = ("  test accuracy", "  search:", "  selection:")


#: The label the command line puts on a notice computed from the training data.
_OUTSIDE = "(a notice computed from the training data: outside the guarantee)"


def _unreleased(out):
    return [line for line in out.splitlines() if not line.startswith(_RELEASED_LINES)]


def _unreleased_report(report):
    report = dict(report, metrics=None, created=None)
    report["model"] = {k: v for k, v in report["model"].items()
                       if k not in ("best_params", "selected_features")}
    return report


def _neighbours(tmp_path, n_rows=300):
    """D (the first rows of a1a) and D' = D plus the row ``+1 5:1 200:1``, as the
    training file ``data.libsvm`` in two folders (so that paths print the same), each
    with the same test file ``test.libsvm`` (the next rows of a1a): the added row is
    a training example."""
    rows = _a1a_rows(n_rows + 150)
    folders = []
    for name, extra in (("D", []), ("D1", ["+1 5:1 200:1\n"])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "data.libsvm").write_text("".join(rows[:n_rows] + extra))
        (folder / "test.libsvm").write_text("".join(rows[n_rows:]))
        folders.append(folder)
    return folders


def _run_in(folder, argv, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    return out, err, json.loads((folder / "r.json").read_text())


@need_a1a
@pytest.mark.parametrize("model", MODELS)
def test_neighbouring_files_print_the_same_but_the_release(model, tmp_path, capsys,
                                                           monkeypatch):
    """D and D' (one row added) give the same output and report, apart from the
    released figures (the model's test metrics, what a search or a selection
    released), when N is public (--n-samples-public) and the noise seed the same: the
    dimension (--n-features), the classes, delta and the split of the other rows
    depend on no example."""
    argv = ["train", "--model", model, "--data", "data.libsvm", "--test", "test.libsvm",
            "--n-features", 300, "--epsilon", 1, "--delta", 1e-5, "--seed", 5,
            "--report", "r.json",
            *{"select-then-fit": ["--k", "10"], "frank-wolfe": ["--max-iter", 50],
              "search": ["--n-runs", "2", "--search-model", "frank-wolfe", "--max-iter",
                         20]}.get(model, [])]
    if _models.option_applies_to("n_samples_public", model):
        argv += ["--n-samples-public", 300]
    (d, d1) = _neighbours(tmp_path)
    out, err, rep = _run_in(d, argv, capsys, monkeypatch)
    out1, err1, rep1 = _run_in(d1, argv, capsys, monkeypatch)
    assert _unreleased(out) == _unreleased(out1)
    # stderr: the same, but for the estimators' notices about clipped examples, labelled
    # as outside the guarantee (by the estimator, or else by the command line; dp-ight
    # counts the rows it rescales)
    differing = set(err.splitlines()) ^ set(err1.splitlines())
    assert all(line.startswith("warning (DataClippedWarning)") and (
        line.endswith(_OUTSIDE) or DATA_DEPENDENT_NOTE in line) for line in differing), \
        differing
    assert _unreleased_report(rep) == _unreleased_report(rep1)
    assert "300 features" in out and "nnz" not in out and "x 300" not in out


@need_a1a
def test_neighbouring_files_without_public_n(tmp_path, capsys, monkeypatch):
    """Without --n-samples-public the estimator takes N from the data (a
    PrivacyLeakWarning says so): the outputs of D and D' then differ in the privacy
    event built from that N (the documented difference: the output says "N: taken
    from the data"; the guarantee covers same-size neighbours only)."""
    argv = ["train", "--model", "dp-sgd", "--data", "data.libsvm", "--test", "test.libsvm",
            "--n-features", 300, "--epsilon", 1, "--report", "r.json"]
    (d, d1) = _neighbours(tmp_path)
    out, err, rep = _run_in(d, argv, capsys, monkeypatch)
    out1, err1, rep1 = _run_in(d1, argv, capsys, monkeypatch)
    assert "N: taken from the data by the estimator" in out
    assert err == err1 and "PrivacyLeakWarning): n_samples_public is None" in err
    # the privacy event too (DP-SGD's number of steps is set by N), and its exact spend
    differing = set(_unreleased(out)) ^ set(_unreleased(out1))
    assert differing and all(line.startswith("    ") and "Event(" in line
                             for line in differing), differing
    rep, rep1 = _unreleased_report(rep), _unreleased_report(rep1)
    assert rep["privacy"]["privacy_event"] != rep1["privacy"]["privacy_event"]
    for r in (rep, rep1):   # and the exact spend, calibrated on that event
        r["privacy"] = dict(r["privacy"], privacy_event=None, privacy_spent=None)
    assert rep == rep1


@need_a1a
def test_nonprivate_stats_are_labelled_and_apart(tmp_path, capsys, monkeypatch):
    """--nonprivate-stats: the training figures, in their own section of the output
    and of the report, labelled as outside the guarantee."""
    (d, _) = _neighbours(tmp_path)
    argv = ["train", "--model", "dp-sgd", "--data", "data.libsvm", "--n-features", 300,
            "--epsilon", 1, "--n-samples-public", 225, "--report", "r.json"]
    out, err, rep = _run_in(d, [*argv, "--nonprivate-stats"], capsys, monkeypatch)
    _validate(d / "r.json")
    section = rep["outside_guarantee"]
    assert "not covered by the guarantee" in section["note"]
    assert section["n_train"] + rep["metrics"]["n_samples"] == 300     # the split of D
    assert sum(section["class_counts_train"]) == section["n_train"]
    stats = out.split("outside the guarantee (computed from the training data without "
                      "privacy", 1)
    assert len(stats) == 2 and f"train {section['n_train']} examples" in stats[1]
    assert f"nnz {section['nnz_train']}" in stats[1] and "nnz" not in stats[0]
    assert set(rep) - {"outside_guarantee"} == set(
        _run_in(d, argv, capsys, monkeypatch)[2])


def test_split_depends_on_each_example_alone():
    """An example's side depends on its own features and the seed only: adding rows
    never moves another row, and about --test-size of the rows are held out."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.random_array((2000, 50), density=0.1, format="csr", random_state=rng)
    mask = _data.held_out(X, 0.25, 0)
    more = sp.vstack([X[:700], sp.random_array((5, 50), density=0.3, random_state=rng),
                      X[700:]], format="csr")
    mask_more = _data.held_out(more, 0.25, 0)
    np.testing.assert_array_equal(np.delete(mask_more, np.arange(700, 705)), mask)
    # held-out count ~ Binomial(2000, 0.25): sd 19.4; the band is 5.1 sd (a
    # false-failure rate below 1e-6 for a hash that behaves as random)
    assert abs(mask.sum() - 500) < 100
    assert not np.array_equal(mask, _data.held_out(X, 0.25, 1))    # the seed matters


def test_libsvm_labels_are_public(tmp_path, capsys):
    """A LIBSVM file's classes: --classes, or the binary convention; never inferred."""
    path = tmp_path / "labels12.libsvm"
    path.write_text("".join(f"{1 + i % 2} {1 + i % 7}:1 {9 + i % 5}:1\n"
                            for i in range(200)))
    common = ["train", "--non-private", "--model", "frank-wolfe", "--data", path, "--n-features",
              20,
              "--max-iter", 10]
    status, out, err = _run(common, capsys)
    assert status == 2 and "--classes: " in err
    assert "the label 2, outside the LIBSVM binary convention" in err
    report = tmp_path / "r.json"
    status, out, err = _run([*common, "--classes", 1, 2, "--report", report], capsys)
    assert status == 0, err
    assert _validate(report)["data"]["classes"] == [1.0, 2.0]
    status, out, err = _run([*common, "--classes", 1, 3], capsys)
    assert status == 2 and "--classes: " in err and "label 2, not one of --classes 1 3" in err
    # evaluate reads the labels with the same --classes, checked against the model first
    saved = tmp_path / "m.skops"
    status, out, err = _run([*common, "--classes", 1, 2, "--save", saved], capsys)
    assert status == 0, err
    evaluate = ["evaluate", "--model-file", saved, "--data", path]
    status, out, err = _run([*evaluate, "--classes", 1, 2], capsys)
    assert status == 0 and "accuracy" in out, err
    status, out, err = _run([*evaluate, "--classes", 1, 2, 3], capsys)
    assert status == 2 and "--classes 1 2 3" in err and "trained with --classes 1 2" in err
    status, out, err = _run(evaluate, capsys)     # the model's own classes, saved with it
    assert status == 0 and "accuracy" in out, err
    status, out, err = _run(["predict", "--model-file", saved, "--data", path], capsys)
    assert status == 0, err
    assert {line.split(",")[1] for line in out.splitlines()[1:]} <= {"1", "2"}


def test_feature_index_above_n_features_is_refused(tmp_path, capsys):
    """The dimension is --n-features: a file with a higher index is refused (naming the
    line), never widened (the dimension would then depend on one example)."""
    rows = [f"{1 if i % 2 else -1} {1 + i % 7}:1\n" for i in range(50)] + ["+1 5:1 200:1\n"]
    path = tmp_path / "wide.libsvm"
    path.write_text("".join(rows))
    status, out, err = _run(["train", "--data", path, "--n-features", 100, "--epsilon", 1],
                            capsys)
    assert status == 2 and "--n-features" in err and "line 51" in err and "200" in err


def test_delta_is_public_and_checked_against_n(capsys):
    """delta comes from --delta or the estimator's default, stated; a warning when it
    is not below 1/N (--n-samples-public)."""
    argv = ["train", "--model", "dp-sgd", "--synthetic-samples", 300, "--synthetic-features",
            100, "--epsilon", 1, "--n-samples-public", 200]
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    assert "delta: no --delta: DPSGDClassifier's default 1e-05, a public constant" in out
    assert "delta = " not in err
    status, out, err = _run([*argv, "--delta", 0.01], capsys)
    assert status == 0, err
    assert "delta: --delta 0.01" in out
    assert "PrivacyLeakWarning): delta = 0.01 >= 1/N = 1/200" in err


# ---------------------------------------------------------------------------
# the saved data description: labels out, no label flags repeated, data checked
# ---------------------------------------------------------------------------

def _three_class_file(path, labels=(2, 4, 7), n=240):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        c = i % 3
        feats = sorted(set(rng.choice(30, 5, replace=False).tolist()) | {c + 1})
        rows.append(f"{labels[c]} " + " ".join(f"{j + 1}:1" for j in feats))
    path.write_text("\n".join(rows) + "\n")
    return path


def test_saved_description_gives_labels_and_needs_no_label_flags(tmp_path, capsys):
    path = _three_class_file(tmp_path / "three.libsvm")
    saved = tmp_path / "m.skops"
    status, out, err = _run(["train", "--model", "frank-wolfe", "--data", path,
                             "--n-features", 30, "--classes", 2, 4, 7, "--epsilon", 2,
                             "--delta", 1e-5, "--n-samples-public", 180, "--max-iter", 30,
                             "--save", saved], capsys)
    assert status == 0, err
    desc = load_model(saved).data_description_
    assert desc["source"] == "libsvm" and desc["n_features"] == 30
    assert desc["classes"] == [2.0, 4.0, 7.0] and desc["label_convention"] == "declared"
    # predict writes the labels of the file, not class indices
    status, out, err = _run(["predict", "--model-file", saved, "--data", path], capsys)
    assert status == 0, err
    fitted = load_model(saved)
    X, _ = datasets.load_libsvm(path, n_features=30)
    written = [line.split(",")[1] for line in out.splitlines()[1:]]
    assert written == [["2", "4", "7"][int(c)] for c in fitted.predict(X)]
    # evaluate without --classes: the model's own
    report = tmp_path / "e.json"
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", path,
                             "--report", report], capsys)
    assert status == 0, err
    assert _validate(report)["data"]["classes"] == [2.0, 4.0, 7.0]
    # the same --classes are accepted, others refused before reading, naming the option
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", path,
                             "--classes", 2, 4, 7], capsys)
    assert status == 0, err
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", path,
                             "--classes", 1, 2, 3], capsys)
    assert status == 2 and "--classes 1 2 3" in err and "--classes 2 4 7" in err


@need_a1a
def test_evaluate_refuses_data_of_another_description(tmp_path, capsys, monkeypatch,
                                                      corpora):
    saved = tmp_path / "a1a.skops"
    status, out, err = _run(["train", "--model", "dp-ight", "--data", A1A, "--n-features",
                             123, "--epsilon", 1, "--n-samples-public", 1200, "--save",
                             saved], capsys)
    assert status == 0, err
    # a LIBSVM model and a corpus: refused before any data is read, naming --data
    corpus = next(iter(corpora.values()), NEWS20)
    if not Path(corpus).exists():
        pytest.skip("no corpus available")
    with monkeypatch.context() as m:
        _forbid_data(m)
        for command in ("evaluate", "predict"):
            status, out, err = _run([command, "--model-file", saved, "--data", corpus],
                                    capsys)
            assert status == 2 and "--data" in err and "LIBSVM file with 123" in err, err
    # a corpus model and a corpus with other classes: refused after reading its classes
    if not {"imdb", "sms"} <= set(corpora):
        pytest.skip("imdb and sms subsamples needed")
    saved = tmp_path / "imdb.skops"
    status, out, err = _run(["train", "--data", corpora["imdb"], "--n-features", 1024,
                             "--epsilon", 4, "--n-samples-public", 100, "--save", saved],
                            capsys)
    assert status == 0, err
    for command in ("evaluate", "predict"):
        status, out, err = _run([command, "--model-file", saved, "--data", corpora["sms"],
                                 "--subset", "all"], capsys)
        assert status == 2 and "--data" in err and "['ham', 'spam']" in err, err
    # a LIBSVM file for a corpus model: refused before reading
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", A1A], capsys)
    assert status == 2 and "--data" in err and "text corpus" in err


def test_corpus_task_is_taken_from_the_model(tmp_path, capsys, corpora):
    if "20news" not in corpora:
        pytest.skip("20news subsample not available")
    saved = tmp_path / "m.skops"
    task = ["--positive", "comp.", "--negative", "alt.atheism"]
    status, out, err = _run(["train", "--data", corpora["20news"], *task, "--n-features",
                             1024, "--epsilon", 4, "--n-samples-public", 100, "--save",
                             saved], capsys)
    assert status == 0, err
    status, out, err = _run(["evaluate", "--model-file", saved, "--data",
                             corpora["20news"]], capsys)
    assert status == 0 and "'alt.atheism', 'comp.*'" in out, err
    status, out, err = _run(["evaluate", "--model-file", saved, "--data",
                             corpora["20news"], "--positive", "rec."], capsys)
    assert status == 2 and "--positive rec." in err and "--positive comp." in err


def test_old_model_file_without_description(tmp_path, capsys):
    """A file saved without a description (older dptoolkit): loads, says what is
    then needed, and uses the flags as before."""
    path = _three_class_file(tmp_path / "three.libsvm", labels=(0, 1, 2))
    est = _fitted("frank-wolfe")      # 200 features: refit on the 30-feature file
    X, y = datasets.load_libsvm(path, n_features=30, binary_labels=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.set_params(n_samples_public=240).fit(X, y)
    saved = save_model(est, tmp_path / "old.skops")
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", path], capsys)
    assert status == 2 and "no description" in err and "--classes" in err
    status, out, err = _run(["evaluate", "--model-file", saved, "--data", path,
                             "--classes", 0, 1, 2], capsys)
    assert status == 0 and "accuracy" in out, err
    status, out, err = _run(["predict", "--model-file", saved, "--data", path], capsys)
    assert status == 0 and "class indices" in err
    assert out.splitlines()[1].split(",")[1] in ("0.0", "1.0", "2.0")


def test_a_plain_skops_file_is_not_a_dptoolkit_model(tmp_path, capsys):
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    path = _three_class_file(tmp_path / "three.libsvm", labels=(0, 1, 2))
    X, y = datasets.load_libsvm(path, n_features=30, binary_labels=False)
    sio.dump(LogisticRegression().fit(X, y), tmp_path / "sk.skops")
    status, out, err = _run(["evaluate", "--model-file", tmp_path / "sk.skops", "--data",
                             path, "--classes", 0, 1, 2], capsys)
    assert status == 2 and "--model-file" in err and "not a dptoolkit model" in err
    assert "unknown version" not in err


def test_multiclass_default_keeps_the_default_delta(tmp_path, capsys):
    """--model default on more than two classes without --delta: the default model
    with its own delta (a public constant, stated), not pure DP."""
    path = _three_class_file(tmp_path / "three.libsvm", labels=(0, 1, 2))
    report = tmp_path / "r.json"
    status, out, err = _run(["train", "--data", path, "--n-features", 30, "--classes", 0,
                             1, 2, "--epsilon", 1, "--n-samples-public", 180, "--report",
                             report], capsys)
    assert status == 0, err
    delta = _models.default_of(_models.MODELS[DEFAULT_MODEL].cls, "delta")
    assert "pure epsilon-DP" not in err
    rep = _validate(report)
    assert rep["privacy"]["privacy_spent"][1] == delta
    # an explicit --model frank-wolfe without --delta stays pure DP, with the hint
    status, out, err = _run(["train", "--model", "frank-wolfe", "--data", path,
                             "--n-features", 30, "--classes", 0, 1, 2, "--epsilon", 1,
                             "--n-samples-public", 180, "--max-iter", 20], capsys)
    assert status == 0, err
    assert "pure epsilon-DP" in err and "--delta" in err


# ---------------------------------------------------------------------------
# a DP-named estimator is private by default; an explicit epsilon=None is silent
# ---------------------------------------------------------------------------

def _dp_named():
    import inspect

    from dptoolkit import linear_model, selection
    from dptoolkit._private import PrivateEstimatorMixin

    found = []
    for module in (linear_model, selection):
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isclass(obj) and issubclass(obj, PrivateEstimatorMixin)
                    and name.startswith("DP")):
                found.append(obj)
    return found


@pytest.mark.parametrize("cls", _dp_named(), ids=lambda c: c.__name__)
def test_dp_named_estimator_is_private_by_default(cls):
    from dptoolkit.exceptions import PrivacyLeakWarning

    X, y, _ = datasets.make_sparse_classification(n_samples=200, n_features=40,
                                                  random_state=0)
    params = cls().get_params()
    # DP-IGHT's k is its candidate screening, which a non-private fit does not run
    kw = {"k": 5} if "k" in params and "sparsity" not in params else {}
    if "n_epochs" in params:
        kw["n_epochs"] = 1
    if "n_samples_public" in params:
        kw["n_samples_public"] = 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = cls(**kw).fit(X, y)
    assert default.privacy_spent_ is not None and default.privacy_spent_[0] <= 1.0
    # the explicit non-private choice is not warned about at every fit
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        nonprivate = cls(epsilon=None, **kw).fit(X, y)
    assert nonprivate.privacy_spent_ is None
    assert not any(issubclass(w.category, PrivacyLeakWarning) for w in rec), \
        [str(w.message) for w in rec]


def test_non_private_by_name_estimators_do_not_warn():
    """Frank-Wolfe LASSO and the Sparsifier are non-private algorithms with a private
    option: a fit without epsilon is their documented non-private use."""
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    X, y, _ = datasets.make_sparse_classification(n_samples=200, n_features=40,
                                                  random_state=0)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        FrankWolfeLassoClassifier(max_iter=10, epsilon=None).fit(X, y)
    assert not any("fitted without epsilon" in str(w.message) for w in rec)


# ---------------------------------------------------------------------------
# argument errors found only once the data are read: still exit 2, naming the option
# ---------------------------------------------------------------------------

SMS_ARCHIVE = TEXT / "smsspamcollection.tar.xz"

AFTER_READING = [
    # (argv with {placeholders}, the option named)
    (["train", "--data", "{tiny}", "--n-features", "5", "--epsilon", "1"], "--n-features"),
    (["train", "--data", "{labels3}", "--n-features", "20", "--epsilon", "1"], "--classes"),
    (["train", "--data", "{labels3}", "--n-features", "20", "--epsilon", "1", "--classes",
      "-1", "2"], "--classes"),
    (["train", "--data", "{tiny}", "--n-features", "20", "--epsilon", "1", "--test",
      "{labels3}"], "--classes"),
    (["train", "--model", "dp-sgd", "--data", "{tiny}", "--n-features", "20", "--epsilon",
      "1", "--batch-size", "190"], "--batch-size"),
    (["train", "--model", "search", "--search-model", "dp-sgd", "--data", "{tiny}",
      "--n-features", "20", "--epsilon", "1", "--n-samples-public", "150", "--grid",
      "batch_size=500"], "--batch-size"),
    (["train", "--data", "{sms}", "--positive", "bogus", "--epsilon", "1"], "--positive"),
    (["train", "--data", "{sms}", "--negative", "bogus", "--epsilon", "1"], "--negative"),
    (["train", "--data", "{sms_archive}", "--cache-dir", "/proc/dptoolkit-cache",
      "--epsilon", "1"], "--cache-dir"),
    (["evaluate", "--model-file", "{binary_model}", "--data", "{labels3}"], "--data"),
    (["evaluate", "--model-file", "{binary_model}", "--data", "{tiny}", "--classes", "0",
      "1"], "--classes"),
    (["evaluate", "--model-file", "{binary_model}", "--data", "{wide}"], "--data"),
    (["evaluate", "--model-file", "{sklearn_model}", "--data", "{tiny}"], "--model-file"),
]


@pytest.fixture(scope="module")
def error_files(tmp_path_factory):
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    root = tmp_path_factory.mktemp("errors")
    files = {"tiny": root / "tiny.libsvm", "labels3": root / "labels3.libsvm",
             "wide": root / "wide.libsvm", "binary_model": root / "binary.skops",
             "sklearn_model": root / "sk.skops", "sms_archive": SMS_ARCHIVE}
    files["tiny"].write_text("".join(f"{1 if i % 2 else -1} {1 + i % 7}:1 {9 + i % 5}:1\n"
                                     for i in range(200)))
    files["labels3"].write_text("".join(f"{3 if i % 2 else -1} {1 + i % 7}:1\n"
                                        for i in range(200)))
    files["wide"].write_text("+1 1:1 25:1\n-1 2:1\n")
    status = main(["train", "--model", "dp-ight", "--data", str(files["tiny"]),
                   "--n-features", "20", "--epsilon", "1", "--n-samples-public", "150",
                   "--save", str(files["binary_model"])])
    assert status == 0
    X, y = datasets.load_libsvm(files["tiny"], n_features=20)
    sio.dump(LogisticRegression().fit(X, y), files["sklearn_model"])
    if SMS_ARCHIVE.exists():
        files["sms"] = root / "sms" / "SMSSpamCollection"
        files["sms"].parent.mkdir()
        files["sms"].write_bytes(b"ham\thello there\nspam\twin a prize now\n" * 40)
    return files


@pytest.mark.parametrize("argv, flag", AFTER_READING,
                         ids=[" ".join(a)[:70] for a, _ in AFTER_READING])
def test_argument_errors_after_reading_exit_2(argv, flag, error_files, capsys):
    needed = [a[1:-1] for a in argv if a.startswith("{")]
    if any(n not in error_files or not Path(error_files[n]).exists() for n in needed):
        pytest.skip("data not available")
    argv = [str(error_files[a[1:-1]]) if a.startswith("{") else a for a in argv]
    status, out, err = _run(argv, capsys)
    assert status == 2, err
    assert f"error: {flag}" in err, err
    assert "could not read" not in err        # not blamed on reading --data


def test_csv_given_as_libsvm_shows_a_short_excerpt_once(tmp_path, capsys):
    path = tmp_path / "data.csv"
    header = "label," + ",".join(f"f{i}" for i in range(2000))
    path.write_text(header + "\n" + "\n".join("1," + ",".join(["0"] * 2000)
                                              for _ in range(5)) + "\n")
    status, out, err = _run(["train", "--data", path, "--n-features", 2000, "--epsilon", 1],
                            capsys)
    assert status == 1 and f"--data {path}" in err and "line 1" in err
    assert len(err) < 600 and err.count("label,f0,f1") == 1 and "CSV" in err


# ---------------------------------------------------------------------------
# progress: on request (or on a terminal), on stderr, never changing the results
# ---------------------------------------------------------------------------

def test_progress_bars_with_verbose_on_a_corpus(corpora, tmp_path, capsys):
    if "sms" not in corpora:
        pytest.skip("sms subsample not available")
    common = ["train", "--data", corpora["sms"], "--positive", "spam", "--negative", "ham",
              "--n-features", 1024, "--epsilon", 4, "--n-samples-public", 400, "--seed", 2]
    status, out, err = _run([*common, "--verbose", 1, "--save", tmp_path / "v.skops"],
                            capsys)
    assert status == 0, err
    assert "reading the label-tab-text corpus" in err and "hashing label-tab-text" in err
    assert "doc" in err                                   # the tqdm bar over documents
    assert "fitting DPNBLogisticClassifier" in err        # --verbose for the default model
    status, out2, err2 = _run([*common, "--save", tmp_path / "q.skops"], capsys)
    assert status == 0, err2
    assert "hashing" not in err2 and "fitting" not in err2   # not a terminal: quiet
    # the same model with and without progress
    np.testing.assert_array_equal(_coef_of(tmp_path / "v.skops"),
                                  _coef_of(tmp_path / "q.skops"))
    # predict / evaluate take --verbose too (the corpus's reading)
    status, out, err = _run(["evaluate", "--model-file", tmp_path / "v.skops", "--data",
                             corpora["sms"], "--verbose", 1], capsys)
    assert status == 0 and "hashing label-tab-text" in err, err


@pytest.mark.parametrize("model", ["dp-sgd", "dp-scd", "dp-ight", "sparsifier"])
def test_verbose_is_accepted_by_every_model(model, capsys):
    status, out, err = _run(["train", "--model", model, "--synthetic-samples", 300,
                             "--synthetic-features", 100, "--epsilon", 1, "--verbose", 1],
                            capsys)
    assert status == 0, err
    assert "elapsed" in err or "it/s" in err or "it]" in err


def test_corpus_hashing_with_progress_is_the_same_matrix(corpora):
    if "enron" not in corpora:
        pytest.skip("enron subsample not available")
    quiet = datasets.load_text_corpus(corpora["enron"], "all", n_features=2048)
    shown = datasets.load_text_corpus(corpora["enron"], "all", n_features=2048, verbose=1)
    assert quiet[2] == shown[2]
    np.testing.assert_array_equal(quiet[1], shown[1])
    for attr in ("data", "indices", "indptr"):
        a, b = getattr(quiet[0], attr), getattr(shown[0], attr)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_select_then_fit_spends_the_total_budget(capsys):
    """--epsilon and --delta are the pipeline's total budget: both steps' budgets are
    set by PrivateSelectThenFit (a share --selection-share to DP-SIS) so that their
    composed event spends exactly (--epsilon, --delta); with a delta DP-SIS's selector
    "auto" takes the Gaussian release when there are more features than N; without
    --delta both steps are pure DP and share --epsilon."""
    from dptoolkit.accounting.events import GaussianEvent
    from dptoolkit.cli._parser import build_parser
    from dptoolkit.selection import PrivateSelectThenFit

    argv = ["train", "--model", "select-then-fit", "--synthetic-samples", "300",
            "--synthetic-features", "500", "--epsilon", "1", "--n-samples-public", "200",
            "--seed", "0"]
    est = _models.build_model(build_parser().parse_args(argv + ["--delta", "1e-5"]))
    assert (est.epsilon, est.delta) == (1.0, 1e-5)
    assert est.selection_share == PrivateSelectThenFit(None, None, epsilon=None).selection_share
    assert est.selector.epsilon is None and est.estimator.epsilon is None
    assert est.selector.n_samples_public == 200
    status, out, err = _run(argv + ["--delta", "1e-5"], capsys)
    assert status == 0, err
    assert "GaussianEvent" in out and "(1, 1e-05)-DP" in out
    shared = _models.build_model(build_parser().parse_args(
        argv + ["--delta", "1e-5", "--selection-share", "0.3"]))
    assert shared.selection_share == 0.3
    pure = _models.build_model(build_parser().parse_args(argv))
    assert pure.delta is None and pure.selector.delta is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y, _ = datasets.make_sparse_classification(n_samples=300, n_features=500,
                                                      random_state=0)
        fitted = shared.fit(X, y)
    assert fitted.privacy_spent_[0] == pytest.approx(1.0, rel=1e-7)
    assert fitted.privacy_spent_[1] == 1e-5
    assert isinstance(fitted.selector_.privacy_event_, GaussianEvent)


# ---------------------------------------------------------------------------
# the command line: train needs --epsilon E or --non-private
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["default", "frank-wolfe", "dp-sgd", "sparsifier"])
def test_cli_train_without_a_privacy_choice_exits_2(model, capsys, monkeypatch):
    _forbid_data(monkeypatch)
    status, out, err = _run(["train", "--model", model], capsys)
    assert status == 2
    assert "train needs --epsilon E" in err and "--non-private" in err


def test_cli_non_private_excludes_epsilon(capsys, monkeypatch):
    _forbid_data(monkeypatch)
    status, out, err = _run(["train", "--epsilon", "1", "--non-private"], capsys)
    assert status == 2
    assert "--non-private and --epsilon exclude each other" in err


@pytest.mark.parametrize("model", ["search", "select-then-fit"])
def test_cli_private_only_models_refuse_non_private(model, capsys, monkeypatch):
    _forbid_data(monkeypatch)
    status, out, err = _run(["train", "--model", model, "--non-private"], capsys)
    assert status == 2
    assert "--epsilon is required" in err and "no --non-private fit" in err


def test_cli_non_private_fit(capsys):
    status, out, err = _run(["train", "--non-private", "--model", "dp-sgd",
                             "--synthetic-samples", 300, "--synthetic-features", 40,
                             "--n-epochs", 1], capsys)
    assert status == 0, err
    assert "privacy: none" in out
    assert "PrivacyLeakWarning" not in err


def test_cli_private_fit_spends_epsilon(capsys):
    status, out, err = _run(["train", "--epsilon", "1", "--model", "dp-sgd",
                             "--synthetic-samples", 300, "--synthetic-features", 40,
                             "--n-epochs", 1], capsys)
    assert status == 0, err
    assert "privacy: none" not in out


def test_cli_help_names_non_private(capsys):
    status, out, err = _run(["train", "--help"], capsys)
    assert status == 0
    assert "--non-private" in out
