"""Sparse private LASSO (Khanna, Lu and Raff): private LASSO with the Laplace selector, the
Sparsifier, the multinomial kernel (Algorithm 3) and the DP-IGHT baseline.

* private LASSO (mechanism="laplace"), T = 1000, on a9a with the fast and the
  standard solver side by side;
* the Sparsifier on a9a (non-private fit of 5000 iterations + private fit of 1000),
  with and without the non-private fit cached (``memory=``, as in repeated trials);
* one multinomial Frank-Wolfe fit (20 classes, 50 iterations) on hashed-like sparse
  data, for two numbers of features and the private selectors;
* DP-IGHT, 200 iterations, on the synthetic data of Section 4.2.
"""
import tempfile

import numpy as np

from dptoolkit.datasets import clip_rows, make_correlated_classification
from dptoolkit.linear_model import (
    DPIGHTClassifier,
    FrankWolfeLassoClassifier,
    SparsifiedLassoClassifier,
)

from .common import libsvm, synthetic_problem


class PrivateLassoLaplace:
    """Talwar et al.'s private LASSO (Laplace report noisy max), T = 1000, a9a."""

    params = (["fast", "standard"],)
    param_names = ["solver"]
    timeout = 300

    def setup(self, solver):
        self.X, self.y = libsvm("a9a.bz2", n_features=123)

    def time_fit(self, solver):
        FrankWolfeLassoClassifier(l1_bound=10.0, max_iter=1000, epsilon=1.0, delta=1e-5,
                                  solver=solver, mechanism="laplace",
                                  random_state=0).fit(self.X, self.y)


class Sparsifier:
    """The Sparsifier on a9a; ``cached``: the non-private fit comes from ``memory``."""

    params = ([False, True],)
    param_names = ["cached"]
    timeout = 600

    def setup(self, cached):
        self.X, self.y = libsvm("a9a.bz2", n_features=123)
        self.tmp = tempfile.TemporaryDirectory()
        self.memory = self.tmp.name if cached else None
        if cached:
            self._fit()

    def teardown(self, cached):
        self.tmp.cleanup()

    def _fit(self):
        return SparsifiedLassoClassifier(l1_bound=10.0, max_iter=1000, epsilon=1.0, delta=1e-5,
                                         nonprivate_max_iter=5000, memory=self.memory,
                                         random_state=0).fit(self.X, self.y)

    def time_fit(self, cached):
        self._fit()

    def peakmem_fit(self, cached):
        self._fit()

    def track_nonzeros(self, cached):
        return int(np.count_nonzero(self._fit().coef_))


class Multinomial:
    """One multinomial Frank-Wolfe fit: 5000 documents, 20 classes, 50 iterations."""

    params = ([2**12, 2**15], ["argmax", "exponential", "laplace"])
    param_names = ["n_features", "selector"]
    timeout = 300

    def setup(self, n_features, selector):
        X, _, _ = synthetic_problem(n_samples=5000, n_features=n_features, avg_nnz=100,
                                    n_informative=20, random_state=0)
        rng = np.random.default_rng(0)
        W = rng.normal(0, 2, (20, n_features)) * (rng.random((20, n_features)) < 0.01)
        self.X = X
        self.y = np.argmax(X @ W.T + rng.gumbel(size=(5000, 20)), axis=1)
        self.kw = (dict(epsilon=None) if selector == "argmax"
                   else dict(epsilon=1.0, delta=1e-5))
        self.selector = selector

    def time_fit(self, n_features, selector):
        FrankWolfeLassoClassifier(l1_bound=20.0, max_iter=50, mechanism=self.selector,
                                  random_state=0, **self.kw).fit(self.X, self.y)


class DPIGHT:
    """DP-IGHT (Wang & Gu 2019), 200 iterations, 10,000 x 100 (Section 4.2 data)."""

    timeout = 300

    def setup(self):
        X, self.y, _ = make_correlated_classification(random_state=0)
        self.X, _ = clip_rows(X, 1.0, "l2")   # the public row-norm bound of DP-IGHT

    def time_fit(self):
        DPIGHTClassifier(sparsity=10, max_iter=200, learning_rate=4.0, epsilon=1.0,
                         delta=1e-4, n_samples_public=10_000,
                         random_state=0).fit(self.X, self.y)
