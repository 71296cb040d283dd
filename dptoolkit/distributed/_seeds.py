"""The per-block sampling streams of the engine's rounds: seed words from a
sequence that draws no noise.

A family whose blocks draw random numbers on the workers (DP-SGD's per-block
Poisson lots, Zhu and Wang 2019) seeds them with :func:`block_seeds`: words
from a *sampling* :class:`~numpy.random.SeedSequence` seeded by the SHA-256
digest of bytes drawn from the estimator's noise generator, so what the workers
receive cannot regenerate the noise; block ``b`` draws the randoms of step ``t``
from :func:`step_stream`, a pure function of its words and ``t`` (a retried or
replayed round draws the same).
"""
import hashlib

import numpy as np

__all__ = ["block_seeds", "step_stream"]

#: 32-bit words of seed material per block (256 bits).
_SEED_WORDS = 8

#: Bytes drawn from the noise generator to seed the sampling sequence (256 bits),
#: hashed under this label (:func:`block_seeds`).
_SAMPLING_DRAW_BYTES = 32
_SAMPLING_LABEL = b"dptoolkit.distributed: per-block lot sampling\x00"


def block_seeds(rng, n_blocks):
    """Seed words of the per-block sampling streams, from a sequence that draws no noise.

    The client draws ``_SAMPLING_DRAW_BYTES`` (32) bytes from ``rng``, the
    estimator's noise generator, hashes them with SHA-256 (under a fixed label)
    and seeds a new :class:`~numpy.random.SeedSequence` with the digest: the
    *sampling* sequence, which no noise is drawn from.  Block ``b`` gets
    ``generate_state(8)`` of the sampling sequence's ``b``-th spawned child and
    draws the lot of step ``t`` from ``PCG64(SeedSequence(words[b],
    spawn_key=(t,)))``.  Deterministic given ``rng``'s state; ``rng`` moves by
    the 32 bytes drawn (its later draws, the noise, come after them).

    Why the workers cannot regenerate the noise: SeedSequence's mixing is
    invertible, so a worker holding the words can be assumed to recover the
    sampling sequence's pool, hence at most the SHA-256 digest.  The noise
    generator's state, seed and later outputs are not a function of the digest
    (the digest is a function of 32 bytes of output that the noise never uses);
    going back from the digest to those bytes is a preimage of SHA-256, and even
    the bytes themselves would be 256 bits of the noise generator's output, not
    its state.  The words are never the state or a spawn of the noise
    generator's own SeedSequence (the earlier scheme, ``generate_state`` of a
    spawn of it, gave the seed's entropy back and with it every noise draw).

    Parameters
    ----------
    rng : numpy.random.Generator
        The noise generator (the client's).
    n_blocks : int

    Returns
    -------
    words : ndarray of shape (n_blocks, 8), uint32
    """
    digest = hashlib.sha256(_SAMPLING_LABEL + rng.bytes(_SAMPLING_DRAW_BYTES)).digest()
    sampling = np.random.SeedSequence(int.from_bytes(digest, "little"))
    return np.array([c.generate_state(_SEED_WORDS) for c in sampling.spawn(int(n_blocks))],
                    dtype=np.uint32).reshape(int(n_blocks), _SEED_WORDS)


def step_stream(words, step):
    """Block's generator of step ``step``: ``PCG64(SeedSequence(words, spawn_key=(step,)))``."""
    return np.random.Generator(np.random.PCG64(
        np.random.SeedSequence([int(w) for w in words], spawn_key=(int(step),))))
