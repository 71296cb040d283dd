"""Indexed heaps and the lazy Frank-Wolfe queue (dptoolkit.linear_model._frank_wolfe._heap;
Raff, Khanna and Lu, NeurIPS 2023, Algorithm 3).

``LazyQueueFW``: build the queue over n coordinates, then 1000 Frank-Wolfe-like
steps, each a ``get_next`` (argmax |value|), a shrink of the selected value
(x 0.5, a magnitude decrease the queue ignores) and 100 random value updates
(``values[k] += N(0, 0.3^2)``, each reported with ``update``), all inside one
nogil driver (``_run_fw_sequence``), so no Python call per operation is timed.
Values are Student-t(3) draws: a few large gradients, many small ones.
``NumpyArgmaxFW``: the same steps with the O(n) ``argmax(abs(values))`` that the
standard Frank-Wolfe step uses instead of a queue.
``HeapOps``: n pushes of N(0, 1) keys, n/2 decrease-keys, n pops (empties the
heap, so repeats see the same work), through ``_run_ops``.
"""
import numpy as np

from dptoolkit.kernels import heap as heap_kernels

_KINDS = ["pairing", "fibonacci"]
_SIZES = [2**14, 2**20]
_STEPS = 1000
_UPDATES = 100
_SHRINK = 0.5


def _fw_problem(n):
    rng = np.random.default_rng(0)
    values = rng.standard_t(3, size=n)
    items = rng.integers(0, n, size=(_STEPS, _UPDATES)).astype(np.intp)
    deltas = rng.normal(0.0, 0.3, size=(_STEPS, _UPDATES))
    return values, items, deltas


class LazyQueueFW:
    """Lazy max queue: build, and build + 1000 FW-like steps."""

    params = [_KINDS, _SIZES]
    param_names = ["heap_kind", "n_items"]

    def setup(self, kind, n):
        self.values, self.items, self.deltas = _fw_problem(n)
        self.queue = heap_kernels.LazyMaxQueue(kind, n)

    def time_build(self, kind, n):
        self.queue.py_build(self.values)

    def time_build_and_1000_steps(self, kind, n):
        values = self.values.copy()
        self.queue.py_build(values)
        heap_kernels._run_fw_sequence(self.queue, values, self.items, self.deltas, _SHRINK)

    def track_pops_per_get_next(self, kind, n):
        values = self.values.copy()
        queue = heap_kernels.LazyMaxQueue(kind, n)
        queue.py_build(values)
        heap_kernels._run_fw_sequence(queue, values, self.items, self.deltas, _SHRINK)
        return queue.n_pops / _STEPS

    track_pops_per_get_next.unit = "pops"


class NumpyArgmaxFW:
    """Baseline: the same 1000 steps with an O(n) argmax of |values| each."""

    params = [_SIZES]
    param_names = ["n_items"]

    def setup(self, n):
        self.values, self.items, self.deltas = _fw_problem(n)

    def time_1000_steps(self, n):
        values = self.values.copy()
        for t in range(_STEPS):
            j = np.argmax(np.abs(values))
            values[j] *= _SHRINK
            np.add.at(values, self.items[t], self.deltas[t])


class HeapOps:
    """n pushes, n/2 decrease-keys, n pops through the nogil driver."""

    params = [_KINDS, _SIZES]
    param_names = ["heap_kind", "n_items"]

    def setup(self, kind, n):
        rng = np.random.default_rng(0)
        keys = rng.normal(size=n)
        dk_items = rng.permutation(n)[: n // 2]
        dk_keys = keys[dk_items] - np.abs(rng.normal(size=n // 2))
        self.ops = np.concatenate([
            np.full(n, heap_kernels.OP_PUSH), np.full(n // 2, heap_kernels.OP_DECREASE_KEY),
            np.full(n, heap_kernels.OP_POP),
        ]).astype(np.int8)
        self.op_items = np.concatenate([
            rng.permutation(n), dk_items, np.zeros(n, dtype=np.intp)]).astype(np.intp)
        self.op_keys = np.concatenate([keys, dk_keys, np.zeros(n)])
        self.op_keys[:n] = keys[self.op_items[:n]]
        cls = heap_kernels.PairingHeap if kind == "pairing" else heap_kernels.FibonacciHeap
        self.heap = cls(n)

    def time_push_decrease_pop(self, kind, n):
        heap_kernels._run_ops(self.heap, self.ops, self.op_items, self.op_keys)
