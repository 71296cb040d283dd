# Indexed min-heaps with decrease-key (pairing heap, Fibonacci heap) and the
# lazy max-magnitude queue of Raff, Khanna and Lu (NeurIPS 2023),
# Section 3.2, Algorithm 3.  The interface is fixed in _heap.pxd.
"""Indexed min-heaps with decrease-key and the lazy Frank-Wolfe queue.

Data structures over the fixed item set ``0 .. n_items - 1``.  Every node
lives in preallocated typed arrays (no Python object per node) allocated when
the heap is created; every ``cdef`` method is ``noexcept nogil`` and does no
argument checking (kernels call them).  The ``py_*`` methods are the checked
Python-level twins used by tests and interactive code.

Classes
-------
IndexedMinHeap
    Abstract base.  It owns ``n_items``, ``size``, ``key`` and ``in_heap``; its
    own ``cdef`` methods are inert placeholders (``push``/``decrease_key`` do
    nothing, ``pop`` returns -1, ``peek_key`` returns +inf) that the
    subclasses override through Cython's virtual dispatch.  It cannot be
    instantiated.
PairingHeap
    Two-pass pairing heap (Fredman, Sedgewick, Sleator, Tarjan 1986).  Push
    and decrease-key are O(1) (decrease-key cuts the item's subtree and melds
    it with the root); pop is O(log n) amortised and runs without recursion,
    using a preallocated scratch buffer of ``n_items`` entries.
FibonacciHeap
    Fibonacci heap (Fredman, Tarjan 1987; CLRS ch. 19) with marks and
    cascading cuts.  Push and decrease-key are O(1) amortised, pop is
    O(log n) amortised (consolidation through a degree table of
    ``2 * ceil(log2(n_items + 1)) + 2`` entries, which exceeds the maximal
    degree ``log_phi(n_items)``).
LazyMaxQueue
    Algorithm 3 of Raff, Khanna and Lu (NeurIPS 2023): returns an index of maximal ``|values[i]|``
    while ``update`` only ever *raises* stored priorities.

Keys are C doubles compared with ``<``.  Items with equal keys come out in an
unspecified order.  ``-inf`` and ``+inf`` are valid keys; NaN keys are not
(the ``py_*`` methods reject them; through the ``cdef`` methods they keep the
structure memory-safe but the pop order is then unspecified).

``clear`` costs O(n_items) (one ``memset`` of ``in_heap``), independent of the
current size.  The structures are not thread-safe: one thread per heap.

References
----------
.. [1] E. Raff, A. Khanna, F. Lu. "Scaling Up Differentially Private LASSO
   Regularized Logistic Regression via Faster Frank-Wolfe Iterations",
   NeurIPS 2023, Section 3.2, Algorithm 3.
.. [2] M. L. Fredman, R. Sedgewick, D. D. Sleator, R. E. Tarjan. "The pairing
   heap: a new form of self-adjusting heap", Algorithmica 1, 1986.
.. [3] M. L. Fredman, R. E. Tarjan. "Fibonacci heaps and their uses in
   improved network optimization algorithms", J. ACM 34(3), 1987.
"""
import operator

import numpy as np

from libc.math cimport INFINITY, fabs, isnan
from libc.string cimport memset

from dptoolkit._typedefs cimport intp_t

__all__ = ["IndexedMinHeap", "PairingHeap", "FibonacciHeap", "LazyMaxQueue"]

_HEAP_KINDS = ("pairing", "fibonacci")


#: Largest number of items a heap takes (its arrays are allocated up front).
MAX_ITEMS = 2**31 - 1


def _check_n_items(n_items):
    if isinstance(n_items, (bool, np.bool_)):
        raise TypeError(f"n_items must be an integer, got {type(n_items).__name__}")
    try:
        n = operator.index(n_items)
    except TypeError:
        raise TypeError(
            f"n_items must be an integer, got {type(n_items).__name__}") from None
    if n < 0:
        raise ValueError(f"n_items must be >= 0, got {n}")
    if n > MAX_ITEMS:
        raise ValueError(f"n_items must be in [0, {MAX_ITEMS}] (2**31 - 1, the largest "
                         f"feature index a LIBSVM file holds; ~50 bytes per item are "
                         f"allocated at once), got {n}")
    return n


