"""Private top-k selection and feature selectors (Swope et al., AISec 2024).

* the canonical Lipschitz mechanism at d = 10^6, k = 14 (target: < 2 s,
  O(d) memory), with its peak memory and the peeling baseline beside it;
* batched draws (the study's 100 trials per score vector);
* DP-SIS and the two-stage selector on a real microarray set (skipped when
  the data is missing) and on a synthetic sparse problem.
"""
import numpy as np

from dptoolkit.selection import (
    DPSIS,
    TwoStageSelector,
    canonical_lipschitz_top_k,
    peeling_top_k,
)

from .common import data_file, synthetic_problem


class TopK:
    """One draw of a private top-k over d scores."""

    params = ([10**5, 10**6], [5, 14, 50])
    param_names = ["d", "k"]
    timeout = 300

    def setup(self, d, k):
        self.scores = np.random.default_rng(0).normal(size=d) * 10

    def time_canonical_lipschitz(self, d, k):
        canonical_lipschitz_top_k(self.scores, k, epsilon=1.0, random_state=0)

    def peakmem_canonical_lipschitz(self, d, k):
        canonical_lipschitz_top_k(self.scores, k, epsilon=1.0, random_state=0)

    def time_peeling(self, d, k):
        peeling_top_k(self.scores, k, epsilon=1.0, random_state=0)


class TopKBatch:
    """100 independent draws from one score vector (one cell of the study)."""

    params = ([2_000, 22_283], [5, 10])
    param_names = ["d", "k"]

    def setup(self, d, k):
        self.scores = np.random.default_rng(1).exponential(size=d) * 20

    def time_canonical_lipschitz_100_draws(self, d, k):
        canonical_lipschitz_top_k(self.scores, k, epsilon=5.0, random_state=0, size=100)


def _microarray(name):
    import pandas as pd

    df = pd.read_csv(data_file(f"microarray/{name}"))
    y = df.pop("y").astype("category").cat.codes.to_numpy(dtype=np.float64)
    return df.to_numpy(dtype=np.float64), y


class MicroarraySelectors:
    """DP-SIS (public bounds after per-row max-abs scaling) and two-stage on Gordon
    (181 x 12533)."""

    timeout = 300

    def setup(self):
        X, y = _microarray("gordon.csv.bz2")
        X = X - X.mean(axis=1, keepdims=True)           # per-example (local) operations
        X /= np.abs(X).max(axis=1, keepdims=True)
        self.X, self.y = X, 2 * y / max(1.0, y.max()) - 1

    def time_dpsis(self):
        DPSIS(k=9, epsilon=5.0, random_state=0).fit(self.X, self.y)

    def time_two_stage(self):
        TwoStageSelector(k=9, epsilon=5.0, random_state=0).fit(self.X, self.y)


class SparseDPSIS:
    """DP-SIS on a sparse 10^4 x 10^5 problem (CSR input)."""

    timeout = 300

    def setup(self):
        X, y, _ = synthetic_problem(n_samples=10_000, n_features=100_000, avg_nnz=50)
        self.X = X
        self.y = 2 * np.asarray(y, dtype=np.float64) - 1

    def time_dpsis_sparse(self):
        DPSIS(k=14, epsilon=1.0, random_state=0).fit(self.X, self.y)
