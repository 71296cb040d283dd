"""DSAL (Bao et al., IJCAI 2022): inner-loop kernel, threads, and whole fits against the baselines.

``EpochKernel``   one inner epoch (n stochastic steps) of the sparse proximal kernel
                  on IMDB train hashed to 2^20 features (25,000 x 1,048,576, about
                  8.8M non-zeros), for plain SGD (DSAL-Naive), SVRG (DSAL / ProxSVRG)
                  and SAGA (ProxASAGA), on 1 and 2 threads, and on the full feature
                  set versus the active set that Gap Safe screening leaves at
                  alpha = 1e-2 alpha_max (the per-step cost follows the non-zeros of
                  the row restricted to the active set: ``track_nnz_per_step``).
                  Wall-clock timer: the 2-thread runs are what is measured.
``FitNews20``     whole fits with ``tol=1e-6`` on 20 Newsgroups comp.* vs rec.*
                  (train, 5,325 x 2^20) at alpha = 0.1 alpha_max: DSAL (working
                  sets), DSAL's stochastic loop (``working_set=False``), DSAL-Naive,
                  ProxSVRG, ProxASAGA (capped at ``MAX_OUTER`` outer iterations) and
                  scikit-learn's ``Lasso`` with its stopping test set to the same
                  relative duality gap.  ``track_relative_gap`` says whether a capped
                  run reached the tolerance; ``track_outer_iterations`` and
                  ``track_active_features`` give the iterations and the final active
                  set (the elimination claim).
``FitLibsvm``     DSAL (working sets) against scikit-learn's ``Lasso`` on a9a and
                  w8a at 0.1, 0.01 and 0.001 alpha_max, both to relative gap 1e-6.
``PeakMemFit``    peak memory of a DSAL fit on 20 Newsgroups.

The side-by-side tables (IMDB at 1e-2 and 1e-3 alpha_max, threads,
MPI workers) is printed by ``scripts/bench_dsal.py``; its numbers are in
docs/studies/dsal.rst.  Real data through ``common.text_corpus`` (cached on disk);
missing data skips the benchmark.
"""
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

from dptoolkit.linear_model import DSALLasso, ProxASAGALasso, ProxSVRGLasso
from dptoolkit.dsal import (ActiveProblem, Evaluation, inner_epoch, lasso_alpha_max,
                            lasso_duality_gap, prepare_problem)

from .common import libsvm, text_corpus

IMDB = "text/aclImdb-train-test.tar.xz"
NEWS20 = "text/20news-bydate.tar.xz"
MAX_OUTER = 60
RATIO = 0.1


def _pm1(y):
    return 2.0 * np.asarray(y, dtype=np.float64) - 1.0


def _imdb():
    X, y, _ = text_corpus(IMDB, subset="train")
    return X, _pm1(y)


def _news20():
    X, y, _ = text_corpus(NEWS20, subset="train", positive="comp.", negative="rec.")
    return X, _pm1(y)