def _check_key(key, name="key"):
    try:
        k = float(key)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(key).__name__}") from None
    if k != k:
        raise ValueError(f"{name} must not be NaN")
    return k


cdef class IndexedMinHeap:
    """Abstract indexed min-heap over items ``0 .. n_items - 1``.

    Holds the state common to all heaps (``n_items``, ``size``, per-item
    ``key`` and ``in_heap``) and the checked Python-level methods.  Its
    ``cdef`` methods are inert placeholders overridden by
    :class:`PairingHeap` and :class:`FibonacciHeap`; instantiate one of
    those.

    Parameters
    ----------
    n_items : int
        Number of items, in [0, 2**31 - 1].  Memory is allocated once, here.

    Attributes
    ----------
    n_items : int
        Size of the item universe.
    size : int
        Number of items currently in the heap.
    """

    def __cinit__(self, n_items, *args, **kwargs):
        if type(self) is IndexedMinHeap:
            raise TypeError(
                "IndexedMinHeap is abstract; use PairingHeap or FibonacciHeap")
        cdef intp_t n = _check_n_items(n_items)
        self.n_items = n
        self.size = 0
        self.key = np.zeros(n, dtype=np.float64)
        self.in_heap = np.zeros(n, dtype=np.uint8)

    # ---- placeholders, overridden by the subclasses -------------------------

    cdef void clear(self) noexcept nogil:
        pass

    cdef void push(self, intp_t item, double key) noexcept nogil:
        pass

    cdef intp_t pop(self) noexcept nogil:
        return -1

    cdef double peek_key(self) noexcept nogil:
        return INFINITY

    cdef void decrease_key(self, intp_t item, double key) noexcept nogil:
        pass

    # ---- checked Python-level interface -------------------------------------

    def _check_item(self, item):
        if isinstance(item, (bool, np.bool_)):
            raise TypeError(f"item must be an integer, got {type(item).__name__}")
        try:
            i = operator.index(item)
        except TypeError:
            raise TypeError(f"item must be an integer, got {type(item).__name__}") from None
        if not 0 <= i < self.n_items:
            raise IndexError(f"item must be in [0, {self.n_items}), got {i}")
        return i

    def __len__(self):
        return self.size

    def contains(self, item):
        """Return whether ``item`` (in ``[0, n_items)``) is in the heap."""
        cdef intp_t i = self._check_item(item)
        return bool(self.in_heap[i])

    def py_key(self, item):
        """Return the current key of ``item``; ``ValueError`` if it is not in the heap."""
        cdef intp_t i = self._check_item(item)
        if not self.in_heap[i]:
            raise ValueError(f"item {i} is not in the heap")
        return self.key[i]

    def py_push(self, item, key):
        """Insert ``item`` with ``key``.

        Raises
        ------
        IndexError
            If ``item`` is outside ``[0, n_items)``.
        ValueError
            If ``item`` is already in the heap or ``key`` is NaN.
        """
        cdef intp_t i = self._check_item(item)
        cdef double k = _check_key(key)
        if self.in_heap[i]:
            raise ValueError(f"item {i} is already in the heap")
        self.push(i, k)

    def py_pop(self):
        """Remove the item with the smallest key and return ``(item, key)``.

        Raises
        ------
        IndexError
            If the heap is empty.
        """
        if self.size == 0:
            raise IndexError("pop from an empty heap")
        cdef intp_t i = self.pop()
        return i, self.key[i]

    def py_peek_key(self):
        """Return the smallest key, or ``+inf`` when the heap is empty."""
        return self.peek_key()

    def py_decrease_key(self, item, key):
        """Lower the key of ``item`` (in the heap) to ``key``.

        Raises
        ------
        IndexError
            If ``item`` is outside ``[0, n_items)``.
        ValueError
            If ``item`` is not in the heap, ``key`` is NaN or ``key`` is larger
            than the current key.
        """
        cdef intp_t i = self._check_item(item)
        cdef double k = _check_key(key)
        if not self.in_heap[i]:
            raise ValueError(f"item {i} is not in the heap")
        if k > self.key[i]:
            raise ValueError(
                f"key must not exceed the current key {self.key[i]!r} of item {i}, got {k!r}")
        self.decrease_key(i, k)

    def py_clear(self):
        """Remove every item."""
        self.clear()

    def check_invariants(self):
        """Verify the internal structure; raise ``AssertionError`` if broken.

        O(n_items) with the GIL; for tests.
        """
        raise NotImplementedError


