"""``train --scheduler ADDRESS`` / ``--n-workers N``: the fit on a Dask cluster.

The data are read as without the options (on this machine), the training part is
cut into row blocks that are sent to the workers once (``persist``), and the
estimator is fitted on that :class:`dask.array.Array`: the workers compute exact
per-block sums, the client adds them in block order and adds the noise once (see
:mod:`dptoolkit.distributed`), so the released model is the in-memory one up to the
rounding of the summation order, and nothing the engine does (retries, speculative
copies, partition sizes, timings) changes what is released.  The test part stays in
memory: the model predicts it as an in-memory model would.  Without the options
nothing here runs and the command's output is unchanged.

Only estimators whose ``fit`` accepts Dask arrays can use a cluster (``dask=True``
in :func:`dptoolkit.cli._models.models`); the others are refused with a message
naming the option.
"""
import re
from contextlib import contextmanager

from ._models import models, resolve_model

__all__ = ["add_cluster_options", "check_cluster_options", "cluster_client",
           "to_dask", "BLOCKS_PER_WORKER", "CONNECT_TIMEOUT"]

#: Row blocks per worker when the training part is distributed (a few per worker
#: balance the load; the block sizes are never used as N).
BLOCKS_PER_WORKER = 4
#: Seconds to wait for the scheduler at ``--scheduler`` before giving up.
CONNECT_TIMEOUT = 10
#: Most local workers of ``--n-workers`` (processes of this machine).
MAX_LOCAL_WORKERS = 256

_ADDRESS = re.compile(r"^(?:(tcp|tls|ucx|ws|wss)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.\-]+)"
                      r"(?::(\d{1,5}))?/?$")


def _scheduler_address(text):
    """``--scheduler``: ``[scheme://]host[:port]`` (scheme tcp, tls, ucx, ws, wss)."""
    import argparse

    m = _ADDRESS.match(text.strip())
    if not m or (m.group(3) is not None and not 1 <= int(m.group(3)) <= 65535):
        raise argparse.ArgumentTypeError(
            f"expected a Dask scheduler address [scheme://]host[:port] (scheme tcp, tls, "
            f"ucx, ws or wss; port 1-65535), e.g. tcp://10.0.0.1:8786, got {text!r}")
    return text.strip()


def _n_workers(text):
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= value <= MAX_LOCAL_WORKERS:
        raise argparse.ArgumentTypeError(
            f"must be in [1, {MAX_LOCAL_WORKERS}] (worker processes of this machine), "
            f"got {value}")
    return value


def add_cluster_options(parser):
    """``--scheduler`` and ``--n-workers`` (mutually exclusive) on ``parser``."""
    grp = parser.add_argument_group(
        "cluster", "fit on a Dask cluster (models whose fit takes Dask arrays: "
        + ", ".join(dask_models()) + "); the data are read here, the training rows "
        "sent to the workers in blocks")
    ex = grp.add_mutually_exclusive_group()
    ex.add_argument("--scheduler", type=_scheduler_address, default=None,
                    metavar="ADDRESS",
                    help="address of a running Dask scheduler, e.g. tcp://10.0.0.1:8786 "
                         f"(waits {CONNECT_TIMEOUT} s for it)")
    ex.add_argument("--n-workers", type=_n_workers, default=None, metavar="N",
                    help="start a local Dask cluster of N single-threaded worker "
                         "processes for the fit")


def dask_models():
    """``--model`` names whose estimator's fit takes Dask arrays."""
    return [name for name, spec in models().items() if spec.dask]


def _given(args):
    for flag, dest in (("--scheduler", "scheduler"), ("--n-workers", "n_workers")):
        if getattr(args, dest, None) is not None:
            return flag, getattr(args, dest)
    return None


def check_cluster_options(args, usage_error):
    """Refuse (``usage_error``, naming the option) a cluster option for a model whose
    fit does not take Dask arrays; before any data is read."""
    given = _given(args)
    if given is None:
        return
    model = resolve_model(args.model)
    if not models()[model].dask:
        raise usage_error(
            f"{given[0]} {given[1]}: --model {args.model} cannot be fitted on a Dask "
            f"cluster (its fit takes in-memory data only); models that can: "
            f"{', '.join(dask_models())}")


@contextmanager
def cluster_client(args, usage_error):
    """The :class:`distributed.Client` of the options (``None`` without them), closed
    (and a local cluster shut down) on exit."""
    given = _given(args)
    if given is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise usage_error(f"{given[0]} needs dask[distributed]: pip install "
                          "'dptoolkit[dask]'") from None
    if args.scheduler is not None:
        try:
            client = distributed.Client(args.scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise usage_error(f"--scheduler {args.scheduler}: no Dask scheduler answered "
                              f"within {CONNECT_TIMEOUT} s ({type(exc).__name__}: {exc})") \
                from None
        with client:
            yield client
        return
    import logging

    # worker processes of this machine, started by multiprocessing's "spawn", which
    # passes them this process's sys.path: they import the same dptoolkit
    with distributed.LocalCluster(n_workers=args.n_workers, threads_per_worker=1,
                                  processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def to_dask(X, y, client):
    """``(X, y)`` as Dask arrays of CSR row blocks on the workers of ``client``.

    ``BLOCKS_PER_WORKER`` blocks per worker (at most one per row), sent once and
    kept there (``persist``) for the fit's several passes.

    Returns
    -------
    X_dask, y_dask, n_blocks
    """
    import dask
    import dask.array as da
    import numpy as np
    import scipy.sparse as sp

    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    n_rows = X.shape[0]
    n_blocks = max(1, min(n_rows, BLOCKS_PER_WORKER * n_workers))
    bounds = np.linspace(0, n_rows, n_blocks + 1).astype(int)
    X = sp.csr_matrix(X)
    y = np.asarray(y)
    blocks = [da.from_delayed(dask.delayed(X[a:b]), shape=(b - a, X.shape[1]),
                              dtype=X.dtype, meta=sp.csr_matrix((0, 0), dtype=X.dtype))
              for a, b in zip(bounds[:-1], bounds[1:])]
    Xd = da.concatenate(blocks, axis=0)
    yd = da.from_array(y, chunks=(Xd.chunks[0],))
    Xd, yd = client.persist([Xd, yd])
    return Xd, yd, n_blocks
