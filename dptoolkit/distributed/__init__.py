"""Private learning on a distributed engine (Dask): exact per-block sums, noise once.

Every function takes ``X`` either in memory (NumPy or SciPy sparse: one block,
the toolkit's usual path) or as a :class:`dask.array.Array` of ``scipy.sparse``
CSR row blocks (chunked along rows only, ``y`` with the same chunks).  The
workers compute exact sums of clipped per-example terms; the client adds the
blocks' sums in block order and the estimator adds the noise once, from its own
generator, so nothing the engine does (retries, speculative copies, partition
sizes) changes what is released.  See ``dptoolkit.distributed._blocksum`` and
``docs/tutorials/distributed.rst``.  The iterative fits run one round per
step on one block-actor engine (``dptoolkit.distributed._engine``: a Dask
actor per worker holding its blocks, a coordinator calling the others worker to
worker, replay after a lost worker); what a round computes lives in each
family's wing (Frank-Wolfe's in ``linear_model/_frank_wolfe/``, DP-SGD's in
``linear_model/_glm/``).  Blocks that draw random numbers (DP-SGD's lots) are
seeded by ``block_seeds``, from a sequence that draws no noise.
Dask is an optional dependency (``pip install dptoolkit[dask]``); it is
imported only when a Dask array is given.
"""
from ._blocksum import (block_sum, class_feature_sums, clipped_gradient_sum, column_counts,
                        column_sums, csr_block, is_dask_array, map_row_blocks, row_aligned,
                        unit_rows)
from ._engine import BlockEngine
from ._seeds import block_seeds, step_stream
from ._validation import align_dask_X_y, validate_dask_X_y

#: No public names: a user passes a Dask array to an estimator (its ``fit`` runs the
#: rounds).  The functions above are the engine of those fits, imported by the
#: estimators' wings; they are not part of the API and may change between versions.
__all__ = []
