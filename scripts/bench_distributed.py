"""Private fits on a Dask LocalCluster against the same fits in memory, on IMDB.

The question: does a fit on a :class:`dask.array.Array` (CSR row blocks on the
workers) give the in-memory model's utility at a bearable cost, and does the
client stay small?  IMDB train (25,000 reviews, 2^20 hashed binary unigram and
bigram features, :func:`dptoolkit.datasets.load_text_corpus` with its features
cache), split into ``--blocks`` row shards written as ``.npz`` files that the
workers load (the client never reads them).  A ``LocalCluster`` of
``--workers`` single-threaded worker processes.

Two measurements:

* **accuracy and time** (default): :class:`~dptoolkit.linear_model.DPNBLogisticClassifier`
  and :class:`~dptoolkit.linear_model.FrankWolfeLassoClassifier` at their
  defaults (epsilon 1, delta 1e-5, n_samples_public 25,000, classes [0, 1]),
  for each seed: the in-memory fit and the Dask fit (X loaded on the workers
  first; the fit's wall time excludes loading, as in memory), test accuracy on
  the 25,000 test reviews, the largest difference of the coefficients (0 up to
  rounding for Frank-Wolfe, which makes the in-memory draws; DP-NB's DP-SGD draws
  its lots per block on the workers, so its models differ as two seeds' do and
  only the mean accuracies are comparable);
* **client memory** (``--memory``): in a fresh process that never loads X, the
  Dask fit on ``--replicas`` copies of train+test (400,000 rows, 1.6 GiB, for 8): the
  peak of Python allocations during ``fit`` (``tracemalloc``, which sees NumPy's
  buffers) and the peak resident set growth (``psutil``, sampled every 10 ms),
  against the bytes of X (data, indices and row pointers of all shards).

The machine may be shared: the 1-minute load average is printed with every row.
Run from the source tree with ``PYTHONPATH=.``::

    PYTHONPATH=. python scripts/bench_distributed.py --seeds 0 1 2
    PYTHONPATH=. python scripts/bench_distributed.py --corpus 20news --epsilon 8 --models FW
    PYTHONPATH=. python scripts/bench_distributed.py --memory --replicas 8 --blocks 8

(``--corpus 20news`` runs the accuracy measurement on 20 Newsgroups' 20 classes,
the label set taken from the training labels: the multinomial models.
``--fw-max-iter`` shortens the memory run's Frank-Wolfe fit: ``tracemalloc``
slows the client's task handling several times over.  ``--fw-start zero``
runs Frank-Wolfe from the zero start on both sides; its default,
``"auto"``, is the naive-Bayes start in memory and on Dask.)
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import logging  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

N_FEATURES = 2 ** 20
EPSILON, DELTA = 1.0, 1e-5


def load1():
    return os.getloadavg()[0]


#: ``--corpus``: the archive under the data folder (``DPTOOLKIT_DATA``).
CORPORA = {"imdb": "text/aclImdb-train-test.tar.xz", "20news": "text/20news-bydate.tar.xz"}


def load_corpus(corpus="imdb"):
    """Train and test of a corpus (IMDB by default: 25,000 x 2^20 each and {0, 1}
    labels; 20 Newsgroups: 11,314 and 7,532 rows, 20 classes): CSR and labels."""
    from dptoolkit.datasets import get_data_path, load_text_corpus

    path = get_data_path(CORPORA[corpus])
    Xtr, ytr = load_text_corpus(path, "train")[:2]
    Xte, yte = load_text_corpus(path, "test")[:2]
    return sp.csr_array(Xtr), np.asarray(ytr), sp.csr_array(Xte), np.asarray(yte)


def write_shards(X, y, folder, n_blocks):
    """Row shards of X as .npz files; returns [(path, n_rows)] and the labels."""
    folder.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
    shards = []
    for b in range(n_blocks):
        path = folder / f"shard-{b:03d}.npz"
        sp.save_npz(path, sp.csr_matrix(X[bounds[b]:bounds[b + 1]]), compressed=False)
        shards.append((str(path), int(bounds[b + 1] - bounds[b])))
    np.save(folder / "y.npy", y)
    return shards


def load_shard(path):
    return sp.csr_matrix(sp.load_npz(path))


def dask_X_y(shards, y):
    """X as a Dask array whose blocks the workers load from the shard files."""
    import dask
    import dask.array as da

    blocks = [da.from_delayed(dask.delayed(load_shard, pure=True)(p), shape=(n, N_FEATURES),
                              dtype=np.float64, meta=sp.csr_matrix((0, 0)))
              for p, n in shards]
    X = da.concatenate(blocks, axis=0)
    return X, da.from_array(y, chunks=(tuple(n for _, n in shards),))


def make(model, seed, n, fw_max_iter="auto", fw_start="auto", classes=(0, 1),
         epsilon=EPSILON):
    from dptoolkit.linear_model import DPNBLogisticClassifier, FrankWolfeLassoClassifier

    kw = dict(epsilon=epsilon, delta=DELTA, n_samples_public=n, classes=list(classes),
              random_state=seed)
    if model == "FW":
        return FrankWolfeLassoClassifier(max_iter=fw_max_iter, start=fw_start, **kw)
    return DPNBLogisticClassifier(**kw)


def fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est.fit(X, y)
    return time.perf_counter() - start


def wait(collections):
    from dask.distributed import futures_of, wait as wait_futures

    wait_futures(futures_of(collections))


def cluster(n_workers):
    from dask.distributed import Client, LocalCluster

    lc = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR)
    client = Client(lc)
    # the workers import the toolkit now, as this process already has: the first
    # timed fit would otherwise pay for their imports and the in-memory fit not
    client.run(importlib.import_module, "dptoolkit.linear_model")
    return lc, client


def accuracy_and_time(args):
    import dask

    Xtr, ytr, Xte, yte = load_corpus(args.corpus)
    n, classes = Xtr.shape[0], np.unique(ytr)    # the corpus's public label set
    folder = Path(args.shards or tempfile.mkdtemp(prefix="dptoolkit-shards-"))
    shards = write_shards(Xtr, ytr, folder / "train", args.blocks)
    lc, client = cluster(args.workers)
    try:
        Xd, yd = dask.persist(*dask_X_y(shards, ytr))
        wait([Xd, yd])     # loaded on the workers: the fits exclude loading
        print(f"# {args.corpus} train {Xtr.shape} nnz {Xtr.nnz}, {classes.size} classes; "
              f"{args.blocks} blocks on {args.workers} worker processes; epsilon "
              f"{args.epsilon}, delta {DELTA}; "
              f"{os.cpu_count()} cores", flush=True)
        print(f"{'model':5s} {'seed':>4s} {'mem s':>7s} {'dask s':>7s} {'ratio':>6s} "
              f"{'acc mem':>8s} {'acc dask':>8s} {'max|dcoef|':>11s} {'load1':>6s}",
              flush=True)
        for model in args.models:
            accs = []
            for seed in args.seeds:
                load = load1()
                mem, dist = (make(model, seed, n, fw_start=args.fw_start,
                                  classes=classes, epsilon=args.epsilon)
                             for _ in range(2))
                t_mem = fit(mem, Xtr, ytr)
                t_dist = fit(dist, Xd, yd)
                a_mem = float(np.mean(mem.predict(Xte) == yte))
                a_dist = float(np.mean(dist.predict(Xte) == yte))
                accs.append((a_mem, a_dist, t_mem, t_dist))
                diff = float(np.max(np.abs(mem.coef_ - dist.coef_)))
                print(f"{model:5s} {seed:4d} {t_mem:7.2f} {t_dist:7.2f} "
                      f"{t_dist / t_mem:6.2f} {a_mem:8.4f} {a_dist:8.4f} {diff:11.2e} "
                      f"{load:6.2f}", flush=True)
            a = np.array(accs)
            print(f"{model:5s} mean {a[:, 2].mean():7.2f} {a[:, 3].mean():7.2f} "
                  f"{a[:, 3].mean() / a[:, 2].mean():6.2f} {a[:, 0].mean():8.4f} "
                  f"{a[:, 1].mean():8.4f}", flush=True)
    finally:
        client.close()
        lc.close()


def client_memory(args):
    """The Dask fit's client allocations, in a process that never holds X."""
    import psutil

    folder = Path(args.shards or tempfile.mkdtemp(prefix="dptoolkit-shards-"))
    # the shards are written by a child process, so that X never enters this one
    subprocess.run([sys.executable, __file__, "--write-large", str(folder),
                    "--replicas", str(args.replicas), "--blocks", str(args.blocks)],
                   check=True)
    y = np.load(folder / "y.npy")
    shards = [(str(p), int(n)) for p, n in np.load(folder / "shards.npy", allow_pickle=True)]
    x_bytes = int(np.load(folder / "xbytes.npy"))
    n = y.size
    lc, client = cluster(args.workers)
    proc = psutil.Process()
    try:
        import dask

        Xd, yd = dask.persist(*dask_X_y(shards, y))
        wait([Xd, yd])     # loaded on the workers before the measured fit
        print(f"# client memory: X {n} x {N_FEATURES}, {x_bytes / 2**20:.0f} MiB in "
              f"{len(shards)} shards on {args.workers} workers", flush=True)
        for model in args.models:
            est = make(model, 0, n, args.fw_max_iter)
            peak = [proc.memory_info().rss]
            base = peak[0]
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], proc.memory_info().rss)
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample)
            sampler.start()
            tracemalloc.start()
            seconds = fit(est, Xd, yd)
            _, traced = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            done.set()
            sampler.join()
            print(f"{model:5s} fit {seconds:6.1f} s  tracemalloc peak "
                  f"{traced / 2**20:7.1f} MiB ({traced / x_bytes:.3f} of X)  RSS growth "
                  f"{(peak[0] - base) / 2**20:7.1f} MiB ({(peak[0] - base) / x_bytes:.3f} "
                  f"of X)  load1 {load1():.2f}", flush=True)
    finally:
        client.close()
        lc.close()


