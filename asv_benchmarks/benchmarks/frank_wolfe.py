"""Frank-Wolfe LASSO logistic regression (Raff et al. 2023): solvers, selectors, work, memory.

``IterationsSynthetic``  time of ``T_RUN`` iterations of each solver/selector on a
                         synthetic problem shaped like hashed text (20,000 rows,
                         about 43 non-zeros each, Zipf feature frequencies) with
                         D = 2^17 and 2^20 features, non-private and private.
``IterationsA9a``        the same on the real a9a set (32,561 x 123).
``SteadyStatePrivate``   the fast private solver (grouped sampler) later in a
                         run: ``T_BLOCK`` iterations after ``T_WARM`` warm-up ones.
``WorkCounters``         ``solver_stats_`` (touched non-zeros and selector updates
                         per iteration) and the training objective of whole
                         fits, for regressions in work or in the iterates.
``PeakMemFit``           peak memory of a whole ``fit`` through the estimator.
``ScalingPrivate``       per-iteration time of both private solvers at D = 2^16,
                         2^19 and 2^22: the asv form of the scaling study
                         (``scripts/bench_scaling.py``).

Timing: the ``time_*`` benchmarks call the kernels (``dptoolkit.linear_model._frank_wolfe._fw_fast``) on
views prepared in ``setup`` exactly as ``FrankWolfeLassoClassifier.fit``
prepares them (CSR + CSC, int64 indices), so the one-off O(nnz) validation and
conversions are not timed.  Private kernels get the exponential mechanism's
coefficient from the estimator's own budget split (epsilon = 1, delta = 1e-5)
for a fit of ``T_BUDGET`` = 4000 iterations, the speed setting of Table 3, even
when fewer are run: the per-step budget decides which features are drawn and
hence the work (with the budget of a 50-step fit, the mechanism keeps drawing
the most frequent feature of the synthetic data).  Every configuration of a
class runs the same number of iterations from the same state, so ratios of the
reported times are ratios of per-iteration times.  asv re-runs ``setup``
before each timed call, so each call starts from a fresh kernel.  The timer is
the process's CPU time (``time.process_time``): the kernels are
single-threaded, and wall-clock time on a shared machine mostly measures the
other processes.  The fast solver's refreshes are frequent in the first iterations (the
schedule depends only on t), so a short run from t = 0 understates its
steady-state advantage; ``SteadyStatePrivate`` measures later iterations, and
``scripts/bench_frank_wolfe.py`` the T = 4000 runs of Table 3 side by side.

Real data comes from ``DPTOOLKIT_DATA`` (``common.libsvm``); a missing file skips
the benchmark.
"""
import functools
import time

import numpy as np
import scipy.sparse as sp

from dptoolkit.kernels import fw_fast as _fw_fast
from dptoolkit.linear_model import FrankWolfeLassoClassifier

from .common import libsvm, synthetic_problem, text_corpus

L1_BOUND = 50.0
EPSILON = 1.0
# 1e-5, the main job's delta: with 1e-6 the estimator refuses the O(D) private
# selectors (exponential, noisy_max) at D = 2^20 for T_BUDGET steps (their
# floating-point delta, which grows with D, exceeds delta)
DELTA = 1e-5
# the public label set of every problem here (labels in {0, 1}): declared, so
# that private fits do not read it from the data (PrivacyLeakWarning otherwise)
CLASSES = (0.0, 1.0)
T_RUN = 50           # iterations timed by the Iterations* classes
T_BUDGET = 4000      # private kernels get the per-step budget of a fit this long
T_WARM = 1000        # warm-up of SteadyStatePrivate
T_BLOCK = 200        # iterations timed by SteadyStatePrivate
N_SAMPLES = 20_000

# (solver, selector, private); the names are the estimator's
NONPRIVATE = [("standard", "argmax"), ("fast", "argmax"), ("fast", "pairing_heap"),
              ("fast", "fibonacci_heap")]
PRIVATE = [("standard", "exponential"), ("standard", "noisy_max"), ("fast", "grouped"),
           ("fast", "noisy_max"), ("fast", "exponential")]
CONFIGS = ([f"{s}+{sel}" for s, sel in NONPRIVATE]
           + [f"{s}+{sel}+private" for s, sel in PRIVATE])


def _parse(config):
    parts = config.split("+")
    return parts[0], parts[1], len(parts) == 3


def _synthetic(n_features):
    X, y, _ = synthetic_problem(n_samples=N_SAMPLES, n_features=n_features,
                                avg_nnz=50, random_state=0)
    return X, y