# ============================================================================
# Pairing heap
# ============================================================================

cdef inline intp_t _pairing_link(PairingHeap h, intp_t a, intp_t b) noexcept nogil:
    # a, b: roots of separate trees (their sibling/prev are ignored and
    # reset).  Makes the larger-key root the leftmost child of the other
    # and returns the new root, whose sibling/prev are -1.
    cdef intp_t t, c
    if h.key[b] < h.key[a]:
        t = a
        a = b
        b = t
    c = h.child[a]
    h.sibling[b] = c
    if c != -1:
        h.prev[c] = b
    h.prev[b] = a
    h.child[a] = b
    h.sibling[a] = -1
    h.prev[a] = -1
    return a


cdef class PairingHeap(IndexedMinHeap):
    """Two-pass pairing heap with decrease-key over items ``0 .. n_items - 1``.

    Child/sibling representation: ``child[x]`` is the leftmost child,
    ``sibling[x]`` the next sibling to the right, ``prev[x]`` the left sibling
    or, for a leftmost child, the parent (-1 for the root).  ``push`` melds a
    single node with the root; ``decrease_key`` cuts the item's subtree and
    melds it with the root; ``pop`` links the root's children pairwise left to
    right, then right to left (iteratively, through ``scratch``).

    Parameters
    ----------
    n_items : int
        Number of items, in [0, 2**31 - 1].  About ``41 * n_items`` bytes are allocated.
    """

    def __cinit__(self, n_items, *args, **kwargs):
        cdef intp_t n = self.n_items
        self.root = -1
        self.child = np.full(n, -1, dtype=np.intp)
        self.sibling = np.full(n, -1, dtype=np.intp)
        self.prev = np.full(n, -1, dtype=np.intp)
        self.scratch = np.zeros(max(n, 1), dtype=np.intp)

    cdef void clear(self) noexcept nogil:
        if self.size > 0:
            memset(&self.in_heap[0], 0, <size_t>self.n_items)
        self.size = 0
        self.root = -1

    cdef void push(self, intp_t item, double key) noexcept nogil:
        self.key[item] = key
        self.child[item] = -1
        self.sibling[item] = -1
        self.prev[item] = -1
        self.in_heap[item] = 1
        self.size += 1
        if self.root == -1:
            self.root = item
        else:
            self.root = _pairing_link(self, self.root, item)

    cdef intp_t pop(self) noexcept nogil:
        cdef intp_t r = self.root
        cdef intp_t c, nxt, cnt, m, i, acc
        if r == -1:
            return -1
        # collect the root's children (left to right)
        cnt = 0
        c = self.child[r]
        while c != -1:
            self.scratch[cnt] = c
            cnt += 1
            c = self.sibling[c]
        # first pass: link pairs left to right
        m = 0
        i = 0
        while i + 1 < cnt:
            self.scratch[m] = _pairing_link(self, self.scratch[i], self.scratch[i + 1])
            m += 1
            i += 2
        if i < cnt:
            c = self.scratch[i]
            self.sibling[c] = -1
            self.prev[c] = -1
            self.scratch[m] = c
            m += 1
        # second pass: meld right to left
        if m == 0:
            self.root = -1
        else:
            acc = self.scratch[m - 1]
            i = m - 2
            while i >= 0:
                acc = _pairing_link(self, self.scratch[i], acc)
                i -= 1
            self.root = acc
        self.child[r] = -1
        self.in_heap[r] = 0
        self.size -= 1
        return r

    cdef double peek_key(self) noexcept nogil:
        if self.root == -1:
            return INFINITY
        return self.key[self.root]

    cdef void decrease_key(self, intp_t item, double key) noexcept nogil:
        cdef intp_t p, s
        if not self.in_heap[item] or not (key < self.key[item]):
            return
        self.key[item] = key
        if item == self.root:
            return
        # cut the subtree of item out of its parent's child list
        p = self.prev[item]
        s = self.sibling[item]
        if self.child[p] == item:
            self.child[p] = s
        else:
            self.sibling[p] = s
        if s != -1:
            self.prev[s] = p
        self.root = _pairing_link(self, self.root, item)

    def check_invariants(self):
        cdef intp_t n = self.n_items
        cdef intp_t count = 0, x, c, prev_c
        if self.root == -1:
            assert self.size == 0, f"empty root but size {self.size}"
        else:
            assert self.in_heap[self.root], "root not marked in_heap"
            assert self.prev[self.root] == -1 and self.sibling[self.root] == -1, \
                "root has siblings"
        stack = [self.root] if self.root != -1 else []
        seen = np.zeros(n, dtype=bool)
        while stack:
            x = stack.pop()
            assert not seen[x], f"node {x} reached twice"
            seen[x] = True
            assert self.in_heap[x], f"node {x} in the tree but not in_heap"
            count += 1
            c = self.child[x]
            prev_c = x
            while c != -1:
                assert self.prev[c] == prev_c, f"prev[{c}] = {self.prev[c]}, expected {prev_c}"
                assert not (self.key[c] < self.key[x]), \
                    f"heap order: key[{c}]={self.key[c]} < key[{x}]={self.key[x]}"
                stack.append(c)
                prev_c = c
                c = self.sibling[c]
        assert count == self.size, f"tree has {count} nodes, size is {self.size}"
        assert int(np.count_nonzero(np.asarray(self.in_heap))) == self.size, \
            "in_heap count differs from size"


