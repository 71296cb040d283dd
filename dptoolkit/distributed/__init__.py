"""Distributed-memory solvers on MPI (optional: ``pip install dptoolkit[mpi]``).

dsal
    Dis-DSAL (Bao et al., IJCAI 2022, Algorithms 3-4): one server rank holding
    the iterate, worker ranks holding row blocks, decoupled proximal steps on the workers,
    sparse messages on the active set.  :func:`fit_distributed`, or the program
    ``mpiexec -n 3 python -m dptoolkit.distributed.dsal --data PATH --alpha A``.

mpi4py is imported only when a solver runs, so importing this package works
without it.
"""
__all__ = ["fit_distributed"]


def __getattr__(name):
    # Imported on first use, not here: ``python -m dptoolkit.distributed.dsal``
    # imports this package first, and an eager import of .dsal would make runpy
    # execute a module already in sys.modules (RuntimeWarning on every rank).
    if name == "fit_distributed":
        from .dsal import fit_distributed
        return fit_distributed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