def _a9a():
    return libsvm("a9a.bz2", n_features=123)


@functools.lru_cache(maxsize=2)
def _prepared(source):
    """(views, y) of ``"a9a"``, ``"imdb"`` (the IMDB train set hashed to 2^20
    binary features, labels 0/1) or of the synthetic problem with ``source``
    features."""
    if source == "imdb":
        X, y, _ = text_corpus("text/aclImdb-train-test.tar.xz", subset="train")
    else:
        X, y = _a9a() if source == "a9a" else _synthetic(source)
    return _views(X), y


# Settings fixed explicitly (the estimator's defaults are max_iter="auto",
# k="auto", composition="auto"): the Table 3 setting of the README.
FIXED = dict(k=None, composition="advanced")


def _estimator(solver, selector, private, max_iter):
    return FrankWolfeLassoClassifier(
        l1_bound=L1_BOUND, max_iter=max_iter, solver=solver, mechanism=selector,
        epsilon=EPSILON if private else None, delta=DELTA if private else None,
        random_state=0, **FIXED)


def _views(X):
    """CSR and CSC views with int64 indices, as the estimator builds them."""
    Xr = sp.csr_array(X, dtype=np.float64, copy=True)
    Xr.sum_duplicates()
    Xr.sort_indices()
    Xr.indices = Xr.indices.astype(np.int64)
    Xr.indptr = Xr.indptr.astype(np.int64)
    Xc = sp.csc_array(Xr)
    Xc.sort_indices()
    Xc.indices = Xc.indices.astype(np.int64)
    Xc.indptr = Xc.indptr.astype(np.int64)
    return Xr, Xc


def _kernel(views, y, solver, selector, private):
    """A fresh kernel, configured as the estimator configures it for a private
    fit of ``T_BUDGET`` iterations (whatever number of iterations is run)."""
    Xr, Xc = views
    est = _estimator(solver, selector, private, T_BUDGET)
    coef = 0.0
    if private:
        # the estimator's own budget split (per-step epsilon incl. the grouped
        # sampler's floating-point terms) -> coefficient of the log-weights
        coef = est.budget(Xr.shape[1]).kernel_parameter
    y01 = np.asarray(y, dtype=np.float64)
    args = (Xr.data, Xr.indices, Xr.indptr, Xc.data, Xc.indices, Xc.indptr, y01,
            L1_BOUND, _fw_fast.SELECTOR_CODES[selector], coef,
            np.random.default_rng(0).bit_generator)
    if solver == "fast":  # the estimator's default refresh_tol
        return _fw_fast.FastFW(*args, refresh_tol=est.refresh_tol, group_size=0)
    return _fw_fast.StandardFW(*args)


def _run(kernel, n_steps, gaps):
    # the kernel writes gaps[t - 1] for its cumulative t without bounds checks
    if kernel.t + n_steps > gaps.shape[0]:
        raise RuntimeError("kernel run past its gap buffer (setup not re-run?)")
    kernel.run(n_steps, gaps)


class _Iterations:
    """Time ``T_RUN`` iterations from a fresh kernel (see the module docstring)."""

    timer = time.process_time
    timeout = 300

    def _setup(self, source, config):
        solver, selector, private = _parse(config)
        views, y = _prepared(source)
        self.kernel = _kernel(views, y, solver, selector, private)
        self.gaps = np.empty(T_RUN)

    def time_iterations(self, *params):
        _run(self.kernel, T_RUN, self.gaps)


class IterationsSynthetic(_Iterations):
    """``T_RUN`` iterations on the synthetic problem, D = 2^17 and 2^20."""

    params = [[2**17, 2**20], CONFIGS]
    param_names = ["n_features", "config"]

    def setup(self, n_features, config):
        self._setup(n_features, config)


class IterationsA9a(_Iterations):
    """``T_RUN`` iterations on a9a (32,561 x 123, real data; skipped if missing).

    A subset of the configurations: with 123 features, the O(D) selectors cost
    nothing next to the passes over the data.
    """

    params = [["standard+argmax", "fast+argmax", "fast+pairing_heap",
               "standard+exponential+private", "fast+grouped+private"]]
    param_names = ["config"]

    def setup(self, config):
        self._setup("a9a", config)


