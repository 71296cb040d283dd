"""Tests of dptoolkit.linear_model._frank_wolfe._heap: pairing / Fibonacci heaps and the lazy FW queue.

Every randomized test uses a fixed seed and checks exact (deterministic)
properties against a simple reference model, so none can fail by chance.

In a debug build (``DPTOOLKIT_CYTHON_DEBUG=1``: boundscheck, wraparound,
initializedcheck on) an out-of-bounds access inside a ``noexcept nogil``
method cannot propagate; Cython reports it through ``sys.unraisablehook``.
The ``filterwarnings`` mark below turns pytest's warning about such reports
into a test failure, so the debug run of this file catches them.
"""
import heapq
import math

import numpy as np
import pytest

from dptoolkit.linear_model._frank_wolfe._heap import (OP_CLEAR, OP_DECREASE_KEY, OP_PEEK,
                                                       OP_POP, OP_PUSH, FibonacciHeap,
                                                       IndexedMinHeap, LazyMaxQueue,
                                                       PairingHeap, _run_fw_sequence,
                                                       _run_ops)

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

HEAPS = [PairingHeap, FibonacciHeap]
KINDS = ["pairing", "fibonacci"]
INF = math.inf


# ---------------------------------------------------------------------------
# reference model: dict item -> key, min by scan (small n) or heapq (large n)
# ---------------------------------------------------------------------------

class DictModel:
    """Reference semantics of the cdef methods (decrease-key to a larger key,
    or of an absent item, is a no-op)."""

    def __init__(self):
        self.keys = {}

    def push(self, i, k):
        assert i not in self.keys
        self.keys[i] = k

    def min_key(self):
        return min(self.keys.values()) if self.keys else INF

    def pop_check(self, i, k):
        """Remove ``i``, which the heap popped with key ``k``; it must be a minimum."""
        assert i in self.keys, f"popped item {i} is not in the model"
        assert self.keys[i] == k, f"item {i}: key {k}, model {self.keys[i]}"
        assert k == self.min_key(), f"popped key {k} but model minimum is {self.min_key()}"
        del self.keys[i]

    def decrease_key(self, i, k):
        if i in self.keys and k < self.keys[i]:
            self.keys[i] = k


class HeapqModel:
    """Same semantics with O(log n) operations (heapq + lazy deletion)."""

    def __init__(self):
        self.keys = {}
        self.q = []

    def push(self, i, k):
        self.keys[i] = k
        heapq.heappush(self.q, (k, i))

    def _clean(self):
        while self.q and self.keys.get(self.q[0][1]) != self.q[0][0]:
            heapq.heappop(self.q)

    def min_key(self):
        self._clean()
        return self.q[0][0] if self.q else INF

    def pop_check(self, i, k):
        assert self.keys.get(i) == k, f"popped ({i}, {k}) but model has key {self.keys.get(i)}"
        assert k == self.min_key(), f"popped key {k} but model minimum is {self.min_key()}"
        del self.keys[i]

    def decrease_key(self, i, k):
        if i in self.keys and k < self.keys[i]:
            self.push(i, k)

    def clear(self):
        self.keys.clear()
        self.q.clear()


# small key alphabet: many duplicates, both infinities
KEY_ALPHABET = np.array([-INF, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 7.0, INF])


def _random_key(rng):
    if rng.random() < 0.7:
        return float(KEY_ALPHABET[rng.integers(len(KEY_ALPHABET))])
    return float(rng.normal())