# ============================================================================
# Fibonacci heap
# ============================================================================

cdef inline void _fib_add_root(FibonacciHeap h, intp_t x) noexcept nogil:
    # insert x into the (non-empty) root list, to the right of min_node
    cdef intp_t m = h.min_node
    cdef intp_t r = h.right[m]
    h.left[x] = m
    h.right[x] = r
    h.left[r] = x
    h.right[m] = x
    h.parent[x] = -1
    h.mark[x] = 0


cdef inline void _fib_cut(FibonacciHeap h, intp_t x, intp_t p) noexcept nogil:
    # move x (a child of p) to the root list
    cdef intp_t l, r
    if h.right[x] == x:
        h.child[p] = -1
    else:
        l = h.left[x]
        r = h.right[x]
        h.right[l] = r
        h.left[r] = l
        if h.child[p] == x:
            h.child[p] = r
    h.degree[p] -= 1
    _fib_add_root(h, x)


cdef void _fib_consolidate(FibonacciHeap h, intp_t start) noexcept nogil:
    # start: a node of the (non-empty) root list.  Every root is taken
    # out of the list and merged through degree_table; the root list is
    # then rebuilt from the table.
    cdef intp_t x, y, t, d, nxt, c, max_d = 0
    # break the circle into a chain ending at -1
    h.right[h.left[start]] = -1
    x = start
    while x != -1:
        nxt = h.right[x]
        d = h.degree[x]
        while h.degree_table[d] != -1:
            y = h.degree_table[d]
            h.degree_table[d] = -1
            if h.key[y] < h.key[x]:
                t = x
                x = y
                y = t
            # make y a child of x
            c = h.child[x]
            if c == -1:
                h.child[x] = y
                h.left[y] = y
                h.right[y] = y
            else:
                h.left[y] = c
                h.right[y] = h.right[c]
                h.left[h.right[c]] = y
                h.right[c] = y
            h.parent[y] = x
            h.mark[y] = 0
            d += 1
            h.degree[x] = d
        h.degree_table[d] = x
        if d > max_d:
            max_d = d
        x = nxt
    # rebuild the root list from the table (and reset the table)
    h.min_node = -1
    for d in range(max_d + 1):
        x = h.degree_table[d]
        if x == -1:
            continue
        h.degree_table[d] = -1
        if h.min_node == -1:
            h.left[x] = x
            h.right[x] = x
            h.min_node = x
        else:
            _fib_add_root(h, x)
            if h.key[x] < h.key[h.min_node]:
                h.min_node = x