class SteadyStatePrivate:
    """Fast solver + grouped sampler: ``T_BLOCK`` iterations after ``T_WARM`` ones.

    Later iterations are cheaper (rarer refreshes).  The standard solver's cost
    per iteration does not depend on t: compare with ``IterationsSynthetic``
    (``T_RUN`` iterations) scaled by ``T_BLOCK / T_RUN``.  The O(D) selectors
    (``noisy_max``, ``exponential``) are not run here: their warm-up alone
    would take minutes at D = 2^20, and their cost is dominated by the O(D)
    draw, which ``IterationsSynthetic`` already measures.
    """

    params = [[2**17, 2**20]]
    param_names = ["n_features"]
    timer = time.process_time
    timeout = 300

    def setup(self, n_features):
        T = T_WARM + T_BLOCK
        views, y = _prepared(n_features)
        self.kernel = _kernel(views, y, "fast", "grouped", True)
        self.gaps = np.empty(T)
        _run(self.kernel, T_WARM, self.gaps)

    def time_block(self, n_features):
        _run(self.kernel, T_BLOCK, self.gaps)


class WorkCounters:
    """Work counters and objective of whole fits (``max_iter`` = ``T_FIT``).

    ``track_touched_nnz_per_iteration``: non-zeros of X read per iteration
    (margins, gradients, refreshes); the standard solver reads ``2 nnz(X)``, so
    ``2 nnz(X)`` divided by this is the work ratio (a9a: nnz = 451,592;
    synthetic: about 864,000).  ``track_selector_updates_per_iteration``: heap
    or sampler updates (coordinates whose gradient changed), the selector's
    share of the work.  ``track_objective``: mean training log loss of the final
    weights (non-private fits are deterministic; private fits use a fixed seed
    and the budget of a ``T_FIT``-step fit).  Each configuration is
    ``data:solver+selector[+private][+rho=refresh_tol]``.
    """

    T_FIT = 300
    params = [["a9a:standard+argmax", "a9a:fast+pairing_heap",
               "a9a:fast+pairing_heap+rho=0", "a9a:fast+grouped+private",
               "synthetic:fast+pairing_heap", "synthetic:fast+grouped+private",
               "synthetic:fast+grouped+private+rho=inf"]]
    param_names = ["config"]
    timeout = 600

    def setup_cache(self):
        out = {}
        for name in self.params[0]:
            data, config = name.split(":")
            try:
                X, y = _a9a() if data == "a9a" else _synthetic(2**17)
            except NotImplementedError:
                continue
            parts = config.split("+")
            kw = dict(l1_bound=L1_BOUND, max_iter=self.T_FIT, solver=parts[0],
                      selector=parts[1], classes=CLASSES, random_state=0, epsilon=None,
                      **FIXED)
            if "private" in parts:
                kw.update(epsilon=EPSILON, delta=DELTA)
            for p in parts[2:]:
                if p.startswith("rho="):
                    kw["refresh_tol"] = float(p[4:])
            clf = FrankWolfeLassoClassifier(**kw).fit(X, y)
            # private fits release only n_iter and n_refresh: their work
            # counters are NaN here (see SteadyStatePrivate for their time)
            s = {k: v / clf.n_iter_ for k, v in clf.solver_stats_.items()}
            nan = float("nan")
            out[name] = dict(touched=s.get("touched_nnz", nan),
                             updates=s.get("selector_updates", nan),
                             refresh=s.get("refresh_nnz", nan),
                             objective=clf.objective(X, y))
        return out

    def setup(self, cache, config):
        if config not in cache:
            raise NotImplementedError(f"{config}: data missing")

    def track_touched_nnz_per_iteration(self, cache, config):
        return cache[config]["touched"]

    track_touched_nnz_per_iteration.unit = "non-zeros"

    def track_refresh_nnz_per_iteration(self, cache, config):
        # non-zeros processed by the exact refreshes (part of touched_nnz): the
        # refresh works over the rows whose gradient changed, or a full pass
        return cache[config]["refresh"]

    track_refresh_nnz_per_iteration.unit = "non-zeros"

    def track_selector_updates_per_iteration(self, cache, config):
        return cache[config]["updates"]

    track_selector_updates_per_iteration.unit = "updates"

    def track_objective(self, cache, config):
        return cache[config]["objective"]

    track_objective.unit = "mean log loss"