# ---------------------------------------------------------------------------
# heaps through the checked Python methods
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("heap_cls", HEAPS)
@pytest.mark.parametrize("seed", [0, 1])
def test_heap_random_ops_against_model(heap_cls, seed):
    """6000 mixed operations on 48 items (push, pop, decrease-key including
    on the root and to +-inf, clear, pop-to-empty phases, re-pushing popped
    items), structure checked after every operation."""
    rng = np.random.default_rng(seed)
    n = 48
    heap = heap_cls(n)
    model = DictModel()
    counts = dict(push=0, pop=0, dk=0, dk_root=0, clear=0, empty=0)
    pop_phase = 0
    for step in range(6000):
        if pop_phase == 0 and rng.random() < 0.01:
            pop_phase = n + 5          # drain the heap, popping past empty
        absent = [i for i in range(n) if i not in model.keys]
        present = list(model.keys)
        u = rng.random()
        if pop_phase > 0:
            pop_phase -= 1
            op = "pop"
        elif u < 0.002:
            op = "clear"
        elif u < 0.45:
            op = "push"
        elif u < 0.70:
            op = "pop"
        else:
            op = "dk"
        if op == "push" and absent:
            i = int(rng.choice(absent))
            k = _random_key(rng)
            heap.py_push(i, k)
            model.push(i, k)
            counts["push"] += 1
        elif op == "pop":
            if not present:
                with pytest.raises(IndexError, match="empty"):
                    heap.py_pop()
                counts["empty"] += 1
            else:
                i, k = heap.py_pop()
                model.pop_check(i, k)
                counts["pop"] += 1
        elif op == "dk" and present:
            if rng.random() < 0.2:
                # decrease the key of a current minimum (the root in both heaps
                # when it is unique)
                m = model.min_key()
                i = min(j for j in present if model.keys[j] == m)
                counts["dk_root"] += 1
            else:
                i = int(rng.choice(present))
            cur = model.keys[i]
            r = rng.random()
            if r < 0.1:
                k = -INF
            elif r < 0.2:
                k = cur                      # equal key: allowed, no change
            else:
                k = cur - abs(_random_key(rng)) if np.isfinite(cur) else _random_key(rng)
                if k > cur:
                    k = cur
            heap.py_decrease_key(i, k)
            model.decrease_key(i, k)
            counts["dk"] += 1
        elif op == "clear":
            heap.py_clear()
            model.keys.clear()
            counts["clear"] += 1
        heap.check_invariants()
        assert len(heap) == len(model.keys)
        assert heap.py_peek_key() == model.min_key()
        j = int(rng.integers(n))
        assert heap.contains(j) == (j in model.keys)
        if j in model.keys:
            assert heap.py_key(j) == model.keys[j]
    # the sequence exercised every kind of operation
    assert min(counts.values()) > 0, counts


@pytest.mark.parametrize("heap_cls", HEAPS)
def test_heap_sorts_and_reuses_items(heap_cls):
    rng = np.random.default_rng(3)
    n = 2000
    heap = heap_cls(n)
    for round_ in range(3):   # pop everything, then re-push the same items
        keys = rng.normal(size=n)
        keys[rng.integers(n, size=50)] = 0.0    # duplicates
        for i in rng.permutation(n):
            heap.py_push(int(i), float(keys[i]))
        heap.check_invariants()
        out = [heap.py_pop() for _ in range(n)]
        assert len(heap) == 0 and heap.py_peek_key() == INF
        items = [i for i, _ in out]
        popped = np.array([k for _, k in out])
        assert sorted(items) == list(range(n))
        assert np.all(np.diff(popped) >= 0)
        np.testing.assert_array_equal(popped, keys[items])
        heap.check_invariants()


@pytest.mark.parametrize("heap_cls", HEAPS)
def test_decrease_key_root_and_all_equal_keys(heap_cls):
    heap = heap_cls(5)
    for i in range(5):
        heap.py_push(i, 1.0)
    heap.py_decrease_key(0, 1.0)                 # equal key: no change
    assert heap.py_peek_key() == 1.0
    i, k = heap.py_pop()
    assert k == 1.0
    # decrease the key of the new root, then of a non-root to below it
    j = next(x for x in range(5) if heap.contains(x))
    heap.py_decrease_key(j, -INF)
    heap.check_invariants()
    assert heap.py_peek_key() == -INF
    other = next(x for x in range(5) if heap.contains(x) and x != j)
    heap.py_decrease_key(other, -INF)
    heap.check_invariants()
    got = {heap.py_pop()[0], heap.py_pop()[0]}
    assert got == {j, other}
    heap.py_push(i, INF)
    left = {x for x in range(5) if heap.contains(x)} - {i}
    x, k = heap.py_pop()
    assert x in left and k == 1.0
    heap.check_invariants()


