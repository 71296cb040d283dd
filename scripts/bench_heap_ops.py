"""Operations per second of the indexed heaps of dptoolkit.linear_model._frank_wolfe._heap, side by side.

For each heap at n items (default 2**20): n pushes (random N(0,1) keys, items in
random order), n/2 decrease-keys (random items, keys lowered by |N(0,1)|), then
n pops (the first pop after the pushes pays the deferred O(n) linking /
consolidation, amortised over the phase).  Each phase runs in one nogil call of
``_run_ops`` (its per-operation dispatch is included in the figures).  Best of
``--repeat`` runs.  Also: 1000 Frank-Wolfe-like steps (``get_next`` + 100
updates) of ``LazyMaxQueue`` against ``argmax(abs(values))`` in numpy.

Usage: python scripts/bench_heap_ops.py [--log2n 20] [--repeat 3]
"""
import argparse
import time

import numpy as np

from dptoolkit.kernels import heap as heap_kernels

def phases(n, rng):
    items = rng.permutation(n).astype(np.intp)
    keys = rng.normal(size=n)
    dk_items = rng.permutation(n)[: n // 2].astype(np.intp)
    dk_keys = np.empty(n // 2)
    key_of = np.empty(n)
    key_of[items] = keys
    dk_keys[:] = key_of[dk_items] - np.abs(rng.normal(size=n // 2))
    return {
        "push": (np.full(n, heap_kernels.OP_PUSH, np.int8), items, keys),
        "decrease_key": (np.full(n // 2, heap_kernels.OP_DECREASE_KEY, np.int8), dk_items,
                         dk_keys),
        "pop": (np.full(n, heap_kernels.OP_POP, np.int8), np.zeros(n, np.intp), np.zeros(n)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = 2 ** args.log2n
    ph = phases(n, np.random.default_rng(0))
    print(f"n = 2**{args.log2n} = {n}, best of {args.repeat}")
    print(f"{'heap':<14}{'push/s':>14}{'decrease_key/s':>16}{'pop/s':>14}")
    for cls in (heap_kernels.PairingHeap, heap_kernels.FibonacciHeap):
        heap = cls(n)
        best = {k: np.inf for k in ph}
        for _ in range(args.repeat):
            heap.py_clear()
            for name, (ops, it, ke) in ph.items():
                t0 = time.perf_counter()
                heap_kernels._run_ops(heap, ops, it, ke)
                best[name] = min(best[name], time.perf_counter() - t0)
            assert len(heap) == 0
        rates = {k: len(ph[k][0]) / best[k] for k in ph}
        print(f"{cls.__name__:<14}{rates['push']:>14.3g}{rates['decrease_key']:>16.3g}"
              f"{rates['pop']:>14.3g}")

    rng = np.random.default_rng(1)
    values = rng.standard_t(3, size=n)
    upd_items = rng.integers(0, n, size=(1000, 100)).astype(np.intp)
    upd_deltas = rng.normal(0.0, 0.3, size=(1000, 100))
    times = {}
    for kind in ("pairing", "fibonacci"):
        q = heap_kernels.LazyMaxQueue(kind, n)
        best = np.inf
        for _ in range(args.repeat):
            v = values.copy()
            t0 = time.perf_counter()
            q.py_build(v)
            sel = heap_kernels._run_fw_sequence(q, v, upd_items, upd_deltas, 0.5)
            best = min(best, time.perf_counter() - t0)
        times[kind] = best
    best = np.inf
    for _ in range(args.repeat):
        v = values.copy()
        t0 = time.perf_counter()
        ref = np.empty(1000, np.intp)
        for t in range(1000):
            ref[t] = j = np.argmax(np.abs(v))
            v[j] *= 0.5
            np.add.at(v, upd_items[t], upd_deltas[t])
        best = min(best, time.perf_counter() - t0)
    times["numpy argmax"] = best
    # continuous values: ties have probability ~0, so the selections must agree
    assert np.array_equal(sel, ref), "queue and argmax selections differ"
    print("\nbuild + 1000 FW-like steps (get_next, shrink selected x0.5, 100 updates)")
    for k, t in times.items():
        print(f"  {k:<14}{t * 1e3:10.1f} ms   ratio to numpy argmax: "
              f"{t / times['numpy argmax']:.3f}")


if __name__ == "__main__":
    main()