def write_large(folder, replicas, n_blocks):
    Xtr, ytr, Xte, yte = load_corpus("imdb")
    X = sp.vstack([Xtr, Xte] * replicas, format="csr")
    y = np.concatenate([ytr, yte] * replicas)
    shards = write_shards(X, y, folder, n_blocks)
    np.save(folder / "shards.npy", np.array(shards, dtype=object), allow_pickle=True)
    np.save(folder / "xbytes.npy", X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["DPNB", "FW"], choices=["DPNB", "FW"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--memory", action="store_true", help="the client-memory run")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--fw-max-iter", type=lambda v: v if v == "auto" else int(v),
                        default="auto", help="Frank-Wolfe steps of the memory run")
    parser.add_argument("--fw-start", default="auto", choices=["auto", "zero"],
                        help="Frank-Wolfe's start on both sides ('auto': the "
                        "naive-Bayes start; 'zero': from 0)")
    parser.add_argument("--shards", default=None, help="folder for the shard files")
    parser.add_argument("--corpus", default="imdb", choices=sorted(CORPORA),
                        help="the accuracy run's corpus (20news: 20 classes, the "
                        "multinomial models)")
    parser.add_argument("--epsilon", type=float, default=EPSILON,
                        help="the accuracy run's epsilon")
    parser.add_argument("--write-large", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write_large:
        return write_large(Path(args.write_large), args.replicas, args.blocks)
    if args.memory:
        return client_memory(args)
    return accuracy_and_time(args)


if __name__ == "__main__":
    main()