@pytest.mark.parametrize("heap_cls", HEAPS)
def test_heap_argument_validation(heap_cls):
    heap = heap_cls(4)
    with pytest.raises(IndexError, match=r"item must be in \[0, 4\)"):
        heap.py_push(4, 0.0)
    with pytest.raises(IndexError):
        heap.py_push(-1, 0.0)
    with pytest.raises(TypeError, match="item must be an integer"):
        heap.py_push(1.5, 0.0)
    with pytest.raises(TypeError, match="item must be an integer"):
        heap.py_push(True, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        heap.py_push(0, float("nan"))
    with pytest.raises(TypeError, match="key must be a real number"):
        heap.py_push(0, "a")
    heap.py_push(0, 1.0)
    with pytest.raises(ValueError, match="already in the heap"):
        heap.py_push(0, 2.0)
    with pytest.raises(ValueError, match="must not exceed the current key"):
        heap.py_decrease_key(0, 2.0)
    with pytest.raises(ValueError, match="not in the heap"):
        heap.py_decrease_key(1, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        heap.py_decrease_key(0, float("nan"))
    with pytest.raises(ValueError, match="not in the heap"):
        heap.py_key(1)
    with pytest.raises(IndexError):
        heap.contains(4)
    assert heap.py_pop() == (0, 1.0)
    with pytest.raises(IndexError, match="pop from an empty heap"):
        heap.py_pop()
    assert heap.py_peek_key() == INF


def test_heap_constructor_validation():
    with pytest.raises(TypeError, match="abstract"):
        IndexedMinHeap(3)
    for cls in HEAPS:
        with pytest.raises(ValueError, match="n_items must be >= 0"):
            cls(-1)
        with pytest.raises(TypeError, match="n_items must be an integer"):
            cls(2.0)
        with pytest.raises(TypeError, match="n_items must be an integer"):
            cls(None)
        empty = cls(0)
        assert len(empty) == 0 and empty.py_peek_key() == INF
        with pytest.raises(IndexError):
            empty.py_pop()
        empty.py_clear()
        assert cls(np.int64(3)).n_items == 3


# ---------------------------------------------------------------------------
# heaps through the nogil driver (the cdef methods exactly as kernels call them)
# ---------------------------------------------------------------------------

def _random_op_sequence(rng, n, n_ops):
    ops = rng.choice([OP_PUSH, OP_POP, OP_DECREASE_KEY, OP_PEEK, OP_CLEAR],
                     p=[0.42, 0.25, 0.30, 0.0298, 0.0002], size=n_ops).astype(np.int8)
    # drain phases: runs of pops longer than the heap can be
    for start in rng.integers(n_ops, size=3):
        ops[start:start + n // 2] = OP_POP
    items = rng.integers(n, size=n_ops).astype(np.intp)
    keys = np.where(rng.random(n_ops) < 0.5,
                    KEY_ALPHABET[rng.integers(len(KEY_ALPHABET), size=n_ops)],
                    rng.normal(size=n_ops) * 10)
    # decrease-key targets are drawn lower, so that most of them take effect
    keys[ops == OP_DECREASE_KEY] -= 30.0
    return ops, items, keys


def _replay(ops, items, keys, out_item, out_key):
    """Check the driver's outputs against HeapqModel; return op counts."""
    model = HeapqModel()
    n_pops = n_dk = 0
    for t in range(len(ops)):
        op, i, k = int(ops[t]), int(items[t]), float(keys[t])
        if op == OP_PUSH:
            if i not in model.keys:
                model.push(i, k)
        elif op == OP_POP:
            if not model.keys:
                assert out_item[t] == -1
            else:
                model.pop_check(int(out_item[t]), model.keys.get(int(out_item[t])))
                n_pops += 1
        elif op == OP_DECREASE_KEY:
            n_dk += i in model.keys and k < model.keys[i]
            model.decrease_key(i, k)
        elif op == OP_CLEAR:
            model.clear()
        else:
            assert out_key[t] == model.min_key()
    return n_pops, n_dk


@pytest.mark.parametrize("heap_cls", HEAPS)
def test_nogil_driver_against_model(heap_cls):
    rng = np.random.default_rng(7)
    n = 3000
    ops, items, keys = _random_op_sequence(rng, n, 60_000)
    heap = heap_cls(n)
    out_item, out_key = _run_ops(heap, ops, items, keys)
    heap.check_invariants()
    n_pops, n_dk = _replay(ops, items, keys, out_item, out_key)
    assert n_pops > 10_000 and n_dk > 2000


@pytest.mark.parametrize("heap_cls", HEAPS)
def test_large_heap_no_recursion(heap_cls):
    """2**20 items: increasing pushes make the pairing root have 2**20 - 1
    children (first pop's pairing passes run over all of them), decreasing
    pushes make a path 2**20 deep.  An implementation recursing on either
    would overflow the C stack."""
    n = 2 ** 20
    heap = heap_cls(n)
    for order in (np.arange(n), np.arange(n)[::-1]):
        ops = np.concatenate([np.full(n, OP_PUSH), np.full(100, OP_POP)]).astype(np.int8)
        items = np.concatenate([order, np.zeros(100, dtype=np.intp)]).astype(np.intp)
        keys = np.concatenate([order.astype(float), np.zeros(100)])
        out_item, _ = _run_ops(heap, ops, items, keys)
        np.testing.assert_array_equal(out_item[n:], np.arange(100))
        assert len(heap) == n - 100
        # decrease every remaining key below all others, in reverse order
        rest = np.arange(100, n)
        ops2 = np.concatenate([np.full(n - 100, OP_DECREASE_KEY),
                               np.full(10, OP_POP)]).astype(np.int8)
        items2 = np.concatenate([rest, np.zeros(10, dtype=np.intp)]).astype(np.intp)
        keys2 = np.concatenate([-rest.astype(float), np.zeros(10)])
        out_item, _ = _run_ops(heap, ops2, items2, keys2)
        np.testing.assert_array_equal(out_item[n - 100:], np.arange(n - 1, n - 11, -1))
        heap.py_clear()
        assert len(heap) == 0 and not heap.contains(n - 1)


def test_driver_validation():
    heap = PairingHeap(3)
    with pytest.raises(ValueError, match="same length"):
        _run_ops(heap, np.zeros(2, np.int8), np.zeros(1, np.intp), np.zeros(2))
    with pytest.raises(ValueError, match="unknown op"):
        _run_ops(heap, np.full(1, 9, np.int8), np.zeros(1, np.intp), np.zeros(1))
    with pytest.raises(IndexError, match="must be in"):
        _run_ops(heap, np.zeros(1, np.int8), np.full(1, 3, np.intp), np.zeros(1))
    # push of an item already in the heap is skipped, not corrupting
    out, _ = _run_ops(heap, np.array([OP_PUSH, OP_PUSH, OP_POP, OP_POP], np.int8),
                      np.array([1, 1, 0, 0], np.intp), np.array([5.0, 2.0, 0, 0]))
    assert list(out[2:]) == [1, -1]


# ---------------------------------------------------------------------------
# LazyMaxQueue (Raff, Khanna and Lu, NeurIPS 2023, Algorithm 3)
# ---------------------------------------------------------------------------

def _assert_max(values, j):
    mags = np.abs(values)
    assert j >= 0 and mags[j] == mags.max(), (j, mags[j], mags.max(), int(np.argmax(mags)))


@pytest.mark.parametrize("kind", KINDS)
def test_lazy_queue_random_updates(kind):
    """3000 value changes (increases, decreases, sign flips, zeros, ties with
    the maximum), update after each, get_next checked after each."""
    rng = np.random.default_rng(11)
    n = 300
    values = rng.standard_t(2, size=n)
    q = LazyMaxQueue(kind, n)
    q.py_build(values)
    assert q.heap_kind == kind and q.n_items == n and len(q) == n
    for step in range(3000):
        i = int(rng.integers(n))
        r = rng.random()
        if r < 0.3:
            values[i] *= rng.uniform(0, 1)                 # magnitude decreases
        elif r < 0.55:
            values[i] += rng.normal()                      # either way
        elif r < 0.65:
            values[i] = -values[i] * rng.uniform(1, 2)     # sign flip, grows
        elif r < 0.75:
            values[i] = 0.0
        elif r < 0.8:
            values[i] = -np.abs(values).max()              # tie with the max
        else:
            # shrink the current top: the stale upper bound must be corrected
            j = int(np.argmax(np.abs(values)))
            values[j] *= 0.1
            i = j
        q.py_update(i, values[i])
        j = q.py_get_next(values)
        _assert_max(values, j)
        if step % 300 == 0:
            q.check_invariants()
            bounds = np.array([q.stored_priority(k) for k in range(n)])
            assert np.all(bounds >= np.abs(values))
    assert len(q) == n
    assert q.n_pops >= 3000


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shrink", [0.5, -0.9, 1.0])
def test_lazy_queue_fw_sequence_nogil(kind, shrink):
    """The nogil FW-like driver against a numpy replay (argmax of |values|)."""
    rng = np.random.default_rng(5)
    n, steps, n_upd = 4000, 1500, 20
    values = rng.standard_t(3, size=n)
    upd_items = rng.integers(n, size=(steps, n_upd)).astype(np.intp)
    upd_deltas = rng.normal(scale=0.3, size=(steps, n_upd))
    q = LazyMaxQueue(kind, n)
    work = values.copy()
    q.py_build(work)
    selected = _run_fw_sequence(q, work, upd_items, upd_deltas, shrink)
    ref = values.copy()
    for t in range(steps):
        _assert_max(ref, int(selected[t]))
        ref[selected[t]] *= shrink
        for u in range(n_upd):
            ref[upd_items[t, u]] += upd_deltas[t, u]
    np.testing.assert_array_equal(work, ref)
    q.check_invariants()
    assert q.n_pops >= steps


@pytest.mark.parametrize("kind", KINDS)
def test_lazy_queue_laziness_and_counts(kind):
    values = np.array([3.0, -7.0, 1.0, 7.0, 0.0, -2.0])
    q = LazyMaxQueue(kind, 6)
    assert q.py_get_next(values) == -1          # not built: empty
    q.py_build(values)
    assert q.py_get_next(values) in (1, 3)
    assert q.n_pops == 1                        # exact keys: one pop suffices
    # a decrease is not reported to the heap: key 7 stays as an upper bound
    values[1] = 0.5
    values[3] = 0.25
    q.py_update(1, values[1])
    q.py_update(3, values[3])
    assert q.stored_priority(1) == 7.0
    assert q.py_get_next(values) == 0
    assert q.n_pops == 1 + 3                     # popped 1, 3 (stale) and 0
    assert q.stored_priority(1) == 0.5          # corrected on re-insertion
    # an increase is reported (decrease-key of -|v|)
    values[4] = -10.0
    q.py_update(4, values[4])
    assert q.stored_priority(4) == 10.0
    assert q.py_get_next(values) == 4
    # all equal magnitudes: any index
    q.py_build(np.ones(6))
    assert 0 <= q.py_get_next(np.ones(6)) < 6
    # zeros: any index
    q.py_build(np.zeros(6))
    assert 0 <= q.py_get_next(np.zeros(6)) < 6


@pytest.mark.parametrize("kind", KINDS)
def test_lazy_queue_nonfinite(kind):
    """+-inf are maximal magnitudes; NaN ranks as +inf (ties with infinite
    values), so a NaN gradient is returned, not hidden."""
    values = np.array([1.0, -np.inf, 5.0, 2.0])
    q = LazyMaxQueue(kind, 4)
    q.py_build(values)
    assert q.py_get_next(values) == 1
    values[3] = np.nan
    q.py_update(3, values[3])
    assert q.py_get_next(values) in (1, 3)
    values[1] = 0.0
    q.py_update(1, 0.0)
    assert q.py_get_next(values) == 3
    values[1] = -np.inf
    q.py_update(1, values[1])
    values[3] = 0.0
    q.py_update(3, 0.0)
    assert q.py_get_next(values) == 1
    values[1] = 0.0
    q.py_update(1, 0.0)
    assert q.py_get_next(values) == 2


def test_lazy_queue_validation():
    with pytest.raises(ValueError, match="heap_kind must be one of"):
        LazyMaxQueue("binary", 3)
    with pytest.raises(ValueError, match="n_items must be >= 0"):
        LazyMaxQueue("pairing", -2)
    q = LazyMaxQueue("fibonacci", 3)
    with pytest.raises(ValueError, match=r"values must have shape \(3,\)"):
        q.py_build(np.zeros(4))
    with pytest.raises(ValueError, match=r"values must have shape \(3,\)"):
        q.py_get_next(np.zeros((3, 1)))
    with pytest.raises(IndexError, match=r"item must be in \[0, 3\)"):
        q.py_update(3, 1.0)
    with pytest.raises(TypeError, match="value must be a real number"):
        q.py_update(0, "x")
    with pytest.raises(ValueError, match="values must have shape"):
        _run_fw_sequence(q, np.zeros(2), np.zeros((1, 1), np.intp), np.zeros((1, 1)), 1.0)
    with pytest.raises(IndexError, match="update_items must be in"):
        _run_fw_sequence(q, np.zeros(3), np.full((1, 1), 5, np.intp), np.zeros((1, 1)), 1.0)
    empty = LazyMaxQueue("pairing", 0)
    empty.py_build(np.zeros(0))
    assert empty.py_get_next(np.zeros(0)) == -1
    # update before build inserts the item
    q.py_update(2, -4.0)
    assert len(q) == 1 and q.py_get_next(np.array([0.0, 0.0, -4.0])) == 2