class PeakMemFit:
    """Peak memory of ``FrankWolfeLassoClassifier.fit`` on the D = 2^20 problem.

    Includes the data (built in ``setup``), the CSR/CSC copies made by ``fit``
    and the solver's O(N + D) state.  ``max_iter`` is small: the state does not
    grow with it (the gap history aside, 8 bytes per iteration).
    """

    params = [["standard", "fast"], [False, True]]
    param_names = ["solver", "private"]
    timeout = 300

    def setup(self, solver, private):
        self.X, self.y = _synthetic(2**20)

    def peakmem_fit(self, solver, private):
        FrankWolfeLassoClassifier(
            l1_bound=L1_BOUND, max_iter=5 if solver == "standard" else 50,
            solver=solver, epsilon=EPSILON if private else None,
            delta=DELTA if private else None, classes=CLASSES, random_state=0,
            **FIXED).fit(self.X, self.y)


class ScalingPrivate:
    """Per-iteration time of the private solvers against D (N = 20,000, ~45 nnz/row).

    The asv form of the scaling study (``scripts/bench_scaling.py``, *Studies >
    Scaling*): a change of either solver's dependence on D shows as a change of
    the ratio between the sizes, the largest of which (2^22) is where an O(D)
    term per step would dominate.  ``time_steps`` times, for ``solver="fast"``,
    ``T_BLOCK`` = 200 steps of the fast solver (grouped sampler, default
    ``refresh_tol``) after ``T_WARM`` untimed ones (steady state: about one
    refresh in the block) and, for ``solver="standard"``, ``N_STANDARD`` = 3
    steps of the standard solver (exponential mechanism, O(D) inverse-CDF draw)
    after one untimed step (its steps cost the same whatever t): divide by 200
    or 3 for the time per step.  Both kernels get the coefficient of the
    fast solver's budget split for a ``T_BUDGET``-step fit: the standard step's
    cost does not depend on which feature is drawn, and at D = 2^22 the
    estimator refuses the O(D) draw for ``T_BUDGET`` steps at this delta (its
    floating-point delta exceeds it).  The fast block's work depends on the
    features the mechanism draws (seeded): at 2^19 one of the 200 steps draws a
    frequent feature and takes one full pass, and the block's refresh is a full
    one (the kernel's counters: 1.8 M touched non-zeros against 5,236 at 2^22), so
    that point is slower than 2^22.  Compare a point with itself across
    commits; the D-dependence proper is measured by ``scripts/bench_scaling.py``
    over whole 4000-step fits.
    """

    N_STANDARD = 3
    params = [[2**16, 2**19, 2**22], ["fast", "standard"]]
    param_names = ["n_features", "solver"]
    timer = time.process_time
    number = 1
    timeout = 300

    def setup(self, n_features, solver):
        views, y = _prepared(n_features)
        Xr, Xc = views
        coef = _estimator("fast", "grouped", True, T_BUDGET).budget(
            Xr.shape[1]).kernel_parameter
        args = (Xr.data, Xr.indices, Xr.indptr, Xc.data, Xc.indices, Xc.indptr,
                np.asarray(y, dtype=np.float64), L1_BOUND,
                _fw_fast.SELECTOR_CODES["grouped" if solver == "fast" else "exponential"],
                coef, np.random.default_rng(0).bit_generator)
        if solver == "fast":
            self.kernel = _fw_fast.FastFW(
                *args, refresh_tol=_estimator("fast", "grouped", True, T_BUDGET).refresh_tol)
            self.gaps = np.empty(T_WARM + T_BLOCK)
            _run(self.kernel, T_WARM, self.gaps)
        else:
            self.kernel = _fw_fast.StandardFW(*args)
            self.gaps = np.empty(1 + self.N_STANDARD)
            _run(self.kernel, 1, self.gaps)

    def time_steps(self, n_features, solver):
        _run(self.kernel, T_BLOCK if solver == "fast" else self.N_STANDARD, self.gaps)


def _private_kernel(views, y, epsilon, selector, refresh_tol):
    """A private kernel with the budget of a ``T_BUDGET``-step fit at ``epsilon``."""
    Xr, Xc = views
    est = FrankWolfeLassoClassifier(l1_bound=L1_BOUND, max_iter=T_BUDGET, epsilon=epsilon,
                                    delta=DELTA, random_state=0, **FIXED)
    coef = est.budget(Xr.shape[1]).kernel_parameter
    args = (Xr.data, Xr.indices, Xr.indptr, Xc.data, Xc.indices, Xc.indptr,
            np.asarray(y, dtype=np.float64), L1_BOUND, _fw_fast.SELECTOR_CODES[selector],
            coef, np.random.default_rng(0).bit_generator)
    if selector == "grouped":
        return _fw_fast.FastFW(*args, refresh_tol=refresh_tol)
    return _fw_fast.StandardFW(*args)


