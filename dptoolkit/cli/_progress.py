"""Progress of the command line's long steps (stderr only; results never change).

Estimators that take ``verbose`` draw their own tqdm bar (Frank-Wolfe's
iterations); corpora are read with ``load_text_corpus(verbose=...)`` (a bar
over the documents hashed).  For the other fits, whose work runs in one call
of a compiled kernel, :func:`fit_progress` shows the elapsed time, refreshed
by a thread that only redraws the bar: it reads nothing of the fit and draws
no random numbers, so the model is the same with and without it.

A private hyperparameter search gets one fixed line, printed before it starts:
the number of its runs is random and part of the mechanism (Papernot and
Steinke, 2022), so a bar that counted them, a bar per run or an elapsed time
(which grows with the number of runs) would release it.  The search silences
its runs itself (:class:`~dptoolkit.model_selection.PrivateHyperparameterSearch`).
"""
import sys
import threading
from contextlib import contextmanager

__all__ = ["default_verbose", "fit_progress", "draws_own_progress"]


def default_verbose(args):
    """``--verbose``, else 1 when stderr is a terminal (0 otherwise)."""
    if getattr(args, "verbose", None) is None:
        args.verbose = 1 if sys.stderr.isatty() else 0
    return args.verbose


def draws_own_progress(estimator):
    """Whether ``estimator`` (or the estimator a meta-estimator fits) has its own bar."""
    params = estimator.get_params(deep=False)
    if params.get("verbose"):
        return True
    inner = params.get("estimator")
    return inner is not None and draws_own_progress(inner)


@contextmanager
def fit_progress(estimator, verbose, *, interval=0.5):
    """An elapsed-time bar on stderr while ``estimator`` is fitted (when ``verbose``
    and the estimator draws no bar of its own); a private search gets one fixed
    line instead."""
    if not verbose:
        yield
        return
    from ..model_selection import PrivateHyperparameterSearch

    if isinstance(estimator, PrivateHyperparameterSearch):
        # one line whose text depends on public options only, never on the runs
        print(f"fitting {type(estimator).__name__} (its runs are silent: how many "
              "there are is part of the mechanism)", file=sys.stderr, flush=True)
        yield
        return
    if draws_own_progress(estimator):
        yield
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=None, desc=f"fitting {type(estimator).__name__}", file=sys.stderr,
               bar_format="{desc}: {elapsed} elapsed")
    stop = threading.Event()

    def redraw():
        while not stop.wait(interval):
            bar.refresh()

    thread = threading.Thread(target=redraw, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()