cdef class FibonacciHeap(IndexedMinHeap):
    """Fibonacci heap with decrease-key over items ``0 .. n_items - 1``.

    Roots and sibling lists are circular doubly linked lists (``left``,
    ``right``); ``child[x]`` is any one child, ``parent[x]`` is -1 for roots,
    ``degree[x]`` the number of children and ``mark[x]`` whether a non-root
    has lost a child since it became a child (cascading cuts).

    Parameters
    ----------
    n_items : int
        Number of items, in [0, 2**31 - 1].  About ``50 * n_items`` bytes are allocated.
    """

    def __cinit__(self, n_items, *args, **kwargs):
        cdef intp_t n = self.n_items
        # max degree <= log_phi(n) < 1.45 log2(n); 2 * bit_length(n) + 2 is ample
        cdef intp_t table = 2 * int(max(n, 1)).bit_length() + 2
        self.min_node = -1
        self.parent = np.full(n, -1, dtype=np.intp)
        self.child = np.full(n, -1, dtype=np.intp)
        self.left = np.zeros(n, dtype=np.intp)
        self.right = np.zeros(n, dtype=np.intp)
        self.degree = np.zeros(n, dtype=np.intp)
        self.mark = np.zeros(n, dtype=np.uint8)
        self.degree_table = np.full(table, -1, dtype=np.intp)

    cdef void clear(self) noexcept nogil:
        if self.size > 0:
            memset(&self.in_heap[0], 0, <size_t>self.n_items)
        self.size = 0
        self.min_node = -1

    cdef void push(self, intp_t item, double key) noexcept nogil:
        self.key[item] = key
        self.child[item] = -1
        self.degree[item] = 0
        self.in_heap[item] = 1
        self.size += 1
        if self.min_node == -1:
            self.left[item] = item
            self.right[item] = item
            self.parent[item] = -1
            self.mark[item] = 0
            self.min_node = item
        else:
            _fib_add_root(self, item)
            if key < self.key[self.min_node]:
                self.min_node = item

    cdef intp_t pop(self) noexcept nogil:
        cdef intp_t z = self.min_node
        cdef intp_t c, nxt, l, r
        if z == -1:
            return -1
        # move the children of z to the root list
        c = self.child[z]
        if c != -1:
            while True:
                self.parent[c] = -1
                self.mark[c] = 0
                c = self.right[c]
                if c == self.child[z]:
                    break
            # splice the child circle in next to z
            l = self.left[c]           # last child
            r = self.right[z]
            self.right[z] = c
            self.left[c] = z
            self.right[l] = r
            self.left[r] = l
            self.child[z] = -1
            self.degree[z] = 0
        # remove z from the root list
        if self.right[z] == z:
            self.min_node = -1
        else:
            l = self.left[z]
            r = self.right[z]
            self.right[l] = r
            self.left[r] = l
            _fib_consolidate(self, r)
        self.in_heap[z] = 0
        self.size -= 1
        return z

    cdef double peek_key(self) noexcept nogil:
        if self.min_node == -1:
            return INFINITY
        return self.key[self.min_node]

    cdef void decrease_key(self, intp_t item, double key) noexcept nogil:
        cdef intp_t p, y
        if not self.in_heap[item] or not (key < self.key[item]):
            return
        self.key[item] = key
        p = self.parent[item]
        if p != -1 and key < self.key[p]:
            _fib_cut(self, item, p)
            # cascading cut, iteratively
            y = p
            p = self.parent[y]
            while p != -1:
                if not self.mark[y]:
                    self.mark[y] = 1
                    break
                _fib_cut(self, y, p)
                y = p
                p = self.parent[y]
        if key < self.key[self.min_node]:
            self.min_node = item

    def check_invariants(self):
        cdef intp_t n = self.n_items
        cdef intp_t table_len = self.degree_table.shape[0]
        if self.min_node == -1:
            assert self.size == 0, f"no min_node but size {self.size}"
            assert int(np.count_nonzero(np.asarray(self.in_heap))) == 0, "in_heap not cleared"
            return
        assert np.all(np.asarray(self.degree_table) == -1), "degree_table not reset"
        seen = np.zeros(n, dtype=bool)
        count = 0
        min_key = INFINITY

        def walk_ring(first, par):
            # visit a circular list, checking links; return its members
            members = []
            x = first
            while True:
                assert not seen[x], f"node {x} reached twice"
                seen[x] = True
                assert self.in_heap[x], f"node {x} in the heap structure but not in_heap"
                assert self.parent[x] == par, f"parent[{x}] = {self.parent[x]}, expected {par}"
                assert self.left[self.right[x]] == x, f"left/right mismatch at {x}"
                members.append(x)
                x = self.right[x]
                if x == first:
                    return members

        roots = walk_ring(self.min_node, -1)
        stack = list(roots)
        for x in roots:
            min_key = min(min_key, self.key[x])
        assert not (min_key < self.key[self.min_node]), "min_node is not the minimum root"
        order = []
        while stack:
            x = stack.pop()
            order.append(x)
            count += 1
            assert self.degree[x] < table_len, f"degree {self.degree[x]} overflows the table"
            if self.child[x] == -1:
                assert self.degree[x] == 0, f"node {x} has degree {self.degree[x]} but no child"
                continue
            kids = walk_ring(self.child[x], x)
            assert len(kids) == self.degree[x], \
                f"node {x}: degree {self.degree[x]} but {len(kids)} children"
            for c in kids:
                assert not (self.key[c] < self.key[x]), \
                    f"heap order: key[{c}]={self.key[c]} < key[{x}]={self.key[x]}"
            stack.extend(kids)
        assert count == self.size, f"structure has {count} nodes, size is {self.size}"
        assert int(np.count_nonzero(np.asarray(self.in_heap))) == self.size, \
            "in_heap count differs from size"
        # the Fibonacci property that bounds degrees (kept by cascading cuts):
        # a node of degree k roots a subtree of at least F(k + 2) nodes
        subtree = {x: 1 for x in order}
        for x in reversed(order):
            if self.parent[x] != -1:
                subtree[self.parent[x]] += subtree[x]
        # (no negative indexing: this module is compiled with wraparound off)
        fib = [0, 1]
        while len(fib) < table_len + 3:
            fib.append(fib[len(fib) - 1] + fib[len(fib) - 2])
        for x in order:
            assert subtree[x] >= fib[self.degree[x] + 2], \
                f"node {x} of degree {self.degree[x]} has only {subtree[x]} descendants"


