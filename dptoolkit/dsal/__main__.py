"""The Dis-DSAL program: ``mpiexec -n 3 python -m dptoolkit.dsal --data PATH --alpha A``.

Rank 0 reads the data and runs :func:`dptoolkit.dsal.mpi.fit_distributed`; the
other ranks are its workers.
"""
import argparse
import json
import sys

import numpy as np

from .._validation import check_scalar_range
from ._problem import SAMPLINGS
from ._screening import lasso_alpha_max
from .mpi import _mpi, _release_workers, _worker, fit_distributed


def _load(args):
    import scipy.sparse as sp

    from ..datasets import load_libsvm
    if args.data.endswith(".npz"):
        if args.target is None:
            raise ValueError("--data X.npz needs --target y.npy")
        X = sp.csr_array(sp.load_npz(args.data))
        y = np.load(args.target)
    else:
        X, y = load_libsvm(args.data, n_features=args.n_features)
    if args.loss == "squared" and args.labels == "pm1":
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(f"--labels pm1 needs two classes, found {classes.size}")
        y = np.where(y == classes[1], 1.0, -1.0)
    return X, y


def main(argv=None):
    """Command line: ``mpiexec -n 3 python -m dptoolkit.dsal --data PATH --alpha A``.

    Rank 0 loads the data (a LIBSVM file, or ``X.npz`` from
    :func:`scipy.sparse.save_npz` with ``--target y.npy``), sends each worker its
    rows, fits, prints a JSON summary and optionally saves the coefficients
    (``--output coef.npy``).  Binary labels become -1/+1 regression targets for
    the squared loss (``--labels pm1``, the default).  Returns the exit status.
    """
    parser = argparse.ArgumentParser(
        prog="python -m dptoolkit.dsal",
        description="Dis-DSAL Lasso on MPI (Bao, Wu, Xian and Huang, IJCAI 2022, "
                    "Algorithms 3-4).")
    parser.add_argument("--data", required=True, help="LIBSVM file, or X.npz with --target")
    parser.add_argument("--target", help="y.npy for --data X.npz")
    parser.add_argument("--n-features", type=int, default=None)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--alpha", type=float, help="regularisation strength (> 0)")
    group.add_argument("--alpha-ratio", type=float, help="alpha as a fraction of alpha_max")
    parser.add_argument("--loss", choices=["squared", "logistic"], default="squared")
    parser.add_argument("--labels", choices=["pm1", "raw"], default="pm1")
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--max-outer", type=int, default=500)
    parser.add_argument("--n-inner", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--staleness-bound", type=int, default=1)
    parser.add_argument("--step-size", type=float, default=None)
    parser.add_argument("--no-screening", action="store_true")
    parser.add_argument("--no-variance-reduction", action="store_true")
    parser.add_argument("--sampling", choices=list(SAMPLINGS), default="importance")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="save coef_ here (.npy)")
    args = parser.parse_args(argv)

    MPI = _mpi()
    comm = MPI.COMM_WORLD
    if comm.Get_rank() != 0:
        if comm.Get_size() >= 2:
            _worker(comm, MPI)
        return 0
    started = False  # once fit_distributed runs, it releases the workers itself
    try:
        if comm.Get_size() < 2:
            raise ValueError("run with at least 2 ranks: mpiexec -n 3 python -m "
                             "dptoolkit.dsal ...")
        X, y = _load(args)
        alpha = args.alpha
        if args.alpha_ratio is not None:
            ratio = check_scalar_range(args.alpha_ratio, "alpha_ratio", low=0.0, low_open=True)
            alpha = ratio * lasso_alpha_max(X, y, loss=args.loss)
        started = True
        res = fit_distributed(
            X, y, alpha, comm=comm, loss=args.loss, screening=not args.no_screening,
            variance_reduction=not args.no_variance_reduction, sampling=args.sampling,
            step_size=args.step_size,
            n_inner=args.n_inner, batch_size=args.batch_size,
            staleness_bound=args.staleness_bound, tol=args.tol,
            max_outer=args.max_outer, random_state=args.seed)
    except (ValueError, TypeError, OSError) as exc:
        if not started and comm.Get_size() >= 2:
            _release_workers(comm)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.output:
        np.save(args.output, res["coef"])
    summary = {k: (v.tolist() if isinstance(v, np.ndarray) and v.size <= 1000 else v)
               for k, v in res.items() if k not in ("coef", "active_features")}
    summary.update(alpha=alpha, relative_gap=res["dual_gap"] / max(abs(res["objective"]), 1e-300),
                   n_nonzero=int(np.count_nonzero(res["coef"])),
                   n_active_features=int(res["active_features"].sum()),
                   time=float(res["time_history"][-1]))
    for key in ("objective_history", "gap_history", "time_history", "active_set_size",
                "step_history", "batch_history"):
        if isinstance(summary.get(key), np.ndarray):
            summary[key] = summary[key].tolist()
    print(json.dumps(summary))
    return 0



if __name__ == "__main__":
    sys.exit(main())
