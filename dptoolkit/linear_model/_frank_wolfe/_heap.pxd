# Indexed min-heaps with decrease-key over the fixed item set 0..n_items-1,
# nodes preallocated in arrays (no Python objects, every method nogil), and
# the lazy max-magnitude queue of Raff, Khanna and Lu (2023), Algorithm 3, on top of them.
from dptoolkit._typedefs cimport intp_t


cdef class IndexedMinHeap:
    # Common interface; PairingHeap and FibonacciHeap override every method.
    cdef readonly intp_t n_items
    cdef readonly intp_t size              # items currently in the heap
    cdef double[::1] key                   # key of each item (valid while in heap)
    cdef unsigned char[::1] in_heap        # 1 when the item is in the heap

    cdef void clear(self) noexcept nogil
    # push: item must not be in the heap
    cdef void push(self, intp_t item, double key) noexcept nogil
    # pop: remove and return the item with the smallest key (-1 when empty)
    cdef intp_t pop(self) noexcept nogil
    # peek_key: smallest key (+inf when empty)
    cdef double peek_key(self) noexcept nogil
    # decrease_key: item in heap and new key <= its key (else no-op)
    cdef void decrease_key(self, intp_t item, double key) noexcept nogil


cdef class PairingHeap(IndexedMinHeap):
    cdef intp_t root
    cdef intp_t[::1] child                 # leftmost child
    cdef intp_t[::1] sibling               # next sibling
    cdef intp_t[::1] prev                  # left sibling, or parent for a leftmost child
    cdef intp_t[::1] scratch               # two-pass merge buffer


cdef class FibonacciHeap(IndexedMinHeap):
    cdef intp_t min_node
    cdef intp_t[::1] parent
    cdef intp_t[::1] child
    cdef intp_t[::1] left
    cdef intp_t[::1] right
    cdef intp_t[::1] degree
    cdef unsigned char[::1] mark
    cdef intp_t[::1] degree_table          # consolidate buffer (size ~ 2 log2 n + 2)


cdef class LazyMaxQueue:
    # Algorithm 3 (Raff, Khanna and Lu, 2023): the heap holds -|value| as key, an upper bound
    # on the true magnitude, lowered only when a magnitude grows (decrease-key)
    # and corrected when an item is popped.  get_next returns an index of the
    # largest |values[i]| exactly (ties: any of them).
    cdef IndexedMinHeap heap
    cdef intp_t[::1] popped
    cdef readonly long n_pops              # total pops, for the paper's Figure 3

    cdef void build(self, const double[::1] values) noexcept nogil
    cdef void update(self, intp_t item, double value) noexcept nogil
    cdef intp_t get_next(self, const double[::1] values) noexcept nogil
