"""The multinomial FrankWolfeLassoClassifier on a Dask LocalCluster against the
same fit in memory, on Reuters R8 (a development set).

The question: does the multinomial Frank-Wolfe fit on a :class:`dask.array.Array`
(CSR row blocks, the rows' K margins on the workers, the summed gradient and
the selection on the client) release the in-memory model, and what does a step
cost?  R8 (:func:`dptoolkit.datasets.load_text_corpus` on the Reuters-21578
archive without ``positive``/``negative``: 8 classes, 5,485 training and 2,189
test documents, 2^20 hashed unigram and bigram features), cut into ``--blocks``
row blocks; a ``LocalCluster`` of ``--workers`` single-threaded worker
processes.  For each configuration: the in-memory and the Dask fit at the same
seed, their wall times (the Dask one includes preparing the blocks and starting
the actors, not the cluster), the largest coefficient difference relative to
the largest coefficient (0 up to rounding), whether the privacy events are
equal, and the test accuracies.  Configurations:

* ``private``: epsilon 1, delta 1e-5, ``n_samples_public`` = 5,485,
  ``max_iter="auto"`` (screening to 1024 candidates);
* ``private-500``: the same with ``max_iter=500`` (per-step cost when screened);
* ``nonprivate-100``: no privacy, ``max_iter=100``, every one of the 2^20
  columns (a block sends the rows of its non-empty columns each round).

The machine may be shared: the 1-minute load average is printed with every row.
Run from the source tree with ``PYTHONPATH=.``::

    PYTHONPATH=. python scripts/bench_multinomial_dask.py
"""
import argparse
import logging
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp

REUTERS = "text/reuters21578.tar.xz"
CONFIGS = {
    "private": dict(epsilon=1.0, delta=1e-5, max_iter="auto"),
    "private-500": dict(epsilon=1.0, delta=1e-5, max_iter=500),
    "nonprivate-100": dict(epsilon=None, max_iter=100),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    import dask.array as da
    import distributed

    from dptoolkit.datasets import get_data_path, load_text_corpus
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    warnings.simplefilter("ignore")   # the fixed seed's PrivacyLeakWarning
    path = get_data_path(REUTERS)
    X, y = load_text_corpus(path, "train")[:2]
    Xte, yte = load_text_corpus(path, "test")[:2]
    X, y = sp.csr_matrix(X), np.asarray(y)
    n, K = X.shape[0], int(y.max()) + 1
    chunk = -(-n // args.blocks)
    Xd = da.from_array(X, chunks=(chunk, X.shape[1]), asarray=False)
    yd = da.from_array(y, chunks=chunk)
    print(f"R8 train {X.shape}, nnz {X.nnz}, {K} classes; {args.blocks} blocks, "
          f"{args.workers} workers")
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster):
        for name in args.configs:
            kw = dict(CONFIGS[name], classes=list(range(K)), random_state=args.seed)
            if kw["epsilon"] is not None:
                kw["n_samples_public"] = n
            t = time.perf_counter()
            mem = FrankWolfeLassoClassifier(**kw).fit(X, y)
            t_mem = time.perf_counter() - t
            t = time.perf_counter()
            dist = FrankWolfeLassoClassifier(**kw).fit(Xd, yd)
            t_dist = time.perf_counter() - t
            rel = np.abs(dist.coef_ - mem.coef_).max() / max(np.abs(mem.coef_).max(), 1e-300)
            k = "all" if mem.screened_features_ is None else mem.screened_features_.size
            print(f"{name}: T={mem.n_iter_}, candidates {k}; in memory {t_mem:.2f} s, "
                  f"Dask {t_dist:.2f} s ({1e3 * t_dist / mem.n_iter_:.1f} ms/step); "
                  f"coef rel. diff {rel:.1e}; same event "
                  f"{dist.privacy_event_ == mem.privacy_event_}; accuracy "
                  f"{mem.score(Xte, yte):.4f} / {dist.score(Xte, yte):.4f}; load "
                  f"{os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
