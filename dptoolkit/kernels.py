"""The compiled kernels, under documented names, for benchmarks and experts.

The estimators are the supported interface; these modules are what they call:
typed Cython loops without the GIL over raw CSR/CSC arrays (float64 data; int64
indices and pointers, except ``fw_fast.FastFW``, which reads int32 row and
column indices with int64 pointers, and ``fw_fast.csr_to_csc`` and
``fw_fast.csr_to_numbered_csc`` (the columns in ``fw_fast.column_order``'s
numbering), which make them).  Each lives beside the Python that drives it (docs/architecture.rst,
"Kernels").  Their signatures follow the estimators' needs and may change
between versions; benchmarks (``asv_benchmarks/``, ``scripts/``) and tests of
the kernels import them from here rather than from the private modules.

``fw_fast``
    Frank-Wolfe kernels (Raff, Khanna and Lu (2023), Algorithms 1-2 with bounded staleness):
    ``StandardFW``, ``FastFW``, ``SELECTOR_CODES``; their set-up: ``csr_is_canonical``,
    ``csr_to_csc``, ``csr_to_numbered_csc``, ``column_order``.
``fw_multinomial_fast``
    Multinomial Frank-Wolfe (Khanna, Lu and Raff (2023), Algorithm 3): ``MultinomialFW``.
``grouped_sampler``
    The Big-Step Little-Step exponential-mechanism sampler (Raff, Khanna and Lu (2023),
    Algorithm 4): ``GroupedExpSampler``.
``heap``
    Pairing and Fibonacci heaps with decrease-key (Raff, Khanna and Lu (2023), Algorithm 3).
``ight_fast``
    (DP-)IGHT, all iterations of iterative gradient hard thresholding (Wang and
    Gu 2019, Algorithm 1, full batch): ``ight``, ``hard_threshold``.
``scd_fast``
    (DP-)SCD dual, sequential and primal loops (Damaskinos et al., 2021).
``sgd_fast``
    (DP-)SGD with per-example clipping and Poisson lots (Abadi et al. (2016),
    Algorithm 1).
``prox_fast``
    DSAL / ProxSVRG / ProxASAGA inner loops (Bao, Wu, Xian and Huang (2022),
    eq. 4-6) and the whole working-set solver of
    ``solve_working_set`` (DSAL's engine) (``working_set``; Massias, Gramfort
    and Salmon (2018), Algorithm 4).
"""
from .linear_model._frank_wolfe import _fw_fast as fw_fast
from .linear_model._frank_wolfe import _fw_multinomial_fast as fw_multinomial_fast
from .linear_model._frank_wolfe import _grouped_sampler as grouped_sampler
from .linear_model._frank_wolfe import _heap as heap
from .linear_model._glm import _ight_fast as ight_fast
from .dsal import _prox_fast as prox_fast
from .linear_model._glm import _scd_fast as scd_fast
from .linear_model._glm import _sgd_fast as sgd_fast

__all__ = ["fw_fast", "fw_multinomial_fast", "grouped_sampler", "heap", "ight_fast",
           "prox_fast", "scd_fast", "sgd_fast"]
