"""``train --scheduler ADDRESS`` / ``--n-workers N``: the fit on a Dask cluster.

A ``LocalCluster`` of two single-threaded worker processes, tiny synthetic data.  A
cluster fit of Frank-Wolfe releases the in-memory model up to the rounding of the
summation order, so the printed figures (four decimals) are the same; the fits that
run DP-SGD over the blocks (DP-SGD, DP-NB, the default) draw their lots per block,
so they print the in-memory guarantee and another accuracy; nothing here is
statistical.
"""
import logging

import pytest

from dptoolkit.cli import _cluster, _models

from test_cli import _run  # main(argv) -> (status, stdout, stderr)

distributed = pytest.importorskip(
    "dask.distributed", reason="dask[distributed] is not installed (pip install "
    "dptoolkit[dask]); the distributed backend is optional")

TINY = ["train", "--epsilon", "1", "--seed", "0", "--synthetic-samples", "1500",
        "--synthetic-features", "800"]


@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    yield cluster.scheduler_address
    cluster.close()


def _without_cluster_line(out):
    return [ln for ln in out.splitlines() if not ln.startswith("  cluster: ")]


#: Models whose cluster fit runs DP-SGD with its lots drawn per block on the
#: workers: the same event as in memory, other draws.
PER_BLOCK_LOTS = ["dp-sgd", "dp-nb-logistic", "default"]
#: Models whose cluster fit draws its noise as the in-memory one does.
SAME_DRAWS = [m for m in _models.MODELS
              if _models.MODELS[m].dask and m not in PER_BLOCK_LOTS]


def _assert_same_guarantee(local, remote):
    """The same guarantee, N, noise and event; the accuracy line differs."""
    local_lines, remote_lines = local.splitlines(), _without_cluster_line(remote)
    start = next(i for i, ln in enumerate(local_lines) if ln.startswith("privacy:"))
    assert remote_lines[start:] == local_lines[start:]
    assert any("test accuracy" in ln for ln in remote_lines)


@pytest.mark.parametrize("model", SAME_DRAWS)
def test_cluster_fit_prints_the_in_memory_result(model, scheduler, capsys):
    status, local, err = _run(TINY + ["--model", model], capsys)
    assert status == 0, err
    assert "cluster" not in local          # the options absent: the output as before
    status, remote, err = _run(TINY + ["--model", model, "--scheduler", scheduler], capsys)
    assert status == 0, err
    assert f"  cluster: fit on {scheduler} (2 workers, 8 row blocks)" in remote
    assert _without_cluster_line(remote) == local.splitlines()


@pytest.mark.parametrize("model", PER_BLOCK_LOTS)
def test_cluster_dp_sgd_has_the_in_memory_guarantee(model, scheduler, capsys):
    status, local, err = _run(TINY + ["--model", model], capsys)
    assert status == 0, err
    status, remote, err = _run(TINY + ["--model", model, "--scheduler", scheduler], capsys)
    assert status == 0, err
    assert f"  cluster: fit on {scheduler} (2 workers, 8 row blocks)" in remote
    _assert_same_guarantee(local, remote)


def test_local_cluster_of_n_workers(capsys):
    status, local, err = _run(TINY + ["--model", "frank-wolfe"], capsys)
    assert status == 0, err
    status, remote, err = _run(TINY + ["--model", "frank-wolfe", "--n-workers", "2"],
                               capsys)
    assert status == 0, err
    assert "(2 workers, 8 row blocks)" in remote
    assert _without_cluster_line(remote) == local.splitlines()
    status, remote, err = _run(TINY + ["--n-workers", "2"], capsys)   # the default
    assert status == 0, err
    _assert_same_guarantee(_run(TINY, capsys)[1], remote)


@pytest.mark.parametrize("model", [m for m in _models.MODELS if not _models.MODELS[m].dask])
@pytest.mark.parametrize("option", [["--n-workers", "2"], ["--scheduler", "tcp://h:8786"]])
def test_models_without_dask_support_are_refused(model, option, capsys):
    argv = TINY + ["--model", model, *option]
    if model in ("select-then-fit", "search"):
        argv += ["--k", "10"] if model == "select-then-fit" else []
    status, out, err = _run(argv, capsys)
    assert status == 2, (out, err)
    assert f"{option[0]} {option[1]}: --model {model} cannot be fitted on a Dask" in err
    assert "dp-nb-logistic" in err         # the models that can are listed
    assert "test accuracy" not in out      # refused before any data is read


@pytest.mark.parametrize("argv,flag", [
    (["--n-workers", "0"], "--n-workers"),
    (["--n-workers", "-3"], "--n-workers"),
    (["--n-workers", "two"], "--n-workers"),
    (["--n-workers", "100000"], "--n-workers"),
    (["--scheduler", "http://host:8786"], "--scheduler"),
    (["--scheduler", "tcp://host:99999"], "--scheduler"),
    (["--scheduler", "tcp://a host"], "--scheduler"),
    (["--scheduler", ""], "--scheduler"),
    (["--scheduler", "tcp://h:1", "--n-workers", "2"], "--n-workers"),
])
def test_bad_cluster_options(argv, flag, capsys):
    status, out, err = _run(TINY + argv, capsys)
    assert status == 2 and flag in err, err


def test_unreachable_scheduler_is_a_usage_error(capsys, monkeypatch):
    import socket

    monkeypatch.setattr(_cluster, "CONNECT_TIMEOUT", 2)
    with socket.socket() as s:             # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    status, out, err = _run(TINY + ["--scheduler", f"tcp://127.0.0.1:{port}"], capsys)
    assert status == 2, (out, err)
    assert f"--scheduler tcp://127.0.0.1:{port}: no Dask scheduler answered within 2 s" in err
