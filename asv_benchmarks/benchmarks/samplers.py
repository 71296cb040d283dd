"""Exponential-mechanism sampling over n items whose weights change between draws.

``GroupedSampler``: the Big-Step Little-Step sampler (dptoolkit.linear_model._frank_wolfe._grouped_sampler,
Algorithm 4 of Raff et al. 2023, corrected): build O(n), update O(1), draw O(sqrt(n)).
``NumpyInverseCDF``: the O(n)-per-draw baseline a solver would otherwise use
after its weights changed (exp, cumsum, searchsorted over all n items).
Log-weights are N(0, 3^2), the scale of exponential-mechanism scores in the
private Frank-Wolfe solver; updates set random items to fresh N(0, 3^2) values.
"""
import numpy as np

from dptoolkit.kernels import grouped_sampler
GroupedExpSampler = grouped_sampler.GroupedExpSampler

_SIZES = [2**14, 2**20]


def _log_weights(n):
    return np.random.default_rng(0).normal(0.0, 3.0, n)


class GroupedSampler:
    """Grouped sampler: build, 1000 updates (one by one, batched), one draw, 1000 draws."""

    params = [_SIZES]
    param_names = ["n_items"]

    def setup(self, n):
        self.logw = _log_weights(n)
        self.sampler = GroupedExpSampler(n)
        self.sampler.set_log_weights(self.logw)
        rng = np.random.default_rng(1)
        self.items = rng.integers(0, n, 1000)
        # two value sets used alternately, so no update is a no-op
        self.values = [rng.normal(0.0, 3.0, 1000), rng.normal(0.0, 3.0, 1000)]
        self.flip = 0
        self.gen = np.random.default_rng(2)

    def time_build(self, n):
        self.sampler.set_log_weights(self.logw)

    def time_update_1000(self, n):
        self.flip ^= 1
        self.sampler.update_items(self.items, self.values[self.flip])

    def time_update_1000_batched(self, n):
        # the same 1000 updates as one batch (update_batch: the Frank-Wolfe step's API)
        self.flip ^= 1
        self.sampler.update_items_batched(self.items, self.values[self.flip])

    def time_draw_1(self, n):
        self.sampler.draw(1, self.gen)

    def time_draw_1000(self, n):
        self.sampler.draw(1000, self.gen)


class NumpyInverseCDF:
    """Baseline: one draw after a weight change, O(n) in numpy."""

    params = [_SIZES]
    param_names = ["n_items"]

    def setup(self, n):
        self.logw = _log_weights(n)
        self.gen = np.random.default_rng(2)

    def time_draw_1(self, n):
        w = np.exp(self.logw - self.logw.max())
        cdf = np.cumsum(w)
        np.searchsorted(cdf, self.gen.random() * cdf[-1], side="right")