# ============================================================================
# Lazy max-magnitude queue (Raff, Khanna and Lu, NeurIPS 2023, Algorithm 3)
# ============================================================================

cdef inline double _magnitude(double v) noexcept nogil:
    # |v|, with NaN ranked as +inf (np.argmax returns the first NaN): a NaN
    # gradient is selected, not hidden.  NaN ties with +-inf.
    if isnan(v):
        return INFINITY
    return fabs(v)


cdef class LazyMaxQueue:
    """Lazy max-|value| queue of Raff, Khanna and Lu (NeurIPS 2023), Section 3.2, Algorithm 3.

    A min-heap holds ``-|value_i|`` as the key of item ``i``.  ``update``
    lowers a key (decrease-key) only when ``|value_i|`` *grows*; decreases are
    ignored, so every stored priority ``-key_i`` is an upper bound on the true
    magnitude.  ``get_next`` pops items, keeping the best true magnitude seen,
    until that magnitude is ``>=`` the stored priority of the heap top (an
    upper bound on every item left in the heap), re-inserts each popped item
    with its true key and returns the best item: an index of maximal
    ``|values[i]|`` (ties: any of them).

    Assumptions (not checked in the ``cdef`` methods): ``build`` was called
    with the same ``values`` array the caller keeps up to date, ``update`` is
    called after every change of a value (at least every change that
    increases its magnitude), and ``values`` has ``n_items`` entries.  NaN is
    ranked as an infinite magnitude (``numpy.argmax`` ranks NaN first), so a
    NaN entry is returned rather than silently skipped (it ties with
    ``+-inf`` entries, which are ordinary, maximal magnitudes).

    Parameters
    ----------
    heap_kind : {"pairing", "fibonacci"}
        The heap underneath.  The paper uses a Fibonacci heap; the pairing
        heap has the same amortised bounds in practice with smaller constants.
    n_items : int
        Number of items (coordinates), >= 0.

    Attributes
    ----------
    n_pops : int
        Total number of heap pops made by ``get_next`` since creation (the
        quantity of the paper's Figure 3).

    References
    ----------
    .. [1] E. Raff, A. Khanna, F. Lu. NeurIPS 2023, Section 3.2, Algorithm 3.
    """

    def __init__(self, heap_kind, n_items):
        n = _check_n_items(n_items)
        if heap_kind == "pairing":
            self.heap = PairingHeap(n)
        elif heap_kind == "fibonacci":
            self.heap = FibonacciHeap(n)
        else:
            raise ValueError(
                f"heap_kind must be one of {_HEAP_KINDS}, got {heap_kind!r}")
        self.popped = np.zeros(max(n, 1), dtype=np.intp)
        self.n_pops = 0

    # ---- kernels ------------------------------------------------------------

    cdef void build(self, const double[::1] values) noexcept nogil:
        cdef intp_t i
        self.heap.clear()
        for i in range(self.heap.n_items):
            self.heap.push(i, -_magnitude(values[i]))

    cdef void update(self, intp_t item, double value) noexcept nogil:
        # Algorithm 3 UPDATE: decrease-key only when the magnitude grows.  An
        # item not in the heap (only possible before build) is inserted.
        cdef double k = -_magnitude(value)
        if not self.heap.in_heap[item]:
            self.heap.push(item, k)
        elif k < self.heap.key[item]:
            self.heap.decrease_key(item, k)

    cdef intp_t get_next(self, const double[::1] values) noexcept nogil:
        cdef intp_t best = -1, c, n = 0, t
        cdef double best_mag = -1.0, m
        while self.heap.size > 0:
            # the stored priority -peek_key bounds every magnitude in the heap
            if best != -1 and best_mag >= -self.heap.peek_key():
                break
            c = self.heap.pop()
            self.popped[n] = c
            n += 1
            m = _magnitude(values[c])
            if m > best_mag:
                best_mag = m
                best = c
        self.n_pops += n
        for t in range(n):
            c = self.popped[t]
            self.heap.push(c, -_magnitude(values[c]))
        return best

    # ---- checked Python-level interface -------------------------------------

    def _check_values(self, values):
        arr = np.ascontiguousarray(values, dtype=np.float64)
        if arr.ndim != 1 or arr.shape[0] != self.heap.n_items:
            raise ValueError(
                f"values must have shape ({self.heap.n_items},), got {arr.shape}")
        return arr

    @property
    def heap_kind(self):
        """``"pairing"`` or ``"fibonacci"``."""
        return "pairing" if isinstance(self.heap, PairingHeap) else "fibonacci"

    @property
    def n_items(self):
        """Number of items."""
        return self.heap.n_items

    def __len__(self):
        return self.heap.size

    def py_build(self, values):
        """Clear the queue and insert every item with priority ``|values[i]|``.

        Parameters
        ----------
        values : array-like of shape (n_items,)

        Raises
        ------
        ValueError
            If ``values`` does not have shape ``(n_items,)``.
        """
        cdef const double[::1] v = self._check_values(values)
        self.build(v)

    def py_update(self, item, value):
        """Report that ``values[item]`` is now ``value``.

        Raises
        ------
        IndexError
            If ``item`` is outside ``[0, n_items)``.
        TypeError
            If ``value`` is not a real number.
        """
        cdef intp_t i = self.heap._check_item(item)
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"value must be a real number, got {type(value).__name__}") from None
        self.update(i, v)

    def py_get_next(self, values):
        """Return an index of maximal ``|values[i]|`` (-1 if the queue is empty).

        Raises
        ------
        ValueError
            If ``values`` does not have shape ``(n_items,)``.
        """
        cdef const double[::1] v = self._check_values(values)
        return self.get_next(v)

    def stored_priority(self, item):
        """Return the stored priority (an upper bound on ``|values[item]|``)."""
        return -self.heap.py_key(item)

    def check_invariants(self):
        """Check the underlying heap's structure (for tests)."""
        self.heap.check_invariants()