def _best_cpu(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


@functools.lru_cache(maxsize=4)
def _per_nnz(source, epsilon):
    """(ns per touched non-zero of fast private steps, SciPy's ns per non-zero of
    ``X @ w``), measured side by side in one process (``scripts/bench_frank_wolfe.py
    pernnz`` on the synthetic problem): ``T_BLOCK`` steps after ``T_WARM`` ones
    with ``refresh_tol=inf`` (step work only), SciPy best of 3 before and after."""
    views, y = _prepared(source)
    Xr = views[0]
    w = np.random.default_rng(0).normal(size=Xr.shape[1])
    scipy_s = _best_cpu(lambda: Xr @ w)
    kernel = _private_kernel(views, y, epsilon, "grouped", np.inf)
    gaps = np.empty(T_WARM + T_BLOCK)
    _run(kernel, T_WARM, gaps)
    nnz0 = kernel.stats.touched_nnz
    c0 = time.process_time()
    _run(kernel, T_BLOCK, gaps)
    step_s = time.process_time() - c0
    scipy_s = min(scipy_s, _best_cpu(lambda: Xr @ w))
    return step_s / (kernel.stats.touched_nnz - nnz0) * 1e9, scipy_s / Xr.nnz * 1e9


class PerNonZero:
    """ns per touched non-zero of a fast private step (grouped sampler) and its
    ratio to SciPy's ns per non-zero of the CSR product ``X @ w``, both measured
    in one process one after the other (a ratio is what survives a shared
    machine's load).  A touched non-zero is an entry of a row that contains the
    step's chosen feature: its margin and gradient change and ``alpha`` is
    updated over the row, and about two thirds of them change a sampler weight.
    ``epsilon`` sets the per-step budget of a ``T_BUDGET``-step fit (larger
    epsilon: larger log-weights, the sampler's second branch more often).
    ``source``: ``"imdb"`` (the issue's setting: about 3,200 touched non-zeros a
    step; skipped when the corpus is missing) or the synthetic D = 2^20 problem,
    whose steps touch few non-zeros (rare features), so that the step's fixed
    cost (the draw's O(sqrt D) scans) dominates its per-non-zero figure.
    """

    params = [["imdb", 2**20], [1.0, 0.1]]
    param_names = ["source", "epsilon"]
    timeout = 600

    def setup(self, source, epsilon):
        _prepared(source)    # NotImplementedError (skip) when the data is missing

    def track_ns_per_touched_nnz(self, source, epsilon):
        return _per_nnz(source, epsilon)[0]

    track_ns_per_touched_nnz.unit = "ns"

    def track_ratio_to_scipy_product(self, source, epsilon):
        ours, scipy_ns = _per_nnz(source, epsilon)
        return ours / scipy_ns

    track_ratio_to_scipy_product.unit = "ratio"


class FastOverStandard:
    """Per-step CPU time of the standard private solver (exponential mechanism,
    ``N_STANDARD`` steps after one) over that of the fast one (grouped sampler,
    default ``refresh_tol``, ``T_BLOCK`` steps after ``T_WARM``), measured one
    after the other in one process at D = 2^20: the speed-up of Raff, Khanna and
    Lu (2023), Table 3, per step (``scripts/bench_frank_wolfe.py speed`` times
    whole 4000-step fits on IMDB).
    """

    N_STANDARD = 3
    params = [[1.0, 0.1]]
    param_names = ["epsilon"]
    timeout = 600

    def track_fast_over_standard(self, epsilon):
        views, y = _prepared(2**20)
        est = FrankWolfeLassoClassifier(l1_bound=L1_BOUND, max_iter=T_BUDGET,
                                        epsilon=epsilon, delta=DELTA, **FIXED)
        fast = _private_kernel(views, y, epsilon, "grouped", est.refresh_tol)
        gaps = np.empty(T_WARM + T_BLOCK)
        _run(fast, T_WARM, gaps)
        c0 = time.process_time()
        _run(fast, T_BLOCK, gaps)
        fast_s = (time.process_time() - c0) / T_BLOCK
        std = _private_kernel(views, y, epsilon, "exponential", None)
        gaps = np.empty(1 + self.N_STANDARD)
        _run(std, 1, gaps)
        c0 = time.process_time()
        _run(std, self.N_STANDARD, gaps)
        std_s = (time.process_time() - c0) / self.N_STANDARD
        return std_s / fast_s

    track_fast_over_standard.unit = "ratio"
