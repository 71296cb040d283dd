"""Private learning on a distributed engine (Dask): exact per-block sums, noise once.

Every function takes ``X`` either in memory (NumPy or SciPy sparse: one block,
the toolkit's usual path) or as a :class:`dask.array.Array` of ``scipy.sparse``
CSR row blocks (chunked along rows only, ``y`` with the same chunks).  The
workers compute exact sums of clipped per-example terms; the client adds the
blocks' sums in block order and the estimator adds the noise once, from its own
generator, so nothing the engine does (retries, speculative copies, partition
sizes) changes what is released.  See ``dptoolkit.distributed._blocksum`` and
``docs/tutorials/distributed.rst``.  The iterative fits run one round per
step, each a call per worker to a Dask actor holding its blocks:
``sgd_over_blocks`` (DP-SGD, per-block Poisson lots, the noise drawn once
per step on the client), ``frank_wolfe_over_blocks`` (Frank-Wolfe with
the rows' margins kept on the workers) and
``multinomial_frank_wolfe_over_blocks`` (its multinomial model: the rows'
K margins on the workers, the summed gradient and the vertices on the client).
Dask is an optional dependency (``pip install dptoolkit[dask]``); it is
imported only when a Dask array is given.
"""
from ._blocksum import (block_sum, class_feature_sums, clipped_gradient_sum, column_counts,
                        column_sums, is_dask_array, map_row_blocks, row_aligned,
                        unit_rows)
from ._fw import frank_wolfe_over_blocks
from ._fw_multinomial import multinomial_frank_wolfe_over_blocks
from ._sgd import block_seeds, sgd_over_blocks
from ._validation import align_dask_X_y, validate_dask_X_y

#: No public names: a user passes a Dask array to an estimator (its ``fit`` runs the
#: rounds below).  The functions above are the engine of those fits, imported by the
#: estimators' wings; they are not part of the API and may change between versions.
__all__ = []