# ============================================================================
# nogil drivers for tests and benchmarks (no Python call per operation)
# ============================================================================

cdef enum:
    _PUSH = 0
    _POP = 1
    _DECREASE_KEY = 2
    _CLEAR = 3
    _PEEK = 4

OP_PUSH, OP_POP, OP_DECREASE_KEY, OP_CLEAR, OP_PEEK = _PUSH, _POP, _DECREASE_KEY, _CLEAR, _PEEK


def _run_ops(IndexedMinHeap heap, const signed char[::1] ops,
             const intp_t[::1] items, const double[::1] keys):
    """Run a sequence of heap operations through the ``cdef`` methods, nogil.

    ``ops[t]`` is one of ``OP_PUSH`` (push ``items[t]`` with ``keys[t]``),
    ``OP_POP``, ``OP_DECREASE_KEY`` (``items[t]`` to ``keys[t]``),
    ``OP_CLEAR`` and ``OP_PEEK``.  A push of an item already in the heap is
    skipped (so any sequence is memory-safe); a decrease-key of an item not
    in the heap or to a larger key is a no-op, as in the ``cdef`` method.
    Returns ``(out_item,
    out_key)``: the popped item (or -1) for pops, the peeked key for peeks,
    -1 / NaN otherwise.
    """
    cdef intp_t n_ops = ops.shape[0], t, i
    if items.shape[0] != n_ops or keys.shape[0] != n_ops:
        raise ValueError("ops, items and keys must have the same length")
    if n_ops and (np.min(ops) < 0 or np.max(ops) > _PEEK):
        raise ValueError("unknown op code")
    ops_np = np.asarray(ops)
    used = np.asarray(items)[(ops_np == _PUSH) | (ops_np == _DECREASE_KEY)]
    if used.size and (used.min() < 0 or used.max() >= heap.n_items):
        raise IndexError(f"items of pushes and decrease-keys must be in [0, {heap.n_items})")
    out_item_arr = np.full(n_ops, -1, dtype=np.intp)
    out_key_arr = np.full(n_ops, np.nan)
    cdef intp_t[::1] out_item = out_item_arr
    cdef double[::1] out_key = out_key_arr
    with nogil:
        for t in range(n_ops):
            if ops[t] == _PUSH:
                if not heap.in_heap[items[t]]:
                    heap.push(items[t], keys[t])
            elif ops[t] == _POP:
                out_item[t] = heap.pop()
            elif ops[t] == _DECREASE_KEY:
                heap.decrease_key(items[t], keys[t])
            elif ops[t] == _CLEAR:
                heap.clear()
            else:
                out_key[t] = heap.peek_key()
    return out_item_arr, out_key_arr