class EpochKernel:
    params = (["sgd", "svrg", "saga"], [1, 2], ["all", "screened"])
    param_names = ["method", "n_jobs", "features"]
    timeout = 900
    number = 1
    repeat = 5
    warmup_time = 0.0

    def setup_cache(self):
        X, y = _imdb()
        alpha = 1e-2 * lasso_alpha_max(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = DSALLasso(alpha=alpha, tol=1e-6, max_outer=80, working_set=False,
                              random_state=0).fit(X, y)
        return {"alpha": alpha, "active": np.flatnonzero(model.active_features_)}

    def setup(self, cache, method, n_jobs, features):
        X, y = _imdb()
        Xr, Xc, yv, _, blocks = prepare_problem(X, y, "squared", "l1", None)
        prob = ActiveProblem.full(Xr, Xc, blocks, "l1", "importance")
        if features == "screened":
            keep = np.zeros(prob.n_features, dtype=bool)
            keep[cache["active"]] = True
            prob = prob.restrict(keep)  # importance sampling recomputed on the sub-matrix
        self.prob, self.y, self.alpha = prob, yv, cache["alpha"]
        w = np.zeros(prob.n_features)
        ev = Evaluation.local(prob, w, yv, self.alpha, "squared", "l1", 1)
        self.w, self.mem, self.gbar = w, ev.fp, ev.g
        self.step = 1.0 / prob.l_max
        self.method = method
        self.n_jobs = n_jobs

    def time_epoch(self, cache, method, n_jobs, features):
        inner_epoch(self.prob, self.y, self.w.copy(), self.mem.copy(), self.gbar.copy(),
                    loss="squared", penalty="l1", method=self.method, step=self.step,
                    alpha=self.alpha, n_steps=self.y.size,
                    generators=np.random.default_rng(0).spawn(self.n_jobs))

    def track_nnz_per_step(self, cache, method, n_jobs, features):
        """Mean non-zeros of a row restricted to the features of the run."""
        return self.prob.csr.nnz / self.y.size

    track_nnz_per_step.unit = "non-zeros"


def _fit(name, X, y, alpha, p_star=None):
    """Fit one solver; scikit-learn's Lasso stops at relative gap 1e-6 w.r.t. p_star
    (its test is gap <= tol ||y||^2 / n in this scaling, i.e. tol = 1e-6 P* / (2 P(0)))."""
    common = dict(alpha=alpha, tol=1e-6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if name == "sklearn":
            import scipy.sparse as sp
            Xs = sp.csc_matrix(X)
            Xs.indices = Xs.indices.astype(np.int32)
            Xs.indptr = Xs.indptr.astype(np.int32)
            p0 = 0.5 * float(y @ y) / y.size
            m = Lasso(alpha=alpha, fit_intercept=False, tol=1e-6 * p_star / (2 * p0),
                      max_iter=20_000).fit(Xs, y)
            primal, _, gap = lasso_duality_gap(X, y, m.coef_, alpha)
            return {"gap": gap / primal, "n_iter": m.n_iter_, "active": X.shape[1],
                    "objective": primal}
        if name == "DSAL":
            m = DSALLasso(max_outer=1000, **common)
        elif name == "DSAL-stochastic":
            m = DSALLasso(working_set=False, max_outer=1000, **common)
        elif name == "DSAL-Naive":
            m = DSALLasso(variance_reduction=False, working_set=False, max_outer=MAX_OUTER,
                          **common)
        elif name == "ProxSVRG":
            m = ProxSVRGLasso(max_outer=MAX_OUTER, **common)
        else:
            m = ProxASAGALasso(max_outer=MAX_OUTER, **common)
        m.fit(X, y)
    return {"gap": m.dual_gap_ / m.objective_, "n_iter": m.n_iter_,
            "active": int(m.active_features_.sum()), "objective": m.objective_}


SOLVERS = ["DSAL", "DSAL-stochastic", "DSAL-Naive", "ProxSVRG", "ProxASAGA", "sklearn"]


class FitNews20:
    params = SOLVERS
    param_names = ["solver"]
    timeout = 1800
    number = 1
    repeat = 1
    rounds = 1
    warmup_time = 0.0

    def setup_cache(self):
        X, y = _news20()
        alpha = RATIO * lasso_alpha_max(X, y)
        out = {"alpha": alpha}
        for name in SOLVERS[:-1]:
            out[name] = _fit(name, X, y, alpha)
        out["sklearn"] = _fit("sklearn", X, y, alpha, p_star=out["DSAL"]["objective"])
        return out

    def setup(self, cache, solver):
        self.X, self.y = _news20()

    def time_fit(self, cache, solver):
        _fit(solver, self.X, self.y, cache["alpha"], p_star=cache["DSAL"]["objective"])

    def track_relative_gap(self, cache, solver):
        return cache[solver]["gap"]

    def track_outer_iterations(self, cache, solver):
        return cache[solver]["n_iter"]

    def track_active_features(self, cache, solver):
        return cache[solver]["active"]

    track_relative_gap.unit = "relative gap"
    track_outer_iterations.unit = "iterations"
    track_active_features.unit = "features"


class PeakMemFit:
    timeout = 600

    def setup(self):
        self.X, self.y = _news20()
        self.alpha = RATIO * lasso_alpha_max(self.X, self.y)

    def peakmem_dsal_fit(self):
        DSALLasso(alpha=self.alpha, tol=1e-6, random_state=0).fit(self.X, self.y)


class FitLibsvm:
    params = (["DSAL", "sklearn"], ["a9a", "w8a"], [0.1, 0.01, 0.001])
    param_names = ["solver", "data", "ratio"]
    timeout = 600

    def setup_cache(self):
        out = {}
        for data in self.params[1]:
            X, y = libsvm(data + ".bz2", n_features=FEATURES[data])
            y = _pm1(y)
            for ratio in self.params[2]:
                alpha = ratio * lasso_alpha_max(X, y)
                out[data, ratio] = alpha, _fit("DSAL", X, y, alpha)["objective"]
        return out

    def setup(self, cache, solver, data, ratio):
        X, y = libsvm(data + ".bz2", n_features=FEATURES[data])
        self.X, self.y = X, _pm1(y)

    def time_fit(self, cache, solver, data, ratio):
        alpha, p_star = cache[data, ratio]
        _fit(solver, self.X, self.y, alpha, p_star=p_star)


FEATURES = {"a9a": 123, "w8a": 300}
