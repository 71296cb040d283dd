"""One training epoch of the paper-003 solvers (dptoolkit.linear_model._glm._scd_fast), per variant.

An epoch is N/L mini-batch steps (L = 100 examples) for the dual variants and
DP-SGD, and M/L steps (L = 10 coordinates) for the primal one.  The private
variants are timed at a fixed noise multiplier (1.0), so the noise calibration
(done once per fit, by the accountant) is not part of the epoch time.

``EpochA9a``            every variant on a9a (32,561 x 123, 451,592 non-zeros).
``EpochScalingSamples`` DP-SCD and DP-SGD on the first n rows of a9a.
``EpochScalingFeatures`` synthetic sparse data, 20,000 rows with about 14
                        non-zeros each (as a9a) and M features: the Gaussian
                        noise on the dense v (or theta) costs O(M) per step,
                        i.e. O(M N / L) per epoch, whatever the sparsity.
"""
import math

import numpy as np
import scipy.sparse as sp

from dptoolkit.kernels import scd_fast as _scd_fast
from dptoolkit.kernels import sgd_fast as _sgd_fast
from dptoolkit.linear_model import transform_rows as _transform_rows

from .common import libsvm, synthetic_problem

L_EXAMPLES = 100
L_COORDS = 10
LAM = 1e-5
C = 0.1
SIGMA = 1.0

VARIANTS = ["scd", "dpscd", "dpscd_v_only", "seqdpscd", "primal_dpscd", "sgd", "dpsgd"]


def _prepare(X, y):
    Xt, sq = _transform_rows(X, "l2", False, 1.0)
    Xc = sp.csc_array(Xt)
    Xc.sort_indices()
    Xc.indices = Xc.indices.astype(np.int64)
    Xc.indptr = Xc.indptr.astype(np.int64)
    t = np.where(np.asarray(y) > 0, 1.0, -1.0)
    return Xt, Xc, sq, t


class _Epoch:
    """Runs one epoch of ``variant`` on the prepared (Xt, Xc, sq, t)."""

    def _setup_data(self, X, y):
        self.Xt, self.Xc, self.sq, self.t = _prepare(X, y)
        self.N, self.M = self.Xt.shape
        self.no_rec = np.zeros(0, np.int64)
        self.no_trace = np.zeros((0, self.M))
        self.gen = np.random.default_rng(0)

    def _epoch(self, variant):
        Xt, N, M = self.Xt, self.N, self.M
        bg = self.gen.bit_generator
        if variant == "primal_dpscd":
            S = 2 * C * math.sqrt(L_COORDS)
            _scd_fast.primal_scd(self.Xc.data, self.Xc.indices, self.Xc.indptr, self.t,
                                 np.zeros(M), np.zeros(N), loss=1, sigma_p=float(L_COORDS),
                                 lam=LAM, n_public=float(N), clip=C, batch_size=L_COORDS,
                                 n_steps=math.ceil(M / L_COORDS), noise_theta=SIGMA * S,
                                 bit_generator=bg, record_steps=self.no_rec,
                                 trace=self.no_trace)
            return
        steps = math.ceil(N / L_EXAMPLES)
        private = variant not in ("scd", "sgd")
        q = L_EXAMPLES / N if private else 0.0
        if variant in ("sgd", "dpsgd"):
            _sgd_fast.dpsgd(Xt.data, Xt.indices, Xt.indptr, self.t, np.sqrt(self.sq),
                            np.zeros(M), loss=2, lam=LAM, learning_rate=0.1,
                            clip=C if private else math.inf, sampling_rate=q,
                            batch_size=L_EXAMPLES,
                            denominator=float(L_EXAMPLES) if private else 0.0,
                            n_steps=steps, noise_std=SIGMA * C if private else 0.0,
                            bit_generator=bg, record_steps=self.no_rec, trace=self.no_trace)
            return
        seq = variant == "seqdpscd"
        if variant == "scd":
            noise_v = noise_a = 0.0
            batch, steps = 1, N          # plain SDCA: one example per step
        else:
            batch = L_EXAMPLES
            S = {"dpscd": math.sqrt(2) * C, "dpscd_v_only": C}.get(
                variant, 2 * C * math.sqrt(L_EXAMPLES * (L_EXAMPLES + 1)))
            noise_v = SIGMA * S
            noise_a = 0.0 if variant == "dpscd_v_only" else noise_v
        _scd_fast.dual_scd(Xt.data, Xt.indices, Xt.indptr, self.t, self.sq, np.zeros(N),
                           np.zeros(M), loss=2, sequential=seq,
                           sigma_p=1.0 if seq or variant == "scd" else float(batch),
                           lam_n=LAM * N, clip=C if private else math.inf,
                           sampling_rate=q, batch_size=batch, batch_cap=batch,
                           n_steps=steps, noise_v=noise_v, noise_alpha=noise_a,
                           alpha_noise_all=seq, exact=not private, box=1e-4,
                           bit_generator=bg, record_steps=self.no_rec, trace=self.no_trace)


class EpochA9a(_Epoch):
    """One epoch of each variant on a9a (hinge loss; primal: logistic)."""

    params = [VARIANTS]
    param_names = ["variant"]
    timeout = 300

    def setup(self, variant):
        X, y = libsvm("a9a.bz2", n_features=123)
        self._setup_data(X, y)

    def time_epoch(self, variant):
        self._epoch(variant)


class EpochScalingSamples(_Epoch):
    """Epoch time against N (first n rows of a9a): linear in N for every variant."""

    params = [["dpscd", "dpsgd"], [8000, 16000, 32561]]
    param_names = ["variant", "n_samples"]
    timeout = 300

    def setup(self, variant, n):
        X, y = libsvm("a9a.bz2", n_features=123)
        self._setup_data(X[:n], y[:n])

    def time_epoch(self, variant, n):
        self._epoch(variant)


class EpochScalingFeatures(_Epoch):
    """Epoch time against the number of features M at fixed nnz per row: the
    non-private SCD is flat, the private variants grow like M N / L (noise)."""

    params = [["scd", "dpscd", "dpsgd"], [100, 10_000, 1_000_000]]
    param_names = ["variant", "n_features"]
    timeout = 600

    def setup(self, variant, m):
        X, y, _ = synthetic_problem(n_samples=20_000, n_features=m, avg_nnz=14,
                                    n_informative=min(20, m), random_state=0)
        self._setup_data(X, y)

    def time_epoch(self, variant, m):
        self._epoch(variant)