def _run_fw_sequence(LazyMaxQueue queue, double[::1] values,
                     const intp_t[:, ::1] update_items,
                     const double[:, ::1] update_deltas, double shrink):
    """Mimic the Frank-Wolfe use of :class:`LazyMaxQueue`, nogil.

    ``queue`` must have been built on ``values``.  For each step ``t``:
    ``j = get_next(values)``; ``values[j] *= shrink`` (the selected
    coordinate's gradient typically shrinks; a decrease the queue ignores);
    then for each ``k = update_items[t, u]``: ``values[k] +=
    update_deltas[t, u]`` and ``update(k, values[k])``.  ``values`` is
    modified in place.  Returns the selected indices, shape (n_steps,).
    """
    cdef intp_t n_steps = update_items.shape[0], n_upd = update_items.shape[1]
    cdef intp_t t, u, j, k
    if values.shape[0] != queue.heap.n_items:
        raise ValueError(f"values must have shape ({queue.heap.n_items},)")
    if update_deltas.shape[0] != n_steps or update_deltas.shape[1] != n_upd:
        raise ValueError("update_items and update_deltas must have the same shape")
    if update_items.size and (np.min(update_items) < 0
                              or np.max(update_items) >= queue.heap.n_items):
        raise IndexError(f"update_items must be in [0, {queue.heap.n_items})")
    selected_arr = np.full(n_steps, -1, dtype=np.intp)
    cdef intp_t[::1] selected = selected_arr
    with nogil:
        for t in range(n_steps):
            j = queue.get_next(values)
            selected[t] = j
            if j >= 0:
                values[j] *= shrink
                queue.update(j, values[j])
            for u in range(n_upd):
                k = update_items[t, u]
                values[k] += update_deltas[t, u]
                queue.update(k, values[k])
    return selected_arr
